"""Fig. 3 of the journal paper: error and δ against the number of iterations T at fixed ε."""

from __future__ import annotations

import textwrap
from typing import Any

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from ddppm.plotting.style import (
    _DATASET_COLORS,
    _RC,
    BAND_LABEL,
    BOUND_LABEL,
    DET_LABEL,
    ERROR_LABEL,
    PlainLogFormatter,
    _figure,
    _fmt_eps,
    _legend_below,
    _positive,
    built_in_threat_model,
    threat_model_words,
)

SE_LABEL = "shaded band around δ: ± 1.96 Monte Carlo standard errors of the δ estimate"
NEAR_ONE = 0.98
"""Mean errors all above this are said to carry next to no information (chance is √(1 − 1/n) ≈ 1)."""
SAME_UPPER_RTOL = 0.02
"""δ⁺ within this relative distance of δ at every T is not drawn: its line would lie on δ's and hide it."""


def _vacuous(values: np.ndarray) -> bool:
    """A bound on ``sin`` says nothing (≥ 1 wherever it is known); an all-NaN bound counts as not vacuous."""
    finite = values[np.isfinite(values)]
    return bool(finite.size) and bool(np.all(finite >= 1.0 - 1e-12))


def _names(names: list[str]) -> str:
    return ", ".join(names)


def _bound_note(vacuous: dict[str, list[str]], drawn: dict[str, bool], datasets: list[str]) -> str:
    """The title line that replaces vacuous Theorem 3 lines (all would lie on y = 1, on top of each other)."""
    full = [key for key in ("bound", "det") if vacuous[key] and len(vacuous[key]) == len(datasets)]
    if full == ["bound", "det"]:
        return "Theorem 3 bound and its consensus + power terms\n≥ 1 (vacuous) at every T: not drawn"
    notes = []
    if "bound" in full:
        notes.append("Theorem 3 bound = 1 (vacuous) at every T: not drawn")
    elif vacuous["bound"]:
        notes.append(f"Theorem 3 bound = 1 (vacuous) at every T for {_names(vacuous['bound'])}: not drawn")
    if "det" in full and drawn["bound"]:
        notes.append("its consensus + power terms ≥ 1 at every T: not drawn")
    elif "det" in full:
        notes.append("Theorem 3 consensus + power terms ≥ 1 at every T: not drawn")
    elif vacuous["det"]:
        notes.append(f"consensus + power terms ≥ 1 at every T for {_names(vacuous['det'])}: not drawn")
    return "\n".join(notes)


def _fallback_note(curves: pd.DataFrame, eps_txt: str) -> str:
    if "params_source" not in curves:
        return ""
    fallback = curves.loc[curves["params_source"] != "calibrated"]
    names = sorted({str(r) for r in (fallback["label"] if "label" in fallback else fallback["dataset"])})
    if not names:
        return ""
    return (
        f"No parameters met the δ limit at ε = {eps_txt} for {', '.join(names)}: "
        "the least-δ calibration candidate is shown instead."
    )


def _draw_delta(
    ax: Axes, g: pd.DataFrame, T: np.ndarray, color: str, i: int, n_ds: int, show_upper: bool
) -> tuple[list[float], bool, str]:
    """One data set's δ, its Monte Carlo band, δ⁺ (unless it lies on δ) and its δ limit on the right panel.

    Returns the values drawn (for the y range), whether δ⁺ was drawn and which band was ("se" or "")."""
    d = g["delta"].to_numpy(dtype=float) if "delta" in g else np.full(T.size, np.nan)
    ax.plot(T, d, color=color, marker="o", zorder=3)
    values = list(d)
    band = ""
    if "delta_se" in g:
        se = g["delta_se"].to_numpy(dtype=float)
        relative = 1.96 * se / np.where(d > 0, d, np.nan)
        # a band under 1 % of δ at every T is thinner than the line: not drawn, so not listed in the legend
        if np.isfinite(relative).any() and np.nanmax(relative) > 0.01:
            lo_d = np.where(d - 1.96 * se > 0, d - 1.96 * se, d / 10)
            ax.fill_between(T, lo_d, d + 1.96 * se, color=color, alpha=0.2, linewidth=0, zorder=2)
            band = "se"
    upper_drawn = False
    if show_upper and "delta_upper" in g:
        du = g["delta_upper"].to_numpy(dtype=float)
        both = np.isfinite(du) & np.isfinite(d)
        apart = np.abs(du - d) > SAME_UPPER_RTOL * np.maximum(np.abs(d), 1e-300)
        if np.isfinite(du).any() and (apart[both].any() or not both.any()):
            # hollow markers on a thin dash-dot: where δ⁺ meets δ the filled δ marker still shows through
            ax.plot(T, du, color=color, linestyle="-.", linewidth=1.0, marker="D", mfc="none", ms=5, zorder=3.5)
            values += list(du)
            upper_drawn = True
    if "delta_limit" in g:
        lim = _positive(g["delta_limit"])
        if lim.size:
            ax.axhline(lim[0], color=color, linestyle=(2.0 * i, (1.5, 2.0 * n_ds - 1.5)), linewidth=1.8, zorder=1)
            values.append(lim[0])
    return values, upper_drawn, band


