"""A method's options from a config section: the one config service every experiment and study uses.

The experiments' sections are validated against their schemas (``src/ddppm/experiments/<name>.schema.yaml``);
this module reads those files as data, so anything below the experiments (the studies, the common task's runner)
can resolve a section's defaults and a method's options without importing an experiment.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

from ddppm.core.schema import merge, schema_defaults, section_with_defaults, validate
from ddppm.methods import get_method

SCHEMAS = Path(__file__).resolve().parents[1] / "experiments"
"""Where each experiment's section schema lives (``<name>.schema.yaml``)."""


@cache
def _schema(name: str) -> str:
    return (SCHEMAS / f"{name}.schema.yaml").read_text(encoding="utf-8")


def section_schema(name: str) -> dict[str, Any]:
    """The JSON schema of the config section ``name`` (a fresh copy)."""
    return yaml.safe_load(_schema(name))


def section_defaults(name: str, **overrides: Any) -> dict[str, Any]:
    """The section ``name`` with every default of its schema and nested ``overrides`` merged in, validated (not the
    experiment's cross-key checks: :meth:`ddppm.experiments.base.Experiment.default_section` adds them)."""
    return section_with_defaults(section_schema(name), name, overrides)


def method_options(section: dict[str, Any], name: str, experiment: str = "workshop") -> dict[str, Any]:
    """The validated options of method ``name`` in the section ``experiment`` (the workshop's by default: the
    common task and the studies calibrate the searched variants with it): the method's schema defaults, then the
    experiment's defaults for it (``<experiment>.schema.yaml``), then ``<experiment>.method_options.<name>`` key
    by key (so a config that sets one key keeps the experiment's other defaults); a method's
    :attr:`experiment_options` (the workshop D-DP-PM's ``budget``) are merged from the section, and a calibrated
    method gets the section's threat models."""
    method = get_method(name)
    schema = method.config_schema
    options = schema_defaults(schema)
    if method.calibrated:
        defaults = section_schema(experiment)["properties"]["method_options"]["properties"]
        options = merge(options, defaults[name].get("default", {}))
        options = merge(options, section["method_options"].get(name, {}))
    for key in method.experiment_options:
        options[key] = merge(options[key], section[key])
    if method.calibrated:
        options["threat_models"] = list(section["threat_models"])
    validate(options, schema, f"{experiment}.method_options.{name}")
    return options
