"""The workshop D-DP-PM's release model: ``Z^(T) = M q^(0) + L P`` and an observer's conditional view (eq. 9–11).

Notation of the workshop paper's Appendix A.2.1 (our ``T`` is its ``T − 1``, see :mod:`.algorithm`). With
``D = blockdiag(X_k)``, ``K = m (W^c ⊗ I_d)``, ``Ψ = α D K`` (eq. 50) and ``Φ = DᵀΨ = α DᵀD K``:

* ``Z^(T) = [z^(1); …; z^(T)] ∈ R^{mdT}`` (eq. 9, 53), ``z^(t) = Dᵀq^(t−1) + p^(t)`` (eq. 51);
* block row ``t`` of ``M`` is ``Dᵀ(ΨDᵀ)^{t−1} = Φ^{t−1}Dᵀ`` (eq. 60);
* block ``(t, τ)`` of ``L`` is ``Dᵀ(ΨDᵀ)^{t−1−τ}Ψ = Φ^{t−τ}`` for ``τ < t``, ``I_{md}`` for ``τ = t``, 0 above
  (eq. 61–62);
* ``P = [p^(1); …; p^(T)] ~ N(0, diag(σ_p(t)²) ⊗ I_{md})`` (eq. 63; one independent ``p_i^(t)`` per agent, as the
  appendix has it: the algorithm box's shared ``p^(t)`` cannot be drawn without a common seed).

Observer ``i`` conditions on its own randomness ``ω_i = [q_i^(0); p_i^(1); …; p_i^(T)]`` (eq. 67–68). Its view is
every release (``network``) or its own releases ``Z_i = [z_i^(1); …; z_i^(T)]`` (``paper``: eq. 65, the rows of
``T_i``); given ``ω_i`` the view is Gaussian with mean ``B_i = M^u_i q_i^(0) + L^u_i P_i`` (eq. 10) and covariance
``C_i = σ_q² M^{−u}_i (M^{−u}_i)ᵀ + L^{−u}_i Σ_{P,−i} (L^{−u}_i)ᵀ`` (eq. 11). The final release ``q̃`` is not part
of this model: the paper accounts for it with the Gaussian mechanism and composition (:mod:`.budget`).

:class:`WorkshopReleaseModel` is the same model in reduced coordinates: ``q^(0)`` enters only through
``Dᵀq^(0) = Hᵀ Bᵀq^(0)`` with ``H = blockdiag(B_kᵀ X_k)`` and ``B_k`` an orthonormal basis of ``col(X_k)`` (plus the
rows a neighbour may change, :func:`ddppm.accounting.release.reduction_basis`), so its sources are
``[Bᵀq^(0); p^(1); …; p^(T)]``: ``b + mdT`` of them instead of ``n + mdT``. The projection is exact.
"""

from __future__ import annotations

import numpy as np

from ddppm.accounting.release import ConditionalLaw, conditional_law_of, own_columns_of_sources, view_rows
from ddppm.core.problem import DistributedProblem


def _phi(problem: DistributedProblem, alpha: float) -> np.ndarray:
    """``Φ = α DᵀD K = α blockdiag(X_kᵀX_k) · m (W^c ⊗ I_d)``: ``z^(t+1) = Φ z^(t) + p^(t+1)``."""
    from scipy.linalg import block_diag

    G = block_diag(*[Xk.T @ Xk for Xk in problem.blocks])
    return alpha * G @ (problem.m * np.kron(problem.Wc, np.eye(problem.d)))


def _stack(first: np.ndarray, Phi: np.ndarray, T: int) -> tuple[np.ndarray, np.ndarray]:
    """``M`` with block rows ``Φ^{t−1}·first`` and ``L`` with blocks ``Φ^{t−τ}`` (τ ≤ t), ``t, τ = 1..T``."""
    md = Phi.shape[0]
    powers = [np.eye(md)]
    for _ in range(T - 1):
        powers.append(Phi @ powers[-1])
    M = np.vstack([P @ first for P in powers])
    L = np.zeros((md * T, md * T))
    for t in range(T):
        for tau in range(t + 1):
            L[t * md : (t + 1) * md, tau * md : (tau + 1) * md] = powers[t - tau]
    return M, L


