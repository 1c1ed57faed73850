"""The audit's rows for the D-DP-PM variants at their calibrated points (docs/audit.md): the journal method on the
journal's data sets at the ε of Fig. 2, the workshop method on the SBM signals at the ε of its Fig. 1.

One row per (data set, threat model, ε) configured: where the calibration met its limit, the bound of the attack on
the observer's memory and its verdict; where it did not, verdict ``infeasible`` (no parameters: nothing runs, nothing
to attack). Every row names its threat model's view, accounting and adjacency, the observer and the neighbour.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from ddppm.accounting.neighbours import Neighbour
from ddppm.accounting.rows import params_from_row
from ddppm.audit.bounds import AuditResult, resolvable_delta_gap, verdict
from ddppm.audit.gossip import audit_gossip
from ddppm.audit.workshop import STATISTICS, WorkshopPoint, audit_workshop, claim_worst_pair
from ddppm.core.problem import DistributedProblem
from ddppm.methods.ddppm.steps import floor_neighbours

INFEASIBLE = "infeasible"
"""The verdict of a point where no parameters met the limit: nothing runs, nothing to attack."""


def _threat_model(row: pd.Series) -> dict[str, Any]:
    return {"threat_model": str(row["threat_model"]), "view": str(row["view"]), "accounting": str(row["accounting"]),
            "adjacency": str(row["adjacency"])}  # fmt: skip


def point_row(name: str, row: pd.Series, dataset: str) -> dict[str, Any]:
    """A point's row before the attack: the claim (``delta`` NaN where infeasible) and its threat model."""
    return {"method": f"{name} ({row['threat_model']})", "trust_model": "gossip", "eps": float(row["eps"]),
            "delta": float(row["delta"]) if bool(row["feasible"]) else np.nan,
            "delta_limit": float(row["delta_limit"]), "verdict": INFEASIBLE,
            "test": "none: no parameters met the limit (nothing runs, nothing to attack)", "dataset": dataset,
            **_threat_model(row)}  # fmt: skip


def attacked(base: dict[str, Any], result: AuditResult, test: str, observer: int, neighbour: Neighbour) -> dict:
    """The row of an attacked point: the bound, its verdict and what the test was."""
    found = {"draws": result.draws, "eps_lower": result.eps_lower, "verdict": verdict(result.eps_lower, base["eps"]),
             "test": test, "resolvable_delta_gap": resolvable_delta_gap(base["eps"], result.draws)}  # fmt: skip
    where = {"observer": observer, "neighbour": f"agent {neighbour.agent}, row {neighbour.row} ({neighbour.kind})"}
    return {**base, **found, **where}


def _chosen(table: pd.DataFrame, threat_models: Iterable[str], epsilons: Iterable[float]) -> list[pd.Series]:
    """The parameter rows of every configured (threat model, ε) the table holds, in that order."""
    rows = []
    for threat_model in threat_models:
        for eps in epsilons:
            match = table[(table["threat_model"] == threat_model) & np.isclose(table["eps"].astype(float), eps)]
            rows += [match.iloc[0]] if len(match) else []
    return rows


def journal_rows(problem: DistributedProblem, params: pd.DataFrame, floor: pd.DataFrame, section: dict[str, Any],
                 epsilons: Iterable[float], name: str, dataset: str, seed: int) -> pd.DataFrame:  # fmt: skip
    """The journal D-DP-PM on one data set (``section`` = ``audit.journal``): the quadratic likelihood-ratio test on
    the observer's whole memory (:mod:`ddppm.audit.gossip`) against the δ floor's worst neighbour of its view."""
    rows = []
    for row in _chosen(params, section["threat_models"], epsilons):
        base = point_row(name, row, dataset)
        if not bool(row["feasible"]):
            rows.append(base)
            continue
        view, eps = str(row["view"]), float(row["eps"])
        at = floor[(floor["view"] == view) & np.isclose(floor["eps"], eps)]
        neighbour = floor_neighbours(at, view)[0]
        observer = max(int(at["observer"].iloc[0]), 0)  # the network view's floor holds for every observer (-1)
        result = audit_gossip(problem, params_from_row(row), neighbour, observer, view, base["delta"],
                              int(section["draws"]), seed)  # fmt: skip
        test = (f"quadratic likelihood ratio on agent {observer}'s whole memory ({view} view; fitted Gaussians), "
                "the δ floor's worst neighbour")  # fmt: skip
        rows.append(attacked(base, result, test, observer, neighbour))
    return pd.DataFrame(rows)


def workshop_rows(problem: DistributedProblem, params: pd.DataFrame, calibration: dict[str, Any],
                  section: dict[str, Any], epsilons: Iterable[float], privacy: dict[str, Any], name: str,
                  dataset: str, seed: int) -> pd.DataFrame:  # fmt: skip
    """The workshop D-DP-PM under one calibration (``section`` = ``audit.workshop``; ``calibration`` the parameter
    table's metadata, ``privacy`` the method's privacy options): the attack of :mod:`ddppm.audit.workshop` on its
    observer's memory and the final release, against the claim's own worst pair."""
    rows = []
    for row in _chosen(params, params["threat_model"].unique(), epsilons):
        base = point_row(name, row, dataset)
        if not bool(row["feasible"]):
            rows.append(base)
            continue
        observer, neighbour = claim_worst_pair(problem, row, calibration, privacy)
        result = audit_workshop(problem, WorkshopPoint.from_row(row), neighbour, observer, int(section["draws"]), seed)
        test = (f"likelihood ratio on agent {observer}'s memory ({row['view']} view: own start, noises and releases, "
                f"fitted Gaussians) and the final release (as specified); chosen: {STATISTICS[result.statistic]}; "
                "the claim's worst pair")  # fmt: skip
        rows.append(attacked(base, result, test, observer, neighbour))
    return pd.DataFrame(rows)
