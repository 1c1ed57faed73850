"""Tests of the release model y = M q^(0) + L P (eq. 19–21), the conditional law (eq. 27–29), the reduced model."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import block_diag

from ddppm.accounting.iteration import DDPPMParams, NoiseSchedule
from ddppm.accounting.release import (
    ReducedReleaseModel,
    conditional_law_full,
    reduction_basis,
    release_dimension,
    release_matrices,
    view_rows,
)
from ddppm.core.network import mixing_matrix, paper_ring_w, partition_rows
from ddppm.core.problem import DistributedProblem
from ddppm.methods.ddppm.algorithm import ddppm_agentwise


def make_problem(n, d, m, c, topology="ring", sizes=None, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) @ np.diag(np.linspace(2.0, 0.5, d))
    X /= np.linalg.norm(X, axis=1).max()
    W = paper_ring_w() if topology == "paper_ring" else mixing_matrix(topology, m)
    return DistributedProblem.from_partition(X, partition_rows(n, m, seed=seed, sizes=sizes), W, c)


def corollary_params(problem, T, kappa=0.5):
    alpha = 1 / np.sqrt(problem.mu1 * problem.mu2)
    sq = 1 / np.sqrt(problem.n)
    return DDPPMParams(alpha, sq, NoiseSchedule("geometric", kappa * sq, problem.mu2 / problem.mu1), T)


def draws(problem, params, R, seed):
    rng = np.random.default_rng(seed)
    q0 = params.sigma_q * rng.standard_normal((problem.n, R))
    P = params.sigmas[:, None, None] * rng.standard_normal((params.T, problem.n, R))
    return q0, P


def rel_err(a, b):
    return np.linalg.norm(a - b, axis=0) / np.linalg.norm(b, axis=0)


# ------------------------------------------------------------------------------------------------ y = Mq + LP


@pytest.mark.parametrize("topology", ["ring", "complete"])
@pytest.mark.parametrize("c", [0, 1, 5])
@pytest.mark.parametrize("T", [1, 2, 4])
def test_simulated_releases_equal_M_q0_plus_L_P(topology, c, T):
    problem = make_problem(23, 3, 5, c, topology, sizes=[2, 7, 4, 3, 7], seed=T + 10 * c)
    params = corollary_params(problem, T)
    q0, P = draws(problem, params, 3, seed=T)
    y = ddppm_agentwise(problem, params, q0, P).releases()
    M, L = release_matrices(problem, params.alpha, T)
    assert M.shape == (release_dimension(problem, T), problem.n)
    assert L.shape == (release_dimension(problem, T), problem.n * T)
    y_model = M @ q0 + L @ P.reshape(T * problem.n, 3)
    assert y.shape == y_model.shape == (5 * 3 * T + 23, 3)
    assert rel_err(y, y_model).max() < 1e-12


def test_as_printed_eq21_does_not_match_simulation():
    """Eq. (21) as printed puts Dᵀ(X) in block (t, k = t) of L; z^(t) = Dᵀq^(t−1) does not depend on p^(t)."""
    problem = make_problem(20, 3, 4, 2, "paper_ring", seed=3)
    T = 3
    params = corollary_params(problem, T, kappa=1.0)
    q0, P = draws(problem, params, 3, seed=4)
    y = ddppm_agentwise(problem, params, q0, P).releases()
    M, L = release_matrices(problem, params.alpha, T)
    md, n = problem.m * problem.d, problem.n
    Dt = block_diag(*[Xi.T for Xi in problem.blocks])
    L_printed = L.copy()
    for t in range(2, T + 1):
        L_printed[(t - 1) * md : t * md, (t - 1) * n : t * n] = Dt
    Pflat = P.reshape(T * n, 3)
    assert rel_err(y, M @ q0 + L @ Pflat).max() < 1e-12
    assert rel_err(y, M @ q0 + L_printed @ Pflat).min() > 1e-3
    # directly: changing p^(T) leaves every z release unchanged and moves q^(T) by exactly p^(T)'s change
    P2 = P.copy()
    P2[T - 1] += 1.0
    y2 = ddppm_agentwise(problem, params, q0, P2).releases()
    np.testing.assert_array_equal(y2[: md * T], y[: md * T])
    np.testing.assert_allclose(y2[md * T :] - y[md * T :], 1.0, rtol=0, atol=1e-12)


# ------------------------------------------------------------------------------------------------ conditional law


@pytest.mark.parametrize(("view", "observer"), [("network", 0), ("paper", 0), ("network", 2), ("paper", 1)])
def test_conditional_law_matches_empirical(view, observer):
    problem = make_problem(12, 2, 3, 2, "complete", sizes=[3, 5, 4], seed=7)
    T, R = 2, 40_000
    params = corollary_params(problem, T, kappa=1.5)
    law = conditional_law_full(problem, params.alpha, params.sigma_q, params.sigmas, observer, view)
    # observer's own randomness fixed, everyone else's fresh in each run
    rng = np.random.default_rng(100 + observer)
    sl = problem.agent_slice(observer)
    own_q0 = params.sigma_q * rng.standard_normal(problem.sizes[observer])
    own_P = params.sigmas[:, None] * rng.standard_normal((T, problem.sizes[observer]))
    q0, P = draws(problem, params, R, seed=200 + observer)
    q0[sl] = own_q0[:, None]
    P[:, sl] = own_P[:, :, None]
    y = ddppm_agentwise(problem, params, q0, P).releases()[view_rows(problem, T, observer, view)]
    own = np.concatenate([own_q0, own_P.ravel()])
    mu, cov = law.mean_map @ own, law.cov
    assert y.shape[0] == mu.size == cov.shape[0]
    scale = np.abs(y).max()
    sd = np.sqrt(np.clip(np.diag(cov), 0, None))
    assert np.all(np.abs(y.mean(axis=1) - mu) <= 5 * sd / np.sqrt(R) + 1e-10 * scale)
    emp = np.cov(y)
    se = np.sqrt((np.outer(sd**2, sd**2) + cov**2) / R)
    assert np.all(np.abs(emp - cov) <= 5 * se + 1e-10 * scale**2)
    # the conditional covariance really is singular (own randomness is known): zero-variance directions exist
    assert np.sum(np.linalg.eigvalsh(cov) < 1e-12 * np.linalg.eigvalsh(cov).max()) >= problem.d


# ------------------------------------------------------------------------------------------------ reduced model


def _reduced_setup(seed=5, T=3):
    problem = make_problem(22, 3, 4, 3, "paper_ring", sizes=[4, 8, 3, 7], seed=seed)
    params = corollary_params(problem, T, kappa=0.8)
    extra = {0: [1], 1: [0, 5], 2: [2], 3: [6]}  # rows an adjacent candidate may change
    bases = reduction_basis(problem, extra)
    return problem, params, ReducedReleaseModel(problem, params.alpha, T, bases), bases


def _project_matrix(model, A):
    """Rows of a full-coordinate matrix (network view) mapped to reduced release coordinates."""
    return model.project_releases(A)


@pytest.mark.parametrize("observer", [0, 1, 3])
@pytest.mark.parametrize("view", ["network", "paper"])
def test_reduced_model_equals_projected_full_model(observer, view):
    problem, params, model, bases = _reduced_setup()
    T, n_i = params.T, problem.sizes[observer]
    full = conditional_law_full(problem, params.alpha, params.sigma_q, params.sigmas, observer, "network")
    red = model.conditional_law(params.sigma_q, params.sigmas, observer, view)
    rows = model.rows(observer, view)
    # covariance: Pᵀ Σ P restricted to the view's rows
    cov_proj = _project_matrix(model, _project_matrix(model, full.cov).T).T[np.ix_(rows, rows)]
    scale = np.abs(cov_proj).max()
    np.testing.assert_allclose(red.cov, cov_proj, rtol=0, atol=1e-12 * scale)
    # mean map: full mean of any own realisation, projected, equals the reduced map of the projected own
    own = np.random.default_rng(observer).standard_normal(((T + 1) * n_i, 4))
    mean_full = _project_matrix(model, full.mean_map @ own)[rows]
    mean_red = red.mean_map @ model.project_own(observer, own)
    np.testing.assert_allclose(mean_red, mean_full, rtol=0, atol=1e-12 * np.abs(mean_full).max())
    # the paper view of the full law (conditional_law_full(view="paper")) projects to the same thing
    if view == "paper":
        full_paper = conditional_law_full(problem, params.alpha, params.sigma_q, params.sigmas, observer, "paper")
        Bi = bases[observer]
        md_t = problem.d * T
        Pi = block_diag(np.eye(md_t), Bi)  # [z_i; q_i] -> [z_i; B_iᵀ q_i]
        np.testing.assert_allclose(red.cov, Pi.T @ full_paper.cov @ Pi, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(
            mean_red, Pi.T @ full_paper.mean_map @ own, rtol=0, atol=1e-12 * np.abs(mean_full).max()
        )


def test_reduced_model_drops_only_pure_noise():
    """The dropped part of q^(T) (orthogonal to every B_k) is p^(T) alone: same law under X and X'."""
    problem, params, model, bases = _reduced_setup(seed=6, T=2)
    q0, P = draws(problem, params, 2, seed=9)
    y = ddppm_agentwise(problem, params, q0, P).releases()
    md_t = problem.m * problem.d * params.T
    for k, Bk in enumerate(bases):
        sl = problem.agent_slice(k)
        resid = y[md_t:][sl] - Bk @ (Bk.T @ y[md_t:][sl])
        np.testing.assert_allclose(resid, P[-1][sl] - Bk @ (Bk.T @ P[-1][sl]), atol=1e-12)
    # reduced releases are the projected full releases
    yr = model.project_releases(y)
    assert yr.shape == (md_t + model.b, 2)
    A = model.A
    src = np.vstack(
        [np.vstack([Bk.T @ q0[problem.agent_slice(k)] for k, Bk in enumerate(bases)])]
        + [np.vstack([Bk.T @ P[t][problem.agent_slice(k)] for k, Bk in enumerate(bases)]) for t in range(params.T)]
    )
    np.testing.assert_allclose(A @ src, yr, rtol=0, atol=1e-12 * np.abs(yr).max())
