"""Released means and scales respect the declared bounds (issue 73, item 2): at n = 32 and small ε the noisy mean
fell outside [lo, hi] and the scale above (hi − lo)/2 in most draws. Projected onto what the bounds allow
(post-processing), they never do; the features on the variances' floor or a bound are named in ``privacy_``; the
projection is the one the federation's coordinator applies, and the party accepts exactly those values."""

from __future__ import annotations

import numpy as np
import pytest

from ddppm import PrivatePCA
from ddppm.common_task.preprocessing import admissible_statistics, coordinate_bound, projection_notes

LOWER, UPPER = np.array([0.0, 0.0, 0.0, 0.0]), np.array([100.0, 10_000.0, 50.0, 2.0])
BOUNDS = {"source": "each unit's range", "features": np.column_stack([LOWER, UPPER]).tolist()}


def _small_table(n: int = 32, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)) * [10.0, 1000.0, 5.0, 0.1] + [50.0, 3000.0, 20.0, 1.0]
    return np.clip(X, LOWER, UPPER)


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_at_n_32_the_mean_lies_in_the_bounds_and_the_scale_below_the_half_width(eps: float) -> None:
    X = _small_table()
    on_floor = 0
    for seed in range(20):
        model = PrivatePCA(1, eps, 1e-6, BOUNDS, method="analyze_gauss", noise="simulation", random_state=seed).fit(X)
        assert np.all((LOWER <= model.mean_) & (model.mean_ <= UPPER)), model.mean_
        assert np.all(model.scale_ <= (UPPER - LOWER) / 2 * (1 + 1e-12)), model.scale_
        assert np.all(model.scale_ > 0)
        named = model.privacy_.statistics
        on_floor += len(named.get("variance_on_floor", []))
        assert all(0 <= j < 4 for features in named.values() for j in features)
    assert on_floor > 0  # at n = 32 some features sit on the floor, and privacy_ says which


def test_the_projection_is_post_processing_that_only_moves_values_outside() -> None:
    rng = np.random.default_rng(1)
    bound = np.array([0.5, 0.25, 0.1])
    mean_hat, variance_hat = rng.normal(0, 0.4, size=(500, 3)), rng.normal(0.02, 0.05, size=(500, 3))
    for m, v in zip(mean_hat, variance_hat, strict=True):
        released = admissible_statistics(m, v, bound, 0.01)
        inside = np.abs(m) <= bound
        np.testing.assert_array_equal(released.mean[inside], m[inside])  # an admissible value is kept
        assert np.all(np.abs(released.mean) <= bound)
        assert np.all((released.variance >= np.minimum(0.01, bound**2)) & (released.variance <= bound**2))
        kept = (v >= 0.01) & (v <= bound**2)
        np.testing.assert_array_equal(released.variance[kept], v[kept])
        notes = projection_notes(released, bound, 0.01)
        assert set(notes.get("mean_on_bound", [])) == set(np.flatnonzero(~inside))


def test_the_projection_brings_the_mean_no_further_from_the_truth() -> None:
    """Clipping to a set that holds the truth never increases the error (a projection onto a convex set)."""
    rng = np.random.default_rng(2)
    bound = np.full(4, 0.5)
    truth = rng.uniform(-0.5, 0.5, size=(2000, 4))
    noisy = truth + rng.normal(0, 0.6, size=truth.shape)
    projected = np.array([admissible_statistics(m, None, bound, 0.0).mean for m in noisy])
    assert np.all(np.abs(projected - truth) <= np.abs(noisy - truth) + 1e-15)


def test_centring_only_bounds_each_coordinate_at_the_common_scale() -> None:
    widths = (UPPER - LOWER) / 2
    bound = coordinate_bound(4, widths)
    np.testing.assert_allclose(bound, widths / np.linalg.norm(widths))  # H_j/‖H‖ with the declared box
    X = _small_table(342)
    model = PrivatePCA(2, 1.0, 1e-6, BOUNDS, method="analyze_gauss", standardize="center", noise="simulation",
                       random_state=0).fit(X)  # fmt: skip
    assert np.all((LOWER <= model.mean_) & (model.mean_ <= UPPER))
