"""D-DP-PM's workflow steps: accountant settings from config, sharded calibration, the δ-vs-T curve (Fig. 3).

Every function takes the validated config section ``methods.ddppm`` (``options``) and a threat model
``{view, accounting, adjacency}`` as plain dictionaries, so it is usable without Snakemake.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ddppm.accounting.accountant import evaluate_delta
from ddppm.accounting.calibration import Calibration
from ddppm.accounting.floor import FLOOR_VIEWS, FloorSettings, parameter_free_floor
from ddppm.accounting.iteration import DDPPMParams, ddppm_errors, draw_standard_normals
from ddppm.accounting.neighbours import Neighbour, neighbour_table, neighbours_from_table
from ddppm.accounting.rows import params_from_row
from ddppm.accounting.settings import accountant_settings, calibration_grid, threat_model
from ddppm.core.errors import ConfigError
from ddppm.core.problem import DistributedProblem
from ddppm.core.progress import Progress
from ddppm.core.seeds import run_generators
from ddppm.data import LABELS
from ddppm.methods.ddppm.params import param_rows
from ddppm.methods.ddppm.theory import theorem3_bound
from ddppm.privacy.threat_models import BUILT_IN

THREAT_MODELS: dict[str, dict[str, str]] = {name: tm.as_dict() for name, tm in BUILT_IN.items()}
"""The built-in named threat models as dicts (the table itself: :mod:`ddppm.privacy.threat_models`)."""


def _calibration(
    problem: DistributedProblem, eps: np.ndarray, limits: np.ndarray, options: dict, model: dict
) -> Calibration:
    return Calibration(
        problem,
        np.asarray(eps, float),
        np.asarray(limits, float),
        calibration_grid(options["calibration"]),
        accountant_settings(options["privacy"], model),
        seed=int(options["calibration"]["seed"]),
    )


def prepare_calibration(
    problem: DistributedProblem, eps: np.ndarray, limits: np.ndarray, options: dict, model: dict
) -> dict:
    """The calibration's neighbour search, once (:meth:`Calibration.neighbour_state`): every coarse chunk and
    the final stage start from it instead of searching again."""
    return _calibration(problem, eps, limits, options, model).neighbour_state()


def run_calibration_chunk(
    problem: DistributedProblem,
    eps: np.ndarray,
    limits: np.ndarray,
    options: dict,
    model: dict,
    chunk: int,
    chunks: int,
    state: dict | None = None,
) -> pd.DataFrame:
    """Coarse-grid slice ``chunk`` of ``chunks`` (``methods.ddppm.calibration.chunks``; a cluster job each),
    from the neighbour search of :func:`prepare_calibration` (``state``; searched here without it)."""
    return _calibration(problem, eps, limits, options, model).prepare(state).coarse_rows(chunk, chunks)


def run_calibration(
    problem: DistributedProblem,
    eps: np.ndarray,
    limits: np.ndarray,
    options: dict,
    model: dict,
    coarse: pd.DataFrame | None = None,
    state: dict | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Spec §7 for one dataset and threat model: the chosen table (one row per ε), every candidate, metadata.

    ``coarse`` is the gathered output of :func:`run_calibration_chunk`; without it the coarse grid is
    assessed here. ``state`` is :func:`prepare_calibration`'s neighbour search; without it the search runs
    here. Either way the result is the same.
    """
    run = _calibration(problem, eps, limits, options, model).prepare(state)
    result = run.finish(run.coarse_rows() if coarse is None else coarse)
    meta = {
        "neighbours": neighbour_table(result.neighbours).to_dict("list"),
        "t_star": result.t_star,
        "t_star_reached": result.t_star_reached,
        "mu1": result.mu1,
        "mu2": result.mu2,
        "screen_pairs": [list(p) for p in result.screen],
        "threat_model": model,
        "privacy": options["privacy"],
        "calibration": options["calibration"],
    }
    return result.chosen, result.candidates, meta


