"""Parameter calibration of D-DP-PM (paper §IV-B, spec §7).

Around Corollary 1 (``1/μ₁ < α < 1/μ₂``, ``σ_q = 1/√n``) a grid of noise schedules, noise scales and
iteration counts is searched coarse to fine:

1. stage ``coarse``: ``T = T*`` with every schedule (geometric ratios ``μ₂/μ₁``, 1, ``αμ₁``; constant)
   and every scale ``σ_p = κ σ_q``;
2. stage ``fine``: for each ε, the best coarse schedule is re-searched at ``T = T* + offset``.

Every candidate's error is estimated by Monte Carlo with common random numbers. Its δ is first screened
on the worst few (observer, adjacent) pairs; per ε the least-error candidate that passes the screen is
then confirmed with every pair. Screening is sound because a maximum over a subset can only be smaller.
A candidate is chosen only if its confirmed δ is within the limit; otherwise the table says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ddppm.accountant import AccountantSettings, DeltaResult, PairKey, check_epsilons, evaluate_delta
from ddppm.algorithms import DDPPMParams, NoiseSchedule, ddppm_errors, draw_standard_normals, t_star
from ddppm.errors import ConfigError, PrivacyError
from ddppm.problem import DistributedProblem
from ddppm.seeds import run_generators

RATIO_NAMES = ("corollary", "one", "growth")
DELTA_STATISTICS = ("mean", "max")


@dataclass(frozen=True)
class CalibrationGrid:
    """The search space (config key ``calibration``)."""

    kappas: tuple[float, ...] = tuple(float(k) for k in np.geomspace(0.01, 1000, 11))
    schedules: tuple[str, ...] = ("geometric", "constant")
    ratios: tuple[str, ...] = RATIO_NAMES
    t_offsets: tuple[int, ...] = (-2, -1, 1, 2)
    alpha_factors: tuple[float, ...] = (1.0,)
    sigma_q_factors: tuple[float, ...] = (1.0,)
    runs: int = 100
    screen_pairs: int = 2
    max_verifications: int = 8
    fine_window: int = 2
    t_star_tol: float = 1e-3
    t_max: int = 60
    delta_statistic: str = "mean"

    def __post_init__(self) -> None:
        if not self.kappas or min(self.kappas) <= 0:
            raise ConfigError("calibration.kappas must be a non-empty list of positive numbers")
        unknown = set(self.ratios) - set(RATIO_NAMES)
        if unknown:
            raise ConfigError(f"calibration.ratios: unknown {sorted(unknown)}; use {RATIO_NAMES}")
        if self.delta_statistic not in DELTA_STATISTICS:
            raise ConfigError(f"calibration.delta_statistic must be one of {DELTA_STATISTICS}")
        if self.runs < 2:
            raise ConfigError("calibration.runs must be >= 2")


@dataclass(frozen=True)
class Candidate:
    params: DDPPMParams
    kappa: float
    ratio_name: str
    stage: str


@dataclass
class CalibrationResult:
    """``chosen``: one row per ε; ``candidates``: every evaluated (candidate, ε) with its δ and error."""

    chosen: pd.DataFrame
    candidates: pd.DataFrame
    t_star: int
    t_star_reached: bool
    mu1: float
    mu2: float
    screen: list[PairKey] = field(default_factory=list)


def corollary_alpha(problem: DistributedProblem) -> float:
    """``α₀ = 1/sqrt(μ₁μ₂)``: the geometric midpoint of Corollary 1's interval ``(1/μ₁, 1/μ₂)``."""
    return float(1.0 / np.sqrt(problem.mu1 * problem.mu2))


def make_candidate(problem: DistributedProblem, T: int, alpha: float, sigma_q: float, schedule: str, ratio_name: str,
                   kappa: float, stage: str) -> Candidate:
    """A candidate with ``σ_p(t) = κ σ_q r^t``; ``r`` is ``μ₂/μ₁``, 1 or ``αμ₁`` by ``ratio_name``."""
    ratio = {"corollary": problem.mu2 / problem.mu1, "growth": alpha * problem.mu1}.get(ratio_name, 1.0)
    noise = NoiseSchedule(schedule, kappa * sigma_q, ratio if schedule == "geometric" else 1.0)
    return Candidate(DDPPMParams(alpha=alpha, sigma_q=sigma_q, schedule=noise, T=T), kappa,
                     ratio_name if schedule == "geometric" else "-", stage)


