"""The conventional distributed DP-PCA: each site releases its noisy local second-moment matrix (common task only).

Each agent j publishes the upper triangle of ``X_jᵀX_j`` plus independent ``N(0, σ²)`` noise (the analytic
Gaussian mechanism of sensitivity √2 under ``replace_one``, :mod:`ddppm.common_task.adjacency`); anyone sums the m
releases and takes the top-k eigenvectors. A neighbour changes one agent's release only, so the whole
transcript is one Gaussian mechanism: ``certified`` δ, under the ``local`` trust model (every release is public).
The sum carries noise of variance ``mσ²`` per entry: the price of trusting no one.

This is the standard baseline of distributed DP-PCA (e.g. H. Imtiaz and A. D. Sarwate, "Distributed
differentially private algorithms for matrix and tensor factorization", IEEE J. Sel. Topics Signal Process.
12(6), 2018, §III, the "conventional" approach CAPE improves on).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from ddppm.common_task.adjacency import release_sensitivity
from ddppm.common_task.base import COMMON_TASK, Calibrated, CommonTaskMethod, single_release, top_k, upper_triangle
from ddppm.common_task.task import CommonTask
from ddppm.methods.base import RegisteredMethod, register
from ddppm.privacy.mechanisms import symmetric_gaussian, symmetric_release


@register
class ConventionalDistributedPCA(RegisteredMethod, CommonTaskMethod):
    name = "conventional"
    label = "conventional (noisy local second moments)"
    style: ClassVar[dict[str, Any]] = {"color": "#bcbd22", "marker": "d", "linestyle": "--"}
    task = COMMON_TASK
    trust_model = "local"
    secure_noise = True
    source = "standard (Imtiaz & Sarwate 2018, §III)"

    def common_calibrate(self, task: CommonTask, eps: float, delta_limit: float, options: dict[str, Any]) -> Calibrated:
        return single_release(eps, delta_limit, release_sensitivity("upper_triangle", options["adjacency"]))

    second_moment = True

    def common_estimate(
        self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator], options: dict[str, Any]
    ) -> np.ndarray:
        return top_k(self.common_second_moment(task, calibrated, rngs, options), task.k)

    def common_second_moment(self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator],
                             options: dict[str, Any]) -> np.ndarray:  # fmt: skip
        """The sum of the agents' noisy second moments ``Σ_j (X_jᵀX_j + E_j)``."""
        sigma = float(calibrated.params["sigma"])
        local = [task.local_gram(j) for j in range(task.m)]
        return np.stack([sum(symmetric_release(G, sigma, rng) for G in local) for rng in rngs])

    federated = True
    streams = True

    def party_release(self, party: Any, step: str, public: dict[str, Any]) -> np.ndarray:
        """Party j's release ``X_jᵀX_j + E_j``; with simulation noise the one-process stream, skipping the draws
        of the parties before it."""
        sigma = float(party.public.calibration[0].params["sigma"])
        rng = party.method_noise()
        if party.agreement.noise == "simulation":
            for _ in range(party.index):
                symmetric_gaussian(party.public.d, sigma, rng)
        return symmetric_release(party.gram(), sigma, rng)

    def common_view(self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """Every agent's release (the upper triangle of its noisy second moment), in the order the estimate draws
        them: with no trusted party, anyone may see all of them."""
        sigma = float(calibrated.params["sigma"])
        local = [task.local_gram(j) for j in range(task.m)]
        return np.stack([np.concatenate([upper_triangle(G + symmetric_gaussian(task.d, sigma, rng)) for G in local])
                         for rng in rngs])  # fmt: skip

    def common_costs(self, task: CommonTask, calibrated: Calibrated) -> dict[str, Any]:
        return {"floats_per_agent": task.d * (task.d + 1) // 2, "rounds": 1, "memory": "d²"}
