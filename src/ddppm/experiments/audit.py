"""Experiment ``audit``: every auditable privacy claim attacked (docs/audit.md), built by ``snakemake audit`` only.

For each certified common-task method that exposes its observer's view (``common_view``), and for the mutants of
``audit.mutants`` (deliberately broken copies, never in the registry), at every ε of ``audit.epsilons``: a lower
bound on ε from a likelihood-ratio test on the view under a witness pair (:mod:`ddppm.audit.run`), its verdict, and
the δ gap the draws could resolve. Methods without a view are listed as not audited yet.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ddppm.accounting.rows import params_from_row
from ddppm.audit.bounds import resolvable_delta_gap
from ddppm.audit.gossip import audit_gossip
from ddppm.audit.mutants import MUTANTS, mutant
from ddppm.audit.run import audit_table
from ddppm.common_task.base import CommonTaskMethod
from ddppm.core.errors import ConfigError
from ddppm.core.io import read_parquet
from ddppm.experiments.base import Experiment, experiment_step, register_experiment
from ddppm.methods import common_task_methods
from ddppm.methods.ddppm.steps import floor_neighbours
from ddppm.pipeline.steps import problem_from_files


def auditable_methods() -> dict[str, Any]:
    """The common-task methods that expose their observer's view (override ``common_view``)."""
    return {name: method for name, method in common_task_methods().items()
            if type(method).common_view is not CommonTaskMethod.common_view}  # fmt: skip


def audit_figure(table: pd.DataFrame, delta: float) -> Figure:
    """Measured lower bound on ε against the claimed ε, every audited method and mutant; the diagonal is the claim."""
    fig = Figure(figsize=(6.4, 4.8), layout="constrained")
    ax = fig.subplots()
    audited = table[table["verdict"] != "not audited"]
    for (method, verdict), rows in audited.groupby(["method", "verdict"], sort=True):
        marker = "x" if verdict == "violated" else "o"
        ax.plot(rows["eps"], rows["eps_lower"], marker=marker, linestyle="-", label=f"{method} ({verdict})")
    top = float(max(audited["eps"].max(), audited["eps_lower"].max())) * 1.1
    ax.plot([0, top], [0, top], color="black", lw=0.8, ls=":", label="the claim (lower bound = claimed ε)")
    ax.set(xlim=(0, top), ylim=(-0.03 * top, top), xlabel="claimed ε", ylabel="ε lower bound (95 %, Clopper–Pearson)")
    draws = int(audited["draws"].min())
    ax.set_title(f"Privacy audit: measured lower bound on ε against the claim\n(δ = {delta:g}, the observer's whole "
                 f"view, witness pair, ≥ {draws:,} counted draws per side)", fontsize=9)  # fmt: skip
    fig.legend(loc="outside lower center", ncol=2, fontsize=7, frameon=False)
    return fig


def audit_findings(table: pd.DataFrame) -> list[str]:
    """The audit in sentences: each verdict with its bound, and the methods not audited yet."""
    lines = ["The privacy audit: a lower bound on ε for each method as implemented (evidence, not proof)"]
    for method, rows in table[table["verdict"] != "not audited"].groupby("method", sort=True):
        parts = ", ".join(f"claimed ε = {r.eps:g}: ε ≥ {r.eps_lower:.2f} ({r.verdict})" for r in rows.itertuples())
        lines.append(f"{method} ({rows['trust_model'].iloc[0]} view, {int(rows['draws'].min()):,} draws): {parts}.")
    missing = sorted(table.loc[table["verdict"] == "not audited", "method"].unique())
    if missing:
        lines.append("Not audited yet (no observer view exposed): " + ", ".join(missing) + ".")
    return lines


