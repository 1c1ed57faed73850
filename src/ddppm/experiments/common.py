"""Experiment ``common``: the common task on the journal's data sets (docs/common_task.md).

Every registered method that implements :class:`ddppm.common_task.base.CommonTaskMethod` runs on the same rows (the
pipeline's normalised data, split over its agents), estimating the top-k directions of ``XᵀX`` under one
adjacency and Definition 1's δ. Entry points (the section is ``common``, validated against
``common.schema.yaml``): :func:`check_config`, :func:`runs_of_dataset`, :func:`tables`, :func:`findings`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ddppm.common_task.bounds import bounds_at_points
from ddppm.common_task.preprocessing import PreprocessingPlan
from ddppm.common_task.raw_records import (
    PREPROCESSING_ONLY,
    RawRecords,
    add_draws_until_separated,
    raw_records_runs,
    reference_labels,
)
from ddppm.common_task.run import not_certified, reference_eps, run_methods, summarise, which_method
from ddppm.common_task.settings import PREPARED, STANDARD, common_setting, common_settings, task_options
from ddppm.common_task.task import CommonTask
from ddppm.core.errors import ConfigError
from ddppm.core.problem import DistributedProblem
from ddppm.data import DATASETS
from ddppm.data.public_prep import PREPARED_ROWS, RAW_RECORDS, check_declared, check_route, public_bounds
from ddppm.experiments.base import Experiment, register_experiment
from ddppm.experiments.common_peers import check_peers, peer_findings
from ddppm.methods import calibrated_methods, common_task_methods, method_styles
from ddppm.methods.gossip_base.searched import searched_runs
from ddppm.methods.peers import peer_uses
from ddppm.pipeline.config import (
    check_prepared_dataset,
    dataset_config,
    dataset_rows,
    job_params,
    known_datasets,
    unknown_dataset,
)
from ddppm.pipeline.method_options import method_options
from ddppm.pipeline.steps import load_raw_dataset
from ddppm.privacy.threat_models import resolve

TRUST_COLUMNS = (("local", "no trusted party"), ("secure_aggregation", "secure aggregation"),
                 ("central", "a trusted curator"))  # fmt: skip
"""The "which method" table's columns, least trust first."""


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
    draws = section["preprocessing"]["draws"]
    if section["runs"] % draws:
        raise ConfigError(
            f"common.preprocessing.draws = {draws} must divide common.runs = {section['runs']} (each preprocessing "
            "draw serves the same number of runs); pick a divisor"
        )


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
    """``common.searched``: its data sets run in the common task, its threat model searches the worst neighbour."""
    for method, datasets in searched["methods"].items():
        outside = [ds for ds in datasets if ds not in section["datasets"]]
        if outside:
            raise ConfigError(
                f"common.searched.methods.{method}: {outside} are not in common.datasets ({section['datasets']}); "
                "add them there or remove them here"
            )
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


def settings_config(config: dict[str, Any]) -> dict[str, Any]:
    """The part of a config the settings read (for a job's params): the section, ``epsilons``, ``delta_limits``."""
    return {key: config[key] for key in ("common", "epsilons", "delta_limits") if key in config}


def raw_records_params(config: dict[str, Any], setting: str, dataset: str) -> dict[str, Any]:
    """What a job of ``setting`` reads besides its section (Snakemake ``params``): for a setting from the raw
    records, the data set's loader options (``dataset``; the declared bounds in ``datasets.yaml`` are in the code
    hash, :func:`ddppm.core.provenance.code_files`); nothing for the others."""
    if common_setting(setting, config).scope != RAW_RECORDS:
        return {}
    return job_params(config, dataset, ("dataset",))


def raw_records_of(problem: DistributedProblem, dataset: str, loader: dict[str, Any]) -> RawRecords:
    """The raw records of ``dataset`` (``loader``: its ``dataset_options`` with defaults) on the pipeline's agents
    and network (the partition and network depend on n and seeds only: public)."""
    X = np.asarray(load_raw_dataset(dataset, loader).matrix, float)
    if X.shape != (problem.n, problem.d):
        raise ConfigError(f"dataset_options.{dataset}: the raw records have shape {X.shape}, the prepared rows "
                          f"{(problem.n, problem.d)}")  # fmt: skip
    parts = tuple(np.arange(problem.n)[problem.agent_slice(i)] for i in range(problem.m))
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
        records = raw_records_of(problem, dataset, loader)
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


