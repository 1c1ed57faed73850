"""The scale studies' figures (:mod:`ddppm.studies`): error against m, against the network, against c.

Every method keeps its colour from the common task's palette order; a gossip method is drawn once per topology
(solid ring, dashed other), the exact-sum methods once (the topology does not change them), so no curve hides
another. Bands are 95 % confidence intervals of the mean.
"""

from __future__ import annotations

from typing import Any

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import NullFormatter

from ddppm.plotting.common_task import ERROR_LABEL
from ddppm.plotting.style import _RC, _figure, _legend_below, band_mean_label
from ddppm.studies.views import VIEW_KEYS

TOPOLOGY_LINES = ("-", "--", ":", "-.")


def _colours(summary: pd.DataFrame, styles: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Each method's own colour from the registry, the same as in every other figure."""
    return {name: styles[name]["color"] for name in dict.fromkeys(summary["method"])}


def _band(ax: Any, x: np.ndarray, g: pd.DataFrame, colour: str, **style: Any) -> Any:
    (line,) = ax.plot(x, g["error_mean"].to_numpy(float), color=colour, **{"ms": 4, **style})
    ax.fill_between(x, g["error_ci_lo"].to_numpy(float), g["error_ci_hi"].to_numpy(float), color=colour,
                    alpha=0.18, linewidth=0)  # fmt: skip
    return line


def _reference_band(ax: Any, row: pd.Series, colour: str) -> Any:
    """A method the study point does not change (it sums exactly), drawn across the panel: its mean error as a
    dotted line over its 95 % interval."""
    ax.axhspan(row["error_ci_lo"], row["error_ci_hi"], color=colour, alpha=0.12, linewidth=0)
    return ax.axhline(row["error_mean"], color=colour, linestyle=":", linewidth=1.2)


def _log_error_axis(ax: Any, summary: pd.DataFrame) -> None:
    """A log error axis from just under the smallest interval to just over the chance level (errors span
    0.005–1: on a linear axis the good methods would sit on top of each other)."""
    ax.set_yscale("log")
    ax.set_ylim(max(1e-3, 0.7 * float(summary["error_ci_lo"].clip(lower=1e-4).min())), 1.25)
    ax.set_ylabel(ERROR_LABEL + " (log)")


def agents_figure(summary: pd.DataFrame, styles: dict[str, dict[str, Any]], title: str = "") -> Figure:
    """Rows: sizing (data size fixed, rows per agent fixed); columns: ε. Error against m (log₂ axis)."""
    colours = _colours(summary, styles)
    sizings, eps_grid = list(dict.fromkeys(summary["sizing"])), sorted(set(summary["eps"]))
    topologies = list(dict.fromkeys(summary["topology"]))
    chance = float(summary["chance_error"].iloc[0])
    with mpl.rc_context(_RC):
        fig = _figure((max(9.5, 4.3 * len(eps_grid)), 3.3 * len(sizings) + 1.8))
        axes = np.atleast_2d(fig.subplots(len(sizings), len(eps_grid), squeeze=False, sharey=True))
        handles: dict[str, Any] = {}
        for r, sizing in enumerate(sizings):
            for c, eps in enumerate(eps_grid):
                ax = axes[r, c]
                panel = summary[(summary["sizing"] == sizing) & (summary["eps"] == eps)]
                series = [(name, rows, t_idx, topology) for name, rows in panel.groupby("method", sort=False)
                          for t_idx, topology in enumerate(topologies if rows["trust_model"].iloc[0] == "gossip"
                                                           else topologies[:1])]  # fmt: skip
                for i, (name, rows, t_idx, topology) in enumerate(series):
                    gossip = rows["trust_model"].iloc[0] == "gossip"
                    searched = rows["privacy_column"].iloc[0] == "searched"  # δ at least: hollow markers
                    g = rows[rows["topology"] == topology].sort_values("m")
                    if not np.isfinite(g["error_mean"].to_numpy(float)).any():  # nothing drawn: no legend entry
                        continue
                    label = styles[name]["label"] + (f", {topology.replace('_', ' ')}" if gossip else "")
                    label += " (searched δ: at least; only where its accountant follows)" if searched else ""
                    dodge = 2 ** (0.025 * (i - (len(series) - 1) / 2))  # side by side: no curve hides another
                    handles[label] = _band(ax, g["m"].to_numpy(float) * dodge, g, colours[name],
                                           marker=styles[name].get("marker", "o"),
                                           linestyle=TOPOLOGY_LINES[t_idx % 4] if gossip else ":",
                                           **({"mfc": "none", "ms": 7} if searched else {}))  # fmt: skip
                ax.axhline(chance, color="0.4", linestyle="--", linewidth=1)
                ax.set_xscale("log", base=2)
                ms = sorted(set(panel["m"]))
                ax.set_xticks(ms, [str(m) for m in ms])
                _log_error_axis(ax, summary)
                ax.set_title(f"{sizing.replace('_', ' ')}, ε = {eps:g}", fontsize=9)
                ax.set_xlabel("agents m")
                if c > 0:
                    ax.set_ylabel("")
        handles["chance level (random k-subspace)"] = Line2D([], [], color="0.4", linestyle="--")
        # long labels (method, topology, "searched δ" note): two columns only where the figure is wide enough
        _finish(fig, handles, title, ncol=2 if len(eps_grid) >= 3 else 1, band=True)
    return fig


def _finish(fig: Figure, handles: dict[str, Any], title: str, ncol: int, band: bool | str = False) -> None:
    """The title and the shared legend below the panels, with the entry saying what the bands are where bands are
    drawn (``band``: True for the standard entry, or the entry's own text)."""
    if band:
        handles[band if isinstance(band, str) else band_mean_label()] = Patch(facecolor="0.5", alpha=0.3)
    if title:
        fig.suptitle(title, fontsize=10)
    _legend_below(fig, handles, ncol=ncol)


def topology_figure(summary: pd.DataFrame, styles: dict[str, dict[str, Any]], title: str = "") -> Figure:
    """Left: each gossip method's error against 1 − λ₂(W) (the spectral gap, log axis), one point per topology,
    with the exact-sum methods as horizontal bands. Right: Theorem 3's consensus term per topology (log axis)."""
    colours = _colours(summary, styles)
    gossip = summary[summary["trust_model"] == "gossip"]
    exact = summary[summary["trust_model"] != "gossip"]
    with mpl.rc_context(_RC):
        fig = _figure((11.0, 5.6))
        left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
        handles: dict[str, Any] = {}
        for name, rows in gossip.groupby("method", sort=False):
            rows = rows.sort_values("lambda2")
            gap = 1 - rows["lambda2"].to_numpy(float)
            y = rows["error_mean"].to_numpy(float)
            err = np.vstack([y - rows["error_ci_lo"].to_numpy(float), rows["error_ci_hi"].to_numpy(float) - y])
            handles[styles[name]["label"]] = left.errorbar(gap, y, yerr=err, color=colours[name], marker="o",
                                                           linestyle="-", capsize=3)  # fmt: skip
            for i, (g, e, topology) in enumerate(zip(gap, y, rows["topology"], strict=True)):
                offset = (4, 6 if i % 2 == 0 else -12)  # alternate above and below: no label on another
                left.annotate(topology.replace("_", " "), (g, e), textcoords="offset points", xytext=offset, fontsize=7)
        for name, rows in exact.groupby("method", sort=False):
            handles[styles[name]["label"] + " (exact sums)"] = _reference_band(left, rows.iloc[0], colours[name])
        left.set_xscale("log")
        left.set_xlabel("spectral gap 1 − λ₂(W) (log)")
        _log_error_axis(left, summary)
        left.set_title(f"error, m = {int(summary['m'].iloc[0])}, c = {int(summary['c'].iloc[0])}, "
                       f"ε = {float(summary['eps'].iloc[0]):g}", fontsize=9)  # fmt: skip
        terms = summary.groupby("topology", sort=False)[["consensus_term", "lambda2"]].first().sort_values("lambda2")
        values = terms["consensus_term"].to_numpy(float)
        positive = values[values > 0]
        floor = positive.min() / 10 if positive.size else 1e-3
        right.barh(range(len(terms)), np.where(values > 0, values, np.nan), left=floor, color="0.55")
        for i, value in enumerate(values):  # λ₂ = 0 (complete graph): one round averages exactly
            if value <= 0:
                right.text(floor * 1.5, i, "0 (exact averaging)", va="center", fontsize=8)
        right.set_yticks(range(len(terms)), [t.replace("_", " ") for t in terms.index])
        right.set_xscale("log")
        right.xaxis.set_minor_formatter(NullFormatter())  # the span is over a decade: minor labels overprinted
        right.set_xlim(left=floor)
        right.set_ylim(-0.6, len(terms) - 0.4)
        right.set_xlabel("Theorem 3 consensus term (log)")
        right.set_title("2 n_i m λ₂(W)^c / (λ₁ − λ₂): the bound's network part", fontsize=9)
        bars = "error bars and shaded bands: 95 % confidence interval of the mean (not the runs' spread)"
        _finish(fig, handles, title, ncol=1, band=bars if len(exact) or len(gossip) else False)
    return fig


def consensus_figure(summary: pd.DataFrame, styles: dict[str, dict[str, Any]], title: str = "") -> Figure:
    """Left: error against c (log axis) for the gossip methods, exact-sum methods as bands, the Theorem 3 choice
    as a vertical line. Right: Theorem 3's consensus term against c, with the target it was chosen for."""
    colours = _colours(summary, styles)
    c_star = int(summary["c_theorem3"].iloc[0])
    with mpl.rc_context(_RC):
        fig = _figure((11.0, 5.4))
        left, right = fig.subplots(1, 2)
        handles: dict[str, Any] = {}
        for name, rows in summary.groupby("method", sort=False):
            if rows["trust_model"].iloc[0] == "gossip":
                g = rows.sort_values("c")
                handles[styles[name]["label"]] = _band(left, g["c"].to_numpy(float), g, colours[name], marker="o")
            else:
                handles[styles[name]["label"] + " (exact sums)"] = _reference_band(left, rows.iloc[0], colours[name])
        for ax in (left, right):
            ax.axvline(c_star, color="0.3", linestyle="-.", linewidth=1)
            ax.set_xscale("log")
            ax.set_xlabel("gossip rounds per iteration c (log)")
        handles[f"Theorem 3 choice of c ({c_star})"] = Line2D([], [], color="0.3", linestyle="-.")
        _log_error_axis(left, summary)
        left.set_title(f"error ({summary['topology'].iloc[0]}, m = {int(summary['m'].iloc[0])}, "
                       f"ε = {float(summary['eps'].iloc[0]):g}; δ does not depend on c)", fontsize=9)  # fmt: skip
        terms = summary.groupby("c")["consensus_term"].first()
        right.plot(terms.index, terms.to_numpy(float), color="0.3", marker="o", ms=4)
        right.set_yscale("log")
        right.set_ylabel("Theorem 3 consensus term (log)")
        right.set_title("the bound's network part against c", fontsize=9)
        _finish(fig, handles, title, ncol=1, band=True)
    return fig


def rank_figure(summary: pd.DataFrame, styles: dict[str, dict[str, Any]], title: str = "") -> Figure:
    """Error against k for every method (log error axis), with each k's chance level √(1 − k/d)."""
    colours = _colours(summary, styles)
    names = list(dict.fromkeys(summary["method"]))
    with mpl.rc_context(_RC):
        fig = _figure((9.5, 6.0))
        ax = fig.subplots()
        handles: dict[str, Any] = {}
        for i, name in enumerate(names):
            g = summary[summary["method"] == name].sort_values("k")
            x = g["k"].to_numpy(float) + 0.04 * (i - (len(names) - 1) / 2)  # side by side: none hides another
            handles[styles[name]["label"]] = _band(ax, x, g, colours[name], marker=styles[name].get("marker", "o"),
                                                   linestyle=styles[name].get("linestyle", "-"))  # fmt: skip
        chance = summary.groupby("k")["chance_error"].first()
        handles["chance level √(1 − k/d)"] = ax.plot(chance.index, chance.to_numpy(float), color="0.4",
                                                     linestyle="--", linewidth=1)[0]  # fmt: skip
        ks = sorted(set(summary["k"]))
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.set_xlabel("principal directions k")
        _log_error_axis(ax, summary)
        ax.set_title(f"m = {int(summary['m'].iloc[0])} ({summary['topology'].iloc[0]}), "
                     f"ε = {float(summary['eps'].iloc[0]):g}", fontsize=9)  # fmt: skip
        _finish(fig, handles, title, ncol=1, band=True)
    return fig


VIEW_COLOURS = {"paper": "#1f77b4", "network": "#d62728"}


def views_figure(summary: pd.DataFrame, styles: dict[str, dict[str, Any]], title: str = "") -> Figure:
    """One panel per data set: the journal D-DP-PM's δ (two-sided, log axis) against ε under each view (colour)
    and accountant (line style and marker), the same parameters throughout."""

    datasets = list(dict.fromkeys(summary["dataset"]))
    accountants = list(dict.fromkeys(zip(*(summary[k] for k in VIEW_KEYS[2:]), strict=True)))
    markers, lines = ("o", "s", "^", "D", "v", "P"), ("-", "--", ":", "-.")
    with mpl.rc_context(_RC):
        cols = min(2, len(datasets))
        rows = (len(datasets) + cols - 1) // cols
        fig = _figure((5.2 * cols + 0.8, 3.6 * rows + 2.0))
        axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False).ravel())
        handles: dict[str, Any] = {}
        low = 1e-12  # a δ under 10⁻¹² is negligible here: drawn on the bottom edge, so the top is readable
        for ax, dataset in zip(axes, datasets, strict=False):
            panel = summary[summary["dataset"] == dataset]
            for (view, *accountant), g in panel.groupby(VIEW_KEYS[1:], sort=False):
                a_idx = accountants.index(tuple(accountant))
                g = g.sort_values("eps")
                x = g["eps"].to_numpy(float) * 10 ** (0.045 * (a_idx - (len(accountants) - 1) / 2))  # side by side
                label = f"{view} view: {', '.join(accountant)}"
                (handles[label],) = ax.plot(x, g["delta"].clip(lower=low), color=VIEW_COLOURS.get(view, "0.3"),
                                            linestyle=lines[a_idx % 4], marker=markers[a_idx % 6], ms=4)  # fmt: skip
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_ylim(low, 2.0)
            ax.set_xlabel("ε")
            ax.set_ylabel("δ (two-sided, Definition 2; log; < 1e-12 on the edge)")
            ax.set_title(f"{dataset}, T = {int(panel['T'].iloc[0])}", fontsize=9)
        for ax in axes[len(datasets) :]:
            ax.set_visible(False)
        _finish(fig, handles, title, ncol=2)
    return fig


