"""The common task from the raw records (scope ``raw_records``): public preparation, private standardisation,
the method, and one (ε, δ) for all of it (docs/privacy.md, "What is public").

Per (ε, δ limit) point:

1. every raw record is prepared by public inputs only (:func:`ddppm.data.public_prep.prepare_public`);
2. where the analyst standardises (``normalization: standardize``), a share of the budget releases the sums a
   standardisation needs, by the parties the method's trust model allows (:mod:`ddppm.common_task.preprocessing`);
   ``common.preprocessing.draws`` independent preprocessing draws per point, each shared by ``runs / draws``
   runs of every method of that party (the comparison between methods is paired), and a row records its draw
   (column ``draw``) so the confidence interval counts draws, not runs (:func:`ddppm.common_task.run.summarise`);
3. the method runs on the standardised rows with the rest of the budget (:mod:`ddppm.common_task.budget`), and its row
   records the δ of everything composed;
4. the error is measured against the PCA of :func:`ddppm.data.public_prep.reference_rows` (the records
   standardised with their true statistics): clipping, the preprocessing's noise and the method's all count.

Rows named ``preprocessing_only_<party>`` are the exact top-k of the privately standardised rows (no method
noise, no privacy claim of their own: ``privacy_column`` ``none``): the error the preprocessing alone costs.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from ddppm.common_task.base import Calibrated, estimates_rank, failure_delta, releases_mu, top_k
from ddppm.common_task.budget import (
    end_to_end_delta,
    method_pair,
    pure_and_gaussian_delta,
    pure_method_eps,
    split_budget,
)
from ddppm.common_task.centring import method_estimate, recolours, record_scales
from ddppm.common_task.preprocessing import (
    PreprocessingNoise,
    PreprocessingPlan,
    preprocessing_noise,
    preprocessing_party,
    private_statistics,
    standardise_rows,
)
from ddppm.common_task.run import open_sets, run_rows
from ddppm.common_task.task import CommonTask, captured_variance, chance_error, subspace_error
from ddppm.core.errors import ConfigError
from ddppm.core.seeds import run_generators
from ddppm.data.public_prep import RAW_RECORDS, PublicBounds, prepare_public, reference_rows
from ddppm.methods import common_task_methods

STREAM = "raw_records"
"""The label of the setting's random draws (its own: no other setting's numbers change)."""

PREPROCESSING_ONLY = "preprocessing_only"
PARTY_WORDS = {"curator": "one noise, a curator's", "agents": "each agent's noise",
               "individuals": "each individual's noise"}  # fmt: skip


def reference_labels() -> dict[str, str]:
    """Legend and table labels of the ``preprocessing_only_<party>`` rows."""
    return {f"{PREPROCESSING_ONLY}_{party}": f"private standardisation alone ({words}): exact PCA of its rows"
            for party, words in PARTY_WORDS.items()}  # fmt: skip


@dataclass(frozen=True)
class RawRecords:
    """A data set as its owners hold it: the raw records ``X`` (n × d), the agents' row sets, the mixing matrix and
    consensus rounds, the declared public bounds and what the non-private analyst does (``normalization``)."""

    X: np.ndarray
    parts: tuple[np.ndarray, ...]
    W: np.ndarray | None
    consensus: int
    bounds: PublicBounds
    normalization: str

    @property
    def standardises(self) -> bool:
        return self.normalization == "standardize"

    def party_count(self, party: str) -> int:
        return {"curator": 1, "agents": len(self.parts), "individuals": int(self.X.shape[0])}[party]


def reference_task(records: RawRecords, k: int, centre_only: bool = False) -> CommonTask:
    """The target: the non-private analyst's rows (:func:`reference_rows`; ``centre_only``, where the analyst
    standardises but the preprocessing only centres, ``common.preprocessing.scale: false``: the centred records, the
    PCA scikit-learn computes), scaled into the unit ball (a global scale changes neither the top-k directions nor
    the captured-variance ratio)."""
    centred = centre_only and records.standardises
    rows = reference_rows(records.X, "center" if centred else records.normalization)
    return CommonTask(rows / np.linalg.norm(rows, axis=1).max(), records.parts, k)


def calibrate_end_to_end(
    method: Any, task: CommonTask, eps: float, limit: float, noise: PreprocessingNoise | None, options: dict[str, Any]
) -> tuple[Calibrated, Calibrated]:
    """The method's own calibration (what it runs with) and the row's (the target (ε, δ limit), the δ of the
    preprocessing and the method composed: :mod:`ddppm.common_task.budget`)."""
    if noise is None:
        own = method.common_calibrate(task, eps, limit, options)
        return own, own
    mu_pre = noise.mu
    if method.pure_dp:
        eps_method = pure_method_eps(eps, limit, mu_pre)
        own = method.common_calibrate(task, eps_method, limit, options)
        delta = pure_and_gaussian_delta(eps_method, mu_pre, eps)
        extra = {"eps_method": eps_method}
    else:
        eps_method, delta_method = method_pair(eps, limit, mu_pre)
        own = method.common_calibrate(task, eps_method, delta_method, options)
        if not own.releases:
            raise ConfigError(f"common task, raw records: {method.name} has no Gaussian releases to compose")
        delta = end_to_end_delta(eps, releases_mu(own.releases), mu_pre) + failure_delta(eps, own.test_failure)
        extra = {"delta_method": delta_method} | ({"eps_method": eps_method} if eps_method != eps else {})
    params = {**own.params, **extra, "mu_preprocessing": mu_pre}
    return own, replace(own, eps=float(eps), delta_limit=float(limit), params=params, delta=float(delta))


def raw_records_runs(
    records: RawRecords,
    eps_grid: Sequence[float],
    delta_limits: Sequence[float],
    ranks: Sequence[int],
    runs: int,
    draws: int,
    seed: int,
    plan: PreprocessingPlan,
    options: dict[str, Any],
    dataset: str = "",
    setting: str = "standard",
    methods: Mapping[str, Any] | None = None,
    first_draw: int = 0,
) -> pd.DataFrame:
    """Every run of every method (default: the common-task methods) at every (k, ε) from the raw records (module
    docstring): the runs format of :func:`ddppm.common_task.run.run_rows` with ``scope`` ``raw_records``, ``draw`` and
    ``preprocessing`` (the party that released the sums, ``none`` where the analyst does not standardise), plus
    the ``preprocessing_only_<party>`` rows. ``first_draw``: the draws are ``first_draw, …, first_draw + draws − 1``
    (their runs ``first_draw·runs/draws, …``), so more draws added later are new and replayable."""
    if runs % draws:
        raise ConfigError(f"common.preprocessing.draws = {draws} must divide common.runs = {runs}")
    methods = common_task_methods() if methods is None else methods
    Z = prepare_public(records.X, records.bounds, records.normalization)
    targets = {k: reference_task(records, k, centre_only=not plan.scale) for k in ranks}
    per_draw = runs // draws
    frames = []
    by_party: dict[tuple[str, bool], list[str]] = {}
    for name, method in methods.items():
        party = preprocessing_party(method) if records.standardises else "none"
        recolour = party != "none" and recolours(method, "center" if not plan.scale else True, records.bounds)
        by_party.setdefault((party, recolour), []).append(name)
    for eps, limit in zip(eps_grid, delta_limits, strict=True):
        for (party, recolour), names in by_party.items():
            group_plan = replace(plan, scale=True) if recolour else plan  # the recoloured route (centring.py)
            noise, tasks, scales = _draw_tasks(records, Z, party, float(eps), float(limit), ranks,
                                               range(first_draw, first_draw + draws), seed, group_plan, dataset,
                                               recolour)  # fmt: skip
            for k in ranks:
                # added draws rank methods; the price is measured once (where centring only, on the common scale's
                # draws: a party whose methods are all recoloured, Wang & Xu's individuals on mixed units, has none)
                if noise is not None and first_draw == 0 and not recolour:
                    frames.append(_preprocessing_only(targets[k], tasks, k, party, per_draw, dataset, setting, eps,
                                                      limit))  # fmt: skip
                for name in (name for name in names if estimates_rank(methods[name], k)):
                    method = methods[name]
                    own, row = calibrate_end_to_end(method, tasks[0][k], float(eps), float(limit), noise, options)
                    label = (dataset, k, name, float(eps), STREAM)
                    start, estimates = time.perf_counter(), []
                    for b, task in enumerate(tasks, start=first_draw):
                        rngs = run_generators(seed, label, range(b * per_draw, (b + 1) * per_draw))
                        estimates.append(method_estimate(method, task[k], own, rngs, options, scales[b - first_draw]))
                    seconds = (time.perf_counter() - start) / runs
                    rows = run_rows(targets[k], name, method, row, np.concatenate(estimates), seconds, dataset, setting)
                    drawn = np.repeat(np.arange(first_draw, first_draw + len(tasks)), per_draw)
                    frames.append(rows.assign(run=rows["run"] + first_draw * per_draw, draw=drawn, preprocessing=party))
    frame = pd.concat(frames, ignore_index=True)
    frame.insert(frame.columns.get_loc("setting") + 1, "scope", RAW_RECORDS)
    return frame


def add_draws_until_separated(
    records: RawRecords,
    runs: pd.DataFrame,
    eps: float,
    limit: float,
    k: int,
    cap: int,
    seed: int,
    plan: PreprocessingPlan,
    options: dict[str, Any],
    dataset: str = "",
    setting: str = "standard",
) -> pd.DataFrame:
    """``runs`` with preprocessing draws added at (k, ε), doubling, to the methods of every competitive set that has
    more than one member (:func:`ddppm.common_task.run.open_sets`), until every set separates or ``cap`` draws are
    reached: the adaptive Monte Carlo of the "which method" table. Each added draw serves as many runs as the first
    ones; its rows carry ``adaptive`` True. Records the analyst does not standardise have no draws: nothing is added
    (their runs are independent units, and ``common.runs`` of them decide)."""
    if not records.standardises:  # no preprocessing draws: the runs are independent units already
        return runs.assign(adaptive=False)
    at = (runs["k"] == k) & (runs["eps"] == eps)
    draws = int(runs.loc[at, "draw"].max()) + 1
    per_draw = int((runs.loc[at & (runs["draw"] == 0)].groupby("method").size()).max())
    methods = common_task_methods()
    runs = runs.assign(adaptive=False)
    while draws < cap:
        point = runs[(runs["k"] == k) & (runs["eps"] == eps)]
        names = open_sets(point)
        if not names:
            break
        more = min(draws, cap - draws)
        added = raw_records_runs(records, [eps], [limit], [k], more * per_draw, more, seed, plan, options, dataset,
                                 setting, {name: methods[name] for name in names}, first_draw=draws)  # fmt: skip
        runs = pd.concat([runs, added.assign(adaptive=True)], ignore_index=True)
        draws += more
    return runs


def _draw_tasks(
    records: RawRecords,
    Z: np.ndarray,
    party: str,
    eps: float,
    limit: float,
    ranks: Sequence[int],
    draws: range,
    seed: int,
    plan: PreprocessingPlan,
    dataset: str,
    recolour: bool = False,
) -> tuple[PreprocessingNoise | None, list[dict[int, CommonTask]], list[np.ndarray | None]]:
    """The preprocessing's noise for ``party`` at (ε, δ limit), one task per (draw, k) on its rows (one task, no
    noise, where the analyst does not standardise) and each draw's private scales in the records' units where the
    centred PCA is recoloured (``recolour``; else None: :mod:`ddppm.common_task.centring`)."""
    def tasks_on(rows: np.ndarray) -> dict[int, CommonTask]:
        return {k: CommonTask(rows, records.parts, k, records.W, records.consensus) for k in ranks}

    if party == "none":
        return None, [tasks_on(Z)], [None]
    mu_pre = split_budget(eps, limit, plan.share).mu_pre
    noise = preprocessing_noise(plan, mu_pre, Z.shape[1], records.party_count(party), Z.shape[0])
    generators = run_generators(seed, (dataset, "preprocessing", party, eps, STREAM), draws)
    widths = (records.bounds.upper - records.bounds.lower) / 2
    tasks, scales = [], []
    for rng in generators:
        boxed, released, box = private_statistics(Z, noise, plan, rng, widths=widths)
        tasks.append(tasks_on(standardise_rows(boxed, released, plan, overwrite=boxed is not Z)))
        scales.append(record_scales(records.bounds, box, released.variance) if recolour else None)
    return noise, tasks, scales


def _preprocessing_only(
    target: CommonTask,
    tasks: list[dict[int, CommonTask]],
    k: int,
    party: str,
    per_draw: int,
    dataset: str,
    setting: str,
    eps: float,
    limit: float,
) -> pd.DataFrame:
    """The exact top-k of each draw's privately standardised rows against the target (one row per run, so its
    mean weighs draws as the methods' do)."""
    V_hat = top_k(np.stack([task[k].gram for task in tasks]), k)
    errors, captured = subspace_error(V_hat, target.V), captured_variance(V_hat, target)
    draws = np.repeat(np.arange(len(tasks)), per_draw)
    return pd.DataFrame(
        {
            "setting": setting, "dataset": dataset, "k": k, "method": f"{PREPROCESSING_ONLY}_{party}",
            "trust_model": "none", "privacy_column": "none", "eps": float(eps), "delta_limit": float(limit),
            "delta": np.nan, "feasible": True, "sigma": np.nan, "noise_multiplier": np.nan,
            "run": np.arange(draws.size), "error": errors[draws], "captured_variance": captured[draws],
            "seconds_per_run": 0.0, "floats_per_agent": 0, "rounds": 0, "memory": "",
            "chance_error": chance_error(target.d, k), "draw": draws, "preprocessing": party,
        }
    )  # fmt: skip
