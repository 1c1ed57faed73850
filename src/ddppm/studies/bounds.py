"""Study ``bounds``: the price of loose bounds (docs/bounds.md).

Users declare bounds from units and domain knowledge, loose by a factor of 2 to 10. This study widens each data
set's declared bounds by a factor w around their midpoint (:func:`ddppm.data.public_prep.widen_bounds`: a feature
that cannot be negative stays non-negative; a row-norm bound grows by w too) and runs the common task's standard
setting from the raw records at each w, with each preprocessing estimator of ``bounds.estimators``
(:mod:`ddppm.common_task.preprocessing`): every common-task method, every trust level, the ε of ``bounds.epsilons``.
The random draws are the standard setting's (the same labels at every w and estimator), so the comparisons along w
and between estimators are paired.

* :func:`bounds_runs`: the runs of one data set, columns ``width`` and ``estimator`` added;
* :func:`bounds_summary`: the common task's summary per (width, estimator), with the best method per trust level;
* :func:`bounds_findings`: the targets of ``bounds.targets`` judged, and the best method's error at each width;
* :func:`small_n_findings`: at the declared bounds, on every data set with n ≤ ``bounds.targets.small_n`` and at
  every ε, the default preprocessing against ``one_shot`` by the paired interval of their difference (the box must
  not do harm at small n, docs/bounds.md).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ddppm.common_task.preprocessing import PreprocessingPlan
from ddppm.common_task.raw_records import PREPROCESSING_ONLY, RawRecords, raw_records_runs
from ddppm.common_task.run import mean_half_width, summarise
from ddppm.common_task.settings import task_options
from ddppm.data.public_prep import widen_bounds

POINT = ["dataset", "width", "estimator"]
TRUST_LEVEL = {"local": "no trusted party", "gossip": "no trusted party", "secure_aggregation": "secure aggregation",
               "central": "a trusted curator"}  # fmt: skip
"""The "which method" table's words for each trust model (its TRUST_COLUMNS lie a layer above, in experiments)."""


def bounds_runs(records: RawRecords, section: dict[str, Any], common: dict[str, Any], dataset: str) -> pd.DataFrame:
    """Every run at every (width, estimator) of the section ``bounds`` on one data set: the common task's
    raw-records runs (``common``: its section, for δ, adjacency, ranks, seed and the preprocessing's other keys),
    with ``width``, ``estimator`` and the number of records ``n`` first."""
    base = PreprocessingPlan.from_section(common["preprocessing"])
    options = task_options(common)
    ranks = [k for k in section["ranks"] if k < records.X.shape[1]]
    eps = [float(e) for e in section["epsilons"]]
    frames = []
    for width in section["widths"]:
        widened = replace(records, bounds=widen_bounds(records.bounds, float(width)))
        estimators = section["estimators"] if records.standardises else section["estimators"][:1]
        for estimator in estimators:
            plan = replace(base, estimator=estimator)
            limits = [float(common["delta"])] * len(eps)
            runs = raw_records_runs(widened, eps, limits, ranks, int(section["runs"]), int(section["draws"]),
                                    int(common["seed"]), plan, options, dataset=dataset)  # fmt: skip
            runs.insert(0, "estimator", estimator if records.standardises else "none")
            runs.insert(0, "width", float(width))
            runs.insert(0, "n", int(records.X.shape[0]))
            frames.append(runs)
    return pd.concat(frames, ignore_index=True)


def bounds_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """The common task's summary (:func:`ddppm.common_task.run.summarise`) per (data set, width, estimator), with
    ``trust_level`` and ``best`` (the method of least mean error of its trust level at that point; the
    preprocessing-only rows are no method)."""
    frames = []
    for (_, width, estimator), group in runs.groupby(POINT, sort=False):
        summary = summarise(group.drop(columns=["width", "estimator"]))
        summary.insert(0, "estimator", estimator)
        summary.insert(0, "width", width)
        frames.append(summary)
    summary = pd.concat(frames, ignore_index=True)
    summary["trust_level"] = summary["trust_model"].map(TRUST_LEVEL).fillna("")
    methods = summary[~summary["method"].str.startswith(PREPROCESSING_ONLY)]
    best = methods.loc[methods.groupby([*POINT, "k", "eps", "trust_level"])["error_mean"].idxmin()]
    summary["best"] = summary.index.isin(best.index)
    return summary


