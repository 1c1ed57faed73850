"""Shared look of every figure: method styles from the registry, labels, colours, axes helpers, saving.

Figures are built as :class:`matplotlib.figure.Figure` objects without :mod:`matplotlib.pyplot`, so no GUI
backend and no global figure registry are involved (PNG output is rendered by Agg). Inputs are the tables
the workflow writes:

``summary`` (Fig. 2, one row per dataset × method × threat model × ε)
    ``dataset, label, method, threat_model, eps, error_mean, error_lo, error_hi, delta, delta_limit, feasible``.
``curve`` (Fig. 3, one row per dataset × T)
    ``dataset, label, eps, T, delta, delta_se, delta_upper, delta_limit, error_mean, error_lo, error_hi,
    bound_sin``.

The error is ``sin(v, q) = ‖(I − vvᵀ)q‖/‖q‖`` (paper eq. 37), a dimensionless number in [0, 1]. Data-set
titles come from the ``label`` column (the AMI data set is the labelled synthetic stand-in).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from os import PathLike
from typing import Any

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, LogFormatter, NullFormatter, NullLocator

from ddppm.core.io import atomic_write
from ddppm.core.provenance import provenance_note
from ddppm.methods import available_methods
from ddppm.methods.base import UNNAMED_THREAT_MODELS
from ddppm.privacy.threat_models import BUILT_IN

INFEASIBLE_COLOR = "#7a0177"
"""Colour of every infeasible mark (no method uses it): over-budget points and 'no parameters met δ'."""
_VARIANT_SHADES = (1.0, 0.6, 1.35)
_VARIANT_MARKERS = ("o", "P", "*", "h")


def method_styles() -> dict[str, dict[str, Any]]:
    """Legend label, colour, marker and line style of every registered method (from the registry)."""

    return {name: method.plot_style() for name, method in available_methods().items()}


ERROR_LABEL = (
    r"error $\sin(\mathbf{v},\mathbf{q}) = \|(\mathbf{I}-\mathbf{v}\mathbf{v}^\top)\mathbf{q}\|/\|\mathbf{q}\|$"
)
"""Y-axis label of every error axis (the quantity is dimensionless, between 0 and 1)."""

BAND_LABEL = "shaded band: middle 95 % of runs (2.5–97.5 %: the spread of single runs)"
"""Legend entry of a band of run quantiles (Fig. 2, Fig. 3, the local-DP PCA figures). A band of the mean's
interval reads differently (:func:`band_mean_label`): every legend with a band says which of the two it is."""
INFEASIBLE_LABEL = "no parameters met the δ limit (none found by the search)"
PROVEN_INFEASIBLE_LABEL = "no parameters can meet the δ limit (floor > limit: a proof)"
INFEASIBLE_STRIP_LABEL = "no parameters meet the δ limit at this ε (one row per curve)"
"""Label of the strip above a Fig. 2 panel that holds the infeasible marks (they have no error to plot)."""
HEURISTIC_ONLY_LABEL = "meets the limit only for the guessed neighbour (floor > limit)"
FLOOR_COLOR = "#000000"
"""Colour of what the δ floor proves (a lower bound for every parameter choice)."""
OVER_BUDGET_LABEL = "achieved δ above the limit"
BOUND_LABEL = "Theorem 3 bound (w.p. 0.95)"
DET_LABEL = "Theorem 3: consensus + power terms"
CHANCE_LABEL = (
    r"chance level $\sqrt{1-1/n}$: error of a uniformly random direction (n = number of rows, the length of v)"
)
"""The root-mean-square ``sin(v, q)`` of a uniformly random unit ``q``: ``v`` and ``q`` are vectors over the n
rows (``v`` is the top eigenvector of ``XXᵀ``), so n here is the number of rows, which is also their dimension."""

VIEW_WORDS = {"paper": "an agent's own releases", "network": "every release on the network"}
ACCOUNTING_WORDS = {"chernoff": "Chernoff bound of Theorem 2", "exact": "exact tail"}
ADJACENCY_WORDS = {"heuristic": "a guessed neighbour", "worst": "worst neighbour found by search (δ: at least)"}


def band_mean_label(level: float = 0.95, kind: str = "confidence") -> str:
    """Legend entry of a band of the mean's interval (``kind``: "confidence", "bootstrap"), not of the runs."""
    return f"shaded band: {100 * level:g} % {kind} interval of the mean (not the runs' spread)"


def built_in_threat_model(name: str | None) -> dict[str, str] | None:
    """``{view, accounting, adjacency}`` of a built-in threat model, None for any other name (e.g. ``none``)."""

    return BUILT_IN[name].as_dict() if name in BUILT_IN else None


def threat_model_words(
    name: str, definition: dict[str, str] | None = None, chernoff: str = ACCOUNTING_WORDS["chernoff"]
) -> str:
    """``name: <who observes>, <how δ is accounted>, <which neighbour>`` in words, for a title.

    ``definition`` (``view``, ``accounting``, ``adjacency``) defaults to the built-in threat model of that name;
    ``chernoff`` names the Chernoff accounting (the journal's Theorem 2, the workshop paper's Theorem 1). A name
    without a definition (e.g. ``none``) is returned unchanged.
    """
    definition = definition if definition is not None else built_in_threat_model(name)
    if not definition:
        return str(name)
    words = {**ACCOUNTING_WORDS, "chernoff": chernoff}
    parts = (
        VIEW_WORDS.get(definition.get("view", ""), f"view {definition.get('view')}"),
        words.get(definition.get("accounting", ""), f"{definition.get('accounting')} accounting"),
        ADJACENCY_WORDS.get(definition.get("adjacency", ""), f"{definition.get('adjacency')} neighbour"),
    )
    return f"{name}: {', '.join(parts)}"


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


