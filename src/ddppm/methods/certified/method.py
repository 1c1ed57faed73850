"""The registered method ``ddppm_certified``: the repaired D-DP-PM (:mod:`.algorithm`) with its certified δ
(:mod:`.accounting`), on the journal's figures and on the common task.

Its δ is an upper bound for every neighbour under the gossip trust model (every message on the network is seen),
so one parameter table serves every threat model of the run (:attr:`delta_holds_for_every_threat_model`).

**Parameters on the journal figures** (:meth:`CertifiedDDPPM.choose_params`). At each (ε, δ limit) and each T of
``t_grid``, the constant noise ``σ = Δ · noise_multiplier(ε, δ limit, T)`` meets the limit exactly; T is the one
whose mean error over ``pilot_runs`` pilot runs (seeds of their own) is smallest **on a public stand-in**
(:mod:`.stand_in`: spiked rows of the data set's public shape, gap ``stand_in_gap``), never on the private rows. So
T and σ are functions of public inputs only (the shape, ε, the δ limit, the options) and the certified δ covers the
whole route. **On the common task** T is the power-method family's L (``common.iterations``), so the comparison
with the noisy power methods is on equal terms.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ddppm.common_task.adjacency import ADJACENCIES, release_sensitivity
from ddppm.common_task.base import Calibrated, CommonTaskMethod, GaussianRelease, certified
from ddppm.common_task.certified import noise_multiplier
from ddppm.common_task.task import CommonTask
from ddppm.core.arrays import check_orthonormal
from ddppm.core.metrics import sin_error
from ddppm.core.problem import DistributedProblem
from ddppm.core.seeds import run_generators
from ddppm.methods.base import PROVEN_EVERY_OBSERVER, Method, param_table, register
from ddppm.methods.certified.accounting import certified_delta_of, view_log_density_terms
from ddppm.methods.certified.algorithm import CertifiedParams, Draws, certified_network, draw, orthonormalise
from ddppm.methods.certified.deflation import CertifiedDeflation
from ddppm.methods.certified.stand_in import PublicShape, public_stand_in
from ddppm.privacy.mechanisms import gaussian_release


def local_grams(blocks: Sequence[np.ndarray]) -> np.ndarray:
    """The agents' ``X_jᵀX_j`` (m × d × d), computed once per problem and reused for every run and ε."""
    return np.stack([Xj.T @ Xj for Xj in blocks])


def common_params(task: CommonTask, calibrated: Calibrated) -> CertifiedParams:
    """The algorithm's parameters at a common-task calibration (constant σ over T rounds, the task's rank)."""
    return CertifiedParams.constant(int(calibrated.params["T"]), float(calibrated.params["sigma"]), task.k)


def network_view(task: CommonTask, params: CertifiedParams, draws: Draws) -> np.ndarray:
    """The network observer's view, one flattened row per run: the public start ``B⁰`` (d × k) and every release
    of every agent (T × m × d × k), drawn by :func:`certified_network` from ``draws``."""
    grams = np.stack([task.local_gram(j) for j in range(task.m)])
    run = certified_network(grams, task.Wc, params, draws)
    runs = draws.B0.shape[-1]
    start = np.moveaxis(draws.B0, -1, 0).reshape(runs, -1)
    return np.concatenate([start, np.moveaxis(run.releases, 2, 0).reshape(runs, -1)], axis=1)


def left_vector_errors(problem: DistributedProblem, bases: np.ndarray) -> np.ndarray:
    """Eq. (37) ``sin(u, q)`` of each run, ``q`` stacking every agent's ``q_j = X_j b_j`` (its own rows times its
    own final direction; ``bases`` is m × R × d × 1)."""
    q = np.vstack([Xj @ bases[j, :, :, 0].T for j, Xj in enumerate(problem.blocks)])
    return sin_error(problem.top_eigenvector, q)


CHOSEN_ON_STAND_IN = "pilot runs on a public stand-in of the data set's public shape: public"
"""Column ``chosen_by`` of the parameter table (:mod:`.stand_in`; docs/privacy.md, "Where each parameter comes
from")."""

