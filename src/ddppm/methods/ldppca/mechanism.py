"""Algorithm 1 of Wang & Xu, lines 1–4: every user releases ``x xᵀ + Z``; the server averages.

User i holds ``x_i ∈ R^p`` with ``||x_i||₂ ≤ 1`` and releases ``x_i x_iᵀ + Z_i``, ``Z_i`` symmetric with
i.i.d. ``N(0, σ²)`` entries on and above the diagonal (copied below it). The server forms

    S̃ = (1/n) Σ_i (x_i x_iᵀ + Z_i) = S + Z̄,     S = (1/n) Σ_i x_i x_iᵀ,

and ``Z̄`` is again symmetric with i.i.d. ``N(0, σ²/n)`` upper-triangle entries. Sampling ``Z̄`` once (the
*aggregated* path, :func:`aggregated_release`) is therefore equal in law to summing the n users' releases
(the *per-user* path, :func:`per_user_release`); the tests check it.

σ calibrations (``sigma_mode``)
-------------------------------
A release is the Gaussian mechanism on the vector ``ut(x xᵀ)`` of the ``p(p+1)/2`` entries on and above the
diagonal (the lower triangle is a copy). Its L2 sensitivity over the unit ball is

    Δ = sup_{||x||,||y||≤1} ||ut(x xᵀ − y yᵀ)||₂ = √2,

attained at ``x = e₁, y = e₂`` (for ``M = x xᵀ − y yᵀ``: ``||ut(M)||² = (||M||_F² + Σ_i M_ii²)/2 ≤ ||M||_F² ≤ 2``).
The paper's ``σ² = 2 ln(1.25/δ)/ε²`` (Algorithm 1 line 2, Algorithm 2 line 2) is the classic Gaussian
mechanism (Dwork & Roth 2014, Thm A.1) for Δ = 1 — an erratum: with Δ = √2 it does not give (ε, δ).

* ``paper``: ``σ = sqrt(2 ln(1.25/δ))/ε`` (as printed; Δ = 1 assumed);
* ``corrected``: ``σ = √2 sqrt(2 ln(1.25/δ))/ε`` (the same formula with Δ = √2);
* ``analytic``: the smallest σ of the exact analytic Gaussian mechanism (Balle & Wang 2018) with Δ = √2, valid
  for every ε (the classic formula's proof needs ε < 1).

:func:`achieved_delta` gives the δ a σ really achieves at ε with Δ = √2 (the exact Gaussian-mechanism δ),
recorded beside every result.
"""

from __future__ import annotations

import numpy as np

from ddppm.privacy.mechanisms import analytic_gaussian_delta, analytic_gaussian_sigma, classic_gaussian_sigma

__all__ = [
    "SENSITIVITY",
    "SIGMA_MODES",
    "achieved_delta",
    "aggregated_release",
    "assumed_sensitivity",
    "per_user_release",
    "release_sigma",
    "symmetric_noise",
    "upper_triangle",
    "upper_triangle_distance",
]

SENSITIVITY = float(np.sqrt(2.0))
"""L2 sensitivity of ``x ↦ ut(x xᵀ)`` over the unit ball (the true one; the paper's σ assumes 1)."""

SIGMA_MODES = ("paper", "corrected", "analytic")
"""The selectable σ calibrations (module docs)."""


def assumed_sensitivity(mode: str) -> float:
    """The sensitivity the σ calibration ``mode`` is computed for (1 for ``paper``, √2 otherwise)."""
    if mode not in SIGMA_MODES:
        raise ValueError(f"unknown sigma mode {mode!r}; use one of {SIGMA_MODES} (config key ldppca.sigma_modes)")
    return 1.0 if mode == "paper" else SENSITIVITY


def release_sigma(eps: float, delta: float, mode: str) -> float:
    """Per-user noise standard deviation σ of Algorithm 1/2 line 2 under calibration ``mode`` (module docs)."""
    if mode == "analytic":
        return analytic_gaussian_sigma(eps, delta, SENSITIVITY)
    return classic_gaussian_sigma(eps, delta, assumed_sensitivity(mode))


def achieved_delta(sigma: float, eps: float) -> float:
    """δ that per-user noise σ really achieves at ε: the exact Gaussian-mechanism δ (Balle & Wang 2018,
    Theorem 8) at the true sensitivity √2."""
    return analytic_gaussian_delta(sigma, eps, SENSITIVITY)


def upper_triangle(M: np.ndarray) -> np.ndarray:
    """The ``p(p+1)/2`` entries on and above the diagonal of the last two axes (row-major order)."""
    i, j = np.triu_indices(M.shape[-1])
    return M[..., i, j]


def upper_triangle_distance(x: np.ndarray, y: np.ndarray) -> float:
    """``||ut(x xᵀ − y yᵀ)||₂``: how far two users' releases are apart before noise."""
    return float(np.linalg.norm(upper_triangle(np.outer(x, x) - np.outer(y, y))))


def symmetric_noise(rng: np.random.Generator, p: int, size: tuple[int, ...] = ()) -> np.ndarray:
    """Symmetric ``p × p`` matrices (stacked with leading shape ``size``) with i.i.d. ``N(0, 1)`` entries on
    and above the diagonal, copied below it (Algorithm 1 line 2 with σ = 1)."""
    G = rng.standard_normal((*size, p, p))
    upper = np.triu(G)
    return upper + np.swapaxes(np.triu(G, 1), -1, -2)


def per_user_release(X: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Algorithm 1 lines 1–4 as written: each row ``x_i`` releases ``x_i x_iᵀ + Z_i``; returns their average
    ``S̃``. Memory ``O(n p²)``: for tests and small n (the workflow uses :func:`aggregated_release`)."""
    n, p = X.shape
    releases = np.einsum("ni,nj->nij", X, X) + sigma * symmetric_noise(rng, p, (n,))
    return releases.mean(axis=0)


def aggregated_release(S: np.ndarray, n: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """``S̃ = S + Z̄`` with the averaged noise ``Z̄ ~ (σ/√n) × symmetric_noise`` drawn once: equal in law to
    :func:`per_user_release` when ``S`` is the users' average ``x xᵀ``."""
    return S + (sigma / np.sqrt(n)) * symmetric_noise(rng, S.shape[-1], S.shape[:-2])
