"""The config schema of the workshop D-DP-PM's options (``workshop.method_options.ddppm_workshop``): its own keys
(``config.schema.yaml`` beside this module) plus the journal method's ``privacy`` and ``calibration`` sections,
shared rather than copied."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from ddppm.methods.ddppm.params import CONFIG_SCHEMA as JOURNAL_SCHEMA


def _compose() -> dict[str, Any]:
    own = yaml.safe_load(Path(__file__).with_name("config.schema.yaml").read_text(encoding="utf-8"))
    props = own["properties"]
    for section in ("privacy", "calibration"):
        shared = copy.deepcopy(JOURNAL_SCHEMA["properties"][section]["properties"])
        props[section]["properties"] = {**shared, **props[section]["properties"]}
    return own


CONFIG_SCHEMA: dict[str, Any] = _compose()
"""The JSON schema of the workshop D-DP-PM's options (every default included)."""


def schema_default(section: str, key: str) -> Any:
    """The default of ``<section>.<key>`` of the workshop D-DP-PM's options (lists as tuples)."""
    value = CONFIG_SCHEMA["properties"][section]["properties"][key]["default"]
    return tuple(value) if isinstance(value, list) else value


def section_defaults(section: str) -> dict[str, Any]:
    """Every default of ``<section>`` of the workshop D-DP-PM's options as a dict (what validation would fill in)."""
    props = CONFIG_SCHEMA["properties"][section]["properties"]
    return {k: copy.deepcopy(v["default"]) for k, v in props.items() if "default" in v}
