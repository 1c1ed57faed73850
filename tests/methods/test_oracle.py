"""The oracle Gaussian release: its σ, its δ, and its error against a numerical integral."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from ddppm.core.seeds import run_generators
from ddppm.methods import get_method
from ddppm.privacy.mechanisms import analytic_gaussian_delta


def expected_sin(s1: float, sigma: float, n: int) -> float:
    """E[sin(v, s₁v + σg)] = E[b/sqrt(a² + b²)], a = s₁ + σg₁, b² = σ²χ²_{n−1}: a 2-D integral."""

    def integrand(g1, c):
        a, b = s1 + sigma * g1, sigma * np.sqrt(c)
        return b / np.hypot(a, b) * stats.norm.pdf(g1) * stats.chi2.pdf(c, n - 1)

    hi = stats.chi2.ppf(1 - 1e-12, n - 1)
    value, _ = integrate.dblquad(integrand, 0, hi, -12, 12, epsabs=1e-9)
    return value


@pytest.mark.parametrize("eps, delta", [(1.0, 0.38), (5.0, 0.008), (40.0, 1e-4)])
def test_oracle_error_matches_the_integral(toy_problem, eps, delta):
    oracle = get_method("oracle")
    params = oracle.choose_params(toy_problem, np.array([eps]), np.array([delta]), {}).iloc[0]
    assert params["delta"] == pytest.approx(delta, rel=1e-8)
    assert analytic_gaussian_delta(params["sigma"], eps) == pytest.approx(delta, rel=1e-8)
    errors = oracle.run_errors(toy_problem, params, run_generators(0, ("oracle-test",), range(4000)), {})
    s1 = toy_problem.singular_values[0]
    expected = expected_sin(s1, params["sigma"], toy_problem.n)
    assert errors.mean() == pytest.approx(expected, abs=4 * errors.std() / np.sqrt(errors.size))
