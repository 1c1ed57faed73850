"""Experiment ``common``: the common task on the journal's data sets (docs/common_task.md).

Every registered method that implements :class:`ddppm.common.base.CommonTaskMethod` runs on the same rows (the
pipeline's normalised data, split over its agents), estimating the top-k directions of ``XᵀX`` under one
adjacency and Definition 1's δ. Entry points (the section is ``common``, validated against
``common.schema.yaml``): :func:`check_config`, :func:`runs_of_dataset`, :func:`tables`, :func:`findings`.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ddppm.common.base import common_task_methods
from ddppm.common.bounds import bounds_on_grid
from ddppm.common.run import not_certified, run_methods, summarise, which_method
from ddppm.common.task import CommonTask
from ddppm.core.errors import ConfigError
from ddppm.core.problem import DistributedProblem
from ddppm.data import DATASETS
from ddppm.experiments.base import Experiment, register_experiment
from ddppm.pipeline.config import check_prepared_dataset

TRUST_COLUMNS = (("local", "no trusted party"), ("secure_aggregation", "secure aggregation"),
                 ("central", "a trusted curator"))  # fmt: skip
"""The "which method" table's columns, least trust first."""


def check_config(section: dict[str, Any], config: dict[str, Any] | None = None) -> None:
    """Cross-key checks of the validated section ``common``: a data set the journal run does not use is still
    prepared and split by the pipeline (its loader options and agents under ``dataset_options.<name>``), so it
    gets the same checks."""
    unknown = [ds for ds in section["datasets"] if ds not in DATASETS]
    if unknown:
        raise ConfigError(f"common.datasets: {unknown} are not data sets the pipeline knows; use some of {DATASETS}")
    if config is not None:
        for ds in section["datasets"]:
            if ds not in config["datasets"]:
                check_prepared_dataset(config, ds)


def options(section: dict[str, Any]) -> dict[str, Any]:
    """What the methods read of the section."""
    return {"adjacency": section["adjacency"], "iterations": int(section["iterations"])}


def runs_of_dataset(problem: DistributedProblem, dataset: str, section: dict[str, Any]) -> pd.DataFrame:
    """Every run of every common-task method at every (k, ε) on one data set (the ranks below its dimension)."""
    ranks = [k for k in section["ranks"] if k < problem.d]  # k = d would estimate the whole space: nothing to learn
    if not ranks:
        raise ConfigError(f"common.ranks: no k in {section['ranks']} is below the dimension {problem.d} of {dataset}")
    frames = []
    for k in ranks:
        task = CommonTask.from_problem(problem, k)
        frames.append(
            run_methods(task, section["epsilons"], section["delta"], section["runs"], section["seed"],
                        options(section), dataset=dataset)
        )  # fmt: skip
    return pd.concat(frames, ignore_index=True)


def tables(
    runs: pd.DataFrame, bounds: pd.DataFrame | None = None, section: dict[str, Any] | None = None
) -> dict[str, pd.DataFrame]:
    """The summary (per method, k, ε), the "which method" table and the not-certified list: the searched methods
    that ran, and the lower bounds for every parameter choice that methods' rule files publish (``bounds``, placed
    on the section's ε grid at its δ by :func:`ddppm.common.bounds.bounds_on_grid`)."""
    summary = summarise(runs)
    labels = {name: m.common_style()["label"] for name, m in common_task_methods().items()}
    summary.insert(summary.columns.get_loc("method") + 1, "label", summary["method"].map(labels))
    beside = not_certified(summary)
    if bounds is not None and len(bounds) and section is not None:
        on_grid = bounds_on_grid(bounds[bounds["dataset"].isin(section["datasets"])], section["epsilons"],
                                 section["delta"])  # fmt: skip
        beside = pd.concat([beside, on_grid], ignore_index=True)
    return {"summary": summary, "which_method": which_method(summary), "not_certified": beside}


