"""The release model ``y = M q^(0) + L P`` (eq. 19–21) and an observer's conditional view (eq. 27–29).

Two equivalent representations are provided.

* :func:`release_matrices` builds M and L literally (``(mdT+n) × n`` and ``(mdT+n) × nT``). It is the
  reference that tests compare against the simulated algorithm.
* :class:`ReducedReleaseModel` is the exact, much smaller form used by the accountant. The final
  iterate of agent ``k`` is ``q_k^(T) = α X_k z_k^(T+1/2) + p_k^(T)``; its component orthogonal to
  ``span(X_k) ∪ span(X'_k)`` is pure noise ``p_k^(T)`` that is independent of every other release and
  has the same law under ``X`` and ``X'`` (or is known to the observer, for ``k = i``). Dropping it leaves
  the privacy loss unchanged. With an orthonormal basis ``B_k`` of that span, ``Dᵀ(X)e = Hᵀ Bᵀe`` with
  ``H = blockdiag(B_kᵀ X_k)``, so every release is a linear map of the projected noises ``Bᵀ q^(0)``,
  ``Bᵀ p^(t)`` and ``Dᵀ (αΞ)^j = (αGK)^j Dᵀ`` with ``G = DᵀD`` and ``K = m (W^c ⊗ I_d)``: all matrices
  are ``md``- or ``b``-dimensional instead of ``n``-dimensional.

Paper erratum (eq. 21): ``z^(t) = Dᵀ q^(t-1)`` does not depend on ``p^(t)``; the block of L that multiplies
``p^(k)`` in ``z^(t)`` is ``Dᵀ (αΞ)^{t-1-k}`` for ``k < t`` and 0 for ``k ≥ t``. Eq. (21) as printed puts
``Dᵀ`` at ``k = t``, which the simulation identity test rejects. The last block row is ``(αΞ)^{T-k}``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ddppm.core.errors import ConfigError
from ddppm.core.problem import DistributedProblem
from ddppm.privacy.threat_models import VIEWS


def release_dimension(problem: DistributedProblem, T: int) -> int:
    """``mdT + n``: the length of the stacked release ``y`` (eq. 12)."""
    return problem.m * problem.d * T + problem.n


def release_matrices(problem: DistributedProblem, alpha: float, T: int) -> tuple[np.ndarray, np.ndarray]:
    """``M`` (eq. 20) and ``L`` (eq. 21, corrected; see module docstring) such that ``y = M q^(0) + L P``.

    ``P = [p^(1); …; p^(T)]`` (eq. 15). Block row ``t ≤ T`` of ``M`` is ``Dᵀ(X)(αΞ)^{t-1}``; the last
    block row is ``(αΞ)^T``.
    """
    from scipy.linalg import block_diag

    n, md = problem.n, problem.m * problem.d
    Dt = block_diag(*[Xi.T for Xi in problem.blocks])
    A = alpha * problem.Xi
    powers = [np.eye(n)]
    for _ in range(T):
        powers.append(A @ powers[-1])
    M = np.zeros((md * T + n, n))
    L = np.zeros((md * T + n, n * T))
    for t in range(1, T + 1):
        rows = slice((t - 1) * md, t * md)
        M[rows] = Dt @ powers[t - 1]
        for k in range(1, t):
            L[rows, (k - 1) * n : k * n] = Dt @ powers[t - 1 - k]
    M[md * T :] = powers[T]
    for k in range(1, T + 1):
        L[md * T :, (k - 1) * n : k * n] = powers[T - k]
    return M, L


def view_rows(
    problem: DistributedProblem, T: int, observer: int, view: str, q_dims: np.ndarray | None = None
) -> np.ndarray:
    """Indices of ``y`` that observer ``i`` sees (docs/privacy.md, *view*; the paper view is eq. 22–25).

    ``network``: all of ``y``. ``paper``: ``y_i = S_i y`` (eq. 22–25), agent i's own ``z_i^(t)`` and its
    block of ``q^(T)``. ``q_dims`` gives the per-agent length of the ``q^(T)`` part (``n_k`` for the full
    model, ``b_k`` for the reduced one).
    """
    if view not in VIEWS:
        raise ConfigError(f"threat_models.<name>.view: unknown view {view!r}; use one of {VIEWS}")
    q_dims = problem.sizes if q_dims is None else np.asarray(q_dims)
    md, d = problem.m * problem.d, problem.d
    total = md * T + int(q_dims.sum())
    if view == "network":
        return np.arange(total)
    z_rows = [np.arange((t * md) + observer * d, (t * md) + (observer + 1) * d) for t in range(T)]
    q_start = md * T + int(q_dims[:observer].sum())
    return np.concatenate([*z_rows, np.arange(q_start, q_start + int(q_dims[observer]))])


def own_columns(sizes: np.ndarray, n_sources: int, observer: int) -> np.ndarray:
    """Columns of ``[q^(0); p^(1); …; p^(T)]`` that belong to the observer's own randomness (eq. 27–28)."""
    return own_columns_of_sources([sizes] * n_sources, observer)


