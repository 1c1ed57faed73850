"""δ of the workshop D-DP-PM: Theorem 1 and the project's accountants on the same releases, then the composition.

The iterations' releases ``Z^(T)`` are Gaussian given the data (:mod:`.release`), so the journal method's
accountant applies unchanged (:func:`ddppm.accounting.accountant.evaluate_delta`: observers, own-randomness
realisations, heuristic or worst-case neighbours, the simultaneous diagonalisation); only the mechanism differs,
and :class:`WorkshopReleases` tells the accountant what it is. What a threat model's ``accounting`` means for
the iterations:

* ``chernoff`` with ``chernoff_bound: theorem1`` (default): Theorem 1 as printed (eq. 12), minimised over s,
  i.e. one tail of one order of each pair (:mod:`.theorem1`): the paper's own accounting;
* ``chernoff`` with ``chernoff_bound: two_sided``: the project's Chernoff bound on both tails and both orders;
* ``exact``: the exact two-sided tail of the privacy loss on both orders (:mod:`ddppm.privacy.exact`).

The final release is a Gaussian mechanism at ``(ε₁, δ₁)`` and the total is the composition of :mod:`.budget`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ddppm.accounting.accountant import AccountantSettings, DeltaResult, evaluate_delta
from ddppm.accounting.release import ConditionalLaw
from ddppm.core.errors import ConfigError
from ddppm.core.problem import DistributedProblem
from ddppm.core.seeds import seed_sequence
from ddppm.methods.workshop.algorithm import WorkshopParams
from ddppm.methods.workshop.budget import BudgetSplit, compose
from ddppm.methods.workshop.release import WorkshopReleaseModel
from ddppm.methods.workshop.schema import schema_default
from ddppm.methods.workshop.theorem1 import theorem1_tails
from ddppm.privacy.gaussian import GaussianPair
from ddppm.privacy.tails import TailDeltas, pair_tail_deltas, pair_tail_deltas_many

CHERNOFF_BOUNDS = ("theorem1", "two_sided")


def workshop_own_randomness(
    problem: DistributedProblem, params: WorkshopParams, observer: int, settings: AccountantSettings
) -> np.ndarray:
    """``R_δ`` seeded realisations of ``ω_i = [q_i^(0); p_i^(1); …; p_i^(T)]`` (``n_i + Td`` rows)."""
    rng = np.random.default_rng(seed_sequence(settings.seed, "workshop-own-randomness", observer))
    n_i, R = int(problem.sizes[observer]), settings.realisations
    q0 = params.sigma_q * rng.standard_normal((n_i, R))
    p = params.sigmas[:, None, None] * rng.standard_normal((params.T, problem.d, R))
    return np.vstack([q0, p.reshape(params.T * problem.d, R)])


@dataclass(frozen=True)
class WorkshopReleases:
    """The workshop mechanism for the shared accountant (:class:`ddppm.accounting.accountant.ReleaseFamily`)."""

    chernoff_bound: str = schema_default("privacy", "chernoff_bound")

    def __post_init__(self) -> None:
        if self.chernoff_bound not in CHERNOFF_BOUNDS:
            raise ConfigError(
                f"workshop.method_options.ddppm_workshop.privacy.chernoff_bound must be one of {CHERNOFF_BOUNDS}, "
                f"got {self.chernoff_bound!r}"
            )

    def release_model(self, problem: DistributedProblem, params: WorkshopParams, bases) -> WorkshopReleaseModel:
        return WorkshopReleaseModel(problem, params.alpha, params.T, bases)

    def conditional_law(self, model, params: WorkshopParams, observer: int, view: str) -> ConditionalLaw:
        return model.conditional_law(params.sigma_q, params.sigmas, observer, view)

    def own_randomness(
        self, problem: DistributedProblem, params: WorkshopParams, observer: int, settings: AccountantSettings
    ) -> np.ndarray:
        return workshop_own_randomness(problem, params, observer, settings)

    def tail_deltas(
        self, pair: GaussianPair, delta_mu: np.ndarray, eps: np.ndarray, settings: AccountantSettings
    ) -> TailDeltas:
        if settings.accounting == "chernoff" and self.chernoff_bound == "theorem1":
            return theorem1_tails(pair, delta_mu, eps)
        return pair_tail_deltas(pair, delta_mu, eps, settings.accounting)

    def tail_deltas_many(
        self, items: list[tuple[GaussianPair, np.ndarray]], eps: np.ndarray, settings: AccountantSettings
    ) -> list[TailDeltas]:
        if settings.accounting == "chernoff" and self.chernoff_bound == "theorem1":
            return [theorem1_tails(pair, delta_mu, eps) for pair, delta_mu in items]
        return pair_tail_deltas_many(items, eps, settings.accounting)

    def accounting_name(self, settings: AccountantSettings) -> str:
        """How the iterations' δ was computed: ``theorem1``, ``chernoff`` (two-sided) or ``exact``."""
        theorem1 = settings.accounting == "chernoff" and self.chernoff_bound == "theorem1"
        return "theorem1" if theorem1 else settings.accounting


def iterations_delta(
    problem: DistributedProblem,
    params: WorkshopParams,
    eps_iterations,
    settings: AccountantSettings,
    chernoff_bound: str = "theorem1",
    only_pairs=None,
    neighbours=None,
) -> DeltaResult:
    """``max_i δ_i(ε_i)`` of the iterations' releases ``Z^(T)`` over observers and neighbours (shared accountant)."""
    return evaluate_delta(
        problem,
        params,
        eps_iterations,
        settings,
        only_pairs=only_pairs,
        neighbours=neighbours,
        family=WorkshopReleases(chernoff_bound),
    )


def total_delta(
    problem: DistributedProblem,
    params: WorkshopParams,
    eps,
    delta_limits,
    settings: AccountantSettings,
    budget: BudgetSplit,
    chernoff_bound: str = "theorem1",
    neighbours=None,
) -> pd.DataFrame:
    """The composed ``(ε, δ)`` of the whole algorithm at each total ε, one row per ε: the split, the iterations'
    δ, δ₁ (nominal and the exact δ of the final noise) and ``delta = δ_iterations + δ₁``."""
    parts = budget.split(eps, delta_limits)
    res = iterations_delta(problem, params, parts["eps_iterations"], settings, chernoff_bound, neighbours=neighbours)
    factors = budget.noise_factors(eps, delta_limits, settings.accounting)
    eps_total, delta = compose(parts["eps_iterations"], res.delta, parts["eps_final"], parts["delta_final"])
    return pd.DataFrame(
        {
            "eps": eps_total,
            "delta_limit": np.asarray(delta_limits, float),
            "eps_iterations": parts["eps_iterations"],
            "eps_final": parts["eps_final"],
            "delta_iterations": res.delta,
            "delta_iterations_limit": parts["delta_iterations_limit"],
            "delta_final": parts["delta_final"],
            "delta_final_actual": [
                budget.final_delta_actual(e1, f) for e1, f in zip(parts["eps_final"], factors, strict=True)
            ],
            "final_noise_factor": factors,
            "delta": delta,
        }
    )