def _at(summary: pd.DataFrame, dataset: str, eps: float, estimator: str) -> pd.DataFrame:
    """The rows of one data set, ε and estimator at the smallest rank."""
    return summary[(summary["dataset"] == dataset) & np.isclose(summary["eps"], eps)
                   & (summary["k"] == summary["k"].min()) & (summary["estimator"] == estimator)]  # fmt: skip


def _best(summary: pd.DataFrame, dataset: str, eps: float, estimator: str, level: str) -> pd.DataFrame:
    rows = _at(summary, dataset, eps, estimator)
    return rows[(rows["trust_level"] == level) & rows["best"]].sort_values("width")


def preprocessing_error(summary: pd.DataFrame, dataset: str, eps: float, estimator: str, width: float) -> float:
    """The curator's preprocessing-only mean error at one point (NaN where the analyst does not standardise)."""
    rows = _at(summary, dataset, eps, estimator)
    rows = rows[np.isclose(rows["width"], width) & (rows["method"] == f"{PREPROCESSING_ONLY}_curator")]
    return float(rows["error_mean"].iloc[0]) if len(rows) else float("nan")


def bounds_findings(summary: pd.DataFrame, section: dict[str, Any]) -> list[str]:
    """The study in sentences: each target of ``bounds.targets`` (the preprocessing's own error at the target width
    within ``ratio`` of its error at the declared bounds, on the named data sets, at the target ε; and the new
    estimator no worse than the old beyond the noise at any width), then per data set the best curator method's
    error against width under each estimator."""
    targets = section["targets"]
    eps, wide, ratio = float(targets["eps"]), float(targets["width"]), float(targets["ratio"])
    widths = ", ×".join(f"{w:g}" for w in section["widths"])
    delta = float(summary["delta_limit"].max())
    lines = [f"The price of loose bounds: declared bounds widened ×{widths} (from the raw records, δ = {delta:g}, "
             "every method and trust level)"]
    for dataset in [ds for ds in targets["datasets"] if ds in set(summary["dataset"])]:
        at = {est: (preprocessing_error(summary, dataset, eps, est, 1.0), preprocessing_error(summary, dataset, eps,
                                                                                              est, wide))
              for est in section["estimators"]}  # fmt: skip
        new = at.get("range_shrinking")
        if new is None or np.isnan(new[0]):
            continue
        verdict = "met" if new[1] <= ratio * new[0] else "not met"
        old = at.get("one_shot", (np.nan, np.nan))
        lines.append(f"{dataset}, ε = {eps:g}: the private standardisation alone errs {new[0]:.3f} at the declared "
                     f"bounds and {new[1]:.3f} at ×{wide:g} with range_shrinking (target ≤ ×{ratio:g}: {verdict}); "
                     f"one_shot: {old[0]:.3f} → {old[1]:.3f}.")  # fmt: skip
    lines.extend(_no_worse(summary, section))
    for dataset in dict.fromkeys(summary["dataset"]):
        parts = []
        for estimator in dict.fromkeys(summary.loc[summary["dataset"] == dataset, "estimator"]):
            best = _best(summary, dataset, eps, estimator, "a trusted curator")
            curve = ", ".join(f"×{r.width:g} {r.error_mean:.3f}" for r in best.itertuples())
            parts.append(f"{estimator}: {curve}")
        chance = float(summary.loc[summary["dataset"] == dataset, "chance_error"].iloc[0])
        lines.append(f"{dataset}, ε = {eps:g}, best curator method's error against width ({'; '.join(parts)}; "
                     f"chance {chance:.2f}).")  # fmt: skip
    return lines


