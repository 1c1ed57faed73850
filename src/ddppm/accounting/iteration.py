"""The noisy gossip power iteration both D-DP-PM variants release, and its noise-free counterpart.

Notation follows the journal D-DP-PM paper: ``q^(t) = αΞ q^(t-1) + p^(t)`` with
``Ξ = D(X) (m (W^c ⊗ I_d)) Dᵀ(X)`` (eq. 13, 16–18). :class:`DDPPMParams` is the schedule the accounting engine
accounts for (α, σ_q, σ_p(1..T), T); Monte Carlo runs are the columns of an ``n × R`` matrix so every iteration is
one matrix product for all runs. The agent-by-agent form and the deflation of the journal's Algorithm 1 are in
:mod:`ddppm.methods.ddppm.algorithm`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ddppm.core.errors import ConfigError, DataError
from ddppm.core.metrics import sin_error
from ddppm.core.problem import DistributedProblem

SCHEDULES = ("geometric", "constant")


@dataclass(frozen=True)
class NoiseSchedule:
    """Per-iteration noise level ``σ_p(t)``, t = 1..T.

    ``geometric``: ``σ_p(t) = scale · ratio^t`` (Corollary 1 uses ``ratio = μ₂/μ₁``);
    ``constant``: ``σ_p(t) = scale``.
    """

    kind: str
    scale: float
    ratio: float = 1.0

    def __post_init__(self) -> None:
        if self.kind not in SCHEDULES:
            raise ConfigError(
                f"methods.ddppm.calibration.schedules: unknown noise schedule {self.kind!r}; use one of {SCHEDULES}"
            )
        if not (self.scale >= 0 and np.isfinite(self.scale)):
            raise ConfigError(f"noise schedule scale must be finite and >= 0, got {self.scale!r}")
        if not (self.ratio > 0 and np.isfinite(self.ratio)):
            raise ConfigError(f"noise schedule ratio must be finite and > 0, got {self.ratio!r}")

    def sigmas(self, T: int) -> np.ndarray:
        t = np.arange(1, T + 1, dtype=float)
        if self.kind == "geometric":
            return self.scale * self.ratio**t
        return np.full(T, float(self.scale))


@dataclass(frozen=True)
class DDPPMParams:
    """The tunable parameters of Algorithm 1: α, σ_q, the schedule σ_p(t) and the iteration count T."""

    alpha: float
    sigma_q: float
    schedule: NoiseSchedule
    T: int

    def __post_init__(self) -> None:
        if not (self.alpha > 0 and np.isfinite(self.alpha)):
            raise ConfigError(f"alpha must be finite and > 0, got {self.alpha!r}")
        if not (self.sigma_q > 0 and np.isfinite(self.sigma_q)):
            raise ConfigError(f"sigma_q must be finite and > 0, got {self.sigma_q!r}")
        if int(self.T) != self.T or self.T < 1:
            raise ConfigError(f"T must be a positive integer, got {self.T!r}")

    @property
    def sigmas(self) -> np.ndarray:
        """``[σ_p(1), …, σ_p(T)]``."""
        return self.schedule.sigmas(self.T)

    def effective_noise(self) -> np.ndarray:
        """``η_t = σ_p(t) / (σ_q α^t)``: the only combination that privacy and error depend on.

        Rescaling ``q^(t)`` by ``1/(σ_q α^t)`` maps the recursion ``q ← αΞq + p`` onto ``q ← Ξq + p/(σ_q α^t)``
        with a unit-variance start. Each release is an invertible rescaling of the original one, and the
        final estimate is normalised, so both δ and the error are functions of ``(T, η)`` alone.
        """
        t = np.arange(1, self.T + 1, dtype=float)
        return self.sigmas / (self.sigma_q * self.alpha**t)

    def canonical_key(self, digits: int = 10) -> tuple:
        """Hashable key identifying parameter sets that are equivalent (see :meth:`effective_noise`)."""
        return (int(self.T), tuple(float(f"{x:.{digits}e}") for x in self.effective_noise()))


def draw_standard_normals(n: int, T: int, rngs: Sequence[np.random.Generator]) -> tuple[np.ndarray, np.ndarray]:
    """Unit normals for ``q^(0)`` (``n × R``) and ``p^(1..T)`` (``T × n × R``), one generator per run.

    Each run's numbers depend only on its own generator, so results do not depend on how runs are batched.
    """
    z0 = np.empty((n, len(rngs)))
    zp = np.empty((T, n, len(rngs)))
    for r, rng in enumerate(rngs):
        z0[:, r] = rng.standard_normal(n)
        zp[:, :, r] = rng.standard_normal((T, n))
    return z0, zp


def scale_draws(params: DDPPMParams, z0: np.ndarray, zp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``q^(0) = σ_q z0`` (eq. 8) and ``p^(t) = σ_p(t) zp_t`` (Algorithm 1, line 1)."""
    return params.sigma_q * z0, params.sigmas[:, None, None] * zp[: params.T]


