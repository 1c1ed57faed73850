r"""Implicit-feedback data for the private power method experiment, and its preprocessing (Nicolas et al., App. B).

``R ∈ {0, 1}^{users × items}`` (scipy.sparse CSR, float64 ones) is either a seeded synthetic low-rank Bernoulli
matrix (:func:`synthetic_interactions`) or MovieLens downloaded from a pinned URL (:func:`load_movielens`).

Preprocessing (J. Nicolas, C. Sabater, M. Maouche, S. Ben Mokhtar and M. Coates, "Differentially private and
decentralized randomized power method", arXiv:2411.01931, Appendix B, after Y. Shen et al., "How powerful is
graph convolution for recommendation?", CIKM 2021, arXiv:2108.07567):

* user degrees ``d_u = Σ_i R_ui`` and item degrees ``I = diag(1ᵀR)``;
* the user-normalised item–item matrix ``Ã = (D^{-1/2}R)ᵀ(D^{-1/2}R) = Σ_u d_u⁻¹ R_uᵀ R_u`` (their eq. 50–51),
  never formed densely: ``Ã X = Rᵀ D⁻¹ (R X)`` (:class:`ItemItemOperator`);
* the ideal low-pass filter ``R_p = R I^{-1/2} U_p U_pᵀ I^{1/2}`` (their eq. 75) with ``U_p`` the top-p
  eigenvectors of Ã, its private counterpart ``R̃_p`` (eq. 76) and the relative error
  ``‖R̃_p − R_p‖_F / ‖R_p‖_F`` (:func:`filter_errors`), computed from ``p × p`` Gram matrices without forming
  any ``users × items`` dense matrix.
"""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ddppm.core.errors import DataError
from ddppm.data.sources import download

MOVIELENS_10M: dict[str, Any] = {
    "url": "https://files.grouplens.org/datasets/movielens/ml-10m.zip",
    "sha256": "813c411ccb6122564edfe752e7f80c4dcc5aa25fa94c93622f6877a7ba252862",
    "md5": "ce571fd55effeba0271552578f2648bd",
    "bytes": 65_566_137,
    "member": "ml-10M100K/ratings.dat",
}
"""The MovieLens 10M archive (F. M. Harper and J. A. Konstan, "The MovieLens datasets: history and context", ACM
TiiS 5(4), 2015): GroupLens publishes its MD5; the sha256 pinned here comes from a third-party record of the same
65,566,137-byte archive and could not be re-verified offline."""

MOVIELENS_10M_SHAPE = (71_567, 10_677, 7_972_582)
"""Users, items and training interactions of MovieLens-10M after their preprocessing (their Table 3)."""


# ------------------------------------------------------------------------------------------- synthetic


def synthetic_interactions(
    users: int,
    items: int,
    density: float,
    rank: int = 10,
    seed: int = 0,
    *,
    activity_spread: float = 1.0,
    popularity_spread: float = 1.2,
    concentration: float = 0.3,
    block_users: int = 1024,
) -> sp.csr_matrix:
    r"""A seeded implicit-feedback matrix from a low-rank Bernoulli model, every user and item non-empty.

    ``P(R_ui = 1) = min(1, λ a_u b_i · r θ_uᵀ φ_i)``: user activity ``a_u = exp(activity_spread · z_u)`` and item
    popularity ``b_i = exp(popularity_spread · z_i)`` (log-normal, heavy-tailed like real catalogues), tastes
    ``θ_u, φ_i ~ Dirichlet(concentration · 1_r)`` over ``r = rank`` communities (so the unclipped probability
    matrix has rank ≤ r), and λ such that the expected number of interactions is ``density · users · items``
    (:func:`_intensity`). Rows are drawn in blocks of ``block_users``, so memory stays ``O(block_users · items)``
    and the cost is one uniform draw per user–item pair. A user or item left empty gets one interaction drawn from the
    popularity (resp. activity) weights, so the shape is exactly ``users × items``.

    Returns
    -------
    scipy.sparse.csr_matrix
        Float64 ones, shape ``(users, items)``, sorted indices.
    """
    if users < 1 or items < 1 or not (0 < density < 1) or rank < 1:
        raise DataError(
            f"synthetic interactions need users, items, rank >= 1 and 0 < density < 1 (got {users}, {items}, "
            f"{rank}, {density}); fix `ppm.data`"
        )
    rng = np.random.default_rng(seed)
    a = np.exp(activity_spread * rng.standard_normal(users))
    b = np.exp(popularity_spread * rng.standard_normal(items))
    theta = rng.dirichlet(np.full(rank, concentration), size=users) * a[:, None]
    phi = rng.dirichlet(np.full(rank, concentration), size=items).T * (b * rank)[None, :]
    lam = _intensity(theta, phi, density * users * items, rng)
    rows, cols = [], []
    prob, draw, hit = (np.empty((min(users, block_users), items), dtype=t) for t in (float, float, bool))
    for start in range(0, users, block_users):
        k = min(users, start + block_users) - start
        np.matmul(theta[start : start + k], phi, out=prob[:k])
        prob[:k] *= lam
        np.minimum(prob[:k], 1.0, out=prob[:k])
        rng.random(out=draw[:k])
        np.less(draw[:k], prob[:k], out=hit[:k])
        r, c = np.nonzero(hit[:k])
        rows.append(r + start)
        cols.append(c)
    R = _binary_csr(np.concatenate(rows), np.concatenate(cols), (users, items))
    empty_users = np.flatnonzero(np.diff(R.indptr) == 0)
    empty_items = np.flatnonzero(np.asarray(R.sum(axis=0)).ravel() == 0)
    if empty_users.size or empty_items.size:
        extra_cols = rng.choice(items, size=empty_users.size, p=b / b.sum())
        extra_rows = rng.choice(users, size=empty_items.size, p=a / a.sum())
        coo = R.tocoo()
        R = _binary_csr(
            np.concatenate([coo.row, empty_users, extra_rows]),
            np.concatenate([coo.col, extra_cols, empty_items]),
            (users, items),
        )
    return R


