"""Utility rates of Wang & Xu's Theorems 2 and 4 (as printed and as their proofs give), and their fit.

Both theorems bound ``||sin Θ(V̂, V)||_F²``; the experiments' metric is ``||V̂V̂ᵀ − VVᵀ||_F = √2 ||sin Θ||_F``, so
the shapes below are square roots of the rates (constants are fitted). σ is the per-user noise, which for the
paper's calibration is ``σ² = 2 ln(1.25/δ)/ε²`` (so ``σ²`` stands for the theorems' ``log(1/δ)/ε²`` and also
carries the factor 2 of the corrected sensitivity). ``g = λ_k − λ_{k+1}``.

Theorem 2 (Algorithm 1), eq. (2), as printed:
    ``||sin Θ||_F² ≲ λ_1² k p log(1/δ) / (g² n ε²)``          → shape ``(λ_1/g) sqrt(k p σ² / n)``.
Its proof (Davis–Kahan, Lemma 7, with ``||Z̄||₂ ≲ √p σ/√n`` and Lemma 6, ``||S − Σ||₂ ≲ λ_1 sqrt(r/n)``,
``r = tr Σ/λ_1``) gives instead
    ``||sin Θ||_F² ≲ k (√p σ + λ_1 √r)² / (g² n)``              → shape ``sqrt(k/n) (√p σ + λ_1 √r)/g``.
The privacy term carries no ``λ_1²``: the printed bound is smaller than the proof's by ``λ_1²`` (an erratum;
with ``||x|| ≤ 1`` the eigenvalues are at most ``1/p``-sized, so the difference is large). In model (7)
``λ_1/g = (λ+1)/λ`` is constant in p while ``1/g = 5p(λ+1)/λ`` grows: at fixed n and ε the printed rate grows as
``√p``, the proof's as ``p^{3/2}``.

Theorem 4 (Algorithm 2), as printed:
    ``||sin Θ||_F² ≲ λ_1² s² log p / (g² n ε²)``               → shape ``(λ_1/g) s sqrt(σ² log p / n)``.
Its proof (Lemmas 13 and 15: ``||X̂ − VVᵀ||_F ≤ 4sλ/g`` with ``λ ≥ ||S̃ − Σ||_{∞,∞} ≍ (σ + λ_1) sqrt(log p/n)``)
gives
    ``||sin Θ||_F² ≲ s² (σ + λ_1)² log p / (g² n)``             → shape ``s (σ + λ_1) sqrt(log p / n)/g``.

The fit (:func:`fit_constant`) is least squares in log space over the points where the rate can apply (mean
error well below the chance level): ``log C = mean(log error − log shape)``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["fit_constant", "theorem2_rates", "theorem4_rates"]


def theorem2_rates(
    n: np.ndarray, p: np.ndarray, k: np.ndarray, sigma: np.ndarray, top: np.ndarray, gap: np.ndarray, trace: np.ndarray
) -> dict[str, np.ndarray]:
    """Shapes of Theorem 2 (module docs): ``stated`` as printed, ``proof`` as its proof gives (``trace = tr Σ``)."""
    n, p, k, sigma, top, gap, trace = (np.asarray(a, dtype=float) for a in (n, p, k, sigma, top, gap, trace))
    stated = (top / gap) * np.sqrt(k * p * sigma**2 / n)
    proof = np.sqrt(k / n) * (np.sqrt(p) * sigma + np.sqrt(top * trace)) / gap
    return {"stated": stated, "proof": proof}


def theorem4_rates(
    n: np.ndarray, p: np.ndarray, s: np.ndarray, sigma: np.ndarray, top: np.ndarray, gap: np.ndarray
) -> dict[str, np.ndarray]:
    """Shapes of Theorem 4 (module docs): ``stated`` as printed, ``proof`` as its proof gives."""
    n, p, s, sigma, top, gap = (np.asarray(a, dtype=float) for a in (n, p, s, sigma, top, gap))
    stated = (top / gap) * s * np.sqrt(sigma**2 * np.log(p) / n)
    proof = s * (sigma + top) * np.sqrt(np.log(p) / n) / gap
    return {"stated": stated, "proof": proof}


def fit_constant(error: np.ndarray, shape: np.ndarray) -> tuple[float, float, int]:
    """Least-squares constant in log space: ``C = exp(mean(log error − log shape))``.

    Returns
    -------
    constant : float
        C (NaN without usable points).
    log_rms : float
        Root-mean-square residual of ``log error − log(C shape)`` (how well the shape fits).
    points : int
        Points used (positive and finite in both arrays).
    """
    error = np.asarray(error, dtype=float)
    shape = np.asarray(shape, dtype=float)
    ok = np.isfinite(error) & np.isfinite(shape) & (error > 0) & (shape > 0)
    if not ok.any():
        return float("nan"), float("nan"), 0
    residual = np.log(error[ok]) - np.log(shape[ok])
    log_c = residual.mean()
    return float(np.exp(log_c)), float(np.sqrt(np.mean((residual - log_c) ** 2))), int(ok.sum())
