"""Fig. 2 of the journal paper: error against ε, one panel per data set, every method and threat model."""

from __future__ import annotations

import math
import textwrap
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
    FLOOR_COLOR,
    HEURISTIC_ONLY_LABEL,
    INFEASIBLE_COLOR,
    INFEASIBLE_LABEL,
    INFEASIBLE_STRIP_LABEL,
    OVER_BUDGET_LABEL,
    PROVEN_INFEASIBLE_LABEL,
    UNNAMED_THREAT_MODELS,
    _figure,
    _fmt_delta,
    _legend_below,
    _positive,
    _series,
    _set_log_eps_axis,
    _shade,
    _sorted_unique_eps,
    _title_from,
    panel_grid,
    series_style,
    threat_model_words,
)


def _is_reference(g: pd.DataFrame) -> bool:
    """A curve without privacy (``accounting == "none"``, e.g. noise-free D-PM)."""
    return "accounting" in g and len(g) > 0 and bool((g["accounting"] == "none").all())


def _pin_references_below(ax, references, handles: dict) -> None:
    """A no-privacy reference far below the private methods is drawn on the bottom edge, its value in its
    legend entry, so it stays visible without squeezing the range where the methods differ."""
    low = ax.get_ylim()[0]
    for x, y, st in references:
        below = np.isfinite(y) & (y < low)
        if below.any():
            marks = ax.plot(
                x[below], np.full(below.sum(), low * 1.12), linestyle="none", marker="v", color=st["color"], zorder=4
            )
            handles[f"{st['label']}: below the axis (▼)"] = marks[0]
            if below.all():
                handles.pop(st["label"], None)  # its line is out of range: only the ▼ entry says where it is


def _floor_exceeds(floor: pd.DataFrame | None, eps: np.ndarray) -> np.ndarray:
    """Per ε, whether the δ floor of the series' observer view exceeds the δ limit (False where unknown)."""
    if floor is None or floor.empty:
        return np.zeros(len(eps), bool)
    exceeds = floor.set_index("eps")["floor_hockey"] > floor.set_index("eps")["delta_limit"]
    return np.array([bool(exceeds.get(e, False)) for e in eps])


def _infeasible_strip(ax: Axes, missing: list[tuple], eps: np.ndarray, limits: pd.Series | None) -> dict[str, Any]:
    """A thin strip above the panel, x shared in value with it, one row per curve that had ε without parameters.

    Those points have no error, so they are not drawn on the error axis: a square (proof: floor > limit) or a
    cross (none found by the search) in the row named after the curve. The strip's top axis carries the δ limit
    of each ε (the main axis's top labels would run into the strip) under the strip's label.
    """
    rows = list(dict.fromkeys(i for _, i, _, _ in missing))
    styles = {i: st for _, i, st, _ in missing}
    strip = ax.inset_axes([0.0, 1.02, 1.0, 0.03 + 0.05 * len(rows)])
    strip.set_label("infeasible strip")
    strip.set_xscale("log")
    strip.set_xlim(ax.get_xlim())
    strip.set_ylim(len(rows) - 0.5, -0.5)  # first row on top
    strip.set_yticks(range(len(rows)), [styles[i]["label"] for i in rows], fontsize=8)
    for tick, i in zip(strip.get_yticklabels(), rows, strict=True):
        tick.set_color(_shade(styles[i]["color"], 0.8))  # the curve's colour: the row says whose marks these are
    strip.tick_params(axis="y", length=0)
    strip.xaxis.tick_top()
    strip.xaxis.set_label_position("top")
    strip.xaxis.set_minor_locator(NullLocator())
    if limits is not None and len(limits):
        strip.set_xticks(
            limits.index.to_numpy(dtype=float),
            [f"δ≤{_fmt_delta(d)}" for d in limits.to_numpy(dtype=float)],
            rotation=40,
            ha="left",
            fontsize=8.5,
        )
    else:
        strip.set_xticks(eps, [""] * len(eps))
    strip.tick_params(axis="x", pad=1, length=3)
    strip.set_xlabel(INFEASIBLE_STRIP_LABEL, fontsize=8.5, labelpad=3)
    handles: dict[str, Any] = {}
    for e, i, _, proven in missing:
        label = PROVEN_INFEASIBLE_LABEL if proven else INFEASIBLE_LABEL
        handles[label] = strip.scatter(
            [e],
            [rows.index(i)],
            marker="s" if proven else "X",
            s=45 if proven else 60,
            color=INFEASIBLE_COLOR,
            edgecolor=FLOOR_COLOR if proven else "white",
            linewidth=1.2 if proven else 0.8,
            zorder=5,
            clip_on=False,
            label=label,
        )
    return handles


