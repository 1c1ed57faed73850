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
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ddppm.common_task.budget import split_budget
from ddppm.common_task.preprocessing import (
    PreprocessingPlan,
    preprocessing_noise,
    preprocessing_party,
    private_statistics,
    standardise_rows,
)
from ddppm.common_task.raw_records import STREAM, RawRecords, calibrate_end_to_end
from ddppm.common_task.run import TRUST_LEVELS, TRUST_ORDER
from ddppm.common_task.task import CommonTask
from ddppm.core.errors import ConfigError, PrivacyError
from ddppm.core.network import TOPOLOGIES, parties_mixing_matrix
from ddppm.core.seeds import run_generators
from ddppm.data.public_prep import prepare_public
from ddppm.methods import common_task_methods
from ddppm.release.certificate import (
    ADJACENCY,
    NOISE_WORDS,
    SCOPE,
    Certificate,
    composed_mu,
    composition_words,
    opendp_check,
    release_rows,
)
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
from ddppm.release.noise import SecureNoise

METHOD_OPTIONS: dict[str, Any] = {"adjacency": "replace_one", "iterations": 10, "topology": "ring", "consensus": 10}
"""The methods' options (the bench's and the advisor's defaults): L power iterations, the parties' gossip network
and its rounds per iteration (gossip methods only)."""


class ClippingWarning(UserWarning):
    """Values fell outside the declared bounds and were clipped (their count is for the data holder only)."""


SECURE_MARGIN = 1e-6
"""With secure noise each method is calibrated to δ·(1 − this), so that the certificate's δ, computed afresh from
every release, is at most the target despite the calibrations' root-finding tolerance."""


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
        public parameters only (n, d, parties, ε, δ, trust, k; :func:`ddppm.studies.advisor.advise`).
    standardize : {True, "center", False}
        Centre and scale privately, centre privately only, or neither (directions of the second moment).
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
        name, choice = self._choose(n, d, len(parts), eps, delta, k)
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

    def _release(self, X: np.ndarray, records: RawRecords, method: Any, choice: str, bounds: Any, parts: Any, k: int,
                 eps: float, delta: float, options: dict[str, Any], standardize: bool | str,
                 seed: int) -> None:  # fmt: skip
        """Draw, certify and set the released attributes; raises (nothing set) where the certificate fails."""
        n, d = X.shape
        name = method.name
        fitted = draw_release(records, method, k, eps, delta, options, standardize, self.noise, seed)
        certificate = self._certificate(method, choice, len(parts), n, d, k, eps, delta, bounds, **fitted["privacy"])
        tolerance = 1.0 if self.noise == "secure" else 1 + 1e-9  # the bench's calibrations meet δ to 1e-9
        if not certificate.delta <= delta * tolerance and not fitted["privacy"]["row"].feasible:
            raise PrivacyError(f"method: {name}'s own calibration cannot meet (ε = {eps:g}, δ = {delta:g}): its "
                               f"noise gives δ = {certificate.delta:.3g} at ε (e.g. the classic Gaussian σ of `ldp` "
                               "holds for ε < 1 only); nothing is released: choose another method, or method='auto'")
        if not certificate.delta <= delta * tolerance:
            raise PrivacyError(f"the certified δ {certificate.delta:.6g} exceeds the target {delta:g}: nothing is "
                               "released (report this: every calibration should meet its target)")  # fmt: skip
        self.components_ = np.ascontiguousarray(fitted["V"].T)
        self.mean_, self.scale_ = fitted["mean"], fitted["scale"]
        self.n_components_ = k
        self.privacy_ = certificate
        clipped = clipped_count(X, bounds, standardize)
        if clipped:
            warnings.warn(f"{clipped} value(s) fell outside the declared bounds and were clipped (a count of your "
                          "records, for your eyes only: not released, not covered by ε)", ClippingWarning,
                          stacklevel=3)  # fmt: skip

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

    def _choose(self, n: int, d: int, parties: int, eps: float, delta: float, k: int) -> tuple[str, str]:
        """The method's name and how it was chosen (public parameters only; ``auto``: :mod:`ddppm.release.auto`)."""
        if self.method != "auto":
            return str(self.method), "named by the user"
        from ddppm.release.auto import choose_method, release_problem  # the advisor simulates: imported when asked

        problem = release_problem(n, d, parties, eps, delta, self.trust, k,
                                  standardize=standardize_choice(self.standardize), noise=self.noise)  # fmt: skip
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


def release_certificate(method: Any, choice: str, trust: str, noise_mode: str, parties: int, n: int, d: int, k: int,
                        eps: float, delta: float, bounds: Any, row: Any, own: Any, noise: Any,
                        party: str) -> Certificate:  # fmt: skip
    """The certificate of one release (:mod:`ddppm.release.certificate`): every release it composes, whom it
    covers (the method's trust model's observer), and how the method was chosen."""
    releases = release_rows(noise, own)
    observer = {"central": "the curator and everyone it publishes to",
                "secure_aggregation": "the aggregator, who sees the sums only, and the public",
                "gossip": "every party on the network and everything sent",
                "local": "everyone: every party's releases are public"}[method.trust_model]  # fmt: skip
    return Certificate(
        epsilon=eps, delta=float(row.delta), delta_target=delta, adjacency=ADJACENCY, trust=trust,
        method=method.name, method_label=method.common_style()["label"], method_source=method.source,
        method_trust_model=method.trust_model, method_choice=choice, observer=observer, parties=parties,
        preprocessing_party=party, scope=SCOPE, n=n, d=d, k=k, bounds=f"{bounds.kind}: {bounds.source}",
        noise=NOISE_WORDS[noise_mode], composition=composition_words(method.pure_dp, eps, own.test_failure),
        mu=composed_mu(noise, own), releases=tuple(releases), check=opendp_check(releases, eps),
    )  # fmt: skip


