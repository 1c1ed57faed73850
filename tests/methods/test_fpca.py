"""FPCA (ddppm.methods.fpca): MOD-SuLQ's noise, its certified δ against dp-accounting, the merge tree against the
matrix it summarises, and the estimate against the releases it is made of."""

from __future__ import annotations

import numpy as np
import pytest

from ddppm.common_task.adjacency import release_sensitivity
from ddppm.common_task.certified import certified_delta, noise_multiplier
from ddppm.common_task.task import CommonTask
from ddppm.core.network import mixing_matrix
from ddppm.core.seeds import run_generators
from ddppm.methods import get_method
from ddppm.methods.fpca import merge_tree, mod_sulq_beta, node_releases, rank_r, symmetric_rank_r

OPTIONS = {"adjacency": "replace_one", "iterations": 4}


def _task(n: int = 120, d: int = 5, m: int = 4, seed: int = 0) -> CommonTask:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.r_[3.0, np.ones(d - 1)]
    X /= np.linalg.norm(X, axis=1).max()
    return CommonTask(X, tuple(np.array_split(np.arange(n), m)), 1, mixing_matrix("complete", m))


def test_mod_sulq_noise_on_the_gram_does_not_depend_on_n_and_is_about_d_times_the_gaussian_mechanisms() -> None:
    """n β is the same for every n; against AnalyzeGauss's σ (√2 · the analytic multiplier) the ratio grows like d."""
    assert 10 * mod_sulq_beta(1.0, 1e-5, 6, 10) == pytest.approx(1000 * mod_sulq_beta(1.0, 1e-5, 6, 1000))
    gaussian = np.sqrt(2) * noise_multiplier(1.0, 1e-5)
    ratios = [mod_sulq_beta(1.0, 1e-5, d, 1) / gaussian for d in (5, 20, 80)]
    assert ratios[0] < ratios[1] < ratios[2] and 0.5 < ratios[2] / 80 < 2
    with pytest.raises(ValueError, match="MOD-SuLQ"):
        mod_sulq_beta(0.0, 1e-5, 6, 10)


@pytest.mark.parametrize(("eps", "delta", "d"), [(0.5, 1e-5, 2), (1.0, 1e-6, 6), (5.0, 1e-3, 20)])
def test_mod_sulq_meets_its_own_claim_under_the_exact_accountant(eps: float, delta: float, d: int) -> None:
    """MOD-SuLQ's (ε, δ) claim holds for the Gaussian mechanism of sensitivity √2 on the upper triangle (certified δ
    at most δ), with room to spare: its per-entry analysis is conservative."""
    sigma = mod_sulq_beta(eps, delta, d, 1)
    assert certified_delta(release_sensitivity("upper_triangle") / sigma, eps) <= delta / 10


@pytest.mark.parametrize("eps", [0.01, 0.03, 0.06])
def test_the_certified_delta_curve_against_dp_accounting(eps: float) -> None:
    """The δ FPCA's noise certifies at a smaller ε (where it is measurable) equals dp-accounting's PLD for one
    Gaussian event of noise multiplier σ/Δ."""
    dp_accounting = pytest.importorskip("dp_accounting", reason="the test extra installs dp-accounting")
    from dp_accounting import pld

    task = _task()
    calibrated = get_method("fpca").common_calibrate(task, 1.0, 1e-5, OPTIONS)
    (release,) = calibrated.releases
    accountant = pld.PLDAccountant()
    accountant.compose(dp_accounting.GaussianDpEvent(release.sigma / release.sensitivity))
    ours = certified_delta(release.sensitivity / release.sigma, eps)
    assert 1e-6 < ours < 1 and ours == pytest.approx(accountant.get_delta(eps), rel=1e-6)


def test_the_release_moves_by_at_most_the_sensitivity_under_a_brute_force_search() -> None:
    """Replacing one row of a node by any unit-ball row moves that node's X_jᵀX_j upper triangle by at most √2
    (random search over pairs, and the orthogonal pair that attains it)."""
    rng = np.random.default_rng(1)
    d, bound = 5, release_sensitivity("upper_triangle")
    worst = 0.0
    for _ in range(20_000):
        x, y = rng.standard_normal((2, d))
        x, y = x / max(1.0, np.linalg.norm(x)) * rng.uniform() ** 0.2, y / max(1.0, np.linalg.norm(y))
        change = np.outer(x, x) - np.outer(y, y)
        worst = max(worst, float(np.linalg.norm(change[np.triu_indices(d)])))
    e = np.eye(d)
    attained = np.linalg.norm((np.outer(e[0], e[0]) - np.outer(e[1], e[1]))[np.triu_indices(d)])
    assert worst <= bound + 1e-12 and attained == pytest.approx(bound)


def test_a_full_rank_merge_tree_keeps_the_sum_of_squares() -> None:
    """With r = d nothing is truncated: the root R of leaves ``U_jΣ_j`` obeys ``R Rᵀ = Σ_j A_j²`` (the SVD of
    [U₁Σ₁ | U₂Σ₂] keeps ``U₁Σ₁²U₁ᵀ + U₂Σ₂²U₂ᵀ``), for 5 leaves (an odd one moves up)."""
    rng = np.random.default_rng(2)
    d = 4
    mats = [(lambda G: G @ G.T)(rng.standard_normal((d, d))) for _ in range(5)]
    root = merge_tree([rank_r(A, d) for A in mats], d)
    np.testing.assert_allclose(root @ root.T, sum(A @ A for A in mats), rtol=1e-10, atol=1e-10)


def test_the_symmetric_route_is_the_svd() -> None:
    """The eigendecomposition route gives the SVD's ``U_r Σ_r`` (up to each column's sign), for a stack."""
    rng = np.random.default_rng(4)
    stack = (lambda G: G + np.swapaxes(G, -1, -2))(rng.standard_normal((3, 6, 6)))
    fast, slow = symmetric_rank_r(stack, 2), rank_r(stack, 2)
    np.testing.assert_allclose(np.abs(np.einsum("rdk,rdk->rk", fast, slow)), np.sum(slow**2, axis=1), rtol=1e-10)


def test_the_estimate_is_the_merged_top_direction_of_the_releases() -> None:
    """Simulation identity: the view's releases, truncated and merged, give the estimate."""
    method, task = get_method("fpca"), _task()
    calibrated = method.common_calibrate(task, 5.0, 1e-5, OPTIONS)
    rngs = lambda: run_generators(2, ("f",), range(4))  # noqa: E731
    views = method.common_view(task, calibrated, rngs())
    estimates = method.common_estimate(task, calibrated, rngs(), OPTIONS)
    iu = np.triu_indices(task.d)
    for view, estimate in zip(views, estimates, strict=True):
        leaves = []
        for part in np.split(view, task.m):
            A = np.zeros((task.d, task.d))
            A[iu] = part
            leaves.append(rank_r(A + np.triu(A, 1).T, 1))
        root = merge_tree(leaves, 1)
        assert abs(float(root[:, 0] @ estimate[:, 0])) / np.linalg.norm(root) == pytest.approx(1.0, abs=1e-10)
    again = node_releases(task, calibrated.params["beta_sums"], rngs()[0])
    assert len(again) == task.m and np.allclose(again[0], again[0].T)
