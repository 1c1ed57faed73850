"""Parameter calibration of D-DP-PM (paper §IV-B, docs/method.md §7).

δ and the error depend on (α, σ_q, σ_p) only through the effective noise ``η_t = σ_p(t)/(σ_q α^t)``, so
α and σ_q stay at Corollary 1's values (``α = 1/sqrt(μ₁μ₂)``, ``σ_q = 1/√n``) and the search runs over the
privacy–utility frontier in (T, η_1..η_T), coarse to fine:

1. stage ``coarse``: every T of ``t_coarse`` up to T* + 2 (the paper only "varied T around T*"; on
   Diabetes its own accounting's best points are at T = 2), and T*; every schedule family (Corollary 1's
   geometric ``μ₂/μ₁``, constant σ_p, η ∝ μ₁^t tracking the signal, constant η; constant σ_p) and every
   scale κ (``σ_p(1) = κ σ_q r``);
2. stage ``fine``: for each ε, around its best coarse candidate, T + ``t_offsets`` and a finer κ grid
   (the neighbouring κ of the coarse grid and κ × ``fine_steps``), so the choice is not a grid artefact.

Every candidate's error is estimated by Monte Carlo with common random numbers. Its δ is first screened
on the worst few (observer, neighbour) pairs; per ε the least-error candidate that passes the screen is
then confirmed with every pair (under the worst-case adjacency, after a fresh neighbour search at its own
parameters). Screening is sound because a maximum over a subset can only be smaller. A candidate is
chosen only if its confirmed δ is within the limit; otherwise the table says so. Every evaluated
candidate is recorded with its error and δ (the frontier figure draws them).

**Not covered by δ.** The choice (T, the schedule, κ; α and the ratio from μ₁, μ₂; T*) is made by the error on
the very rows δ is about: the paper's own practice, kept to reproduce it and labelled in every parameter row
(``chosen_by``, :data:`ddppm.methods.gossip_base.params.CHOSEN_ON_THE_DATA`; docs/privacy.md, "Where each
parameter comes from").

The search is shared with other variants of D-DP-PM through a :class:`CandidateFamily` (how a candidate's
parameters are built and read back, its Monte-Carlo error, its δ); the default, :data:`JOURNAL_CANDIDATES`,
is the journal's Algorithm 1. A family may return one error per ε (a final release whose noise depends on
ε); the choice at each ε then uses that ε's error.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import pandas as pd

from ddppm.accounting.accountant import (
    AccountantSettings,
    DeltaResult,
    PairKey,
    check_epsilons,
    default_neighbours,
    evaluate_delta,
)
from ddppm.accounting.iteration import DDPPMParams, NoiseSchedule, checked_t_star, ddppm_errors, draw_standard_normals
from ddppm.accounting.rows import params_from_row
from ddppm.accounting.schema import engine_default
from ddppm.core.errors import ConfigError, PrivacyError
from ddppm.core.problem import DistributedProblem
from ddppm.core.progress import LOGGER, Progress
from ddppm.core.seeds import run_generators

RATIO_NAMES = ("corollary", "one", "growth", "eta_constant")
DELTA_STATISTICS = ("mean", "max", "hockey")
_STAT_OF = {
    "mean": ("delta", "delta_mean"),
    "max": ("delta_max", "delta_max"),
    "hockey": ("delta_hockey", "delta_hockey_mean"),
}
"""Per ``delta_statistic``: the :class:`DeltaResult` field and the pairs' column compared with the limit."""


