"""Noise-free D-PM: the no-privacy reference (D-DP-PM with every noise scale set to zero).

It runs ``T*`` iterations, the fewest at which the mean error reaches ``t_star_tol`` (paper §IV-B), at
every ε, with the same seeds at every ε: the reference does not depend on ε and must not wobble with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ddppm.accounting.iteration import checked_t_star, dpm_error_curve, draw_standard_normals
from ddppm.core.problem import DistributedProblem
from ddppm.core.seeds import run_generators
from ddppm.methods.base import NO_THREAT_MODEL, Method, param_table, register


@register
class NoiseFreeDPM(Method):
    name = "dpm"
    label = "D-PM, no privacy (reference)"
    style = {"color": "#555555", "marker": "D", "linestyle": ":"}
    role = "reference"
    trust_model = "none"
    depends_on_eps = False
    config_schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "t_star_tol": {
                "type": "number",
                "exclusiveMinimum": 0,
                "default": 1.0e-3,
                "description": "T* is the fewest iterations whose mean noise-free error is at most this",
            },
            "t_max": {"type": "integer", "minimum": 1, "default": 60, "description": "largest T* searched"},
            "runs": {"type": "integer", "minimum": 2, "default": 100, "description": "runs that estimate T*"},
            "seed": {"type": "integer", "default": 3, "description": "seed of the runs that estimate T*"},
        },
    }

    def choose_params(
        self, problem: DistributedProblem, eps: np.ndarray, delta_limits: np.ndarray, options: dict[str, Any]
    ) -> pd.DataFrame:
        rngs = run_generators(int(options["seed"]), ("t_star",), range(int(options["runs"])))
        z0, _ = draw_standard_normals(problem.n, 0, rngs)
        T = checked_t_star(problem, z0, float(options["t_star_tol"]), int(options["t_max"]), "methods.dpm")
        rows = [
            {
                "eps": float(e),
                "delta_limit": float(limit),
                "threat_model": NO_THREAT_MODEL,
                "accounting": "none",
                "delta": 0.0,
                "feasible": True,
                "T": int(T),
            }
            for e, limit in zip(eps, delta_limits, strict=True)
        ]
        return param_table(rows)

    def run_errors(
        self,
        problem: DistributedProblem,
        params: pd.Series,
        rngs: Sequence[np.random.Generator],
        options: dict[str, Any],
    ) -> np.ndarray:
        z0 = draw_standard_normals(problem.n, 0, rngs)[0]
        return dpm_error_curve(problem, int(params["T"]), z0)[-1]
