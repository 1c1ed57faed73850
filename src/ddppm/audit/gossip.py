"""Attack the journal D-DP-PM as implemented: everything its observer holds, drawn by the algorithm itself.

Agent i's memory after Algorithm 1 (the `paper` view, eq. 22–25, with the observer's own randomness, which it knows):
its start ``q_i^(0)``, its noises ``p_i^(1..T)``, its released ``z_i^(1..T)`` and its final block ``q_i^(T)``; the
`network` view adds every other agent's releases. Every part is a linear function of independent Gaussians, so the
whole memory is **jointly Gaussian** under X and under X′, with covariances that depend on the data (the first
release ``z^(1) = X_jᵀ q_j^(0)`` carries no added noise). The most powerful test is then the quadratic likelihood
ratio ``log N(y; μ′, Σ′) − log N(y; μ, Σ)``, with means and covariances estimated from training draws kept apart
from the counted ones (:func:`quadratic_scores`). Views are drawn by :func:`ddppm.methods.ddppm.algorithm.
ddppm_agentwise`, the algorithm agent by agent, not by the accountant's release model.
"""

from __future__ import annotations

import numpy as np

from ddppm.accounting.iteration import DDPPMParams, draw_standard_normals, scale_draws
from ddppm.accounting.neighbours import Neighbour, apply_neighbour
from ddppm.audit.bounds import AuditResult, audit_scores
from ddppm.core.problem import DistributedProblem
from ddppm.methods.ddppm.algorithm import ddppm_agentwise

BATCH = 5_000


def memory_views(problem: DistributedProblem, params: DDPPMParams, observer: int, view: str, runs: int,
                 rng: np.random.Generator) -> np.ndarray:  # fmt: skip
    """``runs`` draws of observer ``observer``'s memory (one row each): its own start and noises, then the releases
    its view holds (its own ``z`` and ``q^(T)`` block for ``paper``; every agent's for ``network``)."""
    out = []
    for start in range(0, runs, BATCH):
        size = min(BATCH, runs - start)
        z0, zp = draw_standard_normals(problem.n, params.T, [rng] * size)
        q0, P = scale_draws(params, z0, zp)
        run = ddppm_agentwise(problem, params, q0, P)
        own = problem.agent_slice(observer)
        parts = [q0[own], P[:, own].reshape(-1, size)]
        if view == "paper":
            parts += [run.z_releases[:, observer].reshape(-1, size), run.q[own]]
        else:
            parts += [run.z_releases.reshape(-1, size), run.q]
        out.append(np.vstack(parts).T)
    return np.vstack(out)


def _gaussian_fit(views: np.ndarray, ridge: float) -> tuple[np.ndarray, np.ndarray, float]:
    mean = views.mean(axis=0)
    cov = np.cov(views, rowvar=False)
    cov += ridge * np.trace(cov) / cov.shape[0] * np.eye(cov.shape[0])
    sign, logdet = np.linalg.slogdet(cov)
    return mean, np.linalg.inv(cov), float(logdet)


def quadratic_scores(views: np.ndarray, first: tuple, second: tuple) -> np.ndarray:
    """``log N(y; second) − log N(y; first)`` per row of ``views`` (each fit: mean, inverse covariance, log det)."""

    def log_density(fit: tuple) -> np.ndarray:
        mean, precision, logdet = fit
        centred = views - mean
        return -0.5 * (np.einsum("ij,jk,ik->i", centred, precision, centred) + logdet)

    return log_density(second) - log_density(first)


def audit_gossip(problem: DistributedProblem, params: DDPPMParams, neighbour: Neighbour, observer: int, view: str,
                 delta: float, draws: int, seed: int, ridge: float = 1e-9) -> AuditResult:  # fmt: skip
    """The lower bound on ε from observer ``observer``'s memory under X and under the neighbour X′: ``draws``
    counted per side, as many choose the threshold, as many train the two Gaussian fits."""
    adjacent = apply_neighbour(problem, neighbour)
    rngs = [np.random.default_rng([seed, side, stage]) for stage in range(2) for side in range(2)]
    train = [memory_views(p, params, observer, view, draws, rngs[side]) for side, p in enumerate((problem, adjacent))]
    fits = [_gaussian_fit(t, ridge) for t in train]
    scores = [quadratic_scores(memory_views(p, params, observer, view, 2 * draws, rngs[2 + side]), *fits)
              for side, p in enumerate((problem, adjacent))]  # fmt: skip
    return audit_scores(scores[0], scores[1], delta)