def _intensity(theta: np.ndarray, phi: np.ndarray, target: float, rng: np.random.Generator) -> float:
    """λ with ``Σ_ui min(1, λ θ_uᵀφ_i) = target``: the unclipped sum ``λ (Σ_u θ_u)ᵀ(Σ_i φ_i)`` is exact, the
    clipped excess ``Σ max(0, λ θ_uᵀφ_i − 1)`` is estimated on up to 2048 users (exact when there are fewer),
    and the equation is solved by bisection on the sorted sample."""
    users = theta.shape[0]
    total = float(theta.sum(axis=0) @ phi.sum(axis=1))
    sample = rng.choice(users, size=min(users, 2048), replace=False)
    base = np.sort((theta[sample] @ phi).ravel())[::-1]
    cumulative = np.cumsum(base)
    scale = users / sample.size

    def expected(lam: float) -> float:
        above = int(np.searchsorted(-base, -1.0 / lam, side="left"))  # entries with λ·base > 1
        excess = lam * cumulative[above - 1] - above if above else 0.0
        return lam * total - scale * excess

    lo, hi = 0.0, target / total
    while expected(hi) < target:
        if hi * base[-1] >= 1:
            raise DataError(f"no intensity gives {target:.0f} interactions: lower `ppm.data.density`")
        lo, hi = hi, hi * 2
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if expected(mid) < target else (lo, mid)
    return (lo + hi) / 2


def _binary_csr(rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]) -> sp.csr_matrix:
    """A 0/1 CSR matrix with ones at (rows, cols), duplicates merged."""
    R = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=shape)
    R.sum_duplicates()
    R.data[:] = 1.0
    R.sort_indices()
    return R


# ------------------------------------------------------------------------------------------- MovieLens


