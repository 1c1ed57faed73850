"""``ddppm.PrivatePCA``: a private PCA in scikit-learn's shape, on the bench's own code (docs/release.md).

``fit`` runs the common task's route from the raw records, the very functions the bench measures
(:mod:`ddppm.common_task.raw_records`): the public preparation (:func:`~ddppm.data.public_prep.prepare_public`:
clip to the declared bounds, centre at their midpoint), the private standardisation with its share of the budget
(:func:`~ddppm.common_task.preprocessing.private_statistics`), the method's calibration to what is left
(:func:`~ddppm.common_task.raw_records.calibrate_end_to_end`) and its estimate (``common_estimate``). One (ε, δ)
covers all of it, for one record replaced inside the bounds, seen by the trust model's observer
(:mod:`ddppm.release.certificate`). With ``noise="simulation"`` and ``random_state=s`` the fit draws exactly the
bench's run 0 for seed ``s`` (tested); with ``noise="secure"`` every Gaussian comes from OpenDP's sampler
(:mod:`ddppm.release.noise`).

Released: ``components_`` (k × d, the top-k directions of the privately standardised records), ``mean_`` and
``scale_`` (in the records' units: the private mean and standard deviations; centring only, the scale of the
private box, or of the declared bounds where no box ran), and ``privacy_``. No eigenvalue or explained variance
is released (none is private here).
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import replace
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ddppm.common_task.raw_records import RawRecords
from ddppm.common_task.run import TRUST_LEVELS, TRUST_ORDER
from ddppm.core.errors import ConfigError, DataError, PrivacyError
from ddppm.methods import common_task_methods
from ddppm.release.certificate import Certificate
from ddppm.release.inputs import (
    check_budget,
    check_choices,
    check_rank,
    clipped_count,
    declared_bounds,
    party_parts,
    stacked_parties,
    standardize_choice,
)
from ddppm.release.ledger import ledger_of
from ddppm.release.route import (  # noqa: F401 (METHOD_OPTIONS, SECURE_MARGIN: the estimator's public names too)
    METHOD_OPTIONS,
    SECURE_MARGIN,
    draw_release,
    method_options,
    parties_records,
    release_certificate,
)


class ClippingWarning(UserWarning):
    """Values fell outside the declared bounds and were clipped (their count is for the data holder only)."""


class PrivatePCA(TransformerMixin, BaseEstimator):
    """Differentially private PCA of raw records, for one curator or many parties.

    Parameters
    ----------
    n_components : int
        k, the number of principal directions released (1 ≤ k < d).
    epsilon, delta : float
        The privacy budget of the whole release, preprocessing included (ε > 0, 0 < δ < 1/n).
    bounds : mapping or PublicBounds
        Public per-feature bounds with their ``source`` (``features``: one ``[lower, upper]`` per feature;
        ``all_features``; or, with ``standardize=False``, ``row_norm``). Required: bounds from the records themselves
        would leak them. Values outside are clipped; a :class:`ClippingWarning` says how many, to the data holder
        only (the count is not stored on the model, which users pickle and share).
    trust : {"central", "secure_aggregation", "local"}
        Whom the record holders trust: a curator, an aggregator that sees only sums, or no one.
    method : str
        A method of the common task (``ddppm.available_methods()``), or ``"auto"``: the advisor's choice from
        public parameters only (n, d, parties, ε, δ, trust, k, and whether the declared bounds put the features in
        mixed units; :func:`ddppm.studies.advisor.advise`).
    standardize : {True, "center", False}
        Centre and scale privately (the standardised PCA); the centred PCA in the records' units, scikit-learn's
        (:mod:`ddppm.common_task.centring`); or neither (directions of the second moment).
    random_state : int or None
        Seeds the public randomness (and, with ``noise="simulation"``, the noise). Secure noise is never seeded.
    noise : {"secure", "simulation"}
        OpenDP's sampler (releases) or numpy's (reproducible benchmarks; not for releasing real data).
    method_options : mapping or None
        Overrides of :data:`METHOD_OPTIONS`.
    budget : PrivacyLedger, path or None
        The data set's privacy ledger (:mod:`ddppm.release.ledger`): the fit reserves its (ε, δ) there before any
        noise is drawn, and is refused if the ledger's releases composed with it would pass its budget.
    """

    def __init__(self, n_components: int, epsilon: float, delta: float, bounds: Any = None, *,
                 trust: str = "central", method: str = "auto", standardize: bool | str = True,
                 random_state: int | None = None, noise: str = "secure",
                 method_options: dict[str, Any] | None = None, budget: Any = None) -> None:  # fmt: skip
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.trust = trust
        self.method = method
        self.standardize = standardize
        self.random_state = random_state
        self.noise = noise
        self.method_options = method_options
        self.budget = budget

    def fit(self, X: Any, y: Any = None, parties: Any = None) -> PrivatePCA:
        """Release the private PCA of ``X`` (n × d raw records, or a list of the parties' arrays).

        ``parties``: one party label per row (each party computes only on its own rows); None: one curator holds
        every row. Every check of the inputs runs before any noise is drawn.
        """
        if isinstance(X, list | tuple) and X and all(np.ndim(block) == 2 for block in X) and parties is None:
            X, parties = stacked_parties(X)
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        n, d = X.shape
        standardize = standardize_choice(self.standardize)
        check_choices(standardize, self.noise, self.random_state)
        k = check_rank(self.n_components, d)
        eps, delta = check_budget(self.epsilon, self.delta, n)
        if self.trust not in TRUST_LEVELS:
            raise ConfigError(f"trust: {self.trust!r} must be one of {TRUST_LEVELS}")
        parts = party_parts(n, parties)
        bounds = declared_bounds(self.bounds, d, standardize)
        options = method_options(self.method_options)
        name, choice = self._choose(n, d, len(parts), eps, delta, k, bounds)
        method = self._checked_method(name, k)
        records = parties_records(X, parts, bounds, standardize, options)
        seed = int(np.random.SeedSequence().entropy % 2**63) if self.random_state is None else self.random_state
        ledger = ledger_of(self.budget)
        gaussian = not (method.pure_dp or method.failure_test)
        with ledger.reserve(X, name, eps, delta, gaussian) if ledger else contextlib.nullcontext() as entry:
            self._release(X, records, method, choice, bounds, parts, k, eps, delta, options, standardize, seed)
            if entry is not None:  # the ledger keeps what the certificate states, never less than it reserved
                entry["delta"] = self.privacy_.delta
                entry["mu"] = self.privacy_.mu if gaussian else None
        return self

    def fit_stream(self, blocks: Any, y: Any = None) -> PrivatePCA:
        """Release the private PCA of rows read a block at a time, by one holder of every row: records larger than
        memory, in Parquet or CSV files, or on a Dask cluster (:mod:`ddppm.release.stream`).

        ``blocks``: an array, a list of arrays, a function returning a fresh iterable of blocks (called once per
        pass over the rows), a path to a Parquet file, a folder of them or a CSV file, or a ``dask.array``. The
        release is :meth:`fit`'s on the stacked rows, up to the order in which their sums are added; the noise is
        drawn once per statistic, on the total. Methods that need each row (``ldp``, ``dp_pca``, ...) refuse. Every
        check runs before any noise is drawn (the count of rows, when the source does not know it, is a pass).
        """
        from ddppm.release.stream import HolderPlan, StreamingHolder, row_blocks, stream_route, streaming_methods

        standardize = standardize_choice(self.standardize)  # the checks that need no pass over the rows first
        check_choices(standardize, self.noise, self.random_state)
        if self.trust not in TRUST_LEVELS:
            raise ConfigError(f"trust: {self.trust!r} must be one of {TRUST_LEVELS}")
        source = row_blocks(blocks)
        n, d = source.shape()
        if n < 2:
            raise DataError(f"records: {n} row(s); a release needs at least 2 records")
        k = check_rank(self.n_components, d)
        eps, delta = check_budget(self.epsilon, self.delta, n)
        bounds = declared_bounds(self.bounds, d, standardize)
        method_options(self.method_options)
        name, choice = self._choose(n, d, 1, eps, delta, k, bounds)
        method = self._checked_method(name, k)
        if not getattr(method, "streams", False):
            raise ConfigError(f"method: {name} needs the rows themselves and cannot read them a block at a time; "
                              f"methods that stream: {streaming_methods()} (or fit the rows in memory)")  # fmt: skip
        seed = int(np.random.SeedSequence().entropy % 2**63) if self.random_state is None else self.random_state
        plan = HolderPlan(k, eps, delta, self.bounds, (n,), name, trust=self.trust, standardize=standardize,
                          noise=self.noise, seed=seed, method_options=dict(self.method_options or {}))  # fmt: skip
        clipped = source.clipped(lambda block: clipped_count(block, bounds, standardize))  # a pass, before any draw
        ledger = ledger_of(self.budget)
        gaussian = not (method.pure_dp or method.failure_test)
        with ledger.reserve(source, name, eps, delta, gaussian) if ledger else contextlib.nullcontext() as entry:
            holder = StreamingHolder(source, plan, d)
            V, mean, scale, statistics = stream_route(holder)
            own, row = holder.public.calibration
            certificate = self._certificate(method, choice, 1, n, d, k, eps, delta, bounds, row, own,
                                            holder.public.noise, holder.public.party_label)  # fmt: skip
            certificate = replace(certificate, statistics=statistics)
            self._publish(V, mean, scale, certificate, row.feasible, delta, k)
            self.passes_ = holder.passes
            if entry is not None:
                entry["delta"] = self.privacy_.delta
                entry["mu"] = self.privacy_.mu if gaussian else None
        self._warn_clipped(clipped)
        return self

    def _release(self, X: np.ndarray, records: RawRecords, method: Any, choice: str, bounds: Any, parts: Any, k: int,
                 eps: float, delta: float, options: dict[str, Any], standardize: bool | str,
                 seed: int) -> None:  # fmt: skip
        """Draw, certify and set the released attributes; raises (nothing set) where the certificate fails."""
        n, d = X.shape
        fitted = draw_release(records, method, k, eps, delta, options, standardize, self.noise, seed)
        certificate = self._certificate(method, choice, len(parts), n, d, k, eps, delta, bounds, **fitted["privacy"])
        certificate = replace(certificate, statistics=fitted["statistics"])
        self._publish(fitted["V"], fitted["mean"], fitted["scale"], certificate, fitted["privacy"]["row"].feasible,
                      delta, k)  # fmt: skip
        self._warn_clipped(clipped_count(X, bounds, standardize))

    def _publish(self, V: np.ndarray, mean: np.ndarray, scale: np.ndarray, certificate: Certificate, feasible: bool,
                 delta: float, k: int) -> None:  # fmt: skip
        """Set the released attributes; raises (nothing set) where the certificate fails its target."""
        name, eps = certificate.method, certificate.epsilon
        if not certificate.delta <= delta and not feasible:
            raise PrivacyError(f"method: {name}'s own calibration cannot meet (ε = {eps:g}, δ = {delta:g}): its "
                               f"noise gives δ = {certificate.delta:.3g} at ε (e.g. the classic Gaussian σ of `ldp` "
                               "holds for ε < 1 only); nothing is released: choose another method, or method='auto'")
        if not certificate.delta <= delta:  # every calibration lies on its safe side (privacy.mechanisms.SAFE_SIDE)
            raise PrivacyError(f"the certified δ {certificate.delta:.6g} exceeds the target {delta:g}: nothing is "
                               "released (report this: every calibration should meet its target)")  # fmt: skip
        self.components_ = np.ascontiguousarray(V.T)
        self.mean_, self.scale_ = mean, scale
        self.n_components_ = k
        self.privacy_ = certificate

    @staticmethod
    def _warn_clipped(clipped: int) -> None:
        if clipped:
            warnings.warn(f"{clipped} value(s) fell outside the declared bounds and were clipped (a count of your "
                          "records, for your eyes only: not released, not covered by ε)", ClippingWarning,
                          stacklevel=4)  # fmt: skip

    def transform(self, X: Any) -> np.ndarray:
        """Post-processing: ``((X − mean_) / scale_) @ components_ᵀ``."""
        check_is_fitted(self, "components_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return ((X - self.mean_) / self.scale_) @ self.components_.T

    def inverse_transform(self, X: Any) -> np.ndarray:
        """Post-processing: ``(X @ components_) · scale_ + mean_``, back in the records' units."""
        check_is_fitted(self, "components_")
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_components_:
            raise ValueError(f"inverse_transform: X has shape {X.shape}; expected (n, {self.n_components_}), one "
                             "column per released component (what transform returns)")  # fmt: skip
        return (X @ self.components_) * self.scale_ + self.mean_

    def _choose(self, n: int, d: int, parties: int, eps: float, delta: float, k: int,
                bounds: Any) -> tuple[str, str]:  # fmt: skip
        """The method's name and how it was chosen (public parameters only; ``auto``: :mod:`ddppm.release.auto`)."""
        if self.method != "auto":
            return str(self.method), "named by the user"
        from ddppm.common_task.centring import mixed_units
        from ddppm.release.auto import choose_method, release_problem  # the advisor simulates: imported when asked

        standardize = standardize_choice(self.standardize)
        mixed = standardize is not False and mixed_units(bounds)
        problem = release_problem(n, d, parties, eps, delta, self.trust, k, standardize=standardize,
                                  noise=self.noise, mixed_units=mixed)  # fmt: skip
        choice = choose_method(problem)
        return choice.method, choice.words(problem)

    def _checked_method(self, name: str, k: int) -> Any:
        """The registered method ``name``, refused unless it serves the trust level, rank k and the noise."""
        methods = common_task_methods()
        if name not in methods:
            raise ConfigError(f"method: {name!r} is not a method of the common task; use 'auto' or one of "
                              f"{sorted(methods)}")  # fmt: skip
        method = methods[name]
        if method.privacy_column != "certified":
            raise ConfigError(f"method: {name} has no certified δ ({method.privacy_column}); a release needs one")
        if TRUST_ORDER.get(method.trust_model, -1) < TRUST_ORDER[self.trust]:
            raise ConfigError(f"method: {name} needs trust {method.trust_model!r}, more than trust={self.trust!r} "
                              "grants; pick a method of that trust level or method='auto'")  # fmt: skip
        if method.max_rank is not None and k > method.max_rank:
            raise ConfigError(f"method: {name} estimates at most {method.max_rank} direction(s); n_components = {k}")
        if self.noise == "secure" and not method.secure_noise:
            secure = sorted(n for n, m in methods.items() if m.secure_noise)
            raise ConfigError(f"method: {name} cannot draw secure noise yet (its noise does not pass the release "
                              f"hook); with noise='secure' use one of {secure}, or noise='simulation' for a "
                              "benchmark (not for releasing real data)")  # fmt: skip
        return method

    def _certificate(self, method: Any, choice: str, parties: int, n: int, d: int, k: int, eps: float, delta: float,
                     bounds: Any, row: Any, own: Any, noise: Any, party: str) -> Certificate:  # fmt: skip
        return release_certificate(method, choice, self.trust, self.noise, parties, n, d, k, eps, delta, bounds, row,
                                   own, noise, party)  # fmt: skip