def workshop_release_matrices(problem: DistributedProblem, alpha: float, T: int) -> tuple[np.ndarray, np.ndarray]:
    """``M`` (``mdT × n``, eq. 60) and ``L`` (``mdT × mdT``, eq. 61–62) with ``Z^(T) = M q^(0) + L P``."""
    from scipy.linalg import block_diag

    Dt = block_diag(*[Xk.T for Xk in problem.blocks])
    return _stack(Dt, _phi(problem, alpha), T)


def z_view_rows(problem: DistributedProblem, T: int, observer: int, view: str) -> np.ndarray:
    """Rows of ``Z^(T)`` that observer ``i`` sees: all (``network``) or its own ``z_i^(t)`` (``paper``)."""
    return view_rows(problem, T, observer, view, q_dims=np.zeros(problem.m, dtype=int))


def conditional_law_full(
    problem: DistributedProblem, alpha: float, sigma_q: float, sigmas: np.ndarray, observer: int, view: str
) -> ConditionalLaw:
    """``B_i`` (as a map of ``ω_i``) and ``C_i`` of eq. (10)–(11) from the literal ``M`` and ``L``."""
    T = len(sigmas)
    M, L = workshop_release_matrices(problem, alpha, T)
    md = problem.m * problem.d
    sd = np.concatenate([np.full(problem.n, sigma_q), np.repeat(np.asarray(sigmas, float), md)])
    own = own_columns_of_sources([problem.sizes] + [np.full(problem.m, problem.d)] * T, observer)
    return conditional_law_of(np.hstack([M, L]), sd, own, z_view_rows(problem, T, observer, view))


class WorkshopReleaseModel:
    """``Z^(T)`` in the reduced source coordinates ``[Bᵀq^(0); p^(1); …; p^(T)]`` (module docstring).

    It has the interface the shared accountant uses (:class:`ddppm.accounting.accountant.ReleaseFamily`):
    :meth:`conditional_law` and :meth:`project_own`.
    """

    def __init__(self, problem: DistributedProblem, alpha: float, T: int, bases: list[np.ndarray]) -> None:
        from scipy.linalg import block_diag

        self.problem, self.alpha, self.T, self.bases = problem, alpha, T, bases
        self.b_sizes = np.array([B.shape[1] for B in bases])
        Ht = block_diag(*[Xk.T @ Bk for Xk, Bk in zip(problem.blocks, bases, strict=True)])  # md × b
        M, L = _stack(Ht, _phi(problem, alpha), T)
        self.A = np.hstack([M, L])

    def source_sd(self, sigma_q: float, sigmas: np.ndarray) -> np.ndarray:
        md = self.problem.m * self.problem.d
        return np.concatenate([np.full(int(self.b_sizes.sum()), sigma_q), np.repeat(np.asarray(sigmas, float), md)])

    def own(self, observer: int) -> np.ndarray:
        return own_columns_of_sources([self.b_sizes] + [np.full(self.problem.m, self.problem.d)] * self.T, observer)

    def rows(self, observer: int, view: str) -> np.ndarray:
        return z_view_rows(self.problem, self.T, observer, view)

    def conditional_law(self, sigma_q: float, sigmas: np.ndarray, observer: int, view: str) -> ConditionalLaw:
        """Eq. (10)–(11) in reduced coordinates."""
        sd = self.source_sd(sigma_q, sigmas)
        return conditional_law_of(self.A, sd, self.own(observer), self.rows(observer, view))

    def project_own(self, observer: int, own_full: np.ndarray) -> np.ndarray:
        """Map ``[q_i^(0); p_i^(1..T)]`` (rows; ``n_i + Td`` of them) to ``[B_iᵀq_i^(0); p_i^(1..T)]``."""
        n_i = int(self.problem.sizes[observer])
        return np.vstack([self.bases[observer].T @ own_full[:n_i], own_full[n_i:]])
