"""δ of D-DP-PM for a whole ε grid: observers, neighbouring data sets and own-randomness realisations.

For every observer agent ``i`` and every neighbour ``X'`` (one row of an agent ``j ≠ i`` changed, see
:mod:`ddppm.accounting.neighbours`), the observer's view conditioned on its own randomness is Gaussian
(eq. 29) under both ``X`` and ``X'``. The covariance does not depend on the realised own randomness, only
the mean does, so ``Σ₁`` is factorised once per observer and ``(Σ₁, Σ₂)`` diagonalised once per neighbour;
every ε and every realisation then costs O(N). The reported δ is, for each ε, the mean over ``R_δ``
realisations (with its standard error) at the worst (observer, neighbour).

The threat model is three choices (:class:`AccountantSettings`): the ``view`` (eq. 22–25 or every release),
the ``accounting`` (Theorem 2's Chernoff bound, both tails, or the exact tail of the privacy loss,
:mod:`ddppm.privacy.exact`) and the ``adjacency`` (the paper's unspecified neighbour, our heuristic guess,
or a search for the worst neighbour, :func:`search_worst_neighbours`).

The mechanism is a parameter too (``family``, a :class:`ReleaseFamily`): its release model, the layout of an
observer's own randomness and the tail bound of a pair. The default, :data:`JOURNAL_RELEASES`, is Algorithm 1
of the journal; other variants of D-DP-PM (e.g. the workshop version, :mod:`ddppm.methods.workshop`) reuse
the observers, neighbours, realisations and the worst-case search unchanged by passing their own family.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd

from ddppm.accounting.floor import FloorSettings, cached_floor, floor_seeds
from ddppm.accounting.iteration import DDPPMParams
from ddppm.accounting.neighbours import (
    HEURISTIC_KINDS,
    Neighbour,
    apply_neighbour,
    heuristic_neighbours,
    perturbations,
    search_proposals,
)
from ddppm.accounting.release import ConditionalLaw, ReducedReleaseModel, reduction_basis
from ddppm.accounting.schema import engine_default
from ddppm.core.errors import ConfigError, PrivacyError
from ddppm.core.problem import DistributedProblem
from ddppm.core.seeds import seed_sequence
from ddppm.privacy.gaussian import GaussianPair, SupportBasis, diagonalize, kl_divergence
from ddppm.privacy.tails import TailDeltas, pair_tail_deltas, pair_tail_deltas_many
from ddppm.privacy.threat_models import ThreatModel


@dataclass(frozen=True)
class AccountantSettings:
    """How δ is computed: the threat model (view, accounting, adjacency) and the numerical choices.

    ``view``: ``paper`` (an agent's own releases only, eq. 22–25) or ``network`` (every release).
    ``accounting``: ``chernoff`` (Theorem 2, an upper bound) or ``exact`` (the true tail).
    ``adjacency``: ``heuristic`` (the paper's unspecified neighbour, our guess) or ``worst`` (a search).
    The other fields are the numerical choices of ``methods.ddppm.privacy``; ``search_*`` steer the
    worst-case neighbour search (:func:`search_worst_neighbours`), which also starts from the
    ``search_floor_seeds`` most-leaking moves per (observer, agent) of the parameter-free floor's search
    (``floor``, :mod:`ddppm.accounting.floor`).
    """

    view: str = "network"
    accounting: str = "chernoff"
    adjacency: str = "heuristic"
    rank_mode: str = engine_default("privacy", "rank_mode")
    rank_rtol: float = engine_default("privacy", "rank_rtol")
    candidate_rows: int = engine_default("privacy", "candidate_rows")
    candidate_kinds: tuple[str, ...] = engine_default("privacy", "candidate_kinds")
    observers: tuple[int, ...] | None = None
    realisations: int = engine_default("privacy", "realisations")
    seed: int = engine_default("privacy", "seed")
    search_rows: int = engine_default("privacy", "search_rows")
    search_directions: int = engine_default("privacy", "search_directions")
    search_rounds: int = engine_default("privacy", "search_rounds")
    search_keep: int = engine_default("privacy", "search_keep")
    search_width: int = engine_default("privacy", "search_width")
    search_floor_seeds: int = engine_default("privacy", "search_floor_seeds")
    floor: FloorSettings = field(default_factory=FloorSettings)

    def __post_init__(self) -> None:
        ThreatModel(self.view, self.accounting, self.adjacency)  # validates the three choices (the one table)
        unknown = set(self.candidate_kinds) - set(HEURISTIC_KINDS)
        if unknown:
            raise ConfigError(
                f"methods.ddppm.privacy.candidate_kinds: unknown {sorted(unknown)}; use {HEURISTIC_KINDS}"
            )
        if self.realisations < 1:
            raise ConfigError("methods.ddppm.privacy.realisations must be >= 1")
        if self.rank_mode == "paper" and (self.accounting == "exact" or self.adjacency == "worst"):
            raise ConfigError(
                "methods.ddppm.privacy.rank_mode: 'paper' (eq. 42-43) projects the laws and can only understate "
                "δ, which contradicts an exact or worst-case threat model; use rank_mode: support with it"
            )
        if not 0 < self.rank_rtol < 1:
            raise ConfigError(f"methods.ddppm.privacy.rank_rtol must lie in (0, 1), got {self.rank_rtol!r}")
        if self.candidate_rows < 1:
            raise ConfigError("methods.ddppm.privacy.candidate_rows must be >= 1")
        for key in ("search_rows", "search_directions", "search_keep", "search_width"):
            if getattr(self, key) < 1:
                raise ConfigError(f"methods.ddppm.privacy.{key} must be >= 1")
        if self.search_rounds < 0 or self.search_floor_seeds < 0:
            raise ConfigError("methods.ddppm.privacy: search_rounds and search_floor_seeds must be >= 0")


def check_epsilons(eps: np.ndarray) -> np.ndarray:
    eps = np.atleast_1d(np.asarray(eps, float))
    if eps.size == 0 or not np.all(np.isfinite(eps)) or np.any(eps <= 0):
        raise PrivacyError(f"epsilons must be finite and > 0, got {eps.tolist()}; fix the config key `epsilons`")
    if np.unique(eps).size != eps.size:
        raise PrivacyError(f"epsilons must not repeat, got {eps.tolist()}; fix the config key `epsilons`")
    return eps


def own_randomness(
    problem: DistributedProblem, params: DDPPMParams, observer: int, settings: AccountantSettings
) -> np.ndarray:
    """``R_δ`` seeded realisations of ``[q_i^(0); p_i^(1..T)]`` (rows), the observer's own randomness."""
    rng = np.random.default_rng(seed_sequence(settings.seed, "own-randomness", observer))
    n_i = int(problem.sizes[observer])
    sd = np.concatenate([[params.sigma_q], params.sigmas])
    z = rng.standard_normal((params.T + 1, n_i, settings.realisations))
    return (sd[:, None, None] * z).reshape((params.T + 1) * n_i, settings.realisations)


class ReleaseFamily(Protocol):
    """A mechanism as the accountant sees it: its Gaussian release model and the tails of one pair.

    ``release_model`` builds the model in the reduced coordinates of ``bases`` (:func:`reduction_basis`; it
    must have ``project_own(observer, own)``); ``conditional_law`` is the observer's view given its own
    randomness (eq. 29 of the journal); ``own_randomness`` draws that randomness (rows, one column per
    realisation, in the layout ``project_own`` expects); ``tail_deltas`` turns a diagonalised pair into δ(ε).
    """

    def release_model(self, problem: DistributedProblem, params: Any, bases: list[np.ndarray]) -> Any: ...

    def conditional_law(self, model: Any, params: Any, observer: int, view: str) -> ConditionalLaw: ...

    def own_randomness(
        self, problem: DistributedProblem, params: Any, observer: int, settings: AccountantSettings
    ) -> np.ndarray: ...

    def tail_deltas(
        self, pair: GaussianPair, delta_mu: np.ndarray, eps: np.ndarray, settings: AccountantSettings
    ) -> TailDeltas: ...


class JournalReleases:
    """Algorithm 1 of the journal: releases ``y = [z^(1); …; z^(T); q^(T)]`` (:class:`ReducedReleaseModel`),
    own randomness ``[q_i^(0); p_i^(1..T)]`` (:func:`own_randomness`), tails of ``settings.accounting``
    (:func:`ddppm.privacy.tails.pair_tail_deltas`)."""

    def release_model(self, problem: DistributedProblem, params: DDPPMParams, bases: list[np.ndarray]) -> Any:
        return ReducedReleaseModel(problem, params.alpha, params.T, bases)

    def conditional_law(self, model: Any, params: DDPPMParams, observer: int, view: str) -> ConditionalLaw:
        return model.conditional_law(params.sigma_q, params.sigmas, observer, view)

    def own_randomness(
        self, problem: DistributedProblem, params: DDPPMParams, observer: int, settings: AccountantSettings
    ) -> np.ndarray:
        return own_randomness(problem, params, observer, settings)

    def tail_deltas(
        self, pair: GaussianPair, delta_mu: np.ndarray, eps: np.ndarray, settings: AccountantSettings
    ) -> TailDeltas:
        return pair_tail_deltas(pair, delta_mu, eps, settings.accounting)

    def tail_deltas_many(
        self, items: list[tuple[GaussianPair, np.ndarray]], eps: np.ndarray, settings: AccountantSettings
    ) -> list[TailDeltas]:
        return pair_tail_deltas_many(items, eps, settings.accounting)


def tail_deltas_of(
    family: ReleaseFamily, items: list[tuple[GaussianPair, np.ndarray]], eps: np.ndarray, settings: AccountantSettings
) -> list[TailDeltas]:
    """The tails of many pairs: the family's batched ``tail_deltas_many`` where it has one (one vectorised exact
    pass for all), else one ``tail_deltas`` per pair."""
    many = getattr(family, "tail_deltas_many", None)
    if many is not None:
        return many(items, eps, settings)
    return [family.tail_deltas(pair, delta_mu, eps, settings) for pair, delta_mu in items]


JOURNAL_RELEASES = JournalReleases()
"""The default :class:`ReleaseFamily` of every accountant function: the journal's Algorithm 1."""


@dataclass
class DeltaResult:
    """δ over an ε grid at the worst (observer, neighbour), plus every pair's values in ``pairs``.

    ``delta`` is the two-sided δ of the settings' accounting (mean over realisations, ± ``delta_se``),
    ``delta_max`` the largest realisation, ``delta_upper`` the upper tail alone (Theorem 2's δ⁺ under
    ``chernoff``), ``delta_hockey`` the hockey-stick δ of Definition 1 (``exact`` only, else NaN).
    ``worst`` names the worst pair per ε, with the replacement row; ``neighbours`` every neighbour used.
    """

    eps: np.ndarray
    delta: np.ndarray
    delta_se: np.ndarray
    delta_max: np.ndarray
    delta_upper: np.ndarray
    delta_hockey: np.ndarray
    worst: list[dict]
    pairs: pd.DataFrame
    neighbours: dict[tuple[int, int, str], Neighbour] = field(default_factory=dict)


PairKey = tuple[int, int, int, str]  # (observer, agent, row, kind)


def default_neighbours(
    problem: DistributedProblem, settings: AccountantSettings, eps: np.ndarray | None = None
) -> list[Neighbour]:
    """The heuristic neighbours, or the worst-case search's starting proposals, of every agent.

    The proposals are the leverage- and norm-based ones of :func:`search_proposals` and the most-leaking
    moves of the parameter-free floor's search over every row (ranked over ``eps``), which looks where
    the leak is: rows of low leverage pushed along weak eigen-directions leak more than the others.
    """
    if settings.adjacency == "heuristic":
        return [
            n
            for j in range(problem.m)
            for n in heuristic_neighbours(problem, j, settings.candidate_rows, settings.candidate_kinds)
        ]
    proposals = [
        n
        for j in range(problem.m)
        for n in search_proposals(problem, j, settings.search_rows, settings.search_directions)
    ]
    if settings.search_floor_seeds and eps is not None:
        floor = cached_floor(problem, eps, settings.view, settings.floor)
        proposals += floor_seeds(floor, settings.search_floor_seeds)
    return proposals


_TAIL_BATCH = 64
"""Pairs whose tails :class:`_PairEvaluator` computes in one batch."""


class _PairEvaluator:
    """δ of (observer, neighbour) pairs for one parameter set: the observer's law is factorised once."""

    def __init__(self, problem, params, eps, settings, rows_by_agent: dict[int, list[int]], family: ReleaseFamily):
        self.problem, self.params, self.eps, self.settings, self.family = problem, params, eps, settings, family
        self.bases = reduction_basis(problem, rows_by_agent)
        self.base_model = family.release_model(problem, params, self.bases)
        self._observer: dict[int, tuple] = {}

    def observer(self, i: int) -> tuple:
        if i not in self._observer:
            p, s, f = self.params, self.settings, self.family
            law1 = f.conditional_law(self.base_model, p, i, s.view)
            own = self.base_model.project_own(i, f.own_randomness(self.problem, p, i, s))
            self._observer[i] = (law1, own, law1.mean_map @ own, SupportBasis.of_factor(law1.factor, s.rank_rtol))
        return self._observer[i]

    def records_of(self, jobs: list[tuple[Neighbour, Any]]) -> list[dict]:
        """The records of every (neighbour, its observers) of ``jobs``, in order; the tails of all their pairs are
        computed in one batch (:func:`tail_deltas_of`)."""
        p, s, f = self.params, self.settings, self.family
        found, out = [], []
        for neighbour, observers in jobs:
            model = f.release_model(apply_neighbour(self.problem, neighbour), p, self.bases)
            for i in observers:
                if i == neighbour.agent:
                    continue
                law1, own, mean1, support = self.observer(i)
                law2 = f.conditional_law(model, p, i, s.view)
                pair = diagonalize(support, law1.factor, law2.factor, s.rank_mode)
                found.append((neighbour, i, pair, mean1 - law2.mean_map @ own))
                if len(found) >= _TAIL_BATCH:  # a pair holds N-sized maps: bound what is held at once
                    out += self._flush(found)
                    found = []
        return out + self._flush(found)

    def _flush(self, found: list[tuple]) -> list[dict]:
        eps = self.eps
        all_tails = tail_deltas_of(
            self.family, [(pair, delta_mu) for _, _, pair, delta_mu in found], eps, self.settings
        )
        out = []
        for (neighbour, i, pair, delta_mu), tails in zip(found, all_tails, strict=True):
            kl = (
                float(np.nan_to_num(np.mean(kl_divergence(pair, delta_mu)), nan=np.inf))
                if pair.singular is None
                else np.inf
            )
            R = tails.delta.shape[1]
            for e_idx, e in enumerate(eps):
                out.append(
                    {
                        "observer": i,
                        "agent": neighbour.agent,
                        "row": neighbour.row,
                        "kind": neighbour.kind,
                        "eps": e,
                        "delta_mean": tails.delta[e_idx].mean(),
                        "delta_se": tails.delta[e_idx].std(ddof=1) / np.sqrt(R) if R > 1 else np.nan,
                        "delta_max": tails.delta[e_idx].max(),
                        "delta_upper_mean": tails.upper[e_idx].mean(),
                        "delta_lower_mean": tails.lower[e_idx].mean(),
                        "delta_hockey_mean": tails.hockey[e_idx].mean(),
                        "kl_mean": kl,
                        "singular": pair.singular or "",
                    }
                )
        return out


def evaluate_delta(
    problem: DistributedProblem,
    params: DDPPMParams,
    eps,
    settings: AccountantSettings | None = None,
    only_pairs: set[PairKey] | None = None,
    neighbours: list[Neighbour] | None = None,
    family: ReleaseFamily = JOURNAL_RELEASES,
) -> DeltaResult:
    """δ(ε) of Algorithm 1 with parameters ``params`` on ``problem`` for every ε.

    The neighbours are ``neighbours`` if given, else those of ``settings.adjacency``: the heuristic ones, or
    (``worst``) the result of :func:`search_worst_neighbours`. ``only_pairs`` restricts the (observer,
    neighbour) pairs, e.g. to the worst few during a grid search; the worst case over a subset can only be
    smaller, so a full evaluation must confirm any choice. ``family`` is the mechanism (default: the
    journal's Algorithm 1, :data:`JOURNAL_RELEASES`).
    """
    settings = settings or AccountantSettings()
    eps = check_epsilons(eps)
    if neighbours is None and settings.adjacency == "worst" and only_pairs is None:
        return search_worst_neighbours(problem, params, eps, settings, family)
    pool = {n.key: n for n in (neighbours if neighbours is not None else default_neighbours(problem, settings))}
    observers = _observers(problem, settings)
    evaluator = _PairEvaluator(problem, params, eps, settings, _rows_by_agent(problem, pool.values()), family)
    jobs = [(n, [i for i in observers if only_pairs is None or (i, *n.key) in only_pairs]) for n in pool.values()]
    return _result(eps, evaluator.records_of([(n, wanted) for n, wanted in jobs if wanted]), pool)


def search_worst_neighbours(
    problem: DistributedProblem,
    params: DDPPMParams,
    eps,
    settings: AccountantSettings,
    family: ReleaseFamily = JOURNAL_RELEASES,
) -> DeltaResult:
    """δ at the worst neighbour found by a search, per (observer, agent).

    Start from :func:`ddppm.accounting.neighbours.search_proposals` (high-leverage rows moved toward
    the weakest eigen-directions of ``X_jᵀX_j``, and more); then, ``search_rounds`` times, keep the
    ``search_keep`` most-leaking neighbours of every (observer, agent) pair and try ``search_width``
    random turns of each move direction, with half the angle each round. A neighbour's leak is its mean
    ``log δ`` over the ε grid. Every evaluated neighbour counts: the reported δ is the maximum over all of
    them, so the search can only raise δ. It is a search, not a proof: it finds a lower bound on the true
    worst case, which a test checks against random valid neighbours.
    """
    eps = check_epsilons(eps)
    pool = {n.key: n for n in default_neighbours(problem, settings, eps)}
    observers = _observers(problem, settings)
    evaluator = _PairEvaluator(problem, params, eps, settings, _rows_by_agent(problem, pool.values()), family)
    records = evaluator.records_of([(n, observers) for n in pool.values()])
    rng = np.random.default_rng(seed_sequence(settings.seed, "worst-neighbour-search"))
    scale = 0.6
    for _ in range(settings.search_rounds):
        frame = pd.DataFrame.from_records(records)
        frame["score"] = np.log(np.clip(frame["delta_mean"], 1e-300, 1))
        score = frame.groupby(["observer", "agent", "row", "kind"], sort=True)["score"].mean().reset_index()
        jobs = []
        for (i, _agent), group in score.groupby(["observer", "agent"], sort=True):
            for _, best in group.nlargest(settings.search_keep, "score").iterrows():
                parent = pool[(int(best["agent"]), int(best["row"]), str(best["kind"]))]
                for n in perturbations(problem, parent, settings.search_width, scale, rng):
                    pool.setdefault(n.key, n)
                    jobs.append((n, [int(i)]))
        records += evaluator.records_of(jobs)  # one batch of tails per round
        scale /= 2
    return _result(eps, records, pool)


def _observers(problem: DistributedProblem, settings: AccountantSettings) -> list[int]:
    observers = list(range(problem.m)) if settings.observers is None else list(settings.observers)
    bad = [i for i in observers if not 0 <= int(i) < problem.m]
    if bad:
        raise ConfigError(f"methods.ddppm.privacy.observers: agents {bad} do not exist (there are {problem.m})")
    return [int(i) for i in observers]


def _rows_by_agent(problem: DistributedProblem, neighbours) -> dict[int, list[int]]:
    return {j: sorted({n.row for n in neighbours if n.agent == j}) for j in range(problem.m)}


def _result(eps: np.ndarray, records: list[dict], pool: dict) -> DeltaResult:
    pairs = pd.DataFrame.from_records(records)
    summary = worst_case(pairs)
    for w in summary["worst"]:
        w["new_row"] = [float(x) for x in pool[(int(w["agent"]), int(w["row"]), str(w["kind"]))].new_row]
    return DeltaResult(eps=eps, pairs=pairs, neighbours=pool, **summary)


def worst_case(pairs: pd.DataFrame) -> dict:
    """Per ε, the worst (observer, neighbour): its mean δ and s.e., the overall max, the upper tail alone
    and the hockey-stick δ.

    ε in order of first appearance; the worst pair is the first with the largest ``delta_mean`` (NaN skipped),
    the maxima skip NaN: what ``groupby("eps", sort=False)`` with ``idxmax``/``max`` gives (a test compares),
    in numpy because a calibration calls this hundreds of times.
    """
    if pairs.empty:
        raise ConfigError("no (observer, neighbour) pair to evaluate; check methods.ddppm.privacy.observers")
    _, first, inverse = np.unique(pairs["eps"].to_numpy(), return_index=True, return_inverse=True)
    groups = [np.flatnonzero(inverse == g) for g in np.argsort(first, kind="stable")]
    mean = pairs["delta_mean"].to_numpy(float)
    worst_rows = np.array([rows[np.argmax(np.nan_to_num(mean[rows], nan=-np.inf))] for rows in groups])

    def group_max(column: str) -> np.ndarray:
        values = pairs[column].to_numpy(float)
        return np.array([np.fmax.reduce(values[rows]) for rows in groups])

    worst = pairs.iloc[worst_rows]
    hockey = group_max("delta_hockey_mean") if "delta_hockey_mean" in pairs else np.full(len(groups), np.nan)
    return {
        "delta": mean[worst_rows],
        "delta_se": pairs["delta_se"].to_numpy(float)[worst_rows],
        "delta_max": group_max("delta_max"),
        "delta_upper": group_max("delta_upper_mean"),
        "delta_hockey": hockey,
        "worst": worst[["observer", "agent", "row", "kind"]].to_dict("records"),
    }
