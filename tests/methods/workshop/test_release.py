"""The workshop D-DP-PM's releases (ddppm.methods.workshop.algorithm, ddppm.methods.workshop.release): the simulation
agent by agent equals the network form and the release model (eq. 9–11), and the reduced model gives the full
conditional law."""

import numpy as np

from ddppm.methods.workshop.algorithm import workshop_agentwise, workshop_network
from ddppm.methods.workshop.release import WorkshopReleaseModel
from tests.methods.workshop.helpers import IterationParams, workshop_setup


def test_release_model_equals_simulation():
    T = 3
    problem, alpha, sq, sigmas, q0, P, u = workshop_setup(T)
    run = workshop_agentwise(problem, IterationParams(alpha, T), q0, P, u, noise_factor=2.0)
    bases = [np.eye(int(k)) for k in problem.sizes]
    model = WorkshopReleaseModel(problem, alpha, T, bases)
    sources = np.vstack([q0, P.reshape(T * problem.m * problem.d, -1)])
    z_model = model.A @ sources
    z_sim = run.z_stacked()
    assert np.max(np.abs(z_model - z_sim)) <= 1e-10 * max(1.0, np.max(np.abs(z_sim)))


def test_agentwise_equals_network():
    T = 3
    problem, alpha, sq, sigmas, q0, P, u = workshop_setup(T)
    run = workshop_agentwise(problem, IterationParams(alpha, T), q0, P, u, noise_factor=2.0)
    q, a = workshop_network(problem, IterationParams(alpha, T), q0, P)
    np.testing.assert_allclose(q, run.q, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a, run.a, rtol=1e-9, atol=1e-12)


def test_reduced_model_gives_the_full_conditional_law():
    """Reduced source coordinates (bases of col(X_k)) give the same covariance C_i and the same mean B_i as the
    literal M and L of eq. (60)–(62), for both views (the projection is exact)."""
    from ddppm.accounting.release import reduction_basis
    from ddppm.methods.workshop.release import conditional_law_full

    T = 3
    problem, alpha, sq, sigmas, q0, P, u = workshop_setup(T)
    model = WorkshopReleaseModel(problem, alpha, T, reduction_basis(problem))
    assert model.A.shape[1] < problem.n + T * problem.m * problem.d  # really reduced
    rng = np.random.default_rng(5)
    for observer in range(problem.m):
        omega = rng.standard_normal((int(problem.sizes[observer]) + T * problem.d, 3))
        for view in ("paper", "network"):
            full = conditional_law_full(problem, alpha, sq, sigmas, observer, view)
            reduced = model.conditional_law(sq, sigmas, observer, view)
            np.testing.assert_allclose(reduced.cov, full.cov, rtol=1e-9, atol=1e-12 * np.abs(full.cov).max())
            np.testing.assert_allclose(
                reduced.mean_map @ model.project_own(observer, omega), full.mean_map @ omega, rtol=1e-9, atol=1e-12
            )


def test_conditional_law_matches_simulated_releases():
    """Monte Carlo: fix observer 1's randomness ω_1, redraw everyone else's, run the algorithm; the empirical
    mean and covariance of Z^(T) equal B_1 and C_1 of eq. (10)–(11) (network view)."""
    from ddppm.methods.workshop.release import conditional_law_full

    T, R, observer = 2, 40_000, 1
    problem, alpha, sq, sigmas, _, _, _ = workshop_setup(T)
    rng = np.random.default_rng(11)
    q0 = sq * rng.standard_normal((problem.n, R))
    P = sigmas[:, None, None] * rng.standard_normal((T, problem.m * problem.d, R))
    own_q = problem.agent_slice(observer)
    own_p = slice(observer * problem.d, (observer + 1) * problem.d)
    q0[own_q] = q0[own_q][:, :1]
    P[:, own_p] = P[:, own_p][:, :, :1]
    run = workshop_agentwise(problem, IterationParams(alpha, T), q0, P, np.zeros_like(q0), noise_factor=0.0)
    Z = run.z_stacked()
    law = conditional_law_full(problem, alpha, sq, sigmas, observer, "network")
    omega = np.concatenate([q0[own_q, 0], P[:, own_p, 0].reshape(-1) / 1.0])
    mean = law.mean_map @ omega
    cov = law.cov
    sd = np.sqrt(np.diag(cov))
    se_mean = sd / np.sqrt(R)
    live = sd > 1e-9 * sd.max()
    assert np.all(np.abs(Z.mean(axis=1) - mean)[live] <= 5 * se_mean[live])
    assert np.allclose(Z[~live], mean[~live, None], atol=1e-9 * max(1.0, np.abs(mean).max()))
    emp = np.cov(Z)
    corr_err = np.abs(emp - cov)[np.ix_(live, live)] / np.outer(sd[live], sd[live])
    assert corr_err.max() < 6 / np.sqrt(R) * 3  # entries of a sample covariance: se ≲ sqrt(2/R) in correlation units


# ---------------------------------------------------------------- Theorem 1 (eq. 12) against the exact tail
