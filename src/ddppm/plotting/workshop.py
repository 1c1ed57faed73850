"""Fig. 1 of the workshop D-DP-PM paper: error ``‖v − q qᵀv‖`` against ε, one panel per threat model.

Input: the experiment's summary table (:func:`ddppm.experiments.workshop.summary_table`, columns in
docs/columns.md): one row per (method, threat model, ε) with the mean error, its interval and ``feasible``.
"""

from __future__ import annotations

import textwrap
from typing import Any

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ddppm.methods import get_method
from ddppm.plotting.style import (
    _RC,
    INFEASIBLE_COLOR,
    UNNAMED_THREAT_MODELS,
    _set_log_eps_axis,
    band_mean_label,
    panel_grid,
    threat_model_words,
)

ERROR_LABEL = r"error $\|v - q q^\top v\|$ (mean over runs)"
LDP_OVER_LIMIT = "δ of this σ exceeds the δ limit (classic Gaussian formula at ε ≥ 1)"
NO_PARAMS = "no parameters met the δ limit (× on the top edge: no error to plot)"
WORKSHOP_CHERNOFF = "Chernoff bound of its Theorem 1"
EXACT_OVER_LIMIT = "met δ by the threat model's accounting, but the exact δ of the same releases exceeds the limit"


def _styles(methods: list[str], labels: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Each method's legend entry and line style, with the experiment's own ``labels`` (``workshop.labels``)."""

    styles = {name: get_method(name).plot_style() for name in methods}
    return {name: {**style, "label": labels.get(name, style["label"])} for name, style in styles.items()}


def fig1(summary: pd.DataFrame, section: dict[str, Any], title: str = "") -> Figure:
    """One panel per threat model of ``section["threat_models"]``: the workshop and journal D-DP-PM calibrated
    under it, and the methods without a threat model (LDP, sound LDP, oracle) in every panel.

    Each curve is the mean error with the 95 % confidence band of the mean (``mean_ci_lo..mean_ci_hi``), dodged sideways
    by a few per cent of a decade so none hides another. Points whose δ exceeds the limit (the paper's classic
    LDP σ at ε ≥ 1) are ringed in the infeasible colour; points that met the limit by the threat model's own
    accounting but not by the exact tail of the same releases (``meets_limit_exact`` False: Theorem 1 and the
    classic final σ under ``paper``) get a square in that colour; ε where a calibrated method found no
    parameters get a cross in that colour on the top edge (not at an error value: there is none). A method with
    no finite error in a panel draws nothing and gets no legend entry. Panel titles name the threat model in words
    (the built-in definition of its name). The dotted line is the claim's accuracy read as error
    ≤ 1 − a, the grey span the claim's ε range for the average drop.
    """
    methods = [m for m in section["methods"] if m in set(summary["method"])]
    styles = _styles(methods, section["labels"])
    eps = np.unique(summary["eps"].to_numpy(dtype=float))
    claims = section["claims"]
    with mpl.rc_context(_RC):
        fig, axes = panel_grid(len(section["threat_models"]), 4.6, 2.2)
        handles: dict[str, Any] = {}
        extras: dict[str, Any] = {}
        for ax, tm in zip(axes, section["threat_models"], strict=True):
            at_tm = summary[summary["threat_model"].isin([tm, *UNNAMED_THREAT_MODELS])]
            for i, name in enumerate(methods):
                g = at_tm[at_tm["method"] == name].sort_values("eps")
                if g.empty:
                    continue
                st = styles[name]
                x = g["eps"].to_numpy(dtype=float) * 10 ** (0.02 * (i - (len(methods) - 1) / 2))
                y, lo, hi = (g[c].to_numpy(dtype=float) for c in ("error_mean", "mean_ci_lo", "mean_ci_hi"))
                if np.isfinite(y).any():  # a curve without a single error draws nothing: no legend entry
                    (line,) = ax.plot(x, y, color=st["color"], marker=st["marker"], linestyle=st["linestyle"], zorder=3)
                    ax.fill_between(x, lo, hi, color=st["color"], alpha=0.2, linewidth=0, zorder=2)
                    handles[st["label"]] = line
                infeasible = ~g["feasible"].astype(bool).to_numpy()
                shown = infeasible & np.isfinite(y)
                if shown.any():
                    extras[LDP_OVER_LIMIT] = ax.scatter(
                        x[shown], y[shown], s=90, facecolor="none", edgecolor=INFEASIBLE_COLOR, linewidth=1.5, zorder=4
                    )
                exact_over = (
                    ~g["meets_limit_exact"].astype(bool).to_numpy() if "meets_limit_exact" in g else infeasible & False
                )
                exact_over &= ~infeasible & np.isfinite(y)
                if exact_over.any():
                    extras[EXACT_OVER_LIMIT] = ax.scatter(
                        x[exact_over],
                        y[exact_over],
                        s=110,
                        marker="s",
                        facecolor="none",
                        edgecolor=INFEASIBLE_COLOR,
                        linewidth=1.3,
                        zorder=4,
                    )
                missing = infeasible & ~np.isfinite(y)
                if missing.any():
                    extras[NO_PARAMS] = ax.scatter(
                        x[missing], np.ones(missing.sum()), marker="x", color=INFEASIBLE_COLOR, s=45, zorder=4,
                        transform=ax.get_xaxis_transform(), clip_on=False,
                    )  # fmt: skip
            threshold = 1 - float(claims["accuracy"])
            extras[f"claim: accuracy {claims['accuracy']:g} read as error ≤ {threshold:.2g}"] = ax.axhline(
                threshold, color="0.3", linestyle=":", linewidth=1.2, zorder=1
            )
            lo_eps, hi_eps = claims["drop_range"]
            ax.axvspan(lo_eps, hi_eps, color="0.5", alpha=0.08, linewidth=0, zorder=0)
            _set_log_eps_axis(ax, eps)
            ax.set_xticks(eps, [f"{e:g}" for e in eps])
            ax.set_ylim(0, 1.05)
            ax.set_xlabel("ε (total budget of the whole run)")
            ax.set_ylabel(ERROR_LABEL)
            ax.set_title(textwrap.fill(f"threat model {threat_model_words(tm, chernoff=WORKSHOP_CHERNOFF)}", 62))
        extras[band_mean_label()] = Patch(facecolor="0.5", alpha=0.3)
        extras[f"grey span: ε ∈ [{lo_eps:g}, {hi_eps:g}] (the claimed average drop)"] = Patch(
            facecolor="0.5", alpha=0.12
        )
        handles.update(extras)
        if title:
            unmodelled = [styles[m]["label"] for m in methods if (summary.loc[summary["method"] == m, "threat_model"]
                                                                   .isin(UNNAMED_THREAT_MODELS)).all()]  # fmt: skip
            if unmodelled:  # drawn alike in every panel: their δ does not depend on a threat model
                same = "δ the same under every threat model (the same curve in every panel)"
                title += f"\n{', '.join(unmodelled)}: {same}"
            fig.suptitle(title, fontsize=10)
        fig.legend(handles.values(), handles.keys(), loc="outside lower center", ncol=2, frameon=False)
    return fig
