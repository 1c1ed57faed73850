"""Study ``radius``: the clipping radius, fixed against private (docs/studies.md, "The clipping radius").

After the private standardisation every row is divided by a clipping radius R and clipped to the unit ball
(:mod:`ddppm.common_task.clip_radius`). A fixed R = c√d shrinks the same long rows at every ε, a bias no budget
removes; the private radius (``common.preprocessing.radius.adaptive``, the default) is read from a noisy histogram
of the rows' norms and grows to cover every row as ε grows. This study runs the common task's standard setting from
the raw records (δ = ``common.delta``, the common adjacency, certified) under both radii, on the data sets the
analyst standardises, for the methods of ``radius.methods`` (by default the three that win the "which method"
table, one per trust level), every k of ``radius.ranks`` and every ε of ``radius.epsilons``. Both radii draw from
the same labelled generators (the standard setting's: the adaptive runs at an ε of ``common.epsilons`` are the
standard setting's own, bit for bit), so the two are compared draw by draw.

* :func:`radius_runs`: the runs of one data set, columns ``radius`` (``fixed`` or ``adaptive``), ``n`` and ``d``;
* :func:`radius_summary`: the common task's summary per (data set, radius);
* :func:`draw_means`, :func:`paired_interval`: each draw's mean error, and the 95 % interval of a mean difference
  over draws (Student's t over the draws' differences);
* :func:`radius_findings`: a sentence with numbers per data set, then the targets of ``radius.targets`` judged.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ddppm.common_task.preprocessing import PreprocessingPlan
from ddppm.common_task.ranking import student_quantile
from ddppm.common_task.raw_records import PREPROCESSING_ONLY, RawRecords, raw_records_runs
from ddppm.common_task.run import summarise
from ddppm.common_task.settings import task_options
from ddppm.methods import common_task_methods

RADII = ("fixed", "adaptive")
"""The two clipping radii compared: ``common.preprocessing.radius.adaptive`` false and true."""
POINT = ["dataset", "radius", "method", "k", "eps"]
SHOWN = 3
"""The findings name at most this many points where the private radius is worse, the largest first."""


def radius_runs(records: RawRecords, section: dict[str, Any], common: dict[str, Any], dataset: str) -> pd.DataFrame:
    """Every run of the methods of ``section["methods"]`` at every (k, ε) of the section ``radius`` on one data set,
    under the fixed and the private clipping radius: the common task's raw-records runs (``common``: its section,
    for δ, the adjacency, the iterations, the seed and the preprocessing's other keys), with ``radius``, ``n`` and
    ``d`` first. Both radii use the same seeds, so each draw is paired across them."""
    base = PreprocessingPlan.from_section(common["preprocessing"])
    registry = common_task_methods()
    methods = {name: registry[name] for name in section["methods"]}
    n, d = records.X.shape
    ranks = [k for k in section["ranks"] if k < d]
    eps = [float(e) for e in section["epsilons"]]
    limits = [float(common["delta"])] * len(eps)
    frames = []
    for radius in RADII:
        plan = replace(base, radius=replace(base.radius, adaptive=radius == "adaptive"))
        runs = raw_records_runs(records, eps, limits, ranks, int(section["runs"]), int(section["draws"]),
                                int(common["seed"]), plan, task_options(common), dataset=dataset,
                                methods=methods)  # fmt: skip
        runs.insert(0, "radius", radius)
        runs.insert(0, "d", int(d))
        runs.insert(0, "n", int(n))
        frames.append(runs)
    return pd.concat(frames, ignore_index=True)


def radius_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """The common task's summary (:func:`ddppm.common_task.run.summarise`: mean error, its 95 % interval over the
    preprocessing draws) per (data set, radius), with ``radius``, ``n`` and ``d`` first."""
    frames = []
    for (_, radius), group in runs.groupby(["dataset", "radius"], sort=False):
        summary = summarise(group.drop(columns=["radius", "n", "d"]))
        summary.insert(0, "radius", radius)
        summary.insert(0, "d", int(group["d"].iloc[0]))
        summary.insert(0, "n", int(group["n"].iloc[0]))
        frames.append(summary)
    return pd.concat(frames, ignore_index=True)


def draw_means(runs: pd.DataFrame) -> pd.Series:
    """Each preprocessing draw's mean error, indexed by (data set, radius, method, k, ε, draw): the unit the
    intervals count (the runs of one draw share its standardised rows)."""
    return runs.groupby([*POINT, "draw"], sort=True)["error"].mean()


def paired_interval(differences: np.ndarray) -> tuple[float, float, float]:
    """The mean of ``differences`` (one per draw) and its 95 % interval, Student's t over the draws (NaN bounds
    below two draws; a zero-width interval when every difference is equal)."""
    values = np.asarray(differences, float)
    mean = float(values.mean())
    if values.size < 2:
        return mean, float("nan"), float("nan")
    half = student_quantile(0.975, values.size - 1) * float(values.std(ddof=1)) / np.sqrt(values.size)
    return mean, mean - half, mean + half


def _point(summary: pd.DataFrame, dataset: str, radius: str, method: str, k: int, eps: float) -> float:
    rows = summary[(summary["dataset"] == dataset) & (summary["radius"] == radius) & (summary["method"] == method)
                   & (summary["k"] == k) & np.isclose(summary["eps"], eps)]  # fmt: skip
    return float(rows["error_mean"].iloc[0]) if len(rows) else float("nan")


def _difference(means: pd.Series, dataset: str, method: str, k: int, first: tuple[str, float],
                second: tuple[str, float]) -> tuple[float, float, float]:  # fmt: skip
    """The interval of the mean of ``second − first`` over draws matched by index, each a (radius, ε) point. Between
    radii at one ε the draws share their seeds (paired); between two ε they are independent, so the matched
    differences are still independent across draws and the interval is valid (only not narrowed by pairing)."""
    a = means.loc[(dataset, first[0], method, k, first[1])]
    b = means.loc[(dataset, second[0], method, k, second[1])]
    shared = a.index.intersection(b.index)
    return paired_interval((b.loc[shared] - a.loc[shared]).to_numpy())


def _eps_text(eps: float) -> str:
    exponent = np.log10(eps)
    return f"10^{exponent:.0f}" if eps >= 1000 and np.isclose(exponent, round(exponent)) else f"{eps:g}"


def radius_findings(summary: pd.DataFrame, runs: pd.DataFrame, section: dict[str, Any],
                    skipped: dict[str, str] | None = None) -> list[str]:  # fmt: skip
    """The study in sentences: a title line; per data set, each method's mean error at the first, the target and the
    last ε under both radii (the largest k); where the private radius is better or worse than the fixed one beyond
    the noise (paired intervals over draws); then the targets of ``radius.targets``: (a) at the last ε every
    method's adaptive error at most ``max_error`` for every k on every data set, (b) on ``targets.dataset`` at
    (``eps``, ``k``) ``method``'s adaptive error at most ``ratio`` times the fixed one, (c) on every data set the
    adaptive error does not rise significantly from one ε to the next (the interval of the mean step over draws
    does not lie wholly above 0). ``skipped``: data sets not run, with why."""
    targets = section["targets"]
    methods = [m for m in section["methods"] if m in set(summary["method"])]
    eps = sorted(float(e) for e in summary["eps"].unique())
    first, last, at = eps[0], eps[-1], float(targets["eps"])
    shown = list(dict.fromkeys([first, at, last]))
    means = draw_means(runs[~runs["method"].str.startswith(PREPROCESSING_ONLY)])
    delta = float(summary["delta_limit"].max())
    lines = [f"The clipping radius, fixed (c√d) against private, from the raw records (certified (ε, δ = {delta:g})-DP"
             f", replace-one; {', '.join(methods)}; ε = {_eps_text(first)} to {_eps_text(last)})"]  # fmt: skip
    for dataset in dict.fromkeys(summary["dataset"]):
        rows = summary[summary["dataset"] == dataset]
        k = int(rows["k"].max())
        at_eps = " / ".join(_eps_text(e) for e in shown)
        parts = []
        for method in methods:
            fixed = ", ".join(f"{_point(summary, dataset, 'fixed', method, k, e):.3f}" for e in shown)
            adaptive = ", ".join(f"{_point(summary, dataset, 'adaptive', method, k, e):.3f}" for e in shown)
            parts.append(f"{method} fixed {fixed}, adaptive {adaptive}")
        better, worse = _versus(means, dataset, methods, sorted(rows["k"].unique()), eps)
        largest = sorted(worse, key=lambda item: -item[0])[:SHOWN]
        worst = "; ".join(text for _, text in largest) + ("; …" if len(worse) > SHOWN else "")
        n, d = int(rows["n"].iloc[0]), int(rows["d"].iloc[0])
        lines.append(f"{dataset} (n = {n:,}, d = {d}), k = {k}, mean error at ε = {at_eps}: {'; '.join(parts)}. "
                     f"Adaptive against fixed, paired over draws: better at {len(better)} of {_count(means, dataset)} "
                     f"(method, k, ε) points, worse at {len(worse)}"
                     + (f" (largest: {worst})." if worse else "."))  # fmt: skip
    lines += _target_high_eps(summary, methods, last, float(targets["max_error"]))
    lines += _target_ratio(summary, means, targets)
    lines += _target_monotone(means, methods, eps)
    for dataset, why in (skipped or {}).items():
        lines.append(f"{dataset}: not run ({why}).")
    return lines


def _count(means: pd.Series, dataset: str) -> int:
    """The (method, k, ε) points of one data set."""
    index = means.index.to_frame(index=False)
    return int(len(index[index["dataset"] == dataset][["method", "k", "eps"]].drop_duplicates()))


def _versus(means: pd.Series, dataset: str, methods: list[str], ranks: list[int],
            eps: list[float]) -> tuple[list[str], list[tuple[float, str]]]:  # fmt: skip
    """The (method, k, ε) points where the adaptive radius is better (interval of adaptive − fixed wholly below 0)
    and worse (wholly above), the latter as (mean difference, text with its paired interval)."""
    better, worse = [], []
    for method in methods:
        for k in ranks:
            for e in eps:
                mean, lo, hi = _difference(means, dataset, method, int(k), ("fixed", e), ("adaptive", e))
                if hi < 0:
                    better.append(f"{method} k = {k} ε = {_eps_text(e)}")
                elif lo > 0:
                    worse.append((mean, f"{method} k = {k} ε = {_eps_text(e)} {mean:+.4f} [{lo:+.4f}, {hi:+.4f}]"))
    return better, worse


def _target_high_eps(summary: pd.DataFrame, methods: list[str], eps: float, limit: float) -> list[str]:
    """Target (a): at the last ε, every method's adaptive mean error at most ``limit`` for every k and data set."""
    rows = summary[(summary["radius"] == "adaptive") & np.isclose(summary["eps"], eps)
                   & summary["method"].isin(methods)]  # fmt: skip
    over = rows[rows["error_mean"] > limit].sort_values("error_mean", ascending=False)
    worst = rows.loc[rows["error_mean"].idxmax()]
    verdict = "met" if over.empty else "not met at " + "; ".join(
        f"{r.dataset} {r.method} k = {r.k} ({r.error_mean:.4f})" for r in over.itertuples())
    return [f"Target (a), ε = {_eps_text(eps)}, adaptive radius: every method's error ≤ {limit:g} for every k on every "
            f"data set: {verdict} (largest {worst['error_mean']:.4f}, {worst['dataset']} {worst['method']} k = "
            f"{int(worst['k'])}; {len(rows)} points)."]  # fmt: skip


