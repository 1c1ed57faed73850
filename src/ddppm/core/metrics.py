"""Error metrics shared by every method: the paper's eq. (37) and the subspace distance."""

from __future__ import annotations

import numpy as np


def sin_error(v: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """Eq. (37): ``sin(v, q) = ||(I − v vᵀ) q|| / ||q||`` for each column of ``Q`` (sign-invariant)."""
    Q = Q[:, None] if Q.ndim == 1 else Q
    v = v / np.linalg.norm(v)
    residual = Q - np.outer(v, v @ Q)
    return np.linalg.norm(residual, axis=0) / np.linalg.norm(Q, axis=0)


def subspace_distance(V: np.ndarray, Q: np.ndarray) -> float:
    """``||sin Θ(V, Q)||_F = ||(I − V Vᵀ) Q̂||_F`` with ``V``, ``Q̂`` orthonormal bases of the two spans."""
    Vo, _ = np.linalg.qr(V)
    Qo, _ = np.linalg.qr(Q)
    return float(np.linalg.norm(Qo - Vo @ (Vo.T @ Qo)))
