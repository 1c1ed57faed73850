"""Wang & Xu's Algorithm 1 on the common task (:mod:`ddppm.common_task`): a thin adapter over :mod:`.mechanism`.

Every *individual* (row) ``x`` releases the upper triangle of ``x xᵀ`` plus ``N(0, σ²)`` noise, and the server
takes the top-k eigenvectors of the average (Algorithm 1, lines 1–5). Under the common adjacency one row changes
one release, whose sensitivity is that of ``upper_triangle`` (√2 under ``replace_one``, √(3/2) under
``distance_one``: :func:`ddppm.common_task.adjacency.release_sensitivity`). σ is the analytic Gaussian calibration at
that sensitivity: the paper's printed ``σ² = 2 ln(1.25/δ)/ε²`` assumes Δ = 1 and is not (ε, δ)-DP for its own
release (:mod:`.mechanism`, the ``sigma_mode`` erratum), so the common task does not use it.

The trust model is ``local`` at the finest grain: not even an agent is trusted with its own rows. The price is
noise of variance ``nσ²`` per entry of the sum (the conventional method pays ``mσ²`` for m agents). The server's
average is drawn once in law (:func:`.mechanism.aggregated_release`; the per-user route is checked against it in
``tests/methods/ldppca/test_ldppca.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from ddppm.common_task.adjacency import release_sensitivity
from ddppm.common_task.base import Calibrated, CommonTaskMethod, single_release, top_k
from ddppm.common_task.task import CommonTask
from ddppm.methods.ldppca.mechanism import aggregated_release, symmetric_noise, upper_triangle


class LocalPCAOnCommonTask(CommonTaskMethod):
    """Wang & Xu's per-individual release on the common task (mixed into Algorithm 1's registered class)."""

    source: ClassVar[str] = "Wang & Xu 2020, Algorithm 1"
    preprocessing_party: ClassVar[str] = "individuals"  # its individuals do not trust their agent with a record

    def common_style(self) -> dict[str, Any]:
        style = {**self.plot_style(), "linestyle": ":", "label": "Wang & Xu Alg. 1 (every row's x xᵀ noised)"}
        return style  # type: ignore[return-value]

    def common_calibrate(self, task: CommonTask, eps: float, delta_limit: float, options: dict[str, Any]) -> Calibrated:
        return single_release(eps, delta_limit, release_sensitivity("upper_triangle", options["adjacency"]))

    second_moment: ClassVar[bool] = True

    def common_estimate(
        self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator], options: dict[str, Any]
    ) -> np.ndarray:
        return top_k(self.common_second_moment(task, calibrated, rngs, options), task.k)

    def common_second_moment(self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator],
                             options: dict[str, Any]) -> np.ndarray:  # fmt: skip
        """The users' averaged releases ``S + Z̄`` (:func:`~.mechanism.aggregated_release`)."""
        sigma, S = float(calibrated.params["sigma"]), task.gram / task.n
        return np.stack([aggregated_release(S, task.n, sigma, rng) for rng in rngs])

    def common_view(self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """Record 0's release, the upper triangle of ``x₀x₀ᵀ + σ Z`` (Algorithm 1 line 2; the first user of
        :func:`.mechanism.per_user_release`, whose average :meth:`common_estimate` draws in law)."""
        sigma, x = float(calibrated.params["sigma"]), task.X[0]
        return np.stack([upper_triangle(np.outer(x, x) + sigma * symmetric_noise(rng, task.d)) for rng in rngs])

    def common_costs(self, task: CommonTask, calibrated: Calibrated) -> dict[str, Any]:
        rows = max(len(p) for p in task.parts)  # an agent forwards each of its individuals' releases
        return {"floats_per_agent": rows * task.d * (task.d + 1) // 2, "rounds": 1, "memory": "d² per individual"}
