"""D-DP-PM (Algorithm 1 of the journal paper) agent by agent, its deflation for rank r, and the centralised
power method.

The network form of the iteration, its parameters and its Monte-Carlo errors are shared with the workshop variant
and live in :mod:`ddppm.accounting.iteration`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ddppm.accounting.iteration import DDPPMParams, draw_standard_normals, scale_draws
from ddppm.core.network import gossip
from ddppm.core.problem import DistributedProblem


@dataclass
class AgentRun:
    """Outputs of :func:`ddppm_agentwise`: final unnormalised ``q^(T)`` and everything released."""

    q: np.ndarray  # (n, R)
    z_releases: np.ndarray  # (T, m, d, R): z_i^(t) = X_iᵀ q_i^(t-1), released to the network

    def releases(self) -> np.ndarray:
        """Stacked release vector ``y = [z^(1); …; z^(T); q^(T)]`` of eq. (12), shape ``(mdT + n, R)``."""
        T, m, d, R = self.z_releases.shape
        return np.vstack([self.z_releases.reshape(T * m * d, R), self.q])


def ddppm_agentwise(problem: DistributedProblem, params: DDPPMParams, q0: np.ndarray, P: np.ndarray) -> AgentRun:
    """Algorithm 1, agent by agent. Agent ``i`` touches only ``X_i`` and ``q_i``.

    For t = 1..T: ``z_i^(t) = X_iᵀ q_i^(t-1)`` (line 5); c gossip rounds give
    ``z_i^(t+1/2) = m Σ_j (W^c)_ij z_j^(t)`` (line 6); ``q_i^(t) = α X_i z_i^(t+1/2) + p_i^(t)`` (line 7).

    Parameters
    ----------
    q0
        ``q^(0)``, shape ``(n,)`` or ``(n, R)``.
    P
        ``p^(1..T)``, shape ``(T, n)`` or ``(T, n, R)``.
    """
    single = q0.ndim == 1
    q0 = q0[:, None] if single else q0
    P = P[:, :, None] if single else P
    q_blocks = [q0[problem.agent_slice(i)] for i in range(problem.m)]
    z_hist = np.empty((params.T, problem.m, problem.d, q0.shape[1]))
    for t in range(params.T):
        z = np.stack([Xi.T @ qi for Xi, qi in zip(problem.blocks, q_blocks, strict=True)])
        z_hist[t] = z
        z_half = problem.m * gossip(problem.W, z, problem.c)
        q_blocks = [params.alpha * Xi @ z_half[i] + P[t, problem.agent_slice(i)] for i, Xi in enumerate(problem.blocks)]
    return AgentRun(q=np.vstack(q_blocks), z_releases=z_hist)


def centralized_power_method(X: np.ndarray, T: int, q0: np.ndarray) -> np.ndarray:
    """Eq. (7): ``q ← X Xᵀ q / ||X Xᵀ q||`` for T steps (columns of ``q0`` are independent runs)."""
    q = q0 / np.linalg.norm(q0, axis=0)
    for _ in range(T):
        q = X @ (X.T @ q)
        q /= np.linalg.norm(q, axis=0)
    return q


def ddppm_deflation(
    problem: DistributedProblem, params: DDPPMParams, rank: int, rng: np.random.Generator
) -> np.ndarray:
    """Rank-``r`` D-DP-PM by deflation (Algorithm 1, lines 2–3); returns ``n × r`` unit columns.

    After component ``l`` every agent knows the shared, normalised ``q_l`` and its own consensus estimate
    ``ẑ_i = m Σ_j (W^c)_ij X_jᵀ q_{l,j}`` of ``Xᵀ q_l``, and deflates ``X_i ← X_i − q_{l,i} ẑ_iᵀ``.
    Privacy composes over the r components by basic composition (docs/method.md, section 4).
    """
    current = problem
    columns = []
    for _ in range(rank):
        z0, zp = draw_standard_normals(problem.n, params.T, [rng])
        q0, P = scale_draws(params, z0, zp)
        q = ddppm_agentwise(current, params, q0, P).q[:, 0]
        q /= np.linalg.norm(q)
        columns.append(q)
        z = np.stack([Xi.T @ q[current.agent_slice(i)] for i, Xi in enumerate(current.blocks)])
        z_hat = current.m * gossip(current.W, z, current.c)
        current = current.with_blocks(
            tuple(Xi - np.outer(q[current.agent_slice(i)], z_hat[i]) for i, Xi in enumerate(current.blocks))
        )
    return np.column_stack(columns)
