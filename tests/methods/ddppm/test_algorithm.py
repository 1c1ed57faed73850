"""Tests of ddppm.methods.ddppm.algorithm: Algorithm 1 (agentwise and network form), convergence, deflation, helpers."""

from __future__ import annotations

import numpy as np
import pytest

from ddppm.accounting.iteration import (
    DDPPMParams,
    NoiseSchedule,
    ddppm_errors,
    ddppm_network,
    dpm_error_curve,
    draw_standard_normals,
    scale_draws,
    t_star,
)
from ddppm.core.errors import ConfigError
from ddppm.core.metrics import sin_error, subspace_distance
from ddppm.core.network import mixing_matrix, paper_ring_w, partition_rows
from ddppm.core.problem import DistributedProblem
from ddppm.core.seeds import run_generators
from ddppm.methods.ddppm.algorithm import centralized_power_method, ddppm_agentwise, ddppm_deflation


def make_problem(n, d, m, c, topology="paper_ring", sizes=None, spectrum=None, seed=0):
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.standard_normal((n, d)))
    V, _ = np.linalg.qr(rng.standard_normal((d, d)))
    s = np.linspace(2.0, 0.4, d) if spectrum is None else np.asarray(spectrum, float)
    X = U @ np.diag(s) @ V.T
    X /= np.linalg.norm(X, axis=1).max()
    W = paper_ring_w() if topology == "paper_ring" else mixing_matrix(topology, m)
    return DistributedProblem.from_partition(X, partition_rows(n, m, seed=seed, sizes=sizes), W, c)


def corollary(problem, T, kappa=1.0, kind="geometric"):
    alpha = 1 / np.sqrt(problem.mu1 * problem.mu2)
    sq = 1 / np.sqrt(problem.n)
    ratio = problem.mu2 / problem.mu1 if kind == "geometric" else 1.0
    return DDPPMParams(alpha, sq, NoiseSchedule(kind, kappa * sq, ratio), T)


# ------------------------------------------------------------------------------------------------ two forms agree


@pytest.mark.parametrize(
    ("topology", "m", "c", "sizes"),
    [
        ("paper_ring", 4, 0, None),
        ("paper_ring", 4, 3, [3, 9, 5, 8]),
        ("ring", 5, 1, [2, 6, 4, 7, 6]),
        ("complete", 3, 7, [10, 4, 11]),
        ("star", 6, 2, None),
        ("path", 4, 20, [1, 12, 6, 6]),
    ],
)
def test_agentwise_equals_network_form(topology, m, c, sizes):
    problem = make_problem(25, 4, m, c, topology, sizes=sizes, seed=c + m)
    T, R = 6, 3
    params = corollary(problem, T, kappa=0.7)
    z0, zp = draw_standard_normals(problem.n, T, run_generators(1, ("forms",), range(R)))
    q0, P = scale_draws(params, z0, zp)
    q_agent = ddppm_agentwise(problem, params, q0, P).q
    q_net = ddppm_network(problem, params, q0, P)
    assert q_agent.shape == q_net.shape == (problem.n, R)
    np.testing.assert_allclose(q_agent, q_net, rtol=0, atol=1e-12 * np.abs(q_net).max())
    # a single run with 1-D inputs gives the same first column
    q1 = ddppm_agentwise(problem, params, q0[:, 0], P[:, :, 0]).q[:, 0]
    np.testing.assert_allclose(q1, q_agent[:, 0], rtol=0, atol=1e-12 * np.abs(q1).max())
    # the z releases are X_iᵀ q_i^(t−1): the first one uses q^(0)
    z = ddppm_agentwise(problem, params, q0, P).z_releases
    for i in range(m):
        np.testing.assert_allclose(z[0, i], problem.blocks[i].T @ q0[problem.agent_slice(i)], atol=1e-13)


def test_xi_equals_kron_definition():
    problem = make_problem(17, 3, 5, 4, "ring", sizes=[2, 5, 3, 3, 4], seed=2)
    D = np.zeros((problem.n, problem.m * problem.d))
    for i, Xi in enumerate(problem.blocks):
        D[problem.agent_slice(i), i * problem.d : (i + 1) * problem.d] = Xi
    Xi = D @ (problem.m * np.kron(np.linalg.matrix_power(problem.W, 4), np.eye(problem.d))) @ D.T
    np.testing.assert_allclose(problem.Xi, Xi, atol=1e-13)


