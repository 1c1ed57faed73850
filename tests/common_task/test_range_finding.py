"""The private box before the sums (ddppm.common_task.range_finding): the histograms' sensitivity measured on raw
records, the noise's law and the detection threshold by Monte Carlo, the whole preprocessing's δ against
dp-accounting, the intervals on a known case, the public skip rule, and the error barely growing with the bounds'
width where the one-shot sums collapse."""

from __future__ import annotations

import numpy as np
import pytest

from ddppm.common_task.base import top_k
from ddppm.common_task.budget import split_budget
from ddppm.common_task.certified import certified_delta
from ddppm.common_task.preprocessing import PreprocessingPlan, preprocessing_noise, private_standardise
from ddppm.common_task.range_finding import (
    RangePlan,
    bin_counts,
    detection_threshold,
    histogram_sensitivity,
    private_intervals,
    range_rounds,
    round_sigma,
    shrink_intervals,
    to_box,
)
from ddppm.common_task.task import subspace_error
from ddppm.core.errors import ConfigError
from ddppm.data import load_dataset
from ddppm.data.public_prep import PublicBounds, prepare_public, public_bounds, reference_rows


def _wine() -> tuple[np.ndarray, PublicBounds]:
    X = np.array(load_dataset("wine", source="default").matrix)
    return X, public_bounds("wine", X.shape[1])


def test_the_histograms_sensitivity_is_measured_on_raw_records():
    """Replace one raw Wine record by extreme or other records: the d histograms (of the declared box and of a
    narrower one) move by at most √(2d) in L2, and a record far outside on every feature attains it."""
    X, bounds = _wine()
    n, d = X.shape
    rng = np.random.default_rng(0)
    half = 1 / np.sqrt(d)
    boxes = [(np.full(d, -half), np.full(d, half)), (np.full(d, -half / 3), np.full(d, half / 4))]
    for lower, upper in boxes:
        base = bin_counts(prepare_public(X, bounds), lower, upper, 16)
        moves = []
        for trial in range(300):
            other = X.copy()
            i = int(rng.integers(n))
            far = np.where(X[i] > (bounds.lower + bounds.upper) / 2, bounds.lower - 1e3, bounds.upper + 1e3)
            other[i] = far if trial % 3 == 0 else X[int(rng.integers(n))] + rng.normal(0, 1e2, d)
            moves.append(np.linalg.norm(bin_counts(prepare_public(other, bounds), lower, upper, 16) - base))
        assert max(moves) <= histogram_sensitivity(d) * (1 + 1e-12)
        assert max(moves) == pytest.approx(histogram_sensitivity(d))


def test_the_counts_and_threshold_by_monte_carlo():
    """Empty bins pass the threshold at the stated rate (false_bins/(d·bins) each), and the noisy counts of the p
    parties have standard deviation √p σ (the draws private_intervals makes, rebuilt from its generator)."""
    plan, d, parties = RangePlan(false_bins=2.0), 4, 9
    sigma = round_sigma(0.7, d, plan.rounds)
    tau = detection_threshold(plan, sigma, d, parties)
    noise = np.sqrt(parties) * sigma * np.random.default_rng(1).standard_normal((20_000, d, plan.bins))
    rate = float((noise > tau).mean())
    expected = plan.false_bins / (d * plan.bins)
    assert abs(rate - expected) < 4 * np.sqrt(expected / noise.size)
    assert noise.std() == pytest.approx(np.sqrt(parties) * sigma, rel=0.01)


def test_the_intervals_of_a_known_case():
    """Noise-free counts: occupied bins 5..7 of 16 on [0, 16] give [4 − 0.25·5, 8 + 1 + 0.25·5] within [0, 16]; a
    feature with no bin above the threshold keeps its interval."""
    counts = np.zeros((2, 16))
    counts[0, 5:8] = 100
    lower, upper = shrink_intervals(counts, np.zeros(2), np.full(2, 16.0), 50.0, 0.25)
    np.testing.assert_allclose(lower, [4 - 1.25, 0])
    np.testing.assert_allclose(upper, [9 + 1.25, 16])


def test_a_wide_box_shrinks_around_the_data():
    """Gaussian records in declared bounds ten times their spread: the private intervals hold nearly all values and
    are at most a third of the declared box."""
    rng = np.random.default_rng(2)
    X = rng.normal([0, 5, -3], [1, 2, 0.5], (20_000, 3))
    width = np.array([10 * 6, 10 * 12, 10 * 3.0])
    centre = np.array([0, 5, -3.0])
    bounds = PublicBounds(centre - width / 2, centre + width / 2, "declared", "a test")
    Z = prepare_public(X, bounds)
    plan = RangePlan()
    lower, upper = private_intervals(Z, plan, round_sigma(0.5, 3, plan.rounds), 1, plan.rounds, rng)
    inside = ((Z >= lower) & (Z <= upper)).mean(axis=0)
    assert inside.min() > 0.99
    assert ((upper - lower) * np.sqrt(3) / 2).max() < 1 / 3


