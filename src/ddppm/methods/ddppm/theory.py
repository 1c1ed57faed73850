r"""Convergence theory of D-DP-PM: the covariance of ``q^(T)`` and Theorem 3 of the journal paper.

Notation follows the journal D-DP-PM paper (README, Papers), §III-C and Appendix C. The unnormalised final
iterate of Algorithm 1 is (eq. 18, 58)

.. math::

    \mathbf q^{(T)} = (\alpha\Xi)^T \mathbf q^{(0)} + \sum_{k=1}^T (\alpha\Xi)^{T-k}\mathbf p^{(k)},
    \qquad \mathbf q^{(0)}\sim\mathcal N(0,\sigma_q^2 I),\ \mathbf p^{(k)}\sim\mathcal N(0,\sigma_p(k)^2 I),

so ``q^(T) ~ N(0, Ω)`` with :math:`\Omega = \sigma_q^2(\alpha\Xi)^{2T}+\sum_k\sigma_p(k)^2(\alpha\Xi)^{2(T-k)}`.
In the eigenbasis ``Ξ = U diag(μ) Uᵀ`` this is ``Ω = U diag(w) Uᵀ`` with
``w_i = Var Γ_i = σ_q²(αμ_i)^{2T} + Σ_k σ_p(k)²(αμ_i)^{2(T−k)}`` (the paper's eq. 78, first line).

Theorem 3 (eq. 40) bounds the squared error ``sin²(v, q^(T))`` of eq. (37), with probability ``1 − γ``, by

.. math::

    \underbrace{\frac{2\|Q-\Theta\Omega\|_F\sqrt{\log(1/\gamma)} + 2\|Q-\Theta\Omega\|_2\log(1/\gamma)}
        {\operatorname{Tr}\Omega}}_{\text{Hanson–Wright term } \Delta}
    + \underbrace{\frac{2 n_i m\lambda_2^c(W)}{\lambda_1-\lambda_2}}_{\text{consensus term}}
    + \underbrace{2(n-1)\rho\Big(\frac{\mu_2}{\mu_1}\Big)^{2T}}_{\text{power term}}.

:func:`theorem3_bound` returns the three terms and ``bound_sin = min(1, sqrt(sum))``, a bound on
``sin(v, q^(T))`` itself.

Every correction to the printed proof (eq. 59, 64–65, 69, 72–74, 77–78), how Δ is found, and what the tests
found (the Hanson–Wright step is vacuous; the literal one-step reading fails): docs/theorem3.md.
"""

from __future__ import annotations

import math
import weakref
from typing import Any

import numpy as np

from ddppm.accounting.iteration import DDPPMParams
from ddppm.core.errors import ConfigError
from ddppm.core.network import second_eigenvalue
from ddppm.core.problem import DistributedProblem

__all__ = [
    "corollary1_rho_bound",
    "expected_sin2_proxy",
    "final_covariance",
    "hanson_wright_delta",
    "omega_weights",
    "theorem3_bound",
]

# Eigendecompositions of Ξ, keyed by id(problem) and dropped when the problem is garbage collected
# (DistributedProblem holds arrays, so it is not hashable).
_EIGH_CACHE: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _xi_eigh(problem: DistributedProblem) -> tuple[np.ndarray, np.ndarray]:
    """``(μ, U)`` with ``Ξ = U diag(μ) Uᵀ``, eigenvalues in decreasing order."""
    key = id(problem)
    hit = _EIGH_CACHE.get(key)
    if hit is None:
        mu, U = np.linalg.eigh(problem.Xi)
        hit = (mu[::-1].copy(), U[:, ::-1].copy())
        _EIGH_CACHE[key] = hit
        weakref.finalize(problem, _EIGH_CACHE.pop, key, None)
    return hit


def omega_weights(mu: np.ndarray, params: DDPPMParams) -> np.ndarray:
    """``w(μ) = σ_q²(αμ)^{2T} + Σ_k σ_p(k)²(αμ)^{2(T−k)}``: the eigenvalues of Ω (``Var Γ_i``, eq. 78).

    Evaluated by Horner's scheme in ``x = (αμ)²``: ``w ← σ_q²``, then ``w ← w·x + σ_p(k)²`` for k = 1..T.
    """
    x = (params.alpha * np.asarray(mu, dtype=float)) ** 2
    w = np.full_like(x, params.sigma_q**2)
    for s in params.sigmas:
        w = w * x + s**2
    return w


