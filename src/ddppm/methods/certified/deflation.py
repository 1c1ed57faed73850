"""The certified D-DP-PM one component at a time (deflation), for the rank study (docs/studies.md, ``rank``).

The certified D-DP-PM (:mod:`.algorithm`) estimates k directions at once, one ``d × k`` block per release.
Deflation is the other way to get k of them, and the one the journal's Algorithm 1 (a single direction) would
need: run the one-direction algorithm k times, each time on the rows with the directions already found
projected out.

**The algorithm.** Component l = 1, …, k is :func:`.algorithm.certified_network` with k = 1 on every agent's
deflated Gram matrix ``P_j X_jᵀX_j P_j``, where ``P_j = I − B_j B_jᵀ`` and ``B_j`` (d × (l−1)) holds agent j's own
estimates of the earlier components; each release is ``z_j^(t) = P_j X_jᵀX_j P_j b_j^(t−1) + σ g_j^(t)``, and
each agent projects its consensus before normalising, ``b_j^(t) = P_j y / ‖P_j y‖`` with ``y = m Σ_i (W^c)_ji
z_i^(t)``, so its k estimates are orthonormal. Every component starts from a public start of its own.

**Privacy.** ``P_j`` is a function of earlier releases only (post-processing), so given them, component l's
release at round t is a Gaussian mechanism of the same sensitivity as one power step of a single direction:
replacing x by x′ moves it by ``(uuᵀ − u′u′ᵀ) b`` with ``u = P_j x``, ``u′ = P_j x′``, and a projection keeps both
in the unit ball (and ``‖u − u′‖ ≤ ‖x − x′‖``), so the sup is at most Δ₁ =
``release_sensitivity("power_step", adjacency, 1)`` under either adjacency. The k·T releases compose adaptively
into one μ-GDP mechanism, ``μ = Δ₁ sqrt(Σ 1/σ²) = Δ₁ sqrt(kT)/σ`` at constant σ (exact GDP composition, Dong,
Roth & Su 2022, Corollary 3.3): **the composition over components** the rank study names. The block method
pays Δ = √2 once for any k ≥ 2 instead; deflation pays √k.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from ddppm.common_task.adjacency import release_sensitivity
from ddppm.common_task.base import Calibrated, CommonTaskMethod, GaussianRelease, certified
from ddppm.common_task.certified import noise_multiplier
from ddppm.common_task.task import CommonTask
from ddppm.core.network import gossip
from ddppm.methods.certified.algorithm import CertifiedParams, Draws, draw


def _project_out(B: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """``(I − B Bᵀ) Y`` for stacks of orthonormal ``B`` (..., d, l) and vectors ``Y`` (..., d, 1)."""
    if B.shape[-1] == 0:
        return Y
    return Y - B @ (np.swapaxes(B, -1, -2) @ Y)


def _unit(Y: np.ndarray) -> np.ndarray:
    return Y / np.linalg.norm(Y, axis=-2, keepdims=True)


def deflation_network(
    local_grams: np.ndarray, Wc: np.ndarray, params: CertifiedParams, draws: Sequence[Draws]
) -> np.ndarray:
    """Every agent's k orthonormal estimates, ``(m, R, d, k)``, for all runs at once: component l runs the
    single-direction certified algorithm on ``P_j X_jᵀX_j P_j`` (module docs) with ``draws[l]`` (k = 1 each:
    ``B0`` of shape (d, 1, R), ``G`` of shape (T, m, d, 1, R)). ``params.k`` is 1; k is ``len(draws)``."""
    m, d = local_grams.shape[0], local_grams.shape[1]
    runs = draws[0].B0.shape[-1]
    found = np.zeros((m, runs, d, 0))
    for component in draws:
        start = np.moveaxis(component.B0, -1, 0)  # (R, d, 1), public: the same at every agent
        b = _unit(_project_out(found, np.broadcast_to(start, (m, *start.shape))))
        noise = np.moveaxis(component.G, -1, 2)  # (T, m, R, d, 1)
        for t, sigma in enumerate(params.sigmas):
            deflated = _project_out(found, np.einsum("jde,jrek->jrdk", local_grams, _project_out(found, b)))
            z = deflated + sigma * noise[t]
            b = _unit(_project_out(found, m * np.einsum("ij,jrdk->irdk", Wc, z)))
        found = np.concatenate([found, b], axis=-1)
    return found


def deflation_agentwise(
    blocks: Sequence[np.ndarray], W: np.ndarray, c: int, params: CertifiedParams, draws: Sequence[Draws], run: int = 0
) -> np.ndarray:
    """The same algorithm agent by agent for one run (agent j touches only ``X_j``, its own estimates and what its
    neighbours send, c rounds of :func:`ddppm.core.network.gossip`): ``(m, d, k)``. For the tests."""
    m, d = len(blocks), blocks[0].shape[1]
    found = [np.zeros((d, 0)) for _ in range(m)]
    for component in draws:
        P = [np.eye(d) - B @ B.T for B in found]
        start = component.B0[..., run]
        b = [P[j] @ start / np.linalg.norm(P[j] @ start) for j in range(m)]
        for t, sigma in enumerate(params.sigmas):
            z = np.stack([P[j] @ (Xj.T @ (Xj @ (P[j] @ b[j]))) + sigma * component.G[t, j, :, :, run]
                          for j, Xj in enumerate(blocks)])  # fmt: skip
            mixed = m * gossip(W, z, c)
            b = [P[j] @ mixed[j] / np.linalg.norm(P[j] @ mixed[j]) for j in range(m)]
        found = [np.hstack([found[j], b[j]]) for j in range(m)]
    return np.stack(found)


class CertifiedDeflation(CommonTaskMethod):
    """The certified D-DP-PM by deflation on the common task (not registered: the rank study's second way to
    estimate k directions with D-DP-PM, ``studies.rank.deflation``; at k = 1 it is the certified D-DP-PM)."""

    name = "ddppm_certified_deflation"
    label = "D-DP-PM, certified, deflation (k runs, composed)"
    style: ClassVar[dict[str, Any]] = {"color": "#c51b7d", "marker": "X", "linestyle": "--"}  # the certified's, darker
    trust_model = "gossip"
    privacy_column = "certified"
    source = "this project (deflation of the certified D-DP-PM)"
    composition = (
        "k runs of T iterations, one component each on the deflated rows (Δ = Δ₁ each: a projection keeps rows "
        "in the unit ball), composed over the k·T Gaussian mechanisms (exact GDP composition, μ = Δ₁√(kT)/σ)"
    )

    def common_style(self) -> dict[str, Any]:
        return {"label": self.label, **self.style}

    def common_calibrate(self, task: CommonTask, eps: float, delta_limit: float, options: dict[str, Any]) -> Calibrated:
        T, k = int(options["iterations"]), int(task.k)
        delta = release_sensitivity("power_step", options["adjacency"], block=1)
        sigma = delta * noise_multiplier(eps, delta_limit, k * T)
        release = GaussianRelease(sensitivity=delta, sigma=sigma, count=k * T)
        return certified(eps, delta_limit, {"sigma": sigma, "T": T, "sensitivity": delta, "components": k}, [release])

    def common_estimate(
        self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator], options: dict[str, Any]
    ) -> np.ndarray:
        """Agent 1's k estimates. Component l of run r draws from the r-th generator's l-th child."""
        params = CertifiedParams.constant(int(calibrated.params["T"]), float(calibrated.params["sigma"]))
        children = [rng.spawn(task.k) for rng in rngs]
        draws = [draw([c[l] for c in children], params.T, task.m, task.d, 1) for l in range(task.k)]
        grams = np.stack([task.local_gram(j) for j in range(task.m)])
        return deflation_network(grams, task.Wc, params, draws)[0]

    def common_costs(self, task: CommonTask, calibrated: Calibrated) -> dict[str, Any]:
        rounds = task.k * int(calibrated.params["T"]) * task.consensus  # c rounds per iteration, d floats each
        return {"floats_per_agent": rounds * task.d, "rounds": rounds, "memory": "d² + d k"}
