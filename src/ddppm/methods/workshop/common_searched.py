"""The workshop D-DP-PM on the common task, calibrated under a searched threat model
(:mod:`ddppm.methods.ddppm.common_searched` runs it; docs/common_task.md).

Its estimate of ``v`` is agent 0's consensus ``z_0^(T+1/2)`` of the last noisy release, normalised (the final noisy
``q̃`` is not needed for it); the calibration is the workshop's (budget split, shared search) choosing by the common
task's error of that estimate, and its δ under Definition 1 is the iterations' hockey stick plus the final
release's δ (composition).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ddppm.common_task.task import subspace_error
from ddppm.core.problem import DistributedProblem
from ddppm.methods.gossip_base.searched import SearchedCalibration, unit_columns
from ddppm.methods.workshop.algorithm import WorkshopParams, draw_workshop_normals, workshop_network
from ddppm.methods.workshop.budget import BudgetSplit
from ddppm.methods.workshop.calibration import calibrate_workshop, param_rows, params_from_row


def workshop_estimates(
    problem: DistributedProblem, params: WorkshopParams, draws: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> np.ndarray:
    """Agent 0's estimate of ``v`` for each run: its consensus ``z_0^(T+1/2)``, normalised: ``(R, d, 1)``."""
    z0, zp, _ = draws
    _, a = workshop_network(problem, params, params.sigma_q * z0, params.sigmas[:, None, None] * zp[: params.T])
    return unit_columns(a[0])


def searched_estimates(problem: DistributedProblem, row: pd.Series, rngs: Sequence[np.random.Generator]) -> np.ndarray:
    """:func:`workshop_estimates` at the parameters of a calibration row, one run per generator."""
    params = params_from_row(row)
    return workshop_estimates(problem, params, draw_workshop_normals(problem, params.T, rngs))


def searched_calibrate(job: SearchedCalibration) -> pd.DataFrame:
    """The workshop's parameter table under the job's threat model, chosen by the common error of
    :func:`workshop_estimates` against ``v``, with ``delta_standard``: Definition 1's δ of the whole run (iterations'
    hockey stick plus the final release's δ)."""

    def metric(p: DistributedProblem, params: WorkshopParams, draws: tuple[np.ndarray, ...]) -> np.ndarray:
        return subspace_error(workshop_estimates(p, params, draws), job.v[:, None])  # type: ignore[arg-type]

    budget = BudgetSplit.from_config(job.options["budget"])
    chernoff_bound = job.options["privacy"]["chernoff_bound"]
    result = calibrate_workshop(job.problem, job.eps, job.limits, job.grid, job.settings, budget, chernoff_bound,
                                job.seed, metric)  # fmt: skip
    result.meta.update(threat_model=job.model, threat_model_name=job.model_name)
    table = param_rows(result, job.model_name)
    chosen = result.chosen
    hockey = chosen["delta_hockey"].to_numpy(float) if "delta_hockey" in chosen else np.full(len(chosen), np.nan)
    composed = hockey + chosen["delta_final_actual"].to_numpy(float)  # no hockey column when no choice met
    return table.assign(delta_standard=np.where(table["feasible"], composed, np.nan))
