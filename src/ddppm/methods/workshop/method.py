"""The workshop D-DP-PM as a registered method (``ddppm_workshop``): calibrated parameters, Monte-Carlo errors.

Its parameter table has one row per (ε, threat model): the iteration parameters (T, α, σ_q, σ_p(1..T)), the
budget split and the final release's noise factor, the composed δ and its parts, so anyone can recompute δ with
:func:`ddppm.methods.workshop.accounting.total_delta` and rerun the algorithm with
:func:`ddppm.methods.workshop.algorithm.workshop_errors`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ddppm.core.problem import DistributedProblem
from ddppm.methods.base import Method, param_table, register
from ddppm.methods.ddppm.params import params_to_row
from ddppm.methods.workshop.algorithm import draw_workshop_normals, workshop_errors
from ddppm.methods.workshop.calibration import WorkshopCalibration, calibrate_threat_model, params_from_row
from ddppm.methods.workshop.recheck import with_exact_recheck
from ddppm.methods.workshop.schema import CONFIG_SCHEMA

BUDGET_COLUMNS = (
    "eps_iterations",
    "eps_final",
    "delta_iterations",
    "delta_iterations_limit",
    "delta_final",
    "delta_final_actual",
    "final_noise_factor",
    "final_mechanism",
    "eps_final_share",
    "delta_final_share",
    "delta_q",
)
"""The budget split and the final release of each row (docs/workshop.md has the column dictionary)."""


def param_rows(calibration: WorkshopCalibration, threat_model_name: str) -> pd.DataFrame:
    """The method's parameter table under one threat model from a calibration (one row per total ε).

    ``accounting`` names how the iterations' δ was computed (``theorem1``, ``chernoff`` or ``exact``); ``delta``
    is the composed ``δ_iterations + δ₁`` (NaN where no parameters met the limit, ``feasible`` False).
    """
    meta, rows = calibration.meta, []
    for _, row in calibration.chosen.iterrows():
        met = bool(row["met"])
        out = {
            "eps": float(row["eps"]),
            "delta_limit": float(row["delta_limit"]),
            "threat_model": threat_model_name,
            "accounting": meta["accounting_iterations"],
            "delta": float(row["delta"]) if met else np.nan,
            "feasible": met,
            "view": meta["threat_model"]["view"],
            "adjacency": meta["threat_model"]["adjacency"],
            "reason": str(row.get("reason", "")),
            "t_star": int(row["t_star"]),
        }
        for key in BUDGET_COLUMNS:
            if key in row and not (key == "delta_iterations" and not met):
                out[key] = row[key]
        if met:
            out.update(params_to_row(params_from_row(row)))  # the journal's columns: the same parameters
            out.update(
                {
                    "delta_iterations_se": float(row["delta_se"]),
                    "delta_iterations_max": float(row["delta_max"]),
                    "calibration_error": float(row["error_mean"]),
                }
            )
        rows.append(out)
    table = param_table(rows)
    if "T" in table:
        table["T"] = table["T"].astype("Int64")
    return table


@register
class WorkshopDDPPM(Method):
    """Decentralized DP power method, workshop version: noise on z before consensus, one noisy final release."""

    name = "ddppm_workshop"
    label = "D-DP-PM (workshop)"
    style = {"color": "#17becf", "marker": "h", "linestyle": (0, (4, 1.5))}
    config_schema = CONFIG_SCHEMA
    calibrated = True
    trust_model = "gossip"
    configured_by = "workshop"
    experiment_options = ("budget",)

    def searched_calibrate(self, job: Any) -> pd.DataFrame:
        """On the common task, under a searched threat model (:func:`ddppm.methods.workshop.common_searched.
        searched_calibrate`)."""
        from ddppm.methods.workshop.common_searched import searched_calibrate

        return searched_calibrate(job)

    def searched_estimates(self, problem: DistributedProblem, row: pd.Series, rngs: Sequence[Any]) -> np.ndarray:
        """Agent 0's estimates of the common task's ``v`` at a calibration row's parameters."""
        from ddppm.methods.workshop.common_searched import searched_estimates

        return searched_estimates(problem, row, rngs)

    def choose_params(
        self, problem: DistributedProblem, eps: np.ndarray, delta_limits: np.ndarray, options: dict[str, Any]
    ) -> pd.DataFrame:
        """Calibrate in one process under every threat model of ``options`` (the built-in definitions)."""
        frames = [
            param_rows(calibrate_threat_model(problem, eps, delta_limits, options, name), name)
            for name in options["threat_models"]
        ]
        return pd.concat(frames, ignore_index=True)

    def calibrate(
        self,
        problem: DistributedProblem,
        eps: np.ndarray,
        delta_limits: np.ndarray,
        options: dict[str, Any],
        threat_model: str,
        definitions: dict[str, dict[str, str]] | None = None,
    ) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
        """Parameter rows under one threat model (with the exact recheck where the accounting is a bound), every
        evaluated candidate and the calibration's metadata."""
        result = calibrate_threat_model(problem, eps, delta_limits, options, threat_model, definitions)
        rows = param_rows(result, threat_model)
        if result.meta["accounting_iterations"] != "exact":
            rows = with_exact_recheck(problem, rows, options, result.meta)
        return rows, result.candidates, result.meta

    def run_errors(
        self,
        problem: DistributedProblem,
        params: pd.Series,
        rngs: Sequence[np.random.Generator],
        options: dict[str, Any],
    ) -> np.ndarray:
        chosen = params_from_row(params)
        draws = draw_workshop_normals(problem, chosen.T, rngs)
        return workshop_errors(problem, chosen, draws, float(params["final_noise_factor"]))
