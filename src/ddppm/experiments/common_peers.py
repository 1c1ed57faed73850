"""The common task's peers as installed (config ``common.peers``): diffprivlib and OpenDP, run in their own
environment on the pipeline's rows (:mod:`ddppm.common_task.peers`, :mod:`ddppm.methods.peers`).

The default run fits them at the points where fits finish (``common.peers.datasets/ranks/epsilons``, a few
seconds per point); the target ``common_peers_full`` fits every data set, k and ε of the common task with a
larger budget per point. In both, once a point runs out of time the larger ε of the same library and k are not
tried (:func:`ddppm.common_task.peer_library.run_points`; :func:`not_tried` finds them in a summary). Their rows
join the common task's summary (setting prepared_rows), never its "which method" table: their privacy column is
``claimed`` (no proof covers what their samplers release).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ddppm.common_task.peers import PEER_PYTHON, library_seeds, peer_fits, peer_python
from ddppm.common_task.run import run_rows, summarise
from ddppm.common_task.settings import PREPARED, task_options
from ddppm.common_task.task import CommonTask, subspace_error
from ddppm.core.errors import ConfigError
from ddppm.core.problem import DistributedProblem
from ddppm.core.seeds import run_generators
from ddppm.methods import get_method
from ddppm.methods.peers import peer_library_methods


@dataclass(frozen=True)
class PeerGrid:
    """Where the peers run: data sets, ranks, ε, fits per point and seconds per point."""

    datasets: tuple[str, ...]
    ranks: tuple[int, ...]
    epsilons: tuple[float, ...]
    runs: int
    point_seconds: float


def peer_datasets(section: dict[str, Any]) -> list[str]:
    """The data sets of ``common.peers.datasets`` that the common task runs (the others are skipped, with a note:
    a user's own data set alone runs with the default peers' list)."""
    return [ds for ds in section["peers"]["datasets"] if ds in section["datasets"]]


def check_peers(peers: dict[str, Any], section: dict[str, Any]) -> None:
    """``common.peers``: its ranks and ε are some of the common task's (its rows sit beside them); its data sets
    outside ``common.datasets`` are skipped (:func:`peer_datasets`)."""
    for key, whole in (("ranks", "ranks"), ("epsilons", "epsilons")):
        outside = [v for v in peers[key] if v not in section[whole]]
        if outside:
            raise ConfigError(
                f"common.peers.{key}: {outside} are not in common.{whole} ({section[whole]}); the peers' rows sit "
                f"beside the common task's, so use some of those (or add them to common.{whole})"
            )


def peer_grid(section: dict[str, Any], full: bool = False) -> PeerGrid:
    """The default run's grid (``common.peers``), or with ``full`` every point of the common task."""
    peers = section["peers"]
    if full:
        return PeerGrid(tuple(section["datasets"]), tuple(section["ranks"]), tuple(map(float, section["epsilons"])),
                        int(section["runs"]), float(peers["full_point_seconds"]))  # fmt: skip
    return PeerGrid(tuple(peers["datasets"]), tuple(peers["ranks"]), tuple(map(float, peers["epsilons"])),
                    int(peers["runs"]), float(peers["point_seconds"]))  # fmt: skip