def _families(grid: CalibrationGrid) -> list[tuple[str, str]]:
    fams = [("geometric", r) for r in grid.ratios] if "geometric" in grid.schedules else []
    return fams + ([("constant", "-")] if "constant" in grid.schedules else [])


def check_limits(eps: np.ndarray, limits: np.ndarray) -> np.ndarray:
    limits = np.atleast_1d(np.asarray(limits, float))
    if limits.shape != eps.shape:
        raise ConfigError(f"delta_limits has {limits.size} values but epsilons has {eps.size}; give one per ε")
    if not np.all((limits > 0) & (limits < 1)):
        raise PrivacyError(f"every δ limit must lie in (0, 1), got {limits.tolist()}; fix `delta_limits`")
    return limits


def calibrate(
    problem: DistributedProblem,
    eps: np.ndarray,
    delta_limits: np.ndarray,
    grid: CalibrationGrid | None = None,
    settings: AccountantSettings | None = None,
    seed: int = 0,
) -> CalibrationResult:
    """Choose, per ε, the least-error parameters whose confirmed δ(ε) is at most the δ limit (spec §7)."""
    grid = grid or CalibrationGrid()
    settings = settings or AccountantSettings()
    eps = check_epsilons(eps)
    limits = check_limits(eps, delta_limits)
    rngs = run_generators(seed, ("calibration",), range(grid.runs))
    T_hi = grid.t_max + max(grid.t_offsets, default=0)
    z0, zp = draw_standard_normals(problem.n, T_hi, rngs)
    T0, reached = t_star(problem, z0, grid.t_star_tol, grid.t_max)
    alpha0, sq0 = corollary_alpha(problem), 1.0 / np.sqrt(problem.n)

    coarse = [
        make_candidate(problem, T0, alpha0 * af, sq0 * sf, sched, ratio, k, "coarse")
        for af in grid.alpha_factors for sf in grid.sigma_q_factors
        for sched, ratio in _families(grid) for k in grid.kappas
    ]
    reference = coarse[len(coarse) // 2]
    stat = "delta" if grid.delta_statistic == "mean" else "delta_max"
    pair_stat = "delta_mean" if grid.delta_statistic == "mean" else "delta_max"
    full_cache: dict[tuple, DeltaResult] = {}
    pair_cache: dict[tuple[tuple, PairKey], np.ndarray] = {}

    def full(c: Candidate) -> DeltaResult:
        key = c.params.canonical_key()
        if key not in full_cache:
            full_cache[key] = evaluate_delta(problem, c.params, eps, settings)
            for pair, frame in full_cache[key].pairs.groupby(["observer", "agent", "row", "kind"], sort=False):
                pair_cache[(key, _pair_key(pair))] = frame[pair_stat].to_numpy()
        return full_cache[key]

    def screened(c: Candidate, pairs: list[PairKey]) -> np.ndarray:
        """Worst δ over ``pairs`` for every ε, evaluating only pairs not seen before for this candidate."""
        key = c.params.canonical_key()
        missing = {p for p in pairs if (key, p) not in pair_cache}
        if missing:
            res = evaluate_delta(problem, c.params, eps, settings, only_pairs=missing)
            for pair, frame in res.pairs.groupby(["observer", "agent", "row", "kind"], sort=False):
                pair_cache[(key, _pair_key(pair))] = frame[pair_stat].to_numpy()
        return np.max([pair_cache[(key, p)] for p in pairs], axis=0)

    ranking = full(reference).pairs.groupby(["observer", "agent", "row", "kind"])["kl_mean"].max()
    screen = [_pair_key(k) for k in ranking.sort_values(ascending=False).index[: grid.screen_pairs]]
    initial_screen = list(screen)

    rows: list[dict] = []
    seen: dict[tuple, int] = {}

    def assess(cands: list[Candidate]) -> None:
        for c in cands:
            key = c.params.canonical_key()
            if key in seen:
                continue
            seen[key] = len(seen)
            delta = screened(c, initial_screen)
            err = ddppm_errors(problem, c.params, z0, zp)
            for e_idx, e in enumerate(eps):
                rows.append({
                    "candidate": seen[key], "stage": c.stage, "alpha": c.params.alpha, "sigma_q": c.params.sigma_q,
                    "schedule": c.params.schedule.kind, "ratio_name": c.ratio_name, "ratio": c.params.schedule.ratio,
                    "scale": c.params.schedule.scale, "kappa": c.kappa, "T": c.params.T,
                    "error_mean": float(err.mean()), "error_std": float(err.std(ddof=1)),
                    "eps": e, "delta_limit": limits[e_idx], "delta_screen": delta[e_idx], "_cand": c,
                })

    assess(coarse)
    table = pd.DataFrame(rows)
    kappas = np.array(sorted(grid.kappas))
    fine = []
    for e, lim in zip(eps, limits, strict=True):
        ok = table[(table.eps == e) & (table.delta_screen <= lim)]
        best = ok.nsmallest(1, "error_mean") if len(ok) else table[table.eps == e].nsmallest(1, "delta_screen")
        c0: Candidate = best["_cand"].iloc[0]
        k_idx = int(np.argmin(np.abs(np.log(kappas / c0.kappa))))
        window = kappas[max(k_idx - grid.fine_window, 0): k_idx + grid.fine_window + 1]
        fine += [make_candidate(problem, c0.params.T + off, c0.params.alpha, c0.params.sigma_q,
                                c0.params.schedule.kind, c0.ratio_name, k, "fine")
                 for off in grid.t_offsets if c0.params.T + off >= 1 for k in window]
    assess(fine)
    table = pd.DataFrame(rows)
    table["delta_full"] = np.nan

    chosen = []
    for e_idx, (e, lim) in enumerate(zip(eps, limits, strict=True)):
        order = table[table.eps == e].sort_values(["error_mean", "candidate"])
        pick, verified, n_ok = None, 0, 0
        for idx, row in order.iterrows():
            if screened(row["_cand"], screen)[e_idx] > lim:
                continue
            n_ok += 1
            res = full(row["_cand"])
            verified += 1
            value = getattr(res, stat)[e_idx]
            table.loc[idx, "delta_full"] = value
            if value <= lim:
                pick = (idx, res)
                break
            worst = res.worst[e_idx]
            screen.append((int(worst["observer"]), int(worst["agent"]), int(worst["row"]), str(worst["kind"])))
            if verified >= grid.max_verifications:
                break
        chosen.append(_chosen_row(table, e_idx, e, lim, pick, verified, n_ok, T0, problem, stat))
    candidates = table.drop(columns="_cand")
    return CalibrationResult(chosen=pd.DataFrame(chosen), candidates=candidates, t_star=T0, t_star_reached=reached,
                             mu1=problem.mu1, mu2=problem.mu2, screen=screen)


def _pair_key(pair: tuple) -> PairKey:
    observer, agent, row, kind = pair
    return (int(observer), int(agent), int(row), str(kind))


def _chosen_row(table: pd.DataFrame, e_idx: int, e: float, lim: float, pick, verified: int, n_ok: int, T0: int,
                problem: DistributedProblem, stat: str) -> dict:
    base = {"eps": e, "delta_limit": lim, "t_star": T0, "c": problem.c, "mu1": problem.mu1, "mu2": problem.mu2,
            "n_screen_feasible": n_ok, "n_verified": verified}
    if pick is None:
        reason = ("no candidate met the δ limit" if n_ok == 0 else
                  f"none of the {verified} least-error screened candidates met the limit with all pairs")
        return {**base, "met": False, "reason": reason}
    idx, res = pick
    row = table.loc[idx]
    worst = res.worst[e_idx]
    return {
        **base, "met": True, "reason": "",
        "alpha": row["alpha"], "sigma_q": row["sigma_q"], "schedule": row["schedule"], "ratio_name": row["ratio_name"],
        "ratio": row["ratio"], "scale": row["scale"], "kappa": row["kappa"], "T": int(row["T"]),
        "delta_statistic": stat, "delta": res.delta[e_idx], "delta_se": res.delta_se[e_idx], "delta_max": res.delta_max[e_idx],
        "delta_upper": res.delta_upper[e_idx],
        "error_mean": row["error_mean"], "error_std": row["error_std"],
        "worst_observer": worst["observer"], "worst_agent": worst["agent"], "worst_row": worst["row"],
        "worst_kind": worst["kind"],
    }


def params_from_row(row: pd.Series | dict) -> DDPPMParams:
    """Rebuild the parameters recorded in a row of the ``chosen`` table."""
    return DDPPMParams(alpha=float(row["alpha"]), sigma_q=float(row["sigma_q"]),
                       schedule=NoiseSchedule(str(row["schedule"]), float(row["scale"]), float(row["ratio"])),
                       T=int(row["T"]))
