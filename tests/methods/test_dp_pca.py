"""DP-PCA (ddppm.methods.dp_pca): the clipped sum's and the radius histogram's sensitivities against a brute-force
search, the δ against dp-accounting, the run replayed from its transcript, the noise's law, and the rank limit."""

from __future__ import annotations

import numpy as np
import pytest

from ddppm.common_task.run import run_methods
from ddppm.common_task.task import CommonTask, subspace_error
from ddppm.core.seeds import run_generators
from ddppm.data.synthetic import spiked_synthetic
from ddppm.methods import get_method
from ddppm.methods.dp_pca import (
    CLIPPED_SHARE,
    RADIUS_BINS,
    batch_count,
    batch_distances,
    clip_to_ball,
    clipped_sum,
    distance_histogram,
    dp_pca_transcript,
    oja_step,
    private_radius,
    project_to_unit_ball,
)

OPTIONS = {"adjacency": "replace_one", "iterations": 4}


def _unit_rows(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    X = rng.standard_normal(shape)
    return X / np.linalg.norm(X, axis=-1, keepdims=True) * rng.uniform(0.2, 1.0, size=shape[:-1] + (1,))


def _gradients(rows: np.ndarray, w: np.ndarray) -> np.ndarray:
    return rows * (rows @ w)[:, None]


def test_the_clipped_sum_moves_by_at_most_twice_the_radius() -> None:
    """Over random batches, directions, centres and radii, replacing one row (random, along w, across w at 45°,
    zero) moves the clipped sum by at most 2τ; with the centre w/2 (the centre of the sphere the gradients
    ``x(xᵀw)`` of unit rows lie on) the search comes within 2 % of 2τ."""
    rng = np.random.default_rng(0)
    d = 4
    worst = 0.0
    for trial in range(4000):
        w = rng.standard_normal(d)
        w /= np.linalg.norm(w)
        u = np.linalg.svd(w[None])[2][-1]
        rows = _unit_rows(rng, (6, d))
        centre = w / 2 if trial % 2 else project_to_unit_ball(rng.standard_normal(d))
        radius = np.array([float(rng.choice(RADIUS_BINS[:8]))])
        candidates = [_unit_rows(rng, (d,)), w, (w + u) / np.sqrt(2), (w - u) / np.sqrt(2), np.zeros(d)]
        base = clip_to_ball(_gradients(rows, w)[None], centre[None], radius)[0].sum(axis=0)
        for x_new in candidates:
            other = rows.copy()
            other[0] = x_new
            moved = clip_to_ball(_gradients(other, w)[None], centre[None], radius)[0].sum(axis=0)
            ratio = float(np.linalg.norm(base - moved)) / (2 * radius[0])
            assert ratio <= 1 + 1e-9
            worst = max(worst, ratio)
    assert worst > 0.98


def test_the_factored_distances_and_clipped_sum_equal_the_direct_ones() -> None:
    """``‖g_i − c‖`` from projections and ``Σ clip(g_i)`` from weights equal the gradients formed and clipped."""
    rng = np.random.default_rng(10)
    rows = _unit_rows(rng, (5, 40, 6))
    w = rng.standard_normal((5, 6))
    w /= np.linalg.norm(w, axis=1, keepdims=True)
    centre = project_to_unit_ball(rng.standard_normal((5, 6)) * 0.3)
    radius = rng.choice(RADIUS_BINS[:6], size=5)
    gradients = rows * np.einsum("rbd,rd->rb", rows, w)[..., None]
    p, distances = batch_distances(rows, w, centre)
    np.testing.assert_allclose(distances, np.linalg.norm(gradients - centre[:, None, :], axis=-1), atol=1e-12)
    np.testing.assert_allclose(clipped_sum(rows, p, distances, centre, radius),
                               clip_to_ball(gradients, centre, radius).sum(axis=1), atol=1e-12)  # fmt: skip


def test_the_radius_histogram_moves_by_at_most_root_two() -> None:
    """Replacing one row changes at most two bin counts, by one each (L2 ≤ √2), and some replacement does."""
    rng = np.random.default_rng(1)
    d, worst = 3, 0.0
    for _ in range(3000):
        w = _unit_rows(rng, (d,))
        w /= np.linalg.norm(w)
        centre = project_to_unit_ball(rng.standard_normal(d) * rng.uniform(0, 1))
        rows = _unit_rows(rng, (10, d))
        other = rows.copy()
        other[int(rng.integers(10))] = _unit_rows(rng, (d,)) if rng.uniform() < 0.8 else np.zeros(d)
        counts = [distance_histogram(np.linalg.norm(_gradients(r, w) - centre, axis=1)) for r in (rows, other)]
        assert counts[0].sum() == 10 and counts[1].sum() == 10
        change = float(np.linalg.norm(counts[0] - counts[1]))
        assert change <= np.sqrt(2) + 1e-12
        worst = max(worst, change)
    assert worst == pytest.approx(np.sqrt(2))


def test_the_radius_is_the_first_edge_whose_count_from_the_top_passes() -> None:
    counts = np.zeros(len(RADIUS_BINS))
    counts[[3, 5]] = [2.0, 50.0]
    assert private_radius(counts, 10.0) == RADIUS_BINS[5]
    assert private_radius(counts, 1.0) == RADIUS_BINS[3]
    assert private_radius(np.zeros(len(RADIUS_BINS)), 1.0) == RADIUS_BINS[-1]


@pytest.mark.parametrize(("eps", "limit"), [(0.5, 1e-5), (2.0, 1e-3), (8.0, 1e-6)])
def test_the_delta_against_dp_accounting(eps: float, limit: float) -> None:
    """δ = PLD(histogram ∘ clipped sum)(ε) = the limit: one step's two releases (the batches compose in parallel)."""
    dp_accounting = pytest.importorskip("dp_accounting", reason="the test extra installs dp-accounting")
    from dp_accounting import pld

    task = CommonTask(_unit_rows(np.random.default_rng(2), (300, 4)), (np.arange(300),), 1)
    calibrated = get_method("dp_pca").common_calibrate(task, eps, limit, OPTIONS)
    accountant = pld.PLDAccountant()
    for release in calibrated.releases:
        accountant.compose(dp_accounting.GaussianDpEvent(release.sigma / release.sensitivity))
    assert calibrated.delta == pytest.approx(accountant.get_delta(eps), rel=1e-4)
    assert calibrated.delta == pytest.approx(limit, rel=1e-6) and calibrated.feasible


def test_the_run_replays_from_its_transcript() -> None:
    """Simulation identity: from the releases alone (noisy counts and sums) the radii, the centres, every iterate
    and the estimate are recomputed exactly; the estimate is what common_estimate returns; each batch is a
    disjoint block of rows."""
    method = get_method("dp_pca")
    n, d = 900, 5
    task = CommonTask(_unit_rows(np.random.default_rng(3), (n, d)), (np.arange(n),), 1)
    calibrated = method.common_calibrate(task, 2.0, 1e-5, OPTIONS)
    transcript = dp_pca_transcript(task.X, calibrated.params, run_generators(7, ("t",), range(3)))
    T, B = batch_count(n), transcript["batch"]
    assert transcript["order"].shape == (3, T, B)
    for order in transcript["order"]:
        assert len(np.unique(order)) == T * B
    allowed = CLIPPED_SHARE * B + 3 * calibrated.params["histogram_sigma"]
    w, centre = transcript["w"][:, 0], np.zeros((3, d))
    for t in range(T):
        np.testing.assert_array_equal(transcript["w"][:, t], w)
        np.testing.assert_array_equal(transcript["centre"][:, t], centre)
        np.testing.assert_array_equal(transcript["radius"][:, t], private_radius(transcript["counts"][:, t], allowed))
        mean = transcript["sums"][:, t] / B
        w, centre = oja_step(w, mean, t + 1), project_to_unit_ball(mean)
    np.testing.assert_array_equal(transcript["estimate"], w)
    estimate = method.common_estimate(task, calibrated, run_generators(7, ("t",), range(3)), OPTIONS)
    np.testing.assert_array_equal(estimate[:, :, 0], w)


def test_the_releases_noise_has_its_calibrated_law() -> None:
    """Over 400 runs, (noisy − exact) / scale of the histogram counts and of the clipped sums is standard normal
    (mean within 4 standard errors of 0, variance within 10 %), the exact parts recomputed from the transcript."""
    method = get_method("dp_pca")
    n, d = 400, 3
    task = CommonTask(_unit_rows(np.random.default_rng(4), (n, d)), (np.arange(n),), 1)
    calibrated = method.common_calibrate(task, 1.0, 1e-5, OPTIONS)
    p = calibrated.params
    tr = dp_pca_transcript(task.X, p, run_generators(8, ("law",), range(400)))
    hist_z, sum_z = [], []
    for t in range(batch_count(n)):
        rows = task.X[tr["order"][:, t]]
        gradients = rows * np.einsum("rbd,rd->rb", rows, tr["w"][:, t])[..., None]
        exact_counts = distance_histogram(np.linalg.norm(gradients - tr["centre"][:, t, None], axis=-1))
        hist_z.append((tr["counts"][:, t] - exact_counts) / p["histogram_sigma"])
        clipped = clip_to_ball(gradients, tr["centre"][:, t], tr["radius"][:, t]).sum(axis=1)
        sum_z.append((tr["sums"][:, t] - clipped) / (2 * tr["radius"][:, t, None] * p["multiplier"]))
    for z in (np.concatenate(hist_z).ravel(), np.concatenate(sum_z).ravel()):
        assert abs(z.mean()) < 4 / np.sqrt(z.size)
        assert z.var() == pytest.approx(1.0, rel=0.1)


def test_its_error_falls_with_epsilon_on_public_spiked_rows() -> None:
    """On public synthetic spiked rows (not a benchmark set), the error falls as ε grows and, with little noise,
    comes within a factor 3 of the one-pass statistical scale √(d/n) (its floor: each row is read once)."""
    n, d = 20_000, 20
    X = spiked_synthetic(n=n, d=d, spikes=(8.0, 4.0), seed=12345) / (2 * np.sqrt(8 + 4 + d - 2))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    task = CommonTask(X, (np.arange(n),), 1)
    method = get_method("dp_pca")
    errors = []
    for eps in (0.5, 2.0, 200.0):
        calibrated = method.common_calibrate(task, eps, 1e-5, OPTIONS)
        V = method.common_estimate(task, calibrated, run_generators(9, ("eps", eps), range(30)), OPTIONS)
        errors.append(float(subspace_error(V, task.V).mean()))
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 3 * np.sqrt(d / n)


def test_it_runs_at_rank_one_only() -> None:
    """The runner skips DP-PCA at k = 2 (it estimates the top eigenvector only) and runs it at k = 1, beside a
    method that runs at both."""
    X = _unit_rows(np.random.default_rng(5), (300, 4))
    methods = {name: get_method(name) for name in ("dp_pca", "analyze_gauss")}
    for k, expected in ((1, {"dp_pca", "analyze_gauss"}), (2, {"analyze_gauss"})):
        runs = run_methods(CommonTask(X, (np.arange(300),), k), [1.0], 1e-5, 3, 0, OPTIONS, methods)
        assert set(runs["method"]) == expected