def _standard(table: pd.DataFrame | None, setting: str = STANDARD) -> pd.DataFrame | None:
    """The rows of one setting (tables written before settings existed are all standard)."""
    if table is None or "setting" not in table:
        return table
    return table[table["setting"] == setting]


def findings(
    which: pd.DataFrame,
    summary: pd.DataFrame,
    section: dict[str, Any],
    beside: pd.DataFrame | None = None,
    definitions: dict[str, dict[str, str]] | None = None,
) -> list[str]:
    """The answer in sentences with numbers: per data set and k, at ε = 5 (or the grid's middle), the best method
    for each trust level and what a trusted curator or secure aggregation buys over trusting no one (the standard
    setting); then what each second setting changes (:func:`second_setting_findings`)."""
    all_which, all_summary, all_beside = which, summary, beside
    which, summary, beside = _standard(which), _standard(summary), _standard(beside)
    share = section.get("preprocessing", {}).get("share", float("nan"))
    lines = [
        "The common task: which private PCA method to use (every method on the same data, adjacency and δ)",
        f"Setting: from the raw records (scope raw_records: the (ε, δ) covers a user's records), δ = "
        f"{section['delta']:g}, adjacency {section['adjacency']}, {section['runs']} runs per point, power methods "
        f"with L = {section['iterations']}; rows prepared by declared public bounds, standardised privately with "
        f"{share:g} of μ² where the analyst standardises; error = ‖V̂V̂ᵀ − VVᵀ‖_F/√(2k) against the PCA of the "
        "records standardised with their true statistics.",
    ]
    eps = reference_eps(which["eps"]) if len(which) else float("nan")  # a run may have no standard rows
    for (dataset, k), group in which[which["eps"] == eps].groupby(["dataset", "k"], sort=False):
        best = group.set_index("trust_model")
        parts = []
        for trust, text in TRUST_COLUMNS:
            if trust in best.index:
                row = best.loc[trust]
                parts.append(f"with {text} use {row['best']} (error {row['error_mean']:.3f})")
        at = summary[(summary["dataset"] == dataset) & (summary["k"] == k)]
        chance = float(at["chance_error"].iloc[0]) if len(at) else float("nan")
        alone = at[(at["eps"] == eps) & at["method"].str.startswith(PREPROCESSING_ONLY)]
        floor = "; ".join(f"{row['method'].removeprefix(PREPROCESSING_ONLY + '_')} {row['error_mean']:.3f}"
                          for _, row in alone.iterrows())  # fmt: skip
        floor = f"; private standardisation alone: {floor}" if floor else ""
        lines.append(f"{dataset}, k = {k}, ε = {eps:g}: " + "; ".join(parts) + f" (chance level {chance:.2f}{floor}).")
    prepared_beside = _standard(all_beside, PREPARED)  # the floors and searched variants are on the prepared rows
    if prepared_beside is not None and "no_parameters_meet_limit" in prepared_beside:
        floors = prepared_beside[prepared_beside["no_parameters_meet_limit"].fillna(False).astype(bool)]
        for label, group in floors.groupby("label", sort=False):
            # A floor is non-increasing in ε: exceeded at the largest such ε, it is exceeded at every smaller one.
            parts = []
            for dataset, rows in group.groupby("dataset", sort=True):
                top = rows.loc[rows["eps"].idxmax()]
                parts.append(f"{dataset} at any ε ≤ {top['eps']:g} (δ at least {top['delta']:.2g} there)")
            lines.append(
                f"Not certified, {label} (prepared rows): no parameter choice meets δ = {section['delta']:g} on "
                + "; ".join(parts)
                + " (hockey-stick δ, Definition 1, exact tail, at the worst neighbour a search found: a lower bound)."
            )
    searched = searched_findings(prepared_beside, section, definitions)
    return (lines + ranking_changes(all_which) + searched + peer_findings(all_summary)
            + second_setting_findings(all_which, all_summary, all_beside))  # fmt: skip


