"""Experiment ``radius``: the clipping radius, fixed against private (docs/studies.md, "The clipping radius"), built
by ``snakemake radius_study`` (and ``all_studies``), never part of the default run.

One job per data set runs the methods of ``radius.methods`` under both radii at every ε and k
(:func:`ddppm.studies.radius.radius_runs`, step :meth:`RadiusStudy.runs`); the summary gathers them with the findings
(:meth:`RadiusStudy.summary`), and one figure shows error against ε on every data set (:meth:`RadiusStudy.figure`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ddppm.core.errors import ConfigError
from ddppm.core.io import read_parquet
from ddppm.data.specs import dataset_specs
from ddppm.experiments.base import Experiment, experiment_step, register_experiment
from ddppm.experiments.common import job_records, study_datasets_checked
from ddppm.methods import common_task_methods, method_styles
from ddppm.pipeline.config import dataset_config
from ddppm.studies.radius import radius_findings, radius_runs, radius_summary

NOT_STANDARDISED = "normalization {}: its rows are only rescaled by a public bound, there is no clipping radius"


def radius_datasets(config: dict[str, Any], section: dict[str, Any] | None = None) -> tuple[list[str], dict[str, str]]:
    """The study's data sets (``radius.datasets``, or with null every data set of ``common.datasets`` the analyst
    standardises) and the data sets of ``common.datasets`` left out with null, each with why (``section``: the
    section ``radius``, default ``config["radius"]``)."""
    chosen = (config["radius"] if section is None else section)["datasets"]
    if chosen is not None:
        return list(chosen), {}
    run, skipped = [], {}
    for ds in config["common"]["datasets"]:
        normalization = dataset_config(config, ds)["dataset"]["normalization"]
        if normalization == "standardize":
            run.append(ds)
        else:
            skipped[ds] = NOT_STANDARDISED.format(normalization)
    return run, skipped


@register_experiment
class RadiusStudy(Experiment):
    """The common task's winning methods from the raw records under a fixed and under the private clipping radius."""

    name = "radius"
    title = "Study 'radius': the clipping radius, fixed against private"
    in_default_run = False
    findings_relative = "radius/findings.txt"
    provenance_relative = ("radius/summary.parquet",)

    def check_config(self, section: dict[str, Any], config: dict[str, Any] | None = None) -> None:
        if section["runs"] % section["draws"]:
            raise ConfigError(f"radius.draws = {section['draws']} must divide radius.runs = {section['runs']}")
        eps = [float(e) for e in section["epsilons"]]
        if eps != sorted(eps):
            raise ConfigError(f"radius.epsilons: {section['epsilons']} must increase (the target (c) steps along it)")
        targets = section["targets"]
        if float(targets["eps"]) not in eps:
            raise ConfigError(f"radius.targets.eps: {targets['eps']} is not in radius.epsilons {section['epsilons']}")
        if int(targets["k"]) not in section["ranks"]:
            raise ConfigError(f"radius.targets.k: {targets['k']} is not in radius.ranks {section['ranks']}")
        if targets["method"] not in section["methods"]:
            raise ConfigError(f"radius.targets.method: {targets['method']!r} is not in radius.methods")
        known = common_task_methods()
        for method in section["methods"]:
            if method not in known:
                raise ConfigError(f"radius.methods: {method!r} is no common-task method; known: {sorted(known)}")
        if config is None:
            return
        for ds, loader in study_datasets_checked("radius.datasets", section["datasets"] or [], config).items():
            if loader["normalization"] != "standardize":
                raise ConfigError(f"radius.datasets: {ds!r} has {NOT_STANDARDISED.format(loader['normalization'])} "
                                  f"(dataset_options.{ds}.normalization); remove it from radius.datasets")  # fmt: skip
        studied = radius_datasets(config, section)[0]
        if targets["dataset"] not in studied:
            raise ConfigError(f"radius.targets.dataset: {targets['dataset']!r} is not one of the study's data sets "
                              f"{studied}; name one of them (or add it to radius.datasets)")  # fmt: skip

    def methods_used(self, config: dict[str, Any]) -> list[str]:
        return sorted(config["radius"]["methods"])

    @experiment_step
    def runs(self, job: Any) -> dict[str, Any]:
        """Every run of one data set under both radii at every ε and k."""
        cfg = job.params.cfg
        return {"runs": radius_runs(job_records(job), cfg["radius"], cfg["common"], job.wildcards.dataset)}

    @experiment_step
    def summary(self, job: Any) -> dict[str, Any]:
        """Every (data set, radius, method, k, ε) in one table (CSV and Parquet), and the findings (from the
        summary, and the paired intervals from the runs)."""
        runs = pd.concat([read_parquet(path)[0] for path in job.input.runs], ignore_index=True)
        summary = radius_summary(runs)
        findings = radius_findings(summary, runs, job.params.cfg["radius"], dict(job.params.skipped))
        return {"csv": summary, "parquet": summary, "findings": findings}

    @experiment_step
    def figure(self, job: Any) -> dict[str, Any]:
        """Error against ε on every data set and k, fixed (dashed) against private (solid) radius."""
        from ddppm.plotting.radius import radius_figure  # Matplotlib: the figure step's only

        summary = read_parquet(job.input.parquet)[0]
        specs = dataset_specs()
        labels = {ds: specs[ds].label if ds in specs else ds for ds in dict.fromkeys(summary["dataset"])}
        methods = job.params.cfg["radius"]["methods"]
        return {"png": radius_figure(summary, labels, methods, method_styles(), job.params.cfg["common"]["adjacency"])}
