"""The common task's figure: error against ε for every method, one panel per (k, trust model), per data set."""

from __future__ import annotations

import textwrap
from typing import Any

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ddppm.common_task.raw_records import PREPROCESSING_ONLY, reference_labels
from ddppm.plotting.style import _RC, INFEASIBLE_COLOR, _figure, _legend_below, _set_log_eps_axis, band_mean_label

TRUST_PANELS = ("central", "secure_aggregation", "gossip", "local")
TRUST_TITLES = {
    "central": "trusted curator (central)",
    "secure_aggregation": "secure aggregation (noise cancels only in sums)",
    "gossip": "gossip (every message seen)",
    "local": "no trusted party (every release public)",
}
ERROR_LABEL = "subspace error ‖V̂V̂ᵀ − VVᵀ‖_F / √(2k)"


UNFINISHED_LABEL = "mean of the fits that finished in the time budget (others stopped)"

AT_CHANCE = 0.02
"""A panel whose every mean error is within this of the chance level says so in words (the curves overprint)."""
AT_CHANCE_TEXT = "every method at chance level (within {dev:.2f}):\nno information about the subspace"


def _row_limits(at_k: pd.DataFrame, chance: float) -> tuple[float, float]:
    """y range of one row of panels: from 0 to just above chance, or zoomed in where every interval lies in the
    upper half (e.g. a data set where every method is near chance), so differences between methods stay visible."""
    values = at_k[["error_ci_lo", "error_mean", "error_ci_hi"]].to_numpy(float)
    values = values[np.isfinite(values)]
    if not values.size:
        return 0.0, min(1.02, chance * 1.12)
    if values.min() < 0.5 * chance:  # the whole band stays in view (intervals lie in [0, 1])
        return 0.0, min(1.04, max(chance * 1.12, float(values.max()) + 0.02))
    low, high = float(values.min()), max(float(values.max()), chance)
    span = max(high - low, 0.02)
    return max(0.0, low - 0.12 * span), min(1.05, high + 0.12 * span)


def _at_chance(panel: pd.DataFrame, chance: float) -> float | None:
    """The largest distance of a mean error from chance when every one is within :data:`AT_CHANCE`, else None."""
    means = panel["error_mean"].to_numpy(float)
    means = means[np.isfinite(means)]
    if not means.size:
        return None
    dev = float(np.max(np.abs(means - chance)))
    return dev if dev <= AT_CHANCE else None


PARTY_GREYS = {"curator": "0.15", "agents": "0.45", "individuals": "0.65"}


def _draw_preprocessing_alone(ax: Any, at_k: pd.DataFrame, panel: pd.DataFrame, handles: dict[str, Any]) -> None:
    """The end-to-end setting's floor in a panel: the exact PCA of the privately standardised rows, for each party
    that released the sums of the panel's methods (grey, dotted, no band: :mod:`ddppm.common_task.raw_records`)."""
    if "preprocessing" not in panel:
        return
    labels = reference_labels()
    for party in dict.fromkeys(panel["preprocessing"].dropna()):
        ref = at_k[at_k["method"] == f"{PREPROCESSING_ONLY}_{party}"].sort_values("eps")
        if ref.empty:
            continue
        (line,) = ax.plot(ref["eps"], ref["error_mean"], color=PARTY_GREYS.get(party, "0.5"), linestyle=":",
                          linewidth=1.6, zorder=1)  # fmt: skip
        handles[labels[f"{PREPROCESSING_ONLY}_{party}"]] = line


