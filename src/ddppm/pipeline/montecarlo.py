"""Monte Carlo for any registered method: per-run errors from its parameter table, and their summaries.

A run's seed derives from the method's seed labels (dataset, method and, for ε-dependent methods, ε) and
its run index, never from the chunk layout; runs are computed in fixed, index-aligned blocks, so sharded
and unsharded results are bit-identical.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ddppm.core.errors import ConfigError
from ddppm.core.problem import DistributedProblem
from ddppm.core.seeds import run_generators, run_seed
from ddppm.methods import get_method

RUN_BLOCK = 32


def chunk_indices(runs: int, chunks: int, k: int) -> np.ndarray:
    """Run indices of chunk ``k`` of ``chunks`` (near-equal, contiguous)."""
    if not 0 <= k < chunks:
        raise ConfigError(f"chunk {k} out of range for montecarlo.chunks={chunks}")
    return np.array_split(np.arange(runs), chunks)[k]


def blocked_errors(run_indices: np.ndarray, compute: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Evaluate ``compute(block_runs) -> errors`` on fixed, run-index-aligned blocks of ``RUN_BLOCK`` runs.

    A vectorised run's round-off depends on which other columns share its matrix product. Computing every
    run inside the same aligned block, whatever chunk asked for it, makes sharded and unsharded results
    bit-identical; runs outside the request are computed and discarded (at most one block per edge).
    """
    results: dict[int, float] = {}
    for block in np.unique(np.asarray(run_indices, dtype=int) // RUN_BLOCK):
        runs = np.arange(block * RUN_BLOCK, (block + 1) * RUN_BLOCK)
        results.update(zip(runs.tolist(), compute(runs), strict=True))
    return np.array([results[int(r)] for r in run_indices], dtype=float)


def rows_at(params: pd.DataFrame, eps: float) -> pd.DataFrame:
    """The parameter-table rows at ``eps`` (one per threat model)."""
    rows = params[np.isclose(params["eps"].to_numpy(float), eps)]
    if rows.empty:
        raise ConfigError(f"ε={eps:g} is not in the parameter table; add it to `epsilons`")
    return rows


def montecarlo_runs(
    problem: DistributedProblem,
    method_name: str,
    eps: float,
    params: pd.DataFrame,
    run_indices: np.ndarray,
    seed: int,
    dataset: str,
    options: dict[str, Any] | None = None,
) -> pd.DataFrame:
    """Per-run errors of ``method_name`` at ``eps``, one block of rows per row of its parameter table there.

    Rows without parameters (``delta`` NaN: nothing met the δ limit) get NaN errors; rows whose achieved δ
    exceeds the limit (``feasible`` False) are still run and keep ``feasible = False``.
    """
    method = get_method(method_name)
    labels = method.seed_labels(dataset, eps)
    seeds = [run_seed(seed, labels, int(r)) for r in run_indices]
    frames = []
    for _, row in rows_at(params, eps).iterrows():
        runnable = bool(np.isfinite(row["delta"]))

        def compute(runs: np.ndarray, row: pd.Series = row) -> np.ndarray:
            return method.run_errors(problem, row, run_generators(seed, labels, runs), options or {})

        errors = blocked_errors(run_indices, compute) if runnable else np.full(len(run_indices), np.nan)
        frames.append(
            pd.DataFrame(
                {
                    "dataset": dataset,
                    "method": method_name,
                    "eps": float(eps),
                    "threat_model": str(row["threat_model"]),
                    "accounting": str(row["accounting"]),
                    "delta_limit": float(row["delta_limit"]),
                    "delta": float(row["delta"]),
                    "feasible": bool(row["feasible"]),
                    "run": np.asarray(run_indices, dtype=int),
                    "seed": seeds,
                    "error": errors,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


RUN_ORDER = ["eps", "threat_model", "run"]


def run_order(runs: pd.DataFrame) -> pd.DataFrame:
    """The rows of a runs table in their one canonical order (ε, threat model, run index), whatever chunks they came
    from: an unsharded job and the merge of its shards write the same file."""
    return runs.sort_values(RUN_ORDER, kind="stable").reset_index(drop=True)


def table_epsilons(params: pd.DataFrame) -> list[float]:
    """Every ε of a method's parameter table, ascending: the points one Monte-Carlo job covers."""
    return sorted({float(e) for e in params["eps"].to_numpy(float)})


def montecarlo_table(
    problem: DistributedProblem,
    method_name: str,
    params: pd.DataFrame,
    run_indices: np.ndarray,
    seed: int,
    dataset: str,
    options: dict[str, Any] | None = None,
    report: Callable[[pd.DataFrame], None] | None = None,
) -> pd.DataFrame:
    """:func:`montecarlo_runs` at every ε of the parameter table (:func:`table_epsilons`), in :func:`run_order`.

    One job per (dataset, method) pays the interpreter's start once for every ε; each ε's runs are the same numbers
    as a job of that ε alone (a run's seed never depends on which job computes it). ``report`` is called with each
    ε's rows as they finish (the rule's log)."""
    frames = []
    for eps in table_epsilons(params):
        frame = montecarlo_runs(problem, method_name, eps, params, run_indices, seed, dataset, options)
        if report is not None:
            report(frame)
        frames.append(frame)
    return run_order(pd.concat(frames, ignore_index=True))


def log_runs(log: logging.Logger) -> Callable[[pd.DataFrame], None]:
    """A ``report`` for :func:`montecarlo_table`: one log line per threat model of an ε, its mean error or why it
    has none."""

    def report(runs: pd.DataFrame) -> None:
        for (eps, model, feasible), group in runs.groupby(["eps", "threat_model", "feasible"]):
            if group["error"].notna().any():
                note = "" if feasible else f" (achieved δ {group['delta'].iloc[0]:.3g} exceeds the limit: infeasible)"
                log.info("ε=%g %s: mean error %.4g over %d runs%s", eps, model, group["error"].mean(), len(group), note)
            else:
                limit = group["delta_limit"].iloc[0]
                log.info("ε=%g %s: infeasible, no parameters met δ ≤ %.3g, so no runs", eps, model, limit)

    return report


SUMMARY_KEYS = ["dataset", "method", "threat_model", "eps"]


def summarize_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, method, threat model, ε): the mean error, the 2.5–97.5 % band of the runs
    (``error_lo``, ``error_hi``) and the 95 % confidence interval of the mean (``mean_ci_lo``, ``mean_ci_hi``)."""

    def stats(g: pd.DataFrame) -> pd.Series:
        e = g["error"].dropna().to_numpy()
        n = e.size
        mean = e.mean() if n else np.nan
        se = e.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan
        lo, hi = np.quantile(e, [0.025, 0.975]) if n else (np.nan, np.nan)
        return pd.Series(
            {
                "accounting": g["accounting"].iloc[0],
                "n_runs": n,
                "error_mean": mean,
                "error_lo": lo,
                "error_hi": hi,
                "mean_ci_lo": mean - 1.96 * se,
                "mean_ci_hi": mean + 1.96 * se,
                "delta": g["delta"].iloc[0],
                "delta_limit": g["delta_limit"].iloc[0],
                "feasible": bool(g["feasible"].iloc[0]),
            }
        )

    out = runs.groupby(SUMMARY_KEYS, sort=True).apply(stats, include_groups=False).reset_index()
    out["n_runs"] = out["n_runs"].astype(int)
    return out
