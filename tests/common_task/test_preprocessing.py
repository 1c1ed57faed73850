"""Private standardisation with a share of the budget (ddppm.common_task.preprocessing): the sums' sensitivities are
measured on raw records, the releases have the stated law for each kind of party, the preprocessing's μ is its
share, and the standardised rows stay in the unit ball and depend on their own record and the releases only."""

from __future__ import annotations

import numpy as np
import pytest

from ddppm.common_task.preprocessing import (
    PreprocessingPlan,
    Released,
    mean_sensitivity,
    preprocessing_noise,
    preprocessing_party,
    private_standardise,
    release_statistics,
    squares_sensitivity,
    standardise_rows,
)
from ddppm.core.errors import PrivacyError
from ddppm.data import load_dataset
from ddppm.data.public_prep import prepare_public, public_bounds
from ddppm.methods import get_method


def _extreme_replacements(X, bounds, rng, count=200):
    """Neighbours of X: one record replaced by a far corner beyond the bounds (so clipped) or by another record."""
    for _ in range(count):
        other = X.copy()
        i = int(rng.integers(len(X)))
        corner = np.where(rng.random(X.shape[1]) < 0.5, bounds.lower, bounds.upper) + rng.normal(0, 1e3, X.shape[1])
        other[i] = corner if rng.random() < 0.7 else X[int(rng.integers(len(X)))]
        yield other


def test_the_sums_sensitivities_are_measured_on_raw_records():
    """Replace one raw record of Wine by extreme ones: the noise-free mean and mean of squares of the publicly
    prepared rows move by at most 2/n and √(2/d)/n, read from the two outputs, and the corners come close."""
    X = np.array(load_dataset("wine", source="default").matrix)
    n, d = X.shape
    bounds = public_bounds("wine", d)
    Z = prepare_public(X, bounds)
    moves_mean, moves_squares = [], []
    for other in _extreme_replacements(X, bounds, np.random.default_rng(0)):
        W = prepare_public(other, bounds)
        moves_mean.append(np.linalg.norm(W.mean(axis=0) - Z.mean(axis=0)))
        moves_squares.append(np.linalg.norm((W**2).mean(axis=0) - (Z**2).mean(axis=0)))
    assert max(moves_mean) <= mean_sensitivity(n) * (1 + 1e-12)
    assert max(moves_mean) >= 0.5 * mean_sensitivity(n)  # the bound is not loose by much for these pairs
    assert max(moves_squares) <= squares_sensitivity(d) / n * (1 + 1e-12)
    assert max(moves_squares) >= 0.3 * squares_sensitivity(d) / n


@pytest.mark.parametrize("parties", [1, 4, 50])
def test_the_releases_have_the_stated_law(parties):
    """The released mean's and mean of squares' noise is Gaussian with standard deviation √p σ / n (p parties)."""
    rng = np.random.default_rng(1)
    Z = rng.uniform(-1, 1, (400, 3)) / np.sqrt(3)
    plan = PreprocessingPlan(variance_floor=0.0, estimator="one_shot")
    noise = preprocessing_noise(plan, 0.5, 3, parties)
    releases = [release_statistics(Z, noise, plan, np.random.default_rng(seed)) for seed in range(3000)]
    means = np.array([r.mean for r in releases])
    squares = np.array([r.variance + r.mean**2 for r in releases])  # undo the post-processing (no floor here)
    np.testing.assert_allclose(means.mean(axis=0), Z.mean(axis=0), atol=4 * np.sqrt(parties) * noise.sigma_sum / 400
                               / np.sqrt(3000))  # fmt: skip
    np.testing.assert_allclose(means.std(axis=0), np.sqrt(parties) * noise.sigma_sum / 400, rtol=0.06)
    np.testing.assert_allclose(squares.std(axis=0), np.sqrt(parties) * noise.sigma_squares / 400, rtol=0.06)


@pytest.mark.parametrize(("scale", "mu"), [(True, 0.3), (False, 0.3), (True, 2.0)])
def test_the_preprocessing_spends_exactly_its_share(scale, mu):
    noise = preprocessing_noise(PreprocessingPlan(scale=scale, estimator="one_shot"), mu, 13, 4)
    assert noise.mu == pytest.approx(mu, rel=1e-12)
    assert len(noise.releases) == (2 if scale else 1) + noise.radius_searched


def test_standardised_rows_stay_in_the_ball_and_depend_on_their_record_and_the_releases_only():
    X = np.array(load_dataset("wine", source="default").matrix)
    bounds = public_bounds("wine", X.shape[1])
    plan = PreprocessingPlan(estimator="one_shot")
    noise = preprocessing_noise(plan, 0.8, X.shape[1], 1)
    Z = prepare_public(X, bounds)
    released = release_statistics(Z, noise, plan, np.random.default_rng(2))
    rows = standardise_rows(Z, released, plan)
    assert np.linalg.norm(rows, axis=1).max() <= 1 + 1e-12
    other = X.copy()
    other[5] = bounds.upper * 100
    moved = standardise_rows(prepare_public(other, bounds), released, plan)  # the same releases
    assert np.array_equal(np.delete(moved, 5, axis=0), np.delete(rows, 5, axis=0))  # bit for bit
    assert np.array_equal(private_standardise(Z, noise, plan, np.random.default_rng(2)), rows)


def test_a_constant_feature_is_not_blown_up():
    """A feature whose true variance is 0 gets the floor, so its column stays near 0 after scaling."""
    rng = np.random.default_rng(3)
    Z = np.column_stack([rng.uniform(-1, 1, 2000), np.full(2000, 0.3), rng.uniform(-1, 1, 2000)]) / np.sqrt(3)
    plan = PreprocessingPlan(estimator="one_shot")
    noise = preprocessing_noise(plan, 0.5, 3, 1)
    rows = private_standardise(Z, noise, plan, np.random.default_rng(4))
    assert np.abs(rows[:, 1]).max() < 0.1 * np.abs(rows[:, 0]).max()
    centred = standardise_rows(Z, Released(Z.mean(axis=0), None), plan)
    np.testing.assert_allclose(centred, Z - Z.mean(axis=0))  # rows of norm ≤ 1 are not clipped


def test_the_parties_follow_the_trust_model():
    assert preprocessing_party(get_method("analyze_gauss")) == "curator"
    assert preprocessing_party(get_method("cape")) == "curator"  # secure aggregation of the sums
    assert preprocessing_party(get_method("ddppm_certified")) == "agents"
    assert preprocessing_party(get_method("conventional")) == "agents"
    assert preprocessing_party(get_method("ldppca_gaussian")) == "individuals"  # its individuals trust no agent


def test_no_budget_is_refused():
    with pytest.raises(PrivacyError, match="positive share"):
        preprocessing_noise(PreprocessingPlan(), 0.0, 3, 1, 100)