def findings(
    which: pd.DataFrame, summary: pd.DataFrame, section: dict[str, Any], beside: pd.DataFrame | None = None
) -> list[str]:
    """The answer in sentences with numbers: per data set and k, at ε = 5 (or the grid's middle), the best method
    for each trust level and what a trusted curator or secure aggregation buys over trusting no one."""
    lines = [
        "The common task: which private PCA method to use (every method on the same data, adjacency and δ)",
        f"Setting: δ = {section['delta']:g}, adjacency {section['adjacency']}, {section['runs']} runs per point, "
        f"power methods with L = {section['iterations']}; error = ‖V̂V̂ᵀ − VVᵀ‖_F/√(2k).",
    ]
    eps_grid = sorted(set(which["eps"]))
    eps = 5.0 if 5.0 in eps_grid else eps_grid[len(eps_grid) // 2]
    for (dataset, k), group in which[which["eps"] == eps].groupby(["dataset", "k"], sort=False):
        best = group.set_index("trust_model")
        parts = []
        for trust, text in TRUST_COLUMNS:
            if trust in best.index:
                row = best.loc[trust]
                parts.append(f"with {text} use {row['best']} (error {row['error_mean']:.3f})")
        at = summary[(summary["dataset"] == dataset) & (summary["k"] == k)]
        chance = float(at["chance_error"].iloc[0]) if len(at) else float("nan")
        lines.append(f"{dataset}, k = {k}, ε = {eps:g}: " + "; ".join(parts) + f" (chance level {chance:.2f}).")
    if beside is not None and "no_parameters_meet_limit" in beside:
        floors = beside[beside["no_parameters_meet_limit"].fillna(False).astype(bool)]
        for label, group in floors.groupby("label", sort=False):
            # A floor is non-increasing in ε: exceeded at the largest such ε, it is exceeded at every smaller one.
            parts = []
            for dataset, rows in group.groupby("dataset", sort=True):
                top = rows.loc[rows["eps"].idxmax()]
                parts.append(f"{dataset} at any ε ≤ {top['eps']:g} (δ at least {top['delta']:.2g} there)")
            lines.append(
                f"Not certified, {label}: no parameter choice meets δ = {section['delta']:g} on "
                + "; ".join(parts)
                + " (the worst neighbour a search found: a lower bound)."
            )
    return lines


def which_method_markdown(which: pd.DataFrame, summary: pd.DataFrame, k: int = 1, eps: float = 5.0) -> str:
    """The answer as one Markdown table (the README's): per data set, the best certified method and its mean error
    for each trust level at (k, ε), with the chance level. ``k``/``ε`` fall back to the smallest rank and the
    grid's middle when the run has no such point."""
    ranks, eps_grid = sorted(set(which["k"])), sorted(set(which["eps"]))
    k = k if k in ranks else ranks[0]
    eps = eps if eps in eps_grid else eps_grid[len(eps_grid) // 2]
    chance = summary[summary["k"] == k].groupby("dataset")["chance_error"].first()
    lines = [
        f"| data set (k = {k}, ε = {eps:g}) | " + " | ".join(text for _, text in TRUST_COLUMNS) + " | chance |",
        "|---" * (len(TRUST_COLUMNS) + 2) + "|",
    ]
    at = which[(which["k"] == k) & (which["eps"] == eps)]
    for dataset, group in at.groupby("dataset", sort=True):
        best = group.set_index("trust_model")
        cells = [
            f"`{best.loc[t, 'best']}` {best.loc[t, 'error_mean']:.3f}" if t in best.index else "–"
            for t, _ in TRUST_COLUMNS
        ]
        lines.append(f"| {dataset} | " + " | ".join(cells) + f" | {chance.get(dataset, float('nan')):.2f} |")
    return "\n".join(lines)


@register_experiment
class CommonTaskExperiment(Experiment):
    """The common task: every method, the same data, adjacency and privacy standard, with costs."""

    name = "common"
    title = "The common task: which method"
    targets_relative = ("common/summary.csv", "common/which_method.csv", "common/findings.txt")
    findings_relative = "common/findings.txt"

    def check_config(self, section: dict[str, Any], config: dict[str, Any] | None = None) -> None:
        check_config(section, config)
