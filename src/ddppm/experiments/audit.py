"""Experiment ``audit``: every auditable privacy claim attacked (docs/audit.md), built by ``snakemake audit`` only.

For each certified common-task method that exposes its observer's view (``common_view``), and for the mutants of
``audit.mutants`` (deliberately broken copies, never in the registry), at every ε of ``audit.epsilons``: a lower
bound on ε from a likelihood-ratio test on the view under a witness pair (:mod:`ddppm.audit.run`), its verdict, and
the δ gap the draws could resolve. Methods without a view are listed as not audited yet. The release
(``ddppm.PrivatePCA``) with each method of ``audit.release.methods`` is attacked on raw records, the whole route
(:mod:`ddppm.audit.release`). The D-DP-PM variants are attacked at their calibrated points
(:mod:`ddppm.experiments.audit_points`): the journal method on the journal's data sets at the ε of Fig. 2
(``audit.journal``), the workshop method at the ε of its Fig. 1 (``audit.workshop``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ddppm.audit.bounds import epsilon_lower_bound
from ddppm.audit.mutants import MUTANTS, SPECIFIC, mutant
from ddppm.audit.run import audit_table
from ddppm.common_task.base import CommonTaskMethod
from ddppm.core.errors import ConfigError
from ddppm.core.io import read_parquet
from ddppm.experiments.audit_points import INFEASIBLE, journal_rows, workshop_rows
from ddppm.experiments.base import Experiment, experiment_step, register_experiment
from ddppm.methods import common_task_methods
from ddppm.pipeline.method_options import method_options
from ddppm.pipeline.steps import problem_from_files

RELEASE = "release"
"""The entry suffix of a release audit (``<method>~release``)."""

AUDITED = ("consistent", "violated")
"""The verdicts of an attacked row (the others: ``not audited``, a method without a view, and ``infeasible``)."""


def auditable_methods() -> dict[str, Any]:
    """The common-task methods that expose their observer's view (override ``common_view``)."""
    return {name: method for name, method in common_task_methods().items()
            if type(method).common_view is not CommonTaskMethod.common_view}  # fmt: skip


def entry_label(row: Any) -> str:
    """A row's name on the figure and in the findings: the method (or mutant), with its data set if it has one."""
    dataset = getattr(row, "dataset", None)
    return f"{row.method} on {dataset}" if isinstance(dataset, str) and dataset else str(row.method)


def journal_datasets(config: dict[str, Any]) -> list[str]:
    """The journal D-DP-PM's audited data sets (``audit.journal.datasets``; null: every data set of the journal's
    figures, ``datasets``)."""
    return list(config["audit"]["journal"]["datasets"] or config["datasets"])


def journal_epsilons(config: dict[str, Any]) -> list[float]:
    """The journal D-DP-PM's audited ε (``audit.journal.epsilons``; null: every ε of Fig. 2, ``epsilons``).
    ``config`` is the whole config or a job's part of it holding these keys."""
    return [float(e) for e in config["audit"]["journal"]["epsilons"] or config["epsilons"]]


def workshop_epsilons(config: dict[str, Any]) -> list[float]:
    """The workshop D-DP-PM's audited ε (``audit.workshop.epsilons``; null: every ε of its Fig. 1,
    ``workshop.epsilons``)."""
    return [float(e) for e in config["audit"]["workshop"]["epsilons"] or config["workshop"]["epsilons"]]


def bound_ceiling(delta: float, draws: float) -> float:
    """The largest bound ``draws`` counted draws per side can give at δ (every positive true, no false one,
    :func:`ddppm.audit.bounds.epsilon_lower_bound`): a claim above it cannot be refuted at this N (NaN if not run)."""
    if not np.isfinite(draws) or not np.isfinite(delta):
        return np.nan
    n = int(draws)
    return epsilon_lower_bound(n, n, 0, n, delta)


def _claims(rows: pd.DataFrame) -> str:
    return ", ".join(f"claimed ε = {r.eps:g}: ε ≥ {r.eps_lower:.2f} ({r.verdict})" for r in rows.itertuples())


