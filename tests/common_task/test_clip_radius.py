"""The private clipping radius (ddppm.common_task.clip_radius): the histogram and the choice against brute force, the
counts' sensitivity measured on raw records, the noise's law by Monte Carlo, the public rule that skips the search,
and the radius that grows with ε until no row is clipped."""

from __future__ import annotations

import numpy as np
import pytest

from ddppm.common_task.budget import split_budget
from ddppm.common_task.clip_radius import (
    HISTOGRAM_SENSITIVITY,
    RadiusPlan,
    choose_radius,
    max_norm,
    norm_counts,
    private_radius,
    radius_grid,
    radius_runs,
    radius_sigma,
    target_clipped,
)
from ddppm.common_task.preprocessing import (
    PreprocessingPlan,
    centred_norms,
    preprocessing_noise,
    private_statistics,
    standardise_rows,
)
from ddppm.core.errors import ConfigError
from ddppm.data.public_prep import bounds_from_entry, prepare_public


def _long_tailed(n: int = 6000, d: int = 6, seed: int = 0) -> np.ndarray:
    """Counts driven by one log-normal factor, capped at 500: most small, a long tail."""
    rng = np.random.default_rng(seed)
    factor = rng.standard_normal((n, 1))
    mean = np.exp(np.log(np.linspace(1, 6, d)) + np.linspace(0.4, 1.1, d) * factor)
    return np.minimum(rng.poisson(mean * rng.gamma(1.5, 1 / 1.5, (n, d))), 500).astype(float)


def test_the_counts_match_a_loop_over_the_bins():
    rng = np.random.default_rng(1)
    norms = np.concatenate([rng.lognormal(0, 1.5, 3000), [1.0, 2.0, 4.0]])  # some exactly on edges
    radii = radius_grid(1.0, 50.0, RadiusPlan(ratio=2.0))
    assert radii[0] == 1.0 and radii[-1] >= 50.0 and radii[-2] < 50.0
    np.testing.assert_allclose(radii[1:] / radii[:-1], 2.0)
    expected = np.zeros(radii.size - 1)
    for value in norms:
        for b in range(radii.size - 1):
            top = radii[b + 1] if b < radii.size - 2 else np.inf  # the last bin is open above
            if radii[b] <= value < top:
                expected[b] += 1
    np.testing.assert_array_equal(norm_counts(norms, radii), expected)


def test_the_choice_is_the_least_radius_whose_tail_is_small_enough():
    rng = np.random.default_rng(2)
    for _ in range(200):
        radii = np.cumprod(np.full(int(rng.integers(1, 9)), 1.5))
        noisy = rng.normal(5, 6, radii.size - 1)
        target = float(rng.uniform(0, 20))
        least = next(b for b in range(radii.size) if noisy[b:].sum() <= target)  # the empty tail at b = B is 0
        assert choose_radius(noisy, radii, target) == radii[least]


def test_one_replaced_record_moves_one_count_down_and_one_up():
    """Replace one raw record by extreme ones: the norms' histogram of the standardised rows (same releases) moves
    by at most √2 in L2."""
    X = _long_tailed(800)
    bounds = bounds_from_entry({"kind": "declared", "source": "counts", "all_features": [0, 500]}, 6, "b")
    plan = PreprocessingPlan(estimator="one_shot")
    noise = preprocessing_noise(plan, 0.8, 6, 1, 800)
    rows, released, _ = private_statistics(prepare_public(X, bounds), noise, plan, np.random.default_rng(0))
    radii = radius_grid(plan.fixed_radius(6), max_norm(released.mean, released.variance, np.full(6, 6**-0.5)),
                        plan.radius)  # fmt: skip
    counts = norm_counts(centred_norms(rows, released), radii)
    norms = centred_norms(rows, released)
    binned = np.flatnonzero(norms >= radii[0])  # rows counted in some bin
    rng, moves = np.random.default_rng(3), []
    for _ in range(200):
        other, i = X.copy(), int(rng.choice(binned))
        other[i] = X[int(rng.choice(binned))] if rng.random() < 0.5 else rng.choice([0.0, 500.0, 1e6], 6)
        moved = norm_counts(centred_norms(prepare_public(other, bounds), released), radii)
        moves.append(np.linalg.norm(moved - counts))
    assert max(moves) <= HISTOGRAM_SENSITIVITY + 1e-12 and max(moves) == pytest.approx(HISTOGRAM_SENSITIVITY)


