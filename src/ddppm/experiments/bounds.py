"""Experiment ``bounds``: the price of loose bounds (docs/bounds.md), built by ``snakemake bounds_study`` (and
``all_studies``), never part of the default run.

One job per data set runs every method at every width factor and preprocessing estimator
(:func:`ddppm.studies.bounds.bounds_runs`, step :meth:`BoundsStudy.runs`); the summary gathers them with the
findings (:meth:`BoundsStudy.summary`), and each data set gets a figure of error against width
(:meth:`BoundsStudy.figure`).
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
from ddppm.studies.bounds import bounds_findings, bounds_runs, bounds_summary, small_n_findings


@register_experiment
class BoundsStudy(Experiment):
    """Every common-task method from the raw records with the declared bounds widened, under each estimator."""

    name = "bounds"
    title = "Study 'bounds': the price of loose bounds"
    in_default_run = False
    findings_relative = "bounds/findings.txt"
    provenance_relative = ("bounds/summary.parquet",)

    def check_config(self, section: dict[str, Any], config: dict[str, Any] | None = None) -> None:
        if min(section["widths"]) != 1:
            raise ConfigError("bounds.widths: include 1 (the declared bounds), the point every other width is "
                              "compared with")  # fmt: skip
        if section["runs"] % section["draws"]:
            raise ConfigError(f"bounds.draws = {section['draws']} must divide bounds.runs = {section['runs']}")
        if config is None:
            return
        study_datasets_checked("bounds.datasets", section["datasets"], config)
        for ds in section["targets"]["datasets"]:
            if ds not in section["datasets"]:
                raise ConfigError(f"bounds.targets.datasets: {ds!r} is not in bounds.datasets; add it there or "
                                  "remove it here")  # fmt: skip
        if float(section["targets"]["eps"]) not in [float(e) for e in section["epsilons"]]:
            raise ConfigError(f"bounds.targets.eps: {section['targets']['eps']} is not in bounds.epsilons")

    def methods_used(self, config: dict[str, Any]) -> list[str]:
        return sorted(common_task_methods())

    @experiment_step
    def runs(self, job: Any) -> dict[str, Any]:
        """Every run of one data set at every width and estimator."""
        cfg = job.params.cfg
        return {"runs": bounds_runs(job_records(job), cfg["bounds"], cfg["common"], job.wildcards.dataset)}

    @experiment_step
    def summary(self, job: Any) -> dict[str, Any]:
        """Every (data set, width, estimator, method, k, ε) in one table (CSV and Parquet), and the findings (the
        small-n target's paired intervals from the runs)."""
        runs = pd.concat([read_parquet(path)[0] for path in job.input.runs], ignore_index=True)
        summary = bounds_summary(runs)
        section = job.params.cfg["bounds"]
        findings = bounds_findings(summary, section) + small_n_findings(runs, section)
        return {"csv": summary, "parquet": summary, "findings": findings}

    @experiment_step
    def figure(self, job: Any) -> dict[str, Any]:
        """Error against the width factor for one data set, per ε and trust level."""
        from ddppm.plotting.bounds import bounds_figure  # Matplotlib: the figure step's only

        dataset = job.wildcards.dataset
        spec = dataset_specs().get(dataset)
        summary = read_parquet(job.input.parquet)[0]
        return {"png": bounds_figure(summary, dataset, spec.label if spec else dataset, method_styles())}
