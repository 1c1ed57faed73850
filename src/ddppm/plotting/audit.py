"""The privacy audit's figure (experiment ``audit``, docs/audit.md): the measured lower bound on ε against the claim.

Two parts, each readable alone:

* **the methods** (rows without a data set: the common task's certified methods, the mutants, the releases): one
  panel per claimed ε of ``audit.epsilons``, a bar per entry, red where the bound exceeds the claim;
* **the D-DP-PM variants at their calibrated points** (rows with a data set): the bound against the claimed ε on a
  log axis, one marker per (variant, threat model) and a colour per data set, filled where violated, with the
  diagonal (above it a claim is refuted) and the ceiling no bound can pass at the draws used.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure, SubFigure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

VIOLATED, CONSISTENT = "#d62728", "#4c72b0"
AUDITED = ("consistent", "violated")
_MARKERS = ("o", "s", "^", "D", "v", "P")
_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf")


def _method_panels(fig: SubFigure, rows: pd.DataFrame, delta: float) -> None:
    """One panel per claimed ε: each entry's bound as a bar, the claim as a dotted line; mutants after methods."""
    mutant = rows["method"].str.contains("/")
    order = sorted(rows.loc[~mutant, "method"].unique()) + sorted(rows.loc[mutant, "method"].unique())
    claims = sorted(rows["eps"].unique())
    axes = fig.subplots(1, len(claims), sharey=True, squeeze=False)[0]
    top = float(max(rows["eps"].max(), rows["eps_lower"].max())) * 1.08
    for ax, eps in zip(axes, claims, strict=True):
        at = rows[np.isclose(rows["eps"], eps)].set_index("method")
        for y, entry in enumerate(order):
            for row in at.loc[[entry]].itertuples() if entry in at.index else []:
                colour = VIOLATED if row.verdict == "violated" else CONSISTENT
                ax.barh(y, row.eps_lower, height=0.7, color=colour, alpha=0.85)
                ax.plot(row.eps_lower, y, marker="|", ms=9, mew=1.5, color=colour)  # a bound of 0 stays visible
        ax.axvline(eps, color="black", ls=":", lw=1.2)
        ax.set(xlim=(0, top), title=f"claimed ε = {eps:g}", xlabel="ε lower bound (95 %)")
    axes[0].set_yticks(range(len(order)), order, fontsize=7)
    axes[0].invert_yaxis()
    fig.suptitle(f"The methods of the common task on their witness pairs (δ = {delta:g}, "
                 f"≥ {int(rows['draws'].min()):,} counted draws per side; names with '/' are deliberately broken "
                 "mutants,\n'(release)' is what a fit of raw records releases)", fontsize=9)  # fmt: skip
    handles = [Patch(color=CONSISTENT, label="consistent (bound ≤ claim: evidence, not proof)"),
               Patch(color=VIOLATED, label="violated (bound > claim)"),
               Line2D([], [], color="black", ls=":", label="the claimed ε")]  # fmt: skip
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=7, frameon=False)


def _points_panel(fig: SubFigure, rows: pd.DataFrame, infeasible: int) -> None:
    """The D-DP-PM points: bound against claimed ε (log), marker per variant and threat model, colour per data
    set, filled where violated; the diagonal and the draws' ceiling."""
    ax: Axes = fig.subplots()
    variants, datasets = sorted(rows["method"].unique()), sorted(rows["dataset"].unique())
    marker = dict(zip(variants, _MARKERS, strict=False))
    colour = dict(zip(datasets, _COLOURS, strict=False))
    series = list(rows.groupby(["method", "dataset"], sort=True))
    for k, ((variant, dataset), at) in enumerate(series):
        # A small shift per series keeps markers at one ε apart (every entry visible).
        x = at["eps"].to_numpy(float) * 1.045 ** (k - (len(series) - 1) / 2)
        for violated in (False, True):
            sel = (at["verdict"] == "violated").to_numpy() == violated
            face = colour[dataset] if violated else "white"
            ax.scatter(x[sel], at["eps_lower"].to_numpy(float)[sel], marker=marker[variant], s=42, zorder=3,
                       facecolors=face, edgecolors=colour[dataset], linewidths=1.4)  # fmt: skip
    low, high = rows["eps"].min() / 1.5, rows["eps"].max() * 1.5
    grid = np.geomspace(low, high, 200)
    ceiling = float(rows["bound_ceiling"].max())
    ax.fill_between(grid, grid, ceiling * 1.15, where=grid < ceiling * 1.15, color=VIOLATED, alpha=0.07, lw=0)
    ax.plot(grid, grid, color="black", ls=":", lw=1.2)
    ax.axhline(ceiling, color="grey", ls="--", lw=1.0)
    ax.set(xscale="log", xlim=(low, high), ylim=(-0.25, ceiling * 1.15), xlabel="claimed ε (log scale)",
           ylabel="ε lower bound (95 %)")  # fmt: skip
    ticks = sorted(rows["eps"].unique())
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks], fontsize=7)
    ax.minorticks_off()
    draws = int(rows["draws"].min())
    fig.suptitle("The D-DP-PM variants at their calibrated points: the observer's whole memory (gossip), each "
                 f"point at its claimed δ (≥ {draws:,} counted draws per side;\nnot shown: {infeasible} points where "
                 "no parameters met the δ limit, nothing to attack)", fontsize=9)  # fmt: skip
    handles = [Line2D([], [], ls="", marker=marker[v], color="black", mfc="white", label=v) for v in variants]
    handles += [Patch(color=colour[d], label=d) for d in datasets]
    handles += [Line2D([], [], ls="", marker="o", color="grey", mfc="grey", label="filled: violated"),
                Line2D([], [], ls="", marker="o", color="grey", mfc="white", label="open: consistent"),
                Line2D([], [], color="black", ls=":", label="claimed ε (above: refuted)"),
                Line2D([], [], color="grey", ls="--", label=f"the most {draws:,} draws can show")]  # fmt: skip
    fig.legend(handles=handles, loc="outside right center", fontsize=7, frameon=False)


def audit_figure(table: pd.DataFrame, delta: float) -> Figure:
    """The audit's figure (module docstring): the methods' panels above, the D-DP-PM points below (each part only
    where the table has its rows)."""
    audited = table[table["verdict"].isin(AUDITED)]
    has_dataset = audited["dataset"].notna() if "dataset" in audited else pd.Series(False, index=audited.index)
    methods, points = audited[~has_dataset], audited[has_dataset]
    infeasible = int((table["verdict"] == "infeasible").sum())
    parts = [part for part in (methods, points) if len(part)]
    heights = [0.24 * methods["method"].nunique() + 1.9] if len(methods) else []
    heights += [4.2] if len(points) else []
    claims = methods["eps"].nunique() if len(methods) else 1
    fig = Figure(figsize=(max(3.0 * claims + 2.2, 10.5), sum(heights) + 0.6), layout="constrained")
    subfigs = fig.subfigures(len(parts), 1, height_ratios=heights, squeeze=False)[:, 0]
    sub = iter(subfigs)
    if len(methods):
        _method_panels(next(sub), methods, delta)
    if len(points):
        _points_panel(next(sub), points, infeasible)
    fig.suptitle("Privacy audit: the lower bound on ε measured on each method as implemented, against its claim "
                 "(evidence, not proof)", fontsize=10, fontweight="bold")  # fmt: skip
    return fig
