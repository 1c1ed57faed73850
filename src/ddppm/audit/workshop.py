"""Attack the workshop D-DP-PM as implemented: what its observer holds, drawn by the algorithm itself.

The workshop variant (:mod:`ddppm.methods.workshop`) puts its noise on ``z`` (``z_i^(t) = X_iᵀq_i^(t−1) + p_i^(t)``),
keeps ``q_i^(t) = α X_i z_i^(t+1/2)`` noise-free and ends with a Gaussian release ``q̃_i = q_i^(T) + u_i``,
``u_i ~ N(0, σ_{u,i}² I)`` with ``σ_{u,i} = f α‖z_i^(T+1/2)‖`` (the noise factor f of the budget split). Its claim
composes the iterations, accounted in the `paper` view (the observer's own releases, workshop eq. 65), with the final
release at ``(ε₁, δ₁)``. The observer ``i`` holds (:func:`workshop_memory`):

* **the iterations' part**, jointly Gaussian under X and under X′: its own start and noises and its own releases, in
  sufficient coordinates: ``B_iᵀq_i^(0)`` (``B_i`` a basis of ``col(X_i)``: the algorithm uses ``q_i^(0)`` only
  through ``X_iᵀq_i^(0)``, the rest is independent noise of one law under both), ``p_i^(1..T)``, ``z_i^(2..T)``
  (``z_i^(1)`` is a function of the first two) and its own consensus ``a_i = z_i^(T+1/2)``, which it computes to
  form ``q_i^(T)``. The test on it is the quadratic likelihood ratio fitted on training draws
  (:func:`ddppm.audit.gossip.quadratic_scores`), as for the journal method;
* **the final release**, which everyone receives to normalise ``q̃``. Given ``a_k`` the changed agent ``k``'s
  ``q̃_k`` is Gaussian with mean ``α X_k a_k`` and covariance ``σ_{u,k}² I``: the neighbours differ only in the
  changed row's mean, so the likelihood ratio of the release is that of its entry ``r`` (:func:`final_ratio`). Its
  noise scale depends on ``a_k``, so this part is not Gaussian: the test uses the mechanism as specified (the
  claimed f), with the observer's own ``a_i`` for ``a_k``: after ``c`` consensus rounds they agree up to
  ``m·max|W^c − 1/m|`` (5·10⁻⁷ on the paper's ring with c = 20). Every other row's release has, given ``a``, one
  law under both neighbours.

The candidate statistics are the iterations' ratio, the final release's and their sum (the memory's whole ratio
when ``a_k = a_i``); the statistic and its threshold are chosen on draws kept apart from those counted
(:func:`ddppm.audit.bounds.audit_scores`). The neighbour is the claim's own worst pair (:func:`claim_worst_pair`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ddppm.accounting.neighbours import Neighbour, apply_neighbour, neighbours_from_table
from ddppm.accounting.settings import accountant_settings
from ddppm.audit.bounds import AuditResult, audit_scores
from ddppm.audit.gossip import column_basis, fitted_quadratic, quadratic_scores
from ddppm.core.problem import DistributedProblem
from ddppm.methods.workshop.accounting import iterations_delta
from ddppm.methods.workshop.algorithm import WorkshopParams, workshop_agentwise
from ddppm.methods.workshop.calibration import params_from_row

BATCH = 5_000
STATISTICS = ("iterations", "final release", "whole memory")
"""The candidate statistics, in the order of the score columns."""


@dataclass(frozen=True)
class WorkshopPoint:
    """One calibrated point: the iterations' parameters, the final noise factor ``f`` and the claimed (ε, δ)."""

    params: WorkshopParams
    noise_factor: float
    eps: float
    delta: float

    @classmethod
    def from_row(cls, row: pd.Series) -> WorkshopPoint:
        """From a row of the workshop calibration's parameter table (a feasible one)."""
        noise_factor = float(row["final_noise_factor"])
        return cls(params_from_row(row), noise_factor, float(row["eps"]), float(row["delta"]))

    def with_noise_scaled(self, factor: float) -> WorkshopPoint:
        """Every added noise (``σ_p(t)`` and the final ``f``) times ``factor``, the claim unchanged: a mutant."""
        schedule = replace(self.params.schedule, scale=self.params.schedule.scale * factor)
        return replace(self, params=replace(self.params, schedule=schedule), noise_factor=self.noise_factor * factor)


def final_ratio(released: np.ndarray, a: np.ndarray, x: np.ndarray, x_prime: np.ndarray, alpha: float,
                noise_factor: float) -> np.ndarray:  # fmt: skip
    """``log N(y; α x′ᵀa, σ²) − log N(y; α xᵀa, σ²)`` with ``σ = f α‖a‖``: the final release's likelihood ratio
    given ``a`` (``y`` the changed row's entry of ``q̃``, one per run; ``a`` is ``d × runs``)."""
    sd = noise_factor * alpha * np.linalg.norm(a, axis=0)
    mean, mean_prime = alpha * (x @ a), alpha * (x_prime @ a)
    return ((released - mean) ** 2 - (released - mean_prime) ** 2) / (2.0 * sd**2)