@pytest.mark.parametrize(("eps", "limit", "parties"), [(1.0, 1e-5, 1), (5.0, 1e-5, 4), (10.0, 1e-6, 1)])
def test_the_preprocessing_delta_against_dp_accounting(eps, limit, parties):
    """Every release of the preprocessing (the box's rounds, the sums, the squares, the norms' histogram) composed
    by dp-accounting's PLD accountant gives the δ of μ_pre-GDP: its share of the target exactly."""
    dp_accounting = pytest.importorskip("dp_accounting", reason="the test extra installs dp-accounting")
    from dp_accounting import pld

    plan = PreprocessingPlan()
    mu_pre = split_budget(eps, limit, plan.share).mu_pre
    noise = preprocessing_noise(plan, mu_pre, 13, parties, 5000)
    assert noise.range_rounds == plan.range.rounds and noise.radius_searched
    assert len(noise.releases) == plan.range.rounds + 3  # the box's rounds, the sums, the squares, the norms
    assert noise.mu == pytest.approx(mu_pre, rel=1e-12)
    accountant = pld.PLDAccountant()
    for release in noise.releases:
        accountant.compose(dp_accounting.GaussianDpEvent(release.sigma / release.sensitivity))
    assert certified_delta(noise.mu, eps) == pytest.approx(accountant.get_delta(eps), rel=1e-3, abs=1e-12)


def test_the_rounds_are_skipped_by_a_public_rule():
    """Each individual as a party (p = n): no bin could be seen, so no round runs and the sums get the whole
    budget; a curator of the same records runs the rounds."""
    plan = PreprocessingPlan()
    n, d = 500, 10
    assert range_rounds(plan.range, 0.4, n, d, n) == 0
    assert range_rounds(plan.range, 0.4, n, d, 1) == plan.range.rounds
    # the most rounds whose threshold stays below n/2, by a direct search
    for mu in (0.05, 0.1, 0.2, 0.3):
        below = [r for r in range(1, plan.range.rounds + 1)
                 if detection_threshold(plan.range, round_sigma(mu, d, r), d, 1) < n / 2]  # fmt: skip
        assert range_rounds(plan.range, mu, n, d, 1) == max(below, default=0)
    skipped = preprocessing_noise(plan, 0.4, d, n, n)
    one_shot = preprocessing_noise(PreprocessingPlan(estimator="one_shot"), 0.4, d, n)
    assert skipped.range_rounds == 0 and skipped.sigma_sum == one_shot.sigma_sum


def test_rows_in_the_box_keep_the_sums_sensitivity():
    """to_box maps every coordinate into [−1, 1]/√d, so a party's sum moves by at most the box's diagonal, 2."""
    rng = np.random.default_rng(3)
    Z = rng.uniform(-1, 1, (50, 6)) / np.sqrt(6)
    lower, upper = np.full(6, -0.1), np.full(6, 0.2)
    rows = to_box(Z, lower, upper)
    assert np.abs(rows).max() <= 1 / np.sqrt(6) + 1e-15
    other = Z.copy()
    other[0] = -Z[0] * 10
    assert np.linalg.norm(to_box(other, lower, upper).sum(0) - rows.sum(0)) <= 2 + 1e-12


def test_loose_bounds_cost_little():
    """Diabetes with its declared bounds widened four times: the preprocessing alone errs far less with the box
    first than with the one-shot sums (which collapse toward chance), and not much more than at the declared
    bounds."""
    X = np.array(load_dataset("diabetes", source="default").matrix)
    bounds = public_bounds("diabetes", X.shape[1])
    centre, half = (bounds.lower + bounds.upper) / 2, (bounds.upper - bounds.lower) / 2
    wide = PublicBounds(np.maximum(centre - 4 * half, np.where(bounds.lower >= 0, 0, -np.inf)), centre + 4 * half,
                        "declared", "a test")  # fmt: skip
    reference = reference_rows(X)
    V = top_k((reference.T @ reference)[None], 1)[0]
    mu_pre = split_budget(5.0, 1e-5, 0.25).mu_pre

    def error(estimator: str, box: PublicBounds) -> float:
        plan = PreprocessingPlan(estimator=estimator)
        Z = prepare_public(X, box)
        noise = preprocessing_noise(plan, mu_pre, X.shape[1], 1, len(X))
        errors = []
        for seed in range(40):
            rows = private_standardise(Z, noise, plan, np.random.default_rng(seed))
            errors.append(subspace_error(top_k((rows.T @ rows)[None], 1), V)[0])
        return float(np.mean(errors))

    shrinking, one_shot = error("range_shrinking", wide), error("one_shot", wide)
    assert shrinking < 0.5 * one_shot and one_shot > 0.8
    assert shrinking < 1.5 * error("range_shrinking", bounds)


def test_a_bad_plan_is_refused():
    with pytest.raises(ConfigError, match="range.share"):
        RangePlan(share=1.0)
    with pytest.raises(ConfigError, match="estimator"):
        PreprocessingPlan(estimator="median")