def calibrate_threat_model(
    problem: DistributedProblem, eps: np.ndarray, limits: np.ndarray, options: dict, name: str
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Calibrate under the named threat model in one process: (parameter rows, candidates, metadata)."""
    model = threat_model(name, options.get("threat_model_definitions"))
    chosen, candidates, meta = run_calibration(problem, eps, limits, options, model)
    return param_rows(chosen, name, model), candidates, meta


def chosen_row(table: pd.DataFrame, eps: float) -> pd.Series:
    """The row of a per-ε table at ``eps``."""
    rows = table[np.isclose(table["eps"], eps)]
    if rows.empty:
        raise ConfigError(f"ε={eps:g} is not in the calibration table; add it to `epsilons`")
    return rows.iloc[0]


def floor_neighbours(floor: pd.DataFrame, view: str) -> list[Neighbour]:
    """The distinct worst neighbours of a floor table (:func:`floor_table`) under ``view``, one per ε at most."""
    out: dict[tuple, Neighbour] = {}
    for _, row in floor[floor["view"] == view].iterrows():
        new_row = np.asarray(json.loads(row["new_row"]), float)
        kind = "floor:" + hashlib.sha256(new_row.tobytes()).hexdigest()[:12]
        neighbour = Neighbour(int(row["agent"]), int(row["row"]), kind, new_row)
        out.setdefault(neighbour.key, neighbour)
    return list(out.values())


def _worst_of_calibration(calibration: pd.DataFrame, neighbours: dict, screen: list | None = None) -> list:
    """The neighbours every δ the calibration recorded was computed with, from its pool.

    The worst neighbour of every ε that met its limit (its confirmed δ), and the neighbours of the
    calibration's screen (``screen``: the pairs every candidate's screened δ is the worst over). So at the
    candidate's own T the curve's δ is at least the δ the calibration recorded for it, at every ε, and equal
    for a chosen candidate. (Taking only the met rows' neighbours once drew Wine under ``sound`` as feasible
    at ε = 5: the one met ε, 100, had a neighbour that leaks little at ε = 5.) The whole pool if neither.
    """
    pool = {n.key: n for n in neighbours_from_table(pd.DataFrame(neighbours))}
    keys = set()
    if "worst_agent" in calibration:
        for _, row in calibration[calibration["met"].astype(bool)].iterrows():
            keys.add((int(row["worst_agent"]), int(row["worst_row"]), str(row["worst_kind"])))
    keys |= {(int(agent), int(row), str(kind)) for _, agent, row, kind in screen or []}
    chosen = [pool[k] for k in sorted(keys) if k in pool]
    return chosen or list(pool.values())


def delta_curve(
    problem: DistributedProblem,
    calibration: pd.DataFrame,
    candidates: pd.DataFrame,
    eps_grid: np.ndarray,
    limits: np.ndarray,
    options: dict,
    model: dict,
    dataset: str,
    seed: int,
    neighbours: dict | None = None,
    screen: list | None = None,
    floor: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, dict]:
    """δ(ε) and the error for T = 1..T_max with the other calibrated parameters fixed (paper Fig. 3).

    If no candidate met the limit at this ε, the candidate with the least recorded δ is used (confirmed with
    every pair where any was, else screened) and the table says so; ``delta_recorded`` is the δ the calibration
    recorded for the candidate at this ε (at ``T_calibrated`` the curve's δ is at least that; for a calibrated
    choice it is equal unless the floor's neighbours below leak more than the calibration's, which then shows).
    ``neighbours`` (the calibration's ``meta["neighbours"]``) replaces the neighbour search
    at every T, narrowed to those every recorded δ used (:func:`_worst_of_calibration`, with ``screen``, its
    ``meta["screen_pairs"]``), plus the worst neighbours the parameter-free floor found under the model's view
    (``floor``, :func:`floor_table`; :func:`floor_neighbours`): without them an infeasible point's curve, whose
    candidate was only screened over two pairs, could show a δ below the floor the project has proven (Diabetes
    under ``paper_worst`` at T = 1: 0.263 over the screen's pairs, 0.410 at the floor's neighbour).
    """
    curve_cfg = options["delta_curve"]
    eps = float(curve_cfg["eps"])
    in_grid = np.isclose(np.asarray(eps_grid, float), eps)
    limit = float(np.asarray(limits, float)[in_grid][0]) if in_grid.any() else np.nan
    if in_grid.any() and bool(chosen_row(calibration, eps)["met"]):
        row = chosen_row(calibration, eps)
        base, source, recorded = params_from_row(row), "calibrated", float(row["delta"])
    else:
        at_eps = candidates[np.isclose(candidates["eps"], eps)] if in_grid.any() else candidates
        # The least δ the calibration recorded: among candidates confirmed with every pair where there are any
        # (a screened δ, over two pairs, can be far below the candidate's δ with every pair).
        confirmed = at_eps["delta_full"].notna() if "delta_full" in at_eps else pd.Series(False, index=at_eps.index)
        delta = at_eps.loc[confirmed, "delta_full"] if confirmed.any() else at_eps["delta_screen"]
        best = delta.idxmin()
        base, recorded = params_from_row(at_eps.loc[best]), float(delta[best])
        source = "least-delta confirmed candidate" if confirmed.any() else "least-delta screened candidate"
    settings = accountant_settings(options["privacy"], model)
    # Under the worst-case adjacency, δ at every T uses the neighbours that were worst in the calibration
    # (at some ε), taken from its search pool: searching again at each T would multiply the cost (the
    # curve's caption says so).
    pool = _worst_of_calibration(calibration, neighbours, screen) if neighbours is not None else None
    if pool is not None and floor is not None:
        known = {n.key for n in pool}
        pool += [n for n in floor_neighbours(floor, model["view"]) if n.key not in known]
    runs = int(curve_cfg["runs"])
    rngs = run_generators(seed, (dataset, "delta_curve"), range(runs))
    T_max = int(curve_cfg["T_max"])
    z0, zp = draw_standard_normals(problem.n, T_max, rngs)
    rows = []
    progress = Progress(
        f"δ and error at ε = {eps:g} ({source} parameters, {runs} runs, "
        f"{'worst neighbours of the calibration' if pool is not None else settings.adjacency + ' neighbours'})",
        T_max,
        "values of T",
        every=0,
    )
    for T in range(1, T_max + 1):
        params = DDPPMParams(alpha=base.alpha, sigma_q=base.sigma_q, schedule=base.schedule, T=T)
        res = evaluate_delta(problem, params, np.array([eps]), settings, neighbours=pool)
        err = ddppm_errors(problem, params, z0, zp)
        progress.step(note=f"T = {T}: δ = {res.delta[0]:.3g}, mean error {err.mean():.3f}")
        bound = theorem3_bound(problem, params)
        rows.append(
            {
                "dataset": dataset,
                "label": LABELS.get(dataset, dataset),
                "eps": eps,
                "T": T,
                "delta": res.delta[0],
                "delta_se": res.delta_se[0],
                "delta_max": res.delta_max[0],
                "delta_upper": res.delta_upper[0],
                "delta_limit": limit,
                "error_mean": err.mean(),
                "error_lo": np.quantile(err, 0.025),
                "error_hi": np.quantile(err, 0.975),
                "bound_sin": bound["bound_sin"],
                "bound_det": float(np.sqrt(min(1.0, bound["consensus_term"] + bound["power_term"]))),
                "T_calibrated": base.T,
                "delta_recorded": recorded,
                "params_source": source,
            }
        )
    meta = {
        "params_source": source,
        "alpha": base.alpha,
        "sigma_q": base.sigma_q,
        "schedule": base.schedule.kind,
        "scale": base.schedule.scale,
        "ratio": base.schedule.ratio,
        "threat_model": model,
        "neighbours": f"{len(pool)} worst neighbours of the calibration" if pool is not None else settings.adjacency,
    }
    return pd.DataFrame(rows), meta


def floor_table(
    problem: DistributedProblem,
    eps: np.ndarray,
    limits: np.ndarray,
    options: dict,
    dataset: str,
    views: Sequence[str] = FLOOR_VIEWS,
) -> pd.DataFrame:
    """The parameter-free floor of D-DP-PM's δ under each observer view of ``views`` (default: every one;
    :mod:`ddppm.accounting.floor`).

    One row per (view, ε): ``floor_hockey`` (the hockey-stick δ of the releases without added noise at the
    worst neighbour found: a proven lower bound on D-DP-PM's δ, by either definition, for every T, α, σ_q
    and σ_p), ``pdp_noise_free`` (the two-sided δ of the same releases: shown, not a bound), the δ limit,
    ``infeasible_every_choice`` (the floor exceeds the limit: no parameter choice meets it) and the neighbour.
    """
    settings = FloorSettings(**options["privacy"].get("floor", {}))
    limits = np.asarray(limits, float)
    rows = []
    for view in views:
        result = parameter_free_floor(problem, np.asarray(eps, float), view, settings)
        for e_idx, e in enumerate(result.eps):
            at = result.table[np.isclose(result.table["eps"], e)]
            worst = at.loc[at["delta_hockey"].idxmax()]
            rows.append(
                {
                    "dataset": dataset,
                    "label": LABELS.get(dataset, dataset),
                    "view": view,
                    "eps": float(e),
                    "delta_limit": float(limits[e_idx]),
                    "floor_hockey": float(result.hockey[e_idx]),
                    "pdp_noise_free": float(result.pdp[e_idx]),
                    "infeasible_every_choice": bool(result.hockey[e_idx] > limits[e_idx]),
                    "observer": int(worst["observer"]),
                    "agent": int(worst["agent"]),
                    "row": int(worst["row"]),
                    "new_row": json.dumps(worst["new_row"]),
                    "moves_screened": int(at["moves_screened"].sum()),
                    "moves_exact": int(at["moves_exact"].sum()),
                }
            )
    return pd.DataFrame(rows)


def floor_summary(table: pd.DataFrame) -> pd.DataFrame:
    """The floor table as a reader wants it: one row per (data set, view, ε) with the limit, the floor, the
    two-sided δ of the same releases and the verdict (``meets_limit_possible`` False: infeasible for every
    parameter choice, a proof)."""
    out = table[["label", "view", "eps", "delta_limit", "floor_hockey", "pdp_noise_free"]].copy()
    out["meets_limit_possible"] = ~table["infeasible_every_choice"].astype(bool)
    out["verdict"] = np.where(
        out["meets_limit_possible"], "not excluded by the floor", "infeasible for every parameter choice"
    )
    return out.rename(columns={"label": "dataset"})