def test_xi_applied_without_forming_it_equals_the_dense_one(monkeypatch):
    """Above DENSE_XI_MAX_N rows Ξ is only applied, and its eigenvalues come from an md × md matrix: both
    against the dense Ξ (lowered threshold, so the small problem takes the large-n route)."""
    import ddppm.core.problem as problem_module

    problem = make_problem(60, 3, 4, 4, "ring", sizes=[20, 15, 15, 10], seed=3)
    Q = np.random.default_rng(0).standard_normal((problem.n, 5))
    dense, dense_eigenvalues = problem.Xi @ Q, np.linalg.eigvalsh(problem.Xi)[::-1]
    monkeypatch.setattr(problem_module, "DENSE_XI_MAX_N", 10)
    large = make_problem(60, 3, 4, 4, "ring", sizes=[20, 15, 15, 10], seed=3)
    assert not large.dense_xi and large.n > large.m * large.d
    np.testing.assert_allclose(large.xi_apply(Q), dense, atol=1e-12)
    np.testing.assert_allclose(large.xi_matmul(Q, 0.3), 0.3 * dense, atol=1e-12)
    np.testing.assert_allclose(large.xi_eigenvalues, dense_eigenvalues, atol=1e-10)
    assert (large.mu1, large.mu2) == pytest.approx((dense_eigenvalues[0], dense_eigenvalues[1]), rel=1e-12)


# ------------------------------------------------------------------------------------------------ convergence


def test_noise_free_error_decays_like_eigen_ratio():
    problem = make_problem(60, 5, 4, 60, spectrum=[2.0, 1.6, 1.0, 0.6, 0.3], seed=4)
    ratio = problem.mu2 / problem.mu1
    assert 0.5 < ratio < 0.8
    T_max = 60
    params = DDPPMParams(1 / problem.mu1, 1 / np.sqrt(problem.n), NoiseSchedule("constant", 0.0), 1)
    rng = np.random.default_rng(0)
    q = rng.standard_normal((problem.n, 1))
    errs = []
    for _ in range(T_max):
        q = ddppm_network(problem, params, q, np.zeros((1, problem.n, 1)))
        errs.append(sin_error(problem.top_eigenvector, q)[0])
    errs = np.array(errs)
    T = np.arange(1, T_max + 1)
    mid = (errs < 1e-2) & (errs > 1e-11)
    assert mid.sum() >= 15
    slope = np.polyfit(T[mid], np.log(errs[mid]), 1)[0]
    assert slope == pytest.approx(np.log(ratio), rel=0.10)


def test_dpm_converges_to_v_with_large_c():
    problem = make_problem(40, 4, 4, 80, seed=5)
    z0 = np.random.default_rng(1).standard_normal((problem.n, 5))
    curve = dpm_error_curve(problem, 150, z0)
    assert curve.shape == (151, 5)
    assert curve[-1].max() < 1e-9
    # and it agrees with the centralised power method (eq. 7)
    q = centralized_power_method(problem.X, 150, z0)
    assert sin_error(problem.top_eigenvector, q).max() < 1e-9


def test_small_c_leaves_a_consensus_floor():
    problem = make_problem(40, 4, 4, 0, seed=5)  # c = 0: Ξ = m · blockdiag(X_i X_iᵀ)
    z0 = np.random.default_rng(1).standard_normal((problem.n, 3))
    assert dpm_error_curve(problem, 100, z0)[-1].min() > 1e-2


def test_deflation_recovers_top3_eigenvectors():
    problem = make_problem(45, 5, 4, 60, spectrum=[3.0, 2.0, 1.2, 0.5, 0.2], seed=6)
    params = DDPPMParams(
        1 / np.sqrt(problem.mu1 * problem.mu2), 1 / np.sqrt(problem.n), NoiseSchedule("constant", 0.0), 60
    )
    Q = ddppm_deflation(problem, params, 3, np.random.default_rng(0))
    assert Q.shape == (problem.n, 3)
    np.testing.assert_allclose(np.linalg.norm(Q, axis=0), 1.0, atol=1e-12)
    U = np.linalg.svd(problem.X, full_matrices=False)[0][:, :3]
    assert subspace_distance(U, Q) < 1e-3
    for k in range(3):
        assert sin_error(U[:, k], Q[:, k])[0] < 1e-3


def test_t_star_on_easy_problem():
    problem = make_problem(50, 4, 4, 60, spectrum=[2.0, 1.0, 0.6, 0.3], seed=7)
    z0 = np.random.default_rng(3).standard_normal((problem.n, 20))
    T, reached = t_star(problem, z0, tol=1e-3, T_max=100)
    curve = dpm_error_curve(problem, 100, z0).mean(axis=1)
    assert reached and curve[T] <= 1e-3 < curve[T - 1]
    # the error ratio per step is μ₂/μ₁ ≈ 1/4, so about log(1e-3)/log(1/4) ≈ 5 steps plus the start-up
    assert 3 <= T <= 12
    T_bad, reached_bad = t_star(problem.with_c(0), z0, tol=1e-3, T_max=30)
    assert (T_bad, reached_bad) == (30, False)


# ------------------------------------------------------------------------------------------------ helpers