def own_columns_of_sources(source_sizes: list[np.ndarray], observer: int) -> np.ndarray:
    """Columns of stacked sources ``[s_1; s_2; …]``, each agent-major with per-agent lengths
    ``source_sizes[k]``, that belong to agent ``observer`` (in source order)."""
    columns, start = [], 0
    for sizes in source_sizes:
        offsets = start + np.concatenate([[0], np.cumsum(sizes)])
        columns.append(np.arange(offsets[observer], offsets[observer + 1]))
        start = int(offsets[-1])
    return np.concatenate(columns)


@dataclass(frozen=True)
class ConditionalLaw:
    """Law of the observed releases given the observer's randomness ``ω_i`` (eq. 29).

    ``y | ω_i ~ N(mean_map @ ω_i, factor @ factorᵀ)`` where ``ω_i = [q_i^(0); p_i^(1); …; p_i^(T)]`` in the
    model's own coordinates. The covariance is kept as its factor (one column per independent unit
    normal of the other agents) because factors keep the small eigenvalues accurate.
    """

    mean_map: np.ndarray
    factor: np.ndarray

    @property
    def cov(self) -> np.ndarray:
        return self.factor @ self.factor.T


def _conditional(A: np.ndarray, source_sd: np.ndarray, own: np.ndarray, rows: np.ndarray) -> ConditionalLaw:
    other = np.setdiff1d(np.arange(A.shape[1]), own)
    return ConditionalLaw(mean_map=A[np.ix_(rows, own)], factor=A[np.ix_(rows, other)] * source_sd[other])


def conditional_law_of(A: np.ndarray, source_sd: np.ndarray, own: np.ndarray, rows: np.ndarray) -> ConditionalLaw:
    """Eq. (27)–(29) for any linear release model ``y = A s`` with independent centred sources of standard
    deviations ``source_sd``: the law of ``y[rows]`` given the sources ``own`` (the observer's randomness)."""
    return _conditional(A, source_sd, own, rows)


def conditional_law_full(
    problem: DistributedProblem, alpha: float, sigma_q: float, sigmas: np.ndarray, observer: int, view: str
) -> ConditionalLaw:
    """Eq. (27)–(29) from the literal M and L: mean ``M^u_i q_i^(0) + L^u_i P_i`` and covariance
    ``σ_q² M^{-u}_i (M^{-u}_i)ᵀ + L^{-u}_i Σ_{P,-i} (L^{-u}_i)ᵀ``, restricted to the view's rows."""
    T = len(sigmas)
    M, L = release_matrices(problem, alpha, T)
    A = np.hstack([M, L])
    sd = np.concatenate([np.full(problem.n, sigma_q), np.repeat(sigmas, problem.n)])
    own = own_columns(problem.sizes, T + 1, observer)
    return _conditional(A, sd, own, view_rows(problem, T, observer, view))


