"""Theorem 1 of the workshop paper (eq. 12): the δ of agent i's releases, minimised over its free parameter s.

With ``B_i, C_i`` the mean and covariance of what observer ``i`` sees given its own randomness (eq. 10–11) and
``B'_i, C'_i`` the same under an adjacent data set, let ``U_i Γ_i U_iᵀ = C_i^{1/2} C_i'^{−1} C_i^{1/2}`` and
``μ_i = U_iᵀ C_i^{−1/2}(B_i − B'_i)``. For every ``s > max(1, λ₁(Γ_i))``

    δ_i ≤ (s−1)^{N/2} / ( det(Γ_i)^{1/(2(s−1))} sqrt(det(sI − Γ_i)) )
          × exp{ −ε_i/(s−1) + s/(2(s−1)) · μ_iᵀ (sI − Γ_i)^{−1} Γ_i μ_i }.                      (12)

It is the Chernoff bound ``Pr_P(ℒ > ε) ≤ E_P[e^{λℒ}] e^{−λε}`` of the privacy loss ``ℒ = ln p/p'`` at
``λ = 1/(s−1)`` (whiten by ``C_i``: ``y ~ N(0, I)`` under P and ``N(−μ, Γ^{−1})`` under P'; each coordinate's
``E exp(λ/2[(γ−1)y² + 2γμy + γμ²])`` gives one factor). So eq. (12) bounds **one tail of one order** of the pair:
``Pr_P(ℒ > ε)``, not ``Pr_P(ℒ < −ε)`` nor the loss of ``X'`` against ``X``; the project's two-sided ``chernoff`` and
``exact`` accountings cover all four (:func:`ddppm.privacy.tails.pair_tail_deltas`).

Errata (both corrected here, the printed forms are available for tests):

* ``Γ_i = C_i^{1/2} C_i'^{−1} C_i`` as printed is not symmetric (and not dimensionless); the appendix (eq. 69)
  has ``C_i^{1/2} C_i'^{−1} C_i^{1/2}``, which the derivation needs.
* The exponent of ``(s−1)`` is printed as ``d/2`` with ``d`` the data dimension; the derivation gives ``N/2`` with
  ``N`` the dimension of ``Z_i`` (``dT`` in the paper view, ``mdT`` in the network view; on a rank-deficient
  ``C_i`` the dimension of its support). ``dim`` in :func:`theorem1_bound` reproduces the printed ``d``.

Rank: ``C_i`` is singular in general (given its own randomness, agent i's first release is known to it).
Eq. (12) needs ``C_i^{−1/2}``; it is applied on the support of ``C_i`` (the shared diagonalisation of
:func:`ddppm.privacy.gaussian.diagonalize`), and δ = 1 where the two laws are mutually singular.
"""

from __future__ import annotations

import numpy as np

from ddppm.privacy.chernoff import golden_section_min
from ddppm.privacy.gaussian import GaussianPair
from ddppm.privacy.tails import TailDeltas

_LAMBDA_CAP = 1e8
_GRID_POINTS = 200
_GOLDEN_STEPS = 50


def theorem1_bound(gamma, mu2, eps, s, dim: int | None = None) -> np.ndarray:
    """The right-hand side of eq. (12) at one ``s`` (literally as printed, with ``dim`` for the exponent of
    ``s − 1``; default the number of coordinates ``N``). ``mu2`` holds ``μ_k²`` (``N`` or ``N × R``)."""
    gamma = np.asarray(gamma, float)
    mu2 = np.asarray(mu2, float)
    mu2 = mu2[:, None] if mu2.ndim == 1 else mu2
    N = gamma.size if dim is None else dim
    s = float(s)
    log_front = N / 2 * np.log(s - 1) - np.sum(np.log(gamma)) / (2 * (s - 1)) - 0.5 * np.sum(np.log(s - gamma))
    quad = (gamma / (s - gamma)) @ mu2  # μᵀ(sI − Γ)^{−1}Γμ for each column
    eps = np.atleast_1d(np.asarray(eps, float))
    return np.exp(log_front - eps[:, None] / (s - 1) + s / (2 * (s - 1)) * quad[None, :])


