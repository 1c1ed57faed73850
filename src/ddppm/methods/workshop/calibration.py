"""Calibration of the workshop D-DP-PM: the journal method's frontier search, run on the workshop mechanism.

For each total ε and its δ limit the budget split (:mod:`.budget`) fixes the iterations' share
``(ε_i, δ_limit − δ₁)`` and the final noise factor ``f(ε)``; the search of
:class:`ddppm.accounting.calibration.Calibration` (coarse grid over T and the noise schedules, fine stage,
screening and confirmation with every (observer, neighbour) pair, worst-case neighbour searches) then picks the
least-error iteration parameters whose ``max_i δ_i(ε_i)`` meets the iterations' share. The error of a candidate
depends on ε through ``f(ε)``, so :class:`WorkshopCandidates` returns one error per ε. The chosen table is
reported in total terms: ``delta = δ_iterations + δ₁ ≤ δ_limit``. Choosing by the error on the data is the journal
paper's practice and is not covered by δ (column ``chosen_by``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ddppm.accounting.accountant import AccountantSettings, DeltaResult
from ddppm.accounting.calibration import Calibration, CalibrationGrid, check_limits
from ddppm.accounting.iteration import NoiseSchedule
from ddppm.accounting.neighbours import neighbour_table
from ddppm.accounting.rows import params_to_row
from ddppm.accounting.settings import accountant_settings, calibration_grid, threat_model
from ddppm.core.problem import DistributedProblem
from ddppm.methods.gossip_base.params import chosen_row, chosen_table
from ddppm.methods.workshop.accounting import WorkshopReleases, iterations_delta
from ddppm.methods.workshop.algorithm import WorkshopParams, draw_workshop_normals, workshop_errors
from ddppm.methods.workshop.budget import BudgetSplit


def params_from_row(row: pd.Series | dict) -> WorkshopParams:
    """The iteration parameters recorded in a row of a calibration or parameter table."""
    return WorkshopParams(
        alpha=float(row["alpha"]),
        sigma_q=float(row["sigma_q"]),
        schedule=NoiseSchedule(str(row["schedule"]), float(row["scale"]), float(row["ratio"])),
        T=int(row["T"]),
    )


@dataclass(frozen=True)
class WorkshopCandidates:
    """The workshop mechanism for the shared calibration (:class:`ddppm.accounting.calibration.CandidateFamily`).

    ``noise_factors[k]`` is the final noise factor at the calibration's k-th ε. ``metric`` replaces the error of
    workshop Fig. 1 (the left vector after the final release) where another task calibrates it (the common task's
    right-vector error, :mod:`ddppm.methods.ddppm.common_searched`).
    """

    problem: DistributedProblem
    noise_factors: np.ndarray
    chernoff_bound: str = "theorem1"
    metric: Callable[[DistributedProblem, WorkshopParams, tuple[np.ndarray, ...]], np.ndarray] | None = None
    config_key = "workshop.method_options.ddppm_workshop.calibration"

    def params(self, alpha: float, sigma_q: float, schedule: NoiseSchedule, T: int) -> WorkshopParams:
        return WorkshopParams(alpha=alpha, sigma_q=sigma_q, schedule=schedule, T=T)

    def params_from_row(self, row: pd.Series | dict) -> WorkshopParams:
        return params_from_row(row)

    def draws(self, n: int, T: int, rngs: Sequence[np.random.Generator]) -> tuple[np.ndarray, ...]:
        return draw_workshop_normals(self.problem, T, rngs)

    def errors(self, problem: DistributedProblem, params: WorkshopParams, draws: tuple[np.ndarray, ...]) -> np.ndarray:
        if self.metric is not None:
            return self.metric(problem, params, draws)
        return workshop_errors(problem, params, draws, self.noise_factors)  # type: ignore[arg-type]

    def evaluate_delta(self, problem, params, eps, settings, only_pairs=None, neighbours=None) -> DeltaResult:
        return iterations_delta(problem, params, eps, settings, self.chernoff_bound, only_pairs, neighbours)


@dataclass
class WorkshopCalibration:
    """The chosen parameters per total ε (``chosen``), every evaluated candidate, and the search's metadata."""

    chosen: pd.DataFrame
    candidates: pd.DataFrame
    meta: dict[str, Any]


