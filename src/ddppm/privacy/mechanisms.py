"""Gaussian-mechanism calibrations: the classic σ (Dwork & Roth) and the exact analytic one (Balle & Wang).

A Gaussian mechanism releases ``f(X) + N(0, σ² I)`` for a query of L2 sensitivity ``Δ``. Which σ gives
(ε, δ)-DP is a property of the mechanism alone, shared by every method that uses one.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

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
    ``δ = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ)``, computed as ``exp`` of
    :func:`analytic_gaussian_log_delta` (``e^ε`` alone overflows from ε ≈ 709)."""
    log_delta = analytic_gaussian_log_delta(sigma, eps, sensitivity)
    return float(np.exp(log_delta)) if np.isfinite(log_delta) else 0.0


def analytic_gaussian_log_delta(sigma: float, eps: float, sensitivity: float = 1.0) -> float:
    """``log δ`` of :func:`analytic_gaussian_delta`, accurate where δ underflows (δ = 1e-300 and below):
    ``log Φ(a − b) + log(−expm1(ε + log Φ(−a − b) − log Φ(a − b)))`` with ``a = Δ/(2σ)``, ``b = εσ/Δ``."""
    from scipy.special import log_ndtr

    a = sensitivity / (2 * sigma)
    b = eps * sigma / sensitivity
    first = log_ndtr(a - b)
    log_ratio = eps + log_ndtr(-a - b) - first  # log of the second term over the first, never exponentiated above 0
    return float(first + np.log(-np.expm1(log_ratio))) if log_ratio < 0 else -np.inf


SAFE_SIDE = 1e-10
"""How far below its target (relative) a calibrated δ lies: a σ from :func:`analytic_gaussian_sigma` never certifies
more than the δ asked for, after the roundings of the compositions built on it."""


def analytic_gaussian_sigma(eps: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest σ with :func:`analytic_gaussian_delta` ``≤ δ`` (Balle & Wang 2018, Algorithm 1), by
    root finding on the exact, strictly decreasing ``log δ(σ)``; valid for every ε > 0 and 0 < δ < 1.

    The bracket starts at ``[1e-6 Δ, 1e6 Δ]`` and widens tenfold until it holds the root (tiny ε with tiny δ
    needs σ ≫ 1e6 Δ); log δ is computed without underflow, so δ = 1e-300 gets its own σ, not the bracket's end.
    """
    from scipy.optimize import brentq

    check_eps_delta(eps, delta)
    target = np.log(delta)

    def gap(log_sigma: float) -> float:
        # log δ = −inf only where the two terms round to equal: far right of the root; keep brentq finite
        return max(analytic_gaussian_log_delta(np.exp(log_sigma), eps, sensitivity), -1e9) - target

    unreachable = PrivacyError(
        f"no Gaussian noise scale computable in double precision reaches delta={delta!r} at epsilon={eps!r}; "
        "fix the config keys `epsilons` / `delta_limits`"
    )
    lo, hi = np.log(1e-6 * sensitivity), np.log(1e6 * sensitivity)
    while gap(lo) <= 0:  # δ(σ) → 1 as σ → 0
        lo -= np.log(10.0)
        if lo < np.log(1e-300):
            raise unreachable
    while gap(hi) > 0:
        hi += np.log(10.0)
        if hi > np.log(1e300):
            raise unreachable
    log_sigma = brentq(gap, lo, hi, xtol=1e-12, rtol=1e-12)
    if abs(gap(log_sigma)) > 1e-6:  # the two terms of δ no longer differ in double precision
        raise unreachable
    # brentq's root may lie a hair on the wrong side (δ above the target by ~1e-11 relative): step σ up until its δ
    # is below the target with room (SAFE_SIDE) for the roundings of whatever composes it (1/σ, μ², √)
    sigma, safe = float(np.exp(log_sigma)), target + np.log1p(-SAFE_SIDE)
    for step in range(64):
        if analytic_gaussian_log_delta(sigma, eps, sensitivity) <= safe:
            return sigma
        sigma *= 1 + 1e-13 * 2.0**step
    raise unreachable


def gaussian_release(value: Any, std: float, rng: Any) -> np.ndarray:
    """``value + N(0, std² I)``: the one place where a Gaussian mechanism's noise meets its value.

    With a numpy generator (the bench, ``noise="simulation"``) this is ``value + std · rng.standard_normal``, drawn
    as the methods always drew it. A release noise source (:class:`ddppm.release.noise.SecureNoise`: anything with a
    ``gaussian_release(value, std)`` method) adds noise from a sampler built for release instead (floating-point
    Gaussians leak through their low bits, Mironov 2012; docs/privacy.md, "Noise for a release")."""
    release = getattr(rng, "gaussian_release", None)
    if release is not None:
        return np.asarray(release(value, float(std)), float)
    value = np.asarray(value, float)
    return value + std * rng.standard_normal(value.shape)


def is_release_noise(rngs: Any) -> bool:
    """Whether ``rngs`` (one noise source, or a sequence of them) draw a release's noise rather than a simulation's:
    a method that draws a release in law (a Gram matrix of noisy rows, say) must then draw each release itself."""
    sources = list(rngs) if isinstance(rngs, Sequence) else [rngs]
    return any(getattr(rng, "gaussian_release", None) is not None for rng in sources)


def symmetric_release(A: np.ndarray, std: float, rng: Any) -> np.ndarray:
    """``A + E`` for symmetric ``A`` (n × n), ``E`` as :func:`symmetric_gaussian`: the upper triangle (diagonal
    included) released with noise, mirrored below (post-processing); :func:`gaussian_release` decides the sampler."""
    if getattr(rng, "gaussian_release", None) is None:
        return A + symmetric_gaussian(A.shape[0], std, rng)
    upper = np.triu_indices(A.shape[0])
    released = np.empty_like(A, dtype=float)
    released[upper] = gaussian_release(A[upper], std, rng)
    released[upper[1], upper[0]] = released[upper]
    return released


def symmetric_gaussian(n: int, std: float, rng: np.random.Generator) -> np.ndarray:
    """Symmetric ``E`` with independent ``N(0, std²)`` entries on and above the diagonal, ``E_ji = E_ij``: the noise
    of a Gaussian mechanism that releases the upper triangle (diagonal included) of a symmetric n × n matrix."""
    on_and_above = _upper_triangle(n)
    draw = rng.standard_normal((n, n)) * std
    # np.triu(draw) + np.triu(draw, 1).T in two operations, the mask built once per n: a common-task run draws this
    # ~10⁵ times (same values, bit for bit, a test compares: + 0.0 turns −0.0 into 0.0 as that sum does)
    return np.where(on_and_above, draw, draw.T) + 0.0


@lru_cache(maxsize=32)
def _upper_triangle(n: int) -> np.ndarray:
    """A read-only mask of the upper triangle of an n × n matrix, diagonal included."""
    on_and_above = np.triu(np.ones((n, n), bool))
    on_and_above.flags.writeable = False
    return on_and_above
