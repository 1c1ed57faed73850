"""A party of a federated release: it holds its own rows and answers the coordinator's steps with its noisy
contribution to a sum, computed by the very functions ``PrivatePCA`` runs (docs/federation.md).

A party never sends a row. Each step's reply is a statistic of its own rows plus its share of the noise:

* ``box_counts``: the private box's histogram of its rows (:func:`~ddppm.common_task.range_finding.bin_counts`);
* ``sums``: its rows' sum and, when scaling, their squares' sum, re-prepared in the released box first
  (:func:`~ddppm.common_task.range_finding.to_box`; centring only: at the common scale,
  :func:`~ddppm.common_task.preprocessing.common_scale`);
* ``norm_counts``: the histogram of its centred rows' norms for the clipping radius;
* ``method``: the method's own release of its standardised rows (:mod:`ddppm.federation.protocols`).

**Noise.** With ``noise="secure"`` every party adds its own Gaussian from OpenDP's sampler: for a statistic whose
one-process release draws one Gaussian of standard deviation s on the total, each of the p parties adds s/√p, so
the sum carries exactly that law. With ``noise="simulation"`` (only to compare with a one-process fit) party 0
draws the total's noise from the one-process fit's own generator, in its order, and the others draw none; a
method's per-party draws come from the same stream, each party skipping the draws of the parties before it.

**It trusts no one.** A party answers only what the public plan allows (:mod:`ddppm.federation.plan`): each step
once, in order, after checking every public value the message carries; it charges its ledger (once per run, under
the run's identifier) before its first noisy reply; its refusals are four words, their details in its own log.

**Restartable.** Flower runs a ClientApp process per message, so a party is rebuilt for every step from its rows,
the agreement and a small :attr:`Party.state` (its position in the plan and the values released so far, whether
its ledger is charged, and the positions of its simulation streams), which the ClientApp keeps in Flower's context
between messages. Every message carries what was released
so far (the box, the statistics, the radius): the party re-prepares its rows from them, by the same functions, so
the bits are those of a party kept alive (tested).
"""

from __future__ import annotations

import json
import uuid
from functools import cached_property
from typing import Any

import numpy as np

from ddppm.common_task.clip_radius import norm_counts
from ddppm.common_task.preprocessing import (
    Released,
    centred_norms,
    common_scale,
    standardise_rows,
)
from ddppm.common_task.range_finding import bin_counts, to_box
from ddppm.core.arrays import column_squares
from ddppm.core.errors import ConfigError, DataError
from ddppm.data.public_prep import prepare_public
from ddppm.federation.agreement import Agreement
from ddppm.federation.journal import StepJournal
from ddppm.federation.plan import PlanFollower, Refused, log
from ddppm.federation.protocols import protocol_of
from ddppm.federation.public import PublicRelease
from ddppm.privacy.mechanisms import gaussian_release
from ddppm.release.ledger import LedgerError, RunAlreadyCharged, ledger_of
from ddppm.release.noise import SecureNoise


