"""Problem (5) solved exactly on a screened block: the rows that cannot enter the solution are set aside
with a certificate, and ADMM (:mod:`.admm`) runs on the rest.

Optimality of (5), ``max_{X ∈ F^k} ⟨S, X⟩ − λ||X||_{1,1}``: X is optimal iff some ``W ∈ ∂||X||_{1,1}``
(``W_ij = sign X_ij`` where ``X_ij ≠ 0``, ``|W_ij| ≤ 1`` elsewhere) makes X a maximiser of ``⟨S − λW, ·⟩`` over
``F^k``, i.e. (Ky Fan) ``⟨S − λW, X⟩`` equals the sum of the k largest eigenvalues of ``M = S − λW``.

Extension lemma (ours). Let J be an index set holding every i with ``max_{j≠i} |S_ij| > λ``, and let
``(X_J, W_J)`` be an optimal pair of the problem restricted to J (same k). Put ``X = X_J ⊕ 0`` and, outside
the J block, ``W_ij = S_ij/λ`` off the diagonal (allowed: ``|S_ij| ≤ λ`` there) and ``W_ii = 1``. Then
``M = M_J ⊕ diag(S_ii − λ)_{i∉J}``, and X is optimal for the whole problem as soon as

    max_{i∉J} (S_ii − λ) ≤ λ_k(M_J),                                                      (★)

since the k largest eigenvalues of M are then those of ``M_J``. When (★) fails the violating indices join J
and the restricted problem is solved again. With no off-diagonal entry above λ the solution is closed form:
J = the k largest diagonal entries, ``X̂ = diag(1_J)`` and (★) holds by construction. Because λ is set at
the noise level, the closed form is what (5) gives whenever the noise hides the signal, and the ADMM block
otherwise has about the size of the support: at p = 400 this makes Algorithm 2 fast.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ddppm.methods.ldppca.admm import fantope_admm

__all__ = ["PenalisedSolution", "solve_penalised_fantope"]


@dataclass(frozen=True)
class PenalisedSolution:
    """Solution of problem (5).

    Attributes
    ----------
    Y : ndarray, shape (p, p)
        The estimate ``X̂`` (ADMM's sparse iterate on the block, zero outside).
    block : ndarray of int
        Indices of the block the solver kept (its size is the ADMM dimension).
    iterations : int
        ADMM iterations, summed over the rounds (0 for the closed form).
    converged : bool
        Every ADMM round met its residual tolerances (True for the closed form).
    closed_form : bool
        No off-diagonal entry exceeded λ: the diagonal solution, no ADMM.
    rounds : int
        Times the block was solved (1 + times (★) added indices).
    """

    Y: np.ndarray
    block: np.ndarray
    iterations: int
    converged: bool
    closed_form: bool
    rounds: int


def _top_diagonal(S: np.ndarray, k: int) -> np.ndarray:
    return np.argsort(np.diag(S), kind="stable")[::-1][:k]


def solve_penalised_fantope(S: np.ndarray, k: int, lam: float, **admm_options: float) -> PenalisedSolution:
    """Exact solution of problem (5) for ``S`` (module docs): closed form, or ADMM on the screened block.

    Parameters
    ----------
    S : ndarray, shape (p, p)
        Symmetric (noisy) covariance ``S̃``.
    k : int
        Subspace dimension, ``1 <= k <= p``.
    lam : float
        Penalty λ >= 0.
    **admm_options
        Passed to :func:`ddppm.methods.ldppca.admm.fantope_admm` (``rho``, ``max_iter``, ``tol_abs``,
        ``tol_rel``, ``adaptive``).

    Returns
    -------
    PenalisedSolution
    """
    S = 0.5 * (np.asarray(S, dtype=float) + np.asarray(S, dtype=float).T)
    p = S.shape[0]
    if not (1 <= k <= p):
        raise ValueError(f"k must satisfy 1 <= k <= p; got k = {k}, p = {p}")
    off = np.abs(S - np.diag(np.diag(S)))
    strong = np.flatnonzero(off.max(axis=1) > lam)
    if strong.size == 0:
        block = np.sort(_top_diagonal(S, k))
        Y = np.zeros_like(S)
        Y[block, block] = 1.0
        return PenalisedSolution(Y=Y, block=block, iterations=0, converged=True, closed_form=True, rounds=1)
    block = np.union1d(strong, _top_diagonal(S, k))
    iterations, converged, rounds = 0, True, 0
    while True:
        rounds += 1
        sub = S[np.ix_(block, block)]
        result = fantope_admm(sub, k, lam, **admm_options)
        iterations += result.iterations
        converged &= result.converged
        outside = np.setdiff1d(np.arange(p), block)
        if outside.size == 0:
            break
        W = np.clip(result.rho * result.U / lam, -1.0, 1.0) if lam > 0 else np.zeros_like(sub)
        kth = np.linalg.eigvalsh(sub - lam * W)[-k]
        violators = outside[np.diag(S)[outside] - lam > kth]
        if violators.size == 0:
            break
        block = np.union1d(block, violators)
    Y = np.zeros_like(S)
    Y[np.ix_(block, block)] = result.Y
    return PenalisedSolution(
        Y=Y, block=block, iterations=iterations, converged=bool(converged), closed_form=False, rounds=rounds
    )
