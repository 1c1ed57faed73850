"""The synthetic data of Wang & Xu's experiments (§6): the spiked covariance (7), its subspaces, and users'
rows in the unit ball.

Covariance (eq. 7, §6.1; ``λ`` is called ``spike`` here to keep λ for the penalty of problem (5)):

    Σ = (λ / (5p(λ+1))) V Vᵀ + (1 / (5p(λ+1))) I_p,

so ``λ_1 = … = λ_k = 1/(5p)``, ``λ_{k+1} = … = λ_p = 1/(5p(λ+1))`` and the eigengap is ``λ/(5p(λ+1))``.
Low-dimensional case (§6.1): V uniform on the Stiefel manifold (:func:`haar_subspace`). Sparse case (§6.2):
a uniform ``s × k`` orthonormal block padded with zero rows, rows permuted (:func:`sparse_subspace`).

The unit ball. Rows are ``x ~ N(0, Σ)``, for which ``||x||² ~ (1/(5p)) χ²_k + (1/(5p(λ+1))) χ²_{p−k}``; the
paper argues ``||x|| ≤ 1`` with high probability, and Algorithms 1–2 need it for every user. We enforce it
(``norm_enforcement``): ``rescale`` maps a row outside the ball to the sphere (``x/||x||``), ``resample``
redraws it (the law becomes N(0, Σ) conditioned on the ball). The number of rows that needed it is
recorded; at the experiments' settings it is zero (:func:`norm_exceedance_bound` is below 1e-20).

Large n. The server only needs the scatter ``Σ_i x_i x_iᵀ``. For Gaussian rows it is Wishart ``W_p(m, Σ)``,
drawn in ``O(p³)`` by the Bartlett decomposition (:func:`wishart_scatter`) instead of ``O(m p²)`` from rows.
The two laws differ only on the event that some row leaves the ball, so their total-variation distance is at
most ``m · P(||x|| > 1)``, recorded as ``clip_probability_bound``. :func:`nested_scatters` builds the scatters
of nested samples (the first n₁ users, the first n₂ ⊇ n₁, …) from independent blocks, rows for small blocks
and Wishart for large ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

__all__ = [
    "NORM_ENFORCEMENTS",
    "ScatterDraw",
    "covariance",
    "covariance_eigenvalues",
    "haar_subspace",
    "iter_nested_scatters",
    "nested_scatters",
    "norm_exceedance_bound",
    "row_scatter",
    "sample_rows",
    "sparse_subspace",
    "sqrt_covariance_apply",
    "wishart_scatter",
]

NORM_ENFORCEMENTS = ("rescale", "resample")


def covariance_eigenvalues(p: int, spike: float) -> tuple[float, float]:
    """``(λ_1, λ_{k+1}) = (1/(5p), 1/(5p(λ+1)))`` of eq. (7): the top (k-fold) and the bottom eigenvalue."""
    return 1.0 / (5.0 * p), 1.0 / (5.0 * p * (spike + 1.0))


def covariance(V: np.ndarray, spike: float) -> np.ndarray:
    """Σ of eq. (7) for an orthonormal ``V ∈ R^{p×k}`` and spike λ > 0."""
    p = V.shape[0]
    return (spike * V @ V.T + np.eye(p)) / (5.0 * p * (spike + 1.0))


def sqrt_covariance_apply(V: np.ndarray, spike: float, Z: np.ndarray) -> np.ndarray:
    """``Σ^{1/2} Z`` (columns of Z) in ``O(pkm)``: ``Σ^{1/2} = a VVᵀ + b (I − VVᵀ)``, ``a² = λ_1``, ``b² = λ_{k+1}``."""
    top, bottom = covariance_eigenvalues(V.shape[0], spike)
    a, b = np.sqrt(top), np.sqrt(bottom)
    return b * Z + (a - b) * (V @ (V.T @ Z))


def haar_subspace(rng: np.random.Generator, p: int, k: int) -> np.ndarray:
    """Uniformly distributed orthonormal ``V ∈ R^{p×k}`` (QR of a Gaussian matrix, signs fixed)."""
    Q, R = np.linalg.qr(rng.standard_normal((p, k)))
    return Q * np.sign(np.diag(R))


def sparse_subspace(rng: np.random.Generator, p: int, k: int, s: int) -> np.ndarray:
    """§6.2: a uniform orthonormal ``s × k`` block, padded with ``p − s`` zero rows, rows randomly permuted
    (so ``||V||_{2,0} = s``)."""
    if not (k <= s <= p):
        raise ValueError(f"sparse subspace needs k <= s <= p; got k = {k}, s = {s}, p = {p}")
    V = np.zeros((p, k))
    V[rng.permutation(p)[:s]] = haar_subspace(rng, s, k)
    return V


def norm_exceedance_bound(eigenvalues: np.ndarray) -> float:
    """Chernoff bound on ``P(||x||₂ > 1)`` for ``x ~ N(0, Σ)`` with the given eigenvalues of Σ.

    ``||x||² = Σ_i μ_i g_i²``; for ``0 < t < 1/(2 max μ)``, ``P(||x||² ≥ 1) ≤ exp(−t − ½ Σ_i ln(1 − 2tμ_i))``,
    minimised over t. Returns 1 when the bound is vacuous.
    """
    from scipy.optimize import minimize_scalar

    mu = np.asarray(eigenvalues, dtype=float)
    mu = mu[mu > 0]
    if mu.size == 0:
        return 0.0
    if mu.sum() >= 1.0:
        return 1.0
    t_max = 1.0 / (2.0 * mu.max())

    def log_bound(u: float) -> float:  # u in (0, 1): t = u t_max
        t = u * t_max
        return float(-t - 0.5 * np.sum(np.log1p(-2.0 * t * mu)))

    best = minimize_scalar(log_bound, bounds=(1e-12, 1.0 - 1e-12), method="bounded", options={"xatol": 1e-12})
    return float(min(1.0, np.exp(best.fun)))


def _unit_ball_normals(
    rng: np.random.Generator, V: np.ndarray, spike: float, m: int, enforcement: str
) -> tuple[np.ndarray, np.ndarray, int]:
    """Standard normal ``z_i`` (rows of Z) with ``x_i = Σ^{1/2} z_i``, the weights ``w_i`` with
    ``x_i x_iᵀ = w_i Σ^{1/2} z_i z_iᵀ Σ^{1/2}`` after the ball is enforced, and the count outside the ball.

    ``||x||² = λ_{k+1} ||z||² + (λ_1 − λ_{k+1}) ||Vᵀ z||²`` costs ``O(pk)`` per row; ``rescale`` sets
    ``w_i = 1/||x_i||²`` for rows outside the ball, ``resample`` redraws their z.
    """
    if enforcement not in NORM_ENFORCEMENTS:
        raise ValueError(f"unknown norm enforcement {enforcement!r}; use one of {NORM_ENFORCEMENTS}")
    p = V.shape[0]
    top, bottom = covariance_eigenvalues(p, spike)

    def squared_norms(Z: np.ndarray) -> np.ndarray:
        return bottom * np.einsum("ij,ij->i", Z, Z) + (top - bottom) * np.sum((Z @ V) ** 2, axis=1)

    Z = rng.standard_normal((m, p))
    sq = squared_norms(Z)
    bad = np.flatnonzero(sq > 1.0)
    outside = int(bad.size)
    weights = np.ones(m)
    if enforcement == "rescale":
        weights[bad] = 1.0 / sq[bad]
        return Z, weights, outside
    while bad.size:
        Z[bad] = rng.standard_normal((bad.size, p))
        bad = bad[squared_norms(Z[bad]) > 1.0]
        outside += int(bad.size)
    return Z, weights, outside


def _root(V: np.ndarray, spike: float) -> np.ndarray:
    """``Σ^{1/2}`` as a matrix."""
    return sqrt_covariance_apply(V, spike, np.eye(V.shape[0]))


def sample_rows(
    rng: np.random.Generator, V: np.ndarray, spike: float, n: int, enforcement: str = "rescale"
) -> tuple[np.ndarray, int]:
    """``n`` rows ``x ~ N(0, Σ)`` (eq. 7) with ``||x||₂ ≤ 1`` enforced; returns the rows and how many needed it.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    V : ndarray, shape (p, k)
        Orthonormal principal subspace.
    spike : float
        λ of eq. (7).
    n : int
        Number of rows.
    enforcement : {"rescale", "resample"}
        ``rescale``: rows outside the ball are scaled onto the sphere; ``resample``: they are redrawn.

    Returns
    -------
    X : ndarray, shape (n, p)
    outside : int
        Rows drawn outside the ball (rescaled, or rejected and redrawn).
    """
    Z, weights, outside = _unit_ball_normals(rng, V, spike, n, enforcement)
    return (Z @ _root(V, spike)) * np.sqrt(weights)[:, None], outside


def row_scatter(
    rng: np.random.Generator, V: np.ndarray, spike: float, m: int, enforcement: str = "rescale"
) -> tuple[np.ndarray, int]:
    """``Σ_i x_i xᵢᵀ`` of the rows :func:`sample_rows` would draw from the same generator state, as
    ``Σ^{1/2} (Zᵀ diag(w) Z) Σ^{1/2}`` without forming the rows; returns it and the count outside the ball."""
    Z, weights, outside = _unit_ball_normals(rng, V, spike, m, enforcement)
    inner = Z.T @ Z
    odd = np.flatnonzero(weights != 1.0)
    if odd.size:
        inner += (Z[odd].T * (weights[odd] - 1.0)) @ Z[odd]
    B = _root(V, spike)
    return B @ inner @ B, outside


def wishart_scatter(rng: np.random.Generator, V: np.ndarray, spike: float, m: int) -> np.ndarray:
    """A draw of ``Σ_{i≤m} x_i x_iᵀ`` for m i.i.d. ``N(0, Σ)`` rows: ``W_p(m, Σ)`` by the Bartlett decomposition.

    ``W = (Σ^{1/2} A)(Σ^{1/2} A)ᵀ`` with A lower triangular, ``A_ii² ~ χ²_{m−i}`` (i = 0..p−1) and standard
    normal entries below the diagonal. Needs ``m >= p``.
    """
    p = V.shape[0]
    if m < p:
        raise ValueError(f"the Bartlett decomposition needs m >= p; got m = {m}, p = {p}")
    A = np.tril(rng.standard_normal((p, p)), -1)
    A[np.diag_indices(p)] = np.sqrt(rng.chisquare(m - np.arange(p)))
    B = sqrt_covariance_apply(V, spike, A)
    return B @ B.T


@dataclass(frozen=True)
class ScatterDraw:
    """Scatter ``Σ_{i≤n} x_i x_iᵀ`` of the first n users, and how it was drawn.

    Attributes
    ----------
    n : int
        Number of users.
    scatter : ndarray, shape (p, p)
    rows_drawn : int
        Users drawn as explicit rows (the rest, ``n − rows_drawn``, came from Wishart blocks).
    rows_outside_ball : int
        Explicit rows that were outside the unit ball before enforcement.
    clip_probability_bound : float
        Bound on the total-variation distance between the Wishart blocks and rows with the ball enforced:
        ``(n − rows_drawn) × P(||x|| > 1)``.
    """

    n: int
    scatter: np.ndarray
    rows_drawn: int
    rows_outside_ball: int
    clip_probability_bound: float


def iter_nested_scatters(
    rng: np.random.Generator,
    V: np.ndarray,
    spike: float,
    n_values: list[int],
    max_row_entries: int,
    enforcement: str = "rescale",
) -> Iterator[ScatterDraw]:
    """Scatters of nested samples of sizes ``n_values`` (increasing), built from independent blocks, one at a
    time (a generator: the draws of a block happen when it is reached).

    The block between consecutive sizes has ``m`` new users; it is drawn as rows (:func:`row_scatter`) when
    ``m p <= max_row_entries`` or ``m < p``, else from the Wishart law (:func:`wishart_scatter`).
    """
    n_values = [int(n) for n in n_values]
    if any(b <= a for a, b in zip(n_values, n_values[1:], strict=False)) or n_values[0] < 1:
        raise ValueError(f"sample sizes must be increasing and positive, got {n_values}")
    p, k = V.shape
    top, bottom = covariance_eigenvalues(p, spike)
    exceed = norm_exceedance_bound(np.r_[np.full(k, top), np.full(p - k, bottom)])
    total = np.zeros((p, p))
    previous = rows = outside = 0
    for n in n_values:
        m = n - previous
        if m * p <= max_row_entries or m < p:
            scatter, bad = row_scatter(rng, V, spike, m, enforcement)
            total = total + scatter
            rows += m
            outside += bad
        else:
            total = total + wishart_scatter(rng, V, spike, m)
        previous = n
        yield ScatterDraw(n, total.copy(), rows, outside, float(min(1.0, (n - rows) * exceed)))


def nested_scatters(
    rng: np.random.Generator,
    V: np.ndarray,
    spike: float,
    n_values: list[int],
    max_row_entries: int,
    enforcement: str = "rescale",
) -> list[ScatterDraw]:
    """All of :func:`iter_nested_scatters` at once."""
    return list(iter_nested_scatters(rng, V, spike, n_values, max_row_entries, enforcement))
