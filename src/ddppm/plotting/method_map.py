"""The method map's figures: which method wins, and how many are competitive, over a 2-D grid or one factor at a time,
per trust level (the cells of :func:`ddppm.studies.method_map.rank_cells`).

Each cell is coloured by its best method (the method's own colour) and carries the size of its competitive set
(the methods not significantly worse than the best, 95 % paired intervals). A grey hatched cell is one where no
method beats chance. Real data sets (label, n, d) can be marked on the axis they share with the grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ddppm.plotting.style import _RC, _figure

TRUST_TITLES = {"central": "a curator", "secure_aggregation": "a secure aggregator", "local": "no one"}
FACTOR_LABELS = {"n": "rows n", "d": "dimension d", "gap": "spectral gap λ_k/λ_{k+1}", "m": "agents m",
                 "k": "rank k", "eps": "ε"}  # fmt: skip
CHANCE_COLOUR = "#bdbdbd"


def _value_label(value: float) -> str:
    value = float(value)
    if value >= 1000 and np.log10(value).is_integer():
        return f"1e{int(np.log10(value))}"
    return f"{value:g}"


def _cell_grid(cells: pd.DataFrame, x: str, y: str, trust: str) -> tuple[list[float], list[float], pd.DataFrame]:
    at = cells[cells["trust"] == trust]
    return sorted(at[x].unique()), sorted(at[y].unique()), at.set_index([x, y])


def _draw_cells(ax: Any, xs: list[float], ys: list[float], table: pd.DataFrame, styles: dict[str, dict[str, Any]],
                drawn: dict[str, Any]) -> None:  # fmt: skip
    image = np.ones((len(ys), len(xs), 3))
    for i, yv in enumerate(ys):
        for j, xv in enumerate(xs):
            if (xv, yv) not in table.index:
                continue
            row = table.loc[(xv, yv)]
            if not bool(row["beats_chance"]):
                image[i, j] = to_rgb(CHANCE_COLOUR)
                ax.add_patch(mpl.patches.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="xx", lw=0,
                                                   edgecolor="#636363"))  # fmt: skip
                drawn["no method beats chance (grey, hatched)"] = Patch(facecolor=CHANCE_COLOUR, hatch="xx",
                                                                         edgecolor="#636363")  # fmt: skip
            else:
                style = styles.get(row["best"], {"color": "#000000", "label": row["best"]})
                image[i, j] = to_rgb(style["color"])
                drawn[f"best: {style['label']}"] = Patch(facecolor=style["color"])
            ax.text(j, i, str(int(row["set_size"])), ha="center", va="center", fontsize=8,
                    color="white" if sum(image[i, j]) < 1.5 else "black")  # fmt: skip
    ax.imshow(image, origin="lower", aspect="auto")
    ax.grid(False)
    ax.set_xticks(range(len(xs)), [_value_label(v) for v in xs])
    ax.set_yticks(range(len(ys)), [_value_label(v) for v in ys])


def _mark_datasets(ax: Any, xs: list[float], datasets: Sequence[tuple[str, float]]) -> None:
    """Mark each data set's value on the x axis (interpolated in log scale, clamped to the axis' ends; ``<``/``>``
    say a value lies beyond the grid), its label above the panel, staggered so that neighbours do not overlap."""
    logs = np.log10(np.asarray(xs, float))
    for label, value in datasets:
        position = float(np.interp(np.log10(value), logs, np.arange(len(xs))))
        beyond = "< " if np.log10(value) < logs[0] else "> " if np.log10(value) > logs[-1] else ""
        ax.axvline(position, color="black", lw=0.8, ls=":")
        ax.text(position, 0.98, f"{beyond}{label}", transform=ax.get_xaxis_transform(), rotation=90, fontsize=6.5,
                ha="center", va="top", bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.0})  # fmt: skip


def _legend(fig: Figure, drawn: dict[str, Any]) -> None:
    """One legend under the panels: the best methods drawn, and the chance marking if any cell has it."""
    fig.legend(handles=list(drawn.values()), labels=list(drawn.keys()), loc="outside lower center",
               ncol=min(2, len(drawn)), frameon=False)  # fmt: skip


def grid_figure(cells: pd.DataFrame, x: str, styles: dict[str, dict[str, Any]], base: dict[str, Any],
                datasets: Sequence[tuple[str, float]] = (), delta: float | None = None) -> Figure:  # fmt: skip
    """Best method (colour) and competitive-set size (number) over ``x`` × ε, one panel per trust level; the other
    factors at ``base``; ``datasets``: (label, value of ``x``) marked on the x axis."""
    trusts = [t for t in ("central", "secure_aggregation", "local") if t in set(cells["trust"])]
    with mpl.rc_context(_RC):
        fig = _figure((5.0 * len(trusts), 4.6))
        axes = np.atleast_1d(fig.subplots(1, len(trusts), squeeze=False)).ravel()
        drawn: dict[str, Any] = {}
        for ax, trust in zip(axes, trusts, strict=True):
            xs, ys, table = _cell_grid(cells, x, "eps", trust)
            _draw_cells(ax, xs, ys, table, styles, drawn)
            _mark_datasets(ax, xs, datasets)
            ax.set_xlabel(FACTOR_LABELS[x] + (" (dotted: the common task's data sets)" if datasets else ""))
            ax.set_ylabel("ε")
            ax.set_title(f"users who trust {TRUST_TITLES[trust]}", fontsize=9)
        fixed = ", ".join(f"{k} = {_value_label(v)}" for k, v in base.items() if k not in (x, "eps"))
        what = f"Which method wins over {FACTOR_LABELS[x]} and ε"
        fig.suptitle(f"{what} (certified δ = {delta:g}, spiked data: {fixed})\n"
                     "colour: the best mean error; number: methods not significantly worse (95 % paired intervals)",
                     fontsize=10)  # fmt: skip
        _legend(fig, drawn)
    return fig


def factors_figure(cells: pd.DataFrame, factors: dict[str, list[float]], base: dict[str, Any],
                   styles: dict[str, dict[str, Any]], delta: float | None = None) -> Figure:  # fmt: skip
    """One factor at a time from the base point: a strip per (factor, trust level), each cell coloured by its best
    method with the competitive-set size."""
    trusts = [t for t in ("central", "secure_aggregation", "local") if t in set(cells["trust"])]
    names = [f for f in factors if factors[f]]
    with mpl.rc_context(_RC):
        fig = _figure((4.6 * len(trusts), 0.95 * len(names) + 1.6))
        axes = fig.subplots(len(names), len(trusts), squeeze=False)
        drawn: dict[str, Any] = {}
        for r, factor in enumerate(names):
            others = {k: v for k, v in base.items() if k != factor}
            at = cells.copy()
            for key, value in others.items():
                at = at[np.isclose(at[key].astype(float), float(value))]
            at = at.assign(row=0)
            for c, trust in enumerate(trusts):
                ax = axes[r, c]
                xs, _, table = _cell_grid(at, factor, "row", trust)
                _draw_cells(ax, xs, [0], table, styles, drawn)
                ax.set_yticks([])
                if c == 0:
                    ax.set_ylabel(FACTOR_LABELS[factor].replace(" ", "\n", 1), fontsize=8, rotation=0, ha="right",
                                  va="center")  # fmt: skip
                if r == 0:
                    ax.set_title(f"users who trust {TRUST_TITLES[trust]}", fontsize=9)
        fixed = ", ".join(f"{k} = {_value_label(v)}" for k, v in base.items()).replace("eps", "ε")
        fig.suptitle(f"Which method wins, one factor at a time from {fixed} (certified δ = {delta:g}, spiked data)\n"
                     "colour: the best mean error; number: methods not significantly worse (95 % paired intervals)",
                     fontsize=10)  # fmt: skip
        _legend(fig, drawn)
    return fig
