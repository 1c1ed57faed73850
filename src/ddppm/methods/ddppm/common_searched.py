"""The journal D-DP-PM on the common task under a searched threat model: its estimate of ``v`` and its calibration
by the common task's error (the shared route and why: :mod:`ddppm.methods.gossip_base.searched`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ddppm.accounting.calibration import JournalCandidates, calibrate
from ddppm.accounting.iteration import DDPPMParams, draw_standard_normals, scale_draws
from ddppm.accounting.rows import params_from_row
from ddppm.common_task.task import subspace_error
from ddppm.core.problem import DistributedProblem
from ddppm.methods.ddppm.params import param_rows
from ddppm.methods.gossip_base.searched import SearchedCalibration, unit_columns


def journal_estimates(problem: DistributedProblem, params: DDPPMParams, z0: np.ndarray, zp: np.ndarray) -> np.ndarray:
    """Agent 0's estimate of ``v`` for each run of the journal D-DP-PM (Algorithm 1): ``(R, d, 1)``.

    ``q^(T−1) = (αΞ)q^(T−2) + p^(T−1)`` (eq. 16) from ``q^(0)``, then the released ``z_j^(T) = X_jᵀq_j^(T−1)`` and
    agent 0's consensus ``m Σ_j (W^c)_0j z_j^(T)``: what line 6 of Algorithm 1 computes in its last iteration.
    """
    q, P = scale_draws(params, z0, zp)
    for t in range(params.T - 1):
        q = problem.xi_matmul(q, params.alpha) + P[t]
    z = np.stack([Xj.T @ q[problem.agent_slice(j)] for j, Xj in enumerate(problem.blocks)])  # (m, d, R)
    consensus = problem.m * np.einsum("j,jdr->dr", problem.Wc[0], z)
    return unit_columns(consensus)


class JournalOnCommonMetric(JournalCandidates):
    """The journal's Algorithm 1 for the shared calibration, its error the common task's (:func:`journal_estimates`
    against ``v``)."""

    def __init__(self, v: np.ndarray) -> None:
        self.v = np.asarray(v, float).reshape(-1, 1)

    def errors(self, problem: DistributedProblem, params: DDPPMParams, draws: tuple[np.ndarray, ...]) -> np.ndarray:
        return subspace_error(journal_estimates(problem, params, draws[0], draws[1]), self.v)


def searched_estimates(problem: DistributedProblem, row: pd.Series, rngs: Sequence[np.random.Generator]) -> np.ndarray:
    """:func:`journal_estimates` at the parameters of a calibration row, one run per generator."""
    params = params_from_row(row)
    return journal_estimates(problem, params, *draw_standard_normals(problem.n, params.T, rngs))


def searched_calibrate(job: SearchedCalibration) -> pd.DataFrame:
    """The journal's parameter table under the job's threat model, chosen by the common error of
    :func:`journal_estimates` against ``v``, with ``delta_standard``: the hockey-stick δ of the worst neighbour
    found (Definition 1)."""
    result = calibrate(job.problem, job.eps, job.limits, job.grid, job.settings, job.seed, JournalOnCommonMetric(job.v))
    table = param_rows(result.chosen, job.model_name, job.model)
    return table.assign(delta_standard=table.get("delta_hockey_stick", np.nan))  # no column if none met