def ranking_changes(which: pd.DataFrame) -> list[str]:
    """Where the answer from the raw records differs from the prepared rows' (setting ``prepared_rows``), at the
    reference ε, per data set, k and trust level: the best method of each, with its error."""
    if "setting" not in which or PREPARED not in set(which["setting"]):
        return []
    keys = ["dataset", "k", "eps", "trust_model"]
    raw = which[which["setting"] == STANDARD].set_index(keys)
    prepared = which[which["setting"] == PREPARED].set_index(keys)
    eps = reference_eps(which["eps"])
    changed, same = [], 0
    for key in raw.index.intersection(prepared.index):
        if key[2] != eps:
            continue
        a, b = raw.loc[key], prepared.loc[key]
        if a["best"] == b["best"]:
            same += 1
            continue
        changed.append(f"{key[0]} k = {key[1]} ({dict(TRUST_COLUMNS)[key[3]]}): {a['best']} {a['error_mean']:.3f} "
                       f"from the raw records, {b['best']} {b['error_mean']:.3f} on the prepared rows")  # fmt: skip
    head = (f"Ranking from the raw records against the prepared rows (setting prepared_rows, whose preprocessing is "
            f"not covered), at ε = {eps:g}: the best method is the same at {same} of {same + len(changed)} "
            "(data set, k, trust level) points")  # fmt: skip
    return [head + (": it changes at " + "; ".join(changed) + "." if changed else ".")]


def searched_findings(
    beside: pd.DataFrame | None, section: dict[str, Any], definitions: dict[str, dict[str, str]] | None = None
) -> list[str]:
    """One sentence per (method, data set) calibrated under a searched threat model (``common.searched``): where a
    choice met the limit for every neighbour the search found, and its error and searched δ at the reference ε,
    naming the threat model (view, accounting, adjacency; ``definitions``: the config's ``threat_models``) and
    the δ's definition."""
    if beside is None or "feasible" not in beside:
        return []
    name = section.get("searched", {}).get("threat_model", "sound")
    model = resolve(name, definitions, "common.searched.threat_model")
    under = (f"under `{name}` (view {model.view}, {model.accounting} accounting, {model.adjacency} neighbour; "
             "hockey-stick δ, Definition 1)")  # fmt: skip
    rows = beside[beside["feasible"].notna()]  # the floors' rows (no calibration) have none
    lines = []
    for (label, dataset), group in rows.groupby(["label", "dataset"], sort=False):
        met = group[group["feasible"].astype(bool)]
        if met.empty:
            lines.append(f"Searched, not certified: {label} on {dataset} meets δ = {section['delta']:g} {under} at "
                         "no ε of the grid, even for the neighbours its search found.")  # fmt: skip
            continue
        eps = reference_eps(group["eps"])
        at = met[met["eps"] == eps]
        quote = (f"; at ε = {eps:g} error {at['error_mean'].iloc[0]:.3f}, δ at least {at['delta'].iloc[0]:.2g} "
                 "(the worst neighbour found)") if len(at) else ""  # fmt: skip
        missing = sorted(set(group["eps"]) - set(met["eps"]))
        lines.append(
            f"Searched, not certified: {label} on {dataset} meets δ = {section['delta']:g} {under} for every "
            f"neighbour its search found at ε ∈ {{{', '.join(f'{e:g}' for e in sorted(met['eps']))}}}{quote}"
            + (f"; no choice found at ε ∈ {{{', '.join(f'{e:g}' for e in missing)}}}" if missing else "")
            + " (a lower bound on δ: listed beside the table, never in it)."
        )
    return lines


def second_setting_findings(
    which: pd.DataFrame, summary: pd.DataFrame, beside: pd.DataFrame | None = None
) -> list[str]:
    """Per second setting and data set (k = 1): the best method with no trusted party at ε = 5 (or the middle
    of the setting's grid) against the standard setting's at the same ε, the points where each trust level has
    a certified method within the limit, and the points no parameter choice of a not-certified method meets."""
    if "setting" not in which:
        return []
    lines = []
    standard = which[(which["setting"] == STANDARD) & (which["k"] == 1)].set_index(["dataset", "eps", "trust_model"])
    for setting in [s for s in dict.fromkeys(summary["setting"]) if s != STANDARD]:
        at = which[(which["setting"] == setting) & (which["k"] == 1)]
        points = summary[(summary["setting"] == setting) & (summary["k"] == 1)]
        for dataset, group in at.groupby("dataset", sort=True):
            n_points = points[points["dataset"] == dataset]["eps"].nunique()
            eps = reference_eps(group["eps"])
            row = group[(group["eps"] == eps) & (group["trust_model"] == "local")]
            parts = []
            if len(row):
                row = row.iloc[0]
                text = (f"at ε = {eps:g} (δ ≤ {row['delta_limit']:.2g}) with no trusted party use {row['best']} "
                        f"(error {row['error_mean']:.3f}")  # fmt: skip
                key = (dataset, eps, "local")
                if key in standard.index:
                    text += f"; from the raw records: {standard.loc[key, 'best']} {standard.loc[key, 'error_mean']:.3f}"
                parts.append(text + ")")
            met = group.groupby("trust_model")["eps"].nunique()
            parts.append(
                "a certified method meets the limit at "
                + ", ".join(f"{met.get(t, 0)} of {n_points} points with {text}" for t, text in TRUST_COLUMNS)
            )
            if beside is not None and "no_parameters_meet_limit" in beside:
                mine = beside[(beside["setting"] == setting) & (beside["dataset"] == dataset)]
                for label, rows in mine.groupby("label", sort=False):
                    excluded = rows["no_parameters_meet_limit"].fillna(False).astype(bool)
                    if "no_parameters_meet_limit" in rows and rows["no_parameters_meet_limit"].notna().any():
                        parts.append(
                            f"{label}: no parameter choice meets the limit at {int(excluded.sum())} of "
                            f"{len(rows)} points (searched floor, a lower bound)"
                        )
            lines.append(f"Setting {setting}, {dataset}, k = 1: " + "; ".join(parts) + ".")
    return lines