def workshop_memory(problem: DistributedProblem, point: WorkshopPoint, observer: int, row: tuple[int, int],
                    pair_rows: tuple[np.ndarray, np.ndarray], runs: int,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``runs`` draws of observer ``observer``'s memory on ``problem`` (X or X′): its iterations' part in
    sufficient coordinates (one row each) and the final release's ratio (module docstring) for the changed
    ``row = (agent, local row)`` whose candidate values are ``pair_rows`` (under X, under X′)."""
    params, d, T = point.params, problem.d, point.params.T
    if observer == row[0]:
        raise ValueError("the observer's own rows are the same under both neighbours: pick another observer")
    basis = column_basis(problem.blocks[observer])
    own, noise = problem.agent_slice(observer), slice(observer * d, (observer + 1) * d)
    changed = int(problem.offsets[row[0]]) + row[1]
    parts, finals = [], []
    for start in range(0, runs, BATCH):
        size = min(BATCH, runs - start)
        # Independent views drawn in bulk (the audit needs no per-run replay).
        q0 = params.sigma_q * rng.standard_normal((problem.n, size))
        P = params.sigmas[:, None, None] * rng.standard_normal((T, problem.m * d, size))
        run = workshop_agentwise(problem, params, q0, P, rng.standard_normal((problem.n, size)), point.noise_factor)
        a = run.a[observer]
        blocks = [
            basis.T @ q0[own],
            P[:, noise].reshape(T * d, size),
            run.z_releases[1:, observer].reshape(-1, size),
            a,
        ]
        parts.append(np.vstack(blocks).T)
        finals.append(final_ratio(run.released[changed], a, *pair_rows, params.alpha, point.noise_factor))
    return np.vstack(parts), np.concatenate(finals)


def audit_workshop(problem: DistributedProblem, point: WorkshopPoint, neighbour: Neighbour, observer: int,
                   draws: int, seed: int, claimed: WorkshopPoint | None = None) -> AuditResult:  # fmt: skip
    """The lower bound on ε from observer ``observer``'s memory under X and under the neighbour X′: ``draws``
    counted per side, as many choose the statistic and its threshold, as many train the iterations' Gaussian fits.

    ``claimed`` is the calibration the statistics assume (the final ratio's f; by default ``point`` itself): a
    mutant is drawn with its own noise and scored as the claim specifies, so nothing of the bug is told to the
    attack. The bound is taken at the claimed δ.
    """
    claimed = claimed or point
    adjacent = apply_neighbour(problem, neighbour)
    pair_rows = (problem.blocks[neighbour.agent][neighbour.row], np.asarray(neighbour.new_row, float))
    rngs = [np.random.default_rng([seed, side, stage]) for stage in range(2) for side in range(2)]

    def memory(side: int, runs: int, stage: int) -> tuple[np.ndarray, np.ndarray]:
        views, final = workshop_memory((problem, adjacent)[side], point, observer, (neighbour.agent, neighbour.row),
                                       pair_rows, runs, rngs[2 * stage + side])  # fmt: skip
        # The final ratio at the claimed f: the drawn one is scaled by the claim's noise factor, not the mutant's.
        return views, final * (point.noise_factor / claimed.noise_factor) ** 2

    fits = fitted_quadratic([memory(side, draws, 0)[0] for side in range(2)])
    scores = []
    for side in range(2):
        views, final = memory(side, 2 * draws, 1)
        iterations = quadratic_scores(views, *fits)
        scores.append(np.column_stack([iterations, final, iterations + final]))
    return audit_scores(scores[0], scores[1], claimed.delta)


def claim_worst_pair(problem: DistributedProblem, row: pd.Series, calibration: dict, privacy: dict
                     ) -> tuple[int, Neighbour]:  # fmt: skip
    """The (observer, neighbour) at which the claim's own accounting attains its δ: the iterations' δ at
    ``ε_i`` recomputed with the calibration's threat model, privacy options and neighbours (its metadata), the
    worst pair of that computation. The final release's sensitivity is the same for every neighbour."""
    settings = accountant_settings(privacy, calibration["threat_model"])
    neighbours = neighbours_from_table(pd.DataFrame(calibration["neighbours"]))
    result = iterations_delta(problem, params_from_row(row), [float(row["eps_iterations"])], settings,
                              privacy["chernoff_bound"], neighbours=neighbours)  # fmt: skip
    worst = result.worst[0]
    key = (int(worst["agent"]), int(worst["row"]), str(worst["kind"]))
    return int(worst["observer"]), next(n for n in neighbours if n.key == key)