def _target_ratio(summary: pd.DataFrame, means: pd.Series, targets: dict[str, Any]) -> list[str]:
    """Target (b): on ``dataset`` at (``eps``, ``k``), ``method``'s adaptive mean error at most ``ratio`` times its
    fixed one (none where that point was not run)."""
    dataset, method, k, eps, ratio = (targets["dataset"], targets["method"], int(targets["k"]), float(targets["eps"]),
                                      float(targets["ratio"]))  # fmt: skip
    fixed, adaptive = (_point(summary, dataset, r, method, k, eps) for r in RADII)
    if np.isnan(fixed) or np.isnan(adaptive):
        return [f"Target (b): {dataset} {method} k = {k} at ε = {eps:g} was not run."]
    mean, lo, hi = _difference(means, dataset, method, k, ("fixed", eps), ("adaptive", eps))
    verdict = "met" if adaptive <= ratio * fixed else "not met"
    return [f"Target (b), {dataset}, ε = {eps:g}, k = {k}, {method}: adaptive error ≤ {ratio:g} × fixed: {verdict} "
            f"(adaptive {adaptive:.3f}, fixed {fixed:.3f}, ratio {adaptive / fixed:.2f}; paired difference "
            f"{mean:+.3f} [{lo:+.3f}, {hi:+.3f}])."]  # fmt: skip


def _target_monotone(means: pd.Series, methods: list[str], eps: list[float]) -> list[str]:
    """Target (c): the adaptive error does not rise significantly from one ε to the next, on every data set, method
    and k: the 95 % interval of the mean step over draws does not lie wholly above 0."""
    index = means.index.to_frame(index=False)
    rises, steps = [], 0
    for dataset in dict.fromkeys(index["dataset"]):
        for method in methods:
            for k in sorted(index.loc[index["dataset"] == dataset, "k"].unique()):
                for low, high in zip(eps[:-1], eps[1:], strict=True):
                    mean, lo, hi = _difference(means, dataset, method, int(k), ("adaptive", low), ("adaptive", high))
                    steps += 1
                    if lo > 0:
                        rises.append(f"{dataset} {method} k = {k} ε {_eps_text(low)} → {_eps_text(high)} "
                                     f"{mean:+.3f} [{lo:+.3f}, {hi:+.3f}]")  # fmt: skip
    verdict = "met" if not rises else f"not met at {len(rises)}: " + "; ".join(rises)
    return [f"Target (c), adaptive radius: the error falls with ε within the noise (no step's 95 % interval over draws "
            f"wholly above 0) on every data set, method and k: {verdict} ({steps} steps)."]  # fmt: skip
