"""The published tables: ``summary.csv``, one tidy row per (dataset, ε, method, threat model)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ddppm.data.public_prep import PREPARED_ROWS
from ddppm.methods import available_methods
from ddppm.methods.base import PROVEN_EVERY_OBSERVER, UNNAMED_THREAT_MODELS

SUMMARY_COLUMNS = [
    "dataset",
    "eps",
    "method",
    "role",
    "threat_model",
    "accounting",
    "error_mean",
    "error_lo",
    "error_hi",
    "delta",
    "delta_limit",
    "feasible",
    "scope",
]
"""Columns of ``results/tables/summary.csv`` (docs/columns.md explains each)."""


def _method(name: str):

    return available_methods(task=None).get(name)


def method_role(name: str) -> str:
    """``private`` or ``reference`` (:attr:`ddppm.methods.base.RegisteredMethod.role`); unknown names are private."""
    method = _method(name)
    return method.role if method is not None else "private"


def holds_for_every_threat_model(name: str) -> bool:
    """Whether method ``name``'s δ is proven for every neighbour and observer (its rows repeat per threat model)."""
    method = _method(name)
    return bool(getattr(method, "delta_holds_for_every_threat_model", False))


def summary_table(errors: pd.DataFrame, threat_models: Sequence[str] | None = None) -> pd.DataFrame:
    """``summary.csv`` from the per-dataset error summaries (:func:`ddppm.pipeline.montecarlo.summarize_runs`).

    ``delta`` is the δ the method's parameters achieve under ``threat_model``/``accounting`` (empty where no
    parameters met the limit), ``delta_limit`` the budget, ``feasible`` whether ``delta ≤ delta_limit``.

    So that "the best private method per (dataset, ε, threat model)" is one group-by:

    * ``role`` is ``private`` or ``reference``; reference rows (no privacy, or handed private information) have
      no ``delta`` and no ``feasible``, and keep ``threat_model = none``;
    * a private method whose δ is proven for every neighbour and observer (the LDP baselines) has its row
      repeated under every threat model in ``threat_models`` (default: those the run's other rows name).
    """
    table = errors.copy()
    table["role"] = [method_role(m) for m in table["method"]]
    table["feasible"] = table["feasible"].astype(object)
    reference = table["role"] == "reference"
    table.loc[reference, ["delta", "feasible"]] = [np.nan, None]
    if threat_models is None:
        threat_models = sorted(set(table["threat_model"]) - set(UNNAMED_THREAT_MODELS))
    repeat = table["method"].map(holds_for_every_threat_model) & ~reference
    if len(threat_models) and repeat.any():
        repeated = [table.loc[repeat].assign(threat_model=tm) for tm in threat_models]
        table = pd.concat([table.loc[~repeat], *repeated], ignore_index=True)
    table["scope"] = PREPARED_ROWS  # the journal's reproduction keeps the paper's preprocessing (docs/privacy.md)
    table = table.reindex(columns=SUMMARY_COLUMNS)
    return table.sort_values(["dataset", "eps", "method", "threat_model"], kind="stable").reset_index(drop=True)


def one_row_per_method(summary: pd.DataFrame) -> pd.DataFrame:
    """``summary.csv`` with each repeated row (a method valid under every threat model) once, its threat model
    shown as :data:`~ddppm.methods.base.PROVEN_EVERY_OBSERVER`: for tables and sentences that list methods side
    by side."""
    repeat = summary["method"].map(holds_for_every_threat_model)
    once = summary.loc[repeat].drop_duplicates(["dataset", "eps", "method"]).assign(threat_model=PROVEN_EVERY_OBSERVER)
    return pd.concat([summary.loc[~repeat], once]).sort_index(kind="stable")


def best_private(summary: pd.DataFrame) -> pd.DataFrame:
    """The best private method per (dataset, ε, threat model): least mean error among rows that met the limit
    (the one group-by ``summary.csv`` is shaped for; docs/columns.md)."""
    met = summary[(summary["role"] == "private") & (summary["feasible"] == True) & summary["error_mean"].notna()]  # noqa: E712
    best = met.loc[met.groupby(["dataset", "eps", "threat_model"])["error_mean"].idxmin()]
    return best.reset_index(drop=True)
