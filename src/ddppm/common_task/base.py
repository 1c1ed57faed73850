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
    (``delta``; NaN for a reference). ``feasible``: the δ is within the limit. ``test_failure``: for a
    propose-test-release method, the probability (under either neighbour) that its private test passes where its
    releases' sensitivity bound fails; it adds ``(1 + e^ε)·test_failure`` to δ (:func:`failure_delta`)."""

    eps: float
    delta_limit: float
    params: dict[str, Any]
    releases: tuple[GaussianRelease, ...] = field(default=())
    delta: float = float("nan")
    test_failure: float = 0.0

    @property
    def feasible(self) -> bool:
        return bool(np.isnan(self.delta) or self.delta <= self.delta_limit * (1 + 1e-9))


def releases_mu(releases: Sequence[GaussianRelease]) -> float:
    """The GDP parameter of ``releases`` composed (each counted ``count`` times):
    :func:`ddppm.common_task.certified.composed_mu`."""
    sens = [r.sensitivity for r in releases for _ in range(r.count)]
    sigmas = [r.sigma for r in releases for _ in range(r.count)]
    return composed_mu(sens, sigmas)


def failure_delta(eps: float, test_failure: float) -> float:
    """What a test that fails with probability at most ``test_failure`` under each neighbour adds to δ at ε:
    ``(1 + e^ε)·test_failure``. The mechanism differs from a GDP one (the same with noise for the true distance)
    only where the test fails, an event of probability ≤ ``test_failure`` under X and under X′: coupling both
    sides costs it once, and once more times ``e^ε`` (docs/common_task.md, Cai, Xia & Zha)."""
    if test_failure <= 0:
        return 0.0
    return float(np.exp(np.log(test_failure) + np.logaddexp(0.0, eps)))  # e^ε alone overflows from ε ≈ 709