def _no_worse(summary: pd.DataFrame, section: dict[str, Any]) -> list[str]:
    """Where range_shrinking's preprocessing-only error is significantly above one_shot's (their 95 % intervals
    apart), at the target ε, per data set and width."""
    if not {"range_shrinking", "one_shot"} <= set(section["estimators"]):
        return []
    eps = float(section["targets"]["eps"])
    rows = summary[np.isclose(summary["eps"], eps) & (summary["method"] == f"{PREPROCESSING_ONLY}_curator")
                   & (summary["k"] == summary["k"].min())]  # fmt: skip
    values = ["error_ci_lo", "error_ci_hi", "error_mean"]
    wide = rows.pivot_table(index=["dataset", "width"], columns="estimator", values=values)
    if wide.empty:
        return []
    worse = wide[wide[("error_ci_lo", "range_shrinking")] > wide[("error_ci_hi", "one_shot")]]
    better = wide[wide[("error_ci_hi", "range_shrinking")] < wide[("error_ci_lo", "one_shot")]]
    mean = "error_mean"
    text = "; ".join(f"{ds} ×{w:g} ({r[(mean, 'range_shrinking')]:.3f} vs {r[(mean, 'one_shot')]:.3f})"
                     for (ds, w), r in worse.iterrows())  # fmt: skip
    return [f"ε = {eps:g}, the private standardisation alone: range_shrinking is better than one_shot beyond the "
            f"noise at {len(better)} of {len(wide)} (data set, width) points and worse at {len(worse)}"
            + (f": {text}." if len(worse) else ".")]  # fmt: skip


def small_n_findings(runs: pd.DataFrame, section: dict[str, Any]) -> list[str]:
    """The small-n target (issue 60): at the declared bounds (width 1), on every data set with n ≤
    ``targets.small_n`` and at every ε, the curator's private standardisation alone errs no more with
    ``range_shrinking`` than with ``one_shot`` beyond the noise: the 95 % interval of their paired difference
    (Student's t over the shared preprocessing draws, :func:`~ddppm.common_task.run.mean_half_width`) does not lie
    wholly above 0. One sentence per (data set, ε), then the verdict; none where a data set or estimator is missing."""
    limit = int(section["targets"].get("small_n", 1000))
    if not {"range_shrinking", "one_shot"} <= set(section["estimators"]) or "n" not in runs:
        return []
    rows = runs[np.isclose(runs["width"], 1.0) & (runs["method"] == f"{PREPROCESSING_ONLY}_curator")
                & (runs["n"] <= limit)]  # fmt: skip
    rows = rows[rows["k"] == rows["k"].min()] if len(rows) else rows
    lines, worse = [], []
    for (dataset, eps), group in rows.groupby(["dataset", "eps"], sort=False):
        paired = group.pivot_table(index=["run", "draw"], columns="estimator", values="error").dropna()
        if not {"range_shrinking", "one_shot"} <= set(paired.columns) or paired.empty:
            continue
        difference = (paired["range_shrinking"] - paired["one_shot"]).to_numpy()
        mean = float(difference.mean())
        half = mean_half_width(difference, paired.index.get_level_values("draw").to_numpy())
        half = 0.0 if np.isnan(half) and np.all(difference == 0) else half
        lo, hi = mean - half, mean + half
        n = int(group["n"].iloc[0])
        if lo > 0:
            worse.append(f"{dataset} ε = {eps:g}")
        new, old = paired["range_shrinking"].mean(), paired["one_shot"].mean()
        lines.append(f"{dataset} (n = {n}), ε = {eps:g}, declared bounds, the private standardisation alone: "
                     f"range_shrinking {new:.3f}, one_shot {old:.3f}, paired difference {mean:+.3f} "
                     f"[{lo:+.3f}, {hi:+.3f}].")  # fmt: skip
    if not lines:
        return []
    verdict = "met" if not worse else f"not met at {', '.join(worse)}"
    head = (f"Small n (n ≤ {limit}): the default preprocessing is not significantly worse than one_shot at the "
            f"declared bounds at every data set and ε (paired 95 % intervals over draws): {verdict}.")  # fmt: skip
    return [head, *lines]