def fig3(
    curves: pd.DataFrame,
    bound_label: str = BOUND_LABEL,
    show_upper_tail: bool = True,
    upper_label: str = "upper-tail δ⁺ of Theorem 2",
    threat_model: str | None = None,
    threat_model_definition: dict[str, str] | None = None,
) -> Figure:
    """Fig. 3: error (left, log y) and δ (right, log y) against the number of iterations T, per data set.

    Left: ``error_mean`` with the band ``error_lo..error_hi`` (the middle 95 % of runs) and, in the same colour,
    ``bound_sin`` (Theorem 3, dashed) and ``bound_det`` (its consensus + power terms, dotted). A bound that is
    vacuous (≥ 1 at every T) is not drawn: all of them would lie on y = 1 on top of each other; the panel title
    says so instead. Right: the two-sided ``delta`` with a band ``± 1.96 delta_se`` (Monte Carlo error of the
    accountant; left out where it is under 1 % of δ at every T, thinner than the line), ``delta_upper`` (the
    upper-tail δ⁺ of Theorem 2 under Chernoff accounting, the exact upper tail under exact accounting:
    ``upper_label``; dash-dot, hollow diamonds; ``show_upper_tail=False`` hides it; not drawn where it is within
    2 % of δ at every T, said in the title) and the data set's δ limit at the curve's ε as a dotted horizontal
    line of the same colour. The legend lists only what is drawn.

    ``threat_model`` (its name) and ``threat_model_definition`` (``view``, ``accounting``, ``adjacency``; the
    built-in definition of that name by default) put the threat model, in words, in the figure's title.
    """
    curves = curves if curves is not None else pd.DataFrame()
    with mpl.rc_context(_RC):
        fig = _figure((12.5, 5.6))
        ax_err, ax_del = fig.subplots(1, 2)
        handles: dict[str, Any] = {}
        datasets = list(dict.fromkeys(curves["dataset"])) if "dataset" in curves else []
        eps_vals = sorted(set(curves["eps"].dropna().astype(float))) if "eps" in curves else []
        eps_txt = ", ".join(_fmt_eps(e) for e in eps_vals) if eps_vals else "?"
        err_vals: list[float] = []
        del_vals: list[float] = []
        n_ds = max(len(datasets), 1)
        vacuous: dict[str, list[str]] = {"bound": [], "det": []}
        drawn = {"bound": False, "det": False, "upper": False, "band": False, "se": False}
        same_upper: list[str] = []
        for i, ds in enumerate(datasets):
            g = curves[curves["dataset"] == ds].sort_values("T")
            color = _DATASET_COLORS[i % len(_DATASET_COLORS)]
            label = str(g["label"].iloc[0]) if "label" in g else str(ds)
            # Dodge each dataset sideways by a tenth of a step: curves that coincide (error ≈ 1) stay visible.
            T = g["T"].to_numpy(dtype=float) + 0.1 * (i - (n_ds - 1) / 2)
            y = g["error_mean"].to_numpy(dtype=float)
            lo = g["error_lo"].to_numpy(dtype=float) if "error_lo" in g else y
            hi = g["error_hi"].to_numpy(dtype=float) if "error_hi" in g else y
            (line,) = ax_err.plot(T, y, color=color, marker="o", label=label, zorder=3)
            if "error_lo" in g or "error_hi" in g:
                ax_err.fill_between(T, lo, hi, color=color, alpha=0.15 if n_ds > 2 else 0.2, linewidth=0, zorder=2)
                drawn["band"] = True
            handles[label] = line
            err_vals += [*y, *lo, *hi]
            for key, column, style in (("bound", "bound_sin", "dashed"), ("det", "bound_det", ":")):
                if column not in g:
                    continue
                b = g[column].to_numpy(dtype=float)
                if _vacuous(b):
                    vacuous[key].append(label)
                elif np.isfinite(b).any():
                    # interleaved dashes: coinciding bounds of several data sets stay distinguishable
                    dash = (3.0 * i, (3.0, 3.0 * (n_ds - 1) + 3.0)) if style == "dashed" else style
                    ax_err.plot(T, b, color=color, linestyle=dash, linewidth=1.5, zorder=2.5)
                    err_vals += list(b)
                    drawn[key] = True
            values, upper, band = _draw_delta(ax_del, g, T, color, i, n_ds, show_upper_tail)
            del_vals += values
            drawn["upper"] |= upper
            drawn["se"] |= band == "se"
            if show_upper_tail and "delta_upper" in g and not upper and np.isfinite(g["delta_upper"]).any():
                same_upper.append(label)

        if drawn["bound"]:
            handles[bound_label] = Line2D([], [], color="0.2", linestyle="--", linewidth=1.4)
        if drawn["det"]:
            handles[DET_LABEL] = Line2D([], [], color="0.2", linestyle=":", linewidth=1.3)
        if drawn["band"]:
            handles[BAND_LABEL] = Patch(facecolor="0.5", alpha=0.25)
        if datasets and "delta_limit" in curves:
            handles[f"δ limit at ε = {eps_txt} (dotted, the data set's colour)"] = Line2D(
                [], [], color="0.2", linestyle=":", linewidth=1.6
            )
        if drawn["se"]:
            handles[SE_LABEL] = Patch(facecolor="0.5", alpha=0.2)
        if drawn["upper"]:
            handles[upper_label] = Line2D([], [], color="0.2", linestyle="-.", linewidth=1.0, marker="D", mfc="none")

        for ax, vals in ((ax_err, err_vals), (ax_del, del_vals)):
            ax.set_yscale("log", nonpositive="mask")
            pos = _positive(vals)
            if pos.size:
                # a margin of a tenth of the data's span (log), so curves that differ little still look apart
                pad = 2.5 if ax is ax_del else max(1.02, (pos.max() / pos.min()) ** 0.1)
                top = pos.max() * pad if ax is ax_del else min(pos.max() * pad, 1.0)  # an error is at most 1
                ax.set_ylim(pos.min() / pad, max(top, pos.max()))
            if ax is ax_err:  # plain numbers ("0.99"): the error axis often spans less than a decade
                for which in ("major", "minor"):
                    formatter = PlainLogFormatter(labelOnlyBase=False, minor_thresholds=(1.0, 0.4))
                    getattr(ax.yaxis, f"set_{which}_formatter")(formatter)
            ax.tick_params(labelsize=_RC["xtick.labelsize"])
            ax.set_xlabel("iterations T")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax_err.set_ylabel(ERROR_LABEL)
        means = _positive(curves["error_mean"]) if "error_mean" in curves else np.array([])
        if means.size and means.min() >= NEAR_ONE:
            ax_err.text(
                0.5, 0.06, f"every mean error ≥ {NEAR_ONE:g}: next to no information about v\n"
                "(a uniformly random direction has error √(1 − 1/n) ≈ 1)", transform=ax_err.transAxes,
                ha="center", va="bottom", fontsize=9, color="0.25",
            )  # fmt: skip
        note = _bound_note(vacuous, drawn, [str(d) for d in datasets]) if datasets else ""
        # In the title, not over the axes: a box in the corner covered the T = 1 points.
        note = "\n".join(textwrap.fill(line, 60) for line in note.splitlines())
        ax_err.set_title(f"Error vs iterations (ε = {eps_txt}, other parameters fixed)" + (f"\n{note}" if note else ""))
        definition = threat_model_definition or built_in_threat_model(threat_model) or {}
        # a searched neighbour gives a lower bound on δ, a guessed one the δ of that neighbour only
        reads = {"worst": " (at least: worst neighbour found)", "heuristic": " for the guessed neighbour"}.get(
            definition.get("adjacency", ""), ""
        )
        ax_del.set_ylabel(f"δ at ε = {eps_txt}{reads} (log scale)")
        del_title = f"Privacy δ vs iterations (ε = {eps_txt})"
        if same_upper:
            who = "" if len(same_upper) == len(datasets) else f" for {_names(same_upper)}"
            same = f"{upper_label} within 2 % of δ at every T{who}: not drawn separately"
            del_title += "\n" + textwrap.fill(same, 60)
        ax_del.set_title(del_title)
        heading = []
        if threat_model is not None:
            heading.append(f"D-DP-PM, threat model {threat_model_words(threat_model, definition or None)}")
        fallback = _fallback_note(curves, eps_txt)
        if fallback:
            heading.append(fallback)
        if heading:
            fig.suptitle("\n".join(textwrap.fill(line, 130) for line in heading), fontsize=10.5)
        _legend_below(fig, handles, ncol=2)  # long entries: three columns are wider than the figure
    return fig