def peer_runs(
    tasks: Sequence[CommonTask],
    methods: Mapping[str, Any],
    eps_grid: Sequence[float],
    delta_limit: float,
    runs: int,
    seed: int,
    point_seconds: float,
    options: dict[str, Any],
    dataset: str = "",
    python: str | Path = PEER_PYTHON,
) -> pd.DataFrame:
    """Every run of every peer library (``methods``: registered :class:`ddppm.methods.peers.PeerLibrary`
    instances by name) at every (k, ε) of ``tasks`` × ``eps_grid``, in the common task's runs format, setting
    ``prepared_rows`` (the libraries' own preprocessing is not run: docs/peers.md), with the columns
    ``finished`` and ``correct_law_error`` (the error of a draw from the Bingham law with the library's own ε
    split: :meth:`~ddppm.methods.peers.PeerLibrary.correct_law`, every run, finished or not). One peers'
    process serves them all; a point after a smaller ε of its library and k that ran out of time is not tried
    (its runs unfinished)."""
    plan, points = [], []
    for task in tasks:
        for name, method in methods.items():
            # Increasing ε per (library, k), whatever the config's order: the peers' side skips the points above an
            # ε that ran out of time in the order given, so this order is what makes :func:`not_tried` exact.
            for eps in sorted(map(float, eps_grid)):
                calibrated = method.common_calibrate(task, float(eps), float(delta_limit), options)
                seeds = library_seeds(seed, (dataset, task.k, name, float(eps)), runs)
                plan.append((task, name, method, calibrated))
                points.append({"library": method.library, "k": task.k, "eps": float(eps), "seeds": seeds})
    X = tasks[0].X
    fitted = peer_fits(python, X, points, point_seconds)
    frames = []
    for (task, name, method, calibrated), point in zip(plan, fitted, strict=True):
        calibrated = method.with_claimed_eps(calibrated, point.claimed_eps)
        V = np.where(point.finished[:, None, None], point.V, 0.0)
        V = np.linalg.qr(V)[0]  # the library's components are orthonormal up to round-off
        frame = run_rows(task, name, method, calibrated, V, float(np.nanmean(point.seconds)) if point.finished.any()
                         else float("nan"), dataset=dataset, setting=PREPARED)  # fmt: skip
        frame["finished"] = point.finished
        frame.loc[~point.finished, ["error", "captured_variance"]] = np.nan
        rngs = run_generators(seed, (dataset, task.k, name, float(calibrated.eps), "correct_law"), range(runs))
        frame["correct_law_error"] = subspace_error(method.correct_law(task, calibrated.eps, rngs), task.V)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def peer_runs_of_dataset(
    problem: DistributedProblem, dataset: str, section: dict[str, Any], full: bool = False, python: Any = None
) -> pd.DataFrame:
    """Every fit of every library of ``common.peers.libraries`` on one data set (the ranks below its dimension), in
    the common task's runs format with the column ``finished``, by ``python`` (default: ``common.peers.python``,
    :func:`ddppm.common_task.peers.peer_python`)."""

    grid = peer_grid(section, full)
    methods = peer_library_methods(section["peers"]["libraries"])
    tasks = [CommonTask.from_problem(problem, k) for k in grid.ranks if k < problem.d]
    return peer_runs(tasks, methods, grid.epsilons, float(section["delta"]), grid.runs, int(section["seed"]),
                     grid.point_seconds, task_options(section), dataset,
                     python or peer_python(section["peers"]))  # fmt: skip


MIN_FITS_QUOTED = 5
"""A point is quoted in the findings only when at least this many of its fits finished."""

POINT_KEYS = ["method", "dataset", "k"]
"""A peers' point is one (library, k, ε) of one data set: its ε are run in increasing order (:func:`peer_runs`)."""


def not_tried(points: pd.DataFrame) -> pd.Series:
    """Which peers' points were not tried because a smaller ε of the same library, data set and k ran out of time.

    Parameters
    ----------
    points : pandas.DataFrame
        One row per point of one peers' run (a summary's rows for the peers: columns ``method``, ``dataset``,
        ``k``, ``eps`` and ``n_unfinished``).

    Returns
    -------
    pandas.Series
        Boolean, on ``points``' index: True where the point's fits were all
        :data:`~ddppm.common_task.peer_library.SKIPPED`.

    Notes
    -----
    The summary has no status column (:func:`ddppm.common_task.run.summarise` keeps only its own columns), so this
    is read off the rule itself, which makes it exact rather than a guess: the peers' side skips a point exactly
    when a point of the same (library, k) before it, at a smaller ε, ran out of time, that is has an unfinished
    fit (n_unfinished > 0; :func:`ddppm.common_task.peer_library.run_points`), and :func:`peer_runs` sends each
    (library, k)'s ε in increasing order, one request per data set, so "before it" is "at a smaller ε". A point
    tried and finishing 0 fits is never after such a point, so it is never taken for a skipped one.
    """
    ordered = points.sort_values("eps", kind="stable")
    ran_out = ordered["n_unfinished"].gt(0).astype(int)
    # how many smaller ε of the group ran out of time (the ε of one group are distinct)
    before = ran_out.groupby([ordered[key] for key in POINT_KEYS], sort=False).cumsum() - ran_out
    return before.gt(0).reindex(points.index)