@register_experiment
class PrivacyAudit(Experiment):
    """Every auditable privacy claim attacked, with mutants that the attack must catch."""

    name = "audit"
    title = "Privacy audit (lower bounds on ε)"
    in_default_run = False
    findings_relative = "audit/findings.txt"
    provenance_relative = ("audit/summary.parquet",)

    def check_config(self, section: dict[str, Any], config: dict[str, Any] | None = None) -> None:
        known = set(MUTANTS) | {"one_release"}
        for entry in section["mutants"]:
            method, name = entry.split("/")
            if name not in known:
                raise ConfigError(f"audit.mutants: unknown mutant {name!r} in {entry!r}; known: {sorted(known)}")
            if method not in auditable_methods():
                raise ConfigError(f"audit.mutants: {method!r} in {entry!r} exposes no view; auditable: "
                                  f"{sorted(auditable_methods())}")  # fmt: skip

    def methods_used(self, config: dict[str, Any]) -> list[str]:
        return sorted(common_task_methods())

    @experiment_step
    def journal(self, job: Any) -> dict[str, Any]:
        """The journal D-DP-PM on one data set at its calibrated points (``audit.journal``): the quadratic
        likelihood-ratio test on the observer's whole memory (:mod:`ddppm.audit.gossip`) against the δ floor's worst
        neighbour of that view."""
        section, method = job.params.cfg["audit"]["journal"], job.params.cfg["verdict"]["method"]
        problem = problem_from_files(job.input.data, job.input.partition, job.input.network)
        params, _ = read_parquet(job.input.params)
        floor, _ = read_parquet(job.input.floor)
        rows = []
        for threat_model in section["threat_models"]:
            for eps in section["epsilons"]:
                chosen = params[(params["threat_model"] == threat_model) & np.isclose(params["eps"], eps)]
                if chosen.empty or not bool(chosen["feasible"].iloc[0]):
                    continue  # no parameters met the limit: nothing runs, nothing to attack
                row = chosen.iloc[0]
                view = str(row["view"])
                at = floor[(floor["view"] == view) & np.isclose(floor["eps"], eps)]
                neighbour = floor_neighbours(at, view)[0]
                observer = int(at["observer"].iloc[0]) if int(at["observer"].iloc[0]) >= 0 else 0
                result = audit_gossip(problem, params_from_row(row), neighbour, observer, view, float(row["delta"]),
                                      int(section["draws"]), int(job.params.cfg["audit"]["seed"]))  # fmt: skip
                rows.append({"method": f"{method} ({threat_model})", "trust_model": "gossip", "eps": float(eps),
                             "delta": float(row["delta"]), "draws": result.draws, "eps_lower": result.eps_lower,
                             "verdict": "violated" if result.eps_lower > eps else "consistent",
                             "test": f"quadratic likelihood ratio on agent {observer}'s whole memory ({view} "
                                     "view), the δ floor's worst neighbour",
                             "resolvable_delta_gap": resolvable_delta_gap(eps, result.draws),
                             "dataset": job.wildcards.dataset})  # fmt: skip
        return {"parquet": pd.DataFrame(rows)}

    @experiment_step
    def run(self, job: Any) -> dict[str, Any]:
        """Every audited row, the not-audited methods, the findings."""
        section = job.params.cfg["audit"]
        auditable = auditable_methods()
        methods = dict(auditable)
        for entry in section["mutants"]:
            of, name = entry.split("/")
            methods[entry] = mutant(auditable[of], name)
        table = audit_table(methods, section["epsilons"], section["delta"], section["draws"], section["seed"],
                            section["task"], {"adjacency": section["adjacency"]})  # fmt: skip
        rest = [{"method": name, "trust_model": method.trust_model, "eps": np.nan, "delta": section["delta"],
                 "verdict": "not audited", "test": "none: the method exposes no observer view yet"}
                for name, method in common_task_methods().items() if name not in auditable]  # fmt: skip
        journal = [read_parquet(path)[0] for path in job.input.journal]
        table = pd.concat([table, *journal, pd.DataFrame(rest)], ignore_index=True)
        return {"csv": table, "parquet": table, "findings": audit_findings(table)}

    @experiment_step
    def figure(self, job: Any) -> dict[str, Any]:
        """Claimed ε against the measured lower bound."""
        table, _ = read_parquet(job.input.parquet)
        return {"png": audit_figure(table, job.params.cfg["audit"]["delta"])}
