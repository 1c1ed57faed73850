"""The parameter-free floor of D-DP-PM's δ and the worst-neighbour search it seeds (ddppm.accounting.floor).

Independent routes: the floor's two-eigenvalue closed form against the generic diagonalisation of the full
d-dimensional covariances and against Monte Carlo; the floor against the accountant's δ of the whole release
(built from the simulated algorithm's release model) at the same neighbour; monotonicity (the Pareto screen)
by direct evaluation; the search against neighbours an audit found and against random valid neighbours.
"""

from __future__ import annotations

import numpy as np
import pytest

from ddppm.accounting.accountant import AccountantSettings, evaluate_delta
from ddppm.accounting.floor import (
    FloorSettings,
    _Whitened,
    noise_free_pair_delta,
    noise_free_releases,
    pair_deltas,
    parameter_free_floor,
    pareto_front,
    to_sphere,
)
from ddppm.accounting.neighbours import Neighbour, is_valid
from ddppm.privacy.tails import gaussian_tail_delta
from ddppm.testing import corollary_params, synthetic_problem

EPS = np.array([0.5, 1.0, 2.0, 5.0])


@pytest.fixture(scope="module")
def problem():
    return synthetic_problem(60, 4, (3.0, 1.5, 1.0, 0.5), seed=2, c=3)


def _random_neighbour(problem, rng, tag):
    j = int(rng.integers(problem.m))
    r = int(rng.integers(problem.sizes[j]))
    x = problem.blocks[j][r]
    return Neighbour(j, r, tag, to_sphere(x, rng.standard_normal((1, x.size)))[0])


@pytest.mark.parametrize("view", ["network", "paper"])
def test_closed_form_equals_the_generic_gaussian_pair(problem, view):
    """β± from the 2 × 2 problem give the same δ as diagonalising the full covariances B and B + w²(x'x'ᵀ − xxᵀ)."""
    rng = np.random.default_rng(0)
    for k in range(6):
        nb = _random_neighbour(problem, rng, f"r{k}")
        x = problem.blocks[nb.agent][nb.row]
        for release in noise_free_releases(problem, view):
            if release.agent != nb.agent:
                continue
            beta = _Whitened(release).betas(x[None], nb.new_row[None])[0]
            hockey, pdp = pair_deltas(beta, EPS)
            U, w = release.basis, release.weight
            cov2 = release.base + w**2 * U.T @ (np.outer(nb.new_row, nb.new_row) - np.outer(x, x)) @ U
            zero = np.zeros(release.base.shape[0])
            generic_hs = gaussian_tail_delta(zero, release.base, zero, cov2, EPS, kind="hockey_stick")
            generic_pdp = gaussian_tail_delta(zero, release.base, zero, cov2, EPS)
            np.testing.assert_allclose(hockey, generic_hs, rtol=1e-7, atol=1e-12)
            np.testing.assert_allclose(pdp, generic_pdp, rtol=1e-7, atol=1e-12)


def test_pair_delta_against_monte_carlo():
    """Hockey-stick δ = E_P[(1 − e^{ε−ℒ})₊] and two-sided δ = Pr(|ℒ| > ε), both orders, by simulation."""
    beta = np.array([2.5, -0.45])
    eps = np.array([0.3, 1.0])
    hockey, pdp = pair_deltas(beta, eps)
    rng = np.random.default_rng(5)
    gamma = 1 + beta
    mc_h, mc_p = np.zeros(eps.size), np.zeros(eps.size)
    for cov_p, cov_q in ((np.ones(2), gamma), (gamma, np.ones(2))):
        y = rng.standard_normal((400_000, 2)) * np.sqrt(cov_p)
        loss = 0.5 * np.sum(np.log(cov_q / cov_p) + y**2 / cov_q - y**2 / cov_p, axis=1)
        mc_h = np.maximum(mc_h, [np.mean(np.clip(1 - np.exp(e - loss), 0, None)) for e in eps])
        mc_p = np.maximum(mc_p, [np.mean(np.abs(loss) > e) for e in eps])
    np.testing.assert_allclose(hockey, mc_h, rtol=0.02)
    np.testing.assert_allclose(pdp, mc_p, rtol=0.02)