class Party:
    """Party ``index`` of the agreement, holding ``X`` (its raw records, n_j × d), with its own privacy ledger
    (:class:`~ddppm.release.ledger.PrivacyLedger` or its path; None: no ledger), charged once per run before its
    first reply; ``state``: what :attr:`state` returned after its previous step (None: the first); ``run``: the
    run's identifier, which its ledger entry carries (None: a new one; a run already in the ledger is refused)."""

    def __init__(self, X: np.ndarray, index: int, agreement: Agreement, ledger: Any = None,
                 state: dict[str, Any] | None = None, run: str | None = None) -> None:  # fmt: skip
        X = np.array(X, dtype=np.float64, order="C")
        if X.ndim != 2 or not np.all(np.isfinite(X)):
            raise DataError("party: the records must be a finite 2-D array (one record per row)")
        if not 0 <= index < len(agreement.sizes):
            raise ConfigError(f"party: index {index} is not one of the agreement's {len(agreement.sizes)} parties")
        if X.shape[0] != agreement.sizes[index]:
            raise ConfigError(f"party {index}: it holds {X.shape[0]} rows, the agreement says {agreement.sizes[index]} "
                              "(the parties' sizes are public and agreed before the run)")  # fmt: skip
        self.index, self.agreement = index, agreement
        self.public = PublicRelease(agreement, X.shape[1])
        self.ledger = ledger_of(ledger)
        self._records = X
        self._prepared: dict[str, Any] = {}
        self._streams: dict[str, Any] = {}
        self._saved = dict(state or {"charged": False, "streams": {}})
        if state is not None and (state.get("run") != (run or state.get("run"))
                                  or state.get("agreement") != agreement.digest()):  # fmt: skip
            raise Refused("protocol", f"a saved state of run {state.get('run')!r} and agreement "
                          f"{str(state.get('agreement'))[:12]!r} offered for run {run!r} of agreement "
                          f"{agreement.digest()[:12]} (a new run starts afresh, and is charged)")  # fmt: skip
        self._saved.setdefault("run", run or f"local:{uuid.uuid4().hex}")
        self._saved["agreement"] = agreement.digest()
        self.rows: np.ndarray | None = None

    @property
    def state(self) -> dict[str, Any]:
        """What a rebuilt party needs to go on (JSON-ready): whether its ledger is charged, and each simulation
        stream's position (numpy's bit-generator state)."""
        streams = dict(self._saved["streams"])
        for name, stream in self._streams.items():
            if isinstance(stream, np.random.Generator):
                streams[name] = json.dumps(stream.bit_generator.state)
        return {"charged": self._saved["charged"], "run": self._saved.get("run"),
                "agreement": self._saved.get("agreement"), "streams": streams, "plan": self.follower.state}  # fmt: skip

    @property
    def run(self) -> str:
        """This run's identifier (its ledger entry's)."""
        return str(self._saved["run"])

    @cached_property
    def follower(self) -> PlanFollower:
        """This party's side of the public plan (:mod:`ddppm.federation.plan`), where its previous step left it."""
        return PlanFollower(self.public, self.index, self._saved.get("plan"))

    def answer(self, step: str, public: dict[str, Any]) -> np.ndarray:
        """This party's noisy contribution to the sum of ``step`` (module docstring), once the public plan admits
        it (:class:`~ddppm.federation.plan.PlanFollower`): the agreement's digest, then the step and every value it
        carries, then the ledger's charge (once per run), then the answer. Any refusal is a
        :class:`~ddppm.federation.plan.Refused` whose text is one of four words; its details go to this party's
        own log (``ddppm.party``), never to the coordinator."""
        try:
            if not isinstance(public, dict) or public.get("agreement") != self.agreement.digest():
                raise Refused("agreement", "the message's agreement digest differs from the accepted agreement's")
            journal = self._journal()
            if journal is not None and journal.position(self.run) > self.follower.position:
                raise Refused("protocol", f"run {self.run}: the journal has steps this state has not (a state lost "
                              "after a reply left, or two processes from one state)")  # fmt: skip
            checked = self.follower.admit(step, public)
            self._charge()
            if journal is not None:  # before the answer is computed: a step recorded is never answered again
                journal.advance(self.run, self.follower.position)
        except Refused as refusal:
            log.error("party %s refused step %r: %s (%s)", self.index, step, refusal.refusal, refusal.detail)
            raise
        if step in STATISTICS:
            return self._noisy_statistic(step, self._statistic(step, checked))
        self._prepare_method(checked)
        return protocol_of(self.public.method).party_release(self, step, checked)

    def _journal(self) -> StepJournal | None:
        """The journal of steps beside this party's ledger (:mod:`ddppm.federation.journal`); None without one."""
        return None if self.ledger is None else StepJournal(self.ledger.path)

    def _charge(self) -> None:
        """Charge the run's (ε, δ) to this party's ledger before its first noisy reply, once per run: the entry
        carries the run's identifier, so a rebuilt party that lost its state cannot charge, nor answer, the same
        run twice. A spent budget is refused with nothing drawn."""
        if self._saved["charged"]:
            if self.ledger is not None and not self._saved.get("verified"):  # the state says so: the ledger must too
                try:
                    runs = [entry["run"] for entry in self.ledger.state()["releases"]]
                except LedgerError as error:
                    raise Refused("budget", str(error)) from None
                if self.run not in runs:
                    raise Refused("protocol", f"a state charged for run {self.run}, which the ledger never charged")
                self._saved["verified"] = True  # once per party object (the state it saves does not carry this)
            return
        if self.ledger is not None:
            method = self.public.method
            try:
                self.ledger.spend(self._records, method.name, self.agreement.epsilon, self.agreement.delta,
                                  gaussian=not (method.pure_dp or method.failure_test), run=self.run)  # fmt: skip
            except RunAlreadyCharged as error:
                raise Refused("protocol", f"run {self.run} was begun before: {error}") from None
            except LedgerError as error:
                raise Refused("budget", str(error)) from None
        self._saved["charged"] = self._saved["verified"] = True

    @property
    def size(self) -> int:
        """This party's count of rows (public: the agreement's)."""
        return int(self.agreement.sizes[self.index])

    def gram(self) -> np.ndarray:
        """``XᵀX`` of this party's standardised rows (d × d), computed once per run: what every method but the
        per-row ones releases a noisy function of."""
        if "gram" not in self._prepared:
            self._prepared["gram"] = self.rows.T @ self.rows
        return self._prepared["gram"]

    def _statistic(self, step: str, public: dict[str, Any]) -> np.ndarray:
        """The statistic of ``step`` (one of :data:`STATISTICS`) of this party's rows, before its noise."""
        return step_statistic(step, self._boxed(None if step == "box_counts" else public), self.public, public)

    def _noisy_statistic(self, step: str, total: np.ndarray) -> np.ndarray:
        """``total`` (:meth:`_statistic`) plus this party's noise, drawn in the one-process fit's order."""
        noise = self.public.noise
        if step == "box_counts":
            return self._noisy(total, noise.sigma_range)
        if step == "norm_counts":
            return self._noisy(total, noise.sigma_radius)
        if not self.public.plan.scale:
            return self._noisy(total, noise.sigma_sum)
        d = self.public.d
        return np.concatenate([self._noisy(total[:d], noise.sigma_sum), self._noisy(total[d:], noise.sigma_squares)])

    def _prepare_method(self, public: dict[str, Any]) -> None:
        """Standardise the rows once, with the released statistics in ``public``, before the method's steps."""
        if self.rows is None:
            self.rows = self._standardised(public)

    def noise_stream(self, name: str, make: Any) -> Any:
        """The noise source ``name``: simulation: a numpy generator made by ``make()`` the first time, then restored
        at its position; secure: OpenDP's sampler (a party's own noise, never the shared seed's stream)."""
        if name not in self._streams:
            if self.agreement.noise != "simulation":
                self._streams[name] = SecureNoise(np.random.default_rng())
            elif name in self._saved["streams"]:
                generator = np.random.default_rng()
                generator.bit_generator.state = json.loads(self._saved["streams"][name])
                self._streams[name] = generator
            else:
                self._streams[name] = make()
        return self._streams[name]

    def method_noise(self) -> Any:
        """The method's noise: the one-process fit's method stream (simulation), or OpenDP's sampler."""
        return self.noise_stream("method", self.public.method_generator)

    def _boxed(self, public: dict[str, Any] | None) -> np.ndarray:
        """The publicly prepared rows (``public`` None), or those re-prepared in the released box, kept."""
        key = "boxed" if public is not None else "prepared"
        if key not in self._prepared:
            prepared = self._prepared.get("prepared")  # the box's rounds prepared them already: the same bits
            if prepared is not None and public is not None:
                Z = prepared.copy()
            else:
                Z = prepare_public(self._records, self.public.bounds, self.public.normalization)
            self._prepared[key] = reboxed(Z, self.public, public) if public is not None else Z
        return self._prepared[key]

    def _standardised(self, public: dict[str, Any]) -> np.ndarray:
        if "mean" not in public:  # not centred: the rows are the publicly prepared ones
            return prepare_public(self._records, self.public.bounds, self.public.normalization)
        released = Released(public["mean"], public.get("variance"), public.get("radius"))
        return standardise_rows(self._boxed(public).copy(), released, self.public.plan, overwrite=True)

    def _noisy(self, statistic: np.ndarray, sigma: float) -> np.ndarray:
        """The statistic plus this party's share of the noise whose total has the one-process fit's law: one
        Gaussian of standard deviation √p·σ for p noising parties (:class:`PreprocessingNoise`'s ``parties``)."""
        total_std = np.sqrt(self.public.noise.parties) * sigma
        stream = self.noise_stream("preprocessing", self.public.preprocessing_generator)
        if self.agreement.noise == "simulation":
            return gaussian_release(statistic, total_std, stream) if self.index == 0 else statistic
        # the curator's noise is seen only in the sum: shared among the p − c parties that do not collude; the
        # agents' noise (each release public) is σ from each party, whoever colludes
        sharers = self.public.noise_sharers if self.public.party_label == "curator" else self.public.parties
        return gaussian_release(statistic, total_std / np.sqrt(sharers), stream)


