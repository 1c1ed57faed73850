"""The public stand-in of ``ddppm_certified``'s choice of T: it has the problem's public shape, reads none of its
rows, and has the law it states (spiked rows in a seeded basis, the largest on the unit sphere)."""

from __future__ import annotations

import numpy as np
import pytest

from ddppm.core.network import mixing_matrix
from ddppm.core.problem import DistributedProblem
from ddppm.data.synthetic import spiked_population_directions
from ddppm.methods.certified.stand_in import PublicShape, public_stand_in


def _problem(rows: np.ndarray, sizes: tuple[int, ...] = (30, 50, 20, 40)) -> DistributedProblem:
    bounds = np.cumsum((0, *sizes))
    parts = [np.arange(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
    return DistributedProblem.from_partition(rows, parts, mixing_matrix("ring", len(sizes)), 7)


def test_public_shape_reads_sizes_dimension_and_network_only() -> None:
    rng = np.random.default_rng(0)
    first, second = _problem(rng.standard_normal((140, 6))), _problem(rng.uniform(-1, 1, (140, 6)) ** 3)
    a, b = PublicShape.of(first), PublicShape.of(second)
    assert a.sizes == b.sizes == (30, 50, 20, 40) and a.d == b.d == 6 and a.c == b.c == 7 and a.n == 140
    np.testing.assert_array_equal(a.W, first.W)


def test_stand_in_has_the_public_shape_and_rows_in_the_unit_ball() -> None:
    problem = _problem(np.random.default_rng(1).standard_normal((140, 6)))
    stand_in = public_stand_in(PublicShape.of(problem), gap=2.0, seed=3)
    assert tuple(stand_in.sizes) == (30, 50, 20, 40) and stand_in.d == 6 and stand_in.c == 7
    np.testing.assert_array_equal(stand_in.W, problem.W)
    norms = np.linalg.norm(stand_in.X, axis=1)
    assert norms.max() == pytest.approx(1.0) and (norms <= 1 + 1e-12).all()
    assert not np.allclose(stand_in.X, problem.X)  # synthetic rows, not the problem's


def test_stand_in_does_not_depend_on_the_private_rows() -> None:
    rng = np.random.default_rng(2)
    first, second = _problem(rng.standard_normal((140, 6))), _problem(10 * rng.standard_normal((140, 6)))
    a = public_stand_in(PublicShape.of(first), 2.0, 5)
    b = public_stand_in(PublicShape.of(second), 2.0, 5)
    for x, y in zip(a.blocks, b.blocks, strict=True):
        np.testing.assert_array_equal(x, y)


def test_stand_in_has_the_stated_spectrum() -> None:
    """At large n the sample covariance of the stand-in's rows has top direction the seeded basis' first column and
    top-two ratio ≈ gap (an independent route: the population directions of the spiked model's own seed)."""
    shape = PublicShape((20_000, 20_000), 8, np.full((2, 2), 0.5), 1)
    stand_in = public_stand_in(shape, gap=3.0, seed=4)
    values, vectors = np.linalg.eigh(stand_in.X.T @ stand_in.X)
    assert values[-1] / values[-2] == pytest.approx(3.0, rel=0.05)
    assert abs(vectors[:, -1] @ spiked_population_directions(8, 4)[:, 0]) > 0.99
