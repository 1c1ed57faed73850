"""The journal and workshop D-DP-PM on the common task, where a search can calibrate them (docs/common_task.md).

Their releases have data-dependent covariances, so no certified δ exists; what the project can do is calibrate
them under a searched threat model (default ``sound``: network view, exact tail, worst neighbour found) to the
common task's δ limit and say so. Such a δ is "at least": the worst neighbour found, a lower bound on the true δ.
The rows go beside the "which method" table (privacy column ``searched``), never in it.

* **What is calibrated.** Each variant's own calibration (the search of :mod:`ddppm.accounting.calibration`,
  the workshop's budget split) on the common task's rows, agents and network, at every ε of the common grid and
  the common δ limit, choosing by the common task's error of the estimate below (the papers' own metric, the
  left vector, would pick T = 1, whose right-vector estimate is the consensus of ``Xᵀq^(0)``: chance). The
  calibration compares Definition 1's hockey-stick δ with the limit (``delta_statistic: hockey``): a choice that
  meets it meets the common standard for every neighbour the search found (the workshop's: its iterations'
  hockey stick plus the final release's δ, composed), and for no more. The choice by error on these rows is the
  paper's own practice and is **not covered by δ** (column ``chosen_by``).
* **What is estimated.** The top direction ``v`` from what the algorithm releases anyway: agent 0's consensus
  ``z_0^(T+1/2) = m Σ_j (W^c)_0j z_j^(T)`` of the last released ``z^(T)``, normalised (post-processing of
  released values, so the accounted δ covers it). k = 1 only: the variants estimate one direction.
* **Where.** Each variant on the data sets ``common.searched.methods.<name>`` lists: the journal's only where its
  parameter-free floor leaves room (it exceeds 1e-5 at every ε on the journal's sets and digits), neither where
  the search is beyond the accountant (the 16-agent spiked set; docs/studies.md).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ddppm.accounting.accountant import AccountantSettings
from ddppm.accounting.calibration import CalibrationGrid
from ddppm.accounting.settings import accountant_settings, calibration_grid
from ddppm.common_task.task import CommonTask, captured_variance, chance_error, subspace_error
from ddppm.core.problem import DistributedProblem
from ddppm.core.seeds import run_generators
from ddppm.methods.base import get_method


def unit_columns(A: np.ndarray) -> np.ndarray:
    """``(d, R)`` → ``(R, d, 1)`` with unit columns (a zero column stays zero: its error is then 1)."""
    norms = np.linalg.norm(A, axis=0)
    return (A / np.where(norms > 0, norms, 1.0)).T[:, :, None]


@dataclass(frozen=True)
class SearchedCalibration:
    """What a variant's ``searched_calibrate`` gets: the problem, the ε grid with one δ limit per ε, the variant's
    validated options, the threat model (its definition and name), the calibration grid (``delta_statistic:
    hockey``) and the common task's target ``v`` (the top eigenvector of ``XᵀX``) its error is measured against."""

    problem: DistributedProblem
    eps: np.ndarray
    limits: np.ndarray
    options: dict[str, Any]
    model: dict[str, str]
    model_name: str
    grid: CalibrationGrid
    v: np.ndarray

    @property
    def seed(self) -> int:
        return int(self.options["calibration"]["seed"])

    @property
    def settings(self) -> AccountantSettings:
        return accountant_settings(self.options["privacy"], self.model)


def costs(problem: DistributedProblem, T: int) -> dict[str, Any]:
    """Floats one agent sends (``d`` per gossip round, ``c`` rounds per iteration, and its final block of ``q``
    (``n_j``), which the estimate does not need but both variants release), communication rounds and per-agent
    memory. A point where no parameters met the limit ran nothing: ``T = 0``."""
    n_j = int(np.max(problem.sizes))
    return {"floats_per_agent": T * problem.c * problem.d + n_j, "rounds": T * problem.c + 1, "memory": "n_j·d"}


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
    setting: str = "standard",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every run of each variant of ``options`` (registered name → its validated options) calibrated under
    ``threat_model`` at each ε and ``delta_limit``, in the common task's runs format
    (:func:`ddppm.common_task.run.run_methods`; privacy column ``searched``, trust model ``gossip``, k = 1), and the
    calibrations' parameter rows. A variant is any registered method with ``searched_calibrate`` and
    ``searched_estimates`` (the journal's here, the workshop's in :mod:`ddppm.methods.workshop.common_searched`).

    The calibration compares Definition 1's hockey-stick δ with the limit (``delta_statistic: hockey``). Runs draw
    from generators labelled (dataset, 1, method, ε) as every common-task method's. Where no parameter choice met
    the limit the ε has one row with ``feasible`` False and no error. ``setting`` names the rows' setting (the
    common task's ``prepared_rows``: the searches run on the pipeline's prepared rows)."""

    task = CommonTask.from_problem(problem, 1)
    eps = np.asarray(eps, float)
    limits = np.full(eps.size, float(delta_limit))
    model = definitions[threat_model]
    frames, tables = [], []
    for name, method_options in options.items():
        method = get_method(name)
        grid = calibration_grid({**method_options["calibration"], "delta_statistic": "hockey"})
        job = SearchedCalibration(problem, eps, limits, method_options, model, threat_model, grid, task.V[:, 0])
        table = method.searched_calibrate(job)
        tables.append(table.assign(method=name, dataset=dataset))
        for _, row in table.iterrows():
            base = {"setting": setting, "dataset": dataset, "k": 1, "method": name, "trust_model": "gossip",
                    "privacy_column": "searched", "eps": float(row["eps"]), "delta_limit": float(delta_limit),
                    "delta": float(row["delta_standard"]), "feasible": bool(row["feasible"]), "sigma": np.nan,
                    "noise_multiplier": np.nan}  # fmt: skip
            if not bool(row["feasible"]):
                frames.append(pd.DataFrame([{**base, "run": 0, "error": np.nan, "captured_variance": np.nan,
                                             "seconds_per_run": np.nan, **costs(problem, 0)}]))  # fmt: skip
                continue
            rngs = run_generators(seed, (dataset, 1, name, float(row["eps"])), range(runs))
            start = time.perf_counter()
            V_hat = method.searched_estimates(problem, row, rngs)
            seconds = (time.perf_counter() - start) / runs
            frames.append(
                pd.DataFrame(
                    {
                        **base,
                        "run": np.arange(runs),
                        "error": subspace_error(V_hat, task.V),
                        "captured_variance": captured_variance(V_hat, task),
                        "seconds_per_run": seconds,
                        **costs(problem, int(row["T"])),
                    }  # fmt: skip
                )
            )
    out = pd.concat(frames, ignore_index=True)
    out["chance_error"] = chance_error(task.d, 1)
    out["memory"] = out["memory"].astype(str)
    return out, pd.concat(tables, ignore_index=True)
