"""CAPE's accounting of the aggregator's whole view, against independent routes: the noise covariance of the
simulated protocol (Monte Carlo), a numerical inverse of that covariance, and the generic accountant's exact
hockey stick between the two joint Gaussians of a neighbouring pair."""

from __future__ import annotations

import numpy as np
import pytest

from ddppm.common_task.adjacency import release_sensitivity
from ddppm.common_task.certified import certified_delta
from ddppm.common_task.task import CommonTask
from ddppm.methods import get_method
from ddppm.methods.cape import cape_noise, view_leakage
from ddppm.privacy.tails import gaussian_tail_delta

OPTIONS = {"adjacency": "replace_one", "iterations": 4}


def _explicit_covariance(m: int, sigma_z: float) -> np.ndarray:
    """Cov of the m agents' noise on one entry, written from the construction: e = (I − 11ᵀ/m) u, plus g."""
    centring = np.eye(m) - np.ones((m, m)) / m
    return sigma_z**2 * centring @ centring.T + sigma_z**2 / m * np.eye(m)


@pytest.mark.parametrize("m", [1, 2, 3, 4, 16])
def test_leakage_is_the_mahalanobis_norm_of_one_agents_change(m: int) -> None:
    C = _explicit_covariance(m, 1.0)
    for j in range(m):
        assert view_leakage(m) ** 2 == pytest.approx(np.linalg.inv(C)[j, j], rel=1e-12)


def test_simulated_noise_has_the_accounted_covariance_and_cancels_in_the_sum() -> None:
    """Monte Carlo of the protocol's noise on one entry: covariance C, each release's variance σ_z², the sum's σ_z²."""
    m, sigma_z, draws = 4, 1.3, 40000
    rng = np.random.default_rng(0)
    entry = np.stack([cape_noise(2, m, sigma_z, rng)[:, 0, 1] for _ in range(draws)])  # (draws, m)
    C = _explicit_covariance(m, sigma_z)
    np.testing.assert_allclose(np.cov(entry, rowvar=False), C, atol=0.05 * sigma_z**2)
    np.testing.assert_allclose(entry.var(axis=0), sigma_z**2, rtol=0.03)
    assert entry.sum(axis=1).var() == pytest.approx(sigma_z**2, rel=0.03)  # the e_j cancel, m·σ_z²/m remains


@pytest.mark.parametrize("m", [2, 4])
def test_generic_accountant_on_the_whole_view_equals_the_certified_delta(m: int) -> None:
    """Two neighbouring data sets that differ at agent 0 by the witness of the upper triangle's sensitivity
    (e₁e₁ᵀ against e₂e₂ᵀ): the exact hockey stick between the joint Gaussians of all m releases (every entry)
    equals the calibrated δ, and a random neighbour's never exceeds it."""
    d, eps = 2, 1.0
    rng = np.random.default_rng(1)
    X = rng.standard_normal((6 * m, d))
    X /= np.linalg.norm(X, axis=1).max()
    task = CommonTask(X, tuple(np.array_split(np.arange(X.shape[0]), m)), 1)
    cal = get_method("cape").common_calibrate(task, eps, 1e-3, OPTIONS)
    assert cal.delta == pytest.approx(1e-3, rel=1e-6)
    sigma_z = cal.params["sigma"]
    iu = np.triu_indices(d)
    C_entry = _explicit_covariance(m, sigma_z)
    cov = np.kron(C_entry, np.eye(iu[0].size))  # agents × entries, entries independent

    def view(x_changed: np.ndarray) -> np.ndarray:
        means = np.zeros((m, iu[0].size))
        means[0] = np.outer(x_changed, x_changed)[iu]
        return means.ravel()

    witness = view(np.eye(d)[0]), view(np.eye(d)[1])
    assert np.linalg.norm(witness[0] - witness[1]) == pytest.approx(
        release_sensitivity("upper_triangle", "replace_one")
    )
    searched = gaussian_tail_delta(witness[0], cov, witness[1], cov, [eps], kind="hockey_stick")[0]
    assert searched == pytest.approx(cal.delta, rel=1e-6)
    for _ in range(10):
        x, y = rng.standard_normal((2, d))
        x, y = x / max(1.0, np.linalg.norm(x)), y / max(1.0, np.linalg.norm(y))
        other = gaussian_tail_delta(view(x), cov, view(y), cov, [eps], kind="hockey_stick")[0]
        assert other <= cal.delta * (1 + 1e-6)


def test_one_release_alone_would_understate_the_aggregators_delta() -> None:
    """CAPE's paper calibrates σ_z for one release; against the whole view that σ_z gives a larger δ."""
    eps, delta_limit, m = 1.0, 1e-5, 4
    cal = get_method("cape").common_calibrate(
        CommonTask(np.eye(8)[:, :3] * 0.5, tuple(np.array_split(np.arange(8), m)), 1), eps, delta_limit, OPTIONS
    )
    sens = cal.params["sensitivity"]
    per_release_sigma = cal.params["sigma"] / view_leakage(m)  # the σ_z a one-release calibration would pick
    assert certified_delta(sens / per_release_sigma, eps) == pytest.approx(delta_limit, rel=1e-6)
    assert certified_delta(view_leakage(m) * sens / per_release_sigma, eps) > 10 * delta_limit


def test_aggregate_noise_is_2_over_m_plus_1_of_the_conventional_methods() -> None:
    """At equal (ε, δ), the variance of the noise in the aggregator's sum: CAPE σ_z² against conventional mσ²."""
    m = 4
    task = CommonTask(np.eye(12)[:, :3] * 0.5, tuple(np.array_split(np.arange(12), m)), 1)
    cape = get_method("cape").common_calibrate(task, 2.0, 1e-5, OPTIONS).params["sigma"]
    conv = get_method("conventional").common_calibrate(task, 2.0, 1e-5, OPTIONS).params["sigma"]
    assert cape**2 / (m * conv**2) == pytest.approx(2 / (m + 1), rel=1e-9)


def test_estimate_is_the_top_direction_of_the_sum_of_the_simulated_releases() -> None:
    rng = np.random.default_rng(2)
    X = rng.standard_normal((30, 4)) * np.array([2.0, 1.0, 0.5, 0.2])
    X /= np.linalg.norm(X, axis=1).max()
    task = CommonTask(X, tuple(np.array_split(np.arange(30), 3)), 1)
    method = get_method("cape")
    cal = method.common_calibrate(task, 5.0, 1e-5, OPTIONS)
    V = method.common_estimate(task, cal, [np.random.default_rng(7)], OPTIONS)[0]
    noise = cape_noise(task.d, task.m, cal.params["sigma"], np.random.default_rng(7))
    releases = [task.local_gram(j) + noise[j] for j in range(task.m)]
    _, vectors = np.linalg.eigh(sum(releases))
    assert abs(float(vectors[:, -1] @ V[:, 0])) == pytest.approx(1.0, abs=1e-12)
