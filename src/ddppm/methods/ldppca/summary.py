"""Summaries of runs of the local-DP PCA family: points with bands, fitted theory rates, and findings in words.

Inputs are the per-run tables of :func:`ddppm.experiments.ldppca.run_panel` (columns in docs/ldppca.md).
:func:`summarise` groups them into points, evaluates every method's rates
(:meth:`~ddppm.methods.ldppca.task.LocalPCAMethod.rates`) in covariance model (7) and fits one constant per
(figure, panel, method, rate); :func:`findings` states the results of both figures in sentences with numbers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ddppm.methods.base import get_method
from ddppm.methods.ldppca.models import covariance_eigenvalues
from ddppm.methods.ldppca.task import RateInputs
from ddppm.methods.ldppca.theory import fit_constant

__all__ = ["POINT_KEYS", "crossing", "findings", "summarise"]


POINT_KEYS = [
    "figure", "panel", "varied", "x", "k", "sparsity", "n", "p", "eps", "delta", "sigma_mode",
    "sensitivity_assumed", "sigma", "delta_achieved", "feasible", "method", "chance",
]  # fmt: skip
RATES = ("stated", "proof")


def _quantile(q: float):
    def f(values: pd.Series) -> float:
        return float(np.quantile(values, q))

    f.__name__ = f"q{q}"
    return f


def summarise(runs: pd.DataFrame, spike: float, fit_fraction: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Points of a figure (mean error, 2.5–97.5 % band of the runs, chance level, fitted rates) and the fits.

    The rates of each method (:meth:`~ddppm.methods.ldppca.task.LocalPCAMethod.rates`) are evaluated at every
    point of covariance model (7); one constant per (figure, panel, method, rate) is fitted in log space
    (:func:`~ddppm.methods.ldppca.theory.fit_constant`) over the points with ``error_mean <= fit_fraction ×
    chance`` (all k, s and σ modes of the panel together). Columns: docs/ldppca.md (``summary``, ``theory_fit``).
    """
    runs = runs.copy()
    for column in ("admm_iterations", "closed_form", "converged"):
        runs[column] = runs[column].astype("Float64")
    grouped = runs.groupby(POINT_KEYS, dropna=False, sort=True)
    summary = grouped.agg(
        runs=("error", "size"),
        error_mean=("error", "mean"),
        error_lo=("error", _quantile(0.025)),
        error_hi=("error", _quantile(0.975)),
        rows_outside_ball=("rows_outside_ball", "sum"),
        clip_probability_bound=("clip_probability_bound", "max"),
        admm_iterations_mean=("admm_iterations", "mean"),
        closed_form_fraction=("closed_form", "mean"),
        converged_fraction=("converged", "mean"),
    ).reset_index()
    summary["error_over_chance"] = summary["error_mean"] / summary["chance"]
    summary["in_fit"] = summary["error_over_chance"] <= fit_fraction
    top, bottom = covariance_eigenvalues(summary["p"].to_numpy(float), spike)
    fits = []
    for rate in RATES:
        summary[f"rate_{rate}"] = np.nan
        summary[f"theory_{rate}"] = np.nan
    for name in summary["method"].unique():
        rows = summary["method"] == name
        part = summary[rows]
        point = RateInputs(
            n=part["n"].to_numpy(float),
            p=part["p"].to_numpy(float),
            k=part["k"].to_numpy(float),
            sparsity=part["sparsity"].fillna(part["p"]).to_numpy(float),
            sigma=part["sigma"].to_numpy(float),
            top_eigenvalue=top[rows],
            eigengap=(top - bottom)[rows],
            trace=(part["k"] * top[rows] + (part["p"] - part["k"]) * bottom[rows]).to_numpy(float),
        )
        for rate, shape in get_method(name).rates(point).items():
            summary.loc[rows, f"rate_{rate}"] = shape
    for (figure, panel, varied, name), part in summary.groupby(["figure", "panel", "varied", "method"]):
        for rate in RATES:
            used = part[part["in_fit"]]
            constant, rms, count = fit_constant(used["error_mean"], used[f"rate_{rate}"])
            summary.loc[part.index, f"theory_{rate}"] = constant * part[f"rate_{rate}"]
            fits.append(
                {
                    "figure": figure, "panel": int(panel), "varied": varied, "method": name,
                    "theorem": get_method(name).theorem, "rate": rate, "constant": constant,
                    "log_rms_residual": rms, "points": int(count),
                    "slope_data": _loglog_slope(used, varied, "error_mean"),
                    "slope_rate": _loglog_slope(used, varied, f"rate_{rate}"),
                }
            )  # fmt: skip
    return summary, pd.DataFrame(fits)


