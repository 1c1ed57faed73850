"""Run every common-task method on one task over an ε grid, summarise, and answer "which method?".

:func:`run_methods` gives one row per (method, ε, run) with the subspace error and the captured variance, and
the method's calibration (σ, δ, which privacy column δ comes from), trust model and costs. :func:`summarise`
gives the mean and a 95 % confidence interval per (method, ε). :func:`which_method` picks, per ε and what a user
can trust, the method with the smallest mean error among those whose δ is certified, within the limit, and which
need no more trust, with the runner-up; methods with only a searched δ are listed apart by :func:`not_certified`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ddppm.common_task.base import estimates_rank
from ddppm.common_task.ranking import Ranking, rank_methods, student_quantile
from ddppm.common_task.settings import STANDARD
from ddppm.common_task.task import CommonTask, captured_variance, chance_error, subspace_error
from ddppm.core.seeds import run_generators
from ddppm.data.public_prep import PREPARED_ROWS
from ddppm.methods import common_task_methods


def run_methods(
    task: CommonTask,
    eps_grid: Sequence[float],
    delta_limit: float | Sequence[float],
    runs: int,
    seed: int,
    options: dict[str, Any],
    methods: Mapping[str, Any] | None = None,
    dataset: str = "",
    setting: str = STANDARD,
    draws: str | None = None,
) -> pd.DataFrame:
    """Every run of every method (default: :func:`ddppm.methods.common_task_methods`; those that estimate the
    task's k, :func:`ddppm.common_task.base.estimates_rank`) at every ε, each calibrated to its δ limit
    (``delta_limit``: one for every ε, or one per ε).

    Runs of one (method, ε) draw from generators labelled by (dataset, k, method, ε, run index), and by
    ``draws`` (default: the setting's name) outside the standard setting, so a run can be replayed alone and
    adding a method or a setting changes no other numbers; a setting that changes only the noise level at the
    standard's points draws as the standard (``draws="standard"``), so the two are compared run for run."""
    methods = common_task_methods() if methods is None else methods
    limits = np.broadcast_to(np.asarray(delta_limit, float), (len(eps_grid),))
    frames = []
    for name, method in methods.items():
        if not estimates_rank(method, task.k):
            continue
        for eps, limit in zip(eps_grid, limits, strict=True):
            calibrated = method.common_calibrate(task, float(eps), float(limit), options)
            stream = setting if draws is None else draws
            label = (dataset, task.k, name, float(eps)) + (() if stream == STANDARD else (stream,))
            rngs = run_generators(seed, label, range(runs))
            start = time.perf_counter()
            V_hat = method.common_estimate(task, calibrated, rngs, options)
            seconds = (time.perf_counter() - start) / runs
            frames.append(run_rows(task, name, method, calibrated, V_hat, seconds, dataset, setting))
    return pd.concat(frames, ignore_index=True)


def run_rows(
    task: CommonTask,
    name: str,
    method: Any,
    calibrated: Any,
    V_hat: np.ndarray,
    seconds_per_run: float,
    dataset: str = "",
    setting: str = STANDARD,
) -> pd.DataFrame:
    """The runs format of one (method, k, ε): one row per estimate of ``V_hat`` (runs, d, k), with the
    method's calibration, trust model, costs and the task's chance level."""
    costs = method.common_costs(task, calibrated)
    runs = V_hat.shape[0]
    return pd.DataFrame(
        {
            "setting": setting,
            "dataset": dataset,
            "k": task.k,
            "method": name,
            "trust_model": method.trust_model,
            "privacy_column": method.privacy_column,
            "eps": float(calibrated.eps),
            "delta_limit": float(calibrated.delta_limit),
            "delta": calibrated.delta,
            "feasible": calibrated.feasible,
            "sigma": float(calibrated.params.get("sigma", np.nan)),
            "noise_multiplier": _noise_multiplier(calibrated),
            "run": np.arange(runs),
            "error": subspace_error(V_hat, task.V),
            "captured_variance": captured_variance(V_hat, task),
            "seconds_per_run": seconds_per_run,
            "floats_per_agent": int(costs["floats_per_agent"]),
            "rounds": int(costs["rounds"]),
            "memory": str(costs["memory"]),
            "chance_error": chance_error(task.d, task.k),
        }
    )


def _noise_multiplier(calibrated: Any) -> float:
    """σ/Δ of the releases the trust model's observer sees (one value when they all share it, else NaN): unlike
    ``sigma`` (each method's own noise parameter), comparable across methods."""
    ratios = {round(r.sigma / r.sensitivity, 12) for r in calibrated.releases}
    return float(ratios.pop()) if len(ratios) == 1 else float("nan")


def reference_eps(eps_values: Any, preferred: float = 5.0) -> float:
    """The ε a sentence or table quotes: ``preferred`` when the grid has it, else the grid's middle value."""
    grid = sorted({float(e) for e in eps_values})
    return preferred if preferred in grid else grid[len(grid) // 2]


ERROR_RANGE = (0.0, 1.0)
"""The subspace error's range: a mean's interval is cut to it (the t interval intersected with the parameter's
range keeps its coverage; the README's table says so)."""

SUMMARY_KEYS = ["setting", "scope", "dataset", "k", "method", "trust_model", "privacy_column", "eps"]


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (setting, scope, dataset, k, method, ε): mean error with its 95 % confidence interval (normal approximation),
    mean captured variance, and the calibration and cost columns (constant within a group). Runs with
    ``finished`` False (a peer library's fit stopped by its time budget, :mod:`ddppm.common_task.peers`) count in
    ``n_unfinished``, not in the statistics. Runs that share a private preprocessing draw (column ``draw`` with
    ``preprocessing`` not ``none``, the end-to-end setting: :mod:`ddppm.common_task.raw_records`) are not
    independent: their interval is Student's over the draws' means; without preprocessing noise every run counts.
    Intervals are cut to the error's range [0, 1] (:data:`ERROR_RANGE`)."""
    constant = ["delta_limit", "delta", "feasible", "sigma", "noise_multiplier", "floats_per_agent", "rounds",
                "memory", "chance_error"]  # fmt: skip
    # Every run names what its (ε, δ) covers; runs that predate the column (or are built apart, such as the
    # searched variants' and the studies') are for the prepared rows, as every setting is today.
    scope = runs["scope"].fillna(PREPARED_ROWS) if "scope" in runs else PREPARED_ROWS
    runs = runs.assign(scope=scope, setting=runs["setting"] if "setting" in runs else STANDARD)
    # Columns as arrays once, groups as row positions (a pandas apply per group costs more than its statistics).
    finished_all = runs["finished"].ne(False).to_numpy() if "finished" in runs else np.ones(len(runs), bool)
    errors_all = runs["error"].to_numpy(float)
    captured_all = runs["captured_variance"].to_numpy(float)
    seconds_all = runs["seconds_per_run"].to_numpy(float)
    draws_all = runs["draw"].to_numpy() if "draw" in runs else None
    preprocessing_all = runs["preprocessing"].to_numpy() if "preprocessing" in runs else None
    paired_all = runs["correct_law_error"].to_numpy(float) if "correct_law_error" in runs else None
    constants = {c: runs[c].to_numpy() for c in constant}
    groups = runs.groupby(SUMMARY_KEYS, sort=False, dropna=False).indices
    rows = []
    for key, at in groups.items():
        finished = finished_all[at]
        errors = errors_all[at][finished]
        shared = draws_all is not None and (preprocessing_all is None or bool((preprocessing_all[at] != "none").all()))
        half = mean_half_width(errors, draws_all[at][finished] if shared else None)
        mean = errors.mean() if errors.size else np.nan
        captured = captured_all[at][finished]
        out = dict(zip(SUMMARY_KEYS, key, strict=True))
        out.update({c: constants[c][at[0]] for c in constant})
        if preprocessing_all is not None:  # who released the private standardisation's sums (end-to-end setting)
            out["preprocessing"] = preprocessing_all[at[0]]
        out.update(
            n_runs=errors.size,
            n_unfinished=int((~finished).sum()),
            error_mean=mean,
            error_ci_lo=max(mean - half, ERROR_RANGE[0]),
            error_ci_hi=min(mean + half, ERROR_RANGE[1]),
            error_median=float(np.median(errors)) if errors.size else np.nan,
            captured_variance_mean=captured.mean() if captured.size else np.nan,
            seconds_per_run=seconds_all[at].mean(),
        )
        if paired_all is not None:  # a peer library's paired draws from the law its proof is about
            paired = paired_all[at]
            paired = paired[~np.isnan(paired)]
            out["correct_law_error_mean"] = float(paired.mean()) if len(paired) else np.nan
        rows.append(out)
    return pd.DataFrame(rows)


def mean_half_width(errors: np.ndarray, draws: np.ndarray | None = None) -> float:
    """Half the 95 % interval of the mean: normal over runs, or Student's t over the means of each draw's runs (the
    draws serve equal numbers of runs, so the mean of their means is the mean)."""
    if draws is not None and not pd.isna(draws).all():
        means = pd.Series(errors).groupby(np.asarray(draws)).mean().to_numpy()
        if means.size < 2:
            return float("nan")
        return float(student_quantile(0.975, means.size - 1) * means.std(ddof=1) / np.sqrt(means.size))
    return float(1.96 * errors.std(ddof=1) / np.sqrt(errors.size)) if errors.size > 1 else float("nan")


def interval_outcome(lo: float, hi: float, lo_other: float, hi_other: float) -> str:
    """``better`` when the interval [lo, hi] lies wholly below [lo_other, hi_other] (smaller is better), ``worse``
    when wholly above, else ``tied``."""
    return "better" if hi < lo_other else "worse" if lo > hi_other else "tied"


TRUST_ORDER = {"central": 0, "secure_aggregation": 1, "gossip": 2, "local": 2}
"""How much a method asks users to trust (0: a curator sees the data; 2: no one). A method that asks for less is
usable wherever one that asks for more is: a local-DP method stays private when a curator also exists."""


TRUST_LEVELS = ("central", "secure_aggregation", "local")
"""What a user can trust, most first: a curator, a secure aggregator, no one (gossip and local-DP methods)."""


def unit_errors(runs: pd.DataFrame, unit: str | None = None) -> pd.DataFrame:
    """Errors per independent unit and method (one column per method): a run, or, where runs share a private
    preprocessing draw (column ``draw``, ``preprocessing`` not ``none``), the mean of that draw's runs; unit u of two
    methods is paired (the same draw, or independent runs of the same index). Unfinished runs (a peer's, stopped by
    its time budget) are left out."""
    runs = finished_runs(runs)
    unit = unit or unit_column(runs)
    return runs.assign(unit=runs[unit]).pivot_table(index="unit", columns="method", values="error", aggfunc="mean")


def finished_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs not stopped by a time budget (``finished`` False: a peer's fit; NaN, a method without the column,
    counts as finished)."""
    return runs[runs["finished"].ne(False)] if "finished" in runs else runs


def unit_column(runs: pd.DataFrame) -> str:
    """The column naming the independent unit of :func:`unit_errors` (``runs``: finished runs only): ``draw`` where
    runs share a private preprocessing draw, else ``run``."""
    shared = "draw" in runs and runs["draw"].notna().all()
    if shared and ("preprocessing" not in runs or (runs["preprocessing"] != "none").all()):
        return "draw"
    return "run"  # no preprocessing noise (the analyst does not standardise): every run is its own unit


def which_method(summary: pd.DataFrame, runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per (setting, dataset, k, ε) and what the user can trust (``trust_model``): among the methods whose δ is
    certified, within the limit, and which ask for no more trust than that (:data:`TRUST_ORDER`), the one with
    the smallest mean error, its own trust model, error with its 95 % interval and captured variance, and the
    runner-up. With ``runs``, also the competitive set (:func:`ddppm.common_task.ranking.rank_methods`: the
    methods not significantly worse than the best, paired over :func:`unit_errors`; ``tie`` where it has more than
    one member), whether the best beats chance, and the units ranked."""
    if "setting" not in summary:
        summary = summary.assign(setting=STANDARD)
    if runs is not None and "setting" not in runs:
        runs = runs.assign(setting=STANDARD)
    eligible = summary[(summary["privacy_column"] == "certified") & summary["feasible"].astype(bool)]
    eligible = eligible[eligible["trust_model"].isin(TRUST_ORDER)]
    rows = []
    # The standard setting first (the README's answer), then the second settings in the order they appear.
    order = {name: i for i, name in enumerate(dict.fromkeys([STANDARD, *summary["setting"]]))}
    point = ["setting", "dataset", "k", "eps"]
    groups = eligible.groupby(point, sort=True)
    # Each point's runs, split once (rows in their original order, as a mask per point would select them).
    runs_at = dict(iter(runs.groupby(point, sort=False, dropna=False))) if runs is not None else {}
    for (setting, dataset, k, eps), group in sorted(groups, key=lambda item: order[item[0][0]]):
        by_trust: dict[str, Any] = {}
        if runs is not None:
            at_point = runs_at.get((setting, dataset, k, eps))
            by_trust = rankings(at_point if at_point is not None else runs.iloc[:0])
        for trust in TRUST_LEVELS:
            usable = group[group["trust_model"].map(TRUST_ORDER) >= TRUST_ORDER[trust]]
            if usable.empty:
                continue
            ranked = usable.sort_values("error_mean")
            best = ranked.iloc[0]
            second = ranked.iloc[1] if len(ranked) > 1 else None
            row = {
                "setting": setting,
                "dataset": dataset,
                "k": int(k),
                "eps": float(eps),
                "delta_limit": float(best["delta_limit"]) if "delta_limit" in best else np.nan,
                "trust_model": trust,
                "best": best["method"],
                "best_trust_model": best["trust_model"],
                "error_mean": float(best["error_mean"]),
                "error_ci_lo": float(best["error_ci_lo"]),
                "error_ci_hi": float(best["error_ci_hi"]),
                "captured_variance": float(best["captured_variance_mean"]),
                "runner_up": second["method"] if second is not None else "",
                "runner_up_error": float(second["error_mean"]) if second is not None else np.nan,
                "runner_up_ci_lo": float(second["error_ci_lo"]) if second is not None else np.nan,
            }
            if trust in by_trust:
                row.update(_competitive(by_trust[trust]))
            rows.append(row)
    table = pd.DataFrame(rows)
    if len(table):  # the best is clearly best only when the intervals do not overlap
        table["clear_winner"] = table["error_ci_hi"] < table["runner_up_ci_lo"]
    return table


def rankings(runs: pd.DataFrame) -> dict[str, Any]:
    """Per trust level, the ranking (:func:`ddppm.common_task.ranking.rank_methods`) of the certified, feasible
    methods it may use, from ``runs`` of one point (setting, data set, k, ε)."""
    usable = runs[(runs["privacy_column"] == "certified") & runs["feasible"].astype(bool)]
    usable = usable[usable["trust_model"].isin(TRUST_ORDER)]
    if usable.empty:
        return {}
    chance_mse = float(usable["chance_error"].iloc[0]) ** 2
    finished = finished_runs(usable)
    # One pivot of every usable method per unit column, its columns taken per trust level: a (unit, method) mean
    # does not depend on the other methods, and rank_methods drops the units none of the level's methods has, so
    # each level ranks exactly the table a pivot of its own runs gives.
    pivots: dict[str, pd.DataFrame] = {}
    out = {}
    for trust in TRUST_LEVELS:
        level = usable["trust_model"].map(TRUST_ORDER) >= TRUST_ORDER[trust]
        if not level.any():
            continue
        unit = unit_column(finished[level[finished.index]])
        if unit not in pivots:
            pivots[unit] = unit_errors(finished, unit)
        methods = set(usable.loc[level, "method"])
        table = pivots[unit]
        out[trust] = rank_methods(table[[m for m in table.columns if m in methods]], chance_mse)
    return out


def open_sets(runs: pd.DataFrame) -> list[str]:
    """The methods of every competitive set with more than one member at one point (sorted): those that more runs
    could separate."""
    return sorted({m for ranking in rankings(runs).values() if not ranking.separated for m in ranking.members})


def _competitive(ranking: Ranking) -> dict[str, Any]:
    """The competitive set's columns of one (point, trust level)."""
    members = ranking.table[ranking.table["competitive"]]
    return {
        "competitive": ";".join(ranking.members),
        "competitive_errors": ";".join(f"{r.method}:{r.error_mean:.4f}:{r.error_lo:.4f}:{r.error_hi:.4f}"
                                       for r in members.itertuples()),  # fmt: skip
        "set_size": len(ranking.members),
        "tie": not ranking.separated,
        "beats_chance": ranking.beats_chance,
        "units": ranking.runs,
    }


def not_certified(summary: pd.DataFrame) -> pd.DataFrame:
    """The methods whose δ is only searched (a lower bound), with that δ: listed beside the "which method" table,
    never in it."""
    searched = summary[summary["privacy_column"] == "searched"]
    columns = ["setting", "dataset", "k", "eps", "method", "label", "trust_model", "delta", "delta_limit", "feasible",
               "error_mean"]  # fmt: skip
    return searched[[c for c in columns if c in searched]].assign(delta_is="at least")