def test_delta_grows_with_each_eigenvalue_so_the_pareto_screen_loses_nothing():
    rng = np.random.default_rng(3)
    for _ in range(20):
        beta = np.array([rng.uniform(0.05, 5), -rng.uniform(0.05, 0.9)])
        base = pair_deltas(beta, EPS)[0]
        for step in (np.array([0.3, 0.0]), np.array([0.0, -0.05])):
            assert np.all(pair_deltas(beta + step, EPS)[0] >= base - 1e-12)
    betas = np.array([[1.0, -0.2], [2.0, -0.1], [0.5, -0.5], [0.4, -0.4], [2.0, -0.3]])
    assert sorted(pareto_front(betas).tolist()) == [2, 4]  # (0.4, −0.4) and (1, −0.2) are dominated


@pytest.mark.parametrize(
    ("view", "T", "kappa"), [("network", 1, 1e4), ("network", 2, 3.0), ("paper", 1, 1.0), ("paper", 3, 10.0)]
)
def test_floor_is_below_the_accountants_delta_of_the_whole_release(problem, view, T, kappa):
    """The accountant (checked against the simulated algorithm elsewhere) gives every neighbour a hockey-stick δ at
    least the floor's for that neighbour, at any parameters; with T = 1 and overwhelming noise on q the two meet."""
    rng = np.random.default_rng(7)
    neighbours = [_random_neighbour(problem, rng, f"r{k}") for k in range(4)]
    params = corollary_params(problem, T=T, kappa=kappa)
    settings = AccountantSettings(view=view, accounting="exact", realisations=2)
    for nb in neighbours:
        full = evaluate_delta(problem, params, EPS, settings, neighbours=[nb])
        floor, _ = noise_free_pair_delta(problem, nb, EPS, view)
        assert np.all(full.delta_hockey >= floor * (1 - 1e-7) - 1e-12), (view, T, full.delta_hockey, floor)
        if view == "network" and T == 1:
            np.testing.assert_allclose(full.delta_hockey, floor, rtol=1e-3)


@pytest.mark.parametrize("view", ["network", "paper"])
def test_floor_search_finds_at_least_random_moves(problem, view):
    result = parameter_free_floor(problem, EPS, view)
    rng = np.random.default_rng(11)
    best = np.zeros(EPS.size)
    for k in range(200):
        nb = _random_neighbour(problem, rng, f"r{k}")
        assert is_valid(problem, nb)
        best = np.maximum(best, noise_free_pair_delta(problem, nb, EPS, view)[0])
    assert np.all(best < 1) and np.all(result.hockey < 1), "a setting where δ is informative"
    assert np.all(result.hockey >= best), (result.hockey, best)
    for found in result.neighbours.values():
        assert all(is_valid(problem, nb) for ranked in found.values() for nb in ranked)


def test_floor_table_of_one_view_is_that_views_floor(problem):
    """The common task's floor (network view only, rule ddppm_common_floor) is the search's network floor, row for
    row, with each ε's limit and verdict."""
    from ddppm.methods.ddppm.steps import floor_table

    limits = np.array([0.5, 0.1, 1e-3, 1e-5])
    table = floor_table(problem, EPS, limits, {"privacy": {}}, "toy", views=("network",))
    assert list(table["view"].unique()) == ["network"] and list(table["eps"]) == list(EPS)
    np.testing.assert_array_equal(table["floor_hockey"], parameter_free_floor(problem, EPS, "network").hockey)
    np.testing.assert_array_equal(table["infeasible_every_choice"], table["floor_hockey"] > limits)


@pytest.mark.parametrize("view", ["network", "paper"])
def test_floor_neighbours_give_the_curve_at_least_the_floor(problem, view):
    """The δ-vs-T curve adds the floor's neighbours to its pool (ddppm.methods.ddppm.steps.floor_neighbours): at
    any T the accountant's δ at them is at least the floor (post-processing: the full view contains the noise-free
    release), so an infeasible point's curve can no longer fall under the proven floor."""
    from ddppm.methods.ddppm.steps import floor_neighbours, floor_table

    limits = np.full(EPS.size, 1e-3)
    table = floor_table(problem, EPS, limits, {"privacy": {}}, "toy", views=(view,))
    found = floor_neighbours(table, view)
    assert found and len({n.key for n in found}) == len(found)
    assert all(is_valid(problem, n) for n in found)
    assert floor_neighbours(table, "other view") == []
    for T in (1, 3):
        settings = AccountantSettings(view=view, accounting="exact", adjacency="worst")
        result = evaluate_delta(problem, corollary_params(problem, T), EPS, settings, neighbours=found)
        hockey = result.pairs.groupby("eps")["delta_hockey_mean"].max().reindex(EPS).to_numpy()
        assert np.all(hockey >= table["floor_hockey"].to_numpy() * (1 - 1e-6)), (T, hockey, table["floor_hockey"])


