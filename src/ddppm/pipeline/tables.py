"""The published tables: ``summary.csv``, one tidy row per (dataset, ε, method, threat model)."""

from __future__ import annotations

import pandas as pd

SUMMARY_COLUMNS = [
    "dataset",
    "eps",
    "method",
    "threat_model",
    "accounting",
    "error_mean",
    "error_lo",
    "error_hi",
    "delta",
    "delta_limit",
    "feasible",
]
"""Columns of ``results/tables/summary.csv`` (docs/columns.md explains each)."""


def summary_table(errors: pd.DataFrame) -> pd.DataFrame:
    """``summary.csv`` from the per-dataset error summaries (:func:`ddppm.pipeline.montecarlo.summarize_runs`).

    ``delta`` is the δ the method's parameters achieve under ``threat_model``/``accounting`` (empty where no
    parameters met the limit), ``delta_limit`` the budget, ``feasible`` whether ``delta ≤ delta_limit``.
    """
    table = errors.reindex(columns=SUMMARY_COLUMNS)
    return table.sort_values(["dataset", "eps", "method", "threat_model"], kind="stable").reset_index(drop=True)