def final_covariance(problem: DistributedProblem, params: DDPPMParams) -> np.ndarray:
    r"""Ω, the covariance of the unnormalised final iterate ``q^(T)`` of Algorithm 1.

    .. math:: \Omega = \sigma_q^2(\alpha\Xi)^{2T} + \sum_{k=1}^T \sigma_p(k)^2 (\alpha\Xi)^{2(T-k)}

    computed as ``U diag(w) Uᵀ`` from the eigendecomposition ``Ξ = U diag(μ) Uᵀ`` of the symmetric Ξ
    (eq. 13) with ``w`` from :func:`omega_weights`. The paper's eq. (59) prints this with wrong powers
    (``α^{2T}σ_q²ΞΞᵀ + Σ α^{2T−k}σ_p²(ΞΞᵀ)^{T−k}``); the form above follows from eq. (58) and agrees with the
    paper's own ``Var Γ_i`` in eq. (78). See the module docstring, item 1.

    Returns
    -------
    numpy.ndarray
        Symmetric positive definite ``(n, n)`` matrix.
    """
    mu, U = _xi_eigh(problem)
    w = omega_weights(mu, params)
    return (U * w) @ U.T


def _proxy_from(w: np.ndarray, vt: np.ndarray) -> float:
    """``1 − vᵀΩv / Tr Ω`` in Ω's eigenbasis (``vt = Uᵀv``), computed without cancellation."""
    c2 = vt**2
    c2 = c2 / c2.sum()
    # 1 − Σ w c² / Σ w = Σ w (1 − c²) / Σ w, and Σ_i (1 − c_i²) w_i has no cancellation.
    return float(np.clip(np.sum(w * (1.0 - c2)) / np.sum(w), 0.0, 1.0))


def expected_sin2_proxy(problem: DistributedProblem, params: DDPPMParams) -> float:
    r"""``1 − vᵀΩv / Tr(Ω)`` (paper eq. 71), the quantity Theorem 3 bounds through eqs. (73)–(79).

    It equals ``E[‖(I − vvᵀ)q‖²] / E[‖q‖²]`` for ``q = q^(T) ~ N(0, Ω)``: a ratio of expectations, i.e. the
    ``‖q‖²``-weighted mean of ``sin²(v, q)``. It is **not** ``E[sin²(v, q)]`` as eq. (72) claims (the two
    agree only approximately, closely when ``‖q‖²`` concentrates). ``v`` is the top eigenvector of ``XXᵀ``.
    """
    mu, U = _xi_eigh(problem)
    return _proxy_from(omega_weights(mu, params), U.T @ problem.top_eigenvector)