@dataclass(frozen=True)
class CalibrationGrid:
    """The search space (config key ``methods.ddppm.calibration``; defaults from its schema)."""

    kappas: tuple[float, ...] = engine_default("calibration", "kappas")
    schedules: tuple[str, ...] = engine_default("calibration", "schedules")
    ratios: tuple[str, ...] = engine_default("calibration", "ratios")
    t_offsets: tuple[int, ...] = engine_default("calibration", "t_offsets")
    t_coarse: tuple[int, ...] = engine_default("calibration", "t_coarse")
    alpha_factors: tuple[float, ...] = engine_default("calibration", "alpha_factors")
    sigma_q_factors: tuple[float, ...] = engine_default("calibration", "sigma_q_factors")
    runs: int = engine_default("calibration", "runs")
    screen_pairs: int = engine_default("calibration", "screen_pairs")
    max_verifications: int = engine_default("calibration", "max_verifications")
    fine_window: int = engine_default("calibration", "fine_window")
    fine_steps: tuple[float, ...] = engine_default("calibration", "fine_steps")
    t_star_tol: float = engine_default("calibration", "t_star_tol")
    t_max: int = engine_default("calibration", "t_max")
    delta_statistic: str = engine_default("calibration", "delta_statistic")

    def __post_init__(self) -> None:
        if not self.kappas or min(self.kappas) <= 0:
            raise ConfigError("methods.ddppm.calibration.kappas must be a non-empty list of positive numbers")
        unknown = set(self.ratios) - set(RATIO_NAMES)
        if unknown:
            raise ConfigError(f"methods.ddppm.calibration.ratios: unknown {sorted(unknown)}; use {RATIO_NAMES}")
        if self.delta_statistic not in DELTA_STATISTICS:
            raise ConfigError(f"methods.ddppm.calibration.delta_statistic must be one of {DELTA_STATISTICS}")
        if self.runs < 2:
            raise ConfigError("methods.ddppm.calibration.runs must be >= 2")


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
    neighbours: list = field(default_factory=list)


class CandidateFamily(Protocol):
    """A mechanism as the calibration sees it.

    ``params`` builds a parameter set from (α, σ_q, schedule, T) and ``params_from_row`` reads one back from a
    table row; ``draws`` are the unit normals of the calibration's Monte-Carlo runs (the first item is the
    ``n × R`` start ``q^(0)/σ_q``, which also defines T*); ``errors`` is the error of every run, shape ``(R,)``
    or ``(E, R)`` (one row per ε of the calibration); ``evaluate_delta`` is
    :func:`ddppm.accounting.accountant.evaluate_delta` for this mechanism; ``config_key`` names the config
    section of its calibration (for error messages).
    """

    config_key: str

    def params(self, alpha: float, sigma_q: float, schedule: NoiseSchedule, T: int) -> DDPPMParams: ...

    def params_from_row(self, row: pd.Series | dict) -> DDPPMParams: ...

    def draws(self, n: int, T: int, rngs: Sequence[np.random.Generator]) -> tuple[np.ndarray, ...]: ...

    def errors(self, problem: DistributedProblem, params: DDPPMParams, draws: tuple[np.ndarray, ...]) -> np.ndarray: ...

    def evaluate_delta(
        self,
        problem: DistributedProblem,
        params: DDPPMParams,
        eps: np.ndarray,
        settings: AccountantSettings,
        only_pairs: set[PairKey] | None = None,
        neighbours: list | None = None,
    ) -> DeltaResult: ...


class JournalCandidates:
    """The journal's Algorithm 1: :class:`DDPPMParams`, :func:`ddppm_errors` and the default accountant."""

    config_key = "methods.ddppm.calibration"

    def params(self, alpha: float, sigma_q: float, schedule: NoiseSchedule, T: int) -> DDPPMParams:
        return DDPPMParams(alpha=alpha, sigma_q=sigma_q, schedule=schedule, T=T)

    def params_from_row(self, row: pd.Series | dict) -> DDPPMParams:
        return params_from_row(row)

    def draws(self, n: int, T: int, rngs: Sequence[np.random.Generator]) -> tuple[np.ndarray, ...]:
        return draw_standard_normals(n, T, rngs)

    def errors(self, problem: DistributedProblem, params: DDPPMParams, draws: tuple[np.ndarray, ...]) -> np.ndarray:
        return ddppm_errors(problem, params, *draws)

    def evaluate_delta(self, problem, params, eps, settings, only_pairs=None, neighbours=None) -> DeltaResult:
        return evaluate_delta(problem, params, eps, settings, only_pairs=only_pairs, neighbours=neighbours)


JOURNAL_CANDIDATES = JournalCandidates()
"""The default :class:`CandidateFamily`: the journal's Algorithm 1."""


def corollary_alpha(problem: DistributedProblem) -> float:
    """``α₀ = 1/sqrt(μ₁μ₂)``: the geometric midpoint of Corollary 1's interval ``(1/μ₁, 1/μ₂)``."""
    return float(1.0 / np.sqrt(problem.mu1 * problem.mu2))


