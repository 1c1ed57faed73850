"""Experiment ``workshop``: Fig. 1 of the workshop D-DP-PM paper on SBM graph signals, and its claims.

A. Campbell, A. Scaglione, S. Peisert, "Decentralized Differentially Private Power Method", Workshop on Theory
and Practice of Differential Privacy (TPDP) 2025, §4: error ``‖v − q qᵀv‖`` against ε for the workshop D-DP-PM
and the naive LDP baseline on 400 × 3 graph signals split among 4 agents on a ring. Here also the journal
D-DP-PM (calibrated on the same data and δ levels) and the oracle Gaussian release, under every threat model of
``workshop.threat_models``. Everything goes through the registry (:func:`ddppm.methods.get_method`) and the
pipeline's functions (:mod:`ddppm.pipeline.steps`, :mod:`ddppm.pipeline.montecarlo`).

Entry points, usable without Snakemake (the section is ``workshop``, validated against ``workshop.schema.yaml``):
:func:`default_section`, :func:`check_config`, :func:`delta_limits`, :func:`prepare_data`,
:func:`ddppm.pipeline.method_options.method_options` (the methods' options: a config service below the experiments),
:func:`calibrate`, :func:`closed_form_params`, :func:`run_errors`, :func:`summary_table`, :func:`budget_table`;
the claims are checked in :mod:`ddppm.experiments.workshop_claims`. Tables: docs/workshop.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd

from ddppm.core.errors import ConfigError, DataError
from ddppm.core.problem import DistributedProblem
from ddppm.core.progress import Progress
from ddppm.experiments.base import Experiment, get_experiment, register_experiment
from ddppm.methods import available_methods, get_method
from ddppm.pipeline.method_options import method_options
from ddppm.pipeline.montecarlo import montecarlo_runs, summarize_runs
from ddppm.pipeline.steps import partition_and_network, prepare_dataset
from ddppm.privacy.threat_models import threat_model_table

DATASET = "sbm_graph_signal"


def default_section(**overrides: Any) -> dict[str, Any]:
    """The section ``workshop`` with every default, nested ``overrides`` merged in, validated (the library's way
    to run the experiment without Snakemake)."""
    return get_experiment("workshop").default_section(**overrides)


def check_config(section: dict[str, Any], config: dict[str, Any] | None = None) -> None:
    """Cross-key checks of the validated section ``workshop``; raises :class:`ConfigError` naming the key."""
    levels = section["delta_levels"]
    if len(levels["levels"]) != len(levels["breaks"]) + 1:
        raise ConfigError(
            f"workshop.delta_levels: {len(levels['breaks'])} breaks need {len(levels['breaks']) + 1} levels, "
            f"got {len(levels['levels'])}"
        )
    if list(levels["breaks"]) != sorted(levels["breaks"]):
        raise ConfigError("workshop.delta_levels.breaks must increase")
    table = threat_model_table((config or {}).get("threat_models"))
    unknown = [tm for tm in section["threat_models"] if tm not in table]
    if unknown:
        raise ConfigError(
            f"workshop.threat_models: {unknown} are not defined (known: {sorted(table)}); define them under the "
            "top-level `threat_models` (view, accounting, adjacency)"
        )
    known = available_methods()
    for name in section["methods"]:
        if name not in known:
            raise ConfigError(f"workshop.methods: {name!r} is not a registered method ({sorted(known)})")
    for role in ("method", "paper_baseline", "sound_baseline"):
        if section["claims"][role] not in section["methods"]:
            raise ConfigError(
                f"workshop.claims.{role}: {section['claims'][role]!r} is not in workshop.methods "
                f"({section['methods']}); add it or name one of them"
            )
    for name in section["methods"]:
        if known[name].calibrated:
            method_options(section, name)
    lo, hi = section["claims"]["drop_range"]
    if not lo < hi:
        raise ConfigError(f"workshop.claims.drop_range must be [low, high] with low < high, got {[lo, hi]}")
    if section["partition"]["m"] > section["data"]["n_nodes"]:
        raise ConfigError("workshop.partition.m exceeds workshop.data.n_nodes: every agent needs a row")
    if section["network"]["topology"] == "paper_ring" and section["partition"]["m"] != 4:
        raise ConfigError("workshop.network.topology: paper_ring needs workshop.partition.m = 4; use ring")


def delta_limits(eps, levels: dict[str, Any]) -> np.ndarray:
    """The paper's δ rule (§4): ``levels[k]`` for ``ε ≤ breaks[k]`` (the first break that holds), the last level
    beyond the last break. Defaults: .26 for ε ≤ 5, .1 for 5 < ε ≤ 10, .011 beyond."""
    eps = np.asarray(eps, float)
    index = np.searchsorted(np.asarray(levels["breaks"], float), eps, side="left")
    return np.asarray(levels["levels"], float)[index]


def eps_and_limits(section: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    eps = np.asarray(section["epsilons"], float)
    return eps, delta_limits(eps, section["delta_levels"])


def prepare_data(section: dict[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """The SBM graph signals in the unit ball, the row → agent table and the mixing matrix, with their metadata
    (the pipeline's :func:`prepare_dataset` and :func:`partition_and_network`)."""
    data = dict(section["data"])
    options = {"source": "default", "normalization": data.pop("normalization"), **data}
    frame, data_meta = prepare_dataset(DATASET, options)
    network = {**section["network"], "seed": 0}
    part, net, net_meta = partition_and_network(len(frame), section["partition"], network)
    return frame, part, net, {"data": data_meta, "network": net_meta}


@contextmanager
def config_keys_of_experiment(method: str) -> Iterator[None]:
    """Re-raise a method's config or data error with the key this experiment reads (``methods.<m>.x`` is
    ``workshop.method_options.<m>.x`` here), so the message names the key the user has to change."""
    try:
        yield
    except (ConfigError, DataError) as err:
        message = str(err).replace(f"methods.{method}.", f"workshop.method_options.{method}.")
        raise type(err)(message) from err


def calibrate(
    problem: DistributedProblem,
    section: dict[str, Any],
    method: str,
    threat_model: str,
    definitions: dict[str, dict[str, str]] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """One calibrated method under one threat model on the experiment's ε grid and δ levels: its parameter rows,
    every evaluated candidate and the calibration's metadata (each method's own library functions)."""
    eps, limits = eps_and_limits(section)
    options = method_options(section, method)
    with config_keys_of_experiment(method):
        return get_method(method).calibrate(problem, eps, limits, options, threat_model, definitions)


def closed_form_params(problem: DistributedProblem, section: dict[str, Any], method: str) -> pd.DataFrame:
    """A closed-form method's parameter table on the experiment's ε grid (its ``choose_params``)."""
    eps, limits = eps_and_limits(section)
    return get_method(method).choose_params(problem, eps, limits, method_options(section, method))


def run_errors(problem: DistributedProblem, section: dict[str, Any], params: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per-run errors of every method at every ε (:func:`ddppm.pipeline.montecarlo.montecarlo_runs`)."""
    eps, _ = eps_and_limits(section)
    indices = np.arange(int(section["runs"]))
    progress = Progress("workshop Monte Carlo", len(params) * len(eps), "(method, ε) points")
    frames = []
    for name, table in params.items():
        options = method_options(section, name)
        for e in eps:
            frames.append(montecarlo_runs(problem, name, e, table, indices, int(section["seed"]), DATASET, options))
            progress.step(note=f"{name} at ε = {e:g}")
    return pd.concat(frames, ignore_index=True)


def summary_table(runs: pd.DataFrame, params: pd.DataFrame | None = None) -> pd.DataFrame:
    """Mean error and bands per (method, threat model, ε) (:func:`ddppm.pipeline.montecarlo.summarize_runs`), with
    ``delta_exact`` and ``meets_limit_exact`` from the parameter tables (``params``: every method's rows with a
    ``method`` column) where a calibration was rechecked with the exact tail
    (:func:`ddppm.methods.workshop.recheck.with_exact_recheck`; NaN and True elsewhere)."""
    summary = summarize_runs(runs)
    summary["delta_exact"] = np.nan
    summary["meets_limit_exact"] = True
    if params is not None and "meets_limit_exact" in params:
        keyed = params.dropna(subset=["meets_limit_exact"]).set_index(["method", "threat_model", "eps"])
        for k, row in summary.iterrows():
            key = (row["method"], row["threat_model"], float(row["eps"]))
            if key in keyed.index:
                summary.loc[k, "delta_exact"] = float(keyed.loc[key, "delta_exact"])
                summary.loc[k, "meets_limit_exact"] = bool(keyed.loc[key, "meets_limit_exact"])
    return summary


BUDGET_COLUMNS = [
    "threat_model",
    "eps",
    "delta_limit",
    "eps_final_share",
    "delta_final_share",
    "delta_q",
    "eps_iterations",
    "eps_final",
    "delta_iterations_limit",
    "delta_iterations",
    "delta_final",
    "delta_final_actual",
    "final_mechanism",
    "final_noise_factor",
    "accounting",
    "delta",
    "feasible",
    "delta_iterations_exact",
    "delta_exact",
    "meets_limit_exact",
    "bound_below_exact",
    "T",
]


def budget_table(params: pd.DataFrame) -> pd.DataFrame:
    """The budget split the workshop D-DP-PM used, one row per (threat model, ε), from its parameter table."""
    return params.reindex(columns=BUDGET_COLUMNS).sort_values(["threat_model", "eps"]).reset_index(drop=True)


@register_experiment
class WorkshopExperiment(Experiment):
    """The workshop paper's Fig. 1 on SBM graph signals, its budget split and its claims."""

    name = "workshop"
    title = "Workshop D-DP-PM (Campbell et al., TPDP 2025)"
    targets_relative = ("workshop/figures/fig1.png", "workshop/figures/fig1.pdf") + tuple(
        f"workshop/tables/{table}.csv" for table in ("summary", "budget", "claims")
    )
    findings_relative = "workshop/tables/findings.txt"
    provenance_relative = (
        "workshop/data/normalized.parquet",
        "workshop/params.parquet",
        *(f"workshop/tables/{table}.parquet" for table in ("summary", "budget", "claims")),
    )

    def check_config(self, section: dict[str, Any], config: dict[str, Any] | None = None) -> None:
        check_config(section, config)

    def methods_used(self, config: dict[str, Any]) -> list[str]:
        """The methods of ``workshop.methods`` (the runs, calibrations and Fig. 1)."""
        return list(config["workshop"]["methods"])
