"""Experiment ``audit``: every auditable privacy claim attacked (docs/audit.md), built by ``snakemake audit`` only.

For each certified common-task method that exposes its observer's view (``common_view``), and for the mutants of
``audit.mutants`` (deliberately broken copies, never in the registry), at every ε of ``audit.epsilons``: a lower
bound on ε from a likelihood-ratio test on the view under a witness pair (:mod:`ddppm.audit.run`), its verdict, and
the δ gap the draws could resolve. Methods without a view are listed as not audited yet. The release
(``ddppm.PrivatePCA``) with each method of ``audit.release.methods`` is attacked on raw records, the whole route
(:mod:`ddppm.audit.release`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ddppm.accounting.rows import params_from_row
from ddppm.audit.bounds import resolvable_delta_gap
from ddppm.audit.gossip import audit_gossip
from ddppm.audit.mutants import MUTANTS, SPECIFIC, mutant
from ddppm.audit.run import audit_table
from ddppm.common_task.base import CommonTaskMethod
from ddppm.core.errors import ConfigError
from ddppm.core.io import read_parquet
from ddppm.experiments.base import Experiment, experiment_step, register_experiment
from ddppm.methods import common_task_methods
from ddppm.methods.ddppm.steps import floor_neighbours
from ddppm.pipeline.steps import problem_from_files

if TYPE_CHECKING:  # Matplotlib is imported by the figure step only (every other step's job starts without it)
    from matplotlib.figure import Figure

RELEASE = "release"
"""The entry suffix of a release audit (``<method>~release``)."""


def auditable_methods() -> dict[str, Any]:
    """The common-task methods that expose their observer's view (override ``common_view``)."""
    return {name: method for name, method in common_task_methods().items()
            if type(method).common_view is not CommonTaskMethod.common_view}  # fmt: skip


def entry_label(row: Any) -> str:
    """A row's name on the figure and in the findings: the method (or mutant), with its data set if it has one."""
    dataset = getattr(row, "dataset", None)
    return f"{row.method} on {dataset}" if isinstance(dataset, str) and dataset else str(row.method)


