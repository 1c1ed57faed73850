"""The journal and workshop D-DP-PM on the common task, where a search can calibrate them (docs/common_task.md).

Their releases have data-dependent covariances, so no certified δ exists; what the project can do is calibrate
them under a searched threat model (default ``sound``: network view, exact tail, worst neighbour found) to the
common task's δ limit and say so. Such a δ is "at least": the worst neighbour found, a lower bound on the true δ.
The rows go beside the "which method" table (privacy column ``searched``), never in it.

* **What is calibrated.** Each variant's own calibration (the search of :mod:`ddppm.methods.ddppm.calibration`,
  the workshop's budget split) on the common task's rows, agents and network, at every ε of the common grid and
  the common δ limit, choosing by the common task's error of the estimate below (the papers' own metric, the
  left vector, would pick T = 1, whose right-vector estimate is the consensus of ``Xᵀq^(0)``: chance). The
  calibration compares Definition 1's hockey-stick δ with the limit (``delta_statistic: hockey``): a choice that
  meets it meets the common standard for every neighbour the search found (the workshop's: its iterations'
  hockey stick plus the final release's δ, composed), and for no more.
* **What is estimated.** The top direction ``v`` from what the algorithm releases anyway: agent 0's consensus
  ``z_0^(T+1/2) = m Σ_j (W^c)_0j z_j^(T)`` of the last released ``z^(T)``, normalised (post-processing of
  released values, so the accounted δ covers it). k = 1 only: the variants estimate one direction.
* **Where.** On the data sets of ``common.searched.datasets`` only: elsewhere D-DP-PM's parameter-free floor
  already excludes the limit (the journal's sets, digits) or the search is beyond the accountant (the 16-agent
  spiked set; docs/studies.md).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ddppm.common.task import CommonTask, captured_variance, chance_error, subspace_error
from ddppm.core.problem import DistributedProblem
from ddppm.core.seeds import run_generators
from ddppm.methods.ddppm.algorithm import DDPPMParams, draw_standard_normals, scale_draws
from ddppm.methods.ddppm.calibration import JournalCandidates, calibrate
from ddppm.methods.ddppm.params import param_rows, params_from_row
from ddppm.methods.ddppm.steps import accountant_settings, calibration_grid
from ddppm.methods.workshop.algorithm import WorkshopParams, draw_workshop_normals, workshop_network
from ddppm.methods.workshop.budget import BudgetSplit
from ddppm.methods.workshop.calibration import calibrate_workshop
from ddppm.methods.workshop.calibration import params_from_row as workshop_params_from_row
from ddppm.methods.workshop.method import param_rows as workshop_param_rows

VARIANTS = ("ddppm", "ddppm_workshop")
"""The D-DP-PM variants this module runs on the common task (journal, workshop)."""


def _unit_columns(A: np.ndarray) -> np.ndarray:
    """``(d, R)`` → ``(R, d, 1)`` with unit columns (a zero column stays zero: its error is then 1)."""
    norms = np.linalg.norm(A, axis=0)
    return (A / np.where(norms > 0, norms, 1.0)).T[:, :, None]


def journal_estimates(problem: DistributedProblem, params: DDPPMParams, z0: np.ndarray, zp: np.ndarray) -> np.ndarray:
    """Agent 0's estimate of ``v`` for each run of the journal D-DP-PM (Algorithm 1): ``(R, d, 1)``.

    ``q^(T−1) = (αΞ)q^(T−2) + p^(T−1)`` (eq. 16) from ``q^(0)``, then the released ``z_j^(T) = X_jᵀq_j^(T−1)`` and
    agent 0's consensus ``m Σ_j (W^c)_0j z_j^(T)``: what line 6 of Algorithm 1 computes in its last iteration.
    """
    q, P = scale_draws(params, z0, zp)
    A = params.alpha * problem.Xi
    for t in range(params.T - 1):
        q = A @ q + P[t]
    z = np.stack([Xj.T @ q[problem.agent_slice(j)] for j, Xj in enumerate(problem.blocks)])  # (m, d, R)
    consensus = problem.m * np.einsum("j,jdr->dr", problem.Wc[0], z)
    return _unit_columns(consensus)


def workshop_estimates(
    problem: DistributedProblem, params: WorkshopParams, draws: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> np.ndarray:
    """Agent 0's estimate of ``v`` for each run of the workshop D-DP-PM: its consensus ``z_0^(T+1/2)`` of the last
    noisy release, normalised (the final noisy ``q̃`` is not needed for it): ``(R, d, 1)``."""
    z0, zp, _ = draws
    _, a = workshop_network(problem, params, params.sigma_q * z0, params.sigmas[:, None, None] * zp[: params.T])
    return _unit_columns(a[0])


class JournalOnCommonMetric(JournalCandidates):
    """The journal's Algorithm 1 for the shared calibration, its error the common task's (:func:`journal_estimates`
    against ``v``)."""

    def __init__(self, v: np.ndarray) -> None:
        self.v = np.asarray(v, float).reshape(-1, 1)

    def errors(self, problem: DistributedProblem, params: DDPPMParams, draws: tuple[np.ndarray, ...]) -> np.ndarray:
        return subspace_error(journal_estimates(problem, params, draws[0], draws[1]), self.v)


def calibrate_variant(
    name: str,
    problem: DistributedProblem,
    eps: np.ndarray,
    limits: np.ndarray,
    options: dict[str, Any],
    model: dict[str, str],
    model_name: str,
) -> pd.DataFrame:
    """Variant ``name``'s parameter table (its method's columns) under ``model``, chosen by the common task's error of
    agent 0's estimate of the top eigenvector ``v`` of ``XᵀX``."""
    # The common standard is Definition 1: the calibration compares the hockey-stick δ with the limit.
    grid = calibration_grid({**options["calibration"], "delta_statistic": "hockey"})
    settings = accountant_settings(options["privacy"], model)
    seed = int(options["calibration"]["seed"])
    v = np.linalg.eigh(problem.X.T @ problem.X)[1][:, -1]
    if name == "ddppm":
        result = calibrate(problem, eps, limits, grid, settings, seed, JournalOnCommonMetric(v))
        table = param_rows(result.chosen, model_name, model)
        return table.assign(delta_standard=table.get("delta_hockey_stick", np.nan))  # no column if none met
    if name == "ddppm_workshop":

        def metric(p: DistributedProblem, params: WorkshopParams, draws: tuple[np.ndarray, ...]) -> np.ndarray:
            return subspace_error(workshop_estimates(p, params, draws), v[:, None])  # type: ignore[arg-type]

        budget = BudgetSplit.from_config(options["budget"])
        result = calibrate_workshop(problem, eps, limits, grid, settings, budget, options["privacy"]["chernoff_bound"],
                                    seed, metric)  # fmt: skip
        result.meta.update(threat_model=model, threat_model_name=model_name)
        table = workshop_param_rows(result, model_name)
        # Definition 1's δ of the whole run: the iterations' hockey stick plus the final release's δ (composition)
        composed = result.chosen["delta_hockey"].to_numpy(float) + result.chosen["delta_final_actual"].to_numpy(float)
        return table.assign(delta_standard=np.where(table["feasible"], composed, np.nan))
    raise ValueError(f"common.searched.methods: unknown D-DP-PM variant {name!r}; use one of {VARIANTS}")


