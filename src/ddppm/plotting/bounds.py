"""The bounds study's figure (:mod:`ddppm.studies.bounds`): error against the bounds' width factor, one data set.

One panel per ε. Per trust level, the best method's mean error (its own colour, from the registry) with its 95 %
interval as a band, solid for the default preprocessing (``range_shrinking``) and dashed for ``one_shot``; the
curator's private standardisation alone in grey; the chance level as a dotted line.
"""

from __future__ import annotations

from typing import Any

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ddppm.plotting.style import _RC, _legend_below, panel_grid

ESTIMATOR_LINES = {"range_shrinking": "-", "one_shot": "--", "none": "-"}
ESTIMATOR_WORDS = {"range_shrinking": "private box, then sums (range_shrinking)",
                   "one_shot": "sums on the declared box (one_shot)",
                   "none": "no standardisation (the analyst only rescales)"}  # fmt: skip
LEVELS = ("no trusted party", "secure aggregation", "a trusted curator")
PREPROCESSING_COLOUR = "#000000"


def bounds_figure(summary: pd.DataFrame, dataset: str, label: str, styles: dict[str, dict[str, Any]]) -> Figure:
    """The figure of ``dataset`` (``label``: how figures name it) from the study's summary (best rows marked).

    Per trust level, the method best at the declared bounds under the first estimator of the summary (the default,
    ``range_shrinking``) is followed along the widths under each estimator, so each curve is one method."""
    rows = summary[(summary["dataset"] == dataset) & (summary["k"] == summary["k"].min())]
    epsilons = sorted(rows["eps"].unique())
    estimators = list(dict.fromkeys(rows["estimator"]))
    with mpl.rc_context(_RC):
        fig, axes = panel_grid(len(epsilons), 3.6, 2.4)
        if len(epsilons) == 1:
            fig.set_size_inches(8.0, fig.get_size_inches()[1])
        handles: dict[str, Any] = {}
        for ax, eps in zip(axes, epsilons, strict=True):
            at = rows[np.isclose(rows["eps"], eps)]
            declared = at[np.isclose(at["width"], 1.0) & (at["estimator"] == estimators[0]) & at["best"]]
            for level in LEVELS:
                for method in declared.loc[declared["trust_level"] == level, "method"]:
                    style = styles.get(method, {"color": "#000000", "label": method})
                    for estimator in estimators:
                        curve = at[(at["method"] == method) & (at["estimator"] == estimator)].sort_values("width")
                        ax.plot(curve["width"], curve["error_mean"], ESTIMATOR_LINES[estimator], marker="o", ms=3.5,
                                color=style["color"])  # fmt: skip
                        low, high = curve["error_ci_lo"].clip(0, 1), curve["error_ci_hi"].clip(0, 1)
                        ax.fill_between(curve["width"], low, high, color=style["color"], alpha=0.12, lw=0)
                    handles[f"{level}: {style['label']} (best at ×1)"] = Line2D(
                        [], [], color=style["color"], marker="o", ms=3.5)
            for estimator in estimators:
                alone = at[(at["method"] == "preprocessing_only_curator") & (at["estimator"] == estimator)]
                if len(alone):
                    alone = alone.sort_values("width")
                    ax.plot(alone["width"], alone["error_mean"], ESTIMATOR_LINES[estimator], color=PREPROCESSING_COLOUR,
                            lw=0.9, marker="x", ms=5)  # fmt: skip
                    handles["private standardisation alone (a curator's): exact PCA of its rows"] = Line2D(
                        [], [], color=PREPROCESSING_COLOUR, lw=0.9, marker="x", ms=5)
                handles[ESTIMATOR_WORDS[estimator]] = Line2D([], [], color="#000000", ls=ESTIMATOR_LINES[estimator])
            chance = float(at["chance_error"].iloc[0])
            ax.axhline(chance, color="#000000", ls=":", lw=1)
            handles["chance level (error of a random subspace)"] = Line2D([], [], color="#000000", ls=":")
            widths = sorted(at["width"].unique())
            ax.set_xscale("log")
            ax.set_xticks(widths, [f"×{w:g}" for w in widths])
            ax.minorticks_off()
            ax.set_xlim(widths[0] / 1.15, widths[-1] * 1.15)
            ax.set_ylim(0, 1.02)
            ax.set_xlabel("declared bounds widened around their midpoint (factor)")
            ax.set_ylabel("mean error ‖V̂V̂ᵀ − VVᵀ‖_F / √(2k)")
            ax.set_title(f"ε = {eps:g}")
        handles["shaded: 95 % interval of the mean (over preprocessing draws)"] = Patch(color="#000000", alpha=0.12)
        delta = float(rows["delta_limit"].max())
        fig.suptitle(f"Study 'bounds', {label}: error as the declared bounds loosen\nfrom the raw records, certified "
                     f"(ε, δ = {delta:g}), k = {int(rows['k'].min())}, per trust level")  # fmt: skip
        _legend_below(fig, handles, ncol=1)
    return fig