def _eps_list(values: Sequence[float]) -> str:
    """``5``, ``5 and 10``, ``2, 5 and 10``."""
    words = [f"{v:g}" for v in values]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def point_outcomes(runs: pd.DataFrame) -> list[str]:
    """One line per peers' point of a runs frame (:func:`peer_runs`), for the job's log: ``<method> k=<k> eps=<ε>:
    <finished> of <runs> fits finished``, or ``not tried (a smaller ε ran out of time)`` (:func:`not_tried`)."""
    points = runs.groupby([*POINT_KEYS, "eps"], sort=False)["finished"].agg(n_runs="sum", total="size").reset_index()
    points["n_unfinished"] = points["total"] - points["n_runs"]
    skipped = not_tried(points)
    return [
        f"{p.method} k={p.k} eps={p.eps:g}: "
        + ("not tried (a smaller ε ran out of time)" if skip else f"{p.n_runs} of {p.total} fits finished")
        for p, skip in zip(points.itertuples(), skipped, strict=True)
    ]


def peer_findings(summary: pd.DataFrame) -> list[str]:
    """The peers as installed, in sentences (setting prepared_rows).

    First what their privacy column means, then per library, data set and k its error at the largest ε where at
    least :data:`MIN_FITS_QUOTED` fits finished, beside the Bingham law with the library's own ε split
    (``correct_law_error_mean``: the same mechanism sampled right), how many fits finished at each larger ε tried,
    and the larger ε not tried because a smaller one ran out of time (:func:`not_tried`: "at ε = 5 not tried
    (ε = 2 ran out of time)", never "0 of 20 fits finished" as if tried).
    """
    peers = summary[(summary["privacy_column"] == "claimed") & (summary["setting"] == PREPARED)]
    if peers.empty:
        return []
    lines = [
        "The peers as installed (" + ", ".join(dict.fromkeys(peers["method"])) + "): each claims pure ε for one "
        "replaced row; the proof is about the Bingham law, which their samplers do not draw (sampler defect: not "
        "the mechanism's law), so the claim is not proven for what they release (docs/peers.md). Their rows are "
        'listed beside the "which method" table, never in it.'
    ]
    peers = peers.assign(not_tried=not_tried(peers))
    for (method, dataset, k), rows in peers.groupby(POINT_KEYS, sort=False):
        rows = rows.sort_values("eps")
        # the smallest ε that ran out of time: what stopped the larger ones (it may be the quoted point itself)
        first = rows.loc[rows["n_unfinished"].gt(0) & ~rows["not_tried"], "eps"].min()
        quoted = rows[rows["n_runs"] >= MIN_FITS_QUOTED]
        parts = []
        if len(quoted):
            row = quoted.iloc[-1]
            total = int(row["n_runs"] + row["n_unfinished"])
            parts.append(
                f"at ε = {row['eps']:g} error {row['error_mean']:.3f} as installed ({int(row['n_runs'])} of {total} "
                f"fits finished in the time budget), {row['correct_law_error_mean']:.3f} with the Bingham law and "
                "the same ε split"
            )
            rows = rows[rows["eps"] > row["eps"]]
        tried, skipped = rows[~rows["not_tried"]], rows[rows["not_tried"]]
        parts += [f"at ε = {r['eps']:g} {int(r['n_runs'])} of {int(r['n_runs'] + r['n_unfinished'])} fits finished"
                  for _, r in tried.iterrows()]  # fmt: skip
        if len(skipped):
            parts.append(f"at ε = {_eps_list(skipped['eps'])} not tried (ε = {first:g} ran out of time)")
        lines.append(f"{method} on {dataset}, k = {k}: " + "; ".join(parts) + ".")
    return lines


def peers_beside_correct_law(peer_runs: pd.DataFrame, common_summary: pd.DataFrame) -> pd.DataFrame:
    """The peers' summary (every point of their runs) with the correct law's mean error at the same total ε
    (``amin_error_mean``: the common task's ``amin``, all of ε on the directions; setting prepared_rows)."""

    summary = summarise(peer_runs)
    law = get_method(summary["method"].iloc[0]).correct_law_method
    standard = common_summary[(common_summary["setting"] == PREPARED) & (common_summary["method"] == law)]
    correct = standard.set_index(["dataset", "k", "eps"])["error_mean"].rename(f"{law}_error_mean")
    return summary.join(correct, on=["dataset", "k", "eps"])
