"""The private box before the sums (ddppm.common_task.range_finding): the histograms' sensitivity measured on raw
records; the counts' noise, the cumulative estimate (against its least-squares definition) and its noise, and the
edges' test's rates by Monte Carlo; the edges against a brute-force loop and on known cases, never shrinking a
feature to nothing; the whole preprocessing's δ against dp-accounting; the public rounds rule against a direct
search; and the error barely growing with the bounds' width where the one-shot sums collapse."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from ddppm.common_task import range_finding
from ddppm.common_task.base import top_k
from ddppm.common_task.budget import split_budget
from ddppm.common_task.certified import certified_delta
from ddppm.common_task.preprocessing import PreprocessingPlan, preprocessing_noise, private_standardise
from ddppm.common_task.range_finding import (
    RangePlan,
    allowance_count,
    bin_counts,
    cumulative_counts,
    cumulative_sd,
    edge_cuts,
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


def test_the_rounds_noise_is_each_partys_added(monkeypatch):
    """The noisy counts private_intervals draws carry standard deviation √p σ: p parties' noises in one Gaussian
    (measured on the counts it hands to shrink_intervals, against the true counts of the same box)."""
    rng = np.random.default_rng(1)
    Z = rng.uniform(-1, 1, (400, 4)) / 2
    plan, parties, sigma = RangePlan(), 9, 3.0
    seen = []

    def capture(noisy, lower, upper, n, noise, plan_):
        seen.append((noisy - bin_counts(Z, lower, upper, plan_.bins)).ravel())
        assert noise == pytest.approx(np.sqrt(parties) * sigma)
        return lower, upper  # the box stays, so every round counts the same bins

    monkeypatch.setattr(range_finding, "shrink_intervals", capture)
    private_intervals(Z, plan, sigma, parties, 300, rng)
    assert np.concatenate(seen).std() == pytest.approx(np.sqrt(parties) * sigma, rel=0.02)


def test_the_cumulative_estimate_is_least_squares_under_the_total():
    """Ĉ(k) are the partial sums of the least-squares counts under Σ c = n, solved here from the KKT system."""
    rng = np.random.default_rng(2)
    bins, n = 16, 500
    noisy = rng.multinomial(n, rng.dirichlet(np.ones(bins)), size=5) + rng.normal(0, 30, (5, bins))
    kkt = np.block([[np.eye(bins), np.ones((bins, 1))], [np.ones((1, bins)), np.zeros((1, 1))]])
    for row, estimate in zip(noisy, cumulative_counts(noisy, n), strict=True):
        counts = np.linalg.solve(kkt, np.append(row, n))[:bins]
        np.testing.assert_allclose(estimate, np.cumsum(counts)[:-1], atol=1e-9)


def test_the_cumulative_noise_by_monte_carlo():
    """Ĉ(k) is unbiased for the records in the first k bins, with standard deviation σ_k = s·√(k(B − k)/B): far
    below a plain partial sum's s√k at the far end (measured over 40,000 noisy histograms)."""
    rng = np.random.default_rng(3)
    bins, n, s = 16, 300, 20.0
    counts = np.zeros(bins)
    counts[[6, 7, 9]] = [100, 150, 50]
    estimates = cumulative_counts(counts + rng.normal(0, s, (40_000, bins)), n)
    np.testing.assert_allclose(estimates.mean(axis=0), np.cumsum(counts)[:-1], atol=4 * s / np.sqrt(40_000) * 2)
    np.testing.assert_allclose(estimates.std(axis=0), cumulative_sd(s, bins), rtol=0.02)
    assert cumulative_sd(s, bins)[-1] < 0.3 * s * np.sqrt(bins - 1)


@pytest.mark.parametrize("k", [1, 4, 8, 13])
def test_a_stretch_holding_the_allowance_is_cut_at_the_stated_rate(k):
    """The test at k, Ĉ(k) ≤ A − z σ_k, passes a stretch holding exactly A records with probability Φ(−z) (its noise
    must fall z standard deviations low), and one holding A + σ_k with Φ(−z − 1): Monte Carlo of 40,000 noisy
    histograms against the normal law (A = (z + power)·σ_max here, the noise's allowance, below allowance·n)."""
    rng = np.random.default_rng(4 + k)
    plan, bins, n, s = RangePlan(), 16, 1000, 25.0
    allowance = allowance_count(plan, n, s)
    assert allowance == pytest.approx((plan.z + plan.power) * s * 2) and allowance < plan.allowance * n  # the noise's
    sigma_k = cumulative_sd(s, bins)[k - 1]
    for extra, rate in ((0.0, norm.cdf(-plan.z)), (sigma_k, norm.cdf(-plan.z - 1))):
        counts = np.zeros(bins)
        counts[:k] = (allowance + extra) / k
        counts[-1] += n - counts.sum()
        estimates = cumulative_counts(counts + rng.normal(0, s, (40_000, bins)), n)[:, k - 1]
        passed = float(np.mean(estimates <= allowance - plan.z * sigma_k))
        assert abs(passed - rate) < 4 * np.sqrt(rate * (1 - rate) / 40_000)


