"""The subspace metric of Wang & Xu's experiments and its chance level.

The experiments (§6) measure ``||V̂ V̂ᵀ − V Vᵀ||_F`` for orthonormal ``V, V̂ ∈ R^{p×k}``. Expanding the square,

    ||V̂ V̂ᵀ − V Vᵀ||_F² = 2k − 2 ||Vᵀ V̂||_F² = 2 ||sin Θ(V̂, V)||_F²,

so the metric is √2 times the Frobenius sin-Θ distance of §3 (it lies in ``[0, sqrt(2 min(k, p − k))]``).
For a uniformly random k-dimensional subspace ``V̂`` (Haar measure), ``E||Vᵀ V̂||_F² = k²/p``, so the
root-mean-square metric of a guess is the *chance level* ``sqrt(2k − 2k²/p)``: an estimator at that level has
learnt nothing about the subspace.
"""

from __future__ import annotations

import numpy as np

__all__ = ["chance_level", "projector_distance", "top_eigenvectors"]


def projector_distance(V_hat: np.ndarray, V: np.ndarray) -> np.ndarray:
    """``||V̂ V̂ᵀ − V Vᵀ||_F = sqrt(2k − 2||Vᵀ V̂||_F²)`` for orthonormal bases (stacked over leading axes).

    Parameters
    ----------
    V_hat : ndarray, shape (..., p, k)
        Estimated orthonormal bases.
    V : ndarray, shape (p, k) or (..., p, k)
        True orthonormal bases.

    Returns
    -------
    ndarray, shape (...)
        The metric of each estimate.
    """
    k = V_hat.shape[-1]
    overlap = np.sum((np.swapaxes(V, -1, -2) @ V_hat) ** 2, axis=(-2, -1))
    return np.sqrt(np.maximum(2.0 * k - 2.0 * overlap, 0.0))


def chance_level(k: int | np.ndarray, p: int | np.ndarray) -> np.ndarray:
    """``sqrt(2k − 2k²/p)``: the root-mean-square :func:`projector_distance` of a uniformly random subspace."""
    k = np.asarray(k, dtype=float)
    p = np.asarray(p, dtype=float)
    return np.sqrt(2.0 * k - 2.0 * k**2 / p)


def top_eigenvectors(A: np.ndarray, k: int) -> np.ndarray:
    """Orthonormal eigenvectors of the k largest eigenvalues of symmetric ``A`` (stacked over leading axes):
    the principal k-subspace of Algorithm 1 line 5 and Algorithm 2 line 13 (LAPACK ``syevx`` on the top k
    only, largest first)."""
    from scipy.linalg import eigh

    A = np.asarray(A, dtype=float)
    p = A.shape[-1]
    flat = A.reshape(-1, p, p)
    out = np.empty((flat.shape[0], p, k))
    for i, M in enumerate(flat):
        _, vecs = eigh(0.5 * (M + M.T), subset_by_index=[p - k, p - 1], driver="evx")
        out[i] = vecs[:, ::-1]
    return out.reshape(*A.shape[:-2], p, k)
