"""D-DP-PM's config schema and its parameter table.

The schema is ``config.schema.yaml`` beside this module (the section ``methods.ddppm``) with the accounting engine's
``privacy`` and ``calibration`` sections (:func:`ddppm.accounting.schema.compose_method_schema`). A parameter table
row records T, α, σ_q and the full list σ_p(1..T) (:mod:`ddppm.accounting.rows`), so anyone can recompute its δ with
:func:`ddppm.accounting.accountant.evaluate_delta`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ddppm.accounting.rows import params_from_row, params_to_row
from ddppm.accounting.schema import compose_method_schema
from ddppm.methods.gossip_base.params import chosen_row, chosen_table

CONFIG_SCHEMA = compose_method_schema(Path(__file__).with_name("config.schema.yaml"))
"""The JSON schema of ``methods.ddppm`` (every default included)."""


def _describe_worst(row: pd.Series) -> str:
    """The neighbour that gave δ: agent, local row, how it was made, and the replacement row."""
    if pd.isna(row.get("worst_agent", np.nan)):
        return ""
    return (
        f"agent {int(row['worst_agent'])}, row {int(row['worst_row'])} ({row['worst_kind']}) "
        f"-> {row.get('worst_new_row', '[]')}"
    )


def param_rows(chosen: pd.DataFrame, threat_model: str, settings_row: dict[str, str]) -> pd.DataFrame:
    """The method's parameter table from a calibration's ``chosen`` table (one row per ε).

    Rows where no candidate met the δ limit keep ``feasible = False`` and no parameters (``delta`` NaN), so
    no error is ever reported for an over-budget setting.
    """
    rows = []
    for _, row in chosen.iterrows():
        met = bool(row["met"])
        out = chosen_row(row, threat_model, settings_row)
        if met:
            out.update(params_to_row(params_from_row(row)))
            out.update(
                {
                    "delta_se": float(row["delta_se"]),
                    "delta_max": float(row["delta_max"]),
                    "delta_upper_tail": float(row["delta_upper"]),
                    "delta_hockey_stick": float(row.get("delta_hockey", np.nan)),
                    "worst_neighbour": _describe_worst(row),
                    "calibration_error": float(row["error_mean"]),
                }
            )
        rows.append(out)
    return chosen_table(rows)