def _loglog_slope(points: pd.DataFrame, varied: str, column: str) -> float:
    """Least-squares slope of log(column) against log(x) within each curve (curves centred separately)."""
    if len(points) < 2:
        return float("nan")
    keys = [c for c in ("k", "sparsity", "sigma_mode", "n", "p", "eps") if c != varied]
    xs, ys = [], []
    for _, curve in points.groupby(keys, dropna=False):
        if len(curve) >= 2:
            lx, ly = np.log(curve["x"].to_numpy(float)), np.log(curve[column].to_numpy(float))
            xs.append(lx - lx.mean())
            ys.append(ly - ly.mean())
    if not xs:
        return float("nan")
    x, y = np.concatenate(xs), np.concatenate(ys)
    return float(np.sum(x * y) / np.sum(x * x)) if np.sum(x * x) > 0 else float("nan")


def crossing(x: np.ndarray, ratio: np.ndarray, level: float = 0.5) -> float:
    """First x at which ``ratio`` (error over chance) falls to ``level``, interpolated linearly in log–log
    between the bracketing points; ``x[0]`` if it starts below, NaN if it never gets there."""
    x, ratio = np.asarray(x, dtype=float), np.asarray(ratio, dtype=float)
    order = np.argsort(x)
    x, ratio = x[order], ratio[order]
    below = np.flatnonzero(ratio <= level)
    if below.size == 0:
        return float("nan")
    j = int(below[0])
    if j == 0:
        return float(x[0])
    lx, lr = np.log(x[j - 1 : j + 1]), np.log(ratio[j - 1 : j + 1])
    return float(np.exp(lx[0] + (np.log(level) - lr[0]) * (lx[1] - lx[0]) / (lr[1] - lr[0])))


def _sci(value: float) -> str:
    """``3.1e10`` for large values, plain digits below 1e4."""
    if not np.isfinite(value):
        return "beyond the grid"
    if value >= 1e4:
        exponent = int(np.floor(np.log10(value)))
        return f"{value / 10**exponent:.1f}e{exponent}"
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"


def _which_is_better(better: list[int], worse: list[int]) -> str:
    """ "Algorithm 2 is the better one for s ∈ {…} and the worse one for s ∈ {…}", without empty sets."""

    def sparsities(values: list[int]) -> str:
        return f"s = {values[0]}" if len(values) == 1 else "s ∈ {" + ", ".join(map(str, values)) + "}"

    if better and worse:
        return f"Algorithm 2 is the better one for {sparsities(better)} and the worse one for {sparsities(worse)}"
    if better:
        return f"Algorithm 2 is the better one at every sparsity ({sparsities(better)})"
    if worse:
        return f"Algorithm 2 is the worse one at every sparsity ({sparsities(worse)})"
    return "the two tie"


def _label(method: str) -> str:
    return "Algorithm 1" if method == "ldppca_gaussian" else "Algorithm 2" if method == "ldppca_fantope" else method


def _groups_text(part: pd.DataFrame) -> str:
    ks = sorted(part["k"].unique())
    ss = sorted(part["sparsity"].dropna().unique())
    text = f"k ∈ {{{', '.join(str(int(k)) for k in ks)}}}"
    return text + (f", s ∈ {{{', '.join(str(int(s)) for s in ss)}}}" if ss else "")


