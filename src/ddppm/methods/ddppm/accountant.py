"""δ of D-DP-PM for a whole ε grid: observers, adjacent data sets and own-randomness realisations.

Spec §6: for every observer agent ``i`` and every adjacent candidate ``X'`` (one row of an agent
``j ≠ i`` changed, §6.2), the observer's view conditioned on its own randomness is Gaussian (eq. 29)
under both ``X`` and ``X'``. The covariance does not depend on the realised own randomness, only the
mean does (§6.5), so ``Σ₁`` is factorised once per observer and ``(Σ₁, Σ₂)`` diagonalised once per
candidate; every ε and every realisation then costs O(N). The reported δ is, for each ε, the mean
over ``R_δ`` realisations (with its standard error, §6.7) at the worst (observer, candidate).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ddppm.core.errors import ConfigError, PrivacyError
from ddppm.core.problem import DistributedProblem
from ddppm.core.seeds import seed_sequence
from ddppm.methods.ddppm.algorithm import DDPPMParams
from ddppm.methods.ddppm.release import ReducedReleaseModel, reduction_basis
from ddppm.privacy.gaussian import DEFAULT_RANK_RTOL, SupportBasis, deltas_from_pair, diagonalize, kl_divergence

CANDIDATE_KINDS = ("zero", "plus", "minus")
VIEWS = ("paper", "network")
ACCOUNTINGS = ("chernoff", "exact")
ADJACENCIES = ("heuristic", "worst")


@dataclass(frozen=True)
class AccountantSettings:
    """How δ is computed: the threat model (view, accounting, adjacency) and the numerical choices.

    ``view``: ``paper`` (an agent's own releases only, eq. 22–25) or ``network`` (every release).
    ``accounting``: ``chernoff`` (Theorem 2, an upper bound) or ``exact`` (the true tail).
    ``adjacency``: ``heuristic`` (the paper's unspecified neighbour, our guess) or ``worst`` (a search).
    The other fields are the numerical choices of ``methods.ddppm.privacy``.
    """

    view: str = "network"
    accounting: str = "chernoff"
    adjacency: str = "heuristic"
    rank_mode: str = "support"
    rank_rtol: float = DEFAULT_RANK_RTOL
    candidate_rows: int = 1
    candidate_kinds: tuple[str, ...] = CANDIDATE_KINDS
    observers: tuple[int, ...] | None = None
    realisations: int = 8
    seed: int = 0

    def __post_init__(self) -> None:
        for key, value, allowed in (
            ("view", self.view, VIEWS),
            ("accounting", self.accounting, ACCOUNTINGS),
            ("adjacency", self.adjacency, ADJACENCIES),
        ):
            if value not in allowed:
                raise ConfigError(f"threat_models.<name>.{key}: unknown {value!r}; use one of {allowed}")
        unknown = set(self.candidate_kinds) - set(CANDIDATE_KINDS)
        if unknown:
            raise ConfigError(
                f"methods.ddppm.privacy.candidate_kinds: unknown {sorted(unknown)}; use {CANDIDATE_KINDS}"
            )
        if self.realisations < 1:
            raise ConfigError("methods.ddppm.privacy.realisations must be >= 1")
        if self.candidate_rows < 1:
            raise ConfigError("methods.ddppm.privacy.candidate_rows must be >= 1")


@dataclass(frozen=True)
class Candidate:
    """An adjacent data set: row ``row`` (local index) of agent ``agent`` replaced by ``new_row``."""

    agent: int
    row: int
    kind: str
    new_row: np.ndarray = field(compare=False)


def candidate_rows(problem: DistributedProblem, agent: int, count: int) -> list[int]:
    """Local indices of the ``count`` largest-norm rows of ``X_agent``."""
    norms = np.linalg.norm(problem.blocks[agent], axis=1)
    return [int(r) for r in np.argsort(-norms, kind="stable")[:count]]


def adjacent_candidates(problem: DistributedProblem, agent: int, settings: AccountantSettings) -> list[Candidate]:
    """Spec §6.2: the largest-norm rows of ``X_j`` replaced by 0, or moved by distance 1 along
    ±(top right singular vector of X) and projected back onto the unit ball (``||x − x'|| ≤ 1``)."""
    direction = problem.top_right_singular_vector
    out = []
    for r in candidate_rows(problem, agent, settings.candidate_rows):
        x = problem.blocks[agent][r]
        for kind in settings.candidate_kinds:
            if kind == "zero":
                new = np.zeros_like(x)
            else:
                new = x + (direction if kind == "plus" else -direction)
                new = new / max(1.0, float(np.linalg.norm(new)))
            out.append(Candidate(agent=agent, row=r, kind=kind, new_row=new))
    return out


def apply_candidate(problem: DistributedProblem, candidate: Candidate) -> DistributedProblem:
    """The adjacent problem ``X'``."""
    blocks = list(problem.blocks)
    changed = blocks[candidate.agent].copy()
    changed[candidate.row] = candidate.new_row
    blocks[candidate.agent] = changed
    return problem.with_blocks(tuple(blocks))


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


@dataclass
class DeltaResult:
    """δ over an ε grid at the worst (observer, candidate), plus every pair's values in ``pairs``."""

    eps: np.ndarray
    delta: np.ndarray
    delta_se: np.ndarray
    delta_max: np.ndarray
    delta_upper: np.ndarray
    worst: list[dict]
    pairs: pd.DataFrame


PairKey = tuple[int, int, int, str]  # (observer, agent, row, kind)


def evaluate_delta(
    problem: DistributedProblem,
    params: DDPPMParams,
    eps: np.ndarray,
    settings: AccountantSettings | None = None,
    only_pairs: set[PairKey] | None = None,
) -> DeltaResult:
    """δ(ε) of Algorithm 1 with parameters ``params`` on ``problem`` for every ε (spec §6).

    ``only_pairs`` restricts the (observer, candidate) pairs, e.g. to the worst few during a grid search;
    the worst case over a subset can only be smaller, so a full evaluation must confirm any choice.
    """
    settings = settings or AccountantSettings()
    eps = check_epsilons(eps)
    observers = range(problem.m) if settings.observers is None else settings.observers
    if only_pairs is not None:
        observers = [i for i in observers if any(p[0] == i for p in only_pairs)]
    candidates = [c for j in range(problem.m) for c in adjacent_candidates(problem, j, settings)]
    extra = {j: sorted({c.row for c in candidates if c.agent == j}) for j in range(problem.m)}
    bases = reduction_basis(problem, extra)
    sigmas = params.sigmas
    base_model = ReducedReleaseModel(problem, params.alpha, params.T, bases)
    needed = [c for c in candidates if only_pairs is None or any(p[1:] == (c.agent, c.row, c.kind) for p in only_pairs)]
    adjacent_models = {
        c: ReducedReleaseModel(apply_candidate(problem, c), params.alpha, params.T, bases) for c in needed
    }
    records = []
    for i in observers:
        law1 = base_model.conditional_law(params.sigma_q, sigmas, i, settings.view)
        own = base_model.project_own(i, own_randomness(problem, params, i, settings))
        mean1 = law1.mean_map @ own
        support = SupportBasis.of_factor(law1.factor, settings.rank_rtol)
        for cand in candidates:
            if cand.agent == i or (only_pairs is not None and (i, cand.agent, cand.row, cand.kind) not in only_pairs):
                continue
            law2 = adjacent_models[cand].conditional_law(params.sigma_q, sigmas, i, settings.view)
            pair = diagonalize(support, law1.factor, law2.factor, settings.rank_mode)
            delta_mu = mean1 - law2.mean_map @ own
            tails = deltas_from_pair(pair, delta_mu, eps)
            kl = (
                float(np.nan_to_num(np.mean(kl_divergence(pair, delta_mu)), nan=np.inf))
                if pair.singular is None
                else np.inf
            )
            R = tails.delta.shape[1]
            for e_idx, e in enumerate(eps):
                records.append(
                    {
                        "observer": i,
                        "agent": cand.agent,
                        "row": cand.row,
                        "kind": cand.kind,
                        "eps": e,
                        "delta_mean": tails.delta[e_idx].mean(),
                        "delta_se": tails.delta[e_idx].std(ddof=1) / np.sqrt(R) if R > 1 else np.nan,
                        "delta_max": tails.delta[e_idx].max(),
                        "delta_upper_mean": tails.upper[e_idx].mean(),
                        "delta_lower_mean": tails.lower[e_idx].mean(),
                        "kl_mean": kl,
                        "singular": pair.singular or "",
                    }
                )
    pairs = pd.DataFrame.from_records(records)
    return DeltaResult(eps=eps, pairs=pairs, **worst_case(pairs))


def worst_case(pairs: pd.DataFrame) -> dict:
    """Per ε, the worst (observer, candidate): its mean δ and s.e., the overall max, and Theorem 2's δ⁺."""
    if pairs.empty:
        raise ConfigError("no (observer, adjacent candidate) pair to evaluate; check privacy.observers")
    by_eps = pairs.groupby("eps", sort=False)
    worst = pairs.loc[by_eps["delta_mean"].idxmax().to_numpy()].reset_index(drop=True)
    return {
        "delta": worst["delta_mean"].to_numpy(),
        "delta_se": worst["delta_se"].to_numpy(),
        "delta_max": by_eps["delta_max"].max().to_numpy(),
        "delta_upper": by_eps["delta_upper_mean"].max().to_numpy(),
        "worst": worst[["observer", "agent", "row", "kind"]].to_dict("records"),
    }