def draw_release(records: RawRecords, method: Any, k: int, eps: float, delta: float, options: dict[str, Any],
                 standardize: bool | str, noise: str, seed: int) -> dict[str, Any]:  # fmt: skip
    """The raw-records route of the bench (module docstring): the public preparation, the private statistics
    (their party's), the rows standardised with them, the method calibrated to what is left and its estimate.
    Run 0 of the bench's streams for ``seed`` (:func:`~ddppm.common_task.raw_records.raw_records_runs`); ``noise``
    ``secure`` draws every Gaussian from OpenDP (:class:`~ddppm.release.noise.SecureNoise`)."""
    n, d = records.X.shape
    party = preprocessing_party(method) if records.standardises else "none"
    pre_rng = run_generators(seed, ("", "preprocessing", party, eps, STREAM), range(1))[0]
    method_rng = run_generators(seed, ("", k, method.name, eps, STREAM), range(1))[0]
    if noise == "secure":
        pre_rng, method_rng = SecureNoise(pre_rng), SecureNoise(method_rng)
    limit = delta * (1 - SECURE_MARGIN) if noise == "secure" else delta
    Z = prepare_public(records.X, records.bounds, records.normalization)
    release_noise = None
    if party == "none":  # not centred: rows are the records over the public row-norm bound
        rows, mean, scale = Z, np.zeros(d), np.full(d, records.bounds.row_scale)
    else:
        plan = PreprocessingPlan(scale=standardize is True)
        release_noise = preprocessing_noise(plan, split_budget(eps, limit, plan.share).mu_pre, d,
                                            records.party_count(party), n)  # fmt: skip
        widths = (records.bounds.upper - records.bounds.lower) / 2
        boxed, released, box = private_statistics(Z, release_noise, plan, pre_rng, overwrite=True, widths=widths)
        rows = standardise_rows(boxed, released, plan, overwrite=True)  # Z is ours: prepared above, used once
        offset, unit = _raw_units(records.bounds, box, d, common=not plan.scale)
        mean = offset + unit * released.mean
        scale = unit * (np.sqrt(released.variance) if released.variance is not None else 1.0)
    task = CommonTask(rows, records.parts, k, records.W, records.consensus)
    own, row = calibrate_end_to_end(method, task, eps, limit, release_noise, options)
    V = method.common_estimate(task, own, [method_rng], options)[0]
    return {"V": V, "mean": mean, "scale": scale,
            "privacy": {"row": row, "own": own, "noise": release_noise, "party": party}}  # fmt: skip


def method_options(overrides: dict[str, Any] | None) -> dict[str, Any]:
    """:data:`METHOD_OPTIONS` with the user's overrides of its tunable keys (the adjacency is the certificate's)."""
    unknown = sorted(set(overrides or {}) - {"iterations", "topology", "consensus"})
    if unknown:
        raise ConfigError(f"method_options: {unknown} cannot be set; only iterations, topology and consensus "
                          "(the adjacency is replace_one, what the certificate states)")  # fmt: skip
    options = {**METHOD_OPTIONS, **(overrides or {})}
    for key in ("iterations", "consensus"):
        value = options[key]
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise ConfigError(f"method_options.{key}: {value!r} must be a positive integer")
    if options["topology"] not in TOPOLOGIES or options["topology"] == "paper_ring":
        raise ConfigError(f"method_options.topology: {options['topology']!r} must be one of "
                          f"{[t for t in TOPOLOGIES if t != 'paper_ring']}")  # fmt: skip
    return options


def parties_records(X: np.ndarray, parts: tuple[np.ndarray, ...], bounds: Any, standardize: bool | str,
                    options: dict[str, Any]) -> RawRecords:  # fmt: skip
    """The parties' raw records as the bench holds them: their rows, their gossip network (``options["topology"]``,
    the complete graph for two, none for one) and its rounds, the bounds, and what the analyst does."""
    W = parties_mixing_matrix(len(parts), options["topology"], seed=0)
    normalization = "scale" if standardize is False else "standardize"
    return RawRecords(X, parts, W, int(options["consensus"]), bounds, normalization)


def _raw_units(bounds: Any, box: Any, d: int, common: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(A, B)`` with the rows the sums see equal to ``(x − A)/B`` per feature, in the records' units: the public
    preparation ``(x − c)/(h√d)`` (c, h: the bounds' midpoint and half-width), then, when a private box ran, its
    ``(z − mid)/(half·√d)``: ``B = H√d`` with H the box's half-widths in the records' units. ``common`` (centring
    only, :func:`~ddppm.common_task.preprocessing.common_scale`): one B for every feature, the box's half-diagonal
    ``‖H‖``."""
    centre, half_width = (bounds.lower + bounds.upper) / 2, (bounds.upper - bounds.lower) / 2
    if box is None:
        offset, unit = centre, half_width * np.sqrt(d)
    else:
        mid, half = (box.lower + box.upper) / 2, (box.upper - box.lower) / 2
        offset, unit = centre + half_width * np.sqrt(d) * mid, half_width * half * d
    if common:
        unit = np.full(d, np.linalg.norm(unit) / np.sqrt(d))
    return offset, unit
