"""Tests of the Gaussian-mechanism calibrations and of the LDP baseline method (errors, input checks)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

from ddppm.core.errors import PrivacyError
from ddppm.core.seeds import run_generators
from ddppm.methods import get_method
from ddppm.methods.ldp import ldp_errors
from ddppm.privacy.mechanisms import (
    analytic_gaussian_delta,
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
)


def hockey_stick_quad(sigma: float, eps: float, sens: float = 1.0) -> float:
    """E_P[(1 − e^{ε−ℒ})₊] for P = N(0, σ²), Q = N(Δ, σ²): ∫ (p − e^ε q)₊ by quadrature."""
    # ℒ(y) = ln p/q = (Δ² − 2Δy)/(2σ²) > ε  ⟺  y < y* = Δ/2 − εσ²/Δ
    y_star = sens / 2 - eps * sigma**2 / sens

    def f(y):
        return norm.pdf(y, 0, sigma) - np.exp(eps) * norm.pdf(y, sens, sigma)

    val, _ = integrate.quad(f, -np.inf, y_star, epsabs=1e-15, epsrel=1e-11, limit=200)
    return val


def test_classic_sigma_formula():
    for eps, delta in ((0.5, 1e-5), (1.0, 0.01), (2.0, 0.3), (10.0, 1e-7)):
        assert classic_gaussian_sigma(eps, delta) == pytest.approx(np.sqrt(2 * np.log(1.25 / delta)) / eps, rel=1e-14)
        assert classic_gaussian_sigma(eps, delta, sensitivity=2.5) == pytest.approx(
            2.5 * np.sqrt(2 * np.log(1.25 / delta)) / eps, rel=1e-14
        )


def test_ldp_methods_record_sigma_and_the_delta_it_really_achieves(toy_problem):
    eps, limits = np.array([0.5, 1.0, 40.0]), np.array([1e-3, 1e-3, 1e-4])
    classic = get_method("ldp").choose_params(toy_problem, eps, limits, {})
    analytic = get_method("ldp_analytic").choose_params(toy_problem, eps, limits, {})
    np.testing.assert_allclose(
        classic["sigma"], [classic_gaussian_sigma(e, d) for e, d in zip(eps, limits, strict=True)]
    )
    np.testing.assert_allclose(
        analytic["sigma"], [analytic_gaussian_sigma(e, d) for e, d in zip(eps, limits, strict=True)]
    )
    # the exact δ of each σ, recomputed by quadrature of the hockey-stick divergence (an independent route)
    for table in (classic, analytic):
        for _, row in table.iterrows():
            assert row["delta"] == pytest.approx(hockey_stick_quad(row["sigma"], row["eps"]), rel=1e-6, abs=1e-14)
    np.testing.assert_allclose(analytic["delta"], limits, rtol=1e-8)
    assert analytic["feasible"].all()
    # the classic formula is valid for ε < 1 only: at ε = 40 it overshoots the limit by orders of magnitude
    assert classic["feasible"].tolist() == [True, True, False] and classic["delta"].iloc[2] > 0.5


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 5.0, 20.0, 100.0])
@pytest.mark.parametrize("delta", [0.38, 0.01, 2e-4, 1e-7])
def test_analytic_sigma_hits_target_delta(eps, delta):
    sigma = analytic_gaussian_sigma(eps, delta)
    assert analytic_gaussian_delta(sigma, eps) == pytest.approx(delta, rel=1e-9)
    # scale equivariance in the sensitivity
    assert analytic_gaussian_sigma(eps, delta, sensitivity=3.0) == pytest.approx(3.0 * sigma, rel=1e-9)


def test_analytic_vs_classic_sigma():
    """For ε ≤ 1 the classic σ is a valid (ε, δ) calibration, so the exact (smallest valid) σ is ≤ it. For
    large ε the classic formula is not valid: its σ is smaller than the analytic one, and its true δ exceeds
    the target (the paper's LDP baseline therefore under-noises at large ε)."""
    for eps in (0.05, 0.2, 0.5, 1.0):
        for delta in (0.38, 0.01, 1e-5, 1e-10):
            a, c = analytic_gaussian_sigma(eps, delta), classic_gaussian_sigma(eps, delta)
            assert a <= c
            assert analytic_gaussian_delta(c, eps) <= delta
    for eps, delta in ((10.0, 1e-5), (20.0, 2e-4), (100.0, 1e-7)):
        a, c = analytic_gaussian_sigma(eps, delta), classic_gaussian_sigma(eps, delta)
        assert c < a
        assert analytic_gaussian_delta(c, eps) > delta


@pytest.mark.parametrize("sigma", [0.3, 0.7, 1.5])
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 3.0])
def test_analytic_delta_is_hockey_stick(sigma, eps):
    exact = analytic_gaussian_delta(sigma, eps)
    assert exact == pytest.approx(hockey_stick_quad(sigma, eps), rel=1e-8, abs=1e-15)


