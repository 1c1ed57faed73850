"""The repaired D-DP-PM: every release a Gaussian mechanism (docs/certified.md, section 1).

The journal's Algorithm 1 releases ``z_j^(t) = X_jᵀ q_j^(t−1)`` with ``q_j^(t) = α X_j z_j^(t−1/2) + p_j^(t)``.
Its noise enters through the row space (``X_jᵀ p_j`` has covariance ``σ² X_jᵀX_j``, which moves with one row),
its first release carries no added noise, and the size of ``q`` is unbounded. Three changes, each the smallest that
removes one of these leaks:

1. **Noise on every release, in the release space**: ``z_j^(t) = X_jᵀX_j B_j^(t−1) + σ_t G_j^(t)`` with
   ``G_j^(t)`` i.i.d. ``N(0, 1)`` entries (d × k), the first release included. ``X_jᵀ(X_j B)`` is exactly the
   journal's ``X_jᵀ q_j`` with ``q_j = X_j B`` (line 7 without its noise; α drops out, see 3).
2. **A public initialisation**: ``B^(0)`` is drawn from a public seed, the same at every agent. Secret randomness
   in ``q^(0)`` was what hid the first release; here the noise of change 1 does that job.
3. **Normalisation where the sensitivity was unbounded**: every agent orthonormalises its consensus estimate,
   ``B_j^(t) = orth(m Σ_i (W^c)_ji z_i^(t))`` (the journal's ``z^(t+1/2)`` after its c gossip rounds, line 6).
   A release's sensitivity is then ``sup ‖(xxᵀ − x′x′ᵀ) B‖_F`` over orthonormal B, a constant
   (:func:`ddppm.common_task.adjacency.release_sensitivity`, ``power_step``).

The estimate of the top-k right directions is agent j's ``B_j^(T)`` (for the journal's left-vector metric,
``q_j = X_j B_j^(T)``, computed by agent j from its own rows and never released). Runs are vectorised: bases have
shape ``(m, R, d, k)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ddppm.core.errors import ConfigError
from ddppm.core.network import gossip


@dataclass(frozen=True)
class CertifiedParams:
    """T iterations with per-coordinate noise ``σ_t`` on every release (``sigmas``, length T), rank k."""

    sigmas: tuple[float, ...]
    k: int = 1

    def __post_init__(self) -> None:
        if len(self.sigmas) < 1 or any(not (s > 0 and np.isfinite(s)) for s in self.sigmas):
            raise ConfigError(f"ddppm_certified: needs T >= 1 noise levels, each finite and > 0, got {self.sigmas}")
        if int(self.k) != self.k or self.k < 1:
            raise ConfigError(f"ddppm_certified: the rank k must be a positive integer, got {self.k!r}")

    @classmethod
    def constant(cls, T: int, sigma: float, k: int = 1) -> CertifiedParams:
        return cls(tuple([float(sigma)] * int(T)), int(k))

    @property
    def T(self) -> int:
        return len(self.sigmas)


@dataclass(frozen=True)
class Draws:
    """One run's randomness per column of the last axis: the public start ``B0`` (d × k × R, orthonormalised by
    the algorithm) and the unit noise of every release ``G`` (T × m × d × k × R)."""

    B0: np.ndarray
    G: np.ndarray


def draw(rngs: Sequence[np.random.Generator], T: int, m: int, d: int, k: int) -> Draws:
    """Each run's public start and release noise from its own generator (two independent children), so a run's
    numbers do not depend on how runs are batched."""
    B0, G = np.empty((d, k, len(rngs))), np.empty((T, m, d, k, len(rngs)))
    for r, rng in enumerate(rngs):
        public, noise = rng.spawn(2)
        B0[..., r] = public.standard_normal((d, k))
        G[..., r] = noise.standard_normal((T, m, d, k))
    return Draws(B0, G)


def orthonormalise(Z: np.ndarray) -> np.ndarray:
    """An orthonormal basis of the columns of each ``d × k`` matrix in ``Z`` (last two axes), by QR."""
    if Z.shape[-1] == 1:
        return Z / np.linalg.norm(Z, axis=-2, keepdims=True)
    return np.linalg.qr(Z)[0]


@dataclass(frozen=True)
class CertifiedRun:
    """Every release ``z`` (T × m × R × d × k) and each agent's final basis ``B`` (m × R × d × k)."""

    releases: np.ndarray
    bases: np.ndarray


def certified_network(local_grams: np.ndarray, Wc: np.ndarray, params: CertifiedParams, draws: Draws) -> CertifiedRun:
    """The repaired algorithm for all runs at once: ``local_grams`` are the agents' ``X_jᵀX_j`` (m × d × d),
    ``Wc`` is ``W^c`` (m × m)."""
    m = local_grams.shape[0]
    start = orthonormalise(np.moveaxis(draws.B0, -1, 0))  # (R, d, k), public: the same at every agent
    B = np.broadcast_to(start, (m, *start.shape))
    noise = np.moveaxis(draws.G, -1, 2)  # (T, m, R, d, k)
    releases = np.empty_like(noise)
    for t, sigma in enumerate(params.sigmas):
        # batched products (BLAS) rather than einsum's loops: X_jᵀX_j B_jr for every (j, r), then W^c over agents
        z = np.matmul(local_grams[:, None], B) + sigma * noise[t]
        releases[t] = z
        B = orthonormalise(m * (Wc @ z.reshape(m, -1)).reshape(z.shape))
    return CertifiedRun(releases, B)


def certified_agentwise(
    blocks: Sequence[np.ndarray], W: np.ndarray, c: int, params: CertifiedParams, draws: Draws, run: int = 0
) -> CertifiedRun:
    """The same algorithm agent by agent for one run, as an agent would execute it: agent j touches only its rows
    ``X_j`` and what its neighbours send (c rounds of :func:`ddppm.core.network.gossip`). For the tests."""
    m = len(blocks)
    B = [orthonormalise(draws.B0[..., run]) for _ in range(m)]
    releases = []
    for t, sigma in enumerate(params.sigmas):
        z = np.stack([Xj.T @ (Xj @ B[j]) + sigma * draws.G[t, j, ..., run] for j, Xj in enumerate(blocks)])
        releases.append(z)
        mixed = m * gossip(W, z, c)
        B = [orthonormalise(mixed[j]) for j in range(m)]
    return CertifiedRun(np.stack(releases)[:, :, None], np.stack(B)[:, None])
