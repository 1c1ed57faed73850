"""The attack on the journal D-DP-PM (ddppm.audit.gossip): the observer's memory is what the algorithm computes,
its sufficient coordinates drop only noise of one law, the statistic is the Gaussians' log-likelihood ratio, the test
finds nothing between identical data sets, and it separates a neighbour that moves a row a lot."""

from __future__ import annotations

import numpy as np
from scipy.stats import multivariate_normal

from ddppm.accounting.iteration import DDPPMParams, NoiseSchedule
from ddppm.accounting.neighbours import Neighbour, apply_neighbour
from ddppm.audit.gossip import (
    audit_gossip,
    column_basis,
    fitted_quadratic,
    memory_views,
    quadratic_scores,
    sufficient_memory,
)
from ddppm.testing import three_agent_problem

PARAMS = DDPPMParams(alpha=1.0, sigma_q=0.2, schedule=NoiseSchedule("constant", 0.05), T=2)


def test_the_memory_holds_the_observer_s_start_noises_and_releases() -> None:
    problem = three_agent_problem()
    views = memory_views(problem, PARAMS, 1, "paper", 7, np.random.default_rng(3))
    n_1, d, T = problem.sizes[1], problem.d, PARAMS.T
    assert views.shape == (7, n_1 + T * n_1 + T * d + n_1)
    network = memory_views(problem, PARAMS, 1, "network", 7, np.random.default_rng(3))
    assert network.shape == (7, n_1 + T * n_1 + T * problem.m * d + problem.n)
    np.testing.assert_array_equal(views[:, : (T + 1) * n_1], network[:, : (T + 1) * n_1])  # same draws, same start


def test_identical_data_sets_give_no_bound_and_a_large_change_a_clear_one() -> None:
    problem = three_agent_problem()
    row = problem.blocks[0][0]
    same = Neighbour(0, 0, "same", row.copy())
    far = Neighbour(0, 0, "far", -row / np.linalg.norm(row))
    assert audit_gossip(problem, PARAMS, same, 1, "paper", 1e-5, 3000, 0).eps_lower < 0.5
    assert audit_gossip(problem, PARAMS, far, 1, "paper", 1e-5, 3000, 0).eps_lower > 1.0


def test_the_sufficient_coordinates_drop_only_independent_noise_of_one_law() -> None:
    """The parts of the observer's start and noises outside col(X_i) are uncorrelated with the kept coordinates
    and have the same law (σ² I) under X and X′: their likelihood ratio is 1, the memory's is the kept part's."""
    problem = three_agent_problem()
    neighbour = Neighbour(0, 0, "far", -problem.blocks[0][0] / np.linalg.norm(problem.blocks[0][0]))
    n_1, T = problem.sizes[1], PARAMS.T
    B = column_basis(problem.blocks[1])
    outside = np.eye(n_1) - B @ B.T
    for p in (problem, apply_neighbour(problem, neighbour)):
        views = memory_views(p, PARAMS, 1, "paper", 40_000, np.random.default_rng(5))
        kept = sufficient_memory(p, PARAMS, 1, views)
        assert kept.shape[1] == (2 * T + 2) * problem.d - problem.d  # z_1^(1) is a function of B_1ᵀq_1^(0)
        dropped = np.hstack([views[:, :n_1] @ outside, views[:, n_1 : 2 * n_1] @ outside])
        cross = (dropped - dropped.mean(0)).T @ (kept - kept.mean(0)) / len(views)
        scale = np.sqrt(np.outer(dropped.var(0), kept.var(0))) + 1e-300
        assert np.abs(cross / scale).max() < 0.03  # 40,000 draws: a correlation's s.e. is 0.005
        np.testing.assert_allclose(np.cov(dropped[:, :n_1], rowvar=False), PARAMS.sigma_q**2 * outside, atol=0.01)


def test_the_quadratic_statistic_is_the_difference_of_gaussian_log_densities() -> None:
    rng = np.random.default_rng(2)
    train = [rng.standard_normal((400, 3)) @ np.diag([1.0, 2.0, 0.5]), rng.standard_normal((400, 3)) + 0.3]
    fits = fitted_quadratic(train, ridge=0.0)
    views = rng.standard_normal((20, 3))
    expected = [multivariate_normal(t.mean(0), np.cov(t, rowvar=False)).logpdf(views) for t in train]
    np.testing.assert_allclose(quadratic_scores(views, *fits), expected[1] - expected[0], rtol=1e-9)
