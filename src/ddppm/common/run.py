"""Run every common-task method on one task over an ε grid, summarise, and answer "which method?".

:func:`run_methods` gives one row per (method, ε, run) with the subspace error and the captured variance, and
the method's calibration (σ, δ, which privacy column δ comes from), trust model and costs. :func:`summarise`
gives the mean and a 95 % confidence interval per (method, ε). :func:`which_method` picks, per ε and what a user
can trust, the method with the smallest mean error among those whose δ is certified, within the limit, and which
need no more trust, with the runner-up; methods with only a searched δ are listed apart by :func:`not_certified`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ddppm.common.base import common_task_methods
from ddppm.common.task import CommonTask, captured_variance, chance_error, subspace_error
from ddppm.core.seeds import run_generators


def run_methods(
    task: CommonTask,
    eps_grid: list[float],
    delta_limit: float,
    runs: int,
    seed: int,
    options: dict[str, Any],
    methods: Mapping[str, Any] | None = None,
    dataset: str = "",
) -> pd.DataFrame:
    """Every run of every method (default: :func:`ddppm.common.base.common_task_methods`) at every ε.

    Runs of one (method, ε) draw from generators labelled by (dataset, k, method, ε, run index), so a run can be
    replayed alone and adding a method changes no other method's numbers."""
    methods = common_task_methods() if methods is None else methods
    frames = []
    for name, method in methods.items():
        for eps in eps_grid:
            calibrated = method.common_calibrate(task, float(eps), float(delta_limit), options)
            rngs = run_generators(seed, (dataset, task.k, name, float(eps)), range(runs))
            start = time.perf_counter()
            V_hat = method.common_estimate(task, calibrated, rngs, options)
            seconds = (time.perf_counter() - start) / runs
            costs = method.common_costs(task, calibrated)
            frames.append(
                pd.DataFrame(
                    {
                        "dataset": dataset,
                        "k": task.k,
                        "method": name,
                        "trust_model": method.trust_model,
                        "privacy_column": method.privacy_column,
                        "eps": float(eps),
                        "delta_limit": float(delta_limit),
                        "delta": calibrated.delta,
                        "feasible": calibrated.feasible,
                        "sigma": float(calibrated.params.get("sigma", np.nan)),
                        "run": np.arange(runs),
                        "error": subspace_error(V_hat, task.V),
                        "captured_variance": captured_variance(V_hat, task),
                        "seconds_per_run": seconds,
                        "floats_per_agent": int(costs["floats_per_agent"]),
                        "rounds": int(costs["rounds"]),
                        "memory": str(costs["memory"]),
                    }
                )
            )
    table = pd.concat(frames, ignore_index=True)
    table["chance_error"] = chance_error(task.d, task.k)
    return table


SUMMARY_KEYS = ["dataset", "k", "method", "trust_model", "privacy_column", "eps"]


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, k, method, ε): mean error with its 95 % confidence interval (normal approximation),
    mean captured variance, and the calibration and cost columns (constant within a group)."""
    constant = ["delta_limit", "delta", "feasible", "sigma", "floats_per_agent", "rounds", "memory", "chance_error"]

    def stats(group: pd.DataFrame) -> pd.Series:
        errors = group["error"].to_numpy(float)
        half = 1.96 * errors.std(ddof=1) / np.sqrt(errors.size) if errors.size > 1 else np.nan
        out = {c: group[c].iloc[0] for c in constant}
        out.update(
            n_runs=errors.size,
            error_mean=errors.mean(),
            error_ci_lo=errors.mean() - half,
            error_ci_hi=errors.mean() + half,
            captured_variance_mean=group["captured_variance"].mean(),
            seconds_per_run=group["seconds_per_run"].mean(),
        )
        return pd.Series(out)

    return runs.groupby(SUMMARY_KEYS, sort=False).apply(stats, include_groups=False).reset_index()


TRUST_ORDER = {"central": 0, "secure_aggregation": 1, "gossip": 2, "local": 2}
"""How much a method asks users to trust (0: a curator sees the data; 2: no one). A method that asks for less is
usable wherever one that asks for more is: a local-DP method stays private when a curator also exists."""


def which_method(summary: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, k, ε) and what the user can trust (``trust_model``): among the methods whose δ is certified,
    within the limit, and which ask for no more trust than that (:data:`TRUST_ORDER`), the one with the smallest
    mean error, its own trust model, error and captured variance, and the runner-up."""
    eligible = summary[(summary["privacy_column"] == "certified") & summary["feasible"].astype(bool)]
    eligible = eligible[eligible["trust_model"].isin(TRUST_ORDER)]
    rows = []
    for (dataset, k, eps), group in eligible.groupby(["dataset", "k", "eps"], sort=True):
        for trust in ("central", "secure_aggregation", "local"):
            usable = group[group["trust_model"].map(TRUST_ORDER) >= TRUST_ORDER[trust]]
            if usable.empty:
                continue
            ranked = usable.sort_values("error_mean")
            best = ranked.iloc[0]
            second = ranked.iloc[1] if len(ranked) > 1 else None
            rows.append(
                {
                    "dataset": dataset,
                    "k": int(k),
                    "eps": float(eps),
                    "trust_model": trust,
                    "best": best["method"],
                    "best_trust_model": best["trust_model"],
                    "error_mean": float(best["error_mean"]),
                    "error_ci_hi": float(best["error_ci_hi"]),
                    "captured_variance": float(best["captured_variance_mean"]),
                    "runner_up": second["method"] if second is not None else "",
                    "runner_up_error": float(second["error_mean"]) if second is not None else np.nan,
                    "runner_up_ci_lo": float(second["error_ci_lo"]) if second is not None else np.nan,
                }
            )
    table = pd.DataFrame(rows)
    if len(table):  # the best is clearly best only when the intervals do not overlap
        table["clear_winner"] = table["error_ci_hi"] < table["runner_up_ci_lo"]
    return table


def not_certified(summary: pd.DataFrame) -> pd.DataFrame:
    """The methods whose δ is only searched (a lower bound), with that δ: listed beside the "which method" table,
    never in it."""
    searched = summary[summary["privacy_column"] == "searched"]
    return searched[["dataset", "k", "eps", "method", "trust_model", "delta", "delta_limit", "error_mean"]]
