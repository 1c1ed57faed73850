"""Parameter-free lower bounds on a method's δ, placed on the common task's ε grid.

Some methods cannot be calibrated to a certified δ (their releases have data-dependent covariances), but a search
can show that *no* parameter choice gets under some δ: D-DP-PM's floor, say. A method's rule file publishes such
bounds as a table with :data:`BOUND_COLUMNS` (one row per data set and ε of its own grid). :func:`bounds_on_grid`
moves them to the common task's grid: the hockey-stick δ of any fixed pair of laws does not increase with ε, so
a neighbour whose δ at ε_b is at least b has δ at least b at every ε ≤ ε_b; the bound at ε is the largest b over
the rows with ε_b ≥ ε (none: no bound). Every such number is an "at least" (a searched neighbour), never an upper
bound, so it goes beside the "which method" table, never in it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

BOUND_COLUMNS = ("dataset", "method", "label", "trust_model", "eps", "delta_at_least", "basis")


def bounds_on_grid(bounds: pd.DataFrame, eps_grid: list[float], delta_limit: float) -> pd.DataFrame:
    """:func:`bounds_at_points` with one grid and one δ limit for every data set of ``bounds``."""
    points = {ds: [(float(e), float(delta_limit)) for e in eps_grid] for ds in dict.fromkeys(bounds.get("dataset", []))}
    return bounds_at_points(bounds, points)


def bounds_at_points(
    bounds: pd.DataFrame, points: Mapping[str, Sequence[tuple[float, float]]], setting: str = "standard"
) -> pd.DataFrame:
    """Per (data set, method) and (ε, δ limit) of ``points[dataset]`` (data sets without points are left out): the
    largest bound proven at some ε_b ≥ ε, the ε_b it comes from, and whether it exceeds that point's δ limit (then
    no parameter choice of the method meets the limit)."""
    missing = set(BOUND_COLUMNS) - set(bounds.columns)
    if missing:
        raise ValueError(f"a lower-bound table lacks the columns {sorted(missing)}")
    rows = []
    for (dataset, method), group in bounds.groupby(["dataset", "method"], sort=False):
        first = group.iloc[0]
        for eps, delta_limit in points.get(dataset, ()):
            above = group[group["eps"] >= float(eps)]
            if above.empty:
                continue
            best = above.loc[above["delta_at_least"].idxmax()]
            rows.append(
                {
                    "setting": setting,
                    "dataset": dataset,
                    "k": 1,
                    "eps": float(eps),
                    "method": method,
                    "label": first["label"],
                    "trust_model": first["trust_model"],
                    "delta": float(best["delta_at_least"]),
                    "delta_is": "at least",
                    "from_eps": float(best["eps"]),
                    "delta_limit": float(delta_limit),
                    "no_parameters_meet_limit": bool(best["delta_at_least"] > delta_limit),
                    "error_mean": np.nan,
                    "basis": first["basis"],
                }
            )
    return pd.DataFrame(rows)