def _delta_limit_axis(ax: Axes, limits: pd.Series) -> None:
    """The δ limit of each ε on a secondary top axis of the panel."""
    sec = ax.secondary_xaxis("top")
    sec.set_xscale("log")
    sec.xaxis.set_major_locator(FixedLocator(limits.index.to_numpy(dtype=float)))
    sec.xaxis.set_minor_locator(NullLocator())
    sec.set_xticklabels(
        [f"δ≤{_fmt_delta(d)}" for d in limits.to_numpy(dtype=float)], rotation=40, ha="left", fontsize=8.5
    )
    sec.tick_params(axis="x", pad=1, length=3)


def plot_fig2_panel(
    ax: Axes,
    summary_ds: pd.DataFrame,
    title: str | None = None,
    n: int | None = None,
    legend: bool = False,
    floors: dict[str, pd.DataFrame] | None = None,
) -> dict[str, Any]:
    """Draw one Fig. 2 panel: error (log y) against ε (log x) for every method and threat model of a data set.

    Each (method, threat model) is a line through ``error_mean`` with a shaded band ``error_lo..error_hi``
    (the middle 95 % of runs); a curve without a single finite error gets no line and no legend entry. Points
    whose achieved δ exceeds the limit (``feasible`` False with errors) get a ring in :data:`INFEASIBLE_COLOR`.
    Where no parameters met the limit (no error) there is nothing to plot on the error axis: a mark of that colour
    goes in a thin strip above the panel (:func:`_infeasible_strip`), one row per curve, named after it. The δ
    limit of each ε is written on the top axis (of the strip where there is one). With ``n`` (the number of rows:
    ``v`` and ``q`` have length n) the chance level ``sqrt(1 − 1/n)`` is drawn as a grey line. NaN values leave
    gaps. The y range is set by the private methods; a no-privacy reference far below them is pinned to the
    bottom edge with a ▼ and its own legend entry.

    ``floors`` maps a threat model to the δ floor of its observer view (columns ``eps``, ``floor_hockey``,
    ``delta_limit``; :func:`ddppm.methods.ddppm.steps.floor_table`). Where the floor exceeds the limit, an
    infeasible mark becomes a proof (a square: no parameters can meet the limit) and a point that met the limit
    (possible only for a guessed, heuristic neighbour) gets a black ring: it meets the limit only for that
    neighbour.

    Returns
    -------
    dict
        Legend label → artist, for building a shared legend (:func:`fig2_grid`); only what was drawn.
    """
    handles: dict[str, Any] = {}
    summary_ds = summary_ds if summary_ds is not None else pd.DataFrame(columns=["method", "eps"])
    if len(summary_ds) and "threat_model" not in summary_ds:
        summary_ds = summary_ds.assign(threat_model="none")
    eps_all = _sorted_unique_eps(summary_ds)
    y_candidates: list[float] = []
    references: list[tuple[np.ndarray, np.ndarray, dict]] = []
    missing: list[tuple[float, int, dict, bool]] = []
    banded = False
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
        if np.isfinite(y).any():  # a curve with no finite point draws nothing: no legend entry either
            (line,) = ax.plot(
                x, y, color=st["color"], marker=st["marker"], linestyle=st["linestyle"], label=st["label"], zorder=3
            )
            handles[st["label"]] = line
        if (np.isfinite(lo) & np.isfinite(hi)).any():
            ax.fill_between(x, lo, hi, color=st["color"], alpha=0.16, linewidth=0, zorder=2)
            banded = True
        if _is_reference(g):
            references.append((x, y, st))  # kept out of the y range: the private methods set it
        else:
            y_candidates += [*y, *lo, *hi]
        feasible = g["feasible"].astype(bool).to_numpy() if "feasible" in g else np.ones(len(g), bool)
        proven = _floor_exceeds((floors or {}).get(model), g["eps"].to_numpy(dtype=float))
        guessed_only = feasible & proven & np.isfinite(y)
        if guessed_only.any():
            handles[HEURISTIC_ONLY_LABEL] = ax.scatter(
                x[guessed_only],
                y[guessed_only],
                marker="o",
                s=120,
                facecolor="none",
                edgecolor=FLOOR_COLOR,
                linewidth=1.4,
                zorder=4,
                label=HEURISTIC_ONLY_LABEL,
            )
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
        gone = ~feasible & ~np.isfinite(y)
        missing += [(e, i, st, bool(p)) for e, p in zip(x[gone], proven[gone], strict=True)]

    if n is not None and n > 1:
        chance = math.sqrt(1.0 - 1.0 / n)
        handles[CHANCE_LABEL] = ax.axhline(
            chance, color="0.45", linestyle=(0, (6, 3)), linewidth=1.0, zorder=1, label=CHANCE_LABEL
        )
        y_candidates.append(chance)
    if banded:
        handles[BAND_LABEL] = Patch(facecolor="0.5", alpha=0.25, label=BAND_LABEL)

    ax.set_yscale("log", nonpositive="mask")
    pos = _positive(y_candidates)
    if pos.size:
        lo, top = pos.min() / 1.6, max(pos.max(), 1.0)
        ax.set_ylim(lo, top * (top / lo) ** 0.05)  # a twentieth of the span above the chance level / error 1
    _set_log_eps_axis(ax, eps_all)
    _pin_references_below(ax, references, handles)

    limits = None
    if len(summary_ds) and "delta_limit" in summary_ds:
        limits = summary_ds.groupby("eps")["delta_limit"].first().sort_index()
    if missing:
        handles.update(_infeasible_strip(ax, missing, eps_all, limits))
    elif limits is not None:
        _delta_limit_axis(ax, limits)

    ax.tick_params(labelsize=_RC["xtick.labelsize"])
    ax.set_xlabel("privacy loss ε (log scale; δ limit per ε on top axis)")
    ax.set_ylabel(ERROR_LABEL)
    ax.set_title(_title_from(summary_ds, title))
    if legend and handles:
        ax.legend(handles=list(handles.values()), labels=list(handles.keys()), loc="lower left", framealpha=0.9)
    return handles


