"""Experiment ``method_map``: where each method wins (docs/method_map.md), built by ``snakemake method_map`` only.

Every shape of :func:`ddppm.studies.method_map.map_shapes` (the base point, each factor alone, the 2-D grids of
``grids`` against ε) runs in its own job (step :meth:`MethodMap.shape`); the cells are gathered into one table with
the findings (:meth:`MethodMap.summary`) and drawn as phase maps (:meth:`MethodMap.grid`, :meth:`MethodMap.factors`)
with the common task's data sets marked where they sit (their public n and d).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ddppm.core.errors import ConfigError
from ddppm.core.io import read_parquet
from ddppm.data.specs import dataset_specs
from ddppm.experiments.base import Experiment, experiment_step, register_experiment
from ddppm.methods import common_task_methods, method_styles
from ddppm.studies.method_map import FACTORS, Shape, map_shapes, run_shape


def shape_name(shape: Shape) -> str:
    """A file-name form of a shape: ``n10000_d20_gap2_m8_k1``."""
    return f"n{shape.n}_d{shape.d}_gap{shape.gap:g}_m{shape.m}_k{shape.k}"


def section_shapes(section: dict[str, Any]) -> dict[str, Shape]:
    """Every shape of the section's map, by file name."""
    grids = [[factor, "eps"] for factor in section["grids"]]
    return {shape_name(s): s for s in map_shapes({**section, "grids": grids})}


def map_findings(cells: pd.DataFrame, section: dict[str, Any]) -> list[str]:
    """The map in sentences: the winner at the base point per trust level, how often each method is the best or
    tied, where no method beats chance, and how many answers stayed tied at the cap."""
    base = section["base"]
    at_base = cells
    for factor in FACTORS:
        at_base = at_base[np.isclose(at_base[factor].astype(float), float(base[factor]))]
    lines = [f"The method map: which method wins on spiked data (certified δ = {section['delta']:g}, "
             f"{int(cells['runs'].min())}–{int(cells['runs'].max())} paired draws per cell)"]  # fmt: skip
    for trust, group in cells.groupby("trust", sort=False):
        base_rows = at_base[at_base["trust"] == trust].sort_values("eps")
        answers = ", ".join(f"ε = {r.eps:g}: {r.best}" + ("" if r.separated else f" (tie: {r.competitive})")
                            for r in base_rows.itertuples())  # fmt: skip
        wins = group["best"].value_counts()
        share = "; ".join(f"{method} {count}/{len(group)}" for method, count in wins.items())
        chance = int((~group["beats_chance"].astype(bool)).sum())
        ties = int((~group["separated"].astype(bool)).sum())
        lines.append(f"Trust {trust}, at the base point: {answers}. Best over all {len(group)} cells: {share}; "
                     f"no method beats chance in {chance}; tied at the cap in {ties}.")  # fmt: skip
    return lines


@register_experiment
class MethodMap(Experiment):
    """Where each method wins, with paired intervals, over the public shape of a problem."""

    name = "method_map"
    title = "Method map (where each method wins)"
    in_default_run = False
    reportable = True
    findings_relative = "method_map/findings.txt"
    provenance_relative = ("method_map/cells.parquet",)

    def check_config(self, section: dict[str, Any], config: dict[str, Any] | None = None) -> None:
        for factor in FACTORS:
            if factor not in section["base"]:
                raise ConfigError(f"method_map.base.{factor}: give the base point's {factor}")
        for factor in section["grids"]:
            if not section["axes"].get(factor):
                raise ConfigError(f"method_map.grids: {factor!r} needs values in method_map.axes.{factor}")
        if section["runs"]["start"] > section["runs"]["cap"]:
            raise ConfigError("method_map.runs: start must not exceed cap")
        try:
            section_shapes(section)
        except ValueError as error:
            raise ConfigError(f"method_map.base / method_map.axes: {error}") from None

    def methods_used(self, config: dict[str, Any]) -> list[str]:
        return sorted(common_task_methods())

    @experiment_step
    def shape(self, job: Any) -> dict[str, Any]:
        """Every paired run of every method at every ε on one shape, and its ranked cells."""
        section = job.params.cfg["method_map"]
        runs, cells = run_shape(section_shapes(section)[job.wildcards.shape], section, common_task_methods())
        return {"runs": runs, "cells": cells}

    @experiment_step
    def summary(self, job: Any) -> dict[str, Any]:
        """Every cell in one table (CSV and Parquet) and the findings."""
        section = job.params.cfg["method_map"]
        cells = pd.concat([read_parquet(path)[0] for path in job.input.cells], ignore_index=True)
        return {"csv": cells, "parquet": cells, "findings": map_findings(cells, section)}

    @experiment_step
    def grid(self, job: Any) -> dict[str, Any]:
        """The phase map over one factor and ε, the other factors at the base point, the data sets marked."""
        from ddppm.plotting.method_map import grid_figure  # Matplotlib: the figure steps' only

        section, factor = job.params.cfg["method_map"], job.wildcards.factor
        cells = pd.read_csv(job.input.csv)
        for other in FACTORS:
            if other != factor:
                cells = cells[np.isclose(cells[other].astype(float), float(section["base"][other]))]
        specs = dataset_specs()
        datasets = [(specs[name].label, specs[name].shape[0 if factor == "n" else 1])
                    for name in job.params.cfg["common"]["datasets"]
                    if name in specs and factor in ("n", "d")]  # fmt: skip
        base = {**section["base"], "eps": None}
        return {"png": grid_figure(cells, factor, method_styles(), base, datasets, section["delta"])}

    @experiment_step
    def factors(self, job: Any) -> dict[str, Any]:
        """One factor at a time from the base point (ε at the base point's ``base_eps``)."""
        from ddppm.plotting.method_map import factors_figure

        section = job.params.cfg["method_map"]
        cells = pd.read_csv(job.input.csv)
        axes = {**{f: section["axes"].get(f, []) for f in FACTORS}, "eps": section["epsilons"]}
        base = {**section["base"], "eps": section["base_eps"]}
        return {"png": factors_figure(cells, axes, base, method_styles(), section["delta"])}
