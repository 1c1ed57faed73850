"""Figures of the local-DP PCA experiments (Wang & Xu, Figs. 3 and 4): error against n, p and ε.

Input: the ``summary`` table of :func:`ddppm.experiments.ldppca.summarise` for one figure (one row per group,
panel, point, σ mode and method) and its ``theory_fit`` table. Layout: one row of panels per group (k, and s
for the sparse case), one column per config panel. Each curve is one (method, σ calibration): mean
``||V̂V̂ᵀ − VVᵀ||_F`` over the runs with the 2.5–97.5 % band of the runs, dodged a few points sideways on screen
(not in data units: the points stay at their x) so none hides another; points whose σ does not achieve the target
δ at the true sensitivity √2 are drawn in the infeasible colour. Grey: the chance level ``sqrt(2k − 2k²/p)``;
dotted vertical: the paper's own setting; black dashed / dotted: the rate of the first method's theorem as printed
/ as its proof gives, each with its least-squares constant (legend), drawn where at least two neighbouring points
of it are below the chance level. The legend lists only what is drawn.
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
from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator
from matplotlib.transforms import ScaledTranslation

from ddppm.methods import available_methods
from ddppm.plotting.style import _RC, BAND_LABEL, INFEASIBLE_COLOR, _figure, method_styles

__all__ = ["ldppca_figure"]

MODE_COLORS = {"paper": "#1f77b4", "corrected": "#ff7f0e", "analytic": "#2ca02c"}
MODE_LABELS = {
    "paper": "σ as printed (Δ = 1)",
    "corrected": "σ classic, Δ = √2",
    "analytic": "σ analytic, Δ = √2",
}
METHOD_LINES = ("-", "-.", (0, (1, 1)))
RATE_LINES = {"stated": (0, (5, 2)), "proof": (0, (1.5, 1.5))}
DODGE_POINTS = 4.0
"""Sideways distance between neighbouring curves, in points on screen (markers are 3.8 points wide)."""
RATE_LABELS = {"stated": "as printed", "proof": "from its proof"}
AXIS_LABELS = {"n": "users n", "p": "dimension p", "eps": "ε"}
ERROR_LABEL = r"$\|\hat V\hat V^\top - VV^\top\|_F$"
CHANCE_LABEL = r"chance level $\sqrt{2k - 2k^2/p}$"
RATE_SHAPES = {
    ("Theorem 2", "stated"): r"$\propto \frac{\lambda_1}{g}\sqrt{kp\sigma^2/n}$",
    ("Theorem 2", "proof"): r"$\propto \sqrt{k/n}\,(\sqrt{p}\sigma + \sqrt{\lambda_1 \mathrm{tr}\Sigma})/g$",
    ("Theorem 4", "stated"): r"$\propto \frac{\lambda_1}{g} s\sqrt{\sigma^2\log p/n}$",
    ("Theorem 4", "proof"): r"$\propto s(\sigma+\lambda_1)\sqrt{\log p/n}/g$",
}


def _fmt(value: float) -> str:
    if value >= 1e4:
        exponent = int(np.floor(np.log10(value)))
        mantissa = value / 10**exponent
        power = rf"10^{{{exponent}}}"  # mathtext: a superscript, not the characters "^12"
        return f"${power}$" if abs(mantissa - 1) < 1e-9 else rf"${mantissa:.3g}\cdot {power}$"
    return f"{value:g}"


def _panel_title(part: pd.DataFrame, varied: str) -> str:
    fixed = [f"{key} = {_fmt(float(part[key].iloc[0]))}" for key in ("n", "p", "eps") if key != varied]
    return f"vs {AXIS_LABELS[varied]} ({', '.join(fixed).replace('eps', 'ε')})"


def _group_label(k: int, s: Any) -> str:
    return f"k = {k}" + ("" if pd.isna(s) else f", s = {int(s)}")


def _series(summary: pd.DataFrame) -> list[tuple[str, str]]:
    methods = list(dict.fromkeys(summary["method"]))
    modes = [m for m in MODE_COLORS if m in set(summary["sigma_mode"])]
    return [(method, mode) for method in methods for mode in modes]


def _draw_rates(ax, part: pd.DataFrame, fits: pd.DataFrame, method: str, handles: dict) -> bool:
    """Fitted rate shapes of ``method`` for one σ mode (the paper's if drawn); False if none was drawn.

    A rate is drawn where it is below the chance level; with fewer than two such neighbouring points there is no
    segment to draw (a lone point of a line is invisible), so it is left out and gets no legend entry."""
    modes = [m for m in MODE_COLORS if m in set(part["sigma_mode"])]
    curve = part[(part["method"] == method) & (part["sigma_mode"] == modes[0])].sort_values("x")
    drawn = False
    for rate, style in RATE_LINES.items():
        row = fits[(fits["method"] == method) & (fits["rate"] == rate)]
        if curve.empty or row.empty or not np.isfinite(row["constant"].iloc[0]):
            continue
        y = curve[f"theory_{rate}"].to_numpy(float)
        x = curve["x"].to_numpy(float)
        y = np.where(y <= 1.05 * curve["chance"].to_numpy(float), y, np.nan)
        if not (np.isfinite(y[:-1]) & np.isfinite(y[1:])).any():
            continue
        theorem = str(row["theorem"].iloc[0])
        label = f"{theorem} {RATE_LABELS[rate]} {RATE_SHAPES.get((theorem, rate), '')} (fitted C, {modes[0]} σ)"
        (line,) = ax.plot(x, y, color="black", linestyle=style, linewidth=1.2, zorder=4)
        handles.setdefault(label, line)
        drawn = True
    return drawn


def ldppca_figure(
    summary: pd.DataFrame,
    fits: pd.DataFrame,
    title: str,
    paper_point: dict[str, float] | None = None,
) -> Figure:
    """The figure of one experiment figure (``fig3`` or ``fig4``); see the module docs.

    Parameters
    ----------
    summary : DataFrame
        Rows of one figure from :func:`ddppm.experiments.ldppca.summarise`.
    fits : DataFrame
        Its ``theory_fit`` rows (constants per panel, method and rate).
    title : str
        Figure title (settings, σ modes).
    paper_point : dict, optional
        The paper's own ``n``, ``p`` and ``eps``: a dotted vertical line where a panel varies one of them.
    """
    panels = sorted(summary["panel"].unique())
    groups = summary[["k", "sparsity"]].drop_duplicates().sort_values(["k", "sparsity"]).itertuples(index=False)
    groups = list(groups)
    series = _series(summary)
    styles = method_styles_all()
    first_method = str(summary["method"].iloc[0]) if len(summary) else ""
    methods_order = list(dict.fromkeys(summary["method"]))
    with mpl.rc_context(_RC):
        ncol = 2 if len(panels) >= 3 else 1
        legend_rows = int(np.ceil((len(series) + 6) / ncol))  # curves plus the reference entries
        fig = _figure((3.4 * len(panels) + 0.6, 2.45 * len(groups) + 1.0 + 0.25 * legend_rows))
        axes = np.atleast_2d(fig.subplots(len(groups), len(panels), squeeze=False, sharey="row"))
        handles: dict[str, Any] = {}
        for row, (k, s) in enumerate(groups):
            in_group = (summary["k"] == k) & (summary["sparsity"].isna() if pd.isna(s) else summary["sparsity"] == s)
            for col, panel in enumerate(panels):
                ax = axes[row, col]
                part = summary[in_group & (summary["panel"] == panel)]
                varied = str(part["varied"].iloc[0])
                chance = part[["x", "chance"]].drop_duplicates().sort_values("x")
                (line,) = ax.plot(chance["x"], chance["chance"], color="0.45", linewidth=1.4, zorder=1)
                handles.setdefault(CHANCE_LABEL, line)
                xs = np.sort(part["x"].unique())
                for i, (method, mode) in enumerate(series):
                    curve = part[(part["method"] == method) & (part["sigma_mode"] == mode)].sort_values("x")
                    if curve.empty:
                        continue
                    # A few points sideways on screen, whatever the axis spans: a dodge in data units put points
                    # of a two-value axis (p = 30, 60) where they read as other dimensions.
                    dodge = ax.transData + ScaledTranslation(
                        DODGE_POINTS * (i - (len(series) - 1) / 2) / 72, 0, fig.dpi_scale_trans
                    )
                    x = curve["x"].to_numpy(float)
                    color = MODE_COLORS[mode]
                    linestyle = METHOD_LINES[methods_order.index(method) % len(METHOD_LINES)]
                    marker = styles.get(method, {}).get("marker", "o")
                    ax.fill_between(
                        x, curve["error_lo"], curve["error_hi"], color=color, alpha=0.13, linewidth=0, transform=dodge
                    )
                    (line,) = ax.plot(
                        x, curve["error_mean"], color=color, linestyle=linestyle, marker=marker, markersize=3.8,
                        linewidth=1.3, zorder=3, transform=dodge,
                    )  # fmt: skip
                    label = f"{styles.get(method, {}).get('label', method)} — {MODE_LABELS[mode]}"
                    handles.setdefault(label, line)
                    bad = ~curve["feasible"].to_numpy(bool)
                    if bad.any():
                        # The point itself in the infeasible colour, edged in its series' colour: a ring around
                        # it covered the neighbouring series where most points miss.
                        miss = ax.scatter(
                            x[bad], curve["error_mean"].to_numpy(float)[bad], s=16, marker=marker,
                            facecolors=INFEASIBLE_COLOR, edgecolors=color, linewidths=0.6, zorder=5, transform=dodge,
                        )  # fmt: skip
                        handles.setdefault("σ misses δ at the true sensitivity √2 (achieved δ > target)", miss)
                if not _draw_rates(ax, part, fits[fits["panel"] == panel], first_method, handles):
                    ax.text(
                        0.03, 0.04, "rates not drawn: fewer than two\nneighbouring points below chance",
                        transform=ax.transAxes, fontsize=7.5, color="0.35", style="italic", va="bottom",
                    )  # fmt: skip
                if paper_point is not None and varied in paper_point and xs[0] <= paper_point[varied] <= xs[-1]:
                    ax.axvline(paper_point[varied], color="0.55", linestyle=":", linewidth=1.0, zorder=0)
                    handles.setdefault("the paper's setting", Line2D([], [], color="0.55", linestyle=":"))
                ax.set_xscale("log")
                ax.set_yscale("log")
                if varied == "p":  # few values: label each one
                    ax.xaxis.set_major_locator(FixedLocator(xs))
                    ax.xaxis.set_major_formatter(FixedFormatter([f"{v:g}" for v in xs]))
                    ax.xaxis.set_minor_locator(NullLocator())
                if row == 0:
                    ax.set_title(_panel_title(part, varied), fontsize=9.5)
                if row == len(groups) - 1:
                    ax.set_xlabel(AXIS_LABELS[varied])
                if col == 0:
                    ax.set_ylabel(f"{_group_label(k, s)}\n{ERROR_LABEL}")
            low = summary.loc[in_group, "error_lo"].replace(0, np.nan).min()
            high = summary.loc[in_group, "chance"].max()
            axes[row, 0].set_ylim(max(low / 1.6, 1e-4), high * 1.6)
        handles[BAND_LABEL] = Patch(facecolor="0.6", alpha=0.3)
        fig.suptitle(textwrap.fill(title, width=int(28 * len(panels) + 20)), fontsize=11)
        # curves first (in series order), then the reference lines and marks
        curves = [label for label in handles if " — σ " in label]
        order = curves + [label for label in handles if label not in curves]
        fig.legend(
            handles=[handles[label] for label in order], labels=order, loc="outside lower center",
            ncol=ncol,
            frameon=False, fontsize=8.5,
        )  # fmt: skip
    return fig


def method_styles_all() -> dict[str, dict[str, Any]]:
    """Legend label and marker of every registered method of every task."""

    styles = method_styles()
    styles.update({name: m.plot_style() for name, m in available_methods(task=None).items()})
    return styles