def audit_figure(table: pd.DataFrame, delta: float) -> Figure:
    """One panel per claimed ε: each audited method's or mutant's measured lower bound on ε as a bar (red where it
    exceeds the claim: violated), the claim as a dotted line. Mutants are listed after the methods."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    audited = table[table["verdict"] != "not audited"].copy()
    audited["entry"] = [entry_label(row) for row in audited.itertuples()]
    mutant = audited["entry"].str.contains("/")
    order = sorted(audited.loc[~mutant, "entry"].unique()) + sorted(audited.loc[mutant, "entry"].unique())
    claims = sorted(audited["eps"].unique())
    fig = Figure(figsize=(3.0 * len(claims) + 2.2, 0.24 * len(order) + 1.8), layout="constrained")
    axes = fig.subplots(1, len(claims), sharey=True, squeeze=False)[0]
    top = float(max(audited["eps"].max(), audited["eps_lower"].max())) * 1.08
    for ax, eps in zip(axes, claims, strict=True):
        rows = audited[np.isclose(audited["eps"], eps)].set_index("entry")
        for y, entry in enumerate(order):
            if entry not in rows.index:
                continue
            for row in rows.loc[[entry]].itertuples():
                colour = "#d62728" if row.verdict == "violated" else "#4c72b0"
                ax.barh(y, row.eps_lower, height=0.7, color=colour, alpha=0.85)
        ax.axvline(eps, color="black", ls=":", lw=1.2)
        ax.set(xlim=(0, top), title=f"claimed ε = {eps:g}", xlabel="ε lower bound (95 %)")
    axes[0].set_yticks(range(len(order)), order, fontsize=7)
    axes[0].invert_yaxis()
    draws = int(audited["draws"].min())
    fig.suptitle(f"Privacy audit: lower bound on ε measured on each method as implemented against its claim\n"
                 f"(δ = {delta:g}; the observer of each trust model, whole view; witness pair; ≥ {draws:,} counted "
                 "draws per side;\nnames with '/' are deliberately broken mutants; '(release)': what a fit of raw "
                 "records releases)", fontsize=9)  # fmt: skip
    handles = [Patch(color="#4c72b0", label="consistent (bound ≤ claim: evidence, not proof)"),
               Patch(color="#d62728", label="violated (bound > claim)"),
               Line2D([], [], color="black", ls=":", label="the claimed ε")]  # fmt: skip
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=7, frameon=False)
    return fig


def audit_findings(table: pd.DataFrame) -> list[str]:
    """The audit in sentences: each verdict with its bound, and the methods not audited yet."""
    lines = ["The privacy audit: a lower bound on ε for each method as implemented (evidence, not proof)"]
    audited = table[table["verdict"] != "not audited"].copy()
    audited["entry"] = [entry_label(row) for row in audited.itertuples()]
    for entry, rows in audited.groupby("entry", sort=True):
        parts = ", ".join(f"claimed ε = {r.eps:g}: ε ≥ {r.eps_lower:.2f} ({r.verdict})" for r in rows.itertuples())
        lines.append(f"{entry} ({rows['trust_model'].iloc[0]} view, {int(rows['draws'].min()):,} draws): {parts}.")
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
    reportable = True
    report_targets_relative = ("audit/figure.png",)
    findings_relative = "audit/findings.txt"
    provenance_relative = ("audit/summary.parquet",)

    def check_config(self, section: dict[str, Any], config: dict[str, Any] | None = None) -> None:
        known, auditable = set(MUTANTS) | set(SPECIFIC), auditable_methods()
        for entry in section["mutants"]:
            method, name = entry.split("/")
            if name not in known:
                raise ConfigError(f"audit.mutants: unknown mutant {name!r} in {entry!r}; known: {sorted(known)}")
            owner = SPECIFIC[name][0].name if name in SPECIFIC else method
            if method != owner:
                raise ConfigError(f"audit.mutants: {name!r} breaks {owner!r} only; write '{owner}/{name}' instead of "
                                  f"{entry!r}")  # fmt: skip
            if method not in auditable:
                raise ConfigError(f"audit.mutants: {method!r} in {entry!r} exposes no view; auditable: "
                                  f"{sorted(auditable)}")  # fmt: skip
        certified = sorted(n for n, m in common_task_methods().items() if m.privacy_column == "certified")
        for name in section["release"]["methods"]:
            if name not in certified:
                raise ConfigError(f"audit.release.methods: {name!r} is not a certified method of the common task; "
                                  f"one of {certified}")  # fmt: skip

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

    def entries(self, config: dict[str, Any]) -> list[str]:
        """The audit's jobs: every auditable method, every mutant of ``audit.mutants`` (``<method>~<mutant>``: a file
        name) and every release of ``audit.release.methods`` (``<method>~release``)."""
        return (sorted(auditable_methods()) + [entry.replace("/", "~") for entry in config["audit"]["mutants"]]
                + [f"{name}~{RELEASE}" for name in config["audit"]["release"]["methods"]])  # fmt: skip

    @staticmethod
    def entry_method(entry: str) -> str:
        """The registered method an entry (a method or ``<method>~<mutant>``) runs."""
        return entry.split("~")[0]

    @experiment_step
    def method(self, job: Any) -> dict[str, Any]:
        """One method or mutant at every claimed ε (:func:`ddppm.audit.run.audit_table`)."""
        section, entry = job.params.cfg["audit"], job.wildcards.entry
        auditable = auditable_methods()
        of, _, broken = entry.partition("~")
        if broken == RELEASE:
            # Imported here: the release pulls in scikit-learn, which every other job of every experiment (they all
            # load this registry) would otherwise pay for at start-up.
            from ddppm.audit.release import release_table

            release = section["release"]
            task = {**section["task"], "n": release["n"]}
            return {"parquet": release_table(of, common_task_methods()[of], section["epsilons"], section["delta"],
                                             release["draws"], section["seed"], task)}  # fmt: skip
        if of not in auditable:
            raise ConfigError(f"audit: {of!r} exposes no view; auditable: {sorted(auditable)}")
        name, method = (f"{of}/{broken}", mutant(auditable[of], broken)) if broken else (of, auditable[of])
        options = {"adjacency": section["adjacency"], "iterations": int(job.params.cfg["common"]["iterations"])}
        table = audit_table({name: method}, section["epsilons"], section["delta"], section["draws"],
                            section["seed"], section["task"], options)  # fmt: skip
        return {"parquet": table}

    @experiment_step
    def run(self, job: Any) -> dict[str, Any]:
        """Every audited row, the journal's rows, the methods not audited, the findings."""
        section, auditable = job.params.cfg["audit"], auditable_methods()
        rest = [{"method": name, "trust_model": method.trust_model, "eps": np.nan, "delta": section["delta"],
                 "verdict": "not audited", "test": "none: the method exposes no view yet"}
                for name, method in common_task_methods().items() if name not in auditable]  # fmt: skip
        parts = [read_parquet(path)[0] for path in [*job.input.methods, *job.input.journal]]
        table = pd.concat([*parts, pd.DataFrame(rest)], ignore_index=True)
        return {"csv": table, "parquet": table, "findings": audit_findings(table)}

    @experiment_step
    def figure(self, job: Any) -> dict[str, Any]:
        """Claimed ε against the measured lower bound."""
        table, _ = read_parquet(job.input.parquet)
        return {"png": audit_figure(table, job.params.cfg["audit"]["delta"])}
