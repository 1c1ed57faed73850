"""The workshop D-DP-PM's bound-based δ against the exact tail of the same releases.

Theorem 1 (or the Chernoff bound) accounts the iterations when the threat model asks for it; this module
recomputes, for each feasible parameter row, the exact δ of the same iterations at ``ε_i`` with the same view
and the same neighbours, and composes it with the final release's true δ.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ddppm.accounting.neighbours import neighbours_from_table
from ddppm.accounting.settings import accountant_settings
from ddppm.core.problem import DistributedProblem
from ddppm.methods.workshop.accounting import iterations_delta
from ddppm.methods.workshop.calibration import params_from_row


def with_exact_recheck(
    problem: DistributedProblem, rows: pd.DataFrame, options: dict[str, Any], meta: dict[str, Any]
) -> pd.DataFrame:
    """Theorem 1 (or Chernoff) against the exact tail on the same releases: for each feasible row, the exact δ of
    the iterations at ``ε_i`` with the same view and the same neighbours (``delta_iterations_exact``), and the
    composed exact δ ``delta_exact = min(1, delta_iterations_exact + delta_final_actual)`` (the final release's
    true δ at ε₁), with ``meets_limit_exact``. Both NaN (missing) where the row is infeasible."""
    settings = accountant_settings(options["privacy"], {**meta["threat_model"], "accounting": "exact"})
    neighbours = neighbours_from_table(pd.DataFrame(meta["neighbours"]))
    exact = np.full(len(rows), np.nan)
    for k, (_, row) in enumerate(rows.iterrows()):
        if bool(row["feasible"]):
            res = iterations_delta(
                problem, params_from_row(row), [float(row["eps_iterations"])], settings, neighbours=neighbours
            )
            exact[k] = float(res.delta[0])
    out = rows.copy()
    out["delta_iterations_exact"] = exact
    out["delta_exact"] = np.minimum(1.0, exact + out["delta_final_actual"].astype(float))  # δ ≤ 1 always
    meets = [
        None if np.isnan(d) else bool(d <= lim) for d, lim in zip(out["delta_exact"], out["delta_limit"], strict=True)
    ]
    out["meets_limit_exact"] = pd.array(meets, dtype="boolean")
    bound = out["delta_iterations"].astype(float)
    below = [None if np.isnan(e) else bool(t < e) for t, e in zip(bound, exact, strict=True)]
    out["bound_below_exact"] = pd.array(below, dtype="boolean")  # Theorem 1 under the exact δ: it happens (docs)
    return out