def _objective(lam: np.ndarray, gamma: np.ndarray, mu2: np.ndarray, eps: np.ndarray, extra: float) -> np.ndarray:
    """``log`` of eq. (12) at ``s = 1 + 1/λ`` for every (ε, realisation); ``lam`` has shape ``(..., E, R)``.

    Rewritten without cancellation: ``(N/2)log(s−1) − ½Σ log(s−γ_k) = −½Σ log1p((1−γ_k)λ)``, ``1/(s−1) = λ``,
    ``s/(2(s−1)) · γ_k/(s−γ_k) = (1+λ)λ/2 · γ_k/(1 + (1−γ_k)λ)``; ``extra = (dim − N)/2`` restores another exponent.
    """
    shifted = lam[..., None] * (1.0 - gamma)
    with np.errstate(divide="ignore", invalid="ignore"):
        quad = np.einsum("...erk,kr->...er", gamma / (1.0 + shifted), mu2)
        out = (
            -0.5 * np.sum(np.log1p(shifted), axis=-1)
            - 0.5 * lam * np.sum(np.log(gamma))
            - lam * eps[:, None]
            + (1 + lam) * lam / 2 * quad
            - extra * np.log(lam)
        )
    return np.where(np.all(1.0 + shifted > 0, axis=-1), out, np.inf)


def theorem1_log_delta(gamma, mu2, eps, dim: int | None = None) -> np.ndarray:
    """``log min_{s > max(1, λ₁(Γ))}`` of eq. (12), capped at 0, for each ε (rows) and realisation (columns).

    In ``λ = 1/(s−1) ∈ (0, 1/(λ₁(Γ)−1))`` the logarithm of eq. (12) is a cumulant generating function minus ``λε``,
    hence convex: a log-spaced grid brackets the minimiser and a vectorised golden-section search refines it.
    """
    gamma = np.asarray(gamma, float)
    mu2 = np.asarray(mu2, float)
    mu2 = mu2[:, None] if mu2.ndim == 1 else mu2
    eps = np.atleast_1d(np.asarray(eps, float))
    extra = 0.0 if dim is None else (dim - gamma.size) / 2
    g_max = float(gamma.max(initial=0.0))
    hi = min(_LAMBDA_CAP, (1.0 / (g_max - 1.0)) * (1 - 1e-12) if g_max > 1 else _LAMBDA_CAP)
    lo = 1e-12 * min(1.0, hi)
    grid = np.linspace(np.log(lo), np.log(hi), _GRID_POINTS)
    shape = (eps.size, mu2.shape[1])
    values = _objective(np.exp(grid)[:, None, None] * np.ones(shape), gamma, mu2, eps, extra)  # (S, E, R)
    best = np.argmin(values, axis=0)
    a, b = grid[np.maximum(best - 1, 0)], grid[np.minimum(best + 1, _GRID_POINTS - 1)]
    refined = golden_section_min(lambda x: _objective(np.exp(x), gamma, mu2, eps, extra), a, b, _GOLDEN_STEPS)
    return np.minimum(np.minimum(refined, values.min(axis=0)), 0.0)


def theorem1_from_moments(B, C, B_adj, C_adj, eps) -> np.ndarray:
    """Eq. (12) minimised over s, from the two laws' means and (full-rank) covariances, exactly as the theorem
    states it: ``Γ = C^{1/2} C'^{−1} C^{1/2} = UΓUᵀ``, ``μ = UᵀC^{−1/2}(B − B')``. Returns δ for each ε."""
    C, C_adj = np.asarray(C, float), np.asarray(C_adj, float)
    lam, vec = np.linalg.eigh(C)
    root = vec @ np.diag(np.sqrt(lam)) @ vec.T
    inv_root = vec @ np.diag(1 / np.sqrt(lam)) @ vec.T
    gamma, U = np.linalg.eigh(root @ np.linalg.solve(C_adj, root))
    mu = U.T @ inv_root @ (np.asarray(B, float) - np.asarray(B_adj, float))
    return np.exp(theorem1_log_delta(gamma, mu**2, eps)[:, 0])


def theorem1_tails(pair: GaussianPair, delta_mu: np.ndarray, eps: np.ndarray) -> TailDeltas:
    """Eq. (12) minimised over s for every ε and realised mean difference (columns of ``delta_mu``), in the
    shared diagonalisation of the pair: ``Γ``'s eigenvalues are ``1/(1 + β_k)`` (``β`` are those of ``C'`` against
    ``C``) and ``μ = w``. ``upper = delta``; the lower tail and the hockey-stick δ are not bounded (NaN)."""
    eps = np.asarray(eps, float)
    w, outside = pair.coordinates(delta_mu)
    shape = (eps.size, w.shape[1])
    if pair.singular is not None:
        ones = np.ones(shape)
        return TailDeltas(ones, ones, np.full(shape, np.nan), np.full(shape, np.nan))
    delta = np.nan_to_num(np.exp(theorem1_log_delta(1.0 / (1.0 + pair.beta), w**2, eps)), nan=1.0)
    delta[:, outside] = 1.0
    return TailDeltas(delta, delta.copy(), np.full(shape, np.nan), np.full(shape, np.nan))