def reduction_basis(problem: DistributedProblem, extra_rows: dict[int, list[int]] | None = None) -> list[np.ndarray]:
    """Orthonormal ``B_k`` spanning ``col(X_k)`` plus ``e_r`` for each row ``r`` of agent ``k`` that an
    adjacent data set may change, so that ``col(X'_k) ⊆ span(B_k)`` for every candidate."""
    bases = []
    for k, Xk in enumerate(problem.blocks):
        rows = (extra_rows or {}).get(k, [])
        E = np.zeros((Xk.shape[0], len(rows)))
        E[rows, np.arange(len(rows))] = 1.0
        U, s, _ = np.linalg.svd(np.hstack([Xk, E]), full_matrices=False)
        rank = int(np.sum(s > s.max() * max(Xk.shape) * np.finfo(float).eps)) if s.size and s.max() > 0 else 0
        bases.append(U[:, :rank])
    return bases


class ReducedReleaseModel:
    """The release model in the reduced coordinates ``[z^(1); …; z^(T); Bᵀ q^(T)]`` (module docstring).

    Randomness coordinates are the projected sources ``[Bᵀq^(0); Bᵀp^(1); …; Bᵀp^(T)]``, each ``b = Σ b_k``
    long and agent-major, i.i.d. ``N(0, σ_s²)`` because ``B`` is orthonormal.
    """

    def __init__(self, problem: DistributedProblem, alpha: float, T: int, bases: list[np.ndarray]) -> None:
        from scipy.linalg import block_diag

        self.problem, self.alpha, self.T, self.bases = problem, alpha, T, bases
        self.b_sizes = np.array([B.shape[1] for B in bases])
        b, md = int(self.b_sizes.sum()), problem.m * problem.d
        Ht = block_diag(*[Xk.T @ Bk for Xk, Bk in zip(problem.blocks, bases, strict=True)])  # md × b
        G = block_diag(*[Xk.T @ Xk for Xk in problem.blocks])
        K = problem.m * np.kron(problem.Wc, np.eye(problem.d))
        Phi = alpha * G @ K
        PH = [Ht]
        for _ in range(T - 1):
            PH.append(Phi @ PH[-1])  # Dᵀ(αΞ)^j B = (αGK)^j Hᵀ
        QH = [np.eye(b)] + [alpha * Ht.T @ K @ PH[j - 1] for j in range(1, T + 1)]  # Bᵀ(αΞ)^j B
        A = np.zeros((md * T + b, (T + 1) * b))
        for s in range(T + 1):
            cols = slice(s * b, (s + 1) * b)
            for t in range(1, T + 1):
                lag = t - 1 - s
                if lag >= 0:
                    A[(t - 1) * md : t * md, cols] = PH[lag]
            A[md * T :, cols] = QH[T - s]
        self.A = A

    @property
    def b(self) -> int:
        return int(self.b_sizes.sum())

    def source_sd(self, sigma_q: float, sigmas: np.ndarray) -> np.ndarray:
        return np.concatenate([np.full(self.b, sigma_q), np.repeat(np.asarray(sigmas, float), self.b)])

    def rows(self, observer: int, view: str) -> np.ndarray:
        return view_rows(self.problem, self.T, observer, view, q_dims=self.b_sizes)

    def own(self, observer: int) -> np.ndarray:
        return own_columns(self.b_sizes, self.T + 1, observer)

    def conditional_law(self, sigma_q: float, sigmas: np.ndarray, observer: int, view: str) -> ConditionalLaw:
        """Eq. (29) in reduced coordinates."""
        return _conditional(self.A, self.source_sd(sigma_q, sigmas), self.own(observer), self.rows(observer, view))

    def project_own(self, observer: int, own_full: np.ndarray) -> np.ndarray:
        """Map full own randomness ``[q_i^(0); p_i^(1..T)]`` (rows; columns = realisations) to ``B_iᵀ`` coords."""
        n_i = self.problem.sizes[observer]
        Bi = self.bases[observer]
        blocks = own_full.reshape(self.T + 1, n_i, -1)
        return np.einsum("nb,snr->sbr", Bi, blocks).reshape((self.T + 1) * Bi.shape[1], -1)

    def project_releases(self, y: np.ndarray) -> np.ndarray:
        """Map a full release vector ``y`` (rows) to reduced coordinates."""
        md_t = self.problem.m * self.problem.d * self.T
        q = y[md_t:]
        parts = [Bk.T @ q[self.problem.agent_slice(k)] for k, Bk in enumerate(self.bases)]
        return np.vstack([y[:md_t], *parts])