def common_figure(summary: pd.DataFrame, styles: dict[str, dict[str, Any]], title: str = "") -> Figure:
    """Rows: k; columns: the trust models present. Each method is drawn in its own trust model's panel with the
    95 % confidence band of its mean, dodged sideways so none hides another; points whose δ exceeds the limit
    are ringed in the infeasible colour; a square marks a mean over fewer fits than were run (a peer library's fits
    stopped by their time budget); the dashed line is the chance level (a uniformly random subspace); from the raw
    records, grey dotted lines are the private standardisation alone (the best its panel's methods can do).

    A method without a single finite error (no parameters met the limit at any ε) draws nothing and gets no
    legend entry: the panel's title names it ("no point to draw"). A panel whose every mean error is within
    :data:`AT_CHANCE` of chance says so in the panel; a row whose every interval lies in the upper half of the
    chance level is zoomed in (the axis does not start at 0) so what differences there are stay visible.
    """
    trusts = [t for t in TRUST_PANELS if t in set(summary["trust_model"])]
    # Each method's own colour from the registry, the same in every figure (distinct among the methods that can
    # share a common-task figure: tests/plotting/test_style.py).
    colours = {name: styles[name]["color"] for name in dict.fromkeys(summary["method"]) if name in styles}
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
            chance = float(at_k["chance_error"].iloc[0])
            for c, trust in enumerate(trusts):
                ax = axes[r, c]
                panel = at_k[at_k["trust_model"] == trust]
                names = list(dict.fromkeys(panel["method"]))
                empty: list[str] = []
                for i, name in enumerate(names):
                    g = panel[panel["method"] == name].sort_values("eps")
                    st = {**styles[name], "color": colours[name]}
                    if (
                        "privacy_column" in g and (g["privacy_column"] == "searched").any()
                    ):  # never read as a certified δ
                        st["label"] = f"{st['label']} (searched δ: at least)"
                    x = g["eps"].to_numpy(float) * 10 ** (0.025 * (i - (len(names) - 1) / 2))
                    y, lo, hi = (g[col].to_numpy(float) for col in ("error_mean", "error_ci_lo", "error_ci_hi"))
                    if not np.isfinite(y).any():  # nothing to draw: named in the title, not in the legend
                        empty.append(styles[name]["label"])
                        continue
                    (line,) = ax.plot(
                        x, y, color=st["color"], marker=st.get("marker", "o"), linestyle=st.get("linestyle", "-"), ms=4
                    )
                    ax.fill_between(x, lo, hi, color=st["color"], alpha=0.2, linewidth=0)
                    handles[st["label"]] = line
                    short = (g["n_unfinished"].fillna(0).to_numpy() > 0) & np.isfinite(y) if "n_unfinished" in g \
                        else np.zeros(len(g), bool)  # fmt: skip
                    if short.any():  # a peer library whose fits did not all finish in the time budget
                        handles[UNFINISHED_LABEL] = ax.scatter(
                            x[short], y[short], s=60, marker="s", facecolor="none", edgecolor="0.2", linewidth=1.0,
                            zorder=4,
                        )  # fmt: skip
                    over = ~g["feasible"].astype(bool).to_numpy() & np.isfinite(y)
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
                _draw_preprocessing_alone(ax, at_k, panel, handles)
                ax.axhline(chance, color="0.4", linestyle="--", linewidth=1)
                _set_log_eps_axis(ax, eps)
                if len(limits) > 1:  # each ε has its own δ limit (the journal's): name it under the ε
                    ax.set_xticklabels([f"{e:g}\nδ≤{limits[e]:.0e}" for e in eps], fontsize=7)
                ax.set_ylim(*_row_limits(at_k, chance))
                heading = f"k = {k}: {TRUST_TITLES[trust]}"
                if empty:
                    note = f"no point to draw (no parameters met the δ limit, or no fit finished): {', '.join(empty)}"
                    heading += "\n" + textwrap.fill(note, 60)
                ax.set_title(heading, fontsize=9)
                dev = _at_chance(panel, chance)
                if dev is not None:
                    ax.text(
                        0.5, 0.06, AT_CHANCE_TEXT.format(dev=max(dev, 0.005)), transform=ax.transAxes, ha="center",
                        va="bottom", fontsize=8.5, color="0.2", bbox={"facecolor": "white", "alpha": 0.8, "lw": 0},
                    )  # fmt: skip
                ax.set_xlabel("ε (whole run)" + (", with its δ limit" if len(set(limits.values())) > 1 else ""))
                if c == 0:
                    ax.set_ylabel(ERROR_LABEL)
        handles["chance level (random k-subspace)"] = Line2D([], [], color="0.4", linestyle="--")
        handles[band_mean_label()] = Patch(facecolor="0.5", alpha=0.3)
        if title:
            fig.suptitle(title, fontsize=10)
        # Long method labels: two columns keep the legend inside the figure's width at any number of panels.
        _legend_below(fig, handles, ncol=2 if len(trusts) < 4 else 3)
    return fig
