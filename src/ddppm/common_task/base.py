"""The one interface every method implements to run on the common task, and the runner over methods and ε.

A registered method (:mod:`ddppm.methods`) solves the common task when it subclasses :class:`CommonTaskMethod`
(in its own module, beside its own task's interface: a thin adapter over its existing code). The runner asks
the registry for those methods (:func:`ddppm.methods.common_task_methods`, a layer above this one); nothing here
names one.

Each method says

* its ``trust_model`` (:data:`ddppm.methods.base.TRUST_MODELS`): who sees what, so whose view δ is computed for;
* its ``privacy_column``: ``certified`` (an upper bound on δ for every neighbour, by sensitivity plus exact
  composition, :mod:`ddppm.common_task.certified`), ``searched`` (the δ of the worst neighbour a search found: a lower
  bound), ``claimed`` (a library's own claim that no proof covers for what it releases: the peers as installed,
  :mod:`ddppm.methods.peers`) or ``none`` (a reference with no privacy claim);
* :meth:`CommonTaskMethod.common_calibrate`: its parameters at one (ε, δ limit), with the δ they achieve;
* :meth:`CommonTaskMethod.common_estimate`: one estimate ``V̂`` (d × k, orthonormal) per random generator;
* :meth:`CommonTaskMethod.common_costs`: floats each agent sends, communication rounds, per-agent memory.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ddppm.common_task.certified import certified_delta, composed_mu, noise_multiplier
from ddppm.common_task.task import CommonTask

COMMON_TASK = "principal_subspace"
"""The task of the methods written for the common task only (the conventional and CAPE baselines)."""

PRIVACY_COLUMNS = ("certified", "searched", "claimed", "none")


@dataclass(frozen=True)
class GaussianRelease:
    """What the trust model's observer sees of one kind of release: ``count`` Gaussian mechanisms, each of L2
    sensitivity ``sensitivity`` and noise standard deviation ``sigma`` (per coordinate)."""

    sensitivity: float
    sigma: float
    count: int = 1


@dataclass(frozen=True)
class Calibrated:
    """One method at one (ε, δ limit): its parameters, the releases its observer sees, and the δ they achieve
    (``delta``; NaN for a reference). ``feasible``: the δ is within the limit."""

    eps: float
    delta_limit: float
    params: dict[str, Any]
    releases: tuple[GaussianRelease, ...] = field(default=())
    delta: float = float("nan")

    @property
    def feasible(self) -> bool:
        return bool(np.isnan(self.delta) or self.delta <= self.delta_limit * (1 + 1e-9))


def releases_mu(releases: Sequence[GaussianRelease]) -> float:
    """The GDP parameter of ``releases`` composed (each counted ``count`` times):
    :func:`ddppm.common_task.certified.composed_mu`."""
    sens = [r.sensitivity for r in releases for _ in range(r.count)]
    sigmas = [r.sigma for r in releases for _ in range(r.count)]
    return composed_mu(sens, sigmas)


def certified(
    eps: float, delta_limit: float, params: dict[str, Any], releases: Sequence[GaussianRelease]
) -> Calibrated:
    """A :class:`Calibrated` whose δ is the certified δ of ``releases`` composed (every neighbour, exact)."""
    delta = certified_delta(releases_mu(releases), eps)
    return Calibrated(float(eps), float(delta_limit), dict(params), tuple(releases), delta)


def single_release(eps: float, delta_limit: float, sensitivity: float, multiplier: float | None = None) -> Calibrated:
    """One Gaussian mechanism of L2 sensitivity Δ = ``sensitivity`` with noise σ = ``multiplier`` · Δ per
    coordinate (default: the analytic Gaussian calibration to (ε, δ limit)), and the δ it certifies. Its params
    are ``sigma`` (the noise standard deviation) and ``sensitivity``."""
    factor = noise_multiplier(eps, delta_limit) if multiplier is None else float(multiplier)
    sigma = factor * sensitivity
    return certified(eps, delta_limit, {"sigma": sigma, "sensitivity": sensitivity},
                     [GaussianRelease(sensitivity, sigma)])  # fmt: skip


class CommonTaskMethod(ABC):
    """The common task's interface (mixed into a registered method's class)."""

    trust_model: ClassVar[str]
    privacy_column: ClassVar[str] = "certified"
    source: ClassVar[str] = ""
    """Where the method comes from (a paper, or ``standard``), for the tables."""
    runs_common_task: ClassVar[bool] = True
    """False for a method that implements the interface but coincides with another one on the common task."""
    pure_dp: ClassVar[bool] = False
    """True for a pure ε-DP method (no Gaussian releases): composed with the private preprocessing by
    :func:`ddppm.common_task.budget.pure_and_gaussian_delta` instead of in μ²."""
    preprocessing_party: ClassVar[str] = ""
    """Who releases the private preprocessing's sums in the end-to-end setting (:data:`ddppm.common_task.preprocessing.
    PARTIES`); empty: the trust model's (a curator for ``central`` and ``secure_aggregation``, each agent else)."""

    def common_style(self) -> dict[str, Any]:
        """Legend entry and line style on the common task (the method's own by default)."""
        return self.plot_style()  # type: ignore[attr-defined]

    @abstractmethod
    def common_calibrate(self, task: CommonTask, eps: float, delta_limit: float, options: dict[str, Any]) -> Calibrated:
        """The method's parameters at (ε, δ limit) on ``task`` and the δ they achieve under the adjacency
        ``options["adjacency"]`` (:data:`ddppm.common_task.adjacency.ADJACENCIES`)."""

    @abstractmethod
    def common_estimate(
        self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator], options: dict[str, Any]
    ) -> np.ndarray:
        """One estimate of the top-k directions per generator: shape ``(len(rngs), d, k)``, orthonormal columns."""

    @abstractmethod
    def common_costs(self, task: CommonTask, calibrated: Calibrated) -> dict[str, Any]:
        """``floats_per_agent`` (sent by one agent over the run), ``rounds`` (communication rounds) and
        ``memory`` (peak per-agent memory, as an order such as ``d²``)."""

    def common_view(self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """What the observer of the method's trust model sees, one flattened row per generator, drawn exactly as
        :meth:`common_estimate` draws it (the same generators give the same noise): what the audit attacks
        (:mod:`ddppm.audit`). A method without one is not audited yet (the audit's table says so)."""
        raise NotImplementedError(f"{type(self).__name__} has no common_view: the audit cannot attack it yet")


def upper_triangle(matrix: np.ndarray) -> np.ndarray:
    """The entries on and above the diagonal of a symmetric matrix (what a release of it publishes)."""
    return matrix[np.triu_indices(matrix.shape[0])]


def top_k(matrices: np.ndarray, k: int) -> np.ndarray:
    """The top-k eigenvectors of each symmetric matrix of ``matrices`` (shape ``(runs, d, d)``), descending."""
    symmetric = (matrices + np.swapaxes(matrices, -1, -2)) / 2
    _, vectors = np.linalg.eigh(symmetric)
    return vectors[..., ::-1][..., :k]
