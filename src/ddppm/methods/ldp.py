"""The naive local-DP baseline of the journal paper (§IV-A): every agent publishes its rows plus Gaussian noise.

Every agent publishes ``X̃_i = X_i + G_i`` with i.i.d. ``N(0, σ²)`` entries; the estimate is the top left
singular vector of ``X̃``. Rows lie in the unit ball and adjacent data sets differ in one row by at most
1, so the L2 sensitivity is ``Δ = 1``. Two calibrations of σ at the same (ε, δ limit):

* ``ldp``: the classic ``σ = sqrt(2 ln(1.25/δ))/ε``, as in the paper. Its proof covers ε < 1 only; the δ
  it really achieves (recorded in the ``delta`` column) is the exact one of that σ, which exceeds the
  limit at large ε, and the row is then marked infeasible;
* ``ldp_analytic``: the exact analytic Gaussian mechanism (Balle & Wang 2018), valid for every ε.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ddppm.common_task.adjacency import release_sensitivity
from ddppm.common_task.base import Calibrated, CommonTaskMethod, single_release, top_k
from ddppm.common_task.sampling import noisy_gram
from ddppm.common_task.task import CommonTask
from ddppm.core.metrics import sin_error
from ddppm.core.problem import DistributedProblem
from ddppm.methods.base import Method, gaussian_mechanism_params, register
from ddppm.privacy.mechanisms import (
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_release,
    is_release_noise,
)


def ldp_errors(
    X: np.ndarray, sigma: float, rngs: Sequence[np.random.Generator], v: np.ndarray | None = None
) -> np.ndarray:
    """Error (eq. 37) of the top left singular vector of ``X + σG`` for each run's generator.

    Vectorised: the ``R`` noisy matrices are stacked and their ``d × d`` Gram matrices diagonalised at once.
    """
    noisy = np.stack([X + sigma * rng.standard_normal(X.shape) for rng in rngs])  # (R, n, d)
    gram = np.einsum("rnd,rne->rde", noisy, noisy)
    _, vecs = np.linalg.eigh(gram)
    u = np.einsum("rnd,rd->nr", noisy, vecs[:, :, -1])
    if v is None:
        v = np.linalg.svd(X, full_matrices=False)[0][:, 0]
    return sin_error(v, u)


class _GaussianLDP(Method, CommonTaskMethod):
    """Shared by both calibrations: only :meth:`sigma` differs. On the common task (:mod:`ddppm.common_task`) every
    agent publishes its rows plus ``N(0, σ²)`` noise, σ scaled by the rows' sensitivity under the task's
    adjacency (2 for ``replace_one``); the estimate is the top-k eigenvectors of the noisy rows' Gram matrix."""

    source: ClassVar[str] = "the journal's baseline (§IV-A)"
    secure_noise: ClassVar[bool] = True

    # Each agent releases its own rows plus Gaussian noise: sensitivity 1 for every neighbour, whoever observes.
    delta_holds_for_every_threat_model = True
    trust_model = "local"
    audit_witness = "rows"

    @staticmethod
    def sigma(eps: float, delta: float) -> float:
        raise NotImplementedError

    def choose_params(
        self, problem: DistributedProblem, eps: np.ndarray, delta_limits: np.ndarray, options: dict[str, Any]
    ) -> pd.DataFrame:
        return gaussian_mechanism_params(eps, delta_limits, self.sigma)

    def run_errors(
        self,
        problem: DistributedProblem,
        params: pd.Series,
        rngs: Sequence[np.random.Generator],
        options: dict[str, Any],
    ) -> np.ndarray:
        return ldp_errors(problem.X, float(params["sigma"]), rngs, problem.top_eigenvector)

    def common_calibrate(self, task: CommonTask, eps: float, delta_limit: float, options: dict[str, Any]) -> Calibrated:
        delta = release_sensitivity("rows", options["adjacency"])
        # Both calibrations (classic, analytic) are linear in the sensitivity: σ = σ(ε, δ; Δ = 1) · Δ.
        return single_release(eps, delta_limit, delta, multiplier=self.sigma(eps, delta_limit))

    second_moment: ClassVar[bool] = True

    def common_estimate(
        self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator], options: dict[str, Any]
    ) -> np.ndarray:
        return top_k(self._noisy_grams(task, calibrated, rngs), task.k)

    def common_second_moment(self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator],
                             options: dict[str, Any]) -> np.ndarray:  # fmt: skip
        """The noisy rows' Gram less its known bias ``n σ² I`` (which shifts every eigenvalue alike, so the top k
        are the estimate's, but which a recolouring by unequal scales would turn into a direction)."""
        sigma = float(calibrated.params["sigma"])
        return self._noisy_grams(task, calibrated, rngs) - task.n * sigma**2 * np.eye(task.d)

    @staticmethod
    def _noisy_grams(task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        sigma = float(calibrated.params["sigma"])
        if task.n >= 2 * task.d and not is_release_noise(rngs):  # the noisy rows' Gram drawn in law, O(d³) (noisy_gram)
            return np.stack([noisy_gram(task.row_factor, task.n, sigma, rng) for rng in rngs])
        # every record's own release (a release draws these: no law stands in for the records' noise)
        noisy = np.stack([gaussian_release(task.X, sigma, rng) for rng in rngs])
        return np.einsum("rnd,rne->rde", noisy, noisy)

    federated: ClassVar[bool] = True

    def party_release(self, party: Any, step: str, public: dict[str, Any]) -> np.ndarray:
        """Agent j's noisy rows ``X_j + σG_j`` are its release; it sends their Gram ``(X_j + σG_j)ᵀ(X_j + σG_j)``
        (post-processing: d² floats, not n_j d). With simulation noise the rows' noise is the one-process draw of
        every row at once (the branch it takes with secure noise, or when n < 2d), the rows before j skipped; where
        the one-process simulation draws the whole Gram in law (n ≥ 2d, :func:`noisy_gram`), the two agree in law,
        not draw for draw."""
        sigma = float(party.public.calibration[0].params["sigma"])
        rng = party.method_noise()
        if party.agreement.noise == "simulation":
            rng.standard_normal((sum(party.agreement.sizes[: party.index]), party.public.d))
        noisy = gaussian_release(party.rows, sigma, rng)
        return noisy.T @ noisy

    def federated_second_moment(self, transport: Any, public: Any, message: dict[str, Any]) -> np.ndarray:
        """The agents' summed noisy Grams less their known bias ``n σ² I`` (:meth:`common_second_moment`)."""
        sigma = float(public.calibration[0].params["sigma"])
        return transport.sum("method", message) - public.agreement.n * sigma**2 * np.eye(public.d)

    def common_view(self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """Record 0's release ``x₀ + σ g`` (the first row of the noisy rows :meth:`common_estimate` draws when
        n < 2d; every other row's release is independent of it and has one law under both neighbours)."""
        sigma = float(calibrated.params["sigma"])
        return np.stack([task.X[0] + sigma * rng.standard_normal(task.d) for rng in rngs])

    def common_costs(self, task: CommonTask, calibrated: Calibrated) -> dict[str, Any]:
        rows = max(len(p) for p in task.parts)
        return {"floats_per_agent": rows * task.d, "rounds": 1, "memory": "n_j d (aggregator: d²)"}


@register
class ClassicLDP(_GaussianLDP):
    name = "ldp"
    label = "LDP (classic Gaussian)"
    style = {"color": "#d62728", "marker": "s", "linestyle": "--"}
    sigma = staticmethod(classic_gaussian_sigma)


@register
class AnalyticLDP(_GaussianLDP):
    name = "ldp_analytic"
    label = "LDP (analytic Gaussian)"
    style = {"color": "#ff7f0e", "marker": "^", "linestyle": "-."}
    sigma = staticmethod(analytic_gaussian_sigma)