def test_analytic_delta_monte_carlo():
    rng = np.random.default_rng(0)
    sigma = 0.8
    y = rng.normal(0.0, sigma, 2_000_000)
    loss = (1 - 2 * y) / (2 * sigma**2)  # ln N(y; 0, σ²)/N(y; 1, σ²)
    for eps in (0.25, 1.0, 2.0):
        h = np.clip(1 - np.exp(eps - loss), 0, None)
        mc, se = h.mean(), h.std() / np.sqrt(h.size)
        assert abs(analytic_gaussian_delta(sigma, eps) - mc) < 4 * se


def test_ldp_errors_match_svd_loop_and_decrease_with_sigma():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 6)) @ np.diag([3.0, 1.5, 1.0, 0.7, 0.4, 0.2])
    X /= np.linalg.norm(X, axis=1).max()
    v = np.linalg.svd(X, full_matrices=False)[0][:, 0]
    R = 40
    means = []
    for sigma in (2.0, 0.5, 0.1, 0.02, 0.002):
        err = ldp_errors(X, sigma, run_generators(3, ("ldp",), range(R)))
        loop = []
        for gen in run_generators(3, ("ldp",), range(R)):
            u = np.linalg.svd(X + sigma * gen.standard_normal(X.shape), full_matrices=False)[0][:, 0]
            loop.append(np.linalg.norm(u - v * (v @ u)) / np.linalg.norm(u))
        np.testing.assert_allclose(err, loop, rtol=1e-8, atol=1e-12)
        means.append(err.mean())
    assert np.all(np.diff(means) < 0)
    assert means[-1] < 0.01 and means[0] > 0.5


@pytest.mark.parametrize("eps", [0.0, -1.0, np.nan, np.inf])
def test_bad_epsilon_raises(eps):
    for fn in (classic_gaussian_sigma, analytic_gaussian_sigma):
        with pytest.raises(PrivacyError, match="epsilons"):
            fn(eps, 1e-5)


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1, 1.5, np.nan])
def test_bad_delta_raises(delta):
    for fn in (classic_gaussian_sigma, analytic_gaussian_sigma):
        with pytest.raises(PrivacyError, match="delta_limits"):
            fn(1.0, delta)


def test_analytic_sigma_at_extreme_delta_is_its_own_not_the_bracket_end():
    """δ = 1e-300 used to return the search's end (σ = 1e6·Δ), since δ(σ) was clipped at 1e-300 before the log;
    ε = 1e-6 with δ = 1e-8 needs σ ≈ 4e7·Δ, outside the old bracket (a raw scipy ValueError)."""
    from scipy.special import erfcx

    from ddppm.privacy.mechanisms import analytic_gaussian_log_delta

    sigma = analytic_gaussian_sigma(1.0, 1e-300)
    assert sigma < 1e3
    # log δ by a route that shares nothing with the tested one (log_ndtr): with x₁ = b − a, x₂ = b + a
    # (a = Δ/2σ, b = εσ/Δ), e^ε φ(x₂) = φ(x₁), so δ = φ(x₁)·(M(x₁) − M(x₂)), M the Mills ratio √(π/2)·erfcx(x/√2).
    a, b = 0.5 / sigma, 1.0 * sigma
    mills = [np.sqrt(np.pi / 2) * erfcx(x / np.sqrt(2)) for x in (b - a, b + a)]
    log_delta = norm.logpdf(b - a) + np.log(mills[0] - mills[1])
    assert log_delta == pytest.approx(np.log(1e-300), abs=1e-6)
    assert analytic_gaussian_log_delta(sigma * 0.999, 1.0) > np.log(1e-300)

    tiny = analytic_gaussian_sigma(1e-6, 1e-8)
    assert 1e6 < tiny < 1e9
    # δ of N(0, σ²) vs N(1, σ²) at ε = 1e-6 as the hockey-stick integral in closed form over the region p > e^ε q
    # (x < 1/2 − εσ²), in units of σ, with scipy.stats.norm rather than log_ndtr.
    cut = 0.5 / tiny - 1e-6 * tiny
    hockey = norm.cdf(cut) - np.exp(1e-6) * norm.cdf(cut - 1 / tiny)
    assert hockey == pytest.approx(1e-8, rel=1e-4)


def test_analytic_sigma_unreachable_delta_is_a_privacy_error():
    with pytest.raises(PrivacyError, match="delta_limits"):
        analytic_gaussian_sigma(1e-300, 1e-305)  # needs σ ≈ 4e304·Δ
