"""An independent, deliberately straightforward δ reference for the accountant (docs/method.md §6).

:func:`delta_reference` evaluates exactly what :func:`ddppm.accounting.accountant.evaluate_delta` evaluates (the same
observers, adjacent candidates and own-randomness realisations) by the textbook route, sharing none of the
accountant's numerics:

* the observer's conditional law under ``X`` and ``X'`` comes from the literal ``M`` and ``L`` of
  eq. (20)–(21) (:func:`ddppm.accounting.release.conditional_law_full`), not from the reduced release model;
* both laws are restricted to the range of ``Σ₁ + Σ₂`` found with ``np.linalg.eigh`` and a relative
  eigenvalue tolerance (rank mode ``support``), or projected onto the range of ``Σ₁`` (rank mode
  ``paper``, eq. 42–43); in ``support`` mode δ = 1 when the two laws have different ranges there or the
  mean difference leaves it;
* every value of the cumulant generating function

      K(s) = s(1+s)/2 · Δμᵀ Σ_s⁻¹ Δμ − ½ [ln det Σ_s + s ln det Σ₁ − (1+s) ln det Σ₂],   Σ_s = (1+s)Σ₂ − sΣ₁,

  is computed from scratch with a Cholesky test of positive definiteness, ``np.linalg.slogdet`` and
  ``np.linalg.solve`` (no simultaneous diagonalisation), and every factorisation is redone for every
  realisation, s and ε;
* ``inf_{s>0} K(±s) − sε`` is found per ε and per realisation by ``scipy.optimize.minimize_scalar``
  (bounded, in ``log s``) inside the bracket of the best point of a coarse log grid.

It is slow on purpose: it is the baseline the benchmark compares the fast path against, and the oracle
the tests compare it with. ``np.linalg.eigh`` resolves eigenvalues only down to about ``1e-16 λ_max``, so
the reference needs a clear gap between the zero and the non-zero part of the spectrum (its ``rtol``
must fall inside the gap); the fast path works with covariance factors and resolves far smaller ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ddppm.accounting.accountant import (
    AccountantSettings,
    PairKey,
    check_epsilons,
    default_neighbours,
    own_randomness,
    worst_case,
)
from ddppm.accounting.iteration import DDPPMParams
from ddppm.accounting.neighbours import apply_neighbour
from ddppm.accounting.release import conditional_law_full
from ddppm.core.errors import ConfigError
from ddppm.core.problem import DistributedProblem

REFERENCE_RTOL = 1e-12
S_MIN = 1e-10
S_MAX = 1e8
GRID_POINTS = 60
XATOL = 1e-10


@dataclass
class RestrictedPair:
    """Two Gaussian laws restricted to a common basis ``V`` (columns): ``VᵀΣ₁V``, ``VᵀΣ₂V``, ``VᵀΔμ``."""

    cov1: np.ndarray
    cov2: np.ndarray
    delta_mu: np.ndarray  # (r, R)
    outside: np.ndarray  # (R,) bool: Δμ leaves the joint support
    singular: str | None
    rank: int


def _psd_rank_basis(cov: np.ndarray, rtol: float) -> tuple[np.ndarray, float]:
    lam, vec = np.linalg.eigh((cov + cov.T) / 2)
    lam_max = float(max(lam.max(initial=0.0), 0.0))
    keep = lam > rtol * lam_max if lam_max > 0 else np.zeros(lam.shape, bool)
    return vec[:, keep], lam_max


def restrict(cov1: np.ndarray, cov2: np.ndarray, delta_mu: np.ndarray, rank_mode: str, rtol: float) -> RestrictedPair:
    """Restrict ``N(μ₁, Σ₁)`` and ``N(μ₂, Σ₂)`` to the range of ``Σ₁ + Σ₂`` (``support``) or of ``Σ₁`` (``paper``).

    ``support``: if ``VᵀΣ₁V`` or ``VᵀΣ₂V`` is singular (smallest eigenvalue ``≤ rtol λ_max(Σ₁+Σ₂)``), the two
    laws have different ranges and are mutually singular; a realisation whose ``Δμ`` has a component of
    norm ``> sqrt(rtol λ_max)`` outside the range is flagged in ``outside``.
    """
    delta_mu = delta_mu[:, None] if delta_mu.ndim == 1 else delta_mu
    if rank_mode == "support":
        V, lam_max = _psd_rank_basis(cov1 + cov2, rtol)
    elif rank_mode == "paper":
        V, lam_max = _psd_rank_basis(cov1, rtol)
    else:
        raise ConfigError(f"methods.ddppm.privacy.rank_mode: unknown mode {rank_mode!r}; use 'support' or 'paper'")
    A1, A2 = V.T @ cov1 @ V, V.T @ cov2 @ V
    A1, A2 = (A1 + A1.T) / 2, (A2 + A2.T) / 2
    dmu = V.T @ delta_mu
    singular = None
    outside = np.zeros(delta_mu.shape[1], bool)
    if rank_mode == "support":
        floor = rtol * lam_max
        lo1 = np.linalg.eigvalsh(A1).min(initial=np.inf)
        lo2 = np.linalg.eigvalsh(A2).min(initial=np.inf)
        if lo1 <= floor or lo2 <= floor:
            singular = (
                f"the two release laws have different ranges (smallest restricted eigenvalues {lo1:.3g} and "
                f"{lo2:.3g} vs tolerance {floor:.3g})"
            )
        outside = np.linalg.norm(delta_mu - V @ dmu, axis=0) > np.sqrt(rtol * lam_max)
    elif V.shape[1] and np.linalg.eigvalsh(A2).min() <= 0:
        singular = "the adjacent law projected onto the original law's range is singular"
    return RestrictedPair(cov1=A1, cov2=A2, delta_mu=dmu, outside=outside, singular=singular, rank=V.shape[1])


def _is_pd(A: np.ndarray) -> bool:
    try:
        np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        return False
    return True


def cgf_direct(
    s: float,
    cov1: np.ndarray,
    cov2: np.ndarray,
    delta_mu: np.ndarray,
    logdet1: float | None = None,
    logdet2: float | None = None,
) -> float:
    """``K(s)`` of the privacy loss of ``N(μ₁,Σ₁)`` vs ``N(μ₂,Σ₂)`` from scratch; ``+inf`` where ``Σ_s`` is not PD.

    ``Σ₁`` and ``Σ₂`` must be positive definite; ``ln det Σ₁``, ``ln det Σ₂`` are computed unless given.
    ``Σ_s`` counts as positive definite when its Cholesky factorisation succeeds, ``slogdet`` reports a
    positive determinant and ``Δμᵀ Σ_s⁻¹ Δμ ≥ 0`` (the last two catch numerically singular ``Σ_s``).
    """
    sigma_s = (1 + s) * cov2 - s * cov1
    if not _is_pd(sigma_s):
        return np.inf
    sign, logdet_s = np.linalg.slogdet(sigma_s)
    quad = float(delta_mu @ np.linalg.solve(sigma_s, delta_mu))
    if sign <= 0 or quad < 0:
        # Cholesky can succeed on a numerically singular Σ_s (at the edge of the domain); LU then sees it
        return np.inf
    logdet1 = np.linalg.slogdet(cov1)[1] if logdet1 is None else logdet1
    logdet2 = np.linalg.slogdet(cov2)[1] if logdet2 is None else logdet2
    return s * (1 + s) / 2 * quad - 0.5 * (logdet_s + s * logdet1 - (1 + s) * logdet2)


def domain_limit(cov1: np.ndarray, cov2: np.ndarray, sign: int, s_max: float = S_MAX, steps: int = 60) -> float:
    """Largest ``s ≤ s_max`` with ``Σ_{±s}`` positive definite, by bisection in ``log s`` on a Cholesky test.

    ``{s ≥ 0 : Σ_{±s} ≻ 0}`` is an interval because ``λ_min(Σ₂ ± s(Σ₂ − Σ₁))`` is concave in ``s``.
    """
    if _is_pd((1 + sign * s_max) * cov2 - sign * s_max * cov1):
        return s_max
    lo, hi = np.log(S_MIN * 1e-6), np.log(s_max)
    for _ in range(steps):
        mid = (lo + hi) / 2
        s = np.exp(mid)
        if _is_pd((1 + sign * s) * cov2 - sign * s * cov1):
            lo = mid
        else:
            hi = mid
    return float(np.exp(lo))


def log_tail(
    cov1: np.ndarray, cov2: np.ndarray, delta_mu: np.ndarray, eps: np.ndarray, sign: int, grid_points: int = GRID_POINTS
) -> np.ndarray:
    """``log inf_{s>0} exp(K(sign·s) − sε)`` (capped at 0) for each ε, for one realisation's ``Δμ``."""
    from scipy.optimize import minimize_scalar

    logdet1, logdet2 = np.linalg.slogdet(cov1)[1], np.linalg.slogdet(cov2)[1]
    limit = domain_limit(cov1, cov2, sign)
    hi = limit if limit >= S_MAX else limit * (1 - 1e-6)
    lo = S_MIN * min(1.0, hi)
    log_s = np.linspace(np.log(lo), np.log(hi), grid_points)
    grid_K = np.array([cgf_direct(sign * np.exp(ls), cov1, cov2, delta_mu, logdet1, logdet2) for ls in log_s])
    out = np.empty(len(eps))
    for e_idx, e in enumerate(eps):
        obj = grid_K - np.exp(log_s) * e
        k = int(np.argmin(obj))
        a, b = log_s[max(k - 1, 0)], log_s[min(k + 1, grid_points - 1)]

        def objective(ls: float, e: float = e) -> float:
            return cgf_direct(sign * np.exp(ls), cov1, cov2, delta_mu, logdet1, logdet2) - np.exp(ls) * e

        best = float(obj[k])
        if b > a:
            res = minimize_scalar(objective, bounds=(a, b), method="bounded", options={"xatol": XATOL})
            if np.isfinite(res.fun):
                best = min(best, float(res.fun))
        out[e_idx] = min(best, 0.0)
    return out


