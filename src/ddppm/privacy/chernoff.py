"""Theorem 2's Chernoff bound on a tail of the privacy loss, for many pairs at once (the paper's eq. 29–34).

For one pair in its diagonalised form (generalised eigenvalues ``γ_k = 1 + β_k``, squared whitened mean difference
``w_k²``; :mod:`ddppm.privacy.gaussian`) the loss's CGF at ``±s`` is

    K(±s) = ±s(1 ± s)/2 Σ_k w_k² / (1 + (1 ± s)β_k) − ½ Σ_k [ log1p((1 ± s)β_k) − (1 ± s) log1p(β_k) ],

and the bound on the upper (``+``) or lower (``−``) tail is ``inf_{s>0} exp(K(±s) − sε)``. The infimum is found
in ``log s``: a log-spaced grid of ``_GRID_POINTS`` brackets the minimiser of the convex objective, then
``_GOLDEN_STEPS`` golden-section steps refine it, for every (ε, realisation) at once.

Every realisation of every pair is one column here: a calibration asks for the bound of hundreds of pairs, each
with a few eigenvalues, and one pair at a time spent most of its time in numpy's per-call overhead. Pairs with
fewer eigenvalues are padded with ``β = 0, w² = 0``, which add exactly 0 to both sums; the columns are processed
in chunks of similar size (sorted by the number of eigenvalues) to bound the memory.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

_S_CAP = 1e8
_GRID_POINTS = 160
_GOLDEN_STEPS = 40
_CHUNK = 1 << 19  # grid points × columns × eigenvalues evaluated at once (4 MB per float array)


def _domain_limit(beta: np.ndarray, sign: int) -> float:
    """Largest ``s > 0`` with ``1 + (1 + sign·s) β_k > 0`` for all k (``inf`` if unbounded)."""
    bad = beta < 0 if sign > 0 else beta > 0
    if not np.any(bad):
        return np.inf
    b = beta[bad]
    return float(np.min((1 + b) / np.abs(b)))


def _objective(s: np.ndarray, beta: np.ndarray, w2: np.ndarray, log1p_beta: np.ndarray, eps: np.ndarray, sign: int):
    """``K(sign·s) − sε`` for ``s`` of shape ``(A, C)`` (A points per column), the columns' ``beta`` and ``w2``
    ``(C, K)``; ``eps`` broadcasts against ``s`` (``(A, 1)`` or a scalar). ``+inf`` outside the CGF's domain."""
    shifted = (1 + sign * s)[..., None] * beta
    denom = 1 + shifted
    inside = np.all(denom > 0, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        quad = sign * s * (1 + sign * s) / 2 * np.einsum("ack,ck->ac", 1 / np.where(denom > 0, denom, 1), w2)
        logdet = np.sum(np.log1p(np.where(denom > 0, shifted, 0)) - (1 + sign * s)[..., None] * log1p_beta, axis=-1)
    return np.where(inside, quad - 0.5 * logdet - s * eps, np.inf)


def _columns(beta: np.ndarray, w2: np.ndarray, eps: np.ndarray, hi: np.ndarray, sign: int) -> np.ndarray:
    """``log inf_s exp(K(sign·s) − sε)`` (before the cap at 0) of columns with ``beta`` and ``w2`` ``(C, K)``
    whose ``s`` is searched in ``(1e-10·min(1, hi), hi)``: shape ``(E, C)``."""
    log1p_beta = np.log1p(beta)
    lo = 1e-10 * np.minimum(1.0, hi)
    log_s = np.linspace(np.log(lo), np.log(hi), _GRID_POINTS)  # (S, C)
    grid_s = np.exp(log_s)
    grid_K = _objective(grid_s, beta, w2, log1p_beta, 0.0, sign)  # K(sign·s) at every grid point
    grid_obj = grid_K[:, None, :] - grid_s[:, None, :] * eps[None, :, None]  # (S, E, C)
    best = np.argmin(grid_obj, axis=0)  # (E, C)
    column = np.arange(beta.shape[0])
    a = log_s[np.maximum(best - 1, 0), column]
    b = log_s[np.minimum(best + 1, _GRID_POINTS - 1), column]
    e = eps[:, None]

    refined = golden_section_min(lambda ls: _objective(np.exp(ls), beta, w2, log1p_beta, e, sign), a, b, _GOLDEN_STEPS)
    return np.minimum(refined, np.min(grid_obj, axis=0))


def golden_section_min(objective: Callable[[np.ndarray], np.ndarray], a: np.ndarray, b: np.ndarray, steps: int):
    """The least value ``objective`` takes at the last two probes of ``steps`` golden-section steps in every
    bracket ``[a, b]`` at once (elementwise; ``objective`` maps an array of points to their values)."""
    ratio = (np.sqrt(5) - 1) / 2
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = objective(c), objective(d)
    for _ in range(steps):
        left = fc < fd  # minimiser in [a, d] (old c becomes d) or in [c, b] (old d becomes c)
        a, b = np.where(left, a, c), np.where(left, d, b)
        c_new = np.where(left, b - ratio * (b - a), d)
        d_new = np.where(left, c, a + ratio * (b - a))
        f_probe = objective(np.where(left, c_new, d_new))
        fc, fd = np.where(left, f_probe, fd), np.where(left, fc, f_probe)
        c, d = c_new, d_new
    return np.minimum(fc, fd)


def log_delta_tail_many(items: list[tuple[np.ndarray, np.ndarray]], eps: np.ndarray, sign: int) -> list[np.ndarray]:
    """``log inf_{s>0} exp(K(sign·s) − sε)``, capped at 0, of every pair ``(beta, w2)`` of ``items`` (``beta`` of
    shape ``(K,)``, ``w2`` of shape ``(K, R)``): for each, an array ``(E, R)`` (ε rows, realisations columns).

    The same bound as one pair at a time (:func:`ddppm.privacy.gaussian.log_delta_tail` is this with one pair),
    up to the order of the sums' terms."""
    eps = np.asarray(eps, float)
    items = [(np.asarray(beta, float).reshape(-1), np.asarray(w2, float)) for beta, w2 in items]
    out: list[np.ndarray] = [np.empty((eps.size, w2.shape[1])) for _, w2 in items]
    order = sorted(range(len(items)), key=lambda i: items[i][0].size)
    start = 0
    while start < len(order):
        stop, columns = start, 0
        while stop < len(order):  # sorted by size: the last pair taken is the widest of the chunk
            R, width = items[order[stop]][1].shape[1], max(1, items[order[stop]][0].size)
            if columns and _GRID_POINTS * (columns + R) * width > _CHUNK:
                break
            columns, stop = columns + R, stop + 1
        chunk = order[start:stop]
        width = max(1, max(items[i][0].size for i in chunk))
        beta = np.zeros((columns, width))
        w2 = np.zeros((columns, width))
        hi = np.empty(columns)
        col = 0
        for i in chunk:
            b, v = items[i]
            R = v.shape[1]
            beta[col : col + R, : b.size] = b
            w2[col : col + R, : b.size] = v.T
            hi[col : col + R] = min(_S_CAP, _domain_limit(b, sign) * (1 - 1e-12))
            col += R
        result = np.minimum(_columns(beta, w2, eps, hi, sign), 0.0)
        col = 0
        for i in chunk:
            R = items[i][1].shape[1]
            out[i][:] = result[:, col : col + R]
            col += R
        start = stop
    return out
