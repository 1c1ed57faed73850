"""Adjacent data sets: the paper's heuristic neighbours and the proposals of the worst-case search.

A neighbour ``X'`` of ``X`` changes one row ``x_r`` of one agent ``j`` into ``x'_r`` with ``‖x_r − x'_r‖ ≤ 1``
and ``‖x'_r‖ ≤ 1`` (rows live in the unit ball). (ε, δ)-DP is a promise over *every* such neighbour.

* ``heuristic`` (the paper does not say which neighbour; this is our guess, kept for the ``paper`` threat
  model): the largest-norm rows, replaced by 0 or moved by 1 along ±(top right singular vector of X).
* ``worst`` (sound): proposals that leak most, then a local search (:func:`ddppm.accounting.accountant.
  search_worst_neighbours`). The first release ``z_j^(1) = X_jᵀ q_j^(0)`` is noise-free with covariance
  ``σ_q² X_jᵀX_j``; a row that adds variance where ``X_jᵀX_j`` has little changes that law most. So the
  proposals take the highest-leverage rows ``h_r = x_rᵀ(X_jᵀX_j)⁺x_r`` (and the largest-norm row) and move
  each by distance 1 along ± the weakest eigen-directions of ``X_jᵀX_j`` (and ± the top right singular
  vector of X), or replace it by 0.

A move ``x' = P(x + u)`` with ``‖u‖ = 1`` and ``P`` the projection onto the unit ball is always a valid
neighbour: ``P`` is non-expansive and ``P(x) = x``, so ``‖x' − x‖ ≤ ‖u‖ = 1``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ddppm.core.problem import DistributedProblem

HEURISTIC_KINDS = ("zero", "plus", "minus")


@dataclass(frozen=True)
class Neighbour:
    """An adjacent data set: row ``row`` (local index) of agent ``agent`` replaced by ``new_row``.

    ``kind`` names how it was made and identifies it among the neighbours of the same row (searched
    neighbours carry a digest of ``new_row``), so ``(agent, row, kind)`` is a key.
    """

    agent: int
    row: int
    kind: str
    new_row: np.ndarray = field(compare=False, repr=False)

    @property
    def key(self) -> tuple[int, int, str]:
        return (self.agent, self.row, self.kind)


def project_to_ball(x: np.ndarray) -> np.ndarray:
    """The nearest point of the closed unit ball."""
    return x / max(1.0, float(np.linalg.norm(x)))


def moved(x: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """``P(x + u)`` with ``u`` the unit vector along ``direction``: a valid neighbour of ``x`` (module doc)."""
    return project_to_ball(x + direction / np.linalg.norm(direction))


def digest(v: np.ndarray) -> str:
    return hashlib.sha1(np.round(np.asarray(v, float), 12).tobytes()).hexdigest()  # full: no collisions


def largest_norm_rows(problem: DistributedProblem, agent: int, count: int) -> list[int]:
    """Local indices of the ``count`` largest-norm rows of ``X_agent``."""
    norms = np.linalg.norm(problem.blocks[agent], axis=1)
    return [int(r) for r in np.argsort(-norms, kind="stable")[:count]]


def leverage(problem: DistributedProblem, agent: int) -> np.ndarray:
    """``h_r = x_rᵀ (X_jᵀX_j)⁺ x_r`` for every row of ``X_j``."""
    X = problem.blocks[agent]
    return np.einsum("rd,de,re->r", X, np.linalg.pinv(X.T @ X), X)


def heuristic_neighbours(
    problem: DistributedProblem, agent: int, rows: int, kinds: tuple[str, ...] = HEURISTIC_KINDS
) -> list[Neighbour]:
    """The paper's unspecified neighbour, our guess: the ``rows`` largest-norm rows of ``X_j`` replaced by 0
    (``zero``) or moved by 1 along ±(top right singular vector of X) (``plus``, ``minus``)."""
    direction = problem.top_right_singular_vector
    out = []
    for r in largest_norm_rows(problem, agent, rows):
        x = problem.blocks[agent][r]
        for kind in kinds:
            new = np.zeros_like(x) if kind == "zero" else moved(x, direction if kind == "plus" else -direction)
            out.append(Neighbour(agent, r, kind, new))
    return out


def search_proposals(problem: DistributedProblem, agent: int, rows: int, directions: int) -> list[Neighbour]:
    """Starting points of the worst-case search for agent ``j`` (module doc): the ``rows`` highest-leverage
    rows plus the largest-norm row, each replaced by 0 or moved by 1 along ± the ``directions`` weakest
    eigenvectors of ``X_jᵀX_j`` and ± the top right singular vector of X."""
    X = problem.blocks[agent]
    _, vecs = np.linalg.eigh(X.T @ X)
    axes = [(f"eig{k}", vecs[:, k]) for k in range(min(directions, X.shape[1]))]
    axes.append(("top", problem.top_right_singular_vector))
    chosen = [int(r) for r in np.argsort(-leverage(problem, agent), kind="stable")[:rows]]
    chosen += [r for r in largest_norm_rows(problem, agent, 1) if r not in chosen]
    out = []
    for r in chosen:
        x = X[r]
        out.append(Neighbour(agent, r, "zero", np.zeros_like(x)))
        for name, axis in axes:
            for sign, tag in ((1.0, "+"), (-1.0, "-")):
                out.append(Neighbour(agent, r, f"{name}{tag}", moved(x, sign * axis)))
    return out


def perturbations(
    problem: DistributedProblem, neighbour: Neighbour, count: int, scale: float, rng: np.random.Generator
) -> list[Neighbour]:
    """``count`` valid neighbours near ``neighbour`` (same row): its move direction turned by a random
    angle of about ``scale`` radians, still moved by distance 1 (then projected into the ball)."""
    x = problem.blocks[neighbour.agent][neighbour.row]
    step = neighbour.new_row - x
    base = step / np.linalg.norm(step) if np.linalg.norm(step) > 1e-12 else rng.standard_normal(x.size)
    out = []
    for _ in range(count):
        turned = base + scale * rng.standard_normal(x.size)
        new = moved(x, turned)
        out.append(Neighbour(neighbour.agent, neighbour.row, f"search@{digest(new)}", new))
    return out


def neighbour_table(neighbours: list[Neighbour]) -> pd.DataFrame:
    """One row per neighbour: ``agent, row, kind, new_row`` (a list), for storing a search's findings."""
    return pd.DataFrame(
        {
            "agent": [n.agent for n in neighbours],
            "row": [n.row for n in neighbours],
            "kind": [n.kind for n in neighbours],
            "new_row": [[float(x) for x in n.new_row] for n in neighbours],
        }
    )


def neighbours_from_table(table: pd.DataFrame) -> list[Neighbour]:
    """The inverse of :func:`neighbour_table`."""
    return [Neighbour(int(r.agent), int(r.row), str(r.kind), np.asarray(r.new_row, float)) for r in table.itertuples()]


def apply_neighbour(problem: DistributedProblem, neighbour: Neighbour) -> DistributedProblem:
    """The adjacent problem ``X'``."""
    blocks = list(problem.blocks)
    changed = blocks[neighbour.agent].copy()
    changed[neighbour.row] = neighbour.new_row
    blocks[neighbour.agent] = changed
    return problem.with_blocks(tuple(blocks))


def is_valid(problem: DistributedProblem, neighbour: Neighbour, tol: float = 1e-9) -> bool:
    """``‖x − x'‖ ≤ 1`` and ``‖x'‖ ≤ 1``."""
    x = problem.blocks[neighbour.agent][neighbour.row]
    return bool(np.linalg.norm(x - neighbour.new_row) <= 1 + tol and np.linalg.norm(neighbour.new_row) <= 1 + tol)