def calibrate_workshop(
    problem: DistributedProblem,
    eps,
    delta_limits,
    grid: CalibrationGrid,
    settings: AccountantSettings,
    budget: BudgetSplit,
    chernoff_bound: str = "theorem1",
    seed: int = 0,
    metric: Callable[[DistributedProblem, WorkshopParams, tuple[np.ndarray, ...]], np.ndarray] | None = None,
) -> WorkshopCalibration:
    """Per total ε: the least-error parameters with ``max_i δ_i(ε − ε₁) ≤ δ_limit − δ₁`` (module docstring);
    ``metric``: another error than Fig. 1's (:class:`WorkshopCandidates`)."""
    eps = np.atleast_1d(np.asarray(eps, float))
    limits = check_limits(eps, delta_limits)
    parts = budget.split(eps, limits)
    factors = budget.noise_factors(eps, limits, settings.accounting)
    family = WorkshopCandidates(problem, factors, chernoff_bound, metric)
    run = Calibration(problem, parts["eps_iterations"], parts["delta_iterations_limit"], grid, settings, seed, family)
    run.prepare()
    result = run.finish(run.coarse_rows())
    chosen = _in_total_terms(result.chosen, eps, limits, parts, factors, budget, settings)
    candidates = result.candidates.rename(columns={"eps": "eps_iterations", "delta_limit": "delta_iterations_limit"})
    by_iter = dict(zip(parts["eps_iterations"], eps, strict=True))
    candidates.insert(0, "eps", candidates["eps_iterations"].map(by_iter))
    meta = {
        "neighbours": neighbour_table(result.neighbours).to_dict("list"),
        "t_star": result.t_star,
        "mu1": result.mu1,
        "mu2": result.mu2,
        "screen_pairs": [list(p) for p in result.screen],
        "accounting_iterations": WorkshopReleases(chernoff_bound).accounting_name(settings),
        "final_mechanism": budget.mechanism(settings.accounting),
        "budget": {
            "eps_final_share": budget.eps_final_share,
            "delta_final_share": budget.delta_final_share,
            "delta_q": budget.delta_q,
            "final_mechanism": budget.final_mechanism,
        },
    }
    return WorkshopCalibration(chosen, candidates, meta)


def _in_total_terms(
    chosen: pd.DataFrame,
    eps: np.ndarray,
    limits: np.ndarray,
    parts: dict[str, np.ndarray],
    factors: np.ndarray,
    budget: BudgetSplit,
    settings: AccountantSettings,
) -> pd.DataFrame:
    """The calibration's rows (in the iterations' ε and δ) restated for the whole algorithm (composition)."""
    out = chosen.rename(
        columns={"eps": "eps_iterations", "delta_limit": "delta_iterations_limit", "delta": "delta_iterations"}
    )
    out.insert(0, "eps", eps)
    out.insert(1, "delta_limit", limits)
    out["eps_final"] = parts["eps_final"]
    out["delta_final"] = parts["delta_final"]
    out["final_noise_factor"] = factors
    pairs = zip(parts["eps_final"], factors, strict=True)
    out["delta_final_actual"] = [budget.final_delta_actual(e1, f) for e1, f in pairs]
    out["final_mechanism"] = budget.mechanism(settings.accounting)
    if "delta_iterations" in out:
        out["delta"] = out["delta_iterations"] + out["delta_final"]
    else:
        out["delta"] = np.nan
    for key in ("eps_final_share", "delta_final_share", "delta_q"):
        out[key] = getattr(budget, key)
    return out


def calibrate_threat_model(
    problem: DistributedProblem,
    eps,
    limits,
    options: dict[str, Any],
    name: str,
    definitions: dict[str, dict[str, str]] | None = None,
) -> WorkshopCalibration:
    """Calibrate under the named threat model with the validated options of the workshop D-DP-PM (``options``,
    config ``workshop.method_options.ddppm_workshop``); ``definitions`` are the config's ``threat_models`` (the
    built-in ones by default)."""
    model = threat_model(name, definitions)
    result = calibrate_workshop(
        problem,
        eps,
        limits,
        calibration_grid(options["calibration"]),
        accountant_settings(options["privacy"], model),
        BudgetSplit.from_config(options["budget"]),
        options["privacy"]["chernoff_bound"],
        seed=int(options["calibration"]["seed"]),
    )
    result.meta.update(threat_model=model, threat_model_name=name)
    return result


BUDGET_COLUMNS = (
    "eps_iterations",
    "eps_final",
    "delta_iterations",
    "delta_iterations_limit",
    "delta_final",
    "delta_final_actual",
    "final_noise_factor",
    "final_mechanism",
    "eps_final_share",
    "delta_final_share",
    "delta_q",
)
"""The budget split and the final release of each row (docs/workshop.md has the column dictionary)."""


def param_rows(calibration: WorkshopCalibration, threat_model_name: str) -> pd.DataFrame:
    """The method's parameter table under one threat model from a calibration (one row per total ε).

    ``accounting`` names how the iterations' δ was computed (``theorem1``, ``chernoff`` or ``exact``); ``delta``
    is the composed ``δ_iterations + δ₁`` (NaN where no parameters met the limit, ``feasible`` False).
    """
    meta, rows = calibration.meta, []
    model = {"accounting": meta["accounting_iterations"], **{k: meta["threat_model"][k] for k in ("view", "adjacency")}}
    for _, row in calibration.chosen.iterrows():
        met = bool(row["met"])
        out = chosen_row(row, threat_model_name, model)
        for key in BUDGET_COLUMNS:
            if key in row and not (key == "delta_iterations" and not met):
                out[key] = row[key]
        if met:
            out.update(params_to_row(params_from_row(row)))  # the journal's columns: the same parameters
            out.update(
                {
                    "delta_iterations_se": float(row["delta_se"]),
                    "delta_iterations_max": float(row["delta_max"]),
                    "calibration_error": float(row["error_mean"]),
                }
            )
        rows.append(out)
    return chosen_table(rows)
