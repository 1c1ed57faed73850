"""The configuration: one schema (with every default), validation with readable errors, per-dataset views.

The schema is ``config.schema.yaml`` beside this module, completed with each registered method's own
schema under ``methods.<name>`` (:attr:`ddppm.methods.Method.config_schema`). Defaults live there and
nowhere else: :func:`validate_config` fills them in. A job's ``params`` are :func:`job_params` of exactly
the keys it reads, so a change elsewhere reruns nothing.
"""

from __future__ import annotations

import copy
import difflib
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator, validators

from ddppm.core.errors import ConfigError, DDPPMError
from ddppm.core.io import config_hash
from ddppm.core.network import mixing_matrix, validate_mixing_matrix
from ddppm.data import PAPER_SHAPES
from ddppm.data.datasets import accepted_options
from ddppm.experiments import available_experiments, experiment_module
from ddppm.methods import available_methods
from ddppm.privacy.threat_models import ACCOUNTINGS, ADJACENCIES, BUILT_IN, VIEWS, threat_model_table

SCHEMA_PATH = Path(__file__).with_name("config.schema.yaml")
GLOBAL_SECTIONS = ("network", "partition", "montecarlo")
"""Sections a dataset may override under ``dataset_options.<name>`` (plus ``methods``)."""


@cache
def config_schema() -> dict[str, Any]:
    """The full schema: the base schema with one ``methods.<name>`` entry per registered method."""
    schema = yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))
    # The threat models' default and allowed values come from their one table, not from a copy in the YAML.
    schema["properties"]["threat_models"]["default"] = {name: tm.as_dict() for name, tm in BUILT_IN.items()}
    allowed = schema["definitions"]["threat_model"]["properties"]
    for key, values in (("view", VIEWS), ("accounting", ACCOUNTINGS), ("adjacency", ADJACENCIES)):
        allowed[key]["enum"] = list(values)
    methods = schema["properties"]["methods"]
    for name, method in available_methods().items():
        if getattr(method, "configured_by", None):
            continue  # its options live in its experiment's section (unknown-key errors point there)
        about = {"description": f"settings of method `{name}` ({method.label})"}
        section = {**about, **copy.deepcopy(method.config_schema)}
        methods["properties"][name] = {**section, "default": {}}
    methods["additionalProperties"] = False
    method_list = schema["definitions"]["montecarlo"]["properties"]["methods"]
    method_list["items"]["enum"] = list(available_methods())
    method_list["default"] = list(available_methods())
    experiments = available_experiments()
    schema["properties"]["experiments"]["items"]["enum"] = list(experiments) or [None]
    schema["properties"]["experiments"]["default"] = list(experiments)
    for name, section in experiments.items():
        schema["properties"][name] = {"description": f"settings of experiment `{name}`", **copy.deepcopy(section)}
        schema["properties"][name]["default"] = {}
    return schema


def _with_defaults(cls):
    """A validator class that also fills in each property's ``default`` (before descending into it)."""
    validate_properties = cls.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for key, sub in properties.items():
                if "default" in sub and key not in instance:
                    instance[key] = copy.deepcopy(sub["default"])
        yield from validate_properties(validator, properties, instance, schema)

    return validators.extend(cls, {"properties": set_defaults})


_DefaultingValidator = _with_defaults(Draft202012Validator)


def _key_of(path) -> str:
    return ".".join(str(p) for p in path) or "<top level>"


def _experiment_of_method(name: str) -> str | None:
    """The experiment that configures registered method ``name`` (``Method.configured_by``), if any."""
    method = available_methods().get(name)
    return getattr(method, "configured_by", None) if method is not None else None


def _readable(error, schema: dict[str, Any]) -> str:
    """One or two lines: the key, what is wrong, and the fix (never the whole schema)."""
    key = _key_of(error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed)) if isinstance(error.instance, dict) else []
        hints = []
        for name in extra:
            close = difflib.get_close_matches(name, allowed, n=1)
            owner = _experiment_of_method(name) if key == "methods" else None
            if owner:
                hints.append(
                    f"`{name}` (it is configured in its experiment's section: `{owner}.method_options.{name}`"
                    + (f" and `{owner}.budget`" if owner == "workshop" else "")
                    + ")"
                )
                continue
            hints.append(f"`{name}`" + (f" (did you mean `{close[0]}`?)" if close else ""))
        where = "the top level" if key == "<top level>" else f"`{key}`"
        allowed_text = f" Allowed keys: {', '.join(allowed)}." if allowed else ""
        return f"unknown key {', '.join(hints)} in {where}.{allowed_text}"
    if error.validator == "enum":
        return f"config key `{key}`: {error.instance!r} is not one of {error.validator_value}."
    if error.validator == "required":
        return f"config is missing required key {error.message.split()[0]} at {_key_of(error.absolute_path)}."
    about = error.schema.get("description")
    return f"config key `{key}`: {error.message}." + (f" The key means: {about}." if about else "")


def _raise_first(validator, instance: Any, schema: dict[str, Any], prefix: str = "") -> None:
    errors = sorted(validator.iter_errors(instance), key=lambda e: (len(e.absolute_path), str(e.absolute_path)))
    if errors:
        lines = [_readable(e, schema) for e in errors[:3]]
        more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
        text = "\n  ".join(lines)
        raise ConfigError(f"invalid configuration{prefix}:\n  {text}{more}")


