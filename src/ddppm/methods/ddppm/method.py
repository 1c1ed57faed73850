"""D-DP-PM (journal Algorithm 1) as a registered method: calibrated parameters, Monte-Carlo errors.

Its parameter table is the accounting engine's choice per (ε, threat model): see :mod:`ddppm.methods.ddppm.steps`
and the rules in ``workflow/rules/methods/ddppm.smk``; the schema is in :mod:`ddppm.methods.ddppm.params`. The
choice is by Monte-Carlo error on the data: the paper's own practice, not covered by δ (column ``chosen_by``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ddppm.accounting.iteration import ddppm_errors, draw_standard_normals
from ddppm.accounting.rows import params_from_row
from ddppm.core.problem import DistributedProblem
from ddppm.methods.base import register
from ddppm.methods.ddppm.common_searched import searched_calibrate, searched_estimates
from ddppm.methods.ddppm.params import CONFIG_SCHEMA
from ddppm.methods.ddppm.steps import calibrate_threat_model
from ddppm.methods.gossip_base.method import CalibratedGossipMethod


@register
class DDPPM(CalibratedGossipMethod):
    """Decentralized Differentially Private Power Method (journal Algorithm 1)."""

    name = "ddppm"
    label = "D-DP-PM"
    style = {"color": "#1f77b4", "marker": "o", "linestyle": "-"}
    config_schema = CONFIG_SCHEMA

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
        options = {**options, "threat_model_definitions": definitions}
        return calibrate_threat_model(problem, eps, delta_limits, options, threat_model)

    def run_errors(
        self,
        problem: DistributedProblem,
        params: pd.Series,
        rngs: Sequence[np.random.Generator],
        options: dict[str, Any],
    ) -> np.ndarray:
        chosen = params_from_row(params)
        z0, zp = draw_standard_normals(problem.n, chosen.T, rngs)
        return ddppm_errors(problem, chosen, z0, zp)
