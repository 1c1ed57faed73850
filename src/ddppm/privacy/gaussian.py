"""Rényi divergence of Gaussians, the privacy-loss CGF and δ(ε) for both tails (docs/privacy.md; the paper's eq. 29–34).

For ``P = N(μ₁, Σ₁)`` (data X) and ``Q = N(μ₂, Σ₂)`` (adjacent data X') the privacy loss
``ℒ = ln p(y)/q(y)``, ``y ~ P``, has cumulant generating function (Gil 2011; paper eq. 33–34)

    K(s) = s D_{1+s}(P‖Q) = s(1+s)/2 · Δμᵀ Σ_s⁻¹ Δμ − ½ ln( det Σ_s / (det Σ₁^{−s} det Σ₂^{1+s}) ),
    Σ_s = (1+s)Σ₂ − sΣ₁,  Δμ = μ₁ − μ₂.

With ``Σ₁ = C Cᵀ`` and ``C⁻¹ Σ₂ C⁻ᵀ = U Γ Uᵀ`` (one simultaneous diagonalisation, :func:`diagonalize`) this is
an O(N) sum over the generalised eigenvalues ``γ_k = 1 + β_k`` and ``w = Uᵀ C⁻¹ Δμ``:

    K(s) = s(1+s)/2 Σ_k w_k² / (1 + (1+s)β_k) − ½ Σ_k [ log1p((1+s)β_k) − (1+s) log1p(β_k) ].

Theorem 2 bounds the upper tail, ``δ⁺(ε) = inf_{s>0} exp(K(s) − sε)``; Definition 2 is two-sided, so the
lower tail ``δ⁻(ε) = inf_{s>0} exp(K(−s) − sε)`` is added: ``δ = min(1, δ⁺ + δ⁻)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ddppm.core.errors import ConfigError, PrivacyError
from ddppm.privacy.chernoff import log_delta_tail_many

RANK_MODES = ("support", "paper")
DEFAULT_RANK_RTOL = 1e-22


@dataclass(frozen=True)
class SupportBasis:
    """The range of ``Σ₁ = F₁F₁ᵀ`` from an SVD of its factor, ``F₁ = V S Yᵀ``, and its null space ``V0``.

    Directions with eigenvalue ``s_k² ≤ rtol · λ_max`` count as zero (config ``methods.ddppm.privacy.rank_rtol``;
    the paper's projection, eq. 42–43, is the other rank mode). Working with the factor resolves eigenvalues down
    to ``~eps² λ_max`` instead of ``~eps λ_max``: the release covariances span more than twelve decades (the
    signal grows with α while the noise shrinks).
    """

    V: np.ndarray
    sv: np.ndarray
    Yt: np.ndarray
    V0: np.ndarray
    lam_max: float
    rtol: float

    @classmethod
    def of_factor(cls, F: np.ndarray, rtol: float = DEFAULT_RANK_RTOL) -> SupportBasis:
        # Full U (all N left singular vectors) gives the null space for free; it is cheap when N > K.
        U, s, Yt = np.linalg.svd(F, full_matrices=F.shape[0] > F.shape[1])
        s_max = float(s.max(initial=0.0))
        keep = s > np.sqrt(rtol) * s_max if s_max > 0 else np.zeros(s.shape, bool)
        r = int(keep.sum())  # singular values are sorted, so the kept ones come first
        return cls(V=U[:, :r], sv=s[:r], Yt=Yt[:r], V0=U[:, r:], lam_max=s_max**2, rtol=rtol)

    @classmethod
    def of_cov(cls, cov: np.ndarray, rtol: float = DEFAULT_RANK_RTOL) -> SupportBasis:
        """From a covariance matrix (its symmetric square root is used as the factor)."""
        return cls.of_factor(cov_factor(cov), rtol)


def cov_factor(cov: np.ndarray) -> np.ndarray:
    """``F`` with ``F Fᵀ = cov`` (negative round-off eigenvalues clipped to 0)."""
    lam, vec = np.linalg.eigh((cov + cov.T) / 2)
    # eigh resolves eigenvalues only to ~N·eps·λ_max: anything below is round-off of a true zero.
    floor = cov.shape[0] * np.finfo(float).eps * max(float(lam.max(initial=0.0)), 0.0)
    return vec * np.sqrt(np.where(lam > floor, lam, 0.0))


@dataclass(frozen=True)
class GaussianPair:
    """``(Σ₁, Σ₂)`` simultaneously diagonalised inside the support of ``Σ₁``.

    Attributes
    ----------
    beta
        ``γ_k − 1`` for the generalised eigenvalues ``γ_k`` of ``(Σ₂, Σ₁)`` on the support.
    whiten
        ``Uᵀ S⁻¹ Vᵀ``: maps a mean difference ``Δμ`` to ``w``.
    singular
        Why the two laws are mutually singular (then ``ℒ = ±∞`` with positive probability and δ = 1),
        or ``None``.
    residual
        Low-rank pairs only (:func:`diagonalize`): ``(S⁻¹Vᵀ, B)``. Every whitened direction outside the
        orthonormal ``B`` has ``γ = 1``; they are merged into the last coordinate (``β = 0``, the last entry
        of ``beta``), whose ``w`` is the length of ``S⁻¹VᵀΔμ`` outside ``B``. The privacy loss is unchanged:
        directions with ``γ = 1`` are N(0, 1) under both laws and enter ``ℒ`` only through ``Σ w_k x_k``.
    """

    beta: np.ndarray
    whiten: np.ndarray
    V0: np.ndarray | None
    mean_tol: float
    singular: str | None
    residual: tuple[np.ndarray, np.ndarray] | None = None

    def coordinates(self, delta_mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``w`` (``r × R``) for mean differences ``Δμ`` (columns), and a mask of columns whose ``Δμ``
        leaves the support (only checked in ``support`` mode)."""
        delta_mu = delta_mu[:, None] if delta_mu.ndim == 1 else delta_mu
        w = self.whiten @ delta_mu
        if self.residual is not None:
            to_whitened, basis = self.residual
            x = to_whitened @ delta_mu
            rest = np.linalg.norm(x - basis @ (basis.T @ x), axis=0)
            w = np.vstack([w, rest[None, :]])
        if self.V0 is None or self.V0.shape[1] == 0:
            return w, np.zeros(delta_mu.shape[1], bool)
        outside = np.linalg.norm(self.V0.T @ delta_mu, axis=0) > self.mean_tol
        return w, outside


LOW_RANK_SHARE = 0.25
""":func:`diagonalize` takes its low-rank route when ``F₂ − F₁`` has rank at most this share of the support's."""


def difference_range(
    F1: np.ndarray, F2: np.ndarray, max_rank: int, seed: int = 0
) -> tuple[np.ndarray, np.ndarray] | None:
    """An orthonormal ``Q`` (``N × r``) with ``‖(I − QQᵀ)(F₂ − F₁)‖_F ≤ 16 ε_mach max(‖F₁‖_F, ‖F₂‖_F)`` and
    ``Z = Qᵀ(F₂ − F₁)`` (``r × K``, so ``F₂ − F₁ ≈ QZ``), or ``None`` if that needs more than ``max_rank`` columns.

    A randomised range finder (Halko, Martinsson & Tropp 2011, Alg. 4.2) whose residual is checked exactly, so
    the answer does not depend on the random draw beyond round-off. The tolerance is the round-off of forming
    ``F₂ − F₁`` itself (which the dense route of :func:`diagonalize` differences entry by entry): dropping a
    residual that small is as accurate as the dense route.
    """
    diff = F2 - F1
    tol = 8 * np.finfo(float).eps * max(float(np.linalg.norm(F1)), float(np.linalg.norm(F2)))
    if float(np.linalg.norm(diff)) <= tol:
        return np.zeros((F1.shape[0], 0)), np.zeros((0, F1.shape[1]))
    rng = np.random.default_rng(seed)
    Q = np.zeros((diff.shape[0], 0))
    width = min(8, max_rank)
    while width > 0:
        Y = diff @ rng.standard_normal((diff.shape[1], width))
        Q, _ = np.linalg.qr(np.hstack([Q, Y - Q @ (Q.T @ Y)]))
        if float(np.linalg.norm(diff - Q @ (Q.T @ diff))) <= tol:
            # keep the directions the difference really uses (the draw may have more columns than its rank)
            U, s, _ = np.linalg.svd(Q.T @ diff, full_matrices=False)
            tail = np.sqrt(np.cumsum(s[::-1] ** 2))[::-1]  # tail[k]: what dropping directions k, k+1, … costs
            Q = Q @ U[:, : int(np.sum(tail > tol))]
            return Q, Q.T @ diff
        width = min(Q.shape[1], max_rank - Q.shape[1])  # double the width, up to max_rank columns
    return None


def diagonalize(support: SupportBasis, F1: np.ndarray, F2: np.ndarray, rank_mode: str = "support") -> GaussianPair:
    """Simultaneously diagonalise ``Σ₁ = F₁F₁ᵀ`` and ``Σ₂ = F₂F₂ᵀ`` reusing ``support`` (the SVD of ``F₁``).

    In the whitened coordinates ``G = S⁻¹VᵀF`` we have ``G₁G₁ᵀ = I`` and, with ``E = G₂ − G₁``,
    ``Γ − I = G₁Eᵀ + EG₁ᵀ + EEᵀ``: computed from the small difference ``F₂ − F₁`` (same noise columns), so
    ``β = γ − 1`` keeps its relative accuracy. ``support`` mode (default) restricts both laws to the range
    of ``Σ₁`` and reports mutual singularity when ``Σ₂`` has mass outside it or is singular inside it, i.e.
    when ``Σ₁ + Σ₂`` has a larger range than either. ``paper`` mode (eq. 42–43) projects both onto the
    top eigenvectors of ``Σ₁`` and ignores the rest; by data processing it can only understate δ.

    Low-rank route: when ``F₂ − F₁`` has rank ``r`` of at most :data:`LOW_RANK_SHARE` of the support's
    (:func:`difference_range`; a D-DP-PM neighbour changes one row, and the whole release model by a matrix of
    rank ≲ T²), ``Γ − I`` has rank ≤ 2r and is diagonalised in that subspace: O(N·K·r) instead of O(N³), and
    the pair has ≤ 2r + 1 coordinates instead of N (the rest are merged, :class:`GaussianPair`), which is what
    the exact tails' cost grows with. It gives the dense route's β (tested) up to round-off.
    """
    if rank_mode not in RANK_MODES:
        raise ConfigError(f"methods.ddppm.privacy.rank_mode: unknown mode {rank_mode!r}; use one of {RANK_MODES}")
    if F1.shape != F2.shape:
        raise ValueError(f"covariance factors must have the same shape, got {F1.shape} and {F2.shape}")
    inv_s = 1.0 / support.sv
    G1 = support.Yt
    to_whitened = inv_s[:, None] * support.V.T
    low_rank = difference_range(F1, F2, int(LOW_RANK_SHARE * support.sv.size)) if support.sv.size >= 16 else None
    residual = None
    if low_rank is None:
        E = to_whitened @ (F2 - F1)
        cross = G1 @ E.T
        beta, U = np.linalg.eigh(cross + cross.T + E @ E.T)
        whiten = U.T @ to_whitened
    else:
        # F₂ − F₁ = Q Z has rank r, so E = (S⁻¹VᵀQ) Z and Γ − I = G₁Eᵀ + EG₁ᵀ + EEᵀ lives in the span of
        # S⁻¹VᵀQ and G₁Zᵀ (≤ 2r directions): diagonalise it there; γ = 1 on the rest (merged, see GaussianPair).
        Q, Z = low_rank
        a, c = to_whitened @ Q, G1 @ Z.T
        basis = _orthonormal(np.hstack([a, c]))
        ab, cb = basis.T @ a, basis.T @ c
        cross = cb @ ab.T
        beta, U = np.linalg.eigh(cross + cross.T + ab @ (Z @ Z.T) @ ab.T)
        whiten = U.T @ (basis.T @ to_whitened)
        beta = np.append(beta, 0.0)
        residual = (to_whitened, basis)
    singular = None
    V0 = None
    if rank_mode == "support":
        V0 = support.V0
        if V0.shape[1]:
            outside = float(np.sum((V0.T @ F2) ** 2))  # Frobenius² ≥ largest eigenvalue: conservative
            if outside > support.rtol * support.lam_max:
                singular = (
                    "the adjacent data set's release law has mass outside the original law's support "
                    f"(variance {outside:.3g} vs tolerance {support.rtol * support.lam_max:.3g})"
                )
    if singular is None and beta.size and (1 + beta).min() <= support.rtol:
        # In either mode a (numerically) singular Σ₂ on the retained subspace makes the laws mutually singular.
        singular = "the original release law has mass where the adjacent one has none"
    mean_tol = float(np.sqrt(support.rtol * support.lam_max))
    return GaussianPair(beta=beta, whiten=whiten, V0=V0, mean_tol=mean_tol, singular=singular, residual=residual)


def _orthonormal(M: np.ndarray) -> np.ndarray:
    """An orthonormal basis of the column space of ``M`` (singular values above round-off)."""
    if M.shape[1] == 0:
        return M
    U, s, _ = np.linalg.svd(M, full_matrices=False)
    keep = s > s.max(initial=0.0) * max(M.shape) * np.finfo(float).eps
    return U[:, keep]


def cgf(s: np.ndarray, beta: np.ndarray, w2: np.ndarray) -> np.ndarray:
    """``K(s)`` for each ``s`` (rows) and each realisation's squared coordinates ``w2`` (columns of ``r × R``).

    Returns ``+inf`` where ``Σ_s`` is not positive definite (outside the CGF's domain).
    """
    s = np.atleast_1d(np.asarray(s, float))
    shifted = (1 + s)[:, None] * beta[None, :]
    denom = 1 + shifted
    valid = np.all(denom > 0, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        quad = (s * (1 + s) / 2)[:, None] * ((1 / np.where(denom > 0, denom, 1)) @ w2)
        logdet = np.sum(np.log1p(np.where(denom > 0, shifted, 0)) - (1 + s)[:, None] * np.log1p(beta)[None, :], axis=1)
    K = quad - 0.5 * logdet[:, None]
    K[~valid] = np.inf
    return K


def log_delta_tail(beta: np.ndarray, w2: np.ndarray, eps: np.ndarray, sign: int) -> np.ndarray:
    """``log inf_{s>0} exp(K(sign·s) − sε)``, capped at 0, for every ε (rows) and realisation (columns of ``w2``):
    Theorem 2's bound on the upper (``sign = +1``) or lower (``−1``) tail, by a log-spaced grid of s and a
    golden-section search in ``log s`` (:func:`ddppm.privacy.chernoff.log_delta_tail_many` with one pair)."""
    return log_delta_tail_many([(beta, w2)], eps, sign)[0]


@dataclass(frozen=True)
class TailDeltas:
    """δ for every ε (rows) and realisation (columns): two-sided δ, Theorem 2's δ⁺ and the lower tail δ⁻."""

    delta: np.ndarray
    upper: np.ndarray
    lower: np.ndarray


def deltas_from_pair(pair: GaussianPair, delta_mu: np.ndarray, eps: np.ndarray) -> TailDeltas:
    """δ(ε) of the Gaussian pair for each realised mean difference (columns of ``delta_mu``)."""
    w, outside = pair.coordinates(delta_mu)
    eps = np.asarray(eps, float)
    shape = (eps.size, w.shape[1])
    if pair.singular is not None:
        ones = np.ones(shape)
        return TailDeltas(delta=ones, upper=ones, lower=ones)
    w2 = w**2
    upper = np.exp(log_delta_tail(pair.beta, w2, eps, +1))
    lower = np.exp(log_delta_tail(pair.beta, w2, eps, -1))
    upper[:, outside] = 1.0
    lower[:, outside] = 1.0
    upper, lower = np.nan_to_num(upper, nan=1.0), np.nan_to_num(lower, nan=1.0)  # never understate δ
    return TailDeltas(delta=np.minimum(1.0, upper + lower), upper=upper, lower=lower)


def kl_divergence(pair: GaussianPair, delta_mu: np.ndarray) -> np.ndarray:
    """``KL(P‖Q) = K'(0) = ½ Σ_k [1/γ_k − 1 + w_k²/γ_k + ln γ_k]`` per realisation (``inf`` off-support)."""
    w, outside = pair.coordinates(delta_mu)
    gamma = 1 + pair.beta
    kl = 0.5 * (np.sum(1 / gamma - 1 + np.log(gamma)) + (w**2 / gamma[:, None]).sum(axis=0))
    return np.where(outside, np.inf, kl)


def check_gaussian(mu: np.ndarray, cov: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """A Gaussian's mean and covariance as arrays, or a :class:`PrivacyError` saying what is wrong (shapes,
    finiteness, symmetry, positive semi-definiteness up to a relative tolerance)."""
    mu = np.atleast_1d(np.asarray(mu, float))
    cov = np.atleast_2d(np.asarray(cov, float))
    if mu.ndim != 1 or cov.shape != (mu.size, mu.size):
        raise PrivacyError(
            f"{name}: the mean has shape {mu.shape} but the covariance {cov.shape}; need (N,) and (N, N)"
        )
    if not (np.all(np.isfinite(mu)) and np.all(np.isfinite(cov))):
        raise PrivacyError(f"{name}: mean and covariance must be finite")
    scale = max(float(np.abs(cov).max(initial=0.0)), 1e-300)
    if not np.allclose(cov, cov.T, rtol=0, atol=1e-10 * scale):
        raise PrivacyError(f"{name}: the covariance is not symmetric")
    if np.linalg.eigvalsh((cov + cov.T) / 2).min(initial=0.0) < -1e-9 * scale:
        raise PrivacyError(f"{name}: the covariance is not positive semi-definite")
    return mu, cov


def renyi_divergence(
    mu1: np.ndarray,
    cov1: np.ndarray,
    mu2: np.ndarray,
    cov2: np.ndarray,
    order: float,
    rtol: float = DEFAULT_RANK_RTOL,
) -> float:
    """``D_α(N(μ₁,Σ₁) ‖ N(μ₂,Σ₂))`` for full (possibly singular) covariances; ``inf`` where undefined.

    ``D_α = K(α−1)/(α−1)`` for ``α ≠ 1`` and the Kullback–Leibler divergence for ``α = 1``. Infinite when
    ``Σ_α = αΣ₂ + (1−α)Σ₁`` is not positive definite on the support or the laws are mutually singular.
    """
    if not (np.isfinite(order) and order > 0):
        raise PrivacyError(f"renyi_divergence: the order must be finite and > 0, got {order!r}")
    if not 0 < rtol < 1:
        raise PrivacyError(f"renyi_divergence: rtol must lie in (0, 1), got {rtol!r}")
    mu1, cov1 = check_gaussian(mu1, cov1, "renyi_divergence (mu1, cov1)")
    mu2, cov2 = check_gaussian(mu2, cov2, "renyi_divergence (mu2, cov2)")
    if mu1.shape != mu2.shape:
        raise PrivacyError(f"renyi_divergence: the two laws have dimensions {mu1.size} and {mu2.size}")
    pair = diagonalize(SupportBasis.of_cov(cov1, rtol), cov_factor(cov1), cov_factor(cov2), "support")
    w, outside = pair.coordinates(np.atleast_1d(mu1 - mu2).astype(float))
    if pair.singular is not None or outside[0]:
        return float("inf")
    if order == 1:
        return float(kl_divergence(pair, np.atleast_1d(mu1 - mu2).astype(float))[0])
    w2 = w[:, 0] ** 2
    return float(cgf(np.array([order - 1.0]), pair.beta, w2[:, None])[0, 0] / (order - 1.0))
