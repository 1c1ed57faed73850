"""Exact tails of the privacy loss of two Gaussians: a generalised non-central χ², by saddle-point contour inversion.

Setting
-------
``P = N(μ₁, Σ₁)``, ``Q = N(μ₂, Σ₂)``. After the simultaneous diagonalisation of :mod:`ddppm.privacy.gaussian`
(whitened coordinates with ``Σ₁ = I``, ``Σ₂ = diag(γ_k)``, ``γ_k = 1 + β_k > 0``, ``Δμ = μ₁ − μ₂ ↦ w``) the
privacy loss ``ℒ = ln p(y)/q(y)`` is, for ``y ~ P`` (``y = μ₁ + u``, ``u ~ N(0, I)``),

    ℒ = Σ_k [ a_k u_k² + b_k u_k + c_k ],   a_k = ½(1/γ_k − 1),  b_k = w_k/γ_k,  c_k = ½ w_k²/γ_k + ½ ln γ_k,

a generalised (non-central) χ² variable. Its cumulant generating function is

    K(z) = ln E_P e^{zℒ} = z(1+z)/2 Σ_k w_k²/d_k(z) − ½ Σ_k [ ln d_k(z) − (1+z) ln(1+β_k) ],
    d_k(z) = 1 + (1+z)β_k,

finite on the real interval ``s_lo < s < s_hi`` where every ``d_k(s) > 0`` (``s_lo ≤ −1 < 0 < s_hi``). Only
``w_k²`` enters (the law is symmetric under ``u → −u``). Under ``Q`` (``y = μ₂ + Σ₂^{1/2} v``, i.e.
``u = −w + γ^{1/2} v`` in the same coordinates) ℒ is the generalised χ² ``Σ_k a_k(√γ_k v_k − w_k)² +
b_k(√γ_k v_k − w_k) + c_k`` and its CGF is ``K_Q(z) = ln E_Q (p/q)^z = ln E_P (p/q)^{z−1} = K(z − 1)``.

How the tails are inverted (Lévy inversion along a steepest-descent contour through the saddle point), the
degenerate cases, the accuracy measured against independent routes, and the batched form
(:func:`exact_tails_many`): docs/exact_tails.md.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = ["ExactTails", "exact_tails", "exact_tails_many", "loss_cgf"]

_GL_NODES = 8  # Gauss–Legendre nodes per polygon edge
_GL_X, _GL_W = np.polynomial.legendre.leggauss(_GL_NODES)
_GL_T = (1 + _GL_X) / 2  # nodes on [0, 1]
_GL_H = _GL_W / 2  # weights on [0, 1]
# first and second derivative at t = 1 of the polynomial through the nodes (Legendre basis, d/dt = 2 d/dx)
_k = np.arange(_GL_NODES)
_VINV = np.linalg.inv(np.polynomial.legendre.legvander(_GL_X, _GL_NODES - 1))
_D1 = 2 * (_k * (_k + 1) / 2) @ _VINV
_D2 = 4 * ((_k - 1) * _k * (_k + 1) * (_k + 2) / 8) @ _VINV
_BLOCK = 1 << 15  # elements per block in the vectorised CGF evaluation
_C_START = 2.0  # first edge ≤ _C_START / sqrt(ψ''(s₀))
_C_DROP = 6.0  # an edge lowers Re ψ by about this much (first order)
_C_CURV = 2.0  # edge ≤ _C_CURV / sqrt|ψ''|
_C_SING = 0.7  # edge ≤ _C_SING × distance to the nearest singularity
_TOL = 1e-11  # stop when |integrand| × distance travelled < _TOL × (saddle value × σ)
_MAX_EDGES = 200
_LOG_UNDERFLOW = -780.0
_H_CANCEL = 0.1  # recompute H on the positive side when the residue form gives H below this
_GRID = 32  # bracketing grid points per real sub-interval (s_lo, −1), (−1, 0), (0, s_hi)
_NEWTON_ITERS = 100
_NEWTON_RTOL = 1e-8


@dataclass(frozen=True)
class ExactTails:
    """Exact privacy-loss tails, each of shape ``(E, R)`` (ε rows, realisations columns).

    Attributes
    ----------
    upper
        ``Pr_P(ℒ > ε)``.
    lower
        ``Pr_P(ℒ < −ε)``.
    delta
        ``min(1, upper + lower)``: the exact counterpart of the two-sided Chernoff δ.
    hockey_stick
        ``H(ε) = E_P[(1 − e^{ε−ℒ})₊] = Pr_P(ℒ > ε) − e^ε Pr_Q(ℒ > ε)`` (Definition 1).
    """

    upper: np.ndarray
    lower: np.ndarray
    delta: np.ndarray
    hockey_stick: np.ndarray


# ---------------------------------------------------------------------------------------------- the CGF


def _as_inputs(beta: np.ndarray, w2: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    beta = np.asarray(beta, float).reshape(-1)
    w2 = np.asarray(w2, float)
    vector = w2.ndim == 1
    w2 = w2[:, None] if vector else w2
    if w2.ndim != 2 or w2.shape[0] != beta.size:
        raise ValueError(f"w2 must have shape (K,) or (K, R) with K = {beta.size}, got {w2.shape}")
    if beta.size and not np.all(beta > -1):
        raise ValueError("every γ_k = 1 + β_k must be > 0")
    if np.any(w2 < 0):
        raise ValueError("w2 holds squared coordinates: it must be ≥ 0")
    return beta, w2, vector


def loss_cgf(z: np.ndarray | complex, beta: np.ndarray, w2: np.ndarray) -> np.ndarray:
    """CGF of the privacy loss, ``K(z) = ln E_P e^{zℒ}``, at real or complex ``z``.

    ``K(z) = z(1+z)/2 Σ_k w_k²/d_k − ½ Σ_k [ln d_k − (1+z) ln(1+β_k)]``, ``d_k = 1 + (1+z)β_k``.

    Parameters
    ----------
    z
        Points, any shape ``S``. Real input gives a real result, ``+inf`` outside the domain (where some
        ``d_k ≤ 0``). Complex input gives the continuation with the principal logarithm of each factor
        ``d_k`` (summed, never the logarithm of their product): the analytic continuation of K from the
        real domain to the plane cut along the real axis outside it; on ``Re z`` inside the domain every
        ``Re d_k > 0``.
    beta
        ``β_k = γ_k − 1 > −1``, shape ``(K,)``.
    w2
        Squared whitened mean differences ``w_k²``, shape ``(K,)`` or ``(K, R)`` (one column per realisation).

    Returns
    -------
    numpy.ndarray
        Shape ``S + (R,)``, or ``S`` when ``w2`` is 1-D.
    """
    beta, w2, vector = _as_inputs(beta, w2)
    z = np.asarray(z)
    shape = z.shape
    ell = np.log1p(beta)
    if np.iscomplexobj(z):
        zf = z.reshape(-1).astype(complex)
        one_z = 1 + zf
        p = 1 + one_z.real[:, None] * beta
        b = zf.imag[:, None] * beta
        m = p * p + b * b
        with np.errstate(divide="ignore", invalid="ignore"):
            inv_d = (p - 1j * b) / m
            log_d = (0.5 * np.log(m) + 1j * np.arctan2(b, p)).sum(1)
        out = (zf * one_z / 2)[:, None] * (inv_d @ w2) - 0.5 * (log_d - one_z * ell.sum())[:, None]
    else:
        sf = z.reshape(-1).astype(float)
        shifted = (1 + sf)[:, None] * beta
        inside = np.all(1 + shifted > 0, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            quad = (sf * (1 + sf) / 2)[:, None] * ((1 / np.where(inside[:, None], 1 + shifted, 1.0)) @ w2)
            logdet = np.sum(np.log1p(np.where(inside[:, None], shifted, 0.0)) - (1 + sf)[:, None] * ell, axis=1)
        out = quad - 0.5 * logdet[:, None]
        out[~inside] = np.inf
    out = out.reshape(*shape, w2.shape[1])
    return out[..., 0] if vector else out


def _sum_last(x: np.ndarray) -> np.ndarray:
    """``x.sum(-1)`` as a matrix-vector product with ones (BLAS), up to the order of the additions: numpy reduces a
    short contiguous last axis one row at a time, which costs more than the arithmetic when the axis holds a few
    eigenvalues and the rows are many (3–30× slower at 11 to 127 terms). Below 8 terms, slice additions in order;
    arrays not in C order go to numpy itself."""
    K = x.shape[-1]
    if K == 0 or not x.flags.c_contiguous:
        return x.sum(-1)
    if K < 8:
        total = x[..., 0].copy()
        for k in range(1, K):
            total += x[..., k]
        return total
    return (x.reshape(-1, K) @ _ones(K)).reshape(x.shape[:-1])


@lru_cache(maxsize=64)
def _ones(K: int) -> np.ndarray:
    ones = np.ones(K)
    ones.flags.writeable = False
    return ones


def _real_derivs(s: np.ndarray, beta: np.ndarray, ell_sum: float, W: np.ndarray) -> tuple[np.ndarray, ...]:
    """``K, K', K''`` and ``max_k |β_k/d_k|`` at real ``s`` (shape ``(M,)``), rows ``W`` (``(M, K)``) of ``w²``.

    With ``r_k = 1/d_k``: ``K' = (1+2s)/2 Σw²r − s(1+s)/2 Σw²βr² − ½Σβr + ½Σ ln(1+β)``,
    ``K'' = Σw²r − (1+2s)Σw²βr² + s(1+s)Σw²β²r³ + ½Σβ²r²``.
    """
    one_s = 1 + s
    shifted = one_s[:, None] * beta
    # A grid point on the domain's edge (d_k = 0) gives ±inf/NaN there, which the bracketing treats as
    # outside the domain; no warning is wanted for it.
    with np.errstate(divide="ignore", invalid="ignore"):
        r = 1 / (1 + shifted)
        br = beta * r
        Wr = W * r
        Wbr = Wr * br
        S1, S2, S3 = _sum_last(Wr), _sum_last(Wbr), _sum_last(Wbr * br)
        K = s * one_s / 2 * S1 - 0.5 * (_sum_last(np.log1p(shifted)) - one_s * ell_sum)
        K1 = (1 + 2 * s) / 2 * S1 - s * one_s / 2 * S2 - 0.5 * _sum_last(br) + 0.5 * ell_sum
        K2 = S1 - (1 + 2 * s) * S2 + s * one_s * S3 + 0.5 * _sum_last(br * br)
        lam = np.abs(br).max(1, initial=0.0)
    return K, K1, K2, lam


def _real_slope(s: np.ndarray, beta: np.ndarray, ell_sum: float, w2: np.ndarray) -> np.ndarray:
    """``K'(s)`` for grid points ``s`` (``(S,)``) and every realisation: shape ``(S, R)``."""
    one_s = 1 + s
    r = 1 / (1 + one_s[:, None] * beta)
    br = beta * r
    S1 = r @ w2
    S2 = (r * br) @ w2
    return ((1 + 2 * s) / 2)[:, None] * S1 - (s * one_s / 2)[:, None] * S2 + (0.5 * (ell_sum - br.sum(1)))[:, None]