def _shade(color: str, factor: float) -> str:
    """``color`` darkened (factor < 1) or lightened (factor > 1)."""
    rgb = np.array(mpl.colors.to_rgb(color))
    out = rgb * factor if factor <= 1 else 1 - (1 - rgb) / factor
    return mpl.colors.to_hex(np.clip(out, 0, 1))


def series_style(method: str, threat_model: str, variant: int, index: int) -> dict[str, Any]:
    """Style of one curve: the method's registry style, varied per threat model (``variant``)."""
    styles = method_styles()
    base = dict(styles.get(method, {"label": str(method), "marker": "v", "linestyle": "-"}))
    base.setdefault("color", _DATASET_COLORS[index % len(_DATASET_COLORS)])
    if threat_model and threat_model not in UNNAMED_THREAT_MODELS:
        base["label"] = f"{base['label']} [{threat_model}]"
    if variant:
        base["color"] = _shade(base["color"], _VARIANT_SHADES[variant % len(_VARIANT_SHADES)])
        base["marker"] = _VARIANT_MARKERS[variant % len(_VARIANT_MARKERS)]
        base["linestyle"] = (0, (5, 2)) if variant % 2 else "-."
    return base


def _series(summary_ds: pd.DataFrame) -> list[tuple[str, str, int]]:
    """(method, threat model, variant index) of every curve, registry order first."""
    if not len(summary_ds):
        return []
    order = list(method_styles())
    methods = sorted(set(summary_ds["method"]), key=lambda m: (order.index(m) if m in order else len(order), m))
    out = []
    for method in methods:
        models = summary_ds.loc[summary_ds["method"] == method, "threat_model"].fillna("none")
        for variant, model in enumerate(sorted(set(models))):
            out.append((method, model, variant))
    return out


class PlainLogFormatter(LogFormatter):
    """Log-axis tick labels as plain numbers (``0.99``, ``1``, ``0.001``): an error axis often spans less than
    a decade, where ``9.9 × 10⁻¹`` reads worse than ``0.99``. Which ticks get a label is the base class's choice."""

    def _num_to_string(self, x: float, vmin: float, vmax: float) -> str:
        return f"{x:.3g}"


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


def _figure(figsize: tuple[float, float]) -> Figure:
    with mpl.rc_context(_RC):
        return Figure(figsize=figsize, layout="constrained")


def panel_grid(count: int, panel_height: float, extra_height: float) -> tuple[Figure, np.ndarray]:
    """A figure with one panel per data set in two columns (one for a single panel), unused panels hidden.

    Call inside ``mpl.rc_context(_RC)``. Returns the figure and the flat array of its first ``count`` axes.
    """
    k = max(count, 1)
    ncols = 1 if k == 1 else 2
    nrows = math.ceil(k / ncols)
    fig = _figure((6.2 * ncols, panel_height * nrows + extra_height))
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    for ax in axes[count:]:
        ax.set_visible(False)
    return fig, axes[:count]


def _legend_below(fig: Figure, handles: dict, ncol: int = 3) -> None:
    """One shared legend under all panels (label → artist), at most ``ncol`` columns (fewer for long labels)."""
    if handles:
        fig.legend(
            handles=list(handles.values()),
            labels=list(handles.keys()),
            loc="outside lower center",
            ncol=min(ncol, len(handles)),
            frameon=False,
        )


def save_figure(
    fig: Figure,
    png_path: str | PathLike[str],
    pdf_path: str | PathLike[str],
    dpi: int = 150,
    config_hash: str | None = None,
) -> None:
    """Write ``fig`` as PNG and PDF, each atomically (temporary file in the target directory, then rename).

    With ``config_hash`` (the hash of the config the figure's job read), the figure carries its provenance:
    a footer line ``config <hash> · git <commit> · ddppm <version>`` and the same text in the files'
    metadata. The figure is closed afterwards (released from :mod:`matplotlib.pyplot` if registered there).
    """
    metadata: dict[str, str] = {}
    if config_hash is not None:

        note = provenance_note(config_hash)
        fig.text(0.995, 0.003, note, ha="right", va="bottom", fontsize=6, color="#888888")
        metadata = {"Description": note}
    try:
        with mpl.rc_context(_RC):
            with atomic_write(png_path) as tmp:
                fig.savefig(tmp, format="png", dpi=dpi, metadata=metadata or None)
            # The PNG's draw placed every axes; the PDF keeps those places rather than running the layout
            # engine again (a third of a figure job's time on the many-panel figures). No engine at all, not
            # "none" (a placeholder engine, for which savefig still draws the whole figure once before printing):
            # the same PDF, byte for byte, in half the time.
            if fig.get_layout_engine() is not None:
                try:
                    fig.set_layout_engine(None)
                except RuntimeError:  # a colorbar's figure keeps a compatible engine
                    fig.set_layout_engine("none")
            with atomic_write(pdf_path) as tmp:
                fig.savefig(tmp, format="pdf", metadata={"Subject": metadata["Description"]} if metadata else None)
    finally:
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is not None:
            plt.close(fig)
