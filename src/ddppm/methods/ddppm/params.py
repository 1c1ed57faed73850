"""D-DP-PM's config schema, its defaults, and the conversion between parameters and table rows.

The schema ``config.schema.yaml`` beside this module is the section ``methods.ddppm`` (every default lives there;
the library's dataclasses take theirs through :func:`schema_default`). A parameter table row records T, α, σ_q and
the full list σ_p(1..T) (:func:`params_to_row`, :func:`params_from_row`), so anyone can recompute its δ with
:func:`ddppm.methods.ddppm.accountant.evaluate_delta`. This module imports no other module of the package but
the algorithm's parameter types, so every other module can import it without a cycle.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from ddppm.methods.base import param_table
from ddppm.methods.ddppm.algorithm import DDPPMParams, NoiseSchedule

CONFIG_SCHEMA = yaml.safe_load((Path(__file__).with_name("config.schema.yaml")).read_text(encoding="utf-8"))


def schema_default(section: str, key: str):
    """The default of ``methods.ddppm.<section>.<key>`` in the config schema: the one place defaults live
    (the library's dataclasses take theirs from here)."""
    value = CONFIG_SCHEMA["properties"][section]["properties"][key]["default"]
    return tuple(value) if isinstance(value, list) else value


def floor_default(key: str):
    """The default of ``methods.ddppm.privacy.floor.<key>`` in the config schema."""
    return CONFIG_SCHEMA["properties"]["privacy"]["properties"]["floor"]["properties"][key]["default"]


PARAMETER_COLUMNS = ("alpha", "sigma_q", "schedule", "scale", "ratio", "T", "sigma_p")


def params_to_row(params: DDPPMParams) -> dict[str, Any]:
    """The table columns of ``params``; ``sigma_p`` is the JSON list σ_p(1..T)."""
    return {
        "alpha": params.alpha,
        "sigma_q": params.sigma_q,
        "schedule": params.schedule.kind,
        "scale": params.schedule.scale,
        "ratio": params.schedule.ratio,
        "T": int(params.T),
        "sigma_p": json.dumps([float(s) for s in params.sigmas]),
    }


def params_from_row(row: pd.Series | dict) -> DDPPMParams:
    """Rebuild the parameters recorded in a row of a calibration or parameter table."""
    return DDPPMParams(
        alpha=float(row["alpha"]),
        sigma_q=float(row["sigma_q"]),
        schedule=NoiseSchedule(str(row["schedule"]), float(row["scale"]), float(row["ratio"])),
        T=int(row["T"]),
    )


def _describe_worst(row: pd.Series) -> str:
    """The neighbour that gave δ: agent, local row, how it was made, and the replacement row."""
    if pd.isna(row.get("worst_agent", np.nan)):
        return ""
    return (
        f"agent {int(row['worst_agent'])}, row {int(row['worst_row'])} ({row['worst_kind']}) "
        f"-> {row.get('worst_new_row', '[]')}"
    )


def chosen_row(row: pd.Series, threat_model: str, settings_row: dict[str, str]) -> dict[str, Any]:
    """The columns every calibrated D-DP-PM variant's parameter row starts with, from one row of a calibration's
    ``chosen`` table: ε, its limit, the threat model and how δ was computed (``settings_row``: ``accounting``,
    ``view``, ``adjacency``), δ (NaN where no candidate met the limit), ``feasible``, the reason and T*."""
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
    }


def chosen_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The parameter table of a calibrated variant's rows (:func:`ddppm.methods.param_table`), T as a nullable
    integer (no T where no candidate met the limit)."""
    table = param_table(rows)
    if "T" in table:
        table["T"] = table["T"].astype("Int64")
    return table


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
