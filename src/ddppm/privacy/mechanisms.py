"""Gaussian-mechanism calibrations: the classic σ (Dwork & Roth) and the exact analytic one (Balle & Wang).

A Gaussian mechanism releases ``f(X) + N(0, σ² I)`` for a query of L2 sensitivity ``Δ``. Which σ gives
(ε, δ)-DP is a property of the mechanism alone, shared by every method that uses one.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

from ddppm.core.errors import PrivacyError


def check_eps_delta(eps: float, delta: float) -> None:
    """Raise :class:`PrivacyError` unless ``ε > 0`` and ``0 < δ < 1``."""
    if not (np.isfinite(eps) and eps > 0):
        raise PrivacyError(f"epsilon must be > 0, got {eps!r}; fix the config key `epsilons`")
    if not (0 < delta < 1):
        raise PrivacyError(f"delta must lie in (0, 1), got {delta!r}; fix the config key `delta_limits`")


def classic_gaussian_sigma(eps: float, delta: float, sensitivity: float = 1.0) -> float:
    """``σ = Δ sqrt(2 ln(1.25/δ)) / ε`` (Dwork & Roth, Thm A.1; the paper's LDP baseline).

    The classic proof covers ``ε < 1`` only; the paper applies it for every ε, and so does this baseline.
    """
    check_eps_delta(eps, delta)
    return float(sensitivity * np.sqrt(2 * np.log(1.25 / delta)) / eps)


def analytic_gaussian_delta(sigma: float, eps: float, sensitivity: float = 1.0) -> float:
    """Exact δ of the Gaussian mechanism (Balle & Wang 2018, Theorem 8):
    ``δ = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ)``."""
    a = sensitivity / (2 * sigma)
    b = eps * sigma / sensitivity
    first = np.exp(log_ndtr(a - b))
    second = np.exp(eps + log_ndtr(-a - b))
    return float(max(first - second, 0.0))


def analytic_gaussian_sigma(eps: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest σ with :func:`analytic_gaussian_delta` ``≤ δ`` (Balle & Wang 2018, Algorithm 1), by
    root finding on the exact, strictly decreasing ``δ(σ)``; valid for every ε > 0."""
    check_eps_delta(eps, delta)

    def gap(log_sigma: float) -> float:
        return np.log(max(analytic_gaussian_delta(np.exp(log_sigma), eps, sensitivity), 1e-300)) - np.log(delta)

    lo, hi = np.log(1e-6 * sensitivity), np.log(1e6 * sensitivity)
    return float(np.exp(brentq(gap, lo, hi, xtol=1e-12, rtol=1e-12)))
