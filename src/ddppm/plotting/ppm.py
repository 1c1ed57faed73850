"""Figures of the private power method experiment (Nicolas et al., arXiv:2411.01931): their Fig. 1 and Fig. 2.

Inputs are the experiment's tables (columns in docs/ppm.md): ``errors`` (one row per method × ε) for
:func:`fig1` and ``sensitivity_ratio`` (one row per n × k) for :func:`fig2`.
"""

from __future__ import annotations

import textwrap
from typing import Any

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ddppm.methods import available_methods
from ddppm.methods.ppm import PRIVATE_SUBSPACE
from ddppm.plotting.style import (
    _RC,
    INFEASIBLE_COLOR,
    _figure,
    _fmt_eps,
    _legend_below,
    _set_log_eps_axis,
    band_mean_label,
    panel_grid,
)

ERROR_LABEL = r"relative error $\|\tilde R_p - R_p\|_F \,/\, \|R_p\|_F$"
OVER_TARGET_LABEL = "σ does not give the target ε (exact accounting)"
NO_METHOD_LABEL = "purple span: no method's σ gives the target ε here"


def _styles() -> dict[str, dict[str, Any]]:

    return {name: m.plot_style() for name, m in available_methods(task=PRIVATE_SUBSPACE).items()}


def fig1(summary: pd.DataFrame, noiseless: float | None = None, title: str = "", level: float = 0.99) -> Figure:
    """Their Fig. 1: mean relative error of the low-pass filter (log y) against the target ε (log x), one curve
    per method with its bootstrap band (``error_lo..error_hi``), curves dodged sideways by a few per cent of a
    decade so none hides another.

    Points whose σ does not give the target ε (``meets_target`` False: the paper's σ beyond
    ``ε ≈ 2.34 ln(1/δ)`` by zCDP, a little further exactly) get a ring in the infeasible colour, and the ε range
    where every method's σ fails is shaded in it; the top axis gives the ε that σ really achieves (exact, from
    ``eps_exact``). ``noiseless`` draws the error of the same power method without noise (the floor as ε → ∞).
    """
    styles = _styles()
    with mpl.rc_context(_RC):
        fig = _figure((9.6, 7.4))
        ax = fig.subplots()
        handles: dict[str, Any] = {}
        extras: dict[str, Any] = {}
        names = [m for m in styles if m in set(summary["method"])]
        eps = np.unique(summary["eps"].to_numpy(dtype=float))
        for i, name in enumerate(names):
            st = styles[name]
            g = summary[summary["method"] == name].sort_values("eps")
            x = g["eps"].to_numpy(dtype=float) * 10 ** (0.018 * (i - (len(names) - 1) / 2))
            y, lo, hi = (g[c].to_numpy(dtype=float) for c in ("error_mean", "error_lo", "error_hi"))
            (line,) = ax.plot(x, y, color=st["color"], marker=st["marker"], linestyle=st["linestyle"], zorder=3)
            ax.fill_between(x, lo, hi, color=st["color"], alpha=0.18, linewidth=0, zorder=2)
            handles[st["label"]] = line
            over = ~g["meets_target"].astype(bool).to_numpy()
            if over.any():
                extras[OVER_TARGET_LABEL] = ax.scatter(
                    x[over], y[over], s=80, facecolor="none", edgecolor=INFEASIBLE_COLOR, linewidth=1.4, zorder=4
                )
        failing = summary.groupby("eps")["meets_target"].apply(lambda s: not s.astype(bool).any())
        bad = np.sort(failing[failing].index.to_numpy(dtype=float))
        if bad.size:
            ax.axvspan(bad.min() / 10**0.12, bad.max() * 10**0.12, color=INFEASIBLE_COLOR, alpha=0.1, lw=0, zorder=0)
            extras[NO_METHOD_LABEL] = Patch(facecolor=INFEASIBLE_COLOR, alpha=0.1)
        if noiseless is not None and np.isfinite(noiseless):
            label = f"no noise (same X⁰, same L): {noiseless:.2g}"
            extras[label] = ax.axhline(noiseless, color="0.35", linestyle=(0, (6, 3)), linewidth=1.1, zorder=1)
        extras[band_mean_label(level, "bootstrap")] = Patch(facecolor="0.5", alpha=0.3)
        handles.update(extras)
        ax.set_yscale("log")
        positive = summary[["error_lo", "error_mean"]].to_numpy(dtype=float)
        positive = positive[np.isfinite(positive) & (positive > 0)]
        ax.set_ylim(max(positive.min() / 1.5, 1e-6), max(1.0, summary["error_hi"].max()) * 1.3)
        _set_log_eps_axis(ax, eps)
        ax.set_xticks(eps, [f"{e:.3g}" if e < 1000 else f"{e:.0f}" for e in eps], rotation=45)
        ax.set_xlabel("target ε (δ fixed)")
        ax.set_ylabel(ERROR_LABEL)
        exact = summary.groupby("eps")["eps_exact"].max()
        if (exact > exact.index.to_numpy() * (1 + 1e-9)).any():
            top = ax.secondary_xaxis("top")
            top.set_xticks(eps[::2], [_fmt_eps(float(f"{exact[e]:.2g}")) for e in eps[::2]], fontsize=7.5)
            top.set_xlabel("ε the σ really achieves (exact accounting; every other tick)", fontsize=8.5)
        ax.set_title("\n".join(textwrap.fill(line, 110) for line in title.splitlines()), fontsize=10)
        fig.legend(handles.values(), handles.keys(), loc="outside lower center", ncol=2, frameon=False)
    return fig


