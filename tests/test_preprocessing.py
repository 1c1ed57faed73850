"""Private centring with a share of the budget (ddppm.common.preprocessing): the split composes to the target
(ε, δ) by an independent accountant, the mean's sensitivity is measured on raw records, the release has the
stated law, and the centred rows stay in the unit ball."""

from __future__ import annotations

import numpy as np
import pytest

from ddppm.common.certified import certified_delta, composed_mu
from ddppm.common.preprocessing import mean_sensitivity, private_centring, split_budget
from ddppm.core.errors import PrivacyError
from ddppm.data import load_dataset
from ddppm.data.public_prep import prepare_public, public_bounds


@pytest.mark.parametrize(("eps", "delta", "share"), [(1.0, 1e-5, 0.1), (5.0, 1e-5, 0.25), (0.5, 1e-6, 0.5)])
def test_the_split_composes_to_the_target_by_dp_accounting(eps, delta, share):
    dp_accounting = pytest.importorskip("dp_accounting", reason="the test extra installs dp-accounting")
    from dp_accounting import pld

    split = split_budget(eps, delta, share)
    assert split.mu_pre**2 + split.mu_method**2 == pytest.approx(split.mu_total**2, rel=1e-12)
    accountant = pld.PLDAccountant(value_discretization_interval=1e-5)  # the default 1e-4: off by up to 1e-6
    accountant.compose(dp_accounting.GaussianDpEvent(1 / split.mu_pre))  # the centring (sensitivity-normalised)
    accountant.compose(dp_accounting.GaussianDpEvent(1 / split.mu_method))  # the method's releases, as one
    assert abs(accountant.get_delta(eps) - delta) <= min(1e-9, 1e-6 * delta)  # within 1e-9, and 1e-6 relative
    ours = certified_delta(composed_mu([1.0, 1.0], [1 / split.mu_pre, 1 / split.mu_method]), eps)
    assert ours == pytest.approx(delta, rel=1e-9)


def test_the_means_sensitivity_is_measured_on_raw_records():
    """Replace one raw record of Wine by extreme ones (and by other records): the noise-free mean of the publicly
    prepared rows moves by at most 2/n, read from the two outputs, and the corners reach close to it."""
    X = np.array(load_dataset("wine", source="default").matrix)
    bounds = public_bounds("wine", X.shape[1])
    base = prepare_public(X, bounds).mean(axis=0)
    rng = np.random.default_rng(0)
    moves = []
    for _ in range(200):
        other = X.copy()
        i = int(rng.integers(len(X)))
        corner = np.where(rng.random(X.shape[1]) < 0.5, bounds.lower, bounds.upper) + rng.normal(0, 1e3, X.shape[1])
        other[i] = corner if rng.random() < 0.7 else X[int(rng.integers(len(X)))]
        moves.append(np.linalg.norm(prepare_public(other, bounds).mean(axis=0) - base))
    assert max(moves) <= mean_sensitivity(len(X)) * (1 + 1e-12)
    assert max(moves) >= 0.5 * mean_sensitivity(len(X))  # the bound is not loose by much for these pairs


def test_private_centring_has_the_stated_law_and_keeps_rows_in_the_ball():
    rng = np.random.default_rng(1)
    Z = rng.uniform(-1, 1, (400, 3)) / np.sqrt(3)
    mu = 0.5
    draws, release = [], None
    for seed in range(2000):
        centred, release = private_centring(Z, mu, np.random.default_rng(seed))
        assert np.linalg.norm(centred, axis=1).max() <= 1 + 1e-12
        # recover the released mean from a row whose norm was not clipped
        row = int(np.argmin(np.linalg.norm(Z - Z.mean(axis=0), axis=1)))
        draws.append(Z[row] - centred[row])
    draws = np.array(draws)
    assert release.sensitivity == pytest.approx(2 / 400) and release.sigma == pytest.approx(release.sensitivity / mu)
    np.testing.assert_allclose(draws.mean(axis=0), Z.mean(axis=0), atol=4 * release.sigma / np.sqrt(2000))
    np.testing.assert_allclose(draws.std(axis=0), release.sigma, rtol=0.06)


def test_a_share_outside_zero_to_one_is_refused():
    with pytest.raises(PrivacyError, match="share"):
        split_budget(1.0, 1e-5, 1.0)
    with pytest.raises(PrivacyError, match="positive share"):
        private_centring(np.zeros((3, 2)), 0.0, np.random.default_rng(0))