def ddppm_network(problem: DistributedProblem, params: DDPPMParams, q0: np.ndarray, P: np.ndarray) -> np.ndarray:
    """The network form ``q^(t) = αΞ q^(t-1) + p^(t)`` (eq. 16/18); returns unnormalised ``q^(T)``."""
    q = q0
    for t in range(params.T):
        q = problem.xi_matmul(q, params.alpha) + P[t]
    return q


def ddppm_errors(
    problem: DistributedProblem, params: DDPPMParams, z0: np.ndarray, zp: np.ndarray, v: np.ndarray | None = None
) -> np.ndarray:
    """Error (eq. 37) of each Monte-Carlo run whose unit normals are the columns of ``z0``, ``zp``."""
    q0, P = scale_draws(params, z0, zp)
    q = ddppm_network(problem, params, q0, P)
    return sin_error(problem.top_eigenvector if v is None else v, q)


def dpm_error_curve(problem: DistributedProblem, T_max: int, z0: np.ndarray) -> np.ndarray:
    """Noise-free D-PM error after t = 0..T_max iterations, shape ``(T_max + 1, R)``.

    The iterate is normalised each step (the direction equals that of ``(αΞ)^t q^(0)`` for any α).
    """
    v = problem.top_eigenvector
    q = z0 / np.linalg.norm(z0, axis=0)
    curve = [sin_error(v, q)]
    for _ in range(T_max):
        q = problem.xi_matmul(q)
        q /= np.linalg.norm(q, axis=0)
        curve.append(sin_error(v, q))
    return np.array(curve)


def t_star(problem: DistributedProblem, z0: np.ndarray, tol: float = 1e-3, T_max: int = 200) -> tuple[int, bool]:
    """``T*``: fewest iterations at which noise-free D-PM's mean error is ≤ ``tol`` (paper §IV-B).

    Returns ``(T*, reached)``; if the tolerance is never met (consensus floor), ``(T_max, False)``.
    """
    mean_curve = dpm_error_curve(problem, T_max, z0).mean(axis=1)
    hits = np.flatnonzero(mean_curve <= tol)
    return (int(hits[0]), True) if hits.size else (T_max, False)


def checked_t_star(problem: DistributedProblem, z0: np.ndarray, tol: float, T_max: int, key: str) -> int:
    """:func:`t_star`, or a :class:`DataError` explaining that Assumption 1 fails where T* is not reached.

    Without an eigengap (μ₁ = μ₂) the top eigenvector is not unique and every error against "the" top
    eigenvector is meaningless; with a tiny one, convergence needs more iterations than ``T_max``. ``key``
    is the config section holding ``t_max`` and ``t_star_tol``.
    """
    ratio = problem.mu2 / problem.mu1
    if ratio > 1 - 1e-9:
        raise DataError(
            f"Assumption 1 fails: the top two eigenvalues of Ξ are equal (μ₂/μ₁ = {ratio:.12f}), so the top "
            "eigenvector is not unique and no error against it means anything. Use data with a clear top "
            "eigenvector."
        )
    T, reached = t_star(problem, z0, tol, T_max)
    if not reached:
        raise DataError(
            f"noise-free D-PM does not reach mean error {tol:g} within {T_max} iterations (μ₂/μ₁ = {ratio:.4f}): "
            f"the eigengap of Assumption 1 is too small for this range. Raise `{key}.t_max`, or loosen "
            f"`{key}.t_star_tol`."
        )
    return T