def make_candidate(
    problem: DistributedProblem,
    T: int,
    alpha: float,
    sigma_q: float,
    schedule: str,
    ratio_name: str,
    kappa: float,
    stage: str,
    family: CandidateFamily = JOURNAL_CANDIDATES,
) -> Candidate:
    """A candidate with ``σ_p(t) = κ σ_q r^t``, i.e. effective noise ``η_t = κ (r/α)^t`` (journal).

    ``r`` by ``ratio_name``: ``corollary`` = ``μ₂/μ₁`` (Corollary 1), ``one`` = 1 (constant σ_p),
    ``growth`` = ``αμ₁`` (η ∝ μ₁^t: noise that tracks the signal), ``eta_constant`` = ``α`` (constant η).
    """
    ratio = {
        "corollary": problem.mu2 / problem.mu1,
        "growth": alpha * problem.mu1,
        "eta_constant": alpha,
    }.get(ratio_name, 1.0)
    noise = NoiseSchedule(schedule, kappa * sigma_q, ratio if schedule == "geometric" else 1.0)
    return Candidate(
        family.params(alpha, sigma_q, noise, T),
        kappa,
        ratio_name if schedule == "geometric" else "-",
        stage,
    )


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


class Calibration:
    """The calibration of one problem, in stages that can run in separate processes.

    Building one only checks and stores its inputs. The expensive steps are explicit: :meth:`prepare` draws the
    Monte-Carlo noise, finds T* and lays out the coarse grid, then (:meth:`search_neighbours`) searches the
    neighbours every candidate is screened with and evaluates δ at the middle candidate. ``coarse_rows(chunk,
    chunks)`` assesses a slice of the coarse grid (a cluster job each); ``finish(coarse_table)`` runs the fine
    stage and the confirmations; both prepare first if that has not been done. ``calibrate`` runs everything in
    one go. Everything is deterministic given the seed, so sharded and unsharded calibrations choose the same.

    The neighbour search is the expensive part of :meth:`prepare` (a whole worst-case search at the middle
    candidate) and the same in every job of one calibration: :meth:`neighbour_state` hands what it found and
    evaluated to the other jobs (``prepare(state)``), which then skip it and choose exactly as if they had
    searched themselves (the pipeline's ``ddppm_calibrate_prepare`` rule runs it once per calibration).
    """

    def __init__(
        self,
        problem: DistributedProblem,
        eps: np.ndarray,
        delta_limits: np.ndarray,
        grid: CalibrationGrid | None = None,
        settings: AccountantSettings | None = None,
        seed: int = 0,
        family: CandidateFamily = JOURNAL_CANDIDATES,
    ):
        self.problem, self.family = problem, family
        self.grid = grid or CalibrationGrid()
        self.settings = settings or AccountantSettings()
        self.eps = check_epsilons(eps)
        self.limits = check_limits(self.eps, delta_limits)
        self.seed = seed
        self.prepared = False
        if self.grid.delta_statistic == "hockey" and self.settings.accounting != "exact":
            raise ConfigError(
                f"{family.config_key}.delta_statistic: 'hockey' (Definition 1's hockey-stick δ) needs the exact "
                f"tail; the threat model's accounting is {self.settings.accounting!r}"
            )
        self.stat, self._pair_stat = _STAT_OF[self.grid.delta_statistic]

    def prepare(self, state: dict | None = None) -> Calibration:
        """The expensive set-up, once: noise draws, T*, the coarse grid, then :meth:`search_neighbours`, or,
        given ``state`` (:meth:`neighbour_state` of a calibration with the same inputs), what that search found."""
        if self.prepared:
            return self
        problem, grid, family = self.problem, self.grid, self.family
        rngs = run_generators(self.seed, ("calibration",), range(grid.runs))
        self.draws = family.draws(problem.n, grid.t_max + max(grid.t_offsets, default=0), rngs)
        self.z0 = self.draws[0]
        self.t_star = checked_t_star(problem, self.z0, grid.t_star_tol, grid.t_max, family.config_key)
        self.t_star_reached = True
        alpha0, sq0 = corollary_alpha(problem), 1.0 / np.sqrt(problem.n)
        # The frontier: T* and the small T of `t_coarse` (at most T* + 2), every family and κ.
        self.coarse_T = sorted({self.t_star, *(int(T) for T in grid.t_coarse if 1 <= T <= self.t_star + 2)})
        self.coarse = [
            make_candidate(problem, T, alpha0 * af, sq0 * sf, sched, ratio, k, "coarse", family)
            for T in self.coarse_T
            for af in grid.alpha_factors
            for sf in grid.sigma_q_factors
            for sched, ratio in _families(grid)
            for k in grid.kappas
        ]
        self._full: dict[tuple, DeltaResult] = {}
        self._searched: dict[tuple, DeltaResult] = {}
        self._pairs: dict[tuple[tuple, PairKey], np.ndarray] = {}
        if state is None:
            self.search_neighbours()
        else:
            self._load_neighbour_state(state)
        self.prepared = True
        return self

    def fingerprint(self) -> str:
        """A digest of every input the neighbour search depends on: the agents' rows, the network, the ε grid,
        the limits, the grid, the accountant's settings, the seed and the candidate family."""
        digest = hashlib.sha256()
        for block in self.problem.blocks:
            digest.update(np.ascontiguousarray(block, float).tobytes())
        for array in (self.problem.Wc, self.eps, self.limits):
            digest.update(np.ascontiguousarray(array, float).tobytes())
        digest.update(repr((self.grid, self.settings, self.seed, self.family.config_key)).encode())
        return digest.hexdigest()

    def neighbour_state(self) -> dict:
        """What :meth:`search_neighbours` found and evaluated (the neighbour pool, the initial screen and the
        evaluations cached on the way), with the :meth:`fingerprint` of the inputs, for ``prepare(state)``."""
        self.prepare()
        return {"fingerprint": self.fingerprint(), **{key: getattr(self, key) for key in _NEIGHBOUR_STATE}}

    def _load_neighbour_state(self, state: dict) -> None:
        if state.get("fingerprint") != self.fingerprint():
            raise ConfigError(
                f"{self.family.config_key}: the prepared neighbour search was made for other inputs (data, network, "
                "ε grid, limits, calibration or privacy settings); rerun its job (rule ddppm_calibrate_prepare)"
            )
        for key in _NEIGHBOUR_STATE:
            setattr(self, key, state[key])

    def search_neighbours(self) -> None:
        """The neighbours every candidate is screened and confirmed with. Under the worst-case adjacency they
        come from a search at a middle candidate; each confirmation searches again at its own parameters and
        adds what it finds (so the reported δ is never below that search's)."""
        middle = self.coarse[len(self.coarse) // 2]
        self.pool: dict = {}
        self._add_to_pool(self._search(middle) if self.settings.adjacency == "worst" else None)
        ranking = self.full(middle).pairs.groupby(["observer", "agent", "row", "kind"])["kl_mean"].max()
        top = ranking.sort_values(ascending=False).index[: self.grid.screen_pairs]
        self.initial_screen = [_pair_key(k) for k in top]

    def _store_pairs(self, key: tuple, res: DeltaResult) -> None:
        # the rows of each (observer, agent, row, kind), in order: a pandas groupby here cost more than a
        # screened evaluation's tails
        pairs = res.pairs
        positions: dict[tuple, list[int]] = {}
        keys = zip(*(pairs[c].tolist() for c in ("observer", "agent", "row", "kind")), strict=True)
        for position, pair in enumerate(keys):
            positions.setdefault(pair, []).append(position)
        values = pairs[self._pair_stat].to_numpy()
        for pair, rows in positions.items():
            self._pairs[(key, _pair_key(pair))] = values[rows]

    def _search(self, c: Candidate) -> DeltaResult:
        key = c.params.canonical_key()
        if key not in self._searched:
            self._searched[key] = self.family.evaluate_delta(self.problem, c.params, self.eps, self.settings)
        return self._searched[key]

    def _add_to_pool(self, searched: DeltaResult | None) -> None:
        """Add a search's most-leaking neighbours (per (observer, agent) and per ε) to the pool."""
        if searched is None:
            self.pool.update({n.key: n for n in default_neighbours(self.problem, self.settings)})
            return
        pairs = searched.pairs.assign(score=np.log(np.clip(searched.pairs["delta_mean"], 1e-300, 1)))
        mean = pairs.groupby(["observer", "agent", "row", "kind"], sort=True)["score"].mean().reset_index()
        top = mean.sort_values("score", ascending=False).groupby(["observer", "agent"]).head(self.settings.search_keep)
        keys = {(int(r.agent), int(r.row), str(r.kind)) for r in top.itertuples()} | {
            (int(w["agent"]), int(w["row"]), str(w["kind"])) for w in searched.worst
        }
        # and, per ε, the neighbour of the largest single realisation (for delta_statistic = max)
        by_max = searched.pairs.loc[searched.pairs.groupby("eps")["delta_max"].idxmax()]
        keys |= {(int(r.agent), int(r.row), str(r.kind)) for r in by_max.itertuples()}
        # sorted: a set of tuples with strings iterates in an order that changes with Python's hash seed
        self.pool.update({k: searched.neighbours[k] for k in sorted(keys)})

    def full(self, c: Candidate) -> DeltaResult:
        """δ with every (observer, pooled neighbour) pair, cached per parameters and pool size."""
        key = (c.params.canonical_key(), len(self.pool))
        if key not in self._full:
            self._full[key] = self.family.evaluate_delta(
                self.problem, c.params, self.eps, self.settings, neighbours=list(self.pool.values())
            )
            self._store_pairs(c.params.canonical_key(), self._full[key])
        return self._full[key]

    def confirm(self, c: Candidate) -> DeltaResult:
        """The δ a choice is confirmed with: under the worst-case adjacency, a fresh search at the
        candidate's own parameters first adds its most-leaking neighbours to the pool."""
        if self.settings.adjacency == "worst":
            self._add_to_pool(self._search(c))
        return self.full(c)

    def _recheck_with_final_pool(self, chosen: list[dict], table: pd.DataFrame) -> None:
        """Later confirmations may have added neighbours: every choice's δ is recomputed with the final pool,
        and a choice that now exceeds its limit is withdrawn (never published over budget)."""
        if self.settings.adjacency != "worst":
            return
        for e_idx, row in enumerate(chosen):
            if not row["met"]:
                continue
            res = self.full(_candidate(table.loc[row["pick_index"]], self.family))
            value = getattr(res, self.stat)[e_idx]
            if value > row["delta_limit"]:
                row.update(met=False, reason=f"δ {value:.3g} over the limit with neighbours found by later searches")
                for key in ("alpha", "sigma_q", "schedule", "scale", "ratio", "T", "delta", "error_mean"):
                    row.pop(key, None)
            elif value > row[self.stat]:  # the compared δ grew with the final pool: report the final pool's
                worst = res.worst[e_idx]
                row.update(
                    delta=res.delta[e_idx],
                    delta_se=res.delta_se[e_idx],
                    delta_max=res.delta_max[e_idx],
                    delta_upper=res.delta_upper[e_idx],
                    delta_hockey=res.delta_hockey[e_idx],
                    worst_observer=worst["observer"],
                    worst_agent=worst["agent"],
                    worst_row=worst["row"],
                    worst_kind=worst["kind"],
                    worst_new_row=json.dumps(worst.get("new_row", [])),
                )

    def screened(self, c: Candidate, pairs: list[PairKey]) -> np.ndarray:
        """Worst δ over ``pairs`` for every ε, evaluating only pairs not seen before for this candidate."""
        key = c.params.canonical_key()
        missing = {p for p in pairs if (key, p) not in self._pairs}
        if missing:
            needed = [self.pool[p[1:]] for p in missing]
            res = self.family.evaluate_delta(
                self.problem, c.params, self.eps, self.settings, only_pairs=missing, neighbours=_unique(needed)
            )
            self._store_pairs(key, res)
        return np.max([self._pairs[(key, p)] for p in pairs], axis=0)

    def assess(self, cands: list[Candidate], ids: list[int] | None = None) -> pd.DataFrame:
        """Screened δ (initial screen) and Monte-Carlo error of each candidate: one row per (candidate, ε)."""
        rows = []
        stage = cands[0].stage if cands else "no"
        progress = Progress(
            f"{stage} candidates (δ: {len(self.initial_screen)} screened pairs, error of {self.z0.shape[1]} runs)",
            len(cands),
            "candidates",
        )
        for cid, c in zip(range(len(cands)) if ids is None else ids, cands, strict=True):
            delta = self.screened(c, self.initial_screen)
            errors = self.family.errors(self.problem, c.params, self.draws)
            progress.step()
            for e_idx, e in enumerate(self.eps):
                err = errors if errors.ndim == 1 else errors[e_idx]
                rows.append(
                    {
                        "candidate": cid,
                        "stage": c.stage,
                        "alpha": c.params.alpha,
                        "sigma_q": c.params.sigma_q,
                        "schedule": c.params.schedule.kind,
                        "ratio_name": c.ratio_name,
                        "ratio": c.params.schedule.ratio,
                        "scale": c.params.schedule.scale,
                        "kappa": c.kappa,
                        "T": c.params.T,
                        "error_mean": float(err.mean()),
                        "error_std": float(err.std(ddof=1)),
                        "eps": e,
                        "delta_limit": self.limits[e_idx],
                        "delta_screen": delta[e_idx],
                    }
                )
        return pd.DataFrame(rows)

    def coarse_rows(self, chunk: int = 0, chunks: int = 1) -> pd.DataFrame:
        """Assess chunk ``chunk`` of ``chunks`` of the coarse grid (contiguous, near-equal slices)."""
        if not 0 <= chunk < chunks:
            raise ConfigError(f"calibration chunk {chunk} out of range for methods.ddppm.calibration.chunks={chunks}")
        self.prepare()
        ids = [int(i) for i in np.array_split(np.arange(len(self.coarse)), chunks)[chunk]]
        return self.assess([self.coarse[i] for i in ids], ids)

    def finish(self, coarse_table: pd.DataFrame) -> CalibrationResult:
        """Fine stage around each ε's best coarse candidate, then confirm choices with every pair."""
        self.prepare()
        grid, eps, limits = self.grid, self.eps, self.limits
        table = _dedupe(coarse_table.sort_values(["candidate", "eps"], kind="stable"), self.family)
        seen = {_candidate(r, self.family).params.canonical_key() for _, r in table.iterrows()}
        kappas = np.array(sorted(grid.kappas))
        fine: list[Candidate] = []
        for e, lim in zip(eps, limits, strict=True):
            at_e = table[np.isclose(table["eps"], e)]
            ok = at_e[at_e["delta_screen"] <= lim]
            best = ok.nsmallest(1, "error_mean") if len(ok) else at_e.nsmallest(1, "delta_screen")
            c0 = _candidate(best.iloc[0], self.family)
            k_idx = int(np.argmin(np.abs(np.log(kappas / c0.kappa))))
            window = kappas[max(k_idx - grid.fine_window, 0) : k_idx + grid.fine_window + 1]
            window = np.unique(np.concatenate([window, c0.kappa * np.asarray(grid.fine_steps, float)]))
            for off in (0, *grid.t_offsets):
                for k in window if c0.params.T + off >= 1 else []:
                    c = make_candidate(
                        self.problem,
                        c0.params.T + off,
                        c0.params.alpha,
                        c0.params.sigma_q,
                        c0.params.schedule.kind,
                        c0.ratio_name,
                        k,
                        "fine",
                        self.family,
                    )
                    if c.params.canonical_key() not in seen:
                        seen.add(c.params.canonical_key())
                        fine.append(c)
        first_id = int(table["candidate"].max()) + 1 if len(table) else 0
        table = pd.concat([table, self.assess(fine, list(range(first_id, first_id + len(fine))))], ignore_index=True)
        table["delta_full"] = np.nan
        screen = list(self.initial_screen)
        chosen = []
        progress = Progress("choices verified", len(eps), "ε values")
        for e_idx, (e, lim) in enumerate(zip(eps, limits, strict=True)):
            order = table[np.isclose(table["eps"], e)].sort_values(["error_mean", "candidate"])
            pick, verified, n_ok = None, 0, 0
            for idx, row in order.iterrows():
                cand = _candidate(row, self.family)
                bound = row["delta_screen"]  # worst over the initial screen, possibly computed in another job
                added = screen[len(self.initial_screen) :]
                if added:
                    bound = max(bound, self.screened(cand, added)[e_idx])
                if bound > lim:
                    continue
                n_ok += 1
                res = self.confirm(cand)
                verified += 1
                value = getattr(res, self.stat)[e_idx]
                LOGGER.info(
                    "ε = %g: verification %d of candidate %d (T = %d): δ = %.3g against the limit %.3g over %d pairs, "
                    "%.1f s elapsed",
                    e,
                    verified,
                    int(row["candidate"]),
                    cand.params.T,
                    value,
                    lim,
                    _n_pairs(res),
                    progress.elapsed,
                )
                table.loc[idx, "delta_full"] = value
                if value <= lim:
                    pick = (idx, res)
                    break
                worst = res.worst[e_idx]
                screen.append((int(worst["observer"]), int(worst["agent"]), int(worst["row"]), str(worst["kind"])))
                if verified >= grid.max_verifications:
                    break
            chosen.append(_chosen_row(table, e_idx, e, lim, pick, verified, n_ok, self.t_star, self.problem, self.stat))
            progress.step(note=f"ε = {e:g}: {'met' if pick else 'NOT met'} (limit {lim:.3g}), {verified} verifications")
        self._recheck_with_final_pool(chosen, table)
        return CalibrationResult(
            chosen=pd.DataFrame(chosen),
            candidates=table,
            t_star=self.t_star,
            t_star_reached=self.t_star_reached,
            mu1=self.problem.mu1,
            mu2=self.problem.mu2,
            screen=screen,
            neighbours=list(self.pool.values()),
        )


_NEIGHBOUR_STATE = ("pool", "initial_screen", "_searched", "_full", "_pairs")
"""What :meth:`Calibration.search_neighbours` leaves behind (:meth:`Calibration.neighbour_state`)."""


def calibrate(
    problem: DistributedProblem,
    eps: np.ndarray,
    delta_limits: np.ndarray,
    grid: CalibrationGrid | None = None,
    settings: AccountantSettings | None = None,
    seed: int = 0,
    family: CandidateFamily = JOURNAL_CANDIDATES,
) -> CalibrationResult:
    """Choose, per ε, the least-error parameters whose confirmed δ(ε) is at most the δ limit (docs/method.md §7)."""
    run = Calibration(problem, eps, delta_limits, grid, settings, seed, family).prepare()
    return run.finish(run.coarse_rows())


def _candidate(row: pd.Series | dict, family: CandidateFamily = JOURNAL_CANDIDATES) -> Candidate:
    return Candidate(family.params_from_row(row), float(row["kappa"]), str(row["ratio_name"]), str(row["stage"]))


def _dedupe(table: pd.DataFrame, family: CandidateFamily = JOURNAL_CANDIDATES) -> pd.DataFrame:
    """Drop candidates equivalent (same canonical parameters) to an earlier one."""
    keep, seen = [], set()
    for cid, frame in table.groupby("candidate", sort=True):
        key = _candidate(frame.iloc[0], family).params.canonical_key()
        if key not in seen:
            seen.add(key)
            keep.append(cid)
    return table[table["candidate"].isin(keep)].reset_index(drop=True)


def _unique(neighbours: list) -> list:
    return list({n.key: n for n in neighbours}.values())


def _n_pairs(res: DeltaResult) -> int:
    return len(res.pairs[["observer", "agent", "row", "kind"]].drop_duplicates())


def _pair_key(pair: tuple) -> PairKey:
    observer, agent, row, kind = pair
    return (int(observer), int(agent), int(row), str(kind))


def _chosen_row(
    table: pd.DataFrame,
    e_idx: int,
    e: float,
    lim: float,
    pick,
    verified: int,
    n_ok: int,
    T0: int,
    problem: DistributedProblem,
    stat: str,
) -> dict:
    base = {
        "eps": e,
        "delta_limit": lim,
        "t_star": T0,
        "c": problem.c,
        "mu1": problem.mu1,
        "mu2": problem.mu2,
        "n_screen_feasible": n_ok,
        "n_verified": verified,
    }
    if pick is None:
        reason = (
            "no candidate met the δ limit"
            if n_ok == 0
            else f"none of the {verified} least-error screened candidates met the limit with all pairs"
        )
        return {**base, "met": False, "reason": reason}
    idx, res = pick
    row = table.loc[idx]
    base["pick_index"] = idx
    worst = res.worst[e_idx]
    return {
        **base,
        "met": True,
        "reason": "",
        "alpha": row["alpha"],
        "sigma_q": row["sigma_q"],
        "schedule": row["schedule"],
        "ratio_name": row["ratio_name"],
        "ratio": row["ratio"],
        "scale": row["scale"],
        "kappa": row["kappa"],
        "T": int(row["T"]),
        "delta_statistic": stat,
        "delta": res.delta[e_idx],
        "delta_se": res.delta_se[e_idx],
        "delta_max": res.delta_max[e_idx],
        "delta_upper": res.delta_upper[e_idx],
        "delta_hockey": res.delta_hockey[e_idx],
        "error_mean": row["error_mean"],
        "error_std": row["error_std"],
        "worst_observer": worst["observer"],
        "worst_agent": worst["agent"],
        "worst_row": worst["row"],
        "worst_kind": worst["kind"],
        "worst_new_row": json.dumps(worst.get("new_row", [])),
    }