def validate_config(config: dict[str, Any]) -> dict[str, Any]:
    """Validate ``config`` in place, fill in every default, and run the cross-key checks.

    Per-dataset overrides (``dataset_options.<name>``) are validated against the same section schemas but
    get no defaults injected: an injected default would silently override the global value.
    """
    schema = config_schema()
    overrides = copy.deepcopy(config.get("dataset_options", {}))
    _raise_first(_DefaultingValidator(schema), config, schema)
    config["dataset_options"] = overrides
    plain = Draft202012Validator
    method_schemas = schema["properties"]["methods"]["properties"]
    for ds, options in overrides.items():
        for name, section in (options.get("methods") or {}).items():
            if name not in method_schemas:
                raise ConfigError(
                    f"unknown method `{name}` in `dataset_options.{ds}.methods`; known: {sorted(method_schemas)}"
                )
            _raise_first(plain(method_schemas[name]), section, schema, f" in dataset_options.{ds}.methods.{name}")
    # A config that defines threat models of its own keeps the built-in ones (a same-named entry replaces one).
    config["threat_models"] = {
        name: tm.as_dict() for name, tm in threat_model_table(config.get("threat_models")).items()
    }
    check_config(config)
    return config


def eps_label(eps: float) -> str:
    """How ε appears in file names (``eps~5``, ``eps~0.5``)."""
    return f"{float(eps):g}"


def _merge(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in override.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def canonical(value: Any) -> Any:
    """Key-sorted copy, so that reordering keys in a YAML file is not a parameter change."""
    if isinstance(value, dict):
        return {k: canonical(value[k]) for k in sorted(value)}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    return value


def dataset_config(config: dict[str, Any], dataset: str) -> dict[str, Any]:
    """Everything one dataset's jobs may read: global sections with its overrides merged in.

    Keys: ``dataset`` (loader options), ``network``, ``partition``, ``montecarlo``, ``methods``,
    ``threat_models``, ``epsilons`` and ``delta_limits`` (this dataset's list).
    """
    options = copy.deepcopy(config.get("dataset_options", {}).get(dataset, {}))
    merged = {s: _merge(config.get(s, {}), options.pop(s, {}) or {}) for s in (*GLOBAL_SECTIONS, "methods")}
    loader = config_schema()["definitions"]["dataset_option"]["properties"]
    merged["dataset"] = {**{k: v["default"] for k, v in loader.items() if "default" in v}, **options}
    merged["threat_models"] = copy.deepcopy(config.get("threat_models", {}))
    merged["epsilons"] = [float(e) for e in config["epsilons"]]
    merged["delta_limits"] = [float(d) for d in config["delta_limits"][dataset]]
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


def check_experiments(config: dict[str, Any]) -> None:
    """Each listed experiment's own cross-key checks: ``check_config(section, config)`` in
    ``ddppm.experiments.<name>``, if it defines one (it raises :class:`ConfigError` naming the key
    ``<name>.<key>``); ``config`` is the whole validated config (e.g. its ``threat_models``)."""
    import importlib

    for name in config.get("experiments", []):
        module = importlib.import_module(experiment_module(name))
        check = getattr(module, "check_config", None)
        if check is not None:
            check(config[name], config)


def check_config(config: dict[str, Any]) -> None:
    """Cross-key checks the JSON schema cannot express. Raises :class:`ConfigError` naming the key."""
    check_experiments(config)
    n_eps = len(config["epsilons"])
    labels = [eps_label(e) for e in config["epsilons"]]
    if len(set(labels)) != len(labels):
        raise ConfigError(f"epsilons: {config['epsilons']} has values that print alike ({labels}); make them distinct")
    datasets = list(config["datasets"])
    # Entries for known datasets that are not run are fine (a --configfile merges over config.yaml);
    # an unknown name is a typo that would silently leave the real dataset on its defaults.
    known = config_schema()["properties"]["datasets"]["items"]["enum"]
    for key in ("delta_limits", "dataset_options"):
        unknown = sorted(set(config.get(key, {})) - set(known))
        if unknown:
            close = difflib.get_close_matches(unknown[0], known, n=1)
            hint = f" (did you mean `{close[0]}`?)" if close else ""
            raise ConfigError(f"{key}.{unknown[0]}: unknown dataset{hint}; known datasets are {known}")
    for ds in datasets:
        limits = config.get("delta_limits", {}).get(ds)
        if limits is None:
            raise ConfigError(f"delta_limits.{ds} is missing: give {n_eps} δ limits in (0, 1), one per ε")
        if len(limits) != n_eps:
            raise ConfigError(f"delta_limits.{ds} has {len(limits)} values but epsilons has {n_eps}; give one per ε")
        merged = dataset_config(config, ds)
        source = merged["dataset"]["source"]
        accepted = accepted_options(ds, source)
        loader = {k for k in config["dataset_options"].get(ds, {}) if k not in (*GLOBAL_SECTIONS, "methods")}
        useless = sorted(loader - {"source", "normalization"} - set(accepted))
        if useless:
            raise ConfigError(
                f"dataset_options.{ds}.{useless[0]}: does nothing for {ds} with source {source!r} "
                f"(accepted: {list(accepted)}); remove it"
            )
        m, topology = merged["partition"]["m"], merged["network"]["topology"]
        rows = merged["dataset"].get("n") or (PAPER_SHAPES[ds][0] if merged["dataset"]["source"] == "default" else None)
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
        for name in merged["montecarlo"]["methods"]:
            for tm in merged["methods"].get(name, {}).get("threat_models", []):
                if tm not in merged["threat_models"]:
                    raise ConfigError(
                        f"methods.{name}.threat_models: {tm!r} is not defined under `threat_models` "
                        f"(defined: {sorted(merged['threat_models'])})"
                    )
