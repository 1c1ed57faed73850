"""The workshop D-DP-PM's final Gaussian release and its budget split (ddppm.methods.workshop.budget)."""

import numpy as np
import pytest

from ddppm.methods.workshop.algorithm import workshop_agentwise
from ddppm.methods.workshop.budget import BudgetSplit
from tests.methods.workshop.helpers import IterationParams, workshop_setup


@pytest.mark.parametrize("eps1,delta1", [(0.5, 1e-5), (1.0, 1e-6)])
def test_final_noise_is_classic_gaussian_mechanism(eps1, delta1):
    b = BudgetSplit(delta_q=2.0, final_mechanism="classic")
    expected = 2.0 * np.sqrt(2 * np.log(1.25 / delta1)) / eps1
    assert b.delta_q * b.unit_sigma(eps1, delta1, "chernoff") == pytest.approx(expected, rel=1e-12)


def test_final_release_adds_sigma_u_times_unit_noise():
    T = 3
    problem, alpha, sq, sigmas, q0, P, u = workshop_setup(T)
    f = 2.0
    run = workshop_agentwise(problem, IterationParams(alpha, T), q0, P, u, noise_factor=f)
    sd = f * alpha * np.linalg.norm(run.a, axis=1)  # (m, R)
    expected = run.q + np.repeat(sd, problem.sizes, axis=0) * u
    np.testing.assert_allclose(run.released, expected, rtol=1e-12, atol=1e-14)