def audit_findings(table: pd.DataFrame) -> list[str]:
    """The audit in sentences: each verdict with its bound, the points with nothing to attack, the bounds' ceiling
    and the methods not audited yet."""
    lines = ["The privacy audit: a lower bound on ε for each method as implemented (evidence, not proof)"]
    table = table.assign(entry=[entry_label(row) for row in table.itertuples()])
    audited = table[table["verdict"].isin(AUDITED)]
    for entry, rows in audited.groupby("entry", sort=True):
        first = rows.iloc[0]
        model = "" if pd.isna(first.get("threat_model", np.nan)) else (
            f"; threat model {first['threat_model']}: view {first['view']}, accounting {first['accounting']}, "
            f"adjacency {first['adjacency']}")  # fmt: skip
        lines.append(f"{entry} ({first['trust_model']} view{model}; {int(rows['draws'].min()):,} draws): "
                     f"{_claims(rows)}.")  # fmt: skip
    for entry, rows in table[table["verdict"] == INFEASIBLE].groupby("entry", sort=True):
        eps = ", ".join(f"{e:g}" for e in rows["eps"])
        lines.append(f"{entry}: no parameters met the δ limit at ε = {eps} (nothing runs, nothing to attack).")
    ceiling = audited.dropna(subset=["bound_ceiling"])
    if len(ceiling):
        low, high = ceiling["bound_ceiling"].min(), ceiling["bound_ceiling"].max()
        above = int((ceiling["eps"] >= ceiling["bound_ceiling"]).sum())
        lines.append(f"No bound can exceed about ln(N/3.7) with N counted draws per side ({low:.1f} to {high:.1f} "
                     f"here): {above} of {len(ceiling)} audited claims lie above their ceiling, where 'consistent' "
                     "says only that the draws were too few to refute them.")  # fmt: skip
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

    def notes(self, section: dict[str, Any], config: dict[str, Any]) -> list[str]:
        """The D-DP-PM points the config leaves unaudited: a data set not run, a calibration not made."""
        out = [f"audit.journal.datasets: {name!r} is not in `datasets`: not audited"
               for name in journal_datasets(config) if name not in config["datasets"]]  # fmt: skip
        if "workshop" in config["experiments"]:
            out += [f"audit.workshop.threat_models: {name!r} is not in workshop.threat_models: not audited"
                    for name in section["workshop"]["threat_models"]
                    if name not in config["workshop"]["threat_models"]]  # fmt: skip
        return out

    def methods_used(self, config: dict[str, Any]) -> list[str]:
        return sorted(common_task_methods())

    @experiment_step
    def journal(self, job: Any) -> dict[str, Any]:
        """The journal D-DP-PM on one data set at its calibrated points (``audit.journal``; ε null: every ε of
        Fig. 2, ``epsilons``), one row per (threat model, ε) (:func:`ddppm.experiments.audit_points.journal_rows`)."""
        cfg = job.params.cfg
        section, method = cfg["audit"]["journal"], cfg["verdict"]["method"]
        problem = problem_from_files(job.input.data, job.input.partition, job.input.network)
        params, _ = read_parquet(job.input.params)
        floor, _ = read_parquet(job.input.floor)
        table = journal_rows(problem, params, floor, section, journal_epsilons(cfg), method, job.wildcards.dataset,
                             int(cfg["audit"]["seed"]))  # fmt: skip
        return {"parquet": table}

    @experiment_step
    def workshop(self, job: Any) -> dict[str, Any]:
        """The workshop D-DP-PM (``workshop.claims.method``) under one calibration at its points (``audit.workshop``;
        ε null: every ε of its Fig. 1, ``workshop.epsilons``)
        (:func:`ddppm.experiments.audit_points.workshop_rows`)."""
        cfg = job.params.cfg
        section, method = cfg["audit"]["workshop"], cfg["workshop"]["claims"]["method"]
        problem = problem_from_files(job.input.data, job.input.partition, job.input.network)
        params, meta = read_parquet(job.input.params)
        privacy = method_options(cfg["workshop"], method)["privacy"]
        dataset = read_parquet(job.input.data)[1]["dataset"]["name"]  # the data's own record of what it is
        table = workshop_rows(problem, params, meta["calibration"], section, workshop_epsilons(cfg), privacy, method,
                              dataset, int(cfg["audit"]["seed"]))  # fmt: skip
        return {"parquet": table}

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
        """Every audited row, the D-DP-PM points' rows, the methods not audited, the bounds' ceilings, the findings."""
        section, auditable = job.params.cfg["audit"], auditable_methods()
        rest = [{"method": name, "trust_model": method.trust_model, "eps": np.nan, "delta": section["delta"],
                 "verdict": "not audited", "test": "none: the method exposes no view yet"}
                for name, method in common_task_methods().items() if name not in auditable]  # fmt: skip
        paths = [*job.input.methods, *job.input.journal, *job.input.workshop]
        table = pd.concat([*[read_parquet(path)[0] for path in paths], pd.DataFrame(rest)], ignore_index=True)
        table["bound_ceiling"] = [bound_ceiling(r.delta, r.draws) for r in table.itertuples()]
        return {"csv": table, "parquet": table, "findings": audit_findings(table)}

    @experiment_step
    def figure(self, job: Any) -> dict[str, Any]:
        """Claimed ε against the measured lower bound."""
        from ddppm.plotting.audit import audit_figure

        table, _ = read_parquet(job.input.parquet)
        return {"png": audit_figure(table, job.params.cfg["audit"]["delta"])}
