"""Attack the journal D-DP-PM as implemented: everything its observer holds, drawn by the algorithm itself.

Agent i's memory after Algorithm 1 (the `paper` view, eq. 22–25, with the observer's own randomness, which it knows):
its start ``q_i^(0)``, its noises ``p_i^(1..T)``, its released ``z_i^(1..T)`` and its final block ``q_i^(T)``; the
`network` view adds every other agent's releases. Every part is a linear function of independent Gaussians, so the
whole memory is **jointly Gaussian** under X and under X′, with covariances that depend on the data (the first
release ``z^(1) = X_jᵀ q_j^(0)`` carries no added noise). The most powerful test is then the quadratic likelihood
ratio ``log N(y; μ′, Σ′) − log N(y; μ, Σ)``, with means and covariances estimated from training draws kept apart
from the counted ones (:func:`quadratic_scores`). Views are drawn by :func:`ddppm.methods.ddppm.algorithm.
ddppm_agentwise`, the algorithm agent by agent, not by the accountant's release model.

**Sufficient coordinates** (:func:`sufficient_memory`, `paper` view, the changed row another agent's). The algorithm
uses the observer's own ``q_i^(0)`` and ``p_i^(t)`` only through ``X_iᵀ q_i^(t)``, so their parts orthogonal to
``col(X_i)`` are independent of the rest of the memory and have one law under X and X′: the likelihood ratio of the
memory is that of its projection on ``col(X_i)``. Fitting its ``(2T + 1)d`` coordinates instead of the whole
memory's ``(T + 2)n_i + Td`` loses nothing, sharpens the fitted test and makes it cheap (``n_i`` = 338 rows and
``d`` = 25 on the synthetic AMI set: 75 coordinates instead of 1,039).
"""

from __future__ import annotations

import numpy as np

from ddppm.accounting.iteration import DDPPMParams, scale_draws
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
        # Drawn in bulk: the audit needs independent views, not the per-run replay of draw_standard_normals (whose
        # loop over runs took a fifth of the attack's time).
        z0, zp = rng.standard_normal((problem.n, size)), rng.standard_normal((params.T, problem.n, size))
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


def column_basis(X: np.ndarray) -> np.ndarray:
    """An orthonormal basis of ``col(X)`` (``n × rank``): the observer's own rows, public to it."""
    U, s, _ = np.linalg.svd(X, full_matrices=False)
    return U[:, s > s[0] * max(X.shape) * np.finfo(float).eps]


def sufficient_memory(problem: DistributedProblem, params: DDPPMParams, observer: int, views: np.ndarray) -> np.ndarray:
    """The `paper`-view memory of :func:`memory_views` in sufficient coordinates (module docstring): ``B_iᵀq_i^(0)``,
    ``B_iᵀp_i^(1..T)``, ``z_i^(2..T)`` and ``B_iᵀ(q_i^(T) − p_i^(T))`` with ``B_i`` a basis of ``col(X_i)``.

    ``z_i^(1) = X_iᵀq_i^(0)`` is a function of ``B_iᵀq_i^(0)`` and is left out; so is ``q_i^(T)``'s part outside
    ``col(X_i)``, which is ``p_i^(T)``'s. Only for an observer whose rows the neighbour leaves alone (they are the
    same in X and X′, so ``B_i`` is one basis for both).
    """
    n_i, d, T = int(problem.sizes[observer]), problem.d, params.T
    B = column_basis(problem.blocks[observer])
    q0 = views[:, :n_i]
    P = views[:, n_i : n_i * (T + 1)].reshape(-1, T, n_i)
    z = views[:, n_i * (T + 1) : n_i * (T + 1) + T * d]
    qT = views[:, n_i * (T + 1) + T * d :]
    parts = [q0 @ B, (P @ B).reshape(len(views), -1), z[:, d:], (qT - P[:, -1]) @ B]
    return np.hstack(parts)


def _gaussian_fit(views: np.ndarray, ridge: float) -> tuple[np.ndarray, np.ndarray, float]:
    mean = views.mean(axis=0)
    cov = np.atleast_2d(np.cov(views, rowvar=False))
    cov += ridge * np.trace(cov) / cov.shape[0] * np.eye(cov.shape[0])
    sign, logdet = np.linalg.slogdet(cov)
    return mean, np.linalg.inv(cov), float(logdet)


def quadratic_scores(views: np.ndarray, first: tuple, second: tuple) -> np.ndarray:
    """``log N(y; second) − log N(y; first)`` per row of ``views`` (each fit: mean, inverse covariance, log det)."""

    def log_density(fit: tuple) -> np.ndarray:
        mean, precision, logdet = fit
        centred = views - mean
        # A product and a row sum, not a three-operand einsum: numpy's einsum does not use BLAS for it (30 times
        # slower at a thousand coordinates).
        return -0.5 * (np.sum((centred @ precision) * centred, axis=1) + logdet)

    return log_density(second) - log_density(first)


def fitted_quadratic(train: list[np.ndarray], ridge: float = 1e-9) -> tuple[tuple, tuple]:
    """The two Gaussian fits (under X, under X′) of training views: the arguments of :func:`quadratic_scores`."""
    return _gaussian_fit(train[0], ridge), _gaussian_fit(train[1], ridge)


def audit_gossip(problem: DistributedProblem, params: DDPPMParams, neighbour: Neighbour, observer: int, view: str,
                 delta: float, draws: int, seed: int, ridge: float = 1e-9) -> AuditResult:  # fmt: skip
    """The lower bound on ε from observer ``observer``'s memory under X and under the neighbour X′: ``draws``
    counted per side, as many choose the threshold, as many train the two Gaussian fits (in the sufficient
    coordinates of :func:`sufficient_memory` where they apply, the whole memory otherwise)."""
    adjacent = apply_neighbour(problem, neighbour)
    reduce = view == "paper" and observer != neighbour.agent
    rngs = [np.random.default_rng([seed, side, stage]) for stage in range(2) for side in range(2)]

    def memory(p: DistributedProblem, runs: int, rng: np.random.Generator) -> np.ndarray:
        views = memory_views(p, params, observer, view, runs, rng)
        return sufficient_memory(p, params, observer, views) if reduce else views

    fits = fitted_quadratic([memory(p, draws, rngs[side]) for side, p in enumerate((problem, adjacent))], ridge)
    scores = [
        quadratic_scores(memory(p, 2 * draws, rngs[2 + side]), *fits) for side, p in enumerate((problem, adjacent))
    ]
    return audit_scores(scores[0], scores[1], delta)