def estimates(
    name: str, problem: DistributedProblem, row: pd.Series, rngs: Sequence[np.random.Generator]
) -> np.ndarray:
    """Agent 0's estimates of ``v`` (``(R, d, 1)``) of variant ``name`` at the parameters of a calibration row."""
    if name == "ddppm":
        params = params_from_row(row)
        return journal_estimates(problem, params, *draw_standard_normals(problem.n, params.T, rngs))
    if name == "ddppm_workshop":
        params = workshop_params_from_row(row)
        return workshop_estimates(problem, params, draw_workshop_normals(problem, params.T, rngs))
    raise ValueError(f"common.searched.methods: unknown D-DP-PM variant {name!r}; use one of {VARIANTS}")


def costs(name: str, problem: DistributedProblem, T: int) -> dict[str, Any]:
    """Floats one agent sends (``d`` per gossip round, ``c`` rounds per iteration; the workshop's final ``q̃_i``
    adds ``n_i``; the journal's ``q^(T)`` block too, which the estimate does not need but the paper releases),
    communication rounds and per-agent memory."""
    n_i = int(np.max(problem.sizes))
    return {
        "floats_per_agent": T * problem.c * problem.d + n_i,
        "rounds": T * problem.c + 1,
        "memory": "n_j·d",
    }


def searched_runs(
    problem: DistributedProblem,
    dataset: str,
    eps: Sequence[float],
    delta_limit: float,
    options: Mapping[str, dict[str, Any]],
    threat_model: str,
    definitions: dict[str, dict[str, str]],
    runs: int,
    seed: int,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every run of each variant of ``options`` (name → its validated options) calibrated under ``threat_model``
    at each ε and ``delta_limit``, in the common task's runs format (:func:`ddppm.common.run.run_methods`; privacy
    column ``searched``, trust model ``gossip``, k = 1), and the calibrations' parameter rows.

    Runs draw from generators labelled (dataset, 1, method, ε) as every common-task method's. Where no parameter
    choice met the limit the ε has one row with ``feasible`` False and no error."""
    task = CommonTask.from_problem(problem, 1)
    limits = np.full(len(eps), float(delta_limit))
    frames, tables = [], []
    for name, method_options in options.items():
        table = calibrate_variant(name, problem, np.asarray(eps, float), limits, method_options,
                                  definitions[threat_model], threat_model)  # fmt: skip
        tables.append(table.assign(method=name, dataset=dataset))
        for _, row in table.iterrows():
            base = {"setting": "standard", "dataset": dataset, "k": 1, "method": name, "trust_model": "gossip",
                    "privacy_column": "searched", "eps": float(row["eps"]), "delta_limit": float(delta_limit),
                    "delta": float(row["delta_standard"]), "feasible": bool(row["feasible"]), "sigma": np.nan,
                    "noise_multiplier": np.nan}  # fmt: skip
            if not bool(row["feasible"]):
                frames.append(pd.DataFrame([{**base, "run": 0, "error": np.nan, "captured_variance": np.nan,
                                             "seconds_per_run": np.nan, **costs(name, problem, 0)}]))  # fmt: skip
                continue
            rngs = run_generators(seed, (dataset, 1, name, float(row["eps"])), range(runs))
            start = time.perf_counter()
            V_hat = estimates(name, problem, row, rngs)
            seconds = (time.perf_counter() - start) / runs
            frames.append(
                pd.DataFrame(
                    {
                        **base,
                        "run": np.arange(runs),
                        "error": subspace_error(V_hat, task.V),
                        "captured_variance": captured_variance(V_hat, task),
                        "seconds_per_run": seconds,
                        **costs(name, problem, int(row["T"])),
                    }  # fmt: skip
                )
            )
    out = pd.concat(frames, ignore_index=True)
    out["chance_error"] = chance_error(task.d, 1)
    out["memory"] = out["memory"].astype(str)
    return out, pd.concat(tables, ignore_index=True)
