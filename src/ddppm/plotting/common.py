"""The common task's figure: error against ε for every method, one panel per (k, trust model), per data set."""

from __future__ import annotations

from typing import Any

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ddppm.plotting.style import _RC, INFEASIBLE_COLOR, _figure, _legend_below, _set_log_eps_axis

TRUST_PANELS = ("central", "secure_aggregation", "gossip", "local")
TRUST_TITLES = {
    "central": "trusted curator (central)",
    "secure_aggregation": "secure aggregation (noise cancels only in sums)",
    "gossip": "gossip (every message seen)",
    "local": "no trusted party (every release public)",
}
ERROR_LABEL = "subspace error ‖V̂V̂ᵀ − VVᵀ‖_F / √(2k)"
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
           "#393b79", "#637939", "#8c6d31", "#d6616b", "#3182bd", "#31a354")  # fmt: skip
"""Colours by the method's place in the table (tab10, then darker shades): one colour per method of the common
task (up to 16), so no two curves of a figure share one."""


def common_figure(summary: pd.DataFrame, styles: dict[str, dict[str, Any]], title: str = "") -> Figure:
    """Rows: k; columns: the trust models present. Each method is drawn in its own trust model's panel with the
    95 % confidence band of its mean, dodged sideways so none hides another; points whose δ exceeds the limit
    are ringed in the infeasible colour; the dashed line is the chance level (a uniformly random subspace)."""
    trusts = [t for t in TRUST_PANELS if t in set(summary["trust_model"])]
    colours = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(dict.fromkeys(summary["method"]))}
    ranks = sorted(set(summary["k"]))
    eps = np.unique(summary["eps"].to_numpy(float))
    limits = summary.groupby("eps")["delta_limit"].first().to_dict() if "delta_limit" in summary else {}
    limits = limits if len(set(limits.values())) > 1 else {}
    with mpl.rc_context(_RC):
        fig = _figure((4.4 * len(trusts), 3.3 * len(ranks) + 1.6))
        axes = np.atleast_2d(fig.subplots(len(ranks), len(trusts), squeeze=False, sharey="row"))
        handles: dict[str, Any] = {}
        for r, k in enumerate(ranks):
            at_k = summary[summary["k"] == k]
            for c, trust in enumerate(trusts):
                ax = axes[r, c]
                panel = at_k[at_k["trust_model"] == trust]
                names = list(dict.fromkeys(panel["method"]))
                for i, name in enumerate(names):
                    g = panel[panel["method"] == name].sort_values("eps")
                    st = {**styles[name], "color": colours[name]}
                    if (
                        "privacy_column" in g and (g["privacy_column"] == "searched").any()
                    ):  # never read as a certified δ
                        st["label"] = f"{st['label']} (searched δ: at least)"
                    x = g["eps"].to_numpy(float) * 10 ** (0.025 * (i - (len(names) - 1) / 2))
                    y, lo, hi = (g[col].to_numpy(float) for col in ("error_mean", "error_ci_lo", "error_ci_hi"))
                    (line,) = ax.plot(
                        x, y, color=st["color"], marker=st.get("marker", "o"), linestyle=st.get("linestyle", "-"), ms=4
                    )
                    ax.fill_between(x, lo, hi, color=st["color"], alpha=0.2, linewidth=0)
                    handles[st["label"]] = line
                    over = ~g["feasible"].astype(bool).to_numpy()
                    if over.any():
                        handles["δ of this σ exceeds the limit"] = ax.scatter(
                            x[over],
                            y[over],
                            s=80,
                            facecolor="none",
                            edgecolor=INFEASIBLE_COLOR,
                            linewidth=1.5,
                            zorder=4,
                        )
                chance = float(at_k["chance_error"].iloc[0])
                ax.axhline(chance, color="0.4", linestyle="--", linewidth=1)
                _set_log_eps_axis(ax, eps)
                if len(limits) > 1:  # each ε has its own δ limit (the journal's): name it under the ε
                    ax.set_xticklabels([f"{e:g}\nδ≤{limits[e]:.0e}" for e in eps], fontsize=7)
                ax.set_ylim(0, min(1.02, chance * 1.12))
                ax.set_title(f"k = {k}: {TRUST_TITLES[trust]}", fontsize=9)
                ax.set_xlabel("ε (whole run)" + (", with its δ limit" if len(set(limits.values())) > 1 else ""))
                if c == 0:
                    ax.set_ylabel(ERROR_LABEL)
        handles["chance level (random k-subspace)"] = Line2D([], [], color="0.4", linestyle="--")
        handles["band: 95 % confidence interval of the mean"] = Patch(facecolor="0.5", alpha=0.3)
        if title:
            fig.suptitle(title, fontsize=10)
        # Long method labels: two columns keep the legend inside the figure's width at any number of panels.
        _legend_below(fig, handles, ncol=2 if len(trusts) < 4 else 3)
    return fig