@pytest.mark.parametrize("parties", [1, 9])
def test_the_noisy_tail_has_the_stated_law(parties):
    """With a target that no tail meets until the top, the least radius is decided by the noise alone: Monte Carlo
    of the decision against the closed form Φ of the last bin's noise (standard deviation √p σ)."""
    from scipy.stats import norm

    radii = np.array([1.0, 2.0, 4.0])
    norms = np.array([1.5] * 50 + [3.0] * 10)  # 50 rows in bin 0, 10 in bin 1
    sigma, target = 2.0, 10.0
    chosen = np.array([private_radius(norms, radii, sigma, parties, target, np.random.default_rng(s))
                       for s in range(4000)])  # fmt: skip
    # R = 2 exactly when the tail from bin 1 is ≤ t and the tail from bin 0 is not (bin 0 holds 50 ≫ the noise)
    spread = np.sqrt(parties) * sigma
    p_two = norm.cdf((target - 10.0) / spread) - norm.cdf((target - 60.0) / (spread * np.sqrt(2)))
    assert np.mean(chosen == 2.0) == pytest.approx(p_two, abs=4 * np.sqrt(p_two * (1 - p_two) / 4000) + 1e-3)


def test_the_search_is_skipped_by_a_public_rule():
    """Each individual as a party (p = n): the target t = κ√(d p)/μ_m reaches n, so no radius could clip more than
    t rows: no histogram is released and the sums get the whole preprocessing budget; a curator of the same
    records runs the search. A histogram whose one count's noise exceeds t is not released either."""
    plan = PreprocessingPlan(estimator="one_shot")
    curator, individuals = (preprocessing_noise(plan, 0.5, 10, p, 5000) for p in (1, 5000))
    assert curator.radius_searched and not individuals.radius_searched
    assert curator.mu == pytest.approx(0.5, rel=1e-12) and individuals.mu == pytest.approx(0.5, rel=1e-12)
    assert individuals.sigma_sum < curator.sigma_sum  # the budget the search did not spend went to the sums
    mu_method = 0.5 * np.sqrt((1 - plan.share) / plan.share)
    t = target_clipped(10, 5000, mu_method, plan.radius.kappa)
    assert t == pytest.approx(plan.radius.kappa * np.sqrt(10 * 5000) / mu_method)
    sigma = radius_sigma(np.sqrt(plan.radius.share) * 0.5)  # what the search would have spent
    assert t >= 5000 and not radius_runs(sigma, 5000, t, 5000) and radius_runs(sigma, 5000, t, 10**8)
    assert radius_runs(sigma, 1, target_clipped(10, 1, mu_method, plan.radius.kappa), 5000)
    assert not radius_runs(sigma, 1, 0.99 * sigma) and radius_runs(sigma, 1, sigma)
    fixed = preprocessing_noise(PreprocessingPlan(estimator="one_shot", radius=RadiusPlan(adaptive=False)), 0.5, 10, 1)
    assert not fixed.radius_searched and len(fixed.releases) == 2


def test_the_radius_grows_with_the_budget_until_no_row_is_clipped():
    X = _long_tailed()
    d = X.shape[1]
    bounds = bounds_from_entry({"kind": "declared", "source": "counts", "all_features": [0, 500]}, d, "b")
    Z = prepare_public(X, bounds)
    plan = PreprocessingPlan()
    clipped, radii = [], []
    for eps in (1.0, 5.0, 50.0, 1e4):
        noise = preprocessing_noise(plan, split_budget(eps, 1e-6, plan.share).mu_pre, d, 1, len(X))
        rows, released, _ = private_statistics(Z, noise, plan, np.random.default_rng(4))
        norms = centred_norms(rows, released)
        radii.append(released.radius)
        clipped.append(int(np.sum(norms > released.radius)))
        assert released.radius >= plan.fixed_radius(d)  # never below the fixed radius for standardised rows
        assert np.linalg.norm(standardise_rows(rows, released, plan), axis=1).max() <= 1 + 1e-12
    assert radii == sorted(radii) and radii[-1] > 2 * radii[0]
    assert clipped[-1] == 0 and clipped[0] > 0
    fixed_plan = PreprocessingPlan(radius=RadiusPlan(adaptive=False))
    noise = preprocessing_noise(fixed_plan, split_budget(1e4, 1e-6, fixed_plan.share).mu_pre, d, 1, len(X))
    rows, released, _ = private_statistics(Z, noise, fixed_plan, np.random.default_rng(4))
    assert released.radius is None and np.sum(centred_norms(rows, released) > fixed_plan.fixed_radius(d)) > 50


def test_a_plan_with_bad_keys_names_them():
    with pytest.raises(ConfigError, match="radius.share"):
        RadiusPlan(share=1.5)
    with pytest.raises(ConfigError, match="radius.kappa"):
        RadiusPlan(kappa=0)
    assert PreprocessingPlan.from_section({"radius": {"adaptive": False, "kappa": 3}}).radius == RadiusPlan(
        adaptive=False, kappa=3)
