"""The radius study's figure (:mod:`ddppm.studies.radius`): error against ε, fixed against private clipping radius.

One row of panels per data set, one column per k. Per method (its own colour, from the registry) the mean error
under the private radius (solid) and under the fixed one (dashed), each with its 95 % interval over the
preprocessing draws as a band; ε on a log axis, the error on a log axis over the range the curves span (the
errors run from near chance at small ε to below 0.01 at ε = 10⁴, so a linear axis would hide the fall).
"""

from __future__ import annotations

from typing import Any

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ddppm.plotting.style import _RC, _legend_below, _set_log_eps_axis

RADIUS_LINES = {"adaptive": "-", "fixed": "--"}
RADIUS_WORDS = {"adaptive": "private radius (noisy histogram of the rows' norms; default)",
                "fixed": "fixed radius c√d (c = common.preprocessing.row_scale)"}  # fmt: skip
ADJACENCY_WORDS = {"replace_one": "replace-one", "distance_one": "distance-one (‖x − x′‖ ≤ 1)"}


def _eps_label(eps: float) -> str:
    """``1000`` as ``10³``: the grid runs to 10⁴, whose digits would crowd the axis."""
    exponent = np.log10(eps)
    if eps >= 1000 and np.isclose(exponent, round(exponent)):
        return "10" + str(round(exponent)).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{eps:g}"


def _error_range(rows: pd.DataFrame) -> tuple[float, float]:
    """Log-axis limits around every curve and band of one panel (bands cut at 1e-4 below, 1 above)."""
    low = rows["error_ci_lo"].where(rows["error_ci_lo"] > 0, rows["error_mean"]).clip(lower=1e-4)
    high = rows["error_ci_hi"].clip(upper=1.0)
    return float(low.min()) / 1.4, min(float(high.max()) * 1.4, 1.05)


def radius_figure(summary: pd.DataFrame, labels: dict[str, str], methods: list[str], styles: dict[str, dict[str, Any]],
                  adjacency: str = "replace_one") -> Figure:  # fmt: skip
    """The figure from the study's summary: ``labels`` names each data set (in the order to draw), ``methods`` the
    methods to draw, ``styles`` their colours and legend labels (:func:`ddppm.plotting.style.method_styles`)."""
    datasets = [ds for ds in labels if ds in set(summary["dataset"])]
    ranks = sorted(int(k) for k in summary["k"].unique())
    delta = float(summary["delta_limit"].max())
    with mpl.rc_context(_RC):
        fig = Figure(figsize=(4.6 * len(ranks) + 0.6, 2.7 * len(datasets) + 2.0), layout="constrained")
        axes = np.atleast_2d(fig.subplots(len(datasets), len(ranks), squeeze=False))
        handles: dict[str, Any] = {}
        for row, dataset in enumerate(datasets):
            for column, k in enumerate(ranks):
                ax = axes[row, column]
                at = summary[(summary["dataset"] == dataset) & (summary["k"] == k) & summary["method"].isin(methods)]
                if at.empty:  # a data set of dimension ≤ k
                    ax.set_visible(False)
                    continue
                for method in methods:
                    style = styles.get(method, {"color": "#000000", "label": method})
                    for radius, line in RADIUS_LINES.items():
                        curve = at[(at["method"] == method) & (at["radius"] == radius)].sort_values("eps")
                        ax.plot(curve["eps"], curve["error_mean"], line, marker="o", ms=3.2, color=style["color"])
                        low = curve["error_ci_lo"].where(curve["error_ci_lo"] > 0, curve["error_mean"])
                        ax.fill_between(curve["eps"], low, curve["error_ci_hi"], color=style["color"], alpha=0.13,
                                        lw=0)  # fmt: skip
                    handles[style["label"]] = Line2D([], [], color=style["color"], marker="o", ms=3.2)
                eps = np.sort(at["eps"].unique())
                _set_log_eps_axis(ax, eps)
                ax.set_xticklabels([_eps_label(e) for e in eps])
                ax.set_yscale("log")
                ax.set_ylim(*_error_range(at))
                n, d = int(at["n"].iloc[0]), int(at["d"].iloc[0])
                shape = "" if "n = " in labels[dataset] else f" (n = {n:,}, d = {d})"  # a label may name its shape
                ax.set_title(f"{labels[dataset]}{shape}, k = {k}", fontsize=10.5)
                if column == 0:
                    ax.set_ylabel("mean error (log)")
                if row == len(datasets) - 1:
                    ax.set_xlabel("ε (log)")
        for radius, line in RADIUS_LINES.items():
            handles[RADIUS_WORDS[radius]] = Line2D([], [], color="#000000", ls=line)
        handles["band: 95 % interval of the mean (Student's t over the preprocessing draws)"] = Patch(
            color="#000000", alpha=0.13)
        fig.suptitle("Study 'radius': the clipping radius, fixed (dashed) against private (solid)\nfrom the raw "
                     f"records, certified (ε, δ = {delta:g})-DP, {ADJACENCY_WORDS.get(adjacency, adjacency)}; error "
                     "‖V̂V̂ᵀ − VVᵀ‖_F / √(2k)")  # fmt: skip
        _legend_below(fig, handles, ncol=2)
    return fig