STATISTICS = ("box_counts", "sums", "norm_counts")
"""The preprocessing's steps: each a sum over rows of a statistic, noised once (:func:`step_statistic`)."""


def step_statistic(step: str, boxed: np.ndarray, public: PublicRelease, message: dict[str, Any]) -> np.ndarray:
    """The statistic of ``step`` of rows ``boxed`` (for ``box_counts`` the publicly prepared rows; otherwise those
    rows re-prepared in the released box, :func:`reboxed`), a sum over the rows, without noise: the box's histogram
    (float), the rows' sum (and their squares' sum when scaling), or the histogram of the centred rows' norms."""
    if step == "box_counts":
        return bin_counts(boxed, message["lower"], message["upper"], public.plan.range.bins).astype(float)
    if step == "sums":
        total = boxed.sum(axis=0)
        return np.concatenate([total, column_squares(boxed)]) if public.plan.scale else total
    if step == "norm_counts":
        released = Released(message["mean"], message.get("variance"))
        return norm_counts(centred_norms(boxed, released), message["radii"]).astype(float)
    raise ConfigError(f"unknown step {step!r}")


def reboxed(Z: np.ndarray, public: PublicRelease, message: dict[str, Any]) -> np.ndarray:
    """Publicly prepared rows ``Z`` re-prepared, in place, in the released box (``message``'s lower and upper;
    centring only: at the common scale)."""
    if message.get("lower") is not None:
        Z = to_box(Z, message["lower"], message["upper"], overwrite=True)
    if not public.plan.scale:
        Z = common_scale(Z, public.widths, public.box(message.get("lower"), message.get("upper")), overwrite=True)
    return Z


def standardised(Z: np.ndarray, public: PublicRelease, message: dict[str, Any]) -> np.ndarray:
    """Publicly prepared rows ``Z`` as the method sees them (in place): re-prepared in the box, centred (and
    scaled) with the released statistics, over the radius, clipped to the unit ball; unchanged when the records
    are not centred (``message`` has no mean)."""
    if "mean" not in message:
        return Z
    released = Released(message["mean"], message.get("variance"), message.get("radius"))
    return standardise_rows(reboxed(Z, public, message), released, public.plan, overwrite=True)
