"""Definition 1's δ (the hockey-stick divergence, the larger of the two orders) against 2-D numerical integration.

Issue 20 found ``pair_tail_deltas`` reporting the hockey stick of whichever order had the larger *two-sided*
δ, not the larger hockey stick: on the pair below that gave 0.2087 where the forward order gives 0.2285. The
reference here shares no code with the accountant: the densities on a fine grid, ``∫ (p − e^ε q)₊``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ddppm.privacy.tails import gaussian_tail_delta

COV1 = np.array([[0.975, 0.224], [0.224, 2.093]])
COV2 = np.array([[0.868, 0.975], [0.975, 2.377]])
MU1, MU2 = np.array([0.997, 0.764]), np.zeros(2)


def hockey_by_quadrature(mu1, cov1, mu2, cov2, eps: float, half_width: float = 12.0, n: int = 1601) -> float:
    """``∫ (p(y) − e^ε q(y))₊ dy`` on a square grid (trapezoid rule), p = N(mu1, cov1), q = N(mu2, cov2)."""
    axis = np.linspace(-half_width, half_width, n)
    grid = np.stack(np.meshgrid(axis, axis, indexing="ij"), axis=-1)
    p = stats.multivariate_normal(mu1, cov1).pdf(grid)
    q = stats.multivariate_normal(mu2, cov2).pdf(grid)
    return float(np.trapezoid(np.trapezoid(np.maximum(p - np.exp(eps) * q, 0.0), axis, axis=1), axis))


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_hockey_stick_is_the_larger_order(eps: float) -> None:
    forward = hockey_by_quadrature(MU1, COV1, MU2, COV2, eps)
    backward = hockey_by_quadrature(MU2, COV2, MU1, COV1, eps)
    ours = gaussian_tail_delta(MU1, COV1, MU2, COV2, [eps], kind="hockey_stick")[0]
    assert ours == pytest.approx(max(forward, backward), rel=2e-4)
    swapped = gaussian_tail_delta(MU2, COV2, MU1, COV1, [eps], kind="hockey_stick")[0]
    assert swapped == pytest.approx(ours, rel=1e-9)  # symmetric in the pair, as adjacency is


def test_the_issue_example() -> None:
    """ε = 1: the forward order's 0.2285, not the 0.2087 of the order with the larger two-sided δ."""
    ours = gaussian_tail_delta(MU1, COV1, MU2, COV2, [1.0], kind="hockey_stick")[0]
    assert ours == pytest.approx(0.2285, abs=5e-4)
    two_sided = gaussian_tail_delta(MU1, COV1, MU2, COV2, [1.0])[0]
    assert two_sided >= ours  # Definition 2 implies Definition 1