def findings(summary: pd.DataFrame, fits: pd.DataFrame, paper_points: dict[str, tuple[int, int, float]]) -> list[str]:
    """The results in sentences with numbers: a title, then one finding per line (for the report's landing page).

    ``summary`` and ``fits`` hold both figures; ``paper_points`` gives each figure's own (n, p, ε).
    """
    lines = ["Local-DP PCA (Wang & Xu, Theoretical Computer Science 2020): synthetic Figs. 3 and 4"]
    reference = "paper"
    for figure in sorted(summary["figure"].unique()):
        part = summary[summary["figure"] == figure]
        first = str(part["method"].iloc[0])
        n0, p0, e0 = paper_points[figure]
        at = part[(part["n"] == n0) & (part["p"] == p0) & np.isclose(part["eps"], e0)]
        at = at.drop_duplicates(["k", "sparsity", "sigma_mode", "method"])
        if len(at):
            per_method = "; ".join(
                f"{_label(m)} {100 * g['error_over_chance'].min():.0f}–{100 * g['error_over_chance'].max():.0f} %"
                for m, g in at.groupby("method", sort=False)
            )
            lines.append(
                f"{figure}: at the paper's setting (n = {n0}, p = {p0}, ε = {e0:g}, δ = {at['delta'].iloc[0]:g}) the "
                f"mean error is {per_method} of the chance level sqrt(2k − 2k²/p) for {_groups_text(at)} and every "
                "σ calibration: the estimates carry no information about the subspace."
            )
            calib = at.drop_duplicates("sigma_mode").set_index("sigma_mode")
            if reference in calib.index:
                parts = [
                    f"{mode} σ = {row['sigma']:.3g} ({row['sigma'] / calib.loc[reference, 'sigma']:.2f}× the "
                    f"printed σ; achieved δ = {row['delta_achieved']:.2g})"
                    for mode, row in calib.iterrows()
                ]
                lines.append(
                    f"{figure}: at ε = {e0:g} with the true sensitivity √2 of the upper triangle of x xᵀ: "
                    + "; ".join(parts) + "."
                )  # fmt: skip
        sweep = part[part["varied"] == "n"]
        for method in sweep["method"].unique():
            curves = sweep[sweep["method"] == method]
            values: dict[str, list[float]] = {}
            for (mode, _, _), curve in curves.groupby(["sigma_mode", "k", "sparsity"], dropna=False, sort=False):
                values.setdefault(mode, []).append(crossing(curve["n"], curve["error_over_chance"]))
            if figure == "fig4" or curves["sparsity"].notna().any():
                ref = curves[curves["sigma_mode"] == (reference if reference in values else next(iter(values)))]
                each = [
                    f"{_sci(crossing(c['n'], c['error_over_chance']))} (s = {int(s)})"
                    for s, c in ref.groupby("sparsity", sort=True)
                ]
                lines.append(
                    f"{figure}: {_label(method)} reaches half the chance level (p = {int(curves['p'].iloc[0])}, "
                    f"ε = {curves['eps'].iloc[0]:g}, {ref['sigma_mode'].iloc[0]} σ) at n ≈ " + ", ".join(each) + "."
                )
                continue
            text = ", ".join(f"{_sci(float(np.exp(np.nanmean(np.log(v)))))} ({mode} σ)" for mode, v in values.items())
            ratio = ""
            if reference in values and "corrected" in values:
                r = np.exp(np.nanmean(np.log(values["corrected"])) - np.nanmean(np.log(values[reference])))
                ratio = f"; the classic σ with Δ = √2 needs {r:.2f}× the users of the printed σ"
            lines.append(
                f"{figure}: {_label(method)} reaches half the chance level (p = {int(curves['p'].iloc[0])}, "
                f"ε = {curves['eps'].iloc[0]:g}, geometric mean over k) at n ≈ {text}{ratio}."
            )
        if len(sweep):  # compare the methods where the first one is halfway between chance and zero
            ref_curves = sweep[(sweep["method"] == first) & (sweep["sigma_mode"] == sweep["sigma_mode"].iloc[0])]
            half = [crossing(c["n"], c["error_over_chance"]) for _, c in ref_curves.groupby(["k", "sparsity"])]
            target = np.exp(np.nanmean(np.log(half))) if np.isfinite(half).any() else sweep["n"].max()
            grid = np.unique(sweep["n"].to_numpy(float))
            last = sweep[sweep["n"] == grid[np.argmin(np.abs(np.log(grid) - np.log(target)))]]
        else:
            last = sweep
        if last["method"].nunique() > 1 and last["sparsity"].notna().any():
            ref = last[last["sigma_mode"] == reference] if reference in set(last["sigma_mode"]) else last
            pivot = ref.pivot_table(index="sparsity", columns="method", values="error_over_chance")
            cols = list(pivot.columns)
            each = ", ".join(
                f"s = {int(s)}: {' vs '.join(f'{100 * row[c]:.0f} %' for c in cols)}" for s, row in pivot.iterrows()
            )
            verdict = ""
            if {"ldppca_fantope", "ldppca_gaussian"} <= set(cols):
                better = [int(s) for s, row in pivot.iterrows() if row["ldppca_fantope"] < row["ldppca_gaussian"]]
                worse = [int(s) for s, row in pivot.iterrows() if row["ldppca_fantope"] > row["ldppca_gaussian"]]
                verdict = "; " + _which_is_better(better, worse)
            lines.append(
                f"{figure}: at n = {_sci(float(last['n'].iloc[0]))} the error over chance is "
                f"({' vs '.join(_label(c) for c in cols)}) {each}{verdict}."
            )
        stated = fits[(fits["figure"] == figure) & (fits["method"] == first) & (fits["rate"] == "stated")]
        for _, fit in stated.iterrows():
            if fit["points"] == 0 or not np.isfinite(fit["slope_data"]):
                continue  # no curve has two points below the fit threshold
            proof = fits[
                (fits["figure"] == figure) & (fits["panel"] == fit["panel"]) & (fits["method"] == first)
                & (fits["rate"] == "proof")
            ].iloc[0]  # fmt: skip
            pan = part[part["panel"] == fit["panel"]]
            fixed = ", ".join(
                f"{key.replace('eps', 'ε')} = {_sci(float(pan[key].iloc[0]))}" for key in ("n", "p", "eps")
                if key != fit["varied"]
            )  # fmt: skip
            lines.append(
                f"{figure}: below half the chance level, log error against log {fit['varied'].replace('eps', 'ε')} "
                f"({fixed}) has slope {fit['slope_data']:+.2f}; {fit['theorem']} as printed predicts "
                f"{fit['slope_rate']:+.2f} (log-RMS misfit {fit['log_rms_residual']:.2f}), its proof "
                f"{proof['slope_rate']:+.2f} (misfit {proof['log_rms_residual']:.2f})."
            )
    outside = int(summary["rows_outside_ball"].sum())
    bound = float(summary["clip_probability_bound"].max())
    lines.append(
        f"Unit ball: {outside} drawn rows fell outside ||x|| ≤ 1 and were enforced; the Wishart-drawn blocks differ "
        f"from rows with the ball enforced with probability at most {bound:.1g}."
    )
    return lines
