"""The workshop D-DP-PM (Algorithm 1 of the workshop paper), agent by agent and in network form.

Campbell, Scaglione & Peisert, "Decentralized Differentially Private Power Method", TPDP workshop 2025 (the
earlier version of the journal paper of :mod:`ddppm.methods.ddppm`). It differs from the journal's Algorithm 1
in where the noise goes:

* iteration ``t = 1..T`` (the paper's steps 4–7, ``t < T − 1`` in its counting)::

      z_i^(t)     = X_iᵀ q_i^(t-1) + p_i^(t),        p_i^(t) ~ N(0, σ_p(t)² I_d)   (released; step 5)
      z_i^(t+1/2) = m Σ_j (W^c)_ij z_j^(t)                                         (consensus; step 6)
      q_i^(t)     = α X_i z_i^(t+1/2)                                              (no noise; step 7)

* final release (steps 9–11): agent ``i`` shares ``q̃_i = q_i^(T) + u_i``, ``u_i ~ N(0, σ_{u,i}² I_{n_i})``, and
  everyone normalises ``q = q̃ / ‖q̃‖``.

**Counting.** The paper runs its loop for ``t < T − 1`` and calls the final release step ``T``: its ``T`` is the
number of noisy iterations plus one. Here ``T`` is the number of noisy iterations (releases of ``z``), as in
the journal method, so the two variants' ``T`` mean the same thing; the paper's ``Z^(T−1)`` (eq. 9) is our
``Z^(T)``.

**Final-release noise.** ``σ_u = Δ_q sqrt(2 ln(1.25/δ₁)) / ε₁`` (the Gaussian mechanism, paper §3.1). Given the
released ``z``'s, ``q_i^(T) = α X_i a_i`` with ``a_i = z_i^(T+1/2)`` known, so a change of one row
(``‖x_r − x'_r‖ ≤ 1``) moves one entry by at most ``α‖a_i‖``: that is the data-adaptive sensitivity of
Nicolas et al. (the norm of what multiplies the changed row), and ``Δ_q`` is configured as a multiple of it,
``σ_{u,i} = f · α‖z_i^(T+1/2)‖`` with ``f = Δ_q · σ(ε₁, δ₁)`` the *noise factor* (:mod:`.budget`). The factor
makes the algorithm scale free: δ and the error depend on (α, σ_q, σ_p) only through
:meth:`WorkshopParams.effective_noise`.

In network form (``D = blockdiag(X_k)``, ``K = m (W^c ⊗ I_d)``, ``Φ = α DᵀD K``) the releases obey
``z^(1) = Dᵀq^(0) + p^(1)``, ``z^(t+1) = Φ z^(t) + p^(t+1)`` and ``q^(t) = α D K z^(t)``: every Monte-Carlo run is
a column, and one iteration is a few ``d``-column products per agent for all runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ddppm.accounting.iteration import DDPPMParams
from ddppm.core.errors import ConfigError
from ddppm.core.metrics import sin_error
from ddppm.core.network import gossip
from ddppm.core.problem import DistributedProblem


@dataclass(frozen=True)
class WorkshopParams(DDPPMParams):
    """α, σ_q, the schedule σ_p(1..T) of the noise on ``z`` and the number ``T`` of noisy iterations.

    The final release is not a parameter of the iterations: its noise factor comes from the budget split at
    each ε (:class:`ddppm.methods.workshop.budget.BudgetSplit`).
    """

    def effective_noise(self) -> np.ndarray:
        """``η_t = σ_p(t) / (σ_q α^{t−1})``: the only combination δ and the error depend on.

        With ``ẑ^(t) = z^(t)/(σ_q α^{t−1})`` and ``q̂^(t) = q^(t)/(σ_q α^t)`` the recursion becomes
        ``ẑ^(t) = Dᵀq̂^(t−1) + p^(t)/(σ_q α^{t−1})``, ``q̂^(t) = D K ẑ^(t)`` with a unit-variance start; every release
        is an invertible rescaling, and the final noise scales with ``α‖z^(T+1/2)‖`` like ``q^(T)``.
        (The journal's ``η_t`` has ``α^t``: the noise there enters after the multiplication by α.)
        """
        t = np.arange(1, self.T + 1, dtype=float)
        return self.sigmas / (self.sigma_q * self.alpha ** (t - 1))


def draw_workshop_normals(
    problem: DistributedProblem, T: int, rngs: Sequence[np.random.Generator]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unit normals of each run: ``q^(0)/σ_q`` (``n × R``), ``p^(1..T)/σ_p`` (``T × md × R``), ``u/σ_u`` (``n × R``).

    Each run's numbers come from its own generator, in this order, so results do not depend on batching.
    """
    n, md, R = problem.n, problem.m * problem.d, len(rngs)
    z0, zp, zu = np.empty((n, R)), np.empty((T, md, R)), np.empty((n, R))
    for r, rng in enumerate(rngs):
        z0[:, r] = rng.standard_normal(n)
        zp[:, :, r] = rng.standard_normal((T, md))
        zu[:, r] = rng.standard_normal(n)
    return z0, zp, zu


@dataclass
class WorkshopRun:
    """Everything one or more runs of :func:`workshop_agentwise` produce (last axis: runs).

    ``z_releases[t−1, i] = z_i^(t)`` (eq. 9's stacking), ``q = q^(T)`` before the final noise, ``a[i] = z_i^(T+1/2)``
    (what multiplies agent i's rows in its last step), ``released = q̃ = q^(T) + u``.
    """

    z_releases: np.ndarray  # (T, m, d, R)
    q: np.ndarray  # (n, R)
    a: np.ndarray  # (m, d, R)
    released: np.ndarray  # (n, R)

    def z_stacked(self) -> np.ndarray:
        """``Z^(T) = [z_1^(1); …; z_m^(1); z_1^(2); …; z_m^(T)]`` (eq. 9), shape ``(mdT, R)``."""
        T, m, d, R = self.z_releases.shape
        return self.z_releases.reshape(T * m * d, R)


def final_noise_sd(problem: DistributedProblem, alpha: float, a: np.ndarray, noise_factor) -> np.ndarray:
    """``σ_{u,i} = f · α ‖z_i^(T+1/2)‖`` for every agent and run: shape ``(m, R)``, or ``(E, m, R)`` for ``E``
    factors (step 9; module docstring)."""
    norms = alpha * np.linalg.norm(a, axis=1)  # (m, R)
    f = np.asarray(noise_factor, float)
    return f * norms if f.ndim == 0 else f[:, None, None] * norms[None]


def spread_to_rows(problem: DistributedProblem, per_agent: np.ndarray) -> np.ndarray:
    """Repeat a per-agent value (axis −2 of length m) over the agent's rows (length n)."""
    return np.repeat(per_agent, problem.sizes, axis=-2)


def workshop_agentwise(
    problem: DistributedProblem,
    params: WorkshopParams,
    q0: np.ndarray,
    P: np.ndarray,
    u: np.ndarray,
    noise_factor: float,
) -> WorkshopRun:
    """Algorithm 1 of the workshop paper, agent by agent: agent ``i`` touches only ``X_i``, ``q_i`` and its
    own noise; consensus is ``c`` rounds of neighbour averaging.

    Parameters
    ----------
    q0
        ``q^(0)``, shape ``(n, R)``.
    P
        ``p^(1..T)`` already scaled by ``σ_p(t)``, shape ``(T, md, R)`` (agent-major within each t).
    u
        Unit normals of the final release, ``(n, R)``; agent i adds ``σ_{u,i} u_i``.
    noise_factor
        ``f = Δ_q σ(ε₁, δ₁)`` (:meth:`ddppm.methods.workshop.budget.BudgetSplit.noise_factor`).
    """
    m, d = problem.m, problem.d
    q_blocks = [q0[problem.agent_slice(i)] for i in range(m)]
    z_hist = np.empty((params.T, m, d, q0.shape[1]))
    a = np.zeros((m, d, q0.shape[1]))
    for t in range(params.T):
        pairs = enumerate(zip(problem.blocks, q_blocks, strict=True))
        z = np.stack([Xi.T @ qi + P[t, i * d : (i + 1) * d] for i, (Xi, qi) in pairs])
        z_hist[t] = z
        a = m * gossip(problem.W, z, problem.c)
        q_blocks = [params.alpha * Xi @ a[i] for i, Xi in enumerate(problem.blocks)]
    q = np.vstack(q_blocks)
    released = []
    for i, qi in enumerate(q_blocks):
        sd = noise_factor * params.alpha * np.linalg.norm(a[i], axis=0)  # (R,)
        released.append(qi + sd * u[problem.agent_slice(i)])
    return WorkshopRun(z_releases=z_hist, q=q, a=a, released=np.vstack(released))


def workshop_network(
    problem: DistributedProblem, params: WorkshopParams, q0: np.ndarray, P: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The iterations in network form, vectorised over runs: ``(q^(T), a)`` with ``a = z^(T+1/2)`` as ``(m, d, R)``.

    ``z^(t) = Dᵀq^(t−1) + p^(t)``; ``a = K z^(t)`` reshaped per agent; ``q^(t) = α D a`` (module docstring).
    """
    m, d = problem.m, problem.d
    Wc = problem.m * problem.Wc
    q = q0
    a = np.zeros((m, d, q0.shape[1]))
    for t in range(params.T):
        z = np.stack([Xi.T @ q[problem.agent_slice(i)] for i, Xi in enumerate(problem.blocks)])
        z = z + P[t].reshape(m, d, -1)
        a = np.einsum("jk,kdr->jdr", Wc, z)
        q = np.vstack([params.alpha * Xi @ a[i] for i, Xi in enumerate(problem.blocks)])
    return q, a


def workshop_errors(
    problem: DistributedProblem,
    params: WorkshopParams,
    draws: tuple[np.ndarray, np.ndarray, np.ndarray],
    noise_factors,
    v: np.ndarray | None = None,
) -> np.ndarray:
    """Error ``‖v − q qᵀv‖ = sin(v, q)`` (workshop Fig. 1) of every run, for each final-release noise factor.

    ``draws`` = :func:`draw_workshop_normals` (``zp`` may hold more iterations than ``params.T``). Returns
    ``(E, R)`` for ``E`` factors (``(R,)`` for a scalar factor). The iterations are run once; only the final
    noise differs between factors.
    """
    z0, zp, zu = draws
    if zp.shape[0] < params.T:
        raise ConfigError(f"the draws hold {zp.shape[0]} iterations but T = {params.T}")
    P = params.sigmas[:, None, None] * zp[: params.T]
    q, a = workshop_network(problem, params, params.sigma_q * z0, P)
    sd = spread_to_rows(problem, final_noise_sd(problem, params.alpha, a, noise_factors))
    released = q + sd * zu
    vec = problem.top_eigenvector if v is None else v
    if released.ndim == 2:
        return sin_error(vec, released)
    return np.stack([sin_error(vec, r) for r in released])
