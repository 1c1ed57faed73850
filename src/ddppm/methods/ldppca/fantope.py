"""Projection onto the Fantope and entry-wise soft thresholding: the two proximal steps of Algorithm 2.

The Fantope of order k in dimension p (Vu, Cho, Lei & Rohe, "Fantope projection and selection: a near-optimal
convex relaxation of sparse PCA", NeurIPS 2013; Wang & Xu, eq. (5)) is the convex hull of the rank-k
orthogonal projectors,

    F^k = {X symmetric : 0 ⪯ X ⪯ I, tr X = k}.

The Euclidean (Frobenius) projection of a symmetric ``A = Σ_i γ_i u_i u_iᵀ`` onto ``F^k`` keeps the
eigenvectors and clips the shifted eigenvalues (Vu et al. 2013, Lemma 4.1):

    P_F(A) = Σ_i min(max(γ_i − θ, 0), 1) u_i u_iᵀ,   θ such that  Σ_i min(max(γ_i − θ, 0), 1) = k.

The left side of the equation for θ is continuous, piecewise linear and non-increasing in θ, equal to p at
``θ = γ_min − 1`` and to 0 at ``θ = γ_max``, with breakpoints at the ``γ_i`` and ``γ_i − 1``: θ is found by
bisection over the sorted breakpoints, then solved exactly on the linear piece the bisection lands on.
"""

from __future__ import annotations

import numpy as np

__all__ = ["clipped_eigenvalues", "fantope_projection", "fantope_shift", "soft_threshold"]


def _check_order(p: int, k: int) -> None:
    if not (1 <= k <= p):
        raise ValueError(f"the Fantope of order k needs 1 <= k <= p; got k = {k}, p = {p}")


def fantope_shift(gamma: np.ndarray, k: int) -> float:
    """θ with ``Σ_i min(max(γ_i − θ, 0), 1) = k``: bisection on θ over the sorted breakpoints, then exact.

    ``f(θ) = Σ_i min(max(γ_i − θ, 0), 1)`` is linear between consecutive breakpoints ``{γ_i} ∪ {γ_i − 1}``, so
    bisection over the sorted breakpoints finds the piece holding ``f(θ) = k`` in ``O(log p)`` evaluations, and
    one linear solve on it gives θ exactly.

    Parameters
    ----------
    gamma : ndarray, shape (p,)
        Eigenvalues of the matrix to project (any order).
    k : int
        Order of the Fantope (the trace of the projection), ``1 <= k <= p``.

    Returns
    -------
    float
        The shift θ.
    """
    gamma = np.asarray(gamma, dtype=float)
    _check_order(gamma.size, k)

    def trace_at(theta: float) -> float:
        return float(np.clip(gamma - theta, 0.0, 1.0).sum())

    knots = np.unique(np.concatenate([gamma, gamma - 1.0]))  # f(knots[0]) = p >= k, f(knots[-1]) = 0 < k
    lo, hi = 0, knots.size - 1  # invariant: f(knots[lo]) >= k > f(knots[hi])
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if trace_at(knots[mid]) >= k:
            lo = mid
        else:
            hi = mid
    a, b = knots[lo], knots[hi]
    fa, fb = trace_at(a), trace_at(b)
    return float(a + (fa - k) * (b - a) / (fa - fb))  # f is linear on [a, b]


def clipped_eigenvalues(gamma: np.ndarray, k: int) -> np.ndarray:
    """Eigenvalues of the Fantope projection: ``min(max(γ_i − θ, 0), 1)`` with θ from :func:`fantope_shift`."""
    gamma = np.asarray(gamma, dtype=float)
    return np.clip(gamma - fantope_shift(gamma, k), 0.0, 1.0)


def fantope_projection(A: np.ndarray, k: int) -> np.ndarray:
    """Frobenius projection of a symmetric matrix onto the Fantope ``F^k`` (Wang & Xu, Algorithm 2 line 8).

    Parameters
    ----------
    A : ndarray, shape (p, p)
        Symmetric matrix (only its symmetric part is used).
    k : int
        Order of the Fantope, ``1 <= k <= p``.

    Returns
    -------
    ndarray, shape (p, p)
        ``argmin_{X ∈ F^k} ||X − A||_F``: same eigenvectors, eigenvalues ``min(max(γ_i − θ, 0), 1)``.
    """
    A = np.asarray(A, dtype=float)
    _check_order(A.shape[0], k)
    gamma, U = np.linalg.eigh(0.5 * (A + A.T))
    c = clipped_eigenvalues(gamma, k)
    keep = c > 0  # only the eigenvectors with a positive clipped eigenvalue contribute
    Uk = U[:, keep]
    return (Uk * c[keep]) @ Uk.T


def soft_threshold(A: np.ndarray, threshold: float) -> np.ndarray:
    """Entry-wise soft thresholding ``S_t(a) = sign(a) max(|a| − t, 0)`` (Algorithm 2 line 9), the proximal
    map of ``t ||·||_{1,1}``."""
    if threshold < 0:
        raise ValueError(f"soft threshold must be >= 0, got {threshold}")
    return np.sign(A) * np.maximum(np.abs(A) - threshold, 0.0)