def _cache_dir(cache_dir: str | Path | None) -> Path:
    """Download directory: ``cache_dir``, else ``$DDPPM_CACHE_DIR``, else ``~/.cache/ddppm`` (as the other
    data sets)."""
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get("DDPPM_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "ddppm"


def read_ratings(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """User and item ids (first two fields) of a ratings file: ``u::i::rating::time`` (MovieLens 1M/10M) or a
    comma/tab separated table with or without a header line (``userId,movieId,...``)."""
    text = data.replace(b"::", b"\t")
    first = text.split(b"\n", 1)[0]
    sep = "\t" if b"\t" in first else ","
    header = not first.split(sep.encode(), 1)[0].strip().isdigit()
    table = pd.read_csv(io.BytesIO(text), sep=sep, header=0 if header else None, usecols=[0, 1], engine="c")
    if table.isna().any().any() or not all(np.issubdtype(t, np.integer) for t in table.dtypes):
        raise DataError("the ratings file's first two columns must be integer user and item ids")
    return table.iloc[:, 0].to_numpy(), table.iloc[:, 1].to_numpy()


def load_movielens(
    url: str,
    sha256: str,
    *,
    member: str | None = MOVIELENS_10M["member"],
    cache_dir: str | Path | None = None,
    timeout: float = 60.0,
) -> tuple[sp.csr_matrix, dict[str, Any]]:
    """Download a MovieLens ratings file (checksum pinned, atomic: :func:`ddppm.data.sources.download`) and
    return every rating as an interaction (implicit feedback), users and items renumbered in id order.

    ``member`` is the ratings file inside a zip archive (``None``: the download is the ratings file itself).
    """
    name = Path(url.split("?")[0]).name or "ratings"
    path = download(url, sha256, _cache_dir(cache_dir) / f"ppm-{sha256.strip().lower()[:12]}-{name}", timeout)
    if member is None:
        data = path.read_bytes()
    else:
        try:
            with zipfile.ZipFile(path) as archive:
                data = archive.read(member)
        except (zipfile.BadZipFile, KeyError) as exc:
            raise DataError(f"{url}: cannot read {member!r} from the archive ({exc}); fix `ppm.data.member`") from exc
    user_ids, item_ids = read_ratings(data)
    users, user_index = np.unique(user_ids, return_inverse=True)
    items, item_index = np.unique(item_ids, return_inverse=True)
    R = _binary_csr(user_index, item_index, (users.size, items.size))
    return R, {"url": url, "sha256": sha256.strip().lower(), "member": member, "ratings": int(len(user_ids))}


def train_split(R: sp.csr_matrix, train_fraction: float, seed: int) -> sp.csr_matrix:
    """Their App. B.2 split at the user level: each user keeps ``⌊train_fraction · d_u⌋`` interactions (drawn at
    random) for training and at least one for testing; returns the training matrix (users and items kept)."""
    if not 0 < train_fraction <= 1:
        raise DataError(f"ppm.data.train_fraction must be in (0, 1], got {train_fraction}")
    if train_fraction == 1:
        return R
    rng = np.random.default_rng(seed)
    keep = np.zeros(R.nnz, dtype=bool)
    for u in range(R.shape[0]):
        start, stop = R.indptr[u], R.indptr[u + 1]
        d = stop - start
        n_train = min(int(np.floor(train_fraction * d)), d - 1)
        keep[start + rng.choice(d, size=max(n_train, 0), replace=False)] = True
    coo = R.tocoo()
    return _binary_csr(coo.row[keep], coo.col[keep], R.shape)


def clean_interactions(R: sp.spmatrix) -> tuple[sp.csr_matrix, dict[str, Any]]:
    """Binarise R and drop empty users and items (d_u = 0 or I_i = 0 would divide by zero in D⁻¹ and I^{-1/2})."""
    R = sp.csr_matrix(R)
    R.data[:] = 1.0
    R.eliminate_zeros()
    users = np.flatnonzero(np.diff(R.indptr) > 0)
    items = np.flatnonzero(np.asarray(R.sum(axis=0)).ravel() > 0)
    out = _binary_csr(*R[users][:, items].nonzero(), (users.size, items.size))
    info = {
        "users": int(out.shape[0]),
        "items": int(out.shape[1]),
        "interactions": int(out.nnz),
        "density": float(out.nnz / (out.shape[0] * out.shape[1])),
        "dropped_users": int(R.shape[0] - users.size),
        "dropped_items": int(R.shape[1] - items.size),
    }
    return out, info


# --------------------------------------------------------------------------------- item–item operator


class ItemItemOperator:
    """``Ã = Rᵀ D⁻¹ R = Σ_u d_u⁻¹ R_uᵀ R_u`` (their eq. 50–51) as an operator on ``items × K`` blocks.

    Products go through the sparse R, ``Ã X = Rᵀ (D⁻¹ (R X))``, in column blocks of ``block`` columns (the
    sparse–dense product is fastest when the block of X fits in cache). ``clients`` splits the users into that
    many contiguous groups (``A^{(c)} = Σ_{u ∈ c} d_u⁻¹ R_uᵀ R_u``; ``None``: one client per user, the paper's
    decentralised setting). ``dtype`` is the floating-point type of the products: float32 halves their time (they
    are memory-bound) with a relative rounding of about 1e-7, far below any DP noise of the experiment.
    """

    def __init__(
        self, R: sp.spmatrix, clients: int | None = None, block: int = 16, dtype: np.dtype | type = np.float64
    ) -> None:
        self.R = sp.csr_matrix(R, dtype=dtype)
        self.RT = self.R.T  # CSC view of Rᵀ: its product scatters rows, faster than a CSR copy
        self.user_degrees = np.asarray(self.R.sum(axis=1), dtype=np.float64).ravel()
        self.item_degrees = np.asarray(self.R.sum(axis=0), dtype=np.float64).ravel()
        if (self.user_degrees == 0).any() or (self.item_degrees == 0).any():
            raise DataError("the interaction matrix has empty users or items; call clean_interactions first")
        self.n = self.R.shape[1]
        self.clients = self.R.shape[0] if clients is None else int(clients)
        if not 1 <= self.clients <= self.R.shape[0]:
            raise DataError(f"ppm.clients = {clients} must lie in [1, users = {self.R.shape[0]}]")
        self._bounds = np.linspace(0, self.R.shape[0], self.clients + 1).round().astype(int)
        self.block = int(block)
        self.dtype = np.dtype(dtype)
        self._inverse_degrees = (1 / self.user_degrees).astype(self.dtype)

    def _product(self, R: sp.csr_matrix, inverse_degrees: np.ndarray, X: np.ndarray) -> np.ndarray:
        out = np.empty((self.n, X.shape[1]))
        for start in range(0, X.shape[1], self.block):
            cols = slice(start, start + self.block)
            inner = R @ np.ascontiguousarray(X[:, cols], dtype=self.dtype)
            inner *= inverse_degrees[:, None]
            out[:, cols] = R.T @ inner
        return out

    def matmul(self, X: np.ndarray) -> np.ndarray:
        """``Ã X`` for ``X`` of shape ``(items, K)`` (computed in ``dtype``, returned in float64)."""
        return self._product(self.R, self._inverse_degrees, X)

    def client_matmul(self, client: int, X: np.ndarray) -> np.ndarray:
        """``A^{(c)} X`` for the users of client ``c``."""
        lo, hi = self._bounds[client], self._bounds[client + 1]
        return self._product(self.R[lo:hi], self._inverse_degrees[lo:hi], X)

    def dense(self) -> np.ndarray:
        """Ã as a dense float64 ``items × items`` array (AnalyzeGauss only)."""
        R = sp.csr_matrix(self.R, dtype=np.float64)
        return (R.T @ sp.diags(1 / self.user_degrees) @ R).toarray()


def top_eigenvectors(operator: ItemItemOperator, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Top-k eigenvalues (descending) and eigenvectors ``U_k`` of Ã, by Lanczos (``eigsh``) through products with
    the sparse R (dense ``eigh`` when Ã is small)."""
    from scipy.sparse.linalg import LinearOperator, eigsh

    n = operator.n
    if n <= 400 or 2 * k + 1 >= n:
        values, vectors = np.linalg.eigh(operator.dense())
        return values[::-1][:k], vectors[:, ::-1][:, :k]
    linear = LinearOperator((n, n), matvec=lambda x: operator.matmul(x.reshape(n, -1)).ravel(), dtype=np.float64)
    v0 = np.random.default_rng(seed).standard_normal(n)
    values, vectors = eigsh(linear, k=k, which="LA", v0=v0, tol=1e-12, ncv=min(n, max(2 * k + 1, 64)))
    order = np.argsort(values)[::-1]
    return values[order], vectors[:, order]


# ------------------------------------------------------------------------------------ low-pass filter


class FilterError:
    r"""Relative error ``‖R̃_p − R_p‖_F / ‖R_p‖_F`` of the ideal low-pass filter (their eq. 75–76).

    With ``B = R I^{-1/2}``, ``M = B Ũ``, ``N = B U`` and ``J = I`` (item degrees),

    .. math::
        ‖R̃_p − R_p‖_F^2 = \mathrm{tr}(MᵀM · ŨᵀJŨ) − 2\,\mathrm{tr}(MᵀN · UᵀJŨ) + \mathrm{tr}(NᵀN · UᵀJU),

    since ``R̃_p − R_p = B (ŨŨᵀ − UUᵀ) J^{1/2}``; only ``users × p`` products with the sparse R are formed, and
    everything that depends on the reference ``U`` alone is computed once.

    Parameters
    ----------
    R : sparse matrix
        Interactions, ``users × items``.
    item_degrees : numpy.ndarray
        ``1ᵀR`` (all positive).
    reference : numpy.ndarray
        ``U``, ``items × k``, orthonormal columns.
    """

    def __init__(self, R: sp.spmatrix, item_degrees: np.ndarray, reference: np.ndarray) -> None:
        self.B = sp.csr_matrix(R) @ sp.diags(1 / np.sqrt(item_degrees))
        self.degrees = np.asarray(item_degrees, dtype=float)
        self.U = reference
        self.N = self.B @ reference
        self.norm_sq = float(np.einsum("ij,ji->", self.N.T @ self.N, reference.T @ (reference * self.degrees[:, None])))

    def __call__(self, estimates: np.ndarray) -> np.ndarray:
        """The error of every run; ``estimates`` is ``Ũ`` of shape ``(runs, items, k)``, orthonormal columns."""
        errors = np.empty(estimates.shape[0])
        for r, Ut in enumerate(estimates):
            M = self.B @ Ut
            JUt = Ut * self.degrees[:, None]
            err_sq = (
                np.einsum("ij,ji->", M.T @ M, Ut.T @ JUt)
                - 2 * np.einsum("ij,ji->", M.T @ self.N, self.U.T @ JUt)
                + self.norm_sq
            )
            errors[r] = np.sqrt(max(err_sq, 0.0) / self.norm_sq)
        return errors


def filter_errors(R: sp.spmatrix, item_degrees: np.ndarray, reference: np.ndarray, estimates: np.ndarray) -> np.ndarray:
    """``FilterError(R, item_degrees, reference)(estimates)``: one relative error per run (see :class:`FilterError`)."""
    return FilterError(R, item_degrees, reference)(estimates)