def test_an_empty_stretch_passes_at_least_half_the_time_where_the_rule_runs_a_round():
    """At the rule's limit (z·s·√B/2 = allowance·n) the threshold of the noisiest stretch, half the box, is 0: an
    empty half passes half the time (its noise alone decides); below the limit more often, and Φ(power) once the
    noise sets the allowance (Monte Carlo, 40,000 draws)."""
    rng = np.random.default_rng(5)
    plan, bins, n = RangePlan(), 16, 1000
    limit = plan.allowance * n / (plan.z * np.sqrt(bins) / 2)
    counts = np.zeros(bins)
    counts[bins // 2 :] = n / (bins // 2)
    for s, rate in ((limit, 0.5), (limit / 2, norm.cdf(plan.z)), (limit / 20, norm.cdf(plan.power))):
        # half the noise: A = allowance·n still, A/σ_max − z = 2z − z; a twentieth: A = (z + power)·σ_max
        estimates = cumulative_counts(counts + rng.normal(0, s, (40_000, bins)), n)[:, bins // 2 - 1]
        passed = float(np.mean(estimates <= allowance_count(plan, n, s) - plan.z * cumulative_sd(s, bins)[7]))
        assert abs(passed - rate) < 4 * np.sqrt(rate * (1 - rate) / 40_000)


def test_the_edges_against_a_brute_force_loop():
    """edge_cuts against a plain loop over features and k: the largest k from each side whose estimate passes,
    none where both sides' cuts would leave no bin."""
    rng = np.random.default_rng(6)
    plan, bins, n, s = RangePlan(), 16, 400, 25.0
    counts = rng.multinomial(n, rng.dirichlet(np.full(bins, 0.3)), size=300).astype(float)
    noisy = counts + rng.normal(0, s, counts.shape)
    noisy[:5] += rng.normal(0, 400, (5, bins))  # a few wild histograms, where the two cuts can meet
    left, right = edge_cuts(noisy, n, s, plan)
    allowance = min(plan.allowance * n, (plan.z + plan.power) * s * np.sqrt(bins) / 2)
    met = 0
    for j, row in enumerate(noisy):
        excess = sum(row) - n
        cuts = []
        for side in (row, row[::-1]):
            best = 0
            for k in range(1, bins):
                estimate = sum(side[:k]) - k / bins * excess
                if estimate <= allowance - plan.z * s * np.sqrt(k * (bins - k) / bins):
                    best = k
            cuts.append(best)
        if cuts[0] + cuts[1] > bins - 1:
            cuts, met = [0, 0], met + 1
        assert (left[j], right[j]) == tuple(cuts)
    assert met >= 1 and (left > 0).mean() > 0.5


def test_the_intervals_of_known_cases():
    """Noise-free counts on [0, 16], n = 100, A = 20: records in bins 5..7 cut 5 bins on the left and 8 on the right,
    so [4, 9] widened by 30 % of its span, [2.5, 10.5]; records spread evenly cut 3 on each side, [2, 14] widened
    by 3.6 within [0, 16]; and estimates whose cuts would meet leave the feature as it was."""
    plan, n = RangePlan(), 100
    counts = np.zeros((3, 16))
    counts[0, 5:8] = [30, 40, 30]
    counts[1] = n / 16
    estimate = np.array([0, n, *[n] * 9, 0, 0, 0, 0], float)  # Ĉ(1..15) high in the middle, low at both ends
    counts[2] = np.diff(np.concatenate([[0.0], estimate, [n]]))
    lower, upper = shrink_intervals(counts, np.zeros(3), np.full(3, 16.0), n, 1e-9, plan)
    np.testing.assert_allclose(lower, [4 - 1.5, 0, 0])
    np.testing.assert_allclose(upper, [9 + 1.5, 16, 16])


def test_the_box_clips_nothing_where_the_noise_is_small():
    """With little noise the allowance (z + power)·σ_max is a few records: a long-tailed feature's box keeps every
    record while a concentrated one still shrinks, so the box's clipping vanishes as ε grows (what a fixed share of n
    would not do)."""
    rng = np.random.default_rng(8)
    X = np.column_stack([rng.lognormal(0, 1.2, 5000), rng.normal(0, 1, 5000)])
    bounds = PublicBounds(np.array([0.0, -100.0]), np.array([X[:, 0].max() * 1.01, 100.0]), "declared", "a test")
    Z = prepare_public(X, bounds)
    plan = RangePlan()
    lower, upper = private_intervals(Z, plan, 1e-3, 1, plan.rounds, rng)
    assert np.all((Z >= lower) & (Z <= upper))
    assert (upper[1] - lower[1]) < 0.2 * (2 / np.sqrt(2))


def test_a_feature_never_shrinks_to_nothing():
    """Whatever the noise (here far larger than the counts), every new interval lies within the old one and keeps
    at least two of its bins."""
    rng = np.random.default_rng(7)
    plan = RangePlan(margin=0.0)
    noisy = rng.normal(0, 1e4, (2000, plan.bins))
    lower, upper = rng.uniform(-1, 0, 2000), rng.uniform(0.01, 1, 2000)
    new_lower, new_upper = shrink_intervals(noisy, lower, upper, 50, 1.0, plan)
    assert np.all(new_lower >= lower) and np.all(new_upper <= upper)
    assert np.all(new_upper - new_lower >= 2 * (upper - lower) / plan.bins * (1 - 1e-12))


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


def test_the_rounds_rule_against_a_direct_search():
    """range_rounds' closed form against the rule itself: the most rounds, up to plan.rounds, for which every one
    of the round's thresholds A − z·σ_k is non-negative (σ_k of the total noise √p·σ_R, A = min(allowance·n,
    (z + power)·σ_max)), searched round by round."""
    plan = RangePlan()
    points = [(178, 13, 1, 0.05), (178, 13, 1, 0.1), (178, 13, 1, 0.2), (300, 8, 1, 0.1), (569, 30, 1, 0.3),
              (5000, 20, 4, 0.05), (10**5, 100, 3, 0.02), (500, 10, 500, 0.4)]  # fmt: skip
    for n, d, parties, mu in points:
        found = []
        for r in range(1, plan.rounds + 1):
            spread = cumulative_sd(np.sqrt(parties) * round_sigma(mu, d, r), plan.bins)
            if np.all(min(plan.allowance * n, (plan.z + plan.power) * spread.max()) - plan.z * spread >= 0):
                found.append(r)
        assert range_rounds(plan, mu, n, d, parties) == max(found, default=0), (n, d, parties, mu)


def test_the_rounds_are_skipped_by_a_public_rule():
    """Each individual as a party (p = n): no round runs and the sums get the whole budget, the one-shot sums; a
    curator of the same records runs them. Wine (n = 178, d = 13, δ = 10⁻⁵) runs none at ε = 1, one at ε = 2 and
    three from ε = 5 (module docstring)."""
    plan = PreprocessingPlan()
    n, d = 500, 10
    assert range_rounds(plan.range, 0.4, n, d, n) == 0
    assert range_rounds(plan.range, 0.4, n, d, 1) == plan.range.rounds
    skipped = preprocessing_noise(plan, 0.4, d, n, n)
    one_shot = preprocessing_noise(PreprocessingPlan(estimator="one_shot"), 0.4, d, n, n)
    assert skipped.range_rounds == 0 and skipped.sigma_sum == one_shot.sigma_sum
    for eps, rounds in ((1.0, 0), (2.0, 1), (5.0, 3), (10.0, 3)):
        mu_pre = split_budget(eps, 1e-5, plan.share).mu_pre
        assert preprocessing_noise(plan, mu_pre, 13, 1, 178).range_rounds == rounds


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


@pytest.mark.parametrize("bad", [{"share": 1.0}, {"allowance": 0.5}, {"z": 0.0}, {"margin": -0.1}, {"bins": 1}])
def test_a_bad_plan_is_refused(bad):
    with pytest.raises(ConfigError, match="common.preprocessing.range"):
        RangePlan(**bad)
    with pytest.raises(ConfigError, match="estimator"):
        PreprocessingPlan(estimator="median")