def certified(
    eps: float, delta_limit: float, params: dict[str, Any], releases: Sequence[GaussianRelease],
    test_failure: float = 0.0,
) -> Calibrated:  # fmt: skip
    """A :class:`Calibrated` whose δ is the certified δ of ``releases`` composed (every neighbour, exact), plus
    :func:`failure_delta` of a propose-test-release method's test."""
    delta = certified_delta(releases_mu(releases), eps) + failure_delta(eps, test_failure)
    return Calibrated(float(eps), float(delta_limit), dict(params), tuple(releases), delta, float(test_failure))


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
    failure_test: ClassVar[bool] = False
    """True for a method whose calibration carries a test that may fail (``Calibrated.test_failure`` > 0): its
    release is not exactly Gaussian, so a privacy ledger composes it by the basic sum (:mod:`ddppm.release.ledger`)."""
    preprocessing_party: ClassVar[str] = ""
    """Who releases the private preprocessing's sums in the end-to-end setting (:data:`ddppm.common_task.preprocessing.
    PARTIES`); empty: the trust model's (a curator for ``central`` and ``secure_aggregation``, each agent else)."""
    max_rank: ClassVar[int | None] = None
    """The largest k the method estimates (None: any k < d). The runners skip it at a larger k (DP-PCA: k = 1)."""
    audit_witness: ClassVar[str] = "second_moment"
    """The release whose sensitivity the audit's witness pair attains (:func:`ddppm.audit.run.witness_tasks`):
    ``second_moment`` (two orthogonal unit rows; every release of ``XᵀX``, ``X_jᵀX_j``, ``x xᵀ`` or a power step
    near the changed direction), ``rows`` (a unit row and its negative) or ``lone_record`` (two orthogonal unit
    rows, every other row zero: for a sampler whose draw the other rows would pin)."""

    secure_noise: ClassVar[bool] = False
    """True when every noise draw of :meth:`common_estimate` goes through
    :func:`ddppm.privacy.mechanisms.gaussian_release` (or ``symmetric_release``), so that a release can draw it
    from a secure sampler (:mod:`ddppm.release.noise`); tested by a source that adds no noise."""

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

    second_moment: ClassVar[bool] = False
    """True for a method whose estimate is the top k of one noisy second-moment matrix it releases
    (:meth:`common_second_moment`): ``standardize="center"`` then recolours that matrix by the private scales
    (:func:`ddppm.release.route.draw_release`), so that directions in small-unit features survive the noise."""

    def common_second_moment(self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator],
                             options: dict[str, Any]) -> np.ndarray:  # fmt: skip
        """The noisy second-moment matrix whose top k :meth:`common_estimate` returns, one per generator (shape
        ``(len(rngs), d, d)``, symmetric), drawn exactly as the estimate draws it."""
        raise NotImplementedError(f"{type(self).__name__} releases no second-moment matrix")

    @abstractmethod
    def common_costs(self, task: CommonTask, calibrated: Calibrated) -> dict[str, Any]:
        """``floats_per_agent`` (sent by one agent over the run), ``rounds`` (communication rounds) and
        ``memory`` (peak per-agent memory, as an order such as ``d²``)."""

    def common_view(self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """What the observer of the method's trust model sees, one flattened row per generator, drawn exactly as
        :meth:`common_estimate` draws it (the same generators give the same noise): what the audit attacks
        (:mod:`ddppm.audit`). A method whose releases are per record may return record 0's release alone (the
        witness pair changes record 0; every other release has the same law under both neighbours and is
        independent of it, so a test gains nothing from them). A method without one is not audited yet."""
        raise NotImplementedError(f"{type(self).__name__} has no common_view: the audit cannot attack it yet")

    federated: ClassVar[bool] = False
    """True for a method that runs across parties that never pool their rows (:mod:`ddppm.federation`): it
    defines :meth:`party_release` (and :meth:`federated_estimate` if a sum and its top k are not its answer)."""
    streams: ClassVar[bool] = False
    """True for a federated method whose party releases a function of its rows' ``XᵀX`` alone (``party.gram()``):
    it runs on rows read a block at a time (:mod:`ddppm.release.stream`)."""
    secure_sum_only: ClassVar[bool] = False
    """True for a federated method whose parties each add a share of the noise only: with secure noise it runs
    through secure aggregation alone, so that nobody sees one party's release."""

    def party_release(self, party: Any, step: str, public: dict[str, Any]) -> np.ndarray:
        """What one party of a federation sends at ``step`` (:class:`ddppm.federation.party.Party`: its
        standardised ``rows``, ``index``, ``agreement``, ``public`` and ``method_noise()``), drawn exactly as
        :meth:`common_estimate` draws that party's part with simulation noise."""
        raise NotImplementedError(f"{type(self).__name__} does not run across parties yet")

    federated_query: ClassVar[str | None] = None
    """The key of the public query block a method step carries (the power methods' ``X``, D-DP-PM's ``B``), None
    when its steps carry none; a party checks it with :meth:`check_federated_query` (:mod:`ddppm.federation.plan`)."""

    def federated_steps(self, public: Any) -> tuple[str, ...]:
        """The names of the method's steps in a federation, in order (the public plan's last part): by default one,
        ``method``."""
        return ("method",)

    def check_federated_query(self, public: Any, index: int, round: int, block: Any) -> np.ndarray:
        """Party ``index``'s check of the query block of method round ``round`` (its shape, finiteness, and what the
        method's sensitivity assumes); returns the block as a float array, or raises ValueError."""
        raise ValueError(f"{self.name}'s steps carry no query block")

    def federated_noise(self, public: Any) -> float:
        """The largest noise standard deviation one party adds to an entry of a ``method`` step's reply (simulation:
        party 0's, the total's): what fixes secure aggregation's public scale. By default the calibration's
        ``sigma`` times √(parties)."""
        return float(public.calibration[0].params["sigma"]) * float(np.sqrt(public.parties))

    def federated_second_moment(self, transport: Any, public: Any, message: dict[str, Any]) -> np.ndarray:
        """The coordinator's noisy second moment (d × d) of a :attr:`second_moment` method: by default the parties'
        summed ``method`` releases, as :meth:`common_second_moment` draws it."""
        return transport.sum("method", message)

    def federated_estimate(self, transport: Any, public: Any, message: dict[str, Any]) -> np.ndarray:
        """The coordinator's half (d × k): by default the top k of the parties' summed ``method`` releases."""
        total = transport.sum("method", message)
        return top_k(total[None], public.k)[0]

    def common_view_scores(self, first: CommonTask, second: CommonTask, calibrated: Calibrated,
                           views: np.ndarray) -> np.ndarray:  # fmt: skip
        """Candidate test statistics of each view (shape ``(runs, S)``; larger means ``second``): column 0 is the
        log-likelihood ratio ``log p_second(view) − log p_first(view)`` of the mechanism *as specified* (the
        Neyman–Pearson test of the pair), further columns its parts (one per release), which a broken
        implementation may betray more clearly. Optional: without it the audit trains a linear test."""
        raise NotImplementedError(f"{type(self).__name__} has no exact likelihood ratio")


def estimates_rank(method: Any, k: int) -> bool:
    """Whether ``method`` estimates k directions (its :attr:`CommonTaskMethod.max_rank` allows k)."""
    limit = getattr(method, "max_rank", None)
    return limit is None or int(k) <= int(limit)


def curator_costs(task: CommonTask) -> dict[str, Any]:
    """The costs of a method with a trusted curator: every agent hands its rows to it once."""
    rows = max(len(p) for p in task.parts)
    return {"floats_per_agent": rows * task.d, "rounds": 1, "memory": "n_j d (curator: d²)"}


def upper_triangle(matrix: np.ndarray) -> np.ndarray:
    """The entries on and above the diagonal of a symmetric matrix (what a release of it publishes)."""
    return matrix[np.triu_indices(matrix.shape[0])]


def top_k(matrices: np.ndarray, k: int) -> np.ndarray:
    """The top-k eigenvectors of each symmetric matrix of ``matrices`` (shape ``(runs, d, d)``), descending."""
    symmetric = (matrices + np.swapaxes(matrices, -1, -2)) / 2
    _, vectors = np.linalg.eigh(symmetric)
    return vectors[..., ::-1][..., :k]
