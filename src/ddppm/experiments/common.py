"""Experiment ``common``: the common task on the journal's data sets (docs/common_task.md).

Every registered method that implements :class:`ddppm.common_task.base.CommonTaskMethod` runs on the same rows (the
pipeline's normalised data, split over its agents), estimating the top-k directions of ``XᵀX`` under one
adjacency and Definition 1's δ. Entry points (the section is ``common``, validated against
``common.schema.yaml``): :func:`check_config`, :func:`runs_of_dataset`, :func:`tables`; the answer in words is
:mod:`ddppm.experiments.common_findings`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ddppm.common_task.bounds import bounds_at_points
from ddppm.common_task.preprocessing import PreprocessingPlan
from ddppm.common_task.raw_records import (
    RawRecords,
    add_draws_until_separated,
    raw_records_runs,
    reference_labels,
)
from ddppm.common_task.run import not_certified, reference_eps, run_methods, summarise, which_method
from ddppm.common_task.settings import (
    ORACLE,
    PREPARED,
    STANDARD,
    common_setting,
    common_settings,
    oracle_bounds_entry,
    setting_notes,
    task_options,
)
from ddppm.common_task.task import CommonTask
from ddppm.core.errors import ConfigError
from ddppm.core.problem import DistributedProblem
from ddppm.data import DATASETS, SHAPES
from ddppm.data.public_prep import (
    PREPARED_ROWS,
    RAW_RECORDS,
    bounds_from_entry,
    check_declared,
    check_route,
    public_bounds,
)
from ddppm.experiments.base import Experiment, register_experiment
from ddppm.experiments.common_peers import check_peers
from ddppm.methods import calibrated_methods, common_task_methods, method_styles
from ddppm.methods.gossip_base.searched import searched_runs
from ddppm.methods.peers import peer_uses
from ddppm.pipeline.config import (
    check_prepared_dataset,
    dataset_config,
    dataset_rows,
    job_params,
    known_datasets,
    local_file_shape,
    unknown_dataset,
)
from ddppm.pipeline.method_options import method_options
from ddppm.pipeline.steps import load_raw_dataset, problem_from_files
from ddppm.privacy.threat_models import resolve


def check_config(section: dict[str, Any], config: dict[str, Any] | None = None) -> None:
    """Cross-key checks of the validated section ``common``: a data set the journal run does not use is still
    prepared and split by the pipeline (its loader options and agents under ``dataset_options.<name>``), so it
    gets the same checks."""
    known = known_datasets(config) if config is not None else DATASETS
    for ds in (ds for ds in section["datasets"] if ds not in known):
        raise ConfigError(unknown_dataset(f"common.datasets: {ds!r}", ds, known))
    if config is not None:
        for ds in section["datasets"]:
            if ds not in config["datasets"]:
                check_prepared_dataset(config, ds)
            check_delta_below_one_over_n(section["delta"], ds, dataset_rows(config, ds))
            check_raw_route(ds, dataset_config(config, ds)["dataset"])
        common_settings(config)  # each second setting of common.settings can be built
        check_searched(section["searched"], section, config)
    check_peers(section["peers"], section)
    check_claims(section["claims"])
    draws = section["preprocessing"]["draws"]
    if section["runs"] % draws:
        raise ConfigError(
            f"common.preprocessing.draws = {draws} must divide common.runs = {section['runs']} (each preprocessing "
            "draw serves the same number of runs); pick a divisor"
        )


def check_claims(claims: dict[str, Any]) -> None:
    """Every method a claim names runs the common task."""
    known = common_task_methods()
    for method, claim in claims.items():
        for name in [method, *claim["against"]]:
            if name not in known:
                raise ConfigError(f"common.claims.{method}: {name!r} does not run the common task; known: "
                                  f"{sorted(known)}")  # fmt: skip


def check_raw_route(dataset: str, loader: dict[str, Any]) -> None:
    """The standard setting runs from the raw records: ``dataset`` needs declared public bounds and a
    normalisation with an end-to-end route (:mod:`ddppm.data.public_prep`)."""
    check_declared(dataset, loader.get("public_bounds"))
    check_route(loader["normalization"], f"dataset_options.{dataset}.normalization")


def check_delta_below_one_over_n(delta: float, dataset: str, rows: int | None) -> None:
    """``common.delta`` must lie below 1/n: a δ of 1/n is met by a mechanism that publishes one random row in the
    clear, so it protects no one (a data set whose n is known only once loaded is checked then, not here)."""
    if rows is not None and delta >= 1 / rows:
        raise ConfigError(
            f"common.delta = {delta:g} is not below 1/n = {1 / rows:.3g} for {dataset} (n = {rows} rows): such a δ "
            f"allows publishing a row in the clear; use common.delta < {1 / rows:.3g} (e.g. 1e-5)"
        )


def check_searched(searched: dict[str, Any], section: dict[str, Any], config: dict[str, Any]) -> None:
    """``common.searched``: its threat model searches the worst neighbour (a data set it lists outside
    ``common.datasets`` is skipped: :func:`common_notes`)."""
    model = resolve(searched["threat_model"], config.get("threat_models"), "common.searched.threat_model")
    if model.adjacency != "worst":
        raise ConfigError(
            f"common.searched.threat_model: {searched['threat_model']!r} guesses the neighbour (adjacency "
            f"{model.adjacency!r}); the common task needs a searched one (adjacency worst, e.g. sound)"
        )


def searched_runs_of_dataset(
    problem: DistributedProblem, dataset: str, config: dict[str, Any]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The D-DP-PM variants of ``common.searched.methods`` that list ``dataset``, on it
    (:func:`ddppm.methods.gossip_base.searched.searched_runs`): runs in the common task's format and the
    calibrations' parameter rows. Their options are the workshop experiment's (``workshop.method_options.<name>``,
    with its budget split for the workshop variant)."""
    section = config["common"]
    searched = section["searched"]
    name = searched["threat_model"]
    definitions = {name: resolve(name, config.get("threat_models"), "common.searched.threat_model").as_dict()}
    variants = {
        method: method_options(config["workshop"], method)
        for method, datasets in searched["methods"].items()
        if dataset in datasets
    }
    return searched_runs(problem, dataset, section["epsilons"], section["delta"], variants, name, definitions,
                         int(section["runs"]), int(section["seed"]), setting=PREPARED)  # fmt: skip