def test_sin_error_properties():
    rng = np.random.default_rng(8)
    v = rng.standard_normal(10)
    Q = rng.standard_normal((10, 4))
    e = sin_error(v, Q)
    np.testing.assert_allclose(sin_error(v, -Q), e, rtol=1e-14)
    np.testing.assert_allclose(sin_error(-3 * v, 2.5 * Q), e, rtol=1e-14)
    assert sin_error(v, v)[0] == pytest.approx(0.0, abs=1e-15)
    w = rng.standard_normal(10)
    w -= v * (v @ w) / (v @ v)
    assert sin_error(v, w)[0] == pytest.approx(1.0, rel=1e-14)
    assert np.all((e >= 0) & (e <= 1))
    # sin² = 1 − cos²
    cos = np.abs(v @ Q) / (np.linalg.norm(v) * np.linalg.norm(Q, axis=0))
    np.testing.assert_allclose(e**2, 1 - cos**2, rtol=1e-12)


def test_draw_standard_normals_do_not_depend_on_batching():
    gens10 = run_generators(7, ("batch", 5.0), range(10))
    z0_10, zp_10 = draw_standard_normals(30, 4, gens10)
    z0_3, zp_3 = draw_standard_normals(30, 4, run_generators(7, ("batch", 5.0), range(3)))
    np.testing.assert_array_equal(z0_10[:, :3], z0_3)
    np.testing.assert_array_equal(zp_10[:, :, :3], zp_3)
    z0_one, zp_one = draw_standard_normals(30, 4, run_generators(7, ("batch", 5.0), [2]))
    np.testing.assert_array_equal(z0_one[:, 0], z0_10[:, 2])
    np.testing.assert_array_equal(zp_one[:, :, 0], zp_10[:, :, 2])
    assert zp_10.shape == (4, 30, 10) and z0_10.shape == (30, 10)
    assert not np.allclose(z0_10[:, 0], z0_10[:, 1])  # runs differ
    # the vectorised errors use exactly those draws: column r equals the single-run computation
    problem = make_problem(30, 3, 4, 5, seed=9)
    params = corollary(problem, 4, kappa=2.0)
    err10 = ddppm_errors(problem, params, z0_10, zp_10)
    err_one = ddppm_errors(problem, params, z0_one, zp_one)
    assert err_one[0] == pytest.approx(err10[2], rel=1e-12)


def test_noise_schedules():
    np.testing.assert_allclose(NoiseSchedule("geometric", 2.0, 0.5).sigmas(3), [1.0, 0.5, 0.25])
    np.testing.assert_allclose(NoiseSchedule("constant", 2.0).sigmas(3), [2.0, 2.0, 2.0])
    p = DDPPMParams(2.0, 0.5, NoiseSchedule("geometric", 1.0, 3.0), 2)
    np.testing.assert_allclose(p.effective_noise(), [3.0 / (0.5 * 2.0), 9.0 / (0.5 * 4.0)])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"kind": "linear", "scale": 1.0}, "calibration.schedules"),
        ({"kind": "constant", "scale": -1.0}, "scale"),
        ({"kind": "constant", "scale": np.nan}, "scale"),
        ({"kind": "constant", "scale": np.inf}, "scale"),
        ({"kind": "geometric", "scale": 1.0, "ratio": 0.0}, "ratio"),
        ({"kind": "geometric", "scale": 1.0, "ratio": np.inf}, "ratio"),
    ],
)
def test_noise_schedule_validation(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        NoiseSchedule(**kwargs)


@pytest.mark.parametrize(
    ("alpha", "sigma_q", "T", "match"),
    [
        (0.0, 1.0, 2, "alpha"),
        (-1.0, 1.0, 2, "alpha"),
        (np.nan, 1.0, 2, "alpha"),
        (1.0, 0.0, 2, "sigma_q"),
        (1.0, np.nan, 2, "sigma_q"),
        (1.0, 1.0, 0, "T"),
        (1.0, 1.0, 2.5, "T"),
        (1.0, 1.0, -3, "T"),
    ],
)
def test_params_validation(alpha, sigma_q, T, match):
    with pytest.raises(ConfigError, match=match):
        DDPPMParams(alpha, sigma_q, NoiseSchedule("constant", 1.0), T)


@pytest.mark.parametrize(("alpha", "sigma_q"), [(np.inf, 1.0), (1.0, np.inf)])
def test_regression_params_accept_infinite_alpha_or_sigma_q(alpha, sigma_q):
    """Regression (fixed) in algorithms.DDPPMParams.__post_init__): ``alpha > 0`` / ``sigma_q > 0`` let +inf
    through (NoiseSchedule
    checks finiteness); every iterate is then inf/NaN. Fix: require ``np.isfinite`` as NoiseSchedule does."""
    with pytest.raises(ConfigError):
        DDPPMParams(alpha, sigma_q, NoiseSchedule("constant", 1.0), 2)
