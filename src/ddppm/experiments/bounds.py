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
from ddppm.experiments.common import check_raw_route, raw_records_of
from ddppm.methods import common_task_methods, method_styles
from ddppm.pipeline.config import check_prepared_dataset, dataset_config, known_datasets, unknown_dataset
from ddppm.pipeline.steps import problem_from_files
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
        known = known_datasets(config)
        for ds in section["datasets"]:
            if ds not in known:
                raise ConfigError(unknown_dataset(f"bounds.datasets: {ds!r}", ds, known))
            if ds not in config["datasets"]:
                check_prepared_dataset(config, ds)
            check_raw_route(ds, dataset_config(config, ds)["dataset"])
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
        cfg, dataset = job.params.cfg, job.wildcards.dataset
        problem = problem_from_files(job.input.data, job.input.partition, job.input.network)
        records = raw_records_of(problem, dataset, job.params.records["dataset"])
        return {"runs": bounds_runs(records, cfg["bounds"], cfg["common"], dataset)}

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
