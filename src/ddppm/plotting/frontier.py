"""The privacy–utility frontier of D-DP-PM's calibration: error against δ for every evaluated candidate."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ddppm.plotting.style import (
    _RC,
    ERROR_LABEL,
    FLOOR_COLOR,
    INFEASIBLE_COLOR,
    _fmt_delta,
    _legend_below,
    panel_grid,
    threat_model_words,
)

CHOSEN_LABEL = "chosen (least error with δ ≤ limit)"
LIMIT_LABEL = "δ limit"
FLOOR_LABEL = "D-DP-PM's δ floor of the view: none of its parameters reach left of it (grey)"


REFERENCE_STYLE = {"color": "#e377c2", "marker": "P", "markersize": 5, "linewidth": 1.6, "zorder": 4}
"""A reference frontier (a method whose δ holds under every threat model), drawn over the candidates."""


def frontier_panel(
    ax,
    candidates: pd.DataFrame,
    chosen: pd.Series | None,
    eps: float,
    title: str,
    floor: float | None = None,
    references: pd.DataFrame | None = None,
) -> set[str]:
    """Error (y) against δ (x, log) of every candidate at ``eps``, coloured by T; returns the legend entries of
    what it drew (``chosen``, ``limit``, ``floor``), so a shared legend lists nothing that is not drawn.

    ``floor`` (the δ floor of the threat model's observer view, :mod:`ddppm.accounting.floor`) is drawn as a
    solid line with the region left of it shaded: no parameter choice has a δ below it at the worst neighbour.
    Candidates there exist only where δ is computed for a guessed (heuristic) neighbour.

    δ is the confirmed value (every pair) where the candidate was confirmed, else the screened value (the
    worst over the screening pairs: a lower bound, drawn hollow). The δ limit is a vertical line, the chosen
    point a star; points at δ = 1 (no privacy at this ε) are drawn at the right edge. ``references`` (columns
    ``label, eps, delta, error_mean``) are other methods' frontiers, drawn as lines down to a hundredth of the
    lowest δ shown.
    """
    drawn: set[str] = set()
    at = candidates[np.isclose(candidates["eps"], eps)].copy()
    confirmed = at["delta_full"].notna() if "delta_full" in at else pd.Series(False, index=at.index)
    at["delta_shown"] = np.where(confirmed, at.get("delta_full", np.nan), at["delta_screen"])
    Ts = sorted(at["T"].astype(int).unique())
    cmap = mpl.colormaps["viridis"].resampled(max(len(Ts), 2))
    shown = at["delta_shown"].to_numpy(float)
    lowest = min(float(np.min(shown[shown > 0], initial=1.0)), floor if floor and floor > 0 else 1.0)
    clip = max(lowest / 3, 1e-300)
    for k, T in enumerate(Ts):
        g = at[at["T"].astype(int) == T]
        x = np.clip(g["delta_shown"].to_numpy(float), clip, 1.0)
        done = confirmed[g.index].to_numpy()
        color = cmap(k / max(len(Ts) - 1, 1))
        ax.scatter(x[done], g["error_mean"][done], s=26, color=color, zorder=3)
        ax.scatter(x[~done], g["error_mean"][~done], s=22, facecolor="none", edgecolor=color, zorder=3)
    limit = float(at["delta_limit"].iloc[0]) if len(at) else np.nan
    if np.isfinite(limit):
        ax.axvline(limit, color=INFEASIBLE_COLOR, linestyle="--", linewidth=1.2, zorder=2)
        drawn.add(LIMIT_LABEL)
    left = clip / 2
    if references is not None and len(references):
        left = min(left, (limit if np.isfinite(limit) else 1.0) / 100)
        shown_refs = references[np.isclose(references["eps"], eps) & (references["delta"] >= left)]
        for _, g in shown_refs.groupby("label", sort=False):
            g = g.sort_values("delta")
            ax.plot(g["delta"], g["error_mean"], **REFERENCE_STYLE)
    if floor is not None and np.isfinite(floor) and floor > 0:
        ax.axvspan(left, floor, color="0.55", alpha=0.18, linewidth=0, zorder=1)
        ax.axvline(floor, color=FLOOR_COLOR, linewidth=1.4, zorder=2)
        drawn.add(FLOOR_LABEL)
    if floor is not None or references is not None:
        ax.set_xlim(left=left)
    if chosen is not None and bool(chosen.get("met", False)):
        ax.scatter(
            [chosen["delta"]], [chosen["error_mean"]], marker="*", s=260, color="#d62728", edgecolor="black", zorder=5
        )
        drawn.add(CHOSEN_LABEL)
    ax.set_xscale("log")
    ax.set_xlim(right=2.0)  # δ ≤ 1: room for the markers drawn at δ = 1 (half of them were cut at the edge)
    ax.set_xlabel(f"δ at ε = {eps:g} (hollow: screened lower bound; filled: confirmed)")
    ax.set_ylabel(ERROR_LABEL)
    ax.set_ylim(0, 1.05)
    # Hollow points left of the limit were screened against the neighbour pairs known at the time; they were never
    # confirmed (a candidate with less error was, or pairs found later raised their δ), so they are not options.
    unconfirmed = int(((~confirmed) & (at["delta_shown"] <= limit)).sum()) if np.isfinite(limit) else 0
    note = f"\n{unconfirmed} hollow left of the limit: never confirmed, δ a lower bound" if unconfirmed else ""
    ax.set_title(f"{title} (δ limit {_fmt_delta(limit)}){note}")
    ax.legend(
        handles=[Line2D([], [], marker="o", linestyle="", color=cmap(k / max(len(Ts) - 1, 1))) for k in range(len(Ts))],
        labels=[f"T = {T}" for T in Ts],
        loc="best",  # candidates cluster near δ = 1 and the limit; a reference frontier runs along the bottom
        fontsize=8,
        ncol=2,
        framealpha=0.85,
    )
    return drawn


def frontier_figure(
    panels: Sequence[tuple], eps: float, threat_model: str, threat_model_definition: dict[str, str] | None = None
) -> Figure:
    """One panel per dataset: ``(title, candidates, chosen)`` as the calibration wrote them, optionally with the
    δ floor at ``eps`` as a fourth item and reference frontiers (:func:`frontier_panel`) as a fifth. The title names
    the threat model in words (``threat_model_definition``, the built-in one of that name by default); the legend
    lists only what some panel drew (no star where no candidate met the limit)."""
    labels: dict[str, None] = {}
    drawn: set[str] = set()
    with mpl.rc_context(_RC):
        fig, axes = panel_grid(len(panels), 4.6, 0.8)
        for ax, (title, candidates, chosen, *extra) in zip(axes, panels, strict=False):
            rows = chosen[np.isclose(chosen["eps"], eps)]
            drawn |= frontier_panel(ax, candidates, rows.iloc[0] if len(rows) else None, eps, title, *extra)
            if len(extra) > 1 and extra[1] is not None:
                labels.update(dict.fromkeys(extra[1]["label"]))
        words = threat_model_words(threat_model, threat_model_definition)
        lines = [
            f"D-DP-PM calibration frontier at ε = {eps:g}: error against δ of every candidate, threat model {words}"
        ]
        if CHOSEN_LABEL not in drawn:
            lines.append("no candidate met the δ limit in any panel: nothing chosen")
        fig.suptitle("\n".join(textwrap.fill(line, 130) for line in lines))
        every = {
            CHOSEN_LABEL: Line2D([], [], marker="*", linestyle="", markersize=13, color="#d62728"),
            LIMIT_LABEL: Line2D([], [], linestyle="--", color=INFEASIBLE_COLOR),
            FLOOR_LABEL: Line2D([], [], color=FLOOR_COLOR),
        }
        handles = {label: artist for label, artist in every.items() if label in drawn}
        for label in labels:  # δ for every neighbour and observer: the same line under every threat model
            reference = f"{label}: error at each certified δ (T chosen on a public stand-in)"
            handles[reference] = Line2D([], [], **REFERENCE_STYLE)
        _legend_below(fig, handles, ncol=2 if labels else 3)  # the reference label is long
    return fig
