"""Oracle Gaussian release: what any method that sends its n-vector to every agent can reach at (ε, δ).

Release ``q = X v_R + N(0, σ² I_n)``, with ``v_R`` the true top right singular vector of X treated as
public, and ``σ`` the analytic Gaussian mechanism's (Balle & Wang 2018) at (ε, δ limit) for sensitivity 1:
adjacent data sets differ in one row by ``‖x − x'‖ ≤ 1``, which moves one entry of ``X v_R`` by at most
``|(x − x')ᵀ v_R| ≤ 1``. Since ``X v_R = s₁ v`` the error depends only on ``σ / s₁``.

It is a reference, not a deployable method (it is handed ``v_R``): in D-DP-PM's network view every agent
receives every final ``q_j^(T) = α X_j (a vector it knows) + noise``, a Gaussian mechanism on per-row
values, so no such method can beat this curve at the same (ε, δ).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ddppm.core.metrics import sin_error
from ddppm.core.problem import DistributedProblem
from ddppm.methods.base import NO_THREAT_MODEL, Method, gaussian_mechanism_params, register
from ddppm.privacy.mechanisms import analytic_gaussian_sigma


@register
class OracleRelease(Method):
    name = "oracle"
    label = "oracle Gaussian release of X v_R"
    style = {"color": "#2ca02c", "marker": "v", "linestyle": (0, (3, 1, 1, 1))}
    trust_model = "none"
    role = "reference"  # handed v_R, the true top right singular vector: a bound, not a deployable method

    def choose_params(
        self, problem: DistributedProblem, eps: np.ndarray, delta_limits: np.ndarray, options: dict[str, Any]
    ) -> pd.DataFrame:
        return gaussian_mechanism_params(eps, delta_limits, analytic_gaussian_sigma, NO_THREAT_MODEL)  # a reference

    def run_errors(
        self,
        problem: DistributedProblem,
        params: pd.Series,
        rngs: Sequence[np.random.Generator],
        options: dict[str, Any],
    ) -> np.ndarray:
        signal = problem.X @ problem.top_right_singular_vector
        noise = np.column_stack([rng.standard_normal(problem.n) for rng in rngs])
        return sin_error(problem.top_eigenvector, signal[:, None] + float(params["sigma"]) * noise)