FRONTIER_DELTAS = tuple(float(x) for x in np.logspace(-12, np.log10(0.9), 25))
"""The δ grid of the certified frontier (:meth:`CertifiedDDPPM.frontier`): 10⁻¹² to 0.9, log-spaced."""


@register
class CertifiedDDPPM(Method, CommonTaskMethod):
    name = "ddppm_certified"
    label = "D-DP-PM, certified (noise on every release)"
    style: ClassVar[dict[str, Any]] = {"color": "#e377c2", "marker": "P", "linestyle": "-"}
    trust_model = "gossip"
    privacy_column = "certified"
    source = "this project (repair of the journal's Algorithm 1)"
    delta_holds_for_every_threat_model = True
    config_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "t_grid": {
                "type": "array",
                "minItems": 1,
                "uniqueItems": True,
                "items": {"type": "integer", "minimum": 1},
                "default": [1, 2, 3, 4, 6, 8, 12],
                "description": "iteration counts T tried at each ε (each with the noise that meets the δ limit)",
            },
            "pilot_runs": {
                "type": "integer",
                "minimum": 2,
                "default": 50,
                "description": "pilot runs per T on the public stand-in that choose T",
            },
            "seed": {
                "type": "integer",
                "minimum": 0,
                "default": 5,
                "description": "seed of the public stand-in's rows and of the pilot runs",
            },
            "stand_in_gap": {
                "type": "number",
                "exclusiveMinimum": 1,
                "default": 2.0,
                "description": "assumed spectral gap λ₁/λ₂ of the public stand-in on which T is chosen (a public "
                "assumption, the advisor's default; never read from the data)",
            },
            "adjacency": {
                "enum": list(ADJACENCIES),
                "default": "distance_one",
                "description": "neighbours on the journal figures (the journal's ‖x − x′‖ ≤ 1; Δ = 1 under both)",
            },
        },
    }

    # ------------------------------------------------------------------------------------ the journal figures

    def _sensitivity(self, adjacency: str, k: int = 1) -> float:
        return release_sensitivity("power_step", adjacency, block=k)

    def _mean_error(self, problem: DistributedProblem, grams: np.ndarray, params: CertifiedParams,
                    rngs: Sequence[np.random.Generator]) -> np.ndarray:  # fmt: skip
        run = certified_network(grams, problem.Wc, params, draw(rngs, params.T, problem.m, problem.d, 1))
        return left_vector_errors(problem, run.bases)

    def stand_in(self, problem: DistributedProblem, options: dict[str, Any]) -> DistributedProblem:
        """The public stand-in of ``problem`` (:func:`.stand_in.public_stand_in`): only its public shape is read."""
        return public_stand_in(PublicShape.of(problem), float(options["stand_in_gap"]), int(options["seed"]))

    def pilot_errors(self, stand_in: DistributedProblem, eps: float, limit: float,
                     options: dict[str, Any]) -> list[tuple[float, int, float]]:  # fmt: skip
        """``(mean pilot error, T, σ)`` for each T of ``t_grid`` on the public ``stand_in``, each T with the constant
        σ that meets ``limit`` at ε exactly."""
        delta, grams, rows = self._sensitivity(options["adjacency"]), local_grams(stand_in.blocks), []
        for T in options["t_grid"]:
            sigma = delta * noise_multiplier(float(eps), float(limit), int(T))
            pilots = run_generators(int(options["seed"]), (self.name, "pilot", int(T)), range(options["pilot_runs"]))
            error = float(self._mean_error(stand_in, grams, CertifiedParams.constant(T, sigma), pilots).mean())
            rows.append((error, int(T), sigma))
        return rows

    def _best_T(self, stand_in: DistributedProblem, eps: float, limit: float,
                options: dict[str, Any]) -> tuple[float, int, float]:  # fmt: skip
        """The ``(pilot error, T, σ)`` of :meth:`pilot_errors` with the smallest pilot error (the first on a tie)."""
        return min(self.pilot_errors(stand_in, eps, limit, options), key=lambda row: row[0])

    def frontier(
        self, problem: DistributedProblem, eps_grid: Sequence[float], options: dict[str, Any], runs: int = 100
    ) -> pd.DataFrame:
        """The certified frontier: at each ε and each δ of :data:`FRONTIER_DELTAS`, the error of the best T (pilot
        runs choose it, ``runs`` fresh runs measure it). Its δ holds for every neighbour and observer, so it is the
        same under every threat model: the journal method's calibration frontier is drawn against it. T is chosen on
        the public stand-in (:meth:`stand_in`), so the (T, σ) columns do not depend on the private rows."""
        grams, stand_in, rows = local_grams(problem.blocks), self.stand_in(problem, options), []
        for e in eps_grid:
            for limit in FRONTIER_DELTAS:
                _, T, sigma = self._best_T(stand_in, float(e), limit, options)
                fresh = run_generators(int(options["seed"]), (self.name, "frontier", float(e), limit), range(runs))
                errors = self._mean_error(problem, grams, CertifiedParams.constant(T, sigma), fresh)
                rows.append({"eps": float(e), "delta": limit, "T": T, "sigma": sigma, "error_mean": errors.mean()})
        table = pd.DataFrame(rows)
        table.insert(0, "label", self.label)
        return table

    def choose_params(
        self, problem: DistributedProblem, eps: np.ndarray, delta_limits: np.ndarray, options: dict[str, Any]
    ) -> pd.DataFrame:
        """One row per (ε, δ limit): T and σ chosen on the public stand-in (:meth:`pilot_errors`), the certified δ
        they reach, and ``pilot_error``, the chosen T's mean error on the stand-in (not on the data)."""
        stand_in, delta = self.stand_in(problem, options), self._sensitivity(options["adjacency"])
        rows = []
        for e, limit in zip(eps, delta_limits, strict=True):
            best = self._best_T(stand_in, float(e), float(limit), options)
            params = CertifiedParams.constant(best[1], best[2])
            achieved = certified_delta_of(params, delta, float(e))
            rows.append(
                {
                    "eps": float(e),
                    "delta_limit": float(limit),
                    "threat_model": PROVEN_EVERY_OBSERVER,
                    "accounting": "certified",
                    "delta": achieved,
                    "feasible": bool(achieved <= limit * (1 + 1e-9)),
                    "T": best[1],
                    "sigma": best[2],
                    "pilot_error": best[0],
                    "chosen_by": CHOSEN_ON_STAND_IN,
                }
            )
        return param_table(rows)

    def run_errors(
        self,
        problem: DistributedProblem,
        params: pd.Series,
        rngs: Sequence[np.random.Generator],
        options: dict[str, Any],
    ) -> np.ndarray:
        chosen = CertifiedParams.constant(int(params["T"]), float(params["sigma"]))
        return self._mean_error(problem, local_grams(problem.blocks), chosen, rngs)

    # -------------------------------------------------------------------------------------- the common task

    def common_calibrate(self, task: CommonTask, eps: float, delta_limit: float, options: dict[str, Any]) -> Calibrated:
        T, delta = int(options["iterations"]), self._sensitivity(options["adjacency"], task.k)
        sigma = delta * noise_multiplier(eps, delta_limit, T)
        release = GaussianRelease(sensitivity=delta, sigma=sigma, count=T)
        return certified(eps, delta_limit, {"sigma": sigma, "T": T, "sensitivity": delta}, [release])

    def common_estimate(
        self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator], options: dict[str, Any]
    ) -> np.ndarray:
        """Agent 1's final basis (every agent holds one; they agree up to the consensus error)."""
        params = common_params(task, calibrated)
        grams = np.stack([task.local_gram(j) for j in range(task.m)])
        run = certified_network(grams, task.Wc, params, draw(rngs, params.T, task.m, task.d, task.k))
        return run.bases[0]

    federated: ClassVar[bool] = True
    streams: ClassVar[bool] = True
    federated_observer: ClassVar[str] = ("every party, and the coordinator, who relays every message between "
                                         "neighbours (the network view)")  # fmt: skip

    def party_release(self, party: Any, step: str, public: dict[str, Any]) -> np.ndarray:
        """Agent j's release at round t, ``z_j = X_jᵀX_j B_j + σ_t G_{t,j}`` (its basis ``B_j`` relayed in the
        message); with simulation noise ``G`` is the one-process draw (:func:`draw`), redrawn whole and indexed."""
        own = party.public.calibration[0]
        t, T, sigma = int(step.split(":")[1]), int(own.params["T"]), float(own.params["sigma"])
        product = party.gram() @ public["B"][party.index]
        if party.agreement.noise == "simulation":
            shape = (T, party.public.parties, party.public.d, party.public.k)
            G = party.public.method_generator().spawn(2)[1].standard_normal(shape)
            return product + sigma * G[t, party.index]
        return gaussian_release(product, sigma, party.noise_stream("certified", party.method_noise))

    def federated_noise(self, public: Any) -> float:
        return float(public.calibration[0].params["sigma"])

    federated_query: ClassVar[str | None] = "B"

    def federated_steps(self, public: Any) -> tuple[str, ...]:
        """``method:0`` … ``method:T−1``: one per round."""
        return tuple(f"method:{t}" for t in range(int(public.calibration[0].params["T"])))

    def federated_start(self, public: Any) -> np.ndarray:
        """The public start ``B⁰`` (d × k), the same at every agent, from the agreement's seed alone."""
        return orthonormalise(public.public_randomness().spawn(2)[0].standard_normal((public.d, public.k)))

    def check_federated_query(self, public: Any, index: int, round: int, block: Any) -> np.ndarray:
        """``B`` holds every agent's d × k basis, each with orthonormal columns (the release's sensitivity is a
        supremum over orthonormal B), and at round 0 every one is the public start. Agent ``index`` uses its own."""
        B = check_orthonormal(block, (public.parties, public.d, public.k), "B")
        if round == 0 and not np.array_equal(B, np.broadcast_to(self.federated_start(public), B.shape)):
            raise ValueError("B at the first round must be the public start drawn from the agreement's seed")
        return B

    def federated_estimate(self, transport: Any, public: Any, message: dict[str, Any]) -> np.ndarray:
        """The coordinator relays (:func:`certified_network`, agent by agent): every round it takes each agent's
        release, mixes them as the gossip would (``m W^c z``) and sends each agent its own mix back; agent 1's
        final basis is the answer, as in one process."""
        m = public.parties
        B = np.broadcast_to(self.federated_start(public), (m, public.d, public.k)).copy()
        for step in self.federated_steps(public):
            z = np.stack(transport.each(step, {**message, "B": B}))
            B = orthonormalise(m * np.einsum("ij,jdk->idk", public.mixing, z))
        return B[0]

    def common_view(self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """Every message on the network and the public start (:func:`network_view`), from the estimate's draws."""
        params = common_params(task, calibrated)
        return network_view(task, params, draw(rngs, params.T, task.m, task.d, task.k))

    def common_view_scores(self, first: CommonTask, second: CommonTask, calibrated: Calibrated,
                           views: np.ndarray) -> np.ndarray:  # fmt: skip
        """The exact log-likelihood ratio of the network view (:func:`.accounting.view_log_density_terms`, summed)
        and its T per-round terms."""
        params = common_params(first, calibrated)
        runs, d, k, m = len(views), first.d, first.k, first.m
        start = np.moveaxis(views[:, : d * k].reshape(runs, d, k), 0, -1)
        releases = np.moveaxis(views[:, d * k :].reshape(runs, params.T, m, d, k), 0, 2)
        terms = [view_log_density_terms(np.stack([task.local_gram(j) for j in range(m)]), task.Wc, params, start,
                                        releases) for task in (first, second)]  # fmt: skip
        rounds = (terms[1] - terms[0]).T
        return np.column_stack([rounds.sum(axis=1), rounds])

    def deflated(self) -> CommonTaskMethod:
        """The same algorithm one component at a time (:mod:`ddppm.methods.certified.deflation`), for the rank
        study."""

        return CertifiedDeflation()

    def common_costs(self, task: CommonTask, calibrated: Calibrated) -> dict[str, Any]:
        rounds = int(calibrated.params["T"]) * task.consensus  # c gossip rounds per iteration, d k floats each
        return {"floats_per_agent": rounds * task.d * task.k, "rounds": rounds, "memory": "d² + d k"}
