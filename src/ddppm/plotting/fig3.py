"""Fig. 3 of the journal paper: error and δ against the number of iterations T at fixed ε."""

from __future__ import annotations

from typing import Any

import matplotlib as mpl
import numpy as np
import pandas as pd
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
    _figure,
    _fmt_eps,
    _legend_below,
    _positive,
)


def fig3(
    curves: pd.DataFrame,
    bound_label: str = BOUND_LABEL,
    show_upper_tail: bool = True,
    upper_label: str = "upper-tail δ⁺ of Theorem 2",
) -> Figure:
    """Fig. 3: error (left, log y) and δ (right, log y) against the number of iterations T, per data set.

    Left: ``error_mean`` with the band ``error_lo..error_hi`` and, dashed in the same colour, ``bound_sin``
    (Theorem 3; when every bound equals 1 a note says it is vacuous). Right: the two-sided ``delta`` with a
    band ``± 1.96 delta_se`` (Monte Carlo error of the accountant), ``delta_upper`` (the upper-tail δ⁺ of
    Theorem 2 under Chernoff accounting, the exact upper tail under exact accounting: ``upper_label``;
    dash-dot; ``show_upper_tail=False`` hides it) and the data set's δ limit at the curve's ε as
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
            # Dodge each dataset sideways by a tenth of a step: curves that coincide (δ = 1) stay visible.
            T = g["T"].to_numpy(dtype=float) + 0.1 * (i - (n_ds - 1) / 2)
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
            handles[upper_label] = Line2D([], [], color="0.2", linestyle="-.", linewidth=1.0)

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
        ax_err.set_ylabel(ERROR_LABEL)
        title = f"Error vs iterations (ε = {eps_txt}, other parameters fixed)"
        # In the title, not over the axes: a box in the corner covered the T = 1 points.
        ax_err.set_title(title + ("\nTheorem 3 bound = 1 (vacuous) at every T" if all_vacuous else ""))
        ax_del.set_ylabel(f"δ at ε = {eps_txt} (log scale)")
        ax_del.set_title(f"Privacy δ vs iterations (ε = {eps_txt})")
        if fallback_note:
            fig.suptitle(fallback_note.strip(), fontsize=9.5, color="0.3")
        _legend_below(fig, handles)
    return fig
