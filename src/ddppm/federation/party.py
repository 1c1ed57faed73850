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
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ddppm.common_task.clip_radius import norm_counts
from ddppm.common_task.preprocessing import (
    PreprocessingPlan,
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
from ddppm.federation.protocols import protocol_of
from ddppm.federation.public import PublicRelease
from ddppm.privacy.mechanisms import gaussian_release
from ddppm.release.ledger import ledger_of
from ddppm.release.noise import SecureNoise


class Party:
    """Party ``index`` of the agreement, holding ``X`` (its raw records, n_j × d), with its own privacy ledger
    (:class:`~ddppm.release.ledger.PrivacyLedger` or its path; None: no ledger), charged before its first reply."""

    def __init__(self, X: np.ndarray, index: int, agreement: Agreement, ledger: Any = None) -> None:
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
        self.Z = prepare_public(X, self.public.bounds, self.public.normalization)
        self.rows: np.ndarray | None = None
        self.ledger, self.spent = ledger_of(ledger), False
        self._records = X
        self._pre_rng = self._noise_source(self.public.preprocessing_generator())

    def answer(self, step: str, public: dict[str, Any]) -> np.ndarray:
        """This party's noisy contribution to the sum of ``step`` (module docstring)."""
        digest = public.get("agreement")
        if digest != self.agreement.digest():
            raise ConfigError(f"party {self.index}: the coordinator's agreement differs from the one this party "
                              "accepted (ε, δ, bounds, method, sizes, ...); it answers nothing")  # fmt: skip
        if not self.spent:  # before its first noisy reply: refused here, nothing is drawn
            if self.ledger is not None:
                method = self.public.method
                self.ledger.spend(self._records, method.name, self.agreement.epsilon, self.agreement.delta,
                                  gaussian=not (method.pure_dp or method.failure_test))  # fmt: skip
            self.spent = True
        if step == "box_counts":
            counts = bin_counts(self.Z, public["lower"], public["upper"], self.public.plan.range.bins).astype(float)
            return self._noisy(counts, self.public.noise.sigma_range)
        if step == "sums":
            return self._sums(public)
        if step == "norm_counts":
            released = Released(public["mean"], public.get("variance"))
            counts = norm_counts(centred_norms(self.Z, released), public["radii"])
            return self._noisy(counts, self.public.noise.sigma_radius)
        if step.startswith("method"):
            if self.rows is None and "mean" not in public:  # not centred: the rows are the publicly prepared ones
                self.rows = self.Z
            elif self.rows is None:
                released = Released(public["mean"], public.get("variance"), public.get("radius"))
                self.rows = standardise_rows(self.Z, released, self.public.plan, overwrite=True)
            return protocol_of(self.public.method).party_release(self, step, public)
        raise ConfigError(f"party {self.index}: unknown step {step!r}")

    def method_noise(self) -> Any:
        """The method's noise source: the one-process fit's method generator (simulation) or OpenDP's sampler."""
        return self._noise_source(self.public.method_generator())

    def _sums(self, public: dict[str, Any]) -> np.ndarray:
        plan: PreprocessingPlan = self.public.plan
        if public.get("lower") is not None:
            self.Z = to_box(self.Z, public["lower"], public["upper"], overwrite=True)
        if not plan.scale:
            box = self.public.box(public.get("lower"), public.get("upper"))
            self.Z = common_scale(self.Z, self.public.widths, box, overwrite=True)
        noise = self.public.noise
        total = self._noisy(self.Z.sum(axis=0), noise.sigma_sum)
        if not plan.scale:
            return total
        return np.concatenate([total, self._noisy(column_squares(self.Z), noise.sigma_squares)])

    def _noisy(self, statistic: np.ndarray, sigma: float) -> np.ndarray:
        """The statistic plus this party's share of the noise whose total has the one-process fit's law: one
        Gaussian of standard deviation √p·σ for p noising parties (:class:`PreprocessingNoise`'s ``parties``)."""
        total_std = np.sqrt(self.public.noise.parties) * sigma
        if self.agreement.noise == "simulation":
            return gaussian_release(statistic, total_std, self._pre_rng) if self.index == 0 else statistic
        return gaussian_release(statistic, total_std / np.sqrt(len(self.agreement.sizes)), self._pre_rng)

    def _noise_source(self, generator: np.random.Generator) -> Any:
        if self.agreement.noise == "simulation":
            return generator
        return SecureNoise(np.random.default_rng())  # a party's own noise: never the shared seed's stream
