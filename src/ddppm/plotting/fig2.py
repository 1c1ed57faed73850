"""Fig. 2 of the journal paper: error against ε, one panel per data set, every method and threat model."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, NullLocator

from ddppm.plotting.style import (
    _RC,
    BAND_LABEL,
    CHANCE_LABEL,
    ERROR_LABEL,
    INFEASIBLE_COLOR,
    INFEASIBLE_LABEL,
    OVER_BUDGET_LABEL,
    _figure,
    _fmt_delta,
    _legend_below,
    _positive,
    _series,
    _set_log_eps_axis,
    _sorted_unique_eps,
    _title_from,
    panel_grid,
    series_style,
)


def _is_reference(g: pd.DataFrame) -> bool:
    """A curve without privacy (``accounting == "none"``, e.g. noise-free D-PM)."""
    return "accounting" in g and len(g) > 0 and bool((g["accounting"] == "none").all())


def _pin_references_below(ax, references) -> None:
    """A no-privacy reference far below the private methods is drawn on the bottom edge with its value
    written beside it, so it stays visible without squeezing the range where the methods differ."""
    low = ax.get_ylim()[0]
    for x, y, st in references:
        below = np.isfinite(y) & (y < low)
        if below.any():
            edge = low * 1.12
            ax.plot(x[below], np.full(below.sum(), edge), linestyle="none", marker="v", color=st["color"], zorder=4)
            ax.annotate(
                f"{st['label']}: error {np.nanmax(y[below]):.0e} or less, below the axis",
                xy=(0.02, 0.02),
                xycoords="axes fraction",
                fontsize=8,
                color=st["color"],
            )


def plot_fig2_panel(
    ax: Axes,
    summary_ds: pd.DataFrame,
    title: str | None = None,
    n: int | None = None,
    legend: bool = False,
) -> dict[str, Any]:
    """Draw one Fig. 2 panel: error (log y) against ε (log x) for every method and threat model of a data set.

    Each (method, threat model) is a line through ``error_mean`` with a shaded band ``error_lo..error_hi``
    (the middle 95 % of runs). Points whose achieved δ exceeds the limit (``feasible`` False with errors)
    get a marker in :data:`INFEASIBLE_COLOR`; where no parameters met the limit (no errors) a mark of that
    colour sits at the top of the panel, at the curve's own height band, so no infeasible setting is shown
    as a result. The δ limit of each ε is written on a secondary top axis. With ``n`` the chance level
    ``sqrt(1 − 1/n)`` is drawn as a grey line. NaN values leave gaps. The y range is set by the private
    methods; a no-privacy reference far below them is pinned to the bottom edge with its value written.

    Returns
    -------
    dict
        Legend label → artist, for building a shared legend (:func:`fig2_grid`).
    """
    handles: dict[str, Any] = {}
    summary_ds = summary_ds if summary_ds is not None else pd.DataFrame(columns=["method", "eps"])
    if len(summary_ds) and "threat_model" not in summary_ds:
        summary_ds = summary_ds.assign(threat_model="none")
    eps_all = _sorted_unique_eps(summary_ds)
    y_candidates: list[float] = []
    references: list[tuple[np.ndarray, np.ndarray, dict]] = []
    missing: list[tuple[float, int, str]] = []
    series = _series(summary_ds)
    for i, (method, model, variant) in enumerate(series):
        st = series_style(method, model, variant, i)
        g = summary_ds[(summary_ds["method"] == method) & (summary_ds["threat_model"].fillna("none") == model)]
        g = g.sort_values("eps")
        # Dodge each curve sideways by a few per cent of a decade, so coinciding curves stay visible.
        x = g["eps"].to_numpy(dtype=float) * 10 ** (0.015 * (i - (len(series) - 1) / 2))
        y = g["error_mean"].to_numpy(dtype=float)
        lo = g["error_lo"].to_numpy(dtype=float) if "error_lo" in g else y
        hi = g["error_hi"].to_numpy(dtype=float) if "error_hi" in g else y
        (line,) = ax.plot(
            x, y, color=st["color"], marker=st["marker"], linestyle=st["linestyle"], label=st["label"], zorder=3
        )
        ax.fill_between(x, lo, hi, color=st["color"], alpha=0.16, linewidth=0, zorder=2)
        handles[st["label"]] = line
        if _is_reference(g):
            references.append((x, y, st))  # kept out of the y range: the private methods set it
        else:
            y_candidates += [*y, *lo, *hi]
        feasible = g["feasible"].astype(bool).to_numpy() if "feasible" in g else np.ones(len(g), bool)
        over = ~feasible & np.isfinite(y)
        if over.any():
            handles[OVER_BUDGET_LABEL] = ax.scatter(
                x[over],
                y[over],
                marker="o",
                s=70,
                facecolor="none",
                edgecolor=INFEASIBLE_COLOR,
                linewidth=1.6,
                zorder=4,
                label=OVER_BUDGET_LABEL,
            )
        missing += [(e, i, st["color"]) for e in x[~feasible & ~np.isfinite(y)]]

    if n is not None and n > 1:
        chance = math.sqrt(1.0 - 1.0 / n)
        handles[CHANCE_LABEL] = ax.axhline(
            chance, color="0.45", linestyle=(0, (6, 3)), linewidth=1.0, zorder=1, label=CHANCE_LABEL
        )
        y_candidates.append(chance)
    if handles:
        handles[BAND_LABEL] = Patch(facecolor="0.5", alpha=0.25, label=BAND_LABEL)

    ax.set_yscale("log", nonpositive="mask")
    pos = _positive(y_candidates)
    if pos.size:
        ymin, ymax = pos.min(), pos.max()
        ax.set_ylim(ymin / 1.6, max(ymax, 1.0) * 1.9)  # headroom for the infeasible marks
    _set_log_eps_axis(ax, eps_all)
    _pin_references_below(ax, references)

    if missing:
        tr = ax.get_xaxis_transform()  # x in data, y in axes coordinates
        rows = sorted({i for _, i, _ in missing})
        for e, i, color in missing:
            level = 0.95 - 0.045 * rows.index(i)
            handles[INFEASIBLE_LABEL] = ax.scatter(
                [e],
                [level],
                transform=tr,
                marker="X",
                s=70,
                color=INFEASIBLE_COLOR,
                edgecolor=color,
                linewidth=1.2,
                zorder=5,
                clip_on=False,
                label=INFEASIBLE_LABEL,
            )

    if len(summary_ds) and "delta_limit" in summary_ds:
        limits = summary_ds.groupby("eps")["delta_limit"].first().sort_index()
        sec = ax.secondary_xaxis("top")
        sec.set_xscale("log")
        sec.xaxis.set_major_locator(FixedLocator(limits.index.to_numpy(dtype=float)))
        sec.xaxis.set_minor_locator(NullLocator())
        sec.set_xticklabels(
            [f"δ≤{_fmt_delta(d)}" for d in limits.to_numpy(dtype=float)], rotation=40, ha="left", fontsize=8.5
        )
        sec.tick_params(axis="x", pad=1, length=3)

    ax.tick_params(labelsize=_RC["xtick.labelsize"])
    ax.set_xlabel("privacy loss ε (log scale; δ limit per ε on top axis)")
    ax.set_ylabel(ERROR_LABEL)
    ax.set_title(_title_from(summary_ds, title))
    if legend and handles:
        ax.legend(handles=list(handles.values()), labels=list(handles.keys()), loc="lower left", framealpha=0.9)
    return handles


def fig2_single(summary_ds: pd.DataFrame, title: str | None = None, n: int | None = None) -> Figure:
    """One Fig. 2 panel as its own figure, legend below the axes. ``title`` defaults to the ``label`` column."""
    with mpl.rc_context(_RC):
        fig = _figure((6.8, 5.6))
        ax = fig.add_subplot()
        handles = plot_fig2_panel(ax, summary_ds, title, n)
        if handles:
            fig.legend(
                handles=list(handles.values()),
                labels=list(handles.keys()),
                loc="outside lower center",
                ncol=2,
                frameon=False,
            )
    return fig


def fig2_grid(panels: Sequence[tuple[str | None, pd.DataFrame, int | None]]) -> Figure:
    """Fig. 2: one panel per data set (2 columns; 2×2 for four data sets) with one shared legend below.

    ``panels`` holds ``(title, summary_ds, n)`` per data set, in reading order (the paper's
    order is Diabetes, Breast Cancer, AMI, Wine).
    """
    with mpl.rc_context(_RC):
        fig, axes = panel_grid(len(panels), 4.9, 0.9)
        handles: dict[str, Any] = {}
        for ax, (title, summary_ds, n) in zip(axes, panels, strict=False):
            for label, h in plot_fig2_panel(ax, summary_ds, title, n).items():
                handles.setdefault(label, h)
        _legend_below(fig, handles)
    return fig