def _threat_model_heading(
    frames: Sequence[pd.DataFrame | None], threat_models: dict[str, dict] | None, width: int
) -> str:
    """The figure's heading: what is compared, and every threat model of its curves in words (one per line)."""
    names: list[str] = []
    for frame in frames:
        if frame is not None and "threat_model" in frame:
            names += [str(m) for m in frame["threat_model"].dropna() if str(m) not in UNNAMED_THREAT_MODELS]
    lines = ["Error against ε: every method at the δ limit of each ε"]
    if names:
        lines[0] += "; D-DP-PM [threat model]:"
        for name in dict.fromkeys(names):
            lines.append(threat_model_words(name, (threat_models or {}).get(name)))
    return "\n".join(textwrap.fill(line, width) for line in lines)


def fig2_single(
    summary_ds: pd.DataFrame,
    title: str | None = None,
    n: int | None = None,
    floors: dict[str, pd.DataFrame] | None = None,
    threat_models: dict[str, dict] | None = None,
) -> Figure:
    """One Fig. 2 panel as its own figure, legend below the axes. ``title`` defaults to the ``label`` column;
    ``threat_models`` (name → view, accounting, adjacency; the built-in ones by default) words the heading."""
    with mpl.rc_context(_RC):
        fig = _figure((7.2, 10.4))
        ax = fig.add_subplot()
        handles = plot_fig2_panel(ax, summary_ds, title, n, floors=floors)
        # The data set leads the heading: constrained layout does not see the infeasible strip (an inset), so a
        # panel title above it would run into a long heading.
        label = ax.get_title()
        ax.set_title("")
        heading = _threat_model_heading([summary_ds], threat_models, 95)
        fig.suptitle(f"{label}\n{heading}\n", fontsize=9)
        if handles:  # one column: two columns of these long labels are wider than one panel
            fig.legend(
                handles=list(handles.values()),
                labels=list(handles.keys()),
                loc="outside lower center",
                ncol=1,
                frameon=False,
            )
    return fig


def fig2_grid(panels: Sequence[tuple], threat_models: dict[str, dict] | None = None) -> Figure:
    """Fig. 2: one panel per data set (2 columns; 2×2 for four data sets) with one shared legend below.

    ``panels`` holds ``(title, summary_ds, n)`` or ``(title, summary_ds, n, floors)`` per data set, in reading
    order (the paper's order is Diabetes, Breast Cancer, AMI, Wine); ``threat_models`` as in :func:`fig2_single`.
    """
    with mpl.rc_context(_RC):
        fig, axes = panel_grid(len(panels), 5.3, 1.3)
        handles: dict[str, Any] = {}
        for ax, (title, summary_ds, n, *rest) in zip(axes, panels, strict=False):
            for label, h in plot_fig2_panel(ax, summary_ds, title, n, floors=rest[0] if rest else None).items():
                handles.setdefault(label, h)
        width = 95 if len(panels) == 1 else 190
        fig.suptitle(_threat_model_heading([p[1] for p in panels], threat_models, width), fontsize=9.5)
        _legend_below(fig, handles, ncol=2)  # three columns of these labels are wider than two panels
    return fig


def floors_by_threat_model(floor: pd.DataFrame | None, threat_models: dict[str, dict]) -> dict[str, pd.DataFrame]:
    """The δ floor rows (:func:`ddppm.methods.ddppm.steps.floor_table`) of each threat model's observer view."""
    if floor is None or floor.empty:
        return {}
    return {name: floor[floor["view"] == model["view"]] for name, model in threat_models.items()}
