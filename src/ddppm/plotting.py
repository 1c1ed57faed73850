"""Figures of the reproduction: Fig. 2 (error vs ε per data set) and Fig. 3 (error and δ vs T).

Figures are built as :class:`matplotlib.figure.Figure` objects without :mod:`matplotlib.pyplot`, so no GUI
backend and no global figure registry are involved (PNG output is rendered by Agg). Inputs are the tables
the workflow writes:

``summary`` (one row per dataset × method × ε)
    ``dataset, label, method, eps, n_runs, error_mean, error_lo, error_hi, ci_lo, ci_hi, delta, feasible``.
``calibration`` (one row per ε)
    ``eps, delta_limit, met, delta, delta_upper, T, kappa, schedule, ratio_name, error_mean``.
``curve`` (Fig. 3, one row per dataset × T)
    ``dataset, label, eps, T, delta, delta_se, delta_upper, delta_limit, error_mean, error_lo, error_hi,
    bound_sin``.

The error is ``sin(v, q) = ‖(I − vvᵀ)q‖/‖q‖`` (paper eq. 37), a dimensionless number in [0, 1]. Data-set
titles come from the ``label`` column (the AMI data set is the labelled synthetic stand-in).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Sequence
from os import PathLike
from typing import Any

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, MaxNLocator, NullFormatter, NullLocator

from ddppm.io import atomic_write

__all__ = [
    "ERROR_LABEL",
    "METHOD_STYLE",
    "fig2_grid",
    "fig2_single",
    "fig3",
    "plot_fig2_panel",
    "save_figure",
]

METHOD_STYLE: dict[str, dict[str, Any]] = {
    "ddppm": {"label": "D-DP-PM", "color": "#1f77b4", "marker": "o", "linestyle": "-"},
    "ldp": {"label": "LDP (classic Gaussian)", "color": "#d62728", "marker": "s", "linestyle": "--"},
    "ldp_analytic": {"label": "LDP (analytic Gaussian)", "color": "#ff7f0e", "marker": "^", "linestyle": "-."},
    "dpm": {"label": "D-PM, no privacy (reference)", "color": "#555555", "marker": "D", "linestyle": ":"},
}
"""Legend label, colour, marker and line style of each method of the ``summary`` table."""

ERROR_LABEL = (
    r"error $\sin(\mathbf{v},\mathbf{q}) = \|(\mathbf{I}-\mathbf{v}\mathbf{v}^\top)\mathbf{q}\|/\|\mathbf{q}\|$"
)
"""Y-axis label of every error axis (the quantity is dimensionless, between 0 and 1)."""

BAND_LABEL = "shaded: middle 95% of runs (2.5–97.5%)"
INFEASIBLE_LABEL = "D-DP-PM: no parameters met δ limit"
BOUND_LABEL = "Theorem 3 bound (w.p. 0.95)"
DET_LABEL = "Theorem 3: consensus + power terms"
CHANCE_LABEL = r"chance level $\sqrt{1-1/n}$"

_RC = {
    "font.size": 10,
    "axes.titlesize": 11.5,
    "axes.labelsize": 10.5,
    "xtick.labelsize": 9.5,
    "ytick.labelsize": 9.5,
    "legend.fontsize": 9.5,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "lines.linewidth": 1.6,
    "lines.markersize": 5.5,
}
_DATASET_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]


# --------------------------------------------------------------------------------------------- helpers


def _fmt_delta(x: float) -> str:
    """Compact δ: ``0.38``, ``0.14``, ``8e-3``, ``2e-4``, ``4e-43``."""
    if not np.isfinite(x):
        return "–"
    if x >= 0.01:
        return f"{x:.2g}"
    mant, exp = f"{x:.0e}".split("e")
    return f"{mant}e{int(exp)}"


def _fmt_eps(x: float) -> str:
    return f"{x:g}"


def _positive(values: Iterable[float]) -> np.ndarray:
    a = np.asarray(list(values), dtype=float)
    return a[np.isfinite(a) & (a > 0)]


def _sorted_unique_eps(*frames: pd.DataFrame) -> np.ndarray:
    vals = [f["eps"].to_numpy(dtype=float) for f in frames if f is not None and len(f) and "eps" in f]
    return np.unique(np.concatenate(vals)) if vals else np.array([])


def _method_style(method: str, index: int) -> dict[str, Any]:
    if method in METHOD_STYLE:
        return METHOD_STYLE[method]
    return {
        "label": str(method),
        "color": _DATASET_COLORS[index % len(_DATASET_COLORS)],
        "marker": "v",
        "linestyle": "-",
    }


def _infeasible_eps(summary_ds: pd.DataFrame, calibration_ds: pd.DataFrame | None) -> np.ndarray:
    """ε at which D-DP-PM had no parameters meeting the δ limit (summary ``feasible`` or calibration ``met``)."""
    eps: list[float] = []
    if len(summary_ds) and "feasible" in summary_ds:
        dd = summary_ds[summary_ds["method"] == "ddppm"]
        eps += dd.loc[~dd["feasible"].astype(bool), "eps"].astype(float).tolist()
    if calibration_ds is not None and len(calibration_ds) and "met" in calibration_ds:
        eps += calibration_ds.loc[~calibration_ds["met"].astype(bool), "eps"].astype(float).tolist()
    return np.unique(np.asarray(eps, dtype=float))


def _set_log_eps_axis(ax: Axes, eps: np.ndarray) -> None:
    ax.set_xscale("log")
    if eps.size:
        ax.xaxis.set_major_locator(FixedLocator(eps))
        ax.set_xticklabels([_fmt_eps(e) for e in eps])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_minor_formatter(NullFormatter())
        lo, hi = eps.min(), eps.max()
        pad = (hi / lo) ** 0.06 if hi > lo else 1.5
        ax.set_xlim(lo / pad, hi * pad)


def _title_from(summary_ds: pd.DataFrame, title: str | None) -> str:
    if title:
        return title
    if len(summary_ds) and "label" in summary_ds:
        return str(summary_ds["label"].iloc[0])
    if len(summary_ds) and "dataset" in summary_ds:
        return str(summary_ds["dataset"].iloc[0])
    return ""


# --------------------------------------------------------------------------------------------- Fig. 2


def plot_fig2_panel(
    ax: Axes,
    summary_ds: pd.DataFrame,
    calibration_ds: pd.DataFrame | None,
    title: str | None = None,
    n: int | None = None,
    legend: bool = False,
) -> dict[str, Any]:
    """Draw one Fig. 2 panel: error (log y) against ε (log x) for every method of one data set.

    Each method is a line through ``error_mean`` with a shaded band ``error_lo..error_hi`` (the middle 95%
    of runs). The δ limit of each ε is written on a secondary top axis (``δ≤8e-3``). Where D-DP-PM had no
    parameters meeting the limit (``feasible`` False in the summary or ``met`` False in the calibration) a
    red × is drawn at the top of the panel. With ``n`` the chance level ``sqrt(1 − 1/n)`` (the error of a
    uniformly random direction in R^n, in root-mean-square) is drawn as a grey line. NaN values leave gaps.

    Returns
    -------
    dict
        Legend label → artist, for building a shared legend (:func:`fig2_grid`).
    """
    handles: dict[str, Any] = {}
    summary_ds = summary_ds if summary_ds is not None else pd.DataFrame(columns=["method", "eps"])
    eps_all = _sorted_unique_eps(summary_ds, calibration_ds)
    present = [m for m in METHOD_STYLE if m in set(summary_ds.get("method", []))]
    present += sorted(set(summary_ds.get("method", [])) - set(METHOD_STYLE))
    y_candidates: list[float] = []
    for i, method in enumerate(present):
        st = _method_style(method, i)
        g = summary_ds[summary_ds["method"] == method].sort_values("eps")
        x = g["eps"].to_numpy(dtype=float)
        y = g["error_mean"].to_numpy(dtype=float)
        lo = g["error_lo"].to_numpy(dtype=float) if "error_lo" in g else y
        hi = g["error_hi"].to_numpy(dtype=float) if "error_hi" in g else y
        (line,) = ax.plot(
            x, y, color=st["color"], marker=st["marker"], linestyle=st["linestyle"], label=st["label"], zorder=3
        )
        ax.fill_between(x, lo, hi, color=st["color"], alpha=0.2, linewidth=0, zorder=2)
        handles[st["label"]] = line
        y_candidates += [*y, *lo, *hi]

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
        ax.set_ylim(ymin / 2.5, max(ymax, 1.0) * 3.5)  # headroom for the infeasible markers
    _set_log_eps_axis(ax, eps_all)

    bad = _infeasible_eps(summary_ds, calibration_ds)
    if bad.size:
        tr = ax.get_xaxis_transform()  # x in data, y in axes coordinates
        sc = ax.scatter(
            bad,
            np.full(bad.size, 0.93),
            transform=tr,
            marker="X",
            s=70,
            color="#d62728",
            edgecolor="white",
            linewidth=0.6,
            zorder=5,
            clip_on=False,
            label=INFEASIBLE_LABEL,
        )
        handles[INFEASIBLE_LABEL] = sc

    if calibration_ds is not None and len(calibration_ds) and "delta_limit" in calibration_ds:
        cal = calibration_ds.sort_values("eps")
        sec = ax.secondary_xaxis("top")
        sec.set_xscale("log")
        ce = cal["eps"].to_numpy(dtype=float)
        sec.xaxis.set_major_locator(FixedLocator(ce))
        sec.xaxis.set_minor_locator(NullLocator())
        sec.set_xticklabels(
            [f"δ≤{_fmt_delta(d)}" for d in cal["delta_limit"].to_numpy(dtype=float)],
            rotation=40,
            ha="left",
            fontsize=8.5,
        )
        sec.tick_params(axis="x", pad=1, length=3)

    ax.tick_params(labelsize=_RC["xtick.labelsize"])
    ax.set_xlabel("privacy loss ε (log scale; δ limit per ε on top axis)")
    ax.set_ylabel(ERROR_LABEL)
    ax.set_title(_title_from(summary_ds, title))
    if legend and handles:
        ax.legend(handles=list(handles.values()), labels=list(handles.keys()), loc="lower left", framealpha=0.9)
    return handles


def _figure(figsize: tuple[float, float]) -> Figure:
    with mpl.rc_context(_RC):
        return Figure(figsize=figsize, layout="constrained")


def fig2_single(
    summary_ds: pd.DataFrame, calibration_ds: pd.DataFrame | None, title: str | None = None, n: int | None = None
) -> Figure:
    """One Fig. 2 panel as its own figure, legend below the axes. ``title`` defaults to the ``label`` column."""
    with mpl.rc_context(_RC):
        fig = _figure((6.8, 5.6))
        ax = fig.add_subplot()
        handles = plot_fig2_panel(ax, summary_ds, calibration_ds, title, n)
        if handles:
            fig.legend(
                handles=list(handles.values()),
                labels=list(handles.keys()),
                loc="outside lower center",
                ncol=2,
                frameon=False,
            )
    return fig


def fig2_grid(panels: Sequence[tuple[str | None, pd.DataFrame, pd.DataFrame | None, int | None]]) -> Figure:
    """Fig. 2: one panel per data set (2 columns; 2×2 for four data sets) with one shared legend below.

    ``panels`` holds ``(title, summary_ds, calibration_ds, n)`` per data set, in reading order (the paper's
    order is Diabetes, Breast Cancer, AMI, Wine).
    """
    k = max(len(panels), 1)
    ncols = 1 if k == 1 else 2
    nrows = math.ceil(k / ncols)
    with mpl.rc_context(_RC):
        fig = _figure((6.2 * ncols, 4.9 * nrows + 0.9))
        axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
        handles: dict[str, Any] = {}
        for ax, (title, summary_ds, calibration_ds, n) in zip(axes, panels, strict=False):
            for label, h in plot_fig2_panel(ax, summary_ds, calibration_ds, title, n).items():
                handles.setdefault(label, h)
        for ax in axes[len(panels) :]:
            ax.set_visible(False)
        order = [METHOD_STYLE[m]["label"] for m in METHOD_STYLE] + [CHANCE_LABEL, BAND_LABEL, INFEASIBLE_LABEL]
        ordered = {lab: handles[lab] for lab in order if lab in handles}
        ordered.update({lab: h for lab, h in handles.items() if lab not in ordered})
        _legend_below(fig, ordered)
    return fig


def _legend_below(fig: Figure, handles: dict) -> None:
    """One shared legend under all panels (label → artist), at most four columns."""
    if handles:
        fig.legend(
            handles=list(handles.values()),
            labels=list(handles.keys()),
            loc="outside lower center",
            ncol=min(4, len(handles)),
            frameon=False,
        )


# --------------------------------------------------------------------------------------------- Fig. 3


def fig3(curves: pd.DataFrame, bound_label: str = BOUND_LABEL, show_upper_tail: bool = True) -> Figure:
    """Fig. 3: error (left, log y) and δ (right, log y) against the number of iterations T, per data set.

    Left: ``error_mean`` with the band ``error_lo..error_hi`` and, dashed in the same colour, ``bound_sin``
    (Theorem 3; when every bound equals 1 a note says it is vacuous). Right: the two-sided ``delta`` with a
    band ``± 1.96 delta_se`` (Monte Carlo error of the accountant), ``delta_upper`` (the upper-tail δ⁺ of
    Theorem 2, dash-dot; ``show_upper_tail=False`` hides it) and the data set's δ limit at the curve's ε as
    a dotted horizontal line of the same colour. Coinciding bound or limit lines of several data sets are
    drawn with interleaved dashes so every colour stays visible.
    """
    curves = curves if curves is not None else pd.DataFrame()
    with mpl.rc_context(_RC):
        fig = _figure((12.5, 5.3))
        ax_err, ax_del = fig.subplots(1, 2)
        handles: dict[str, Any] = {}
        datasets = list(dict.fromkeys(curves["dataset"])) if "dataset" in curves else []
        eps_vals = sorted(set(curves["eps"].dropna().astype(float))) if "eps" in curves else []
        eps_txt = ", ".join(_fmt_eps(e) for e in eps_vals) if eps_vals else "?"
        err_vals: list[float] = []
        del_vals: list[float] = []
        all_vacuous = bool(datasets)
        n_ds = max(len(datasets), 1)
        has_bound = has_se = has_upper = has_det = False
        for i, ds in enumerate(datasets):
            g = curves[curves["dataset"] == ds].sort_values("T")
            color = _DATASET_COLORS[i % len(_DATASET_COLORS)]
            label = str(g["label"].iloc[0]) if "label" in g else str(ds)
            T = g["T"].to_numpy(dtype=float)
            y = g["error_mean"].to_numpy(dtype=float)
            lo = g["error_lo"].to_numpy(dtype=float) if "error_lo" in g else y
            hi = g["error_hi"].to_numpy(dtype=float) if "error_hi" in g else y
            (line,) = ax_err.plot(T, y, color=color, marker="o", label=label, zorder=3)
            ax_err.fill_between(T, lo, hi, color=color, alpha=0.15 if n_ds > 2 else 0.2, linewidth=0, zorder=2)
            handles[label] = line
            err_vals += [*y, *lo, *hi]
            if "bound_sin" in g:
                b = g["bound_sin"].to_numpy(dtype=float)
                # interleaved dashes: coinciding bounds of several data sets (e.g. all = 1) stay distinguishable
                ax_err.plot(
                    T, b, color=color, linestyle=(3.0 * i, (3.0, 3.0 * (n_ds - 1) + 3.0)), linewidth=1.5, zorder=2.5
                )
                err_vals += list(b)
                has_bound |= bool(np.isfinite(b).any())
                all_vacuous &= bool(np.all(b[np.isfinite(b)] >= 1.0 - 1e-12)) and np.isfinite(b).any()
            else:
                all_vacuous = False
            if "bound_det" in g:
                bd = g["bound_det"].to_numpy(dtype=float)
                ax_err.plot(T, bd, color=color, linestyle=":", linewidth=1.3, zorder=2.5)
                err_vals += list(bd)
                has_det = bool(np.isfinite(bd).any())

            d = g["delta"].to_numpy(dtype=float) if "delta" in g else np.full(T.size, np.nan)
            ax_del.plot(T, d, color=color, marker="o", zorder=3)
            del_vals += list(d)
            if "delta_se" in g:
                se = g["delta_se"].to_numpy(dtype=float)
                if np.isfinite(se).any():
                    lo_d = np.where(d - 1.96 * se > 0, d - 1.96 * se, d / 10)
                    ax_del.fill_between(T, lo_d, d + 1.96 * se, color=color, alpha=0.2, linewidth=0, zorder=2)
                    has_se = True
            if show_upper_tail and "delta_upper" in g:
                du = g["delta_upper"].to_numpy(dtype=float)
                if np.isfinite(du).any():
                    ax_del.plot(T, du, color=color, linestyle="-.", linewidth=1.0, zorder=2.5)
                    del_vals += list(du)
                    has_upper = True
            if "delta_limit" in g:
                lim = _positive(g["delta_limit"])
                if lim.size:
                    ax_del.axhline(
                        lim[0], color=color, linestyle=(2.0 * i, (1.5, 2.0 * n_ds - 1.5)), linewidth=1.8, zorder=1
                    )
                    del_vals.append(lim[0])

        if has_bound:
            handles[bound_label] = Line2D([], [], color="0.2", linestyle="--", linewidth=1.4)
        if has_det:
            handles[DET_LABEL] = Line2D([], [], color="0.2", linestyle=":", linewidth=1.3)
        handles[BAND_LABEL] = Patch(facecolor="0.5", alpha=0.25)
        handles[f"δ limit at ε = {eps_txt}"] = Line2D([], [], color="0.2", linestyle=":", linewidth=1.6)
        if has_se:
            handles["δ ± 1.96 s.e. (Monte Carlo, band)"] = Patch(facecolor="0.5", alpha=0.2)
        if has_upper:
            handles["upper-tail δ⁺ of Theorem 2"] = Line2D([], [], color="0.2", linestyle="-.", linewidth=1.0)

        for ax, vals in ((ax_err, err_vals), (ax_del, del_vals)):
            ax.set_yscale("log", nonpositive="mask")
            pos = _positive(vals)
            if pos.size:
                ax.set_ylim(pos.min() / 2.5, pos.max() * 2.5)
            ax.tick_params(labelsize=_RC["xtick.labelsize"])
            ax.set_xlabel("iterations T")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        fallback_note = ""
        if "params_source" in curves:
            fallback = curves.loc[curves["params_source"] != "calibrated"]
            names = sorted({str(r) for r in (fallback["label"] if "label" in fallback else fallback["dataset"])})
            if names:
                fallback_note = (
                    f"No parameters met the δ limit at ε = {eps_txt} for {', '.join(names)}: "
                    "the least-δ calibration candidate is shown instead."
                )
        if all_vacuous:
            ax_err.text(
                0.02,
                0.965,
                "Theorem 3 bound = 1 (vacuous) at every T",
                transform=ax_err.transAxes,
                ha="left",
                va="top",
                fontsize=9,
                color="0.25",
                bbox={"boxstyle": "round,pad=0.25", "facecolor": "white", "edgecolor": "0.7", "alpha": 0.9},
            )
        ax_err.set_ylabel(ERROR_LABEL)
        ax_err.set_title(f"Error vs iterations (ε = {eps_txt}, other parameters fixed)")
        ax_del.set_ylabel(f"δ at ε = {eps_txt} (log scale)")
        ax_del.set_title(f"Privacy δ vs iterations (ε = {eps_txt})")
        if fallback_note:
            fig.suptitle(fallback_note.strip(), fontsize=9.5, color="0.3")
        _legend_below(fig, handles)
    return fig


# --------------------------------------------------------------------------------------------- output


def save_figure(fig: Figure, png_path: str | PathLike[str], pdf_path: str | PathLike[str], dpi: int = 150) -> None:
    """Write ``fig`` as PNG and PDF, each atomically (temporary file in the target directory, then rename).

    The figure is closed afterwards (released from :mod:`matplotlib.pyplot` if it is registered there).
    """
    try:
        with mpl.rc_context(_RC):
            with atomic_write(png_path) as tmp:
                fig.savefig(tmp, format="png", dpi=dpi)
            with atomic_write(pdf_path) as tmp:
                fig.savefig(tmp, format="pdf")
    finally:
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is not None:
            plt.close(fig)
