"""The workshop D-DP-PM's final Gaussian release and its budget split (ddppm.methods.workshop.budget)."""

import numpy as np
import pytest

from ddppm.methods.workshop.algorithm import workshop_agentwise
from ddppm.methods.workshop.budget import BudgetSplit
from tests.accounting.test_release import make_problem


def _setup(T=3, R=4, seed=1):
    problem = make_problem(24, 3, 4, 2, topology="ring", seed=seed)
    rng = np.random.default_rng(seed)
    alpha, sq = 1 / np.sqrt(problem.mu1 * problem.mu2), 1 / np.sqrt(problem.n)
    sigmas = 0.3 * sq * 0.8 ** np.arange(T)
    q0 = sq * rng.standard_normal((problem.n, R))
    P = sigmas[:, None, None] * rng.standard_normal((T, problem.m * problem.d, R))
    u = rng.standard_normal((problem.n, R))
    return problem, alpha, sq, sigmas, q0, P, u


class _Params:
    def __init__(self, alpha, T):
        self.alpha, self.T = alpha, T


@pytest.mark.parametrize("eps1,delta1", [(0.5, 1e-5), (1.0, 1e-6)])
def test_final_noise_is_classic_gaussian_mechanism(eps1, delta1):
    b = BudgetSplit(delta_q=2.0, final_mechanism="classic")
    expected = 2.0 * np.sqrt(2 * np.log(1.25 / delta1)) / eps1
    assert b.delta_q * b.unit_sigma(eps1, delta1, "chernoff") == pytest.approx(expected, rel=1e-12)


def test_final_release_adds_sigma_u_times_unit_noise():
    T = 3
    problem, alpha, sq, sigmas, q0, P, u = _setup(T)
    f = 2.0
    run = workshop_agentwise(problem, _Params(alpha, T), q0, P, u, noise_factor=f)
    sd = f * alpha * np.linalg.norm(run.a, axis=1)  # (m, R)
    expected = run.q + np.repeat(sd, problem.sizes, axis=0) * u
    np.testing.assert_allclose(run.released, expected, rtol=1e-12, atol=1e-14)
