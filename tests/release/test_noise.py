"""Secure noise (ddppm.release.noise): every method flagged ``secure_noise`` draws all its noise through the release
hook (a source that adds no noise gives the noiseless answer at a tiny ε, where numpy's noise gives chance), the hook
draws numpy's noise exactly as before with a generator, OpenDP's samples have the stated law and OpenDP's map is
Δ²/(2σ²)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ddppm.common_task.preprocessing import PreprocessingPlan, preprocessing_noise, private_statistics
from ddppm.common_task.task import CommonTask, subspace_error
from ddppm.core.network import mixing_matrix
from ddppm.methods import common_task_methods
from ddppm.privacy.mechanisms import gaussian_release, symmetric_gaussian, symmetric_release
from ddppm.release.noise import SecureNoise, opendp_rho

OPTIONS = {"adjacency": "replace_one", "iterations": 10}
SECURE = sorted(name for name, method in common_task_methods().items() if method.secure_noise)


class ZeroNoise(SecureNoise):
    """A release source that adds no noise: what a method returns with it is its noiseless answer, unless some
    noise bypassed the hook."""

    def gaussian_release(self, value, std):
        self.log.append((float(std), int(np.size(value))))
        return np.asarray(value, float).copy()


def _spiked_task(k: int) -> CommonTask:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2000, 6)) * np.array([5, 3, 1, 1, 1, 1.0])
    X /= np.linalg.norm(X, axis=1).max()
    return CommonTask(X, tuple(np.array_split(np.arange(2000), 3)), k, mixing_matrix("complete", 3), 10)


def test_the_secure_methods_cover_every_trust_level() -> None:
    methods = common_task_methods()
    assert {methods[name].trust_model for name in SECURE} >= {"central", "secure_aggregation", "local"}


@pytest.mark.parametrize("name", SECURE)
def test_every_noise_draw_of_a_secure_method_goes_through_the_hook(name: str) -> None:
    method = common_task_methods()[name]
    task = _spiked_task(1 if method.max_rank == 1 else 2)
    own = method.common_calibrate(task, 1e-3, 1e-6, OPTIONS)  # noise hundreds of times the signal
    silent = ZeroNoise(np.random.default_rng(1))
    quiet = float(subspace_error(method.common_estimate(task, own, [silent], OPTIONS)[0], task.V))
    loud = float(subspace_error(method.common_estimate(task, own, [np.random.default_rng(1)], OPTIONS)[0], task.V))
    assert silent.log, "no release went through the hook"
    assert quiet < 0.15 < 0.6 < loud  # the noiseless answer (Oja's batches leave DP-PCA ~0.1), against chance


def test_the_hook_draws_numpys_noise_as_before() -> None:
    value = np.arange(12.0).reshape(3, 4)
    expected = value + 0.7 * np.random.default_rng(5).standard_normal((3, 4))
    np.testing.assert_array_equal(gaussian_release(value, 0.7, np.random.default_rng(5)), expected)
    A = np.arange(16.0).reshape(4, 4)
    A = A + A.T
    np.testing.assert_array_equal(symmetric_release(A, 0.3, np.random.default_rng(2)),
                                  A + symmetric_gaussian(4, 0.3, np.random.default_rng(2)))  # fmt: skip


def test_a_secure_symmetric_release_is_symmetric_and_noisy_once_per_entry() -> None:
    source = SecureNoise(np.random.default_rng(0))
    released = symmetric_release(np.eye(5), 0.5, source)
    np.testing.assert_array_equal(released, released.T)
    assert source.log == [(0.5, 15)]  # the upper triangle, diagonal included


def test_opendp_samples_have_the_stated_law() -> None:
    source = SecureNoise(np.random.default_rng(0))
    draws = gaussian_release(np.full(20000, 3.0), 2.0, source) - 3.0
    assert stats.kstest(draws / 2.0, "norm").pvalue > 1e-3
    assert draws.std() == pytest.approx(2.0, rel=0.03)


@pytest.mark.parametrize(("sensitivity", "std"), [(1.0, 0.3), (np.sqrt(2), 4.0), (2.0, 17.5)])
def test_opendps_map_is_the_gaussian_zcdp(sensitivity: float, std: float) -> None:
    assert opendp_rho(sensitivity, std) == pytest.approx(sensitivity**2 / (2 * std**2), rel=1e-12)


def test_secure_noise_refuses_non_finite_values() -> None:
    with pytest.raises(ValueError, match="non-finite"):
        gaussian_release(np.array([1.0, np.nan]), 1.0, SecureNoise(np.random.default_rng(0)))


def test_the_preprocessing_draws_through_the_hook() -> None:
    Z = np.random.default_rng(3).uniform(-1, 1, (5000, 4)) / 2
    plan = PreprocessingPlan()
    noise = preprocessing_noise(plan, 0.01, 4, 1, 5000)
    source = ZeroNoise(np.random.default_rng(0))
    rows, released, box = private_statistics(Z, noise, plan, source)
    assert box is not None and len(source.log) == noise.range_rounds + 2
    np.testing.assert_allclose(released.mean, rows.mean(axis=0), atol=1e-12)  # no noise: the exact statistics
    np.testing.assert_allclose(released.variance, rows.var(axis=0), atol=1e-12)
