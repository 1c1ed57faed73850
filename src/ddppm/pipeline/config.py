"""The journal pipeline's configuration: its schema (with every default), validation with readable errors,
per-dataset views and each job's exact parameters.

The schema is ``config.schema.yaml`` beside this module, completed with the threat-model table
(:mod:`ddppm.privacy.threat_models`) and each registered method's own schema under ``methods.<name>``
(:attr:`ddppm.methods.Method.config_schema`). Defaults live there and nowhere else: :func:`validate_config` fills
them in. The whole config, with the other papers' experiments, is assembled one level up, in :mod:`ddppm.config`;
this module imports no experiment. A job's ``params`` are :func:`job_params` of exactly the keys it reads, so a
change elsewhere reruns nothing.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from collections.abc import Callable, Sequence
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ddppm.core.errors import ConfigError, DDPPMError
from ddppm.core.io import config_hash
from ddppm.core.network import mixing_matrix, validate_mixing_matrix
from ddppm.core.schema import canonical, merge, schema_defaults, validate
from ddppm.data import DATASETS, SHAPES
from ddppm.data.datasets import accepted_options
from ddppm.data.local_file import FILE_OPTIONS, file_columns, file_shape, read_local_file
from ddppm.data.public_prep import bounds_from_entry
from ddppm.methods import available_methods
from ddppm.privacy.threat_models import ACCOUNTINGS, ADJACENCIES, BUILT_IN, VIEWS, threat_model_table

SCHEMA_PATH = Path(__file__).with_name("config.schema.yaml")
GLOBAL_SECTIONS = ("network", "partition", "montecarlo")
"""Sections a dataset may override under ``dataset_options.<name>`` (plus ``methods``)."""

__all__ = [
    "canonical",
    "check_prepared_dataset",
    "dataset_config",
    "dataset_files",
    "eps_label",
    "file_datasets",
    "job_params",
    "known_datasets",
    "pipeline_schema",
    "select",
    "validate_config",
    "verdict_roles",
]


@cache
def pipeline_schema() -> dict[str, Any]:
    """The journal pipeline's schema: the base schema with the threat models' defaults and allowed values and one
    ``methods.<name>`` entry per registered method (``experiments`` lists none: :mod:`ddppm.config` adds them)."""
    schema = yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))
    # The threat models' default and allowed values come from their one table, not from a copy in the YAML.
    schema["properties"]["threat_models"]["default"] = {name: tm.as_dict() for name, tm in BUILT_IN.items()}
    allowed = schema["definitions"]["threat_model"]["properties"]
    for key, values in (("view", VIEWS), ("accounting", ACCOUNTINGS), ("adjacency", ADJACENCIES)):
        allowed[key]["enum"] = list(values)
    methods = schema["properties"]["methods"]
    for name, method in available_methods().items():
        if method.configured_by:
            continue  # its options live in its experiment's section (unknown-key errors point there)
        about = {"description": f"settings of method `{name}` ({method.label})"}
        section = {**about, **copy.deepcopy(method.config_schema)}
        methods["properties"][name] = {**section, "default": {}}
    methods["additionalProperties"] = False
    method_list = schema["definitions"]["montecarlo"]["properties"]["methods"]
    method_list["items"]["enum"] = list(available_methods())
    method_list["default"] = list(available_methods())
    schema["properties"]["experiments"]["default"] = []
    return schema


def _method_elsewhere(parent: str, name: str) -> str | None:
    """Where the options of a method configured by an experiment live (``Method.configured_by``)."""
    method = available_methods().get(name) if parent == "methods" else None
    owner = method.configured_by if method is not None else None
    if not owner:
        return None
    keys = [f"`{owner}.method_options.{name}`", *(f"`{owner}.{key}`" for key in method.experiment_options)]
    return "it is configured in its experiment's section: " + " and ".join(keys)


def validate_config(
    config: dict[str, Any],
    schema: dict[str, Any] | None = None,
    extra_checks: Sequence[Callable[[dict[str, Any]], None]] = (),
) -> dict[str, Any]:
    """Validate ``config`` in place against ``schema`` (default :func:`pipeline_schema`), fill in every default,
    and run ``extra_checks`` (e.g. the experiments' own, from :mod:`ddppm.config`) and the cross-key checks.

    Per-dataset overrides (``dataset_options.<name>``) are validated against the same section schemas but
    get no defaults injected: an injected default would silently override the global value.
    """
    schema = schema or pipeline_schema()
    overrides = copy.deepcopy(config.get("dataset_options", {}))
    validate(config, schema, fill_defaults=True, hint=_method_elsewhere)
    config["dataset_options"] = overrides
    method_schemas = schema["properties"]["methods"]["properties"]
    for ds, options in overrides.items():
        for name, section in (options.get("methods") or {}).items():
            if name not in method_schemas:
                raise ConfigError(
                    f"unknown method `{name}` in `dataset_options.{ds}.methods`; known: {sorted(method_schemas)}"
                )
            validate(section, method_schemas[name], context=f" in dataset_options.{ds}.methods.{name}")
    # A config that defines threat models of its own keeps the built-in ones (a same-named entry replaces one).
    config["threat_models"] = {
        name: tm.as_dict() for name, tm in threat_model_table(config.get("threat_models")).items()
    }
    check_dataset_names(config)
    for check in extra_checks:
        check(config)
    check_config(config)
    return config


def file_datasets(config: dict[str, Any]) -> list[str]:
    """The data sets read from a local file (``dataset_options.<name>.source: file``), in the config's order."""
    return [ds for ds, o in (config.get("dataset_options") or {}).items() if (o or {}).get("source") == "file"]


def known_datasets(config: dict[str, Any]) -> list[str]:
    """Every data set name ``config`` may use: the records of ``datasets.yaml`` (:data:`ddppm.data.DATASETS`) and
    the user's files (:func:`file_datasets`)."""
    return [*DATASETS, *(ds for ds in file_datasets(config) if ds not in DATASETS)]


def dataset_files(config: dict[str, Any], datasets: Sequence[str]) -> list[str]:
    """The local files ``datasets`` are read from (as written in the config), for the ``input:`` of the jobs that
    read them: editing a file reruns exactly those jobs and what depends on them (no sha256 needed)."""
    options = config.get("dataset_options") or {}
    return [options[ds]["path"] for ds in dict.fromkeys(datasets) if ds in file_datasets(config)]


def check_dataset_names(config: dict[str, Any]) -> None:
    """Every data set the config names (``datasets``, ``delta_limits``, ``dataset_options``) is known
    (:func:`known_datasets`); an unknown one is a typo or a file not yet declared, and the error says both fixes."""
    for ds in file_datasets(config):
        if not re.fullmatch(r"[A-Za-z0-9_]+(-[A-Za-z0-9_]+)*", ds):
            raise ConfigError(f"dataset_options.{ds}: a data set's name is part of file paths and job names; use "
                              "letters, digits, `_` and `-` only (e.g. my_data)")  # fmt: skip
    known = known_datasets(config)
    named = [("datasets", ds) for ds in config.get("datasets", [])]
    named += [(key, ds) for key in ("delta_limits", "dataset_options") for ds in config.get(key) or {}]
    for key, ds in named:
        if ds not in known:
            raise ConfigError(unknown_dataset(f"{key}: {ds!r}" if key == "datasets" else f"{key}.{ds}", ds, known))


def unknown_dataset(where: str, name: str, known: Sequence[str]) -> str:
    """The error for an unknown data set ``name`` (``where``: the config key that names it): the closest known name,
    and how to declare a file of one's own under that name."""
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" (did you mean `{close[0]}`?)" if close else ""
    return (f"{where}: unknown dataset{hint}; known datasets are {list(known)}. For a file of your own under this "
            f"name, declare it: `dataset_options.{name}` with `source: file`, `path` and `public_bounds` (README, "
            "'Your own data')")  # fmt: skip


def verdict_roles(config: dict[str, Any] | None = None) -> dict[str, str]:
    """The methods of the journal verdict (config ``verdict``: ``method``, ``baseline``, ``yardstick``): the
    schema's defaults with ``config["verdict"]`` merged in (``config`` may be raw YAML)."""
    defaults = schema_defaults(pipeline_schema()["properties"]["verdict"])
    return merge(defaults, (config or {}).get("verdict") or {})


def eps_label(eps: float) -> str:
    """How ε appears in file names (``eps~5``, ``eps~0.5``)."""
    return f"{float(eps):g}"


def dataset_config(config: dict[str, Any], dataset: str) -> dict[str, Any]:
    """Everything one dataset's jobs may read: global sections with its overrides merged in.

    Keys: ``dataset`` (loader options), ``network``, ``partition``, ``montecarlo``, ``methods``,
    ``threat_models``, ``epsilons`` and ``delta_limits`` (this dataset's list).
    """
    options = copy.deepcopy(config.get("dataset_options", {}).get(dataset, {}))
    merged = {s: merge(config.get(s, {}), options.pop(s, {}) or {}) for s in (*GLOBAL_SECTIONS, "methods")}
    loader = pipeline_schema()["definitions"]["dataset_option"]["properties"]
    merged["dataset"] = {**{k: v["default"] for k, v in loader.items() if "default" in v}, **options}
    merged["threat_models"] = copy.deepcopy(config.get("threat_models", {}))
    merged["epsilons"] = [float(e) for e in config["epsilons"]]
    # A data set only an experiment uses (the common task's digits, say) has no journal δ limits.
    merged["delta_limits"] = [float(d) for d in config.get("delta_limits", {}).get(dataset, [])]
    return canonical(merged)


def select(cfg: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """The dotted ``keys`` of ``cfg`` (e.g. ``"montecarlo.runs"``, ``"methods.ldp"``) as a nested dict."""
    out: dict[str, Any] = {}
    for key in keys:
        node: Any = cfg
        parts = key.split(".")
        for part in parts:
            if not isinstance(node, dict) or part not in node:
                raise KeyError(f"config has no key {key!r}")
            node = node[part]
        target = out
        for part in parts[:-1]:
            target = target.setdefault(part, {})
        target[parts[-1]] = copy.deepcopy(node)
    return out


def _drop(cfg: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    for key in keys:
        *parents, last = key.split(".")
        node = cfg
        for part in parents:
            node = node.get(part, {})
        node.pop(last, None)
    return cfg


def job_params(
    config: dict[str, Any], dataset: str | None, keys: tuple[str, ...], drop: tuple[str, ...] = ()
) -> dict[str, Any]:
    """What one job reads, for Snakemake ``params``: the ``keys`` of this dataset's config (of the whole
    config for ``dataset=None``), less the ``drop`` keys (layout-only settings such as ``chunks``, which
    change no result), and their hash. The hash is the ``config_hash`` the job's outputs carry."""
    source = dataset_config(config, dataset) if dataset is not None else config
    chosen = canonical(_drop(select(source, keys), drop))
    chosen["config_hash"] = config_hash(chosen)
    return chosen


def check_config(config: dict[str, Any]) -> None:
    """Cross-key checks the JSON schema cannot express. Raises :class:`ConfigError` naming the key."""
    n_eps = len(config["epsilons"])
    labels = [eps_label(e) for e in config["epsilons"]]
    if len(set(labels)) != len(labels):
        raise ConfigError(f"epsilons: {config['epsilons']} has values that print alike ({labels}); make them distinct")
    datasets = list(config["datasets"])
    for role, name in config["verdict"].items():
        if name not in available_methods():
            known = sorted(available_methods())
            raise ConfigError(f"verdict.{role}: {name!r} is not a registered method of the journal task ({known})")
    # Entries for known datasets that are not run are fine (a --configfile merges over config.yaml); an unknown
    # name is a typo that would silently leave the real dataset on its defaults: check_dataset_names ran first.
    for ds in datasets:
        limits = config.get("delta_limits", {}).get(ds)
        if limits is None:
            raise ConfigError(f"delta_limits.{ds} is missing: give {n_eps} δ limits in (0, 1), one per ε")
        if len(limits) != n_eps:
            raise ConfigError(f"delta_limits.{ds} has {len(limits)} values but epsilons has {n_eps}; give one per ε")
        check_prepared_dataset(config, ds)
        merged = dataset_config(config, ds)
        for name in merged["montecarlo"]["methods"]:
            for tm in merged["methods"].get(name, {}).get("threat_models", []):
                if tm not in merged["threat_models"]:
                    raise ConfigError(
                        f"methods.{name}.threat_models: {tm!r} is not defined under `threat_models` "
                        f"(defined: {sorted(merged['threat_models'])})"
                    )


def other_results_hint(results: str) -> Callable[[Any], list[str]]:
    """The input function of rule ``other_results_dir``, which matches a path under another configuration's results
    directory: it names no file, it stops the run while the DAG is built (before any job) with the hint."""

    def hint(wildcards: Any) -> list[str]:
        raise ConfigError(
            f"{wildcards.other_results}/{wildcards.path} is not made by this configuration: it writes to {results}/ "
            f"(results_dir). Ask for {results}/{wildcards.path}, or run with the configuration that writes to "
            f"{wildcards.other_results}/ (the default config.yaml writes to results/, tests/config/tiny.yaml to "
            "results-tiny/)."
        )

    return hint


def dataset_rows(config: dict[str, Any], ds: str) -> int | None:
    """The number of rows n of data set ``ds`` known before it is loaded (its configured ``n``, or the default
    shape of a built-in source), else ``None`` (a file or URL: known once loaded)."""
    merged = dataset_config(config, ds)
    if merged["dataset"]["source"] == "file":
        return local_file_shape(ds, merged["dataset"])[0]
    return merged["dataset"].get("n") or (SHAPES[ds][0] if merged["dataset"]["source"] == "default" else None)


def local_file_shape(ds: str, loader: dict[str, Any]) -> tuple[int, int]:
    """``(n, d)`` of data set ``ds`` read from a local file (``loader``: its ``dataset_options`` with defaults),
    from the file's header and row count (:func:`ddppm.data.local_file.file_shape`; cached while the file is
    unchanged). Raises :class:`ConfigError` naming the key when the file is missing or unreadable."""
    key = f"dataset_options.{ds}"
    if not loader.get("path"):
        raise ConfigError(f"{key}.path: source 'file' needs the file's path (a CSV, TSV or Parquet file)")
    path = Path(loader["path"])
    options = {k: loader[k] for k in FILE_OPTIONS if k in loader and k != "path"}
    try:
        stat = path.stat()
    except OSError:
        stat = None
    try:
        return _file_shape(str(path), (stat.st_mtime_ns, stat.st_size) if stat else None, json.dumps(options), key)
    except DDPPMError as exc:
        raise ConfigError(str(exc)) from None


@lru_cache(maxsize=64)
def _file_shape(path: str, stamp: tuple[int, int] | None, options: str, key: str) -> tuple[int, int]:
    return file_shape(path, json.loads(options), key)


def local_file_matrix(ds: str, loader: dict[str, Any]) -> np.ndarray:
    """The records of data set ``ds`` read from its local file with every check of the loader (a cell that is not
    a finite number, a constant column, fewer than 2 rows; cached while the file is unchanged), so that a bad file
    stops the config's validation, before any job. Raises :class:`ConfigError` naming the file, the line, the
    column, the key and the fix."""
    key = f"dataset_options.{ds}"
    local_file_shape(ds, loader)  # the path and the extension first
    path = Path(loader["path"])
    stat = path.stat()
    options = {k: loader[k] for k in FILE_OPTIONS if k in loader and k != "path"}
    try:
        return _file_matrix(str(path), (stat.st_mtime_ns, stat.st_size), json.dumps(options), key)
    except DDPPMError as exc:
        raise ConfigError(str(exc)) from None


@lru_cache(maxsize=16)
def _file_matrix(path: str, stamp: tuple[int, int], options: str, key: str) -> np.ndarray:
    return read_local_file(path, json.loads(options), key)


def check_file_dataset(config: dict[str, Any], ds: str) -> None:
    """A data set from a local file, before any job: the file exists and reads (every cell, as the loader reads it:
    :func:`local_file_matrix`), and its public bounds are declared
    (required under a new name) with one ``[lower, upper]`` per column the options read. Raises
    :class:`ConfigError` naming ``dataset_options.<name>.public_bounds`` (or the file's key) and the fix."""
    loader = dataset_config(config, ds)["dataset"]
    n, d = local_file_matrix(ds, loader).shape
    key = f"dataset_options.{ds}.public_bounds"
    entry = loader.get("public_bounds")
    if not entry and ds not in DATASETS:
        raise ConfigError(
            f"{key}: the file {loader['path']!r} ({n} rows, {d} columns) has no public bounds; declare them "
            f"(`kind`: documentation, construction or declared; `source`: where they come from; `features`: {d} "
            "[lower, upper] pairs in the columns' order, or `all_features`: one pair for all). Only these and n "
            "shape a row outside a mechanism (docs/privacy.md, 'What is public')"
        )
    if entry:
        try:
            bounds_from_entry(entry, d, key)
        except ConfigError as exc:
            named = ""
            if found := re.search(r"features\[(\d+)\]", str(exc)):
                options = {k: loader[k] for k in FILE_OPTIONS if k in loader and k != "path"}
                columns = file_columns(loader["path"], options, f"dataset_options.{ds}")
                named = f"; feature {found.group(1)} is the column {columns[int(found.group(1))]!r}"
            raise ConfigError(f"{exc} (the file {loader['path']!r} has {d} columns as read: `columns` and "
                              f"`drop_columns` choose them{named})") from None  # fmt: skip


def check_prepared_dataset(config: dict[str, Any], ds: str) -> None:
    """Checks of one data set the pipeline prepares and splits (for the journal run or for an experiment that
    names it): loader options that do something, at least one row per agent, a topology that exists.
    Raises :class:`ConfigError` naming the key."""
    merged = dataset_config(config, ds)
    source = merged["dataset"]["source"]
    if source == "file":
        check_file_dataset(config, ds)
    accepted = accepted_options(ds, source)
    loader = {k for k in config["dataset_options"].get(ds, {}) if k not in (*GLOBAL_SECTIONS, "methods")}
    useless = sorted(loader - {"source", "normalization", "public_bounds"} - set(accepted))
    if useless:
        raise ConfigError(
            f"dataset_options.{ds}.{useless[0]}: does nothing for {ds} with source {source!r} "
            f"(accepted: {list(accepted)}); remove it"
        )
    m, topology = merged["partition"]["m"], merged["network"]["topology"]
    rows = dataset_rows(config, ds)
    if rows is not None and m > rows:
        raise ConfigError(
            f"partition.m = {m} agents but {ds} has {rows} rows; every agent needs a row: use m <= {rows}"
        )
    if topology == "paper_ring" and m != 4:
        where = (
            f"dataset_options.{ds}.partition.m"
            if "partition" in config["dataset_options"].get(ds, {})
            else "partition.m"
        )
        raise ConfigError(f"network.topology: paper_ring needs {where} = 4 (got {m}); use topology: ring")
    try:  # the mixing matrix is cheap: build it now, so an impossible topology fails the dry run
        W = mixing_matrix(topology, m, seed=merged["network"]["seed"], edge_prob=merged["network"].get("edge_prob"))
        validate_mixing_matrix(W, key="network")
    except DDPPMError as exc:
        raise ConfigError(f"{ds}: {exc}") from None
