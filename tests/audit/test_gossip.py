"""The attack on the journal D-DP-PM (ddppm.audit.gossip): the observer's memory is what the algorithm computes,
the test finds nothing between identical data sets, and it separates a neighbour that moves a row a lot."""

from __future__ import annotations

import numpy as np

from ddppm.accounting.iteration import DDPPMParams, NoiseSchedule
from ddppm.accounting.neighbours import Neighbour
from ddppm.audit.gossip import audit_gossip, memory_views
from ddppm.core.partition import parts_from_assignment
from ddppm.core.problem import DistributedProblem


def _problem() -> DistributedProblem:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 3)) * np.array([1.0, 0.5, 0.2])
    X /= np.linalg.norm(X, axis=1).max()
    W = np.full((3, 3), 1 / 3)
    return DistributedProblem.from_partition(X, parts_from_assignment(np.arange(30) % 3, 3), W, 1)


PARAMS = DDPPMParams(alpha=1.0, sigma_q=0.2, schedule=NoiseSchedule("constant", 0.05), T=2)


def test_the_memory_holds_the_observer_s_start_noises_and_releases() -> None:
    problem = _problem()
    views = memory_views(problem, PARAMS, 1, "paper", 7, np.random.default_rng(3))
    n_1, d, T = problem.sizes[1], problem.d, PARAMS.T
    assert views.shape == (7, n_1 + T * n_1 + T * d + n_1)
    network = memory_views(problem, PARAMS, 1, "network", 7, np.random.default_rng(3))
    assert network.shape == (7, n_1 + T * n_1 + T * problem.m * d + problem.n)
    np.testing.assert_array_equal(views[:, : (T + 1) * n_1], network[:, : (T + 1) * n_1])  # same draws, same start


def test_identical_data_sets_give_no_bound_and_a_large_change_a_clear_one() -> None:
    problem = _problem()
    row = problem.blocks[0][0]
    same = Neighbour(0, 0, "same", row.copy())
    far = Neighbour(0, 0, "far", -row / np.linalg.norm(row))
    assert audit_gossip(problem, PARAMS, same, 1, "paper", 1e-5, 3000, 0).eps_lower < 0.5
    assert audit_gossip(problem, PARAMS, far, 1, "paper", 1e-5, 3000, 0).eps_lower > 1.0