def test_floor_settings_reject_bad_values():
    from ddppm.core.errors import ConfigError

    with pytest.raises(ConfigError, match="methods.ddppm.privacy.floor.keep"):
        FloorSettings(keep=0)


# --- the audit's neighbours on Diabetes (the default workflow's problem) ----------------------------------------

N1_ROW = [0.014077, -0.077845, -0.048693, 0.045061, -0.692732, 0.569866, 0.288412, 0.040332, 0.294917, 0.113715]
N2_ROW = [-0.06131, 0.033991, -0.094592, 0.013079, -0.706363, 0.561938, 0.304959, 0.086387, 0.26063, 0.053412]
N1 = Neighbour(1, 89, "N1", np.array(N1_ROW))  # agent 1, local row 89
N2 = Neighbour(0, 15, "N2", np.array(N2_ROW))  # agent 0, local row 15
AUDIT_EPS = np.array([2.0, 5.0, 10.0])


@pytest.fixture(scope="module")
def diabetes():
    from ddppm.testing import paper_problem

    return paper_problem("diabetes")


def _at_least(found, audit):
    """The search's δ is at least the audit neighbour's, within the Monte-Carlo noise of the own randomness."""
    slack = 2 * np.nan_to_num(audit.delta_se) + 1e-9
    assert np.all(found.delta >= audit.delta - slack), (found.delta, audit.delta)


def test_search_finds_a_neighbour_as_bad_as_n1(diabetes):
    """`sound` (network view, exact tails) at the calibration's least-δ candidate (T = 1, κ = 3162): the audit's
    N1 (a low-leverage row pushed onto the unit sphere) gives δ = 0.790 / 0.661 / 0.567."""
    params = corollary_params(diabetes, T=1, kappa=3162.0)
    settings = AccountantSettings(view="network", accounting="exact", adjacency="worst")
    audit = evaluate_delta(diabetes, params, AUDIT_EPS, settings, neighbours=[N1])
    np.testing.assert_allclose(audit.delta, [0.790, 0.661, 0.567], atol=5e-4)
    _at_least(evaluate_delta(diabetes, params, AUDIT_EPS, settings), audit)


def test_search_finds_a_neighbour_as_bad_as_n2(diabetes):
    """Paper view, exact tails, at the `paper` choice for Diabetes (T = 2, η₁ = 5.62): N2 gives δ = 0.821 / 0.658 /
    0.508."""
    from ddppm.accounting.iteration import DDPPMParams, NoiseSchedule

    alpha, sigma_q = 1 / np.sqrt(diabetes.mu1 * diabetes.mu2), 1 / np.sqrt(diabetes.n)
    params = DDPPMParams(alpha, sigma_q, NoiseSchedule("geometric", 5.62 * sigma_q * alpha, 1.0), 2)
    settings = AccountantSettings(view="paper", accounting="exact", adjacency="worst")
    audit = evaluate_delta(diabetes, params, AUDIT_EPS, settings, neighbours=[N2])
    np.testing.assert_allclose(audit.delta, [0.821, 0.658, 0.508], atol=5e-4)
    _at_least(evaluate_delta(diabetes, params, AUDIT_EPS, settings), audit)


def test_diabetes_floor_exceeds_the_limit_at_eps_5(diabetes):
    """Network view, ε = 5: the floor is at least the audit's 0.640 (hockey stick), far over the limit 0.008."""
    result = parameter_free_floor(diabetes, np.array([5.0]), "network")
    n1, _ = noise_free_pair_delta(diabetes, N1, [5.0], "network")
    assert n1[0] == pytest.approx(0.640, abs=1e-3)
    assert result.hockey[0] >= n1[0] > 0.008


def test_best_directions_with_the_metric_factorised_once_are_bit_identical() -> None:
    """The ``μ = 0`` direction computed once per metric (:func:`_metric_top`) is what each row computed itself."""
    from ddppm.accounting.floor import _best_directions, _metric_top

    rng = np.random.default_rng(3)
    for d in (3, 13, 50):
        B = rng.standard_normal((d, d))
        metric = B.T @ B
        top = _metric_top(metric)
        assert top is not None
        for x in rng.standard_normal((5, d)) / np.sqrt(d):
            assert np.array_equal(_best_directions(x, metric, top), _best_directions(x, metric))
        assert np.array_equal(_best_directions(np.zeros(d), metric, top), _best_directions(np.zeros(d), metric))
    assert _metric_top(np.diag([2.0, 1.0])) is None  # a zero entry: each row factorises its own matrix
