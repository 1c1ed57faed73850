"""The parameter table of a calibrated gossip method, from the accounting engine's choice per ε."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ddppm.methods.base import param_table

CHOSEN_ON_THE_DATA = "least Monte-Carlo error on the data: the paper's own practice; not covered by δ"
"""Column ``chosen_by`` of every calibrated D-DP-PM row: the search picks T and the noise by their error on the very
rows δ is about, as the journal does (§IV-B); that choice is a function of the private data no δ accounts for
(docs/privacy.md, "Where each parameter comes from")."""


def chosen_row(row: pd.Series, threat_model: str, settings_row: dict[str, str]) -> dict[str, Any]:
    """The columns every calibrated D-DP-PM variant's parameter row starts with, from one row of a calibration's
    ``chosen`` table: ε, its limit, the threat model and how δ was computed (``settings_row``: ``accounting``,
    ``view``, ``adjacency``), δ (NaN where no candidate met the limit), ``feasible``, the reason, T* and
    ``chosen_by`` (:data:`CHOSEN_ON_THE_DATA`)."""
    met = bool(row["met"])
    return {
        "eps": float(row["eps"]),
        "delta_limit": float(row["delta_limit"]),
        "threat_model": threat_model,
        "accounting": settings_row["accounting"],
        "delta": float(row["delta"]) if met else np.nan,
        "feasible": met,
        "view": settings_row["view"],
        "adjacency": settings_row["adjacency"],
        "reason": str(row.get("reason", "")),
        "t_star": int(row["t_star"]),
        "chosen_by": CHOSEN_ON_THE_DATA,
    }


def chosen_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The parameter table of a calibrated variant's rows (:func:`ddppm.methods.param_table`), T as a nullable
    integer (no T where no candidate met the limit)."""
    table = param_table(rows)
    if "T" in table:
        table["T"] = table["T"].astype("Int64")
    return table