def samples_figure(summary: pd.DataFrame, styles: dict[str, dict[str, Any]], title: str = "") -> Figure:
    """Population error against n (log–log), one panel per (ε, d), with the 95 % interval bands and the dashed
    line of the non-trivial limit the rate fits use."""
    from ddppm.studies.samples import NONTRIVIAL

    colours = _colours(summary, styles)
    ds, epsilons = sorted(set(summary["d"])), sorted(set(summary["eps"]))
    names = list(dict.fromkeys(summary["method"]))
    with mpl.rc_context(_RC):
        fig = _figure((3.3 * len(ds) + 1.0, 3.0 * len(epsilons) + 1.6))
        axes = np.atleast_2d(fig.subplots(len(epsilons), len(ds), sharex=True, sharey=True, squeeze=False))
        handles: dict[str, Any] = {}
        low = max(1e-3, 0.7 * float(summary["population_error_ci_lo"].clip(lower=1e-4).min()))
        for row, eps in enumerate(epsilons):
            for col, d in enumerate(ds):
                ax = axes[row, col]
                for i, name in enumerate(names):
                    g = summary[(summary["method"] == name) & (summary["eps"] == eps) & (summary["d"] == d)]
                    g = g.sort_values("n")
                    x = g["n"].to_numpy(float) * (1 + 0.03 * (i - (len(names) - 1) / 2))  # side by side
                    (line,) = ax.plot(x, g["population_error_mean"].to_numpy(float), color=colours[name], ms=4,
                                      marker=styles[name].get("marker", "o"))  # fmt: skip
                    ax.fill_between(x, g["population_error_ci_lo"].to_numpy(float),
                                    g["population_error_ci_hi"].to_numpy(float), color=colours[name], alpha=0.18,
                                    linewidth=0)  # fmt: skip
                    handles[styles[name]["label"]] = line
                handles[f"non-trivial limit of the rate fits ({NONTRIVIAL:g})"] = ax.axhline(
                    NONTRIVIAL, color="0.4", linestyle="--", linewidth=1)
                ax.set_xscale("log")
                ax.set_yscale("log")
                ax.set_ylim(low, 1.25)
                ax.set_title(f"d = {d}, ε = {eps:g}", fontsize=9)
                if row == len(epsilons) - 1:
                    ax.set_xlabel("rows n (log)")
        fig.supylabel("error ‖v̂v̂ᵀ − vvᵀ‖_F/√2 against the population's top direction v (log)", fontsize=9)
        _finish(fig, handles, title, ncol=2, band=True)
    return fig


FIGURES = {
    "agents": agents_figure,
    "topology": topology_figure,
    "consensus": consensus_figure,
    "rank": rank_figure,
    "views": views_figure,
    "samples": samples_figure,
}
