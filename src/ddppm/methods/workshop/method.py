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
from ddppm.methods.base import register
from ddppm.methods.gossip_base.method import CalibratedGossipMethod
from ddppm.methods.workshop.algorithm import draw_workshop_normals, workshop_errors
from ddppm.methods.workshop.calibration import calibrate_threat_model, param_rows, params_from_row
from ddppm.methods.workshop.common_searched import searched_calibrate, searched_estimates
from ddppm.methods.workshop.recheck import with_exact_recheck
from ddppm.methods.workshop.schema import CONFIG_SCHEMA


@register
class WorkshopDDPPM(CalibratedGossipMethod):
    """Decentralized DP power method, workshop version: noise on z before consensus, one noisy final release."""

    name = "ddppm_workshop"
    label = "D-DP-PM (workshop)"
    style = {"color": "#a55194", "marker": "h", "linestyle": (0, (4, 1.5))}
    config_schema = CONFIG_SCHEMA
    configured_by = "workshop"
    experiment_options = ("budget",)

    def searched_calibrate(self, job: Any) -> pd.DataFrame:
        return searched_calibrate(job)

    def searched_estimates(self, problem: DistributedProblem, row: pd.Series, rngs: Sequence[Any]) -> np.ndarray:
        return searched_estimates(problem, row, rngs)

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