def _complex_cgf(
    z: np.ndarray, beta: np.ndarray, ell_sum: float, W: np.ndarray, Wb: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``K(z)`` at complex nodes ``z`` (``(M, n)``); ``W`` and ``Wb = W·β`` are the elements' rows ``(M, K)``;
    ``beta`` is ``(K,)`` or one row per element ``(M, K)`` (then ``ell_sum`` is ``(M,)``).

    ``ln d_k = ½ ln|d_k|² + i atan2(Im d_k, Re d_k)`` factor by factor; ``Σ w²/d_k = Σ w²(Re d_k − i Im d_k)/|d_k|²``
    with ``Re d_k = 1 + (1 + Re z)β_k`` and ``Im d_k = β_k Im z``: two matrix products per element. Also returns
    ``max_k |β_k/d_k|`` at the last node of each row (the inverse distance to the nearest branch point).
    Works in blocks of rows to stay in cache.
    """
    M, n = z.shape
    out = np.empty((M, n), complex)
    lam = np.empty(M)
    A = 1 + z.real
    B = z.imag
    per_element = beta.ndim == 2  # one β row per element (a batch of pairs, zero-padded)
    ell = np.broadcast_to(np.asarray(ell_sum, float), (M,))
    b2 = beta * beta
    rows = max(1, _BLOCK // max(1, n * beta.shape[-1]))
    for i in range(0, M, rows):
        sl = slice(i, i + rows)
        a_, b_ = A[sl], B[sl]
        bet = beta[sl][:, None, :] if per_element else beta
        p = np.multiply(a_[..., None], bet)
        p += 1
        b = np.multiply(b_[..., None], bet)
        m = p * p
        t = b * b
        m += t
        ang = _sum_last(np.arctan2(b, p, out=b))
        log_re = 0.5 * _sum_last(np.log(m, out=t))
        inv = np.reciprocal(m, out=m)
        lam[sl] = np.sqrt(np.max(inv[:, -1, :] * (b2[sl] if per_element else b2), axis=-1, initial=0.0))
        S0 = np.matmul(inv, W[sl, :, None])[..., 0]  # Σ w²/|d|²
        S1 = np.matmul(inv, Wb[sl, :, None])[..., 0]  # Σ w²β/|d|²
        zz = z[sl]
        quad = S0 + a_ * S1 - 1j * (b_ * S1)  # Σ w²/d_k
        out[sl] = zz * (1 + zz) / 2 * quad - 0.5 * (log_re + 1j * ang - (1 + zz) * ell[sl, None])
    return out, lam


# ------------------------------------------------------------------------------------ support and domain


def _domain(beta: np.ndarray) -> tuple[float, float]:
    """``(s_lo, s_hi)``: the open interval of real s with every ``1 + (1+s)β_k > 0`` (``s_lo ≤ −1``, ``s_hi > 0``)."""
    neg, pos = beta < 0, beta > 0
    s_hi = float(np.min(-(1 + beta[neg]) / beta[neg])) if neg.any() else np.inf
    s_lo = float(np.max(-1 - 1 / beta[pos])) if pos.any() else -np.inf
    return s_lo, s_hi


def _support(beta: np.ndarray, w2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(ess inf ℒ, ess sup ℒ)`` per realisation.

    A coordinate with ``β_k > 0`` (``a_k < 0``) is bounded above by its vertex ``w_k²/(2β_k) + ½ ln(1+β_k)``,
    one with ``β_k < 0`` bounded below by the same expression; ``β_k = 0`` with ``w_k ≠ 0`` is Gaussian.
    """
    pos, neg, zero = beta > 0, beta < 0, beta == 0
    vertex = np.zeros_like(w2)
    nz = ~zero
    vertex[nz] = w2[nz] / (2 * beta[nz, None]) + 0.5 * np.log1p(beta[nz, None])
    gauss = (w2[zero] > 0).any(axis=0)
    lmax = np.where(neg.any() | gauss, np.inf, vertex[pos].sum(0))
    lmin = np.where(pos.any() | gauss, -np.inf, vertex[neg].sum(0))
    return lmin, lmax


# ------------------------------------------------------------------------------------------ saddle point


@lru_cache(maxsize=256)
def _subgrid(a: float, b: float) -> np.ndarray:
    """Bracketing grid inside ``(a, b)``: geometric in the distance to each finite end (a pole or the domain's
    edge, where ψ' varies on every scale), from ``1e-12`` (relative to the width if below 1) up to mid-way."""
    if np.isfinite(a) and np.isfinite(b):
        width = b - a
        dist = np.geomspace(1e-12 * min(width, 1.0), width / 2, _GRID // 2)
        grid = np.concatenate([a + dist, b - dist[::-1]])
    else:
        dist = np.geomspace(1e-12, 1e12, _GRID)
        grid = a + dist if np.isfinite(a) else b - dist[::-1]
    grid.flags.writeable = False  # shared by every call with these ends (cached: most pairs share (−1, 0))
    return grid


def _bracket(
    beta: np.ndarray,
    ell_sum: float,
    w2: np.ndarray,
    x: np.ndarray,
    col: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    hs: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """A bracket ``(a, b)`` of the root of ``ψ'`` for every element of one pair, from a shared grid of ``K'``."""
    s_lo, s_hi = _domain(beta)
    pieces = [(lo_, hi_) for lo_, hi_ in ((s_lo, -1.0), (-1.0, 0.0), (0.0, s_hi)) if hi_ > lo_]
    grid = np.concatenate([_subgrid(a, b) for a, b in pieces])
    grid = grid[(grid > s_lo) & (grid < s_hi) & (grid != 0) & (grid != -1) & (np.abs(grid) < 1e100)]
    grid = grid[np.all(1 + (1 + grid)[:, None] * beta > 0, axis=1)]  # points rounded onto the domain's edge
    slope = _real_slope(grid, beta, ell_sum, w2).T  # (R, S)
    with np.errstate(divide="ignore", invalid="ignore"):
        dpsi = slope[col] - x[:, None] - 1 / grid - hs[:, None] / (1 + grid)  # (M, S)
    inside = (grid > lo[:, None]) & (grid < hi[:, None])
    below = inside & (dpsi < 0)
    above = inside & ~(dpsi < 0)
    a = np.where(below, grid, -np.inf).max(1)
    b = np.where(above, grid, np.inf).min(1)
    a = np.where(np.isfinite(a), a, lo)
    b = np.where(np.isfinite(b), b, hi)
    return a, b


def _newton(
    a: np.ndarray,
    b: np.ndarray,
    beta_el: np.ndarray,
    ell_el: np.ndarray | float,
    W: np.ndarray,
    x: np.ndarray,
    hs: np.ndarray,
) -> np.ndarray:
    """Safeguarded Newton on ``ψ'`` inside each element's bracket ``(a, b)``; ``beta_el`` is ``(K,)`` or one row
    per element, ``W`` the elements' rows of ``w²``."""
    s = _split(a, b)
    done = np.zeros(s.size, bool)
    for _ in range(_NEWTON_ITERS):
        act = np.flatnonzero(~done)
        if act.size == 0:
            break
        sa = s[act]
        _, K1, K2, lam = _real_derivs(sa, _beta_rows(beta_el, act), _ell_rows(ell_el, act), W[act])
        h = hs[act]
        g = K1 - x[act] - 1 / sa - h / (1 + sa)
        gp = K2 + 1 / sa**2 + h / (1 + sa) ** 2
        aa = np.where(g < 0, sa, a[act])
        bb = np.where(g < 0, b[act], sa)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = g / gp
            # converged: the step is tiny relative to the distance to the nearest singularity
            near = np.minimum(np.minimum(np.abs(sa), 1 / lam), np.where(h > 0, np.abs(1 + sa), np.inf))
        sn = sa - step
        inside = (sn > aa) & (sn < bb)
        conv = np.abs(step) <= _NEWTON_RTOL * near
        sn = np.where(inside, sn, np.where(conv, sa, _split(aa, bb)))
        a[act], b[act], s[act] = aa, bb, sn
        done[act[conv]] = True
    return s


def _beta_rows(beta: np.ndarray, index: np.ndarray) -> np.ndarray:
    """The β rows of the elements ``index``: ``beta`` itself when shared ``(K,)``, else its rows ``(M, K)``."""
    return beta[index] if beta.ndim == 2 else beta


def _ell_rows(ell_sum: np.ndarray | float, index: np.ndarray) -> np.ndarray | float:
    """``Σ ln(1 + β_k)`` of the elements ``index``: a scalar when shared, else per element ``(M,)``."""
    return ell_sum[index] if np.ndim(ell_sum) == 1 else ell_sum


def _split(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A point strictly inside ``(a, b)``: geometric when the bracket spans decades on one side of 0 or −1
    (a thousandth of the way when it ends at the pole), linear otherwise, ×4 towards an infinite end."""
    out = (a + b) / 2
    for c in (0.0, -1.0):
        da, db = a - c, b - c
        right = (da >= 0) & (db > 4 * da)  # (c + da, c + db), far from c relative to da
        left = (db <= 0) & (-da > -4 * db)
        with np.errstate(invalid="ignore", over="ignore"):
            out = np.where(right, c + np.where(da > 0, np.sqrt(da * db), 1e-3 * db), out)
            out = np.where(left, c - np.where(db < 0, np.sqrt(da * db), -1e-3 * da), out)
    out = np.where(np.isinf(b), np.where(a > 0, 4 * a, a + 1), out)
    out = np.where(np.isinf(a), np.where(b < -1, 4 * b, b - 1), out)
    return out


# ------------------------------------------------------------------------------------------------ contour


def _contour(
    s0: np.ndarray,
    x: np.ndarray,
    hs: np.ndarray,
    beta: np.ndarray,
    ell_sum: float,
    W: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``e^{ψ(s₀)}``-scaled inversion integrals along a steepest-descent polygon from each saddle ``s₀``.

    Returns ``log_scale = K(s₀) − s₀x``, ``I = Im ∫ e^{q(z)}/z dz / π`` and ``I_H = Im ∫ e^{q(z)}/(z(1+z)) dz / π``
    over the upper half of the path (``q = K(z) − zx − K(s₀) + s₀x``), and the number of edges used, so that
    the inversion integrals of the module docstring are ``e^{log_scale} · I`` and ``e^{log_scale} · I_H``.
    """
    M = s0.size
    K0, _, K2, lam0 = _real_derivs(s0, beta, ell_sum, W)
    log_scale = K0 - s0 * x
    sigma = 1 / np.sqrt(K2 + 1 / s0**2 + hs / (1 + s0) ** 2)
    with np.errstate(divide="ignore"):
        dist = np.minimum(np.abs(s0), 1 / lam0)
    dist = np.where(hs > 0, np.minimum(dist, np.abs(1 + s0)), dist)
    Wb = W * beta
    z = s0.astype(complex)
    dz = 1j * np.minimum(_C_START * sigma, _C_SING * dist)
    acc = np.zeros(M, complex)
    acc_h = np.zeros(M, complex)
    ref = sigma / np.abs(s0)
    ref_h = ref / np.abs(1 + s0)
    edges = np.zeros(M, int)
    # results below ~1e-340 underflow whatever the integral (which is ≲ σ/|s₀|): skip them
    active = np.flatnonzero(log_scale + np.log(np.maximum(1.0, ref)) > _LOG_UNDERFLOW)
    for _ in range(_MAX_EDGES):
        if active.size == 0:
            break
        za, dza = z[active], dz[active]
        zn = za[:, None] + dza[:, None] * _GL_T
        xa, s0a, ha = x[active], s0[active], hs[active]
        Kz, lam = _complex_cgf(zn, _beta_rows(beta, active), _ell_rows(ell_sum, active), W[active], Wb[active])
        q = Kz - K0[active, None] - (zn - s0a[:, None]) * xa[:, None]
        f = np.exp(q) / zn
        fh = f / (1 + zn)
        acc[active] += (f @ _GL_H) * dza
        acc_h[active] += (fh @ _GL_H) * dza
        edges[active] += 1
        zend = za + dza
        z[active] = zend
        # ψ' and ψ'' at the end of the edge: q' and q'' from the interpolating polynomial, the poles exactly
        g = (q @ _D1) / dza - 1 / zend - ha / (1 + zend)
        h = (q @ _D2) / dza**2 + 1 / zend**2 + ha / (1 + zend) ** 2
        reach = np.maximum(np.abs(zend - s0a), sigma[active])
        stop = np.abs(f[:, -1]) * reach < _TOL * ref[active]
        stop &= (ha == 0) | (np.abs(fh[:, -1]) * reach < _TOL * ref_h[active])
        with np.errstate(divide="ignore"):
            d = np.minimum(np.abs(zend), 1 / lam)
        d = np.where(ha > 0, np.minimum(d, np.abs(1 + zend)), d)
        absg = np.abs(g)
        u = np.where(absg > 0, -np.conj(g) / np.where(absg > 0, absg, 1), 1j)
        with np.errstate(divide="ignore"):
            step = np.minimum(np.minimum(_C_DROP / absg, _C_CURV / np.sqrt(np.abs(h))), _C_SING * d)
            # never approach the real axis (where all singularities are) by more than half the height
            step = np.where(u.imag < 0, np.minimum(step, 0.5 * zend.imag / -u.imag), step)
        dz[active] = step * u
        active = active[~stop]
    if active.size:
        warnings.warn(
            f"exact_tails: {active.size} contour(s) not converged after {_MAX_EDGES} edges",
            RuntimeWarning,
            stacklevel=3,
        )
    return log_scale, acc.imag / np.pi, acc_h.imag / np.pi, edges


# -------------------------------------------------------------------------------------------------- API


def _gaussian_tails(w2: np.ndarray, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``Pr(ℒ > ε)``, ``Pr(ℒ < −ε)`` for ``ℒ ~ N(D²/2, D²)`` (every β = 0); ``ℒ ≡ 0`` when ``D = 0``."""
    from scipy.special import ndtr

    D = np.sqrt(w2.sum(0))[None, :]
    e = eps[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        upper = ndtr((D * D / 2 - e) / D)
        lower = ndtr((-e - D * D / 2) / D)
    upper = np.where(D > 0, upper, (e < 0).astype(float))
    lower = np.where(D > 0, lower, (e < 0).astype(float))
    return upper, lower


@dataclass
class _Pair:
    """One pair's elements (``2·E·R``: family U, x = ε, with the hockey stick; then family L, x = −ε) and what
    :func:`_exact_many` needs of it."""

    beta: np.ndarray
    w2: np.ndarray
    ell_sum: float
    s_hi: float
    lmin: np.ndarray
    lmax: np.ndarray
    col: np.ndarray
    x: np.ndarray
    fam_u: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    hs: np.ndarray
    gauss: bool
    run: np.ndarray

    @classmethod
    def of(cls, beta: np.ndarray, w2: np.ndarray, eps: np.ndarray) -> _Pair:
        E, R = eps.size, w2.shape[1]
        ell = np.log1p(beta)
        s_lo, s_hi = _domain(beta)
        lmin, lmax = _support(beta, w2)
        mean_p = 0.5 * (w2 / (1 + beta)[:, None]).sum(0) + 0.5 * float(np.sum(ell - beta / (1 + beta)))
        mean_q = -0.5 * w2.sum(0) + 0.5 * float(np.sum(ell - beta))
        col = np.tile(np.arange(R), 2 * E)
        x = np.concatenate([np.repeat(eps, R), np.repeat(-eps, R)])
        fam_u = np.arange(2 * E * R) < E * R
        mp, mq = mean_p[col], mean_q[col]
        lo = np.where(fam_u, np.where(x >= mp, 0.0, np.where(x >= mq, -1.0, s_lo)), np.where(x <= mp, s_lo, 0.0))
        hi = np.where(fam_u, np.where(x >= mp, s_hi, np.where(x >= mq, 0.0, -1.0)), np.where(x <= mp, 0.0, s_hi))
        # outside the support the answer is exact: Pr(ℒ > x) = 0 for x ≥ sup, Pr(ℒ < x) = 0 for x ≤ inf, …
        trivial = (x >= lmax[col]) | (x <= lmin[col])
        gauss = not np.any(beta != 0)
        if gauss:
            trivial |= ~fam_u  # Gaussian tails are closed-form; the contour is only used for H
        return cls(beta, w2, float(ell.sum()), s_hi, lmin, lmax, col, x, fam_u, lo, hi, fam_u.astype(float), gauss,
                   np.flatnonzero(~trivial))  # fmt: skip


def _contours(pairs: list[_Pair], elements: list[np.ndarray], lo: list[np.ndarray], hi: list[np.ndarray]) -> list:
    """Saddle points and contour integrals of the given elements of every pair in one vectorised pass: each pair
    brackets its saddles on its own grid, then Newton and the contour walk run on all elements at once with one
    β row per element (zero-padded: a coordinate with β = 0 and w = 0 adds nothing to K or its derivatives).
    Returns, per pair, ``(s₀, log_scale, I, I_H, edges)`` of its elements."""
    K = max((p.beta.size for p in pairs), default=0)
    a_all, b_all, x_all, hs_all, W_all, beta_all, ell_all, sizes = [], [], [], [], [], [], [], []
    for p, idx, lo_, hi_ in zip(pairs, elements, lo, hi, strict=True):
        sizes.append(idx.size)
        if not idx.size:
            continue
        a, b = _bracket(p.beta, p.ell_sum, p.w2, p.x[idx], p.col[idx], lo_, hi_, p.hs[idx])
        a_all.append(a)
        b_all.append(b)
        x_all.append(p.x[idx])
        hs_all.append(p.hs[idx])
        W_all.append(np.pad(p.w2.T[p.col[idx]], ((0, 0), (0, K - p.beta.size))))
        beta_all.append(np.broadcast_to(np.pad(p.beta, (0, K - p.beta.size)), (idx.size, K)))
        ell_all.append(np.full(idx.size, p.ell_sum))
    if not a_all:
        return [(np.zeros(0),) * 4 + (np.zeros(0, int),) for _ in pairs]
    x, hs, W = np.concatenate(x_all), np.concatenate(hs_all), np.vstack(W_all)
    beta, ell = np.vstack(beta_all), np.concatenate(ell_all)
    s0 = _newton(np.concatenate(a_all), np.concatenate(b_all), beta, ell, W, x, hs)
    log_scale, i_t, i_h, edges = _contour(s0, x, hs, beta, ell, W)
    bounds = np.cumsum([0, *sizes])
    return [
        (s0[i:j], log_scale[i:j], i_t[i:j], i_h[i:j], edges[i:j]) for i, j in zip(bounds[:-1], bounds[1:], strict=True)
    ]


def _exact_many(inputs: list[tuple[np.ndarray, np.ndarray]], eps: np.ndarray) -> list[tuple[ExactTails, np.ndarray]]:
    """:func:`exact_tails_many` with the contour edges used per element (``(2, E, R)`` per pair)."""
    E = eps.size
    pairs = [_Pair.of(beta, w2, eps) for beta, w2 in inputs]
    tail_gt = [np.zeros(p.x.size) for p in pairs]  # Pr(ℒ > x) for U, Pr(ℒ < x) for L
    hock = [np.zeros(p.x.size) for p in pairs]
    edges = [np.zeros(p.x.size, int) for p in pairs]
    found = _contours(pairs, [p.run for p in pairs], [p.lo[p.run] for p in pairs], [p.hi[p.run] for p in pairs])
    redo = []
    for k, (p, (s0, log_scale, i_t, i_h, n_edges)) in enumerate(zip(pairs, found, strict=True)):
        run = p.run
        scale = np.exp(log_scale)
        neg = s0 < 0
        u = p.fam_u[run]
        with np.errstate(invalid="ignore", over="ignore"):
            tail_gt[k][run] = np.where(u, scale * i_t + neg, np.where(neg, -scale * i_t, 1 - scale * i_t))
            hock[k][run] = np.where(u, scale * i_h + neg - np.where(s0 < -1, np.exp(p.x[run]), 0.0), 0.0)
        edges[k][run] = n_edges
        # H from a contour left of 0 is 1 (− e^x) + I_H: when H is small that cancels, so redo those on s₀ > 0,
        # where the integral is H itself (only when P and Q are nearly indistinguishable and ε < KL(P‖Q))
        redo.append(run[u & neg & (hock[k][run] < _H_CANCEL)])
    if any(r.size for r in redo):
        zero = [np.zeros(r.size) for r in redo]
        top = [np.full(r.size, p.s_hi) for p, r in zip(pairs, redo, strict=True)]
        again = _contours(pairs, redo, zero, top)
        for k, (r, (_, log_scale, _, i_h, n_edges)) in enumerate(zip(redo, again, strict=True)):
            hock[k][r] = np.exp(log_scale) * i_h
            edges[k][r] += n_edges
    out = []
    for k, p in enumerate(pairs):
        R = p.w2.shape[1]
        # exact values outside the support
        fam_u, x, col = p.fam_u, p.x, p.col
        xu, cu = x[fam_u], col[fam_u]
        up = np.where(xu >= p.lmax[cu], 0.0, np.where(xu <= p.lmin[cu], 1.0, tail_gt[k][fam_u]))
        with np.errstate(over="ignore"):
            hk = np.where(xu >= p.lmax[cu], 0.0, np.where(xu <= p.lmin[cu], -np.expm1(xu), hock[k][fam_u]))
        xl, cl = x[~fam_u], col[~fam_u]
        low = np.where(xl <= p.lmin[cl], 0.0, np.where(xl >= p.lmax[cl], 1.0, tail_gt[k][~fam_u]))
        upper, lower, hockey = up.reshape(E, R), low.reshape(E, R), hk.reshape(E, R)
        if p.gauss:
            upper, lower = _gaussian_tails(p.w2, eps)
        upper, lower = np.clip(upper, 0.0, 1.0) + 0.0, np.clip(lower, 0.0, 1.0) + 0.0  # + 0.0: no −0.0
        hockey = np.clip(hockey, 0.0, 1.0) + 0.0
        tails = ExactTails(upper=upper, lower=lower, delta=np.minimum(1.0, upper + lower), hockey_stick=hockey)
        out.append((tails, edges[k].reshape(2, E, R)))
    return out


def _exact(beta: np.ndarray, w2: np.ndarray, eps: np.ndarray) -> tuple[ExactTails, np.ndarray]:
    return _exact_many([(beta, w2)], eps)[0]


def exact_tails_many(inputs: list[tuple[np.ndarray, np.ndarray]], eps: np.ndarray) -> list[ExactTails]:
    """:func:`exact_tails` of many pairs ``(beta, w2)`` (each with its own K and R) at one ε grid, in one
    vectorised pass: the same numbers as one call per pair, without the per-call overhead that dominates small
    pairs (a D-DP-PM neighbour's pair has ≤ 2r + 1 coordinates on the low-rank route)."""
    eps = np.atleast_1d(np.asarray(eps, float)).reshape(-1)
    checked = [_as_inputs(beta, w2)[:2] for beta, w2 in inputs]
    keys = [_memo_key(beta, w2, eps) for beta, w2 in checked]
    todo = list({key: k for k, key in reversed(list(enumerate(keys))) if key not in _MEMO}.values())
    for chunk in _chunks([checked[k][0].size for k in todo], [2 * eps.size * checked[k][1].shape[1] for k in todo]):
        for k, (tails, _) in zip(chunk, _exact_many([checked[todo[k]] for k in chunk], eps), strict=True):
            _remember(keys[todo[k]], tails)
    return [_MEMO[key] for key in keys]


_MEMO: dict[bytes, ExactTails] = {}
_MEMO_SIZE = 20_000
"""The tails of recent inputs, by their bytes (:func:`exact_tails_many`): a calibration asks for the same pair at
the same parameters more than once (a candidate's neighbour search, then its confirmation over a pool that holds
the neighbours the search found), and the answer is a function of the inputs' bytes. At most :data:`_MEMO_SIZE`
entries (about 2 kB each), the oldest dropped first; the arrays are read-only."""


def _memo_key(beta: np.ndarray, w2: np.ndarray, eps: np.ndarray) -> bytes:
    digest = hashlib.blake2b(digest_size=20)
    for array in (beta, w2, eps):
        digest.update(np.ascontiguousarray(array).tobytes())
        digest.update(repr(array.shape).encode())
    return digest.digest()


def _remember(key: bytes, tails: ExactTails) -> None:
    for array in (tails.upper, tails.lower, tails.delta, tails.hockey_stick):
        array.flags.writeable = False
    if len(_MEMO) >= _MEMO_SIZE:
        del _MEMO[next(iter(_MEMO))]
    _MEMO[key] = tails


_BATCH_CELLS = 1 << 22
"""Elements × padded K of one vectorised pass of :func:`exact_tails_many` (32 MB per array of that shape)."""


def _chunks(sizes: list[int], elements: list[int]) -> list[list[int]]:
    """Pairs grouped by K (ascending) into passes of at most :data:`_BATCH_CELLS` padded cells (a pair alone may
    exceed it) whose K stay within about twice the smallest, so one large pair does not pad many small ones."""
    chunks: list[list[int]] = []
    current: list[int] = []
    count = 0
    for k in sorted(range(len(sizes)), key=lambda i: sizes[i]):
        too_big = (count + elements[k]) * max(sizes[k], 1) > _BATCH_CELLS
        too_wide = bool(current) and sizes[k] > 2 * sizes[current[0]] + 8  # padding would more than double the work
        if current and (too_big or too_wide):
            chunks.append(current)
            current, count = [], 0
        current.append(k)
        count += elements[k]
    return chunks + ([current] if current else [])


def exact_tails(beta: np.ndarray, w2: np.ndarray, eps: np.ndarray) -> ExactTails:
    """Exact ``Pr_P(ℒ > ε)``, ``Pr_P(ℒ < −ε)`` and hockey-stick divergence ``H(ε)`` of two Gaussians.

    The law of ``ℒ`` is that of the module docstring (a generalised non-central χ²); the values are
    computed by saddle-point contour inversion of its CGF :func:`loss_cgf` (see the module docstring), with
    relative accuracy ~1e-9 even for tails far below 1e-40.

    Parameters
    ----------
    beta
        ``β_k = γ_k − 1 > −1``, shape ``(K,)``, shared by all realisations.
    w2
        ``w_k²``, shape ``(K, R)`` (or ``(K,)`` for one realisation).
    eps
        ε values, shape ``(E,)`` (any real ε is accepted).

    Returns
    -------
    ExactTails
        ``upper``, ``lower``, ``delta = min(1, upper + lower)`` and ``hockey_stick``, each ``(E, R)``.
        The exact counterparts of the Chernoff bounds ``δ⁺ = inf_{s>0} e^{K(s)−sε} ≥ upper`` and
        ``δ⁻ = inf_{s>0} e^{K(−s)−sε} ≥ lower``; ``0 ≤ hockey_stick ≤ upper``.
    """
    beta, w2, _ = _as_inputs(beta, w2)
    eps = np.atleast_1d(np.asarray(eps, float)).reshape(-1)
    return _exact(beta, w2, eps)[0]