@dataclass
class ReferenceResult:
    """Like :class:`ddppm.accounting.accountant.DeltaResult`: per-ε worst-pair mean δ, δ⁺, and every pair's values.

    ``realisations`` maps each pair key ``(observer, agent, row, kind)`` to the per-realisation arrays
    ``delta``, ``upper``, ``lower`` (ε × R).
    """

    eps: np.ndarray
    delta: np.ndarray
    delta_se: np.ndarray
    delta_max: np.ndarray
    delta_upper: np.ndarray
    delta_hockey: np.ndarray
    worst: list[dict]
    pairs: pd.DataFrame
    realisations: dict[PairKey, dict[str, np.ndarray]] = field(default_factory=dict)


def delta_reference(
    problem: DistributedProblem,
    params: DDPPMParams,
    eps: np.ndarray,
    settings: AccountantSettings | None = None,
    own_full: Mapping[int, np.ndarray] | None = None,
    only_pairs: set[PairKey] | None = None,
    rtol: float = REFERENCE_RTOL,
    grid_points: int = GRID_POINTS,
) -> ReferenceResult:
    """δ(ε) of Algorithm 1 by the straightforward route (module docstring); same pairs and realisations as
    :func:`ddppm.accounting.accountant.evaluate_delta` with the same ``settings``.

    Parameters
    ----------
    own_full
        Optional ``{observer: [q_i^(0); p_i^(1..T)] realisations (rows × R)}``; by default
        :func:`ddppm.accounting.accountant.own_randomness`, exactly as the accountant draws them.
    only_pairs
        Restrict to these ``(observer, agent, row, kind)`` pairs (as in ``evaluate_delta``).
    rtol
        Relative eigenvalue tolerance of the ``eigh``-based range (not ``settings.rank_rtol``, which the
        factor-based fast path can afford to set far lower).
    """
    settings = settings or AccountantSettings()
    eps = check_epsilons(eps)
    observers = range(problem.m) if settings.observers is None else settings.observers
    candidates = default_neighbours(problem, settings)
    sigmas = params.sigmas
    records: list[dict] = []
    per_real: dict[PairKey, dict[str, np.ndarray]] = {}
    for i in observers:
        law1 = conditional_law_full(problem, params.alpha, params.sigma_q, sigmas, i, settings.view)
        own = own_full[i] if own_full is not None else own_randomness(problem, params, i, settings)
        mean1 = law1.mean_map @ own
        cov1 = law1.cov
        for cand in candidates:
            key = (i, cand.agent, cand.row, cand.kind)
            if cand.agent == i or (only_pairs is not None and key not in only_pairs):
                continue
            law2 = conditional_law_full(
                apply_neighbour(problem, cand), params.alpha, params.sigma_q, sigmas, i, settings.view
            )
            pair = restrict(cov1, law2.cov, mean1 - law2.mean_map @ own, settings.rank_mode, rtol)
            R = own.shape[1]
            upper = np.ones((eps.size, R))
            lower = np.ones((eps.size, R))
            if pair.singular is None:
                for r in range(R):
                    if pair.outside[r]:
                        continue
                    dmu = pair.delta_mu[:, r]
                    # both orders of the adjacent pair (X against X', and X' against X); keep the larger δ
                    up_f = np.exp(log_tail(pair.cov1, pair.cov2, dmu, eps, +1, grid_points))
                    lo_f = np.exp(log_tail(pair.cov1, pair.cov2, dmu, eps, -1, grid_points))
                    up_b = np.exp(log_tail(pair.cov2, pair.cov1, -dmu, eps, +1, grid_points))
                    lo_b = np.exp(log_tail(pair.cov2, pair.cov1, -dmu, eps, -1, grid_points))
                    back = np.minimum(1, up_b + lo_b) > np.minimum(1, up_f + lo_f)
                    upper[:, r] = np.where(back, up_b, up_f)
                    lower[:, r] = np.where(back, lo_b, lo_f)
            delta = np.minimum(1.0, upper + lower)
            per_real[key] = {"delta": delta, "upper": upper, "lower": lower}
            for e_idx, e in enumerate(eps):
                records.append(
                    {
                        "observer": i,
                        "agent": cand.agent,
                        "row": cand.row,
                        "kind": cand.kind,
                        "eps": e,
                        "delta_mean": delta[e_idx].mean(),
                        "delta_se": delta[e_idx].std(ddof=1) / np.sqrt(R) if R > 1 else np.nan,
                        "delta_max": delta[e_idx].max(),
                        "delta_upper_mean": upper[e_idx].mean(),
                        "delta_lower_mean": lower[e_idx].mean(),
                        "n_outside": int(pair.outside.sum()),
                        "rank": pair.rank,
                        "singular": pair.singular or "",
                    }
                )
    pairs = pd.DataFrame.from_records(records)
    return ReferenceResult(eps=eps, pairs=pairs, realisations=per_real, **worst_case(pairs))