def _answer_cell(row: pd.Series) -> str:
    """One cell of the "which method" table: the best method with its mean error and 95 % interval, the tied
    methods where the competitive set has more than one member, or that no method beats chance."""
    interval = f"{row['error_mean']:.3f} [{row['error_ci_lo']:.3f}, {row['error_ci_hi']:.3f}]"
    if "beats_chance" in row and pd.notna(row["beats_chance"]) and not bool(row["beats_chance"]):
        return f"no method beats chance (best `{row['best']}` {interval})"
    if "tie" in row and pd.notna(row["tie"]) and bool(row["tie"]):
        return "tie: " + ", ".join(f"`{m}`" for m in str(row["competitive"]).split(";")) + f" ({interval})"
    return f"`{row['best']}` {interval}"


def which_method_markdown(which: pd.DataFrame, summary: pd.DataFrame, k: int = 1, eps: float = 5.0) -> str:
    """The answer as one Markdown table (the README's): per data set and trust level at (k, ε), the best certified
    method with its mean error and 95 % interval, ties within noise, or "no method beats chance" (the competitive
    set, :func:`ddppm.common_task.run.which_method`), with the chance level and a line on how many draws the
    answer rests on. ``k``/``ε`` fall back to the smallest rank and the grid's middle when the run has no such
    point. The standard setting's rows only."""
    which, summary = _standard(which), _standard(summary)
    ranks = sorted(set(which["k"]))
    k = k if k in ranks else ranks[0]
    eps = reference_eps(which["eps"], eps)
    chance = summary[summary["k"] == k].groupby("dataset")["chance_error"].first()
    lines = [
        f"| data set (k = {k}, ε = {eps:g}) | " + " | ".join(text for _, text in TRUST_COLUMNS) + " | chance |",
        "|---" * (len(TRUST_COLUMNS) + 2) + "|",
    ]
    at = which[(which["k"] == k) & (which["eps"] == eps)]
    for dataset, group in at.groupby("dataset", sort=True):
        best = group.set_index("trust_model")
        cells = [_answer_cell(best.loc[t]) if t in best.index else "–" for t, _ in TRUST_COLUMNS]
        lines.append(f"| {dataset} | " + " | ".join(cells) + f" | {chance.get(dataset, float('nan')):.2f} |")
    if "units" in at and at["units"].notna().any():
        units = at["units"].dropna().astype(int)
        added = at[at["units"] > units.min()]
        where = "; ".join(f"{r.dataset} ({r.trust_model}): {int(r.units)} draws, "
                          + ("a tie at the cap" if bool(r.tie) else "separated")
                          for r in added.itertuples())  # fmt: skip
        lines += ["", f"Mean error [95 % interval, Student's t over {units.min()} independent units: preprocessing "
                  "draws from the raw records]. A tie lists the methods not significantly worse than the best "
                  "(paired 95 % intervals); \"no method beats chance\" where the best's mean squared error is not "
                  "significantly below 1 − k/d. Where a tie remained, draws were added until it separated or a cap: "
                  + (where or "none needed more") + "."]  # fmt: skip
    return "\n".join(lines)


def readme_summary(which: pd.DataFrame, summary: pd.DataFrame) -> str:
    """The README's block: :func:`which_method_markdown` and the sentence saying where the best method differs
    on the prepared rows (:func:`ranking_changes`)."""
    return "\n\n".join([which_method_markdown(which, summary), *ranking_changes(which)])


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
