"""Algorithm 2 of Wang & Xu: the ℓ1-penalised Fantope problem (5) solved by ADMM, and its penalty λ.

Problem (5) (Vu, Cho, Lei & Rohe 2013, "Fantope projection and selection", on the noisy covariance):

    X̂ = argmax_{X ∈ F^k} ⟨S̃, X⟩ − λ ||X||_{1,1},     F^k = {0 ⪯ X ⪯ I, tr X = k}.

ADMM on the split ``X = Y`` (X in the Fantope, Y carries the penalty), scaled dual ``U``, Algorithm 2 lines 6–11:

    X⁺ = P_F(Y − U + S̃/ρ),    Y⁺ = S_{λ/ρ}(X⁺ + U),    U⁺ = U + X⁺ − Y⁺.

The paper leaves ρ, the number of iterations and the stopping rule open. Ours (Boyd, Parikh, Chu, Peleato &
Eckstein, "Distributed optimization and statistical learning via ADMM", Found. Trends ML 2011, §3.3–3.4):
stop when the primal residual ``r = ||X⁺ − Y⁺||_F`` and the dual residual ``s = ρ ||Y⁺ − Y||_F`` are below
``ε_pri = p ε_abs + ε_rel max(||X⁺||_F, ||Y⁺||_F)`` and ``ε_dual = p ε_abs + ε_rel ||ρ U⁺||_F``; fixed
``ρ = ||S̃||_2`` (so ``S̃/ρ`` has spectral norm 1, the scale of the Fantope). Optionally the residuals are
balanced (ρ doubled when ``r > 10 s``, halved when ``s > 10 r``, U rescaled to keep ``ρU`` fixed); on these
problems that was slower (benchmarks/bench_ldppca.py), so it is off by default.

λ (left open too; Theorem 4 needs ``λ ≥ ||S̃ − Σ||_{∞,∞}``, Lemma 15) is set at the noise level by
:func:`noise_level_lambda`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ddppm.methods.ldppca.fantope import fantope_projection, soft_threshold

__all__ = ["ADMMResult", "duality_gap", "fantope_admm", "noise_level_lambda", "penalised_objective"]


@dataclass(frozen=True)
class ADMMResult:
    """Outcome of :func:`fantope_admm`.

    Attributes
    ----------
    X : ndarray
        Last Fantope iterate (in ``F^k`` exactly).
    Y : ndarray
        Last sparse iterate, the estimate ``X̂`` the paper returns (Algorithm 2 line 11).
    U : ndarray
        Last scaled dual variable; ``ρU`` approximates ``λ W`` with ``W ∈ ∂||Y||_{1,1}``.
    rho : float
        Final penalty parameter.
    iterations : int
        Iterations run.
    converged : bool
        True when both residuals met their tolerances before ``max_iter``.
    primal_residual, dual_residual : float
        The last ``r`` and ``s``.
    """

    X: np.ndarray
    Y: np.ndarray
    U: np.ndarray
    rho: float
    iterations: int
    converged: bool
    primal_residual: float
    dual_residual: float


def noise_level_lambda(sigma: float, n: int, p: int, alpha: float = 0.05, scale: float = 1.0) -> float:
    """λ at the noise level: ``scale`` times the (1 − α) quantile of ``max_{i≤j} |E_ij|`` for i.i.d.
    ``E_ij ~ N(0, τ²)``, ``τ² = (σ² + 1/4)/n``.

    ``S̃ − Σ = Z̄ + (S − Σ)``. The averaged privacy noise ``Z̄`` has i.i.d. ``N(0, σ²/n)`` upper-triangle
    entries (σ the per-user σ of Algorithm 2 line 2). Every ``x_i x_j`` lies in an interval of length at most
    1 when ``||x||₂ ≤ 1``, so an entry of ``S − Σ`` has variance at most ``1/(4n)``; it is treated as
    Gaussian. With ``m = p(p+1)/2`` entries, the quantile is ``τ Φ⁻¹((1 + (1 − α)^{1/m})/2)``. Theorem 4
    (Lemma 15) wants ``λ ≥ ||S̃ − Σ||_{∞,∞}``; ``scale = 1`` makes that hold with probability about 1 − α.
    The rule uses only public quantities (σ, n, p), never the data.

    Parameters
    ----------
    sigma : float
        Per-user noise standard deviation σ (0 for the non-private problem).
    n : int
        Number of users.
    p : int
        Dimension.
    alpha : float
        Tail probability of the quantile, in (0, 1).
    scale : float
        Multiplier (> 0).

    Returns
    -------
    float
        λ.
    """
    from scipy.special import ndtri

    if not (0 < alpha < 1) or scale <= 0 or n < 1 or p < 1 or sigma < 0:
        raise ValueError(f"noise_level_lambda: bad arguments sigma={sigma}, n={n}, p={p}, alpha={alpha}, scale={scale}")
    m = p * (p + 1) / 2
    tau = np.sqrt((sigma**2 + 0.25) / n)
    level = -np.expm1(np.log1p(-alpha) / m)  # 1 − (1 − α)^{1/m}, accurate for large m
    return float(scale * tau * ndtri(1.0 - level / 2.0))


def penalised_objective(S: np.ndarray, X: np.ndarray, lam: float) -> float:
    """The objective of problem (5): ``⟨S, X⟩ − λ ||X||_{1,1}``."""
    return float(np.sum(S * X) - lam * np.abs(X).sum())


def duality_gap(S: np.ndarray, X: np.ndarray, W: np.ndarray, lam: float, k: int) -> float:
    """Gap between a dual bound and the objective at a feasible ``X ∈ F^k``, for any ``|W_ij| ≤ 1``.

    ``λ||X||_{1,1} = max_{|W|≤1} λ⟨W, X⟩``, so problem (5) is ``max_X min_W ⟨S − λW, X⟩`` and, for every such W,
    its value is at most ``max_{X ∈ F^k} ⟨S − λW, X⟩``, the sum of the k largest eigenvalues of ``S − λW``
    (Ky Fan). The gap is zero exactly at a primal–dual optimal pair: a certificate of optimality.
    """
    W = np.clip(0.5 * (W + W.T), -1.0, 1.0)
    top = np.linalg.eigvalsh(S - lam * W)[-k:].sum()
    return float(top - penalised_objective(S, X, lam))


def fantope_admm(
    S: np.ndarray,
    k: int,
    lam: float,
    rho: float | None = None,
    max_iter: int = 1000,
    tol_abs: float = 1e-7,
    tol_rel: float = 1e-4,
    adaptive: bool = False,
) -> ADMMResult:
    """Solve problem (5) by ADMM (Algorithm 2 lines 6–11) with the residual stopping rule of the module docs.

    Parameters
    ----------
    S : ndarray, shape (p, p)
        The (noisy) covariance ``S̃``.
    k : int
        Subspace dimension.
    lam : float
        ℓ1 penalty λ >= 0.
    rho : float, optional
        Initial ADMM penalty; default ``||S||_2`` (1 if S is zero).
    max_iter : int
        Iteration cap.
    tol_abs, tol_rel : float
        Absolute and relative tolerances of the residuals.
    adaptive : bool
        Balance the residuals by rescaling ρ (Boyd et al. 2011, §3.4.1).

    Returns
    -------
    ADMMResult
    """
    S = 0.5 * (np.asarray(S, dtype=float) + np.asarray(S, dtype=float).T)
    p = S.shape[0]
    if lam < 0:
        raise ValueError(f"lambda must be >= 0, got {lam}")
    if rho is None:
        rho = float(np.abs(np.linalg.eigvalsh(S)).max()) or 1.0
    Y = np.zeros_like(S)
    U = np.zeros_like(S)
    X = Y
    r = s = np.inf
    converged = False
    it = 0
    while it < max_iter:
        it += 1
        X = fantope_projection(Y - U + S / rho, k)
        Y_old = Y
        Y = soft_threshold(X + U, lam / rho)
        U = U + X - Y
        r = float(np.linalg.norm(X - Y))
        s = float(rho * np.linalg.norm(Y - Y_old))
        eps_pri = p * tol_abs + tol_rel * max(np.linalg.norm(X), np.linalg.norm(Y))
        eps_dual = p * tol_abs + tol_rel * rho * np.linalg.norm(U)
        if r <= eps_pri and s <= eps_dual:
            converged = True
            break
        if adaptive:
            if r > 10 * s:
                rho *= 2.0
                U = U / 2.0
            elif s > 10 * r:
                rho /= 2.0
                U = U * 2.0
    return ADMMResult(
        X=X, Y=Y, U=U, rho=float(rho), iterations=it, converged=converged, primal_residual=r, dual_residual=s
    )