def common_notes(config: dict[str, Any]) -> list[str]:
    """What the section leaves out without an error: second settings with no data set (their notes), and data sets
    of ``common.searched.methods`` that ``common.datasets`` does not list (skipped)."""
    section = config["common"]
    notes = setting_notes(config)
    for method, datasets in section["searched"]["methods"].items():
        if outside := [ds for ds in datasets if ds not in section["datasets"]]:
            notes.append(f"common.searched.methods.{method}: {', '.join(outside)} not in common.datasets: skipped "
                         "(add them to common.datasets to calibrate it there)")  # fmt: skip
    for ds in section["datasets"]:
        if (small := few_rows_note(config, ds)) is not None:
            notes.append(small)
    if section["peers"]["libraries"] and (outside := [ds for ds in section["peers"]["datasets"]
                                                      if ds not in section["datasets"]]):  # fmt: skip
        notes.append(f"common.peers.datasets: {', '.join(outside)} not in common.datasets: the peers skip them")
    return notes


FEW_ROWS = 100
"""Below this many rows a data set gets a note on what so few rows can support."""


def few_rows_note(config: dict[str, Any], ds: str) -> str | None:
    """A note for a data set of fewer than :data:`FEW_ROWS` rows (n known before loading): a private PCA of so few
    rows is near chance except at large ε, and the advisor's command for its public shape estimates what it
    supports (no data read)."""
    n = dataset_rows(config, ds)
    if n is None or n >= FEW_ROWS:
        return None
    merged = dataset_config(config, ds)
    m = int(merged["partition"]["m"])
    d = (local_file_shape(ds, merged["dataset"])[1] if merged["dataset"]["source"] == "file"
         else SHAPES.get(ds, (n, None))[1])  # fmt: skip
    advise = (f"`ddppm advise --n {n} --d {d} --m {m} --eps 5 --delta {config['common']['delta']:g} --trust central`"
              if d is not None and d > 1 else "`ddppm advise` with its shape")  # fmt: skip
    return (f"{ds} has only n = {n} rows over m = {m} agents ({n // max(m, 1)} each): one record is 1/{n} of the "
            f"data, so a private PCA is near chance except at large ε; {advise} estimates what such a shape supports "
            "(from public parameters, reading no data)")


def settings_config(config: dict[str, Any]) -> dict[str, Any]:
    """The part of a config the settings read (for a job's params): the section, ``epsilons``, ``delta_limits``."""
    return {key: config[key] for key in ("common", "epsilons", "delta_limits") if key in config}