def _diag_minus_rank_one_extremes(d: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Smallest and largest eigenvalue of ``diag(d) − a aᵀ`` with ``b = a²`` (elementwise), in O(n) per step.

    Sylvester's law of inertia with the Schur complement of ``[[D − λI, a], [aᵀ, 1]]`` gives
    ``#{eig < λ} = #{d_i < λ} + [1 − Σ b_i/(d_i − λ) < 0]`` for λ not equal to any ``d_i``; both extremes
    are found by bisection on this count (all eigenvalues lie in ``[min d − Σb, max d]``).
    """
    lo0, hi0 = float(d.min() - b.sum()), float(d.max())
    n = d.size
    span = max(abs(lo0), abs(hi0), 1e-300)

    def count_below(lam: float) -> int:
        diff = d - lam
        if np.any(diff == 0.0):
            lam = np.nextafter(lam, -np.inf)
            diff = d - lam
        return int(np.count_nonzero(diff < 0)) + int(1.0 - np.sum(b / diff) < 0)

    def first_crossing(target: int) -> float:
        lo, hi = lo0 - 1e-12 * span, hi0 + 1e-12 * span  # count(lo) = 0 < target <= count(hi) = n
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if mid in (lo, hi):
                break
            if count_below(mid) >= target:
                hi = mid
            else:
                lo = mid
        return 0.5 * (lo + hi)

    return first_crossing(1), first_crossing(n)


def _hw_f(delta: float, w: np.ndarray, a2: np.ndarray, proxy: float, log_inv_gamma: float) -> float:
    """``f(Δ) = [2‖A‖_F√L + 2‖A‖₂L]/Tr Ω`` with ``A = Q − (p + Δ)Ω = (1 − Θ)diag(w) − aaᵀ`` (eigenbasis of Ω)."""
    s = 1.0 - (proxy + delta)  # 1 − Θ
    d = s * w
    a_sq_sum = float(a2.sum())
    fro2 = float(np.sum(d * d) - 2.0 * np.sum(d * a2) + a_sq_sum**2)
    fro = math.sqrt(max(fro2, 0.0))
    lam_min, lam_max = _diag_minus_rank_one_extremes(d, a2)
    spec = max(abs(lam_min), abs(lam_max))
    return (2.0 * fro * math.sqrt(log_inv_gamma) + 2.0 * spec * log_inv_gamma) / float(w.sum())


def hanson_wright_delta(w: np.ndarray, vt: np.ndarray, gamma: float = 0.05, iterations: int = 50) -> dict[str, Any]:
    r"""Least self-consistent Δ of Theorem 3 (eq. 68 with eq. 64), in Ω's eigenbasis.

    Parameters
    ----------
    w
        Eigenvalues of Ω (any positive scale: the result is scale invariant).
    vt
        ``Uᵀv``: the top eigenvector of ``XXᵀ`` in Ω's eigenbasis.
    gamma
        Failure probability, ``0 < γ < 1``.
    iterations
        Maximum number of plain fixed-point iterations ``Δ ← f(Δ)`` from Δ = 0 (diagnostic only).

    Returns
    -------
    dict
        ``delta`` (least Δ ≥ 0 with Δ ≥ f(Δ), or ``inf`` if none exists), ``feasible``, ``proxy``,
        ``delta_iterate`` (last plain iterate), ``iterate_converged``, ``delta_one_step`` (``f(0)``, the
        first iterate: Θ evaluated with Δ = 0; *not* a valid Δ in general) and ``max_slack``
        (``max_Δ Δ − f(Δ)``; negative when no valid Δ exists).
        See the module docstring, item 4.
    """
    from scipy.optimize import brentq, minimize_scalar

    if not 0.0 < gamma < 1.0:
        raise ConfigError(f"gamma must lie in (0, 1), got {gamma!r}")
    w = np.asarray(w, dtype=float)
    w = w / w.max()
    vt = np.asarray(vt, dtype=float)
    vt = vt / np.linalg.norm(vt)
    a2 = w * vt**2
    proxy = _proxy_from(w, vt)
    L = math.log(1.0 / gamma)

    def f(x: float) -> float:
        return _hw_f(x, w, a2, proxy, L)

    def h(x: float) -> float:
        return x - f(x)

    # Plain iteration (diagnostic).
    it, converged = 0.0, False
    for _ in range(iterations):
        nxt = f(it)
        if abs(nxt - it) <= 1e-10 * max(1.0, abs(it)):
            it, converged = nxt, True
            break
        it = nxt
        if it > 1.0 - proxy:  # Θ > 1: beyond the trivial bound; the iteration is not producing a bound
            break

    top = 1.0 - proxy  # Θ = 1 is the trivial bound R² ≤ 1
    f0 = f(0.0)
    if f0 == 0.0:
        delta, feasible, slack = 0.0, True, 0.0
    elif top <= 0.0:
        delta, feasible, slack = math.inf, False, -f0
    else:
        res = minimize_scalar(
            lambda x: -h(x), bounds=(0.0, top), method="bounded", options={"xatol": 1e-12 * max(top, 1e-300)}
        )
        x_best, slack = float(res.x), float(-res.fun)
        if slack >= 0.0:
            delta = float(brentq(h, 0.0, x_best, xtol=1e-14, rtol=1e-12)) if h(0.0) < 0.0 else 0.0
            # brentq returns a point within tolerance of the root; step right until it is self-consistent.
            while h(delta) < 0.0 and delta < x_best:
                delta = min(x_best, delta + 1e-12 * max(delta, 1e-12))
            feasible = True
        else:
            delta, feasible = math.inf, False
    return {
        "delta": delta,
        "feasible": feasible,
        "proxy": proxy,
        "delta_iterate": float(it),
        "iterate_converged": converged,
        "delta_one_step": float(f0),
        "max_slack": slack,
    }


def corollary1_rho_bound(problem: DistributedProblem, params: DDPPMParams) -> dict[str, Any]:
    """Corollary 1 (eq. 41): ``ρ ≤ 1 + 1/(σ_q²(1 − (αμ₁)^{−2}))`` if ``1/μ₁ < α < 1/μ₂`` and ``σ_p(t) ≤ (μ₂/μ₁)^t``.

    Returns ``bound`` (``nan`` when ``αμ₁ ≤ 1``) and ``conditions_met``.
    """
    mu1, mu2 = problem.mu1, _mu2_abs(problem)
    t = np.arange(1, params.T + 1, dtype=float)
    conds = bool(1.0 / mu1 < params.alpha < (np.inf if mu2 == 0 else 1.0 / mu2)) and bool(
        np.all(params.sigmas <= (mu2 / mu1) ** t * (1 + 1e-12))
    )
    am = params.alpha * mu1
    bound = 1.0 + 1.0 / (params.sigma_q**2 * (1.0 - am**-2)) if am > 1.0 else math.nan
    return {"bound": float(bound), "conditions_met": conds}


def _mu2_abs(problem: DistributedProblem) -> float:
    """``max_{i≥2} |μ_i|`` (= μ₂ when Ξ is positive semidefinite)."""
    mu, _ = _xi_eigh(problem)
    return float(np.max(np.abs(mu[1:]))) if mu.size > 1 else 0.0


def _consensus_error_norm(problem: DistributedProblem) -> float:
    """``E = ‖Ξ − XXᵀ‖₂`` via the small ``md × md`` matrix ``G^{1/2} M G^{1/2}``.

    ``Ξ − XXᵀ = D(X) M Dᵀ(X)`` with ``M = m(W^c − 11ᵀ/m) ⊗ I_d`` and ``G = Dᵀ(X)D(X) = blockdiag(X_iᵀX_i)``;
    its non-zero eigenvalues are those of ``G^{1/2} M G^{1/2}``.
    """
    m, d = problem.m, problem.d
    M = np.kron(m * (problem.Wc - np.full((m, m), 1.0 / m)), np.eye(d))
    G_half = np.zeros((m * d, m * d))
    for i, Xi in enumerate(problem.blocks):
        evals, evecs = np.linalg.eigh(Xi.T @ Xi)
        G_half[i * d : (i + 1) * d, i * d : (i + 1) * d] = (evecs * np.sqrt(np.clip(evals, 0, None))) @ evecs.T
    S = G_half @ M @ G_half
    return float(np.max(np.abs(np.linalg.eigvalsh(0.5 * (S + S.T)))))


def theorem3_bound(problem: DistributedProblem, params: DDPPMParams, gamma: float = 0.05) -> dict[str, Any]:
    r"""Right-hand side of Theorem 3 (eq. 40) as a bound on ``sin(v, q^(T))``, with its parts.

    ``bound_sin = min(1, sqrt(consensus_term + power_term + hanson_wright_term))`` bounds
    ``sin(v, q^(T)) = ‖(I − vvᵀ)q^(T)‖/‖q^(T)‖`` (eq. 37) with probability at least ``1 − γ``.

    Parts (all bounds on pieces of ``sin²``; see the module docstring for every correction to the paper):

    ``consensus_term``
        ``2 n_i m λ₂^c(W) / (λ₁ − λ₂)`` with ``n_i = max`` agent size and ``λ`` the eigenvalues of ``XXᵀ``
        (``inf`` if ``λ₁ = λ₂``).
    ``power_term``
        ``2(n − 1) ρ (μ₂/μ₁)^{2T}``, ρ of eq. (39), ``μ₂ = max_{i≥2}|μ_i(Ξ)|``.
    ``hanson_wright_term``
        Δ of eq. (68) with Θ of eq. (64): the least Δ ≥ 0 with
        ``Δ ≥ [2‖Q−ΘΩ‖_F√log(1/γ) + 2‖Q−ΘΩ‖₂ log(1/γ)]/Tr Ω``, ``Θ = 1 − vᵀΩv/TrΩ + Δ``,
        ``Q = Ω^{1/2}(I − vvᵀ)Ω^{1/2}``; ``inf`` when no such Δ exists (then ``bound_sin = 1``).

    Further keys: ``bound_sin2`` (the bound on ``sin²`` before the square root and cap), ``proxy`` (eq. 71),
    ``bound_sin_eq70`` (``min(1, sqrt(proxy + Δ))``, the sharper intermediate bound of eq. 70), ``rho``,
    ``rho_corollary1`` and ``corollary1_conditions``, ``mu1``, ``mu2``, ``lambda1``, ``lambda2``,
    ``lambda2_W``, ``n_i``, ``E_bound`` (``n_i m λ₂^c``), ``E_exact`` (``‖Ξ − XXᵀ‖₂``), ``hw_feasible``,
    ``hw_delta_iterate``, ``hw_iterate_converged``, ``gamma``, and the *literal one-step reading*
    ``hanson_wright_term_one_step`` (Δ = f(0)) with ``bound_sin_one_step``. The one-step value is **not a
    valid bound**: simulations exceed it at the 95% level in many settings (see the module docstring,
    "Findings"); it is returned only so the discrepancy can be shown.
    """
    if not 0.0 < gamma < 1.0:
        raise ConfigError(f"gamma must lie in (0, 1), got {gamma!r}")
    mu, U = _xi_eigh(problem)
    v = problem.top_eigenvector
    w = omega_weights(mu, params)
    hw = hanson_wright_delta(w, U.T @ v, gamma)

    lam = problem.singular_values**2
    lam1, lam2 = float(lam[0]), float(lam[1]) if lam.size > 1 else 0.0
    n_i = int(problem.sizes.max())
    l2w = second_eigenvalue(problem.W)
    E_bound = n_i * problem.m * l2w**problem.c
    gap = lam1 - lam2
    consensus = 2.0 * E_bound / gap if gap > 0 else math.inf
    if E_bound == 0.0:
        consensus = 0.0

    mu1, mu2 = float(mu[0]), _mu2_abs(problem)
    w12 = omega_weights(np.array([mu1, mu2]), params)
    power = 2.0 * (problem.n - 1) * float(w12[1] / w12[0])
    am1, am2 = params.alpha * mu1, params.alpha * mu2
    k = np.arange(1, params.T + 1, dtype=float)
    s2 = params.sigmas**2
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        num = params.sigma_q**2 + float(np.sum(s2 * am2 ** (-2 * k)))
        den = params.sigma_q**2 + float(np.sum(s2 * am1 ** (-2 * k)))
    rho = num / den if np.isfinite(num) else math.inf
    cor = corollary1_rho_bound(problem, params)

    total = consensus + power + hw["delta"]
    bound_sin = float(min(1.0, math.sqrt(total))) if np.isfinite(total) else 1.0
    eq70 = hw["proxy"] + hw["delta"]
    one_step = consensus + power + hw["delta_one_step"]
    return {
        "bound_sin": bound_sin,
        "bound_sin2": float(total),
        "consensus_term": float(consensus),
        "power_term": power,
        "hanson_wright_term": float(hw["delta"]),
        "proxy": hw["proxy"],
        "bound_sin_eq70": float(min(1.0, math.sqrt(eq70))) if np.isfinite(eq70) else 1.0,
        "hw_feasible": bool(hw["feasible"]),
        "hanson_wright_term_one_step": hw["delta_one_step"],
        "bound_sin_one_step": float(min(1.0, math.sqrt(one_step))) if np.isfinite(one_step) else 1.0,
        "hw_delta_iterate": hw["delta_iterate"],
        "hw_iterate_converged": bool(hw["iterate_converged"]),
        "rho": float(rho),
        "rho_corollary1": cor["bound"],
        "corollary1_conditions": cor["conditions_met"],
        "mu1": mu1,
        "mu2": mu2,
        "lambda1": lam1,
        "lambda2": lam2,
        "lambda2_W": float(l2w),
        "n_i": n_i,
        "E_bound": float(E_bound),
        "E_exact": _consensus_error_norm(problem),
        "gamma": float(gamma),
    }
