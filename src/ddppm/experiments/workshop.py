"""Experiment ``workshop``: Fig. 1 of the workshop D-DP-PM paper on SBM graph signals, and its claims.

A. Campbell, A. Scaglione, S. Peisert, "Decentralized Differentially Private Power Method", Workshop on Theory
and Practice of Differential Privacy (TPDP) 2025, §4: error ``‖v − q qᵀv‖`` against ε for the workshop D-DP-PM
and the naive LDP baseline on 400 × 3 graph signals split among 4 agents on a ring. Here also the journal
D-DP-PM (calibrated on the same data and δ levels) and the oracle Gaussian release, under every threat model of
``workshop.threat_models``. Everything goes through the registry (:func:`ddppm.methods.get_method`) and the
pipeline's functions (:mod:`ddppm.pipeline.steps`, :mod:`ddppm.pipeline.montecarlo`).

Entry points, usable without Snakemake (the section is ``workshop``, validated against ``workshop.schema.yaml``):
:func:`default_section`, :func:`check_config`, :func:`delta_limits`, :func:`prepare_data`, :func:`method_options`,
:func:`calibrate`, :func:`closed_form_params`, :func:`run_errors`, :func:`summary_table`, :func:`budget_table`;
the claims are checked in :mod:`ddppm.experiments.workshop_claims`. Tables: docs/workshop.md.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd
from jsonschema import Draft202012Validator

from ddppm.core.errors import ConfigError, DataError
from ddppm.core.problem import DistributedProblem
from ddppm.core.progress import Progress
from ddppm.experiments import available_experiments
from ddppm.methods import available_methods, get_method
from ddppm.pipeline.montecarlo import montecarlo_runs, summarize_runs
from ddppm.pipeline.steps import partition_and_network, prepare_dataset
from ddppm.privacy.threat_models import threat_model_table

DATASET = "sbm_graph_signal"


def _defaults(schema: dict[str, Any]) -> Any:
    """Every default of a schema, descending into objects whose properties have defaults."""
    if schema.get("type") == "object" and "properties" in schema:
        base = copy.deepcopy(schema.get("default", {})) or {}
        for key, sub in schema["properties"].items():
            if "default" in sub or sub.get("type") == "object":
                value = _defaults(sub)
                base[key] = _merge(value, base[key]) if isinstance(base.get(key), dict) else value
        return base
    return copy.deepcopy(schema.get("default"))


def _merge(base: Any, override: Any) -> Any:
    if not (isinstance(base, dict) and isinstance(override, dict)):
        return copy.deepcopy(override)
    return {k: _merge(base[k], v) if k in base else copy.deepcopy(v) for k, v in {**base, **override}.items()}


def _validate(schema: dict[str, Any], value: Any, key: str) -> None:
    errors = sorted(Draft202012Validator(schema).iter_errors(value), key=lambda e: list(e.absolute_path))
    if errors:
        where = ".".join([key, *(str(p) for p in errors[0].absolute_path)])
        raise ConfigError(f"{where}: {errors[0].message}")


def default_section(**overrides: Any) -> dict[str, Any]:
    """The section ``workshop`` with every default, nested ``overrides`` merged in, validated (the library's way
    to run the experiment without Snakemake)."""
    schema = available_experiments()["workshop"]
    section = _merge(_defaults(schema), overrides)
    _validate(schema, section, "workshop")
    check_config(section)
    return section


def method_options(section: dict[str, Any], name: str) -> dict[str, Any]:
    """The validated options of method ``name`` for this experiment: its schema defaults, then this experiment's
    defaults for it (``workshop.schema.yaml``), then ``workshop.method_options.<name>`` key by key (so a config
    that sets one key keeps the experiment's other defaults); the workshop D-DP-PM also takes ``workshop.budget``
    and the threat models."""
    method = get_method(name)
    schema = method.config_schema
    options = _defaults(schema)
    if method.calibrated:
        experiment_schema = available_experiments()["workshop"]["properties"]["method_options"]["properties"]
        options = _merge(options, experiment_schema[name].get("default", {}))
        options = _merge(options, section["method_options"].get(name, {}))
    if name == "ddppm_workshop":
        options["budget"] = _merge(options["budget"], section["budget"])
    if method.calibrated:
        options["threat_models"] = list(section["threat_models"])
    _validate(schema, options, f"workshop.method_options.{name}")
    return options


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
    if method == "ddppm":
        from ddppm.methods.ddppm.steps import calibrate_threat_model

        options["threat_model_definitions"] = definitions
        with config_keys_of_experiment(method):
            return calibrate_threat_model(problem, eps, limits, options, threat_model)
    from ddppm.methods.workshop.calibration import calibrate_threat_model as calibrate_workshop
    from ddppm.methods.workshop.method import param_rows

    with config_keys_of_experiment(method):
        result = calibrate_workshop(problem, eps, limits, options, threat_model, definitions)
    rows = param_rows(result, threat_model)
    if result.meta["accounting_iterations"] != "exact":
        rows = with_exact_recheck(problem, rows, options, result.meta)
    return rows, result.candidates, result.meta


def with_exact_recheck(
    problem: DistributedProblem, rows: pd.DataFrame, options: dict[str, Any], meta: dict[str, Any]
) -> pd.DataFrame:
    """Theorem 1 (or Chernoff) against the exact tail on the same releases: for each feasible row, the exact δ of
    the iterations at ``ε_i`` with the same view and the same neighbours (``delta_iterations_exact``), and the
    composed exact δ ``delta_exact = min(1, delta_iterations_exact + delta_final_actual)`` (the final release's
    true δ at ε₁), with ``meets_limit_exact``. Both NaN (missing) where the row is infeasible."""
    from ddppm.methods.ddppm.adjacency import neighbours_from_table
    from ddppm.methods.ddppm.steps import accountant_settings
    from ddppm.methods.workshop.accounting import iterations_delta
    from ddppm.methods.workshop.calibration import params_from_row

    settings = accountant_settings(options["privacy"], {**meta["threat_model"], "accounting": "exact"})
    neighbours = neighbours_from_table(pd.DataFrame(meta["neighbours"]))
    exact = np.full(len(rows), np.nan)
    for k, (_, row) in enumerate(rows.iterrows()):
        if bool(row["feasible"]):
            res = iterations_delta(
                problem, params_from_row(row), [float(row["eps_iterations"])], settings, neighbours=neighbours
            )
            exact[k] = float(res.delta[0])
    out = rows.copy()
    out["delta_iterations_exact"] = exact
    out["delta_exact"] = np.minimum(1.0, exact + out["delta_final_actual"].astype(float))  # δ ≤ 1 always
    meets = [
        None if np.isnan(d) else bool(d <= lim) for d, lim in zip(out["delta_exact"], out["delta_limit"], strict=True)
    ]
    out["meets_limit_exact"] = pd.array(meets, dtype="boolean")
    bound = out["delta_iterations"].astype(float)
    below = [None if np.isnan(e) else bool(t < e) for t, e in zip(bound, exact, strict=True)]
    out["bound_below_exact"] = pd.array(below, dtype="boolean")  # Theorem 1 under the exact δ: it happens (docs)
    return out


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
    ``method`` column) where a calibration was rechecked with the exact tail (:func:`with_exact_recheck`; NaN and
    True elsewhere)."""
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
