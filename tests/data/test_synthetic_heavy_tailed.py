"""The heavy-tailed set (ddppm.data.synthetic.heavy_tailed): seeded, of its stated shape and law (negative binomial
counts given two factors, checked by Monte Carlo against scipy's closed form), inside its declared bounds, most
values far below the cap, and wired into the common task's defaults."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats

from ddppm.core.errors import ConfigError
from ddppm.data import SHAPES, load_dataset
from ddppm.data.public_prep import public_bounds
from ddppm.data.synthetic import HEAVY_TAILED_CAP, heavy_tailed, heavy_tailed_parts

SIZE = 1.0  # the documented negative binomial size r
REPO = Path(__file__).resolve().parents[2]


def _documented_means(factors: np.ndarray, d: int) -> np.ndarray:
    """m_ij = μ_j exp(f_iᵀℓ_j − ‖ℓ_j‖²/2), μ_j = 0.5·16^{j/(d−1)}, ℓ_j = (0.5 + 0.5 j/(d−1), 0.5 cos(πj/(d−1))),
    written out from the docstring (not the generator's code)."""
    t = np.arange(d) / (d - 1)
    mu = 0.5 * 16.0**t
    loadings = np.vstack([0.5 + 0.5 * t, 0.5 * np.cos(np.pi * t)])
    return mu * np.exp(factors @ loadings - 0.5 * (loadings**2).sum(axis=0))


def test_it_is_deterministic_for_a_seed_and_has_its_stated_shape() -> None:
    np.testing.assert_array_equal(heavy_tailed(n=500, seed=3), heavy_tailed(n=500, seed=3))
    assert not np.array_equal(heavy_tailed(n=500, seed=3), heavy_tailed(n=500, seed=4))
    data = load_dataset("heavy_tailed")
    assert data.matrix.shape == (20000, 10) == SHAPES["heavy_tailed"]
    np.testing.assert_array_equal(data.matrix, heavy_tailed(seed=0))
    assert heavy_tailed(n=30, d=4, seed=1).shape == (30, 4)


def test_counts_given_the_factors_are_negative_binomial() -> None:
    """Monte Carlo: given the factors, each count's mean and variance are the negative binomial's (scipy's nbinom of
    size r and p = r/(r + m)); the standardised residuals have mean 0 and mean square 1 within 4 standard errors.
    Counts of mean at most 20 only, where the cap at 500 has probability below e⁻²⁴."""
    parts = heavy_tailed_parts(n=60000, d=10, seed=11)
    means = _documented_means(parts.factors, 10)
    np.testing.assert_allclose(parts.means, means, rtol=1e-12)
    keep = means <= 20
    m, y = means[keep], parts.counts[keep]
    law = stats.nbinom(SIZE, SIZE / (SIZE + m))
    np.testing.assert_allclose(law.mean(), m, rtol=1e-12)
    np.testing.assert_allclose(law.var(), m + m**2 / SIZE, rtol=1e-12)
    z = (y - law.mean()) / law.std()
    assert abs(z.mean()) < 4 / np.sqrt(z.size)
    square = z**2
    assert abs(square.mean() - 1) < 4 * square.std() / np.sqrt(z.size)
    for low, high in [(0.3, 0.6), (1.5, 2.5), (6, 10)]:  # one band of means at a time: E[Y | m] = m
        band = (m >= low) & (m < high)
        assert abs((y[band] - m[band]).mean()) < 4 * (y[band] - m[band]).std() / np.sqrt(band.sum()), (low, high)


def test_each_columns_marginal_mean_is_its_base_mean() -> None:
    """E m_ij = μ_j (the log-normal moment E exp(fᵀℓ) = exp(‖ℓ‖²/2) cancels), so each column's mean count is
    0.5·16^{j/9} within 4 standard errors (the cap moves it by far less)."""
    X = heavy_tailed(n=60000, d=10, seed=12)
    expected = 0.5 * 16.0 ** (np.arange(10) / 9)
    error = np.abs(X.mean(axis=0) - expected) / (X.std(axis=0) / np.sqrt(X.shape[0]))
    assert error.max() < 4, error


def test_every_value_lies_in_the_declared_bounds_and_most_far_below_the_cap() -> None:
    X = load_dataset("heavy_tailed").matrix
    bounds = public_bounds("heavy_tailed", X.shape[1])
    assert bounds.kind == "construction" and "500" in bounds.source
    np.testing.assert_array_equal(bounds.lower, 0.0)
    np.testing.assert_array_equal(bounds.upper, float(HEAVY_TAILED_CAP))
    assert X.min() >= 0 and X.max() <= HEAVY_TAILED_CAP and np.array_equal(X, np.round(X))
    assert np.percentile(X, 99) < HEAVY_TAILED_CAP / 10 and np.median(X) <= 2
    assert X.max() > HEAVY_TAILED_CAP / 5  # and a long tail
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    beyond = np.mean(np.linalg.norm(Z, axis=1) > 2 * np.sqrt(X.shape[1]))
    assert 0.01 < beyond < 0.1  # the rows a fixed radius 2√d clips at every ε


def test_a_bad_size_names_the_key() -> None:
    with pytest.raises(ConfigError, match="dataset_options.heavy_tailed"):
        heavy_tailed(n=10, d=1)
    with pytest.raises(ConfigError, match="dataset_options.heavy_tailed"):
        heavy_tailed(n=0, d=10)


def test_it_is_one_of_the_common_tasks_default_sets_standardised() -> None:
    from ddppm.experiments.base import get_experiment

    common = get_experiment("common").default_section()
    assert "heavy_tailed" in common["datasets"]
    options = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))["dataset_options"]["heavy_tailed"]
    assert options["normalization"] == "standardize" and "partition" not in options
