"""The release's route, shared by ``PrivatePCA`` and a federation's coordinator and parties, without
scikit-learn (a party's process imports it for every message): the methods' options, the certificate of one
release, the draw itself (:func:`draw_release`, the bench's raw-records route) and the released units
(docs/release.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ddppm.common_task.budget import split_budget
from ddppm.common_task.centring import (  # noqa: F401 (raw_units: the route's public name too)
    method_estimate,
    raw_units,
    recolours,
    record_scales,
    released_units,
)
from ddppm.common_task.preprocessing import (
    PreprocessingPlan,
    preprocessing_noise,
    preprocessing_party,
    private_statistics,
    standardise_rows,
)
from ddppm.common_task.raw_records import STREAM, RawRecords, calibrate_end_to_end
from ddppm.common_task.task import CommonTask
from ddppm.core.errors import ConfigError
from ddppm.core.network import TOPOLOGIES, parties_mixing_matrix
from ddppm.core.seeds import run_generators
from ddppm.data.public_prep import prepare_public
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
from ddppm.release.noise import SecureNoise

METHOD_OPTIONS: dict[str, Any] = {"adjacency": "replace_one", "iterations": 10, "topology": "ring", "consensus": 10}
"""The methods' options (the bench's and the advisor's defaults): L power iterations, the parties' gossip network
and its rounds per iteration (gossip methods only)."""


SECURE_MARGIN = 1e-6
"""With secure noise each method is calibrated to δ·(1 − this), so that the certificate's δ, computed afresh from
every release, is at most the target despite the calibrations' root-finding tolerance."""


def release_certificate(method: Any, choice: str, trust: str, noise_mode: str, parties: int, n: int, d: int, k: int,
                        eps: float, delta: float, bounds: Any, row: Any, own: Any, noise: Any,
                        party: str, observer: str | None = None) -> Certificate:  # fmt: skip
    """The certificate of one release (:mod:`ddppm.release.certificate`): every release it composes, whom it
    covers (the method's trust model's observer), and how the method was chosen."""
    releases = release_rows(noise, own)
    observer = observer or {"central": "the curator and everyone it publishes to",
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
    (their party's), the rows standardised with them, the method calibrated to what is left and its estimate;
    ``standardize="center"``: the same, recoloured by the private scales (:mod:`ddppm.common_task.centring`).
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
    release_noise, box, released, statistics = None, None, None, {}
    recolour = recolours(method, standardize, records.bounds)
    if party == "none":  # not centred: rows are the records over the public row-norm bound
        rows = Z
    else:
        plan = PreprocessingPlan(scale=standardize is True or recolour)
        release_noise = preprocessing_noise(plan, split_budget(eps, limit, plan.share).mu_pre, d,
                                            records.party_count(party), n)  # fmt: skip
        widths = (records.bounds.upper - records.bounds.lower) / 2
        boxed, released, box = private_statistics(Z, release_noise, plan, pre_rng, overwrite=True, widths=widths)
        rows = standardise_rows(boxed, released, plan, overwrite=True)  # Z is ours: prepared above, used once
        statistics = released.projected
    mean, scale = released_units(records.bounds, box, released, d, standardize)
    task = CommonTask(rows, records.parts, k, records.W, records.consensus)
    own, row = calibrate_end_to_end(method, task, eps, limit, release_noise, options)
    scales = record_scales(records.bounds, box, released.variance) if recolour else None
    V = method_estimate(method, task, own, [method_rng], options, scales)[0]
    return {"V": V, "mean": mean, "scale": scale, "statistics": statistics,
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
