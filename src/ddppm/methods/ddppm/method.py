"""D-DP-PM (journal Algorithm 1) as a registered method: calibrated parameters, Monte-Carlo errors.

Its parameter table is the calibration's choice per (ε, threat model): see :mod:`ddppm.methods.ddppm.steps`
and the rules in ``workflow/rules/methods/ddppm.smk``; the schema and the row conversion are in
:mod:`ddppm.methods.ddppm.params`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ddppm.core.problem import DistributedProblem
from ddppm.methods.base import Method, register
from ddppm.methods.ddppm.algorithm import ddppm_errors, draw_standard_normals
from ddppm.methods.ddppm.common_searched import searched_calibrate, searched_estimates
from ddppm.methods.ddppm.params import CONFIG_SCHEMA, params_from_row
from ddppm.methods.ddppm.steps import calibrate_threat_model


@register
class DDPPM(Method):
    """Decentralized Differentially Private Power Method (journal Algorithm 1)."""

    name = "ddppm"
    label = "D-DP-PM"
    style = {"color": "#1f77b4", "marker": "o", "linestyle": "-"}
    config_schema = CONFIG_SCHEMA
    calibrated = True
    trust_model = "gossip"

    def searched_calibrate(self, job: Any) -> pd.DataFrame:
        """On the common task, under a searched threat model (:func:`ddppm.methods.ddppm.common_searched.
        searched_calibrate`)."""
        return searched_calibrate(job)

    def searched_estimates(self, problem: DistributedProblem, row: pd.Series, rngs: Sequence[Any]) -> np.ndarray:
        """Agent 0's estimates of the common task's ``v`` at a calibration row's parameters."""
        return searched_estimates(problem, row, rngs)

    def choose_params(
        self, problem: DistributedProblem, eps: np.ndarray, delta_limits: np.ndarray, options: dict[str, Any]
    ) -> pd.DataFrame:
        """Calibrate in one process under every threat model of ``options`` (the workflow shards this)."""
        frames = [
            calibrate_threat_model(problem, eps, delta_limits, options, name)[0] for name in options["threat_models"]
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