def dataset_job_params(config: dict[str, Any], dataset: str, keys: tuple[str, ...]) -> dict[str, Any]:
    """The ``keys`` one data set's runs read (Snakemake ``params``, :func:`ddppm.pipeline.config.job_params`), with
    ``common.datasets`` narrowed to that data set and ``delta_limits`` to its own limits: adding, removing or
    reordering another data set (or its journal limits) reruns none of this data set's runs."""
    narrowed = {**config, "common": {**config["common"], "datasets": [dataset]}}
    if "delta_limits" in config:
        narrowed["delta_limits"] = {ds: v for ds, v in config["delta_limits"].items() if ds == dataset}
    return job_params(narrowed, None, keys)


def raw_records_params(config: dict[str, Any], setting: str, dataset: str) -> dict[str, Any]:
    """What a job of ``setting`` reads besides its section (Snakemake ``params``): for a setting from the raw
    records, the data set's loader options (``dataset``; the declared bounds in ``datasets.yaml`` are in the code
    hash, :func:`ddppm.core.provenance.code_files`); nothing for the others."""
    if common_setting(setting, config).scope != RAW_RECORDS:
        return {}
    return job_params(config, dataset, ("dataset",))


def study_datasets_checked(key: str, datasets: list[str], config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A study's data sets (``key``: its config key, for the messages) checked for the route from the raw records:
    each known, prepared, with declared bounds; returns each one's loader options."""
    known = known_datasets(config)
    loaders = {}
    for ds in datasets:
        if ds not in known:
            raise ConfigError(unknown_dataset(f"{key}: {ds!r}", ds, known))
        if ds not in config["datasets"]:
            check_prepared_dataset(config, ds)
        loaders[ds] = dataset_config(config, ds)["dataset"]
        check_raw_route(ds, loaders[ds])
    return loaders


def job_records(job: Any) -> RawRecords:
    """A study job's raw records: its data set's prepared files and loader options (``job.params.records``)."""
    problem = problem_from_files(job.input.data, job.input.partition, job.input.network)
    return raw_records_of(problem, job.wildcards.dataset, job.params.records["dataset"])


def raw_records_of(
    problem: DistributedProblem, dataset: str, loader: dict[str, Any], oracle: bool = False
) -> RawRecords:
    """The raw records of ``dataset`` (``loader``: its ``dataset_options`` with defaults) on the pipeline's agents
    and network (the partition and network depend on n and seeds only: public), with its declared bounds, or
    (``oracle``) its records' own published range (the labelled setting ``oracle_bounds``)."""
    X = np.asarray(load_raw_dataset(dataset, loader).matrix, float)
    if X.shape != (problem.n, problem.d):
        raise ConfigError(f"dataset_options.{dataset}: the raw records have shape {X.shape}, the prepared rows "
                          f"{(problem.n, problem.d)}")  # fmt: skip
    parts = tuple(np.arange(problem.n)[problem.agent_slice(i)] for i in range(problem.m))
    if oracle:
        bounds = bounds_from_entry(oracle_bounds_entry(dataset), X.shape[1], f"datasets.yaml: {dataset}.oracle_bounds")
    else:
        bounds = public_bounds(dataset, X.shape[1], loader.get("public_bounds"))
    return RawRecords(X, parts, problem.W, int(problem.c), bounds, loader["normalization"])


def runs_of_dataset(
    problem: DistributedProblem,
    dataset: str,
    config: dict[str, Any],
    setting: str = STANDARD,
    loader: dict[str, Any] | None = None,
) -> pd.DataFrame:
    """Every run of every common-task method at every (k, ε) of one setting (:mod:`ddppm.common_task.settings`) on one
    data set (the ranks below its dimension). ``config``: the section ``common`` and, for the journal's limits,
    the top-level ``epsilons`` and ``delta_limits``. A setting of scope ``raw_records`` runs from the raw records
    (``loader``: the data set's loader options, ``dataset_options.<name>`` with defaults;
    :mod:`ddppm.common_task.raw_records`); the others on the pipeline's prepared rows (``problem``)."""
    section = config["common"]
    chosen = common_setting(setting, config)
    if dataset not in chosen.points:
        raise ConfigError(f"common.settings: the setting {setting!r} does not run on {dataset!r}")
    eps, limits = zip(*chosen.points[dataset], strict=True)
    ranks = [k for k in section["ranks"] if k < problem.d]  # k = d would estimate the whole space: nothing to learn
    if not ranks:
        raise ConfigError(f"common.ranks: no k in {section['ranks']} is below the dimension {problem.d} of {dataset}")
    if chosen.scope == RAW_RECORDS:
        if loader is None:
            raise ConfigError(f"common: the setting {setting!r} runs from the raw records; give {dataset}'s loader "
                              "options (dataset_options)")  # fmt: skip
        records = raw_records_of(problem, dataset, loader, oracle=setting == ORACLE)
        preprocessing = section["preprocessing"]
        plan, options = PreprocessingPlan.from_section(preprocessing), task_options(section, chosen.adjacency)
        runs = raw_records_runs(records, eps, limits, ranks, section["runs"], preprocessing["draws"], section["seed"],
                                plan, options, dataset=dataset, setting=setting)  # fmt: skip
        if setting != STANDARD or preprocessing["adaptive_draws"] <= preprocessing["draws"]:
            return runs
        # The "which method" table's point (which_method_markdown): draws added until each answer separates.
        at = reference_eps(eps)
        limit = dict(zip(eps, limits, strict=True))[at]
        return add_draws_until_separated(records, runs, at, limit, min(ranks), int(preprocessing["adaptive_draws"]),
                                         section["seed"], plan, options, dataset, setting)  # fmt: skip
    frames = []
    for k in ranks:
        task = CommonTask.from_problem(problem, k)
        frames.append(
            run_methods(task, list(eps), list(limits), section["runs"], section["seed"],
                        task_options(section, chosen.adjacency), dataset=dataset, setting=setting,
                        draws=chosen.draws or None)
        )  # fmt: skip
    runs = pd.concat(frames, ignore_index=True)
    runs.insert(runs.columns.get_loc("setting") + 1, "scope", chosen.scope)
    return runs


def tables(
    runs: pd.DataFrame, bounds: pd.DataFrame | None = None, config: dict[str, Any] | None = None
) -> dict[str, pd.DataFrame]:
    """The summary (per setting, method, k, ε), the "which method" table and the not-certified list: the searched
    methods that ran, and the lower bounds for every parameter choice that methods' rule files publish
    (``bounds``, placed on each setting's (ε, δ limit) points by :func:`ddppm.common_task.bounds.bounds_at_points`)."""
    summary = summarise(runs)
    labels = {name: style["label"] for name, style in method_styles().items()} | reference_labels()
    summary.insert(summary.columns.get_loc("method") + 1, "label", summary["method"].map(labels))
    beside = not_certified(summary)
    if bounds is not None and len(bounds) and config is not None:  # floors searched on the prepared rows
        placed = [bounds_at_points(bounds, s.points, name) for name, s in common_settings(config).items()
                  if s.scope == PREPARED_ROWS]  # fmt: skip
        beside = pd.concat([beside, *placed], ignore_index=True)
    return {"summary": summary, "which_method": which_method(summary, runs), "not_certified": beside}


@register_experiment
class CommonTaskExperiment(Experiment):
    """The common task: every method, the same data, adjacency and privacy standard, with costs."""

    name = "common"
    title = "The common task: which method"
    targets_relative = ("common/summary.csv", "common/which_method.csv", "common/findings.txt")
    findings_relative = "common/findings.txt"
    provenance_relative = ("common/summary.parquet",)

    def check_config(self, section: dict[str, Any], config: dict[str, Any] | None = None) -> None:
        check_config(section, config)

    def notes(self, section: dict[str, Any], config: dict[str, Any]) -> list[str]:
        return common_notes(config)

    def methods_used(self, config: dict[str, Any]) -> list[str]:
        """Every common-task method (the runs), the searched variants, the peer libraries and the calibrated
        methods whose δ floors the summary lists (their rows and labels)."""
        searched = config["common"]["searched"]["methods"]
        peers = peer_uses(config["common"]["peers"]["libraries"])
        return [*common_task_methods(), *searched, *peers, *calibrated_methods()]


def searched_datasets(config: dict[str, Any]) -> list[str]:
    """The data sets some variant of ``common.searched.methods`` is calibrated on (in ``common.datasets`` order)."""
    wanted = {ds for datasets in config["common"]["searched"]["methods"].values() for ds in datasets}
    return [ds for ds in config["common"]["datasets"] if ds in wanted]