def fig2(table: pd.DataFrame) -> Figure:
    """Their Fig. 2: the first-step ratio r(k, n) of the prior to their sensitivity bound against k, one panel
    per n: empirical (means over the draws, with the range of the per-draw ratios) and Approximation 6.2."""
    sizes = sorted(table["n"].unique())
    with mpl.rc_context(_RC):
        fig, axes = panel_grid(len(sizes), 3.6, 1.0)
        for ax, n in zip(axes, sizes, strict=True):
            g = table[table["n"] == n].sort_values("k")
            k = g["k"].to_numpy()
            ax.fill_between(k, g["ratio_run_min"], g["ratio_run_max"], color="#2ca02c", alpha=0.2, linewidth=0)
            ax.plot(k, g["ratio_empirical"], "o", color="#2ca02c", markersize=3.2, zorder=3)
            ax.plot(k, g["ratio_approximation"], "-", color="#1f77b4", linewidth=1.8, zorder=2)
            ax.set_title(f"n = {n:,} ({int(g['runs'].iloc[0])} draws of X⁰ per k)")
            ax.set_xlabel("block size k")
            ax.set_ylabel(r"$r(k, n) = E[\sqrt{k}\,\|X^0\|_{\max}] \,/\, E[\max_i \|X^0_{i:}\|_2]$")
            lo = min(g["ratio_run_min"].min(), g["ratio_approximation"].min())
            hi = max(g["ratio_run_max"].max(), g["ratio_approximation"].max())
            ax.set_ylim(lo - 0.08 * (hi - lo), hi + 0.08 * (hi - lo))
        handles = {
            "empirical (mean over draws)": Line2D([], [], marker="o", color="#2ca02c", linestyle="none"),
            "shaded band: range (min to max) of the per-draw ratios": Patch(facecolor="#2ca02c", alpha=0.3),
            "Approximation 6.2 (their eq. 13)": Line2D([], [], color="#1f77b4", linewidth=1.8),
        }
        fig.suptitle(
            "Nicolas et al. (arXiv:2411.01931), Fig. 2: ratio r(k, n) of the prior sensitivity bound to theirs at the "
            "first step\n(no noise is drawn: a property of the start X⁰ only)",
            fontsize=10,
        )
        _legend_below(fig, handles)
    return fig
