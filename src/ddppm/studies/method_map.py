"""Where each method wins: the common task on seeded spiked-covariance data of a public shape (docs/method_map.md).

A **shape** is what a user can say about their problem without looking at it: n rows over m agents, dimension d,
rank k, and an assumed spectrum: the top-k population eigenvalues ``gap·(k, k−1, …, 1)``, the others 1, so
``λ_k/λ_{k+1} = gap`` (:func:`spiked_spectrum`). Each **draw** is a fresh data set of that shape: Gaussian rows with
that covariance in a seeded random basis, clipped to a row norm ``B`` and divided by it, where ``B`` comes from the
spectrum alone (:func:`row_norm_bound`: the mean of ‖x‖² plus five standard deviations), so nothing about a draw
shapes its own rows. Every method runs once per draw at every ε: run r of every method shares draw r, and the
paired differences of :mod:`ddppm.common_task.ranking` cancel the variation between data sets (common random
numbers). The ε values of a shape share its draws (the data do not depend on ε).

**Adaptive runs.** A shape starts with ``runs.start`` draws and doubles them until, at every ε and trust level,
the competitive set has one member (the answer separates) or ``runs.cap`` draws are reached; each cell records
which (``stopped``: ``separated`` or ``cap``). Adding runs until an answer separates tests repeatedly, so the 95 %
is nominal; a tie at the cap is reported as a tie.

**Raw records** (``looseness`` set): each draw is instead a user's raw records of that shape (:func:`raw_shape_records`:
the same Gaussian rows, shifted by seeded feature means, not scaled), with declared bounds ``looseness`` times
wider than the data's mean ± 4 population standard deviations (the box's centre off the mean by a seeded share
of the slack), and every method runs from the raw records as the common task's standard setting does
(:func:`ddppm.common_task.raw_records.raw_records_runs`: public preparation, private standardisation with its
share of the budget, then the method). Without ``looseness`` the rows are already in the unit ball (prepared rows).

Trust levels (:data:`TRUST_LEVELS`): what a user can trust, as in the common task's "which method" table: a method
is usable where it asks for no more trust (:data:`ddppm.common_task.run.TRUST_ORDER`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from ddppm.common_task.preprocessing import PreprocessingPlan
from ddppm.common_task.raw_records import PREPROCESSING_ONLY, RawRecords, raw_records_runs
from ddppm.common_task.run import rankings, run_methods
from ddppm.common_task.task import CommonTask
from ddppm.core.network import parties_mixing_matrix
from ddppm.core.partition import partition_rows
from ddppm.core.seeds import seed_sequence
from ddppm.data.public_prep import PublicBounds

FACTORS = ("n", "d", "gap", "m", "k")
"""The factors of a shape (ε is the fifth axis of the map; every shape runs every ε)."""


@dataclass(frozen=True)
class Shape:
    """The public shape of a problem: rows, dimension, spectral gap λ_k/λ_{k+1}, agents and rank."""

    n: int
    d: int
    gap: float
    m: int
    k: int

    def __post_init__(self) -> None:
        if not (1 <= self.k < self.d and self.m >= 1 and self.n >= 2 * self.m and self.gap > 1):
            raise ValueError(f"shape {self}: need 1 <= k < d, m >= 1, n >= 2m and gap > 1")

    @property
    def label(self) -> str:
        return f"n={self.n},d={self.d},gap={self.gap:g},m={self.m},k={self.k}"


def spiked_spectrum(d: int, k: int, gap: float) -> np.ndarray:
    """Population eigenvalues ``gap·(k, k−1, …, 1)`` then ``d − k`` ones: ``λ_k/λ_{k+1} = gap``."""
    spectrum = np.ones(d)
    spectrum[:k] = gap * np.arange(k, 0, -1, dtype=float)
    return spectrum


def row_norm_bound(spectrum: np.ndarray) -> float:
    """A public bound on a row's norm from the spectrum alone: ``sqrt(E‖x‖² + 5 sd(‖x‖²))`` for Gaussian rows
    (``E‖x‖² = Σλ``, ``Var ‖x‖² = 2Σλ²``); rows beyond it are clipped (‖x‖² is skewed: about 0.2 % of rows at
    a strong spike, fewer otherwise)."""
    return float(np.sqrt(spectrum.sum() + 5.0 * np.sqrt(2.0 * np.sum(spectrum**2))))


@lru_cache(maxsize=16)
def _basis(d: int, seed: int) -> np.ndarray:
    """A seeded random orthonormal basis (the spectrum's eigenvectors): the same for every draw of a dimension."""
    Q, R = np.linalg.qr(np.random.default_rng(seed_sequence(seed, ("basis", d))).standard_normal((d, d)))
    return Q * np.sign(np.diag(R))


def spiked_rows(shape: Shape, seed: int, draw: int) -> np.ndarray:
    """Draw ``draw`` of the shape's rows: ``N(0, Q diag(λ) Qᵀ)``, clipped to :func:`row_norm_bound` and divided by
    it (every row in the unit ball)."""
    spectrum = spiked_spectrum(shape.d, shape.k, shape.gap)
    rng = np.random.default_rng(seed_sequence(seed, ("rows", shape.label, draw)))
    X = (rng.standard_normal((shape.n, shape.d)) * np.sqrt(spectrum)) @ _basis(shape.d, seed).T
    bound = row_norm_bound(spectrum)
    norms = np.linalg.norm(X, axis=1)
    X *= (1.0 / np.maximum(norms, bound))[:, None]
    return X


def spiked_task(shape: Shape, seed: int, draw: int, topology: str = "ring", consensus: int = 10) -> CommonTask:
    """The common task on draw ``draw``: its rows split over the shape's m agents (seeded), gossiping ``consensus``
    rounds per iteration over ``topology`` (the complete graph for m ≤ 2)."""
    X = spiked_rows(shape, seed, draw)
    parts = tuple(np.asarray(p) for p in partition_rows(shape.n, shape.m, seed=seed))
    task = CommonTask(X, parts, shape.k, parties_mixing_matrix(shape.m, topology, seed=seed), int(consensus))
    # The in-law LDP draws need some R with RᵀR = XᵀX; a Cholesky factor of the Gram costs O(d³) where the task's
    # own QR of X costs O(nd²) (most of a draw's time at n = 10⁵). The noisy Gram's law depends on R only through
    # RᵀR, so the runs' law is unchanged (the pipeline's tasks keep their QR factor and their numbers).
    gram = task.gram
    task.__dict__["row_factor"] = np.linalg.cholesky(gram + 1e-12 * np.trace(gram) / shape.d * np.eye(shape.d)).T
    return task


TIGHT_SDS = 4.0
"""Declared bounds at looseness 1: each feature's mean ± this many population standard deviations."""


def raw_shape_records(shape: Shape, seed: int, draw: int, looseness: float, topology: str = "ring",
                      consensus: int = 10) -> RawRecords:  # fmt: skip
    """Draw ``draw`` of a user's raw records of the shape (module docstring): ``N(μ, Q diag(λ) Qᵀ)`` with seeded
    feature means μ (the same for every draw), declared bounds ``looseness``·(μ ± 4σ_j) around a centre off μ by a
    seeded share of the slack, the agents and network of :func:`spiked_task`; the analyst standardises."""
    spectrum = spiked_spectrum(shape.d, shape.k, shape.gap)
    basis = _basis(shape.d, seed)
    sd = np.sqrt((basis**2) @ spectrum)
    place = np.random.default_rng(seed_sequence(seed, ("raw means", shape.d)))
    means, offsets = 10.0 * sd * place.uniform(-1, 1, shape.d), place.uniform(-1, 1, shape.d)
    rng = np.random.default_rng(seed_sequence(seed, ("raw rows", shape.label, draw)))
    X = means + (rng.standard_normal((shape.n, shape.d)) * np.sqrt(spectrum)) @ basis.T
    half = TIGHT_SDS * sd * float(looseness)
    centre = means + offsets * (float(looseness) - 1.0) * TIGHT_SDS * sd / 2
    bounds = PublicBounds(centre - half, centre + half, "declared",
                          f"simulated: mean ± {TIGHT_SDS:g} population sd, {looseness:g} times wider")  # fmt: skip
    task = spiked_task(shape, seed, draw, topology, consensus)
    return RawRecords(X, task.parts, task.W, int(consensus), bounds, "standardize")


def map_shapes(section: Mapping[str, Any]) -> list[Shape]:
    """Every shape the map runs: the base point, each factor varied alone over its axis, and the factors of each
    2-D grid varied together (ε is not a factor: every shape runs every ε). Duplicates appear once."""
    base = {f: section["base"][f] for f in FACTORS}
    points = [dict(base)]
    for factor in FACTORS:
        points += [{**base, factor: value} for value in section["axes"].get(factor, [])]
    for grid in section["grids"]:
        factors = [f for f in grid if f != "eps"]
        values = [section["axes"][f] for f in factors]
        for combo in np.array(np.meshgrid(*values, indexing="ij")).reshape(len(factors), -1).T if factors else []:
            points.append({**base, **dict(zip(factors, combo, strict=True))})
    shapes = [Shape(int(p["n"]), int(p["d"]), float(p["gap"]), int(p["m"]), int(p["k"])) for p in points]
    return list(dict.fromkeys(shapes))


def _draw_runs(shape: Shape, draws: Iterable[int], eps: list[float], section: Mapping[str, Any],
               methods: Mapping[str, Any]) -> pd.DataFrame:  # fmt: skip
    options = {"adjacency": section["adjacency"], "iterations": int(section["iterations"])}
    looseness = section.get("looseness")
    frames = []
    for draw in draws:
        label = f"map/{shape.label}/{draw}"
        if looseness is None:
            task = spiked_task(shape, int(section["seed"]), draw, section["topology"], int(section["consensus"]))
            runs = run_methods(task, eps, float(section["delta"]), 1, int(section["seed"]), options, methods,
                               dataset=label)  # fmt: skip
        else:
            records = raw_shape_records(shape, int(section["seed"]), draw, float(looseness), section["topology"],
                                        int(section["consensus"]))  # fmt: skip
            plan = PreprocessingPlan.from_section(section.get("preprocessing", {}))
            runs = raw_records_runs(records, eps, [float(section["delta"])] * len(eps), [shape.k], 1, 1,
                                    int(section["seed"]), plan, options, dataset=label, methods=methods)  # fmt: skip
            runs = runs[~runs["method"].str.startswith(PREPROCESSING_ONLY)].assign(draw=draw)
        frames.append(runs.assign(run=draw))
    return pd.concat(frames, ignore_index=True)


def rank_cells(runs: pd.DataFrame, shape: Shape) -> pd.DataFrame:
    """One row per (ε, trust level): the best method, the competitive set and its size, whether the best beats
    chance, and each member's mean error with its 95 % interval and costs (``members``: ``;``-joined
    ``method:mean:lo:hi:floats_per_agent:rounds``)."""
    rows = []
    for eps, at_eps in runs.groupby("eps", sort=True):
        costs = at_eps.groupby("method")[["floats_per_agent", "rounds"]].first()
        for trust, ranking in rankings(at_eps).items():
            members = ranking.table[ranking.table["competitive"]]
            rows.append({**asdict(shape), "eps": float(eps), "trust": trust, "best": ranking.best,
                         "competitive": ";".join(ranking.members), "set_size": len(ranking.members),
                         "separated": ranking.separated, "beats_chance": ranking.beats_chance,
                         "runs": ranking.runs, "chance_error": float(np.sqrt(1.0 - shape.k / shape.d)),
                         "members": ";".join(f"{r.method}:{r.error_mean:.4f}:{r.error_lo:.4f}:{r.error_hi:.4f}:"
                                             f"{int(costs.loc[r.method, 'floats_per_agent'])}:"
                                             f"{int(costs.loc[r.method, 'rounds'])}" for r in members.itertuples()),
                         "best_error": float(ranking.table.iloc[0]["error_mean"])})  # fmt: skip
    return pd.DataFrame(rows)


def run_shape(
    shape: Shape, section: Mapping[str, Any], methods: Mapping[str, Any]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every run of every method at every ε of ``section["epsilons"]`` on the shape, with adaptive draws, and the
    ranked cells (``stopped``: ``separated`` where every cell's answer separated before the cap, else ``cap``)."""
    eps = [float(e) for e in section["epsilons"]]
    start, cap = int(section["runs"]["start"]), int(section["runs"]["cap"])
    runs = _draw_runs(shape, range(start), eps, section, methods)
    while True:
        cells = rank_cells(runs, shape)
        done = len(cells) == 0 or bool(cells["separated"].all())
        total = int(runs["run"].max()) + 1
        if done or total >= cap:
            break
        more = min(total, cap - total)
        runs = pd.concat([runs, _draw_runs(shape, range(total, total + more), eps, section, methods)],
                         ignore_index=True)  # fmt: skip
    cells["stopped"] = np.where(cells["separated"], "separated", "cap") if len(cells) else []
    return runs, cells
