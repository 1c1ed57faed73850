"""The config schema of the workshop D-DP-PM's options (``workshop.method_options.ddppm_workshop``): its own keys
(``config.schema.yaml`` beside this module) plus the accounting engine's ``privacy`` and ``calibration`` sections
(:func:`ddppm.accounting.schema.compose_method_schema`), shared with the journal method rather than copied."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from ddppm.accounting.schema import compose_method_schema

CONFIG_SCHEMA: dict[str, Any] = compose_method_schema(Path(__file__).with_name("config.schema.yaml"))
"""The JSON schema of the workshop D-DP-PM's options (every default included)."""


def schema_default(section: str, key: str) -> Any:
    """The default of ``<section>.<key>`` of the workshop D-DP-PM's options (lists as tuples)."""
    value = CONFIG_SCHEMA["properties"][section]["properties"][key]["default"]
    return tuple(value) if isinstance(value, list) else value


def section_defaults(section: str) -> dict[str, Any]:
    """Every default of ``<section>`` of the workshop D-DP-PM's options as a dict (what validation would fill in)."""
    props = CONFIG_SCHEMA["properties"][section]["properties"]
    return {k: copy.deepcopy(v["default"]) for k, v in props.items() if "default" in v}
