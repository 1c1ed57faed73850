"""The accounting engine's config schema (``engine.schema.yaml`` beside this module) and how a method includes it.

Every calibrated gossip method's options hold two sections of the engine: ``privacy`` (the accountant's numerical
choices) and ``calibration`` (the parameter search). :func:`compose_method_schema` builds a method's schema from its
own file plus these two sections, so both D-DP-PM variants share one set of keys and defaults rather than copies.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

ENGINE_SECTIONS = ("privacy", "calibration")
"""The sections of a calibrated method's options that belong to the engine."""

ENGINE_SCHEMA: dict[str, Any] = yaml.safe_load(
    Path(__file__).with_name("engine.schema.yaml").read_text(encoding="utf-8")
)
"""The engine's sections, every default included."""


def engine_default(section: str, key: str) -> Any:
    """The default of ``<section>.<key>`` of the engine's settings (lists as tuples): the one place defaults live
    (the engine's dataclasses take theirs from here)."""
    value = ENGINE_SCHEMA["properties"][section]["properties"][key]["default"]
    return tuple(value) if isinstance(value, list) else value


def floor_default(key: str) -> Any:
    """The default of ``privacy.floor.<key>`` (the parameter-free δ floor's search)."""
    return ENGINE_SCHEMA["properties"]["privacy"]["properties"]["floor"]["properties"][key]["default"]


def compose_method_schema(path: Path) -> dict[str, Any]:
    """A calibrated method's options schema: the schema file ``path`` with the engine's ``privacy`` and
    ``calibration`` sections. Where the method's file has such a section, it stays in place with its description,
    and the engine's keys come before its own; a section it lacks is inserted after ``threat_models``."""
    own = yaml.safe_load(path.read_text(encoding="utf-8"))
    properties: dict[str, Any] = {}
    for name, section in own["properties"].items():
        properties[name] = _engine_section(name, section) if name in ENGINE_SECTIONS else section
        if name == "threat_models":
            missing = [s for s in ENGINE_SECTIONS if s not in own["properties"]]
            properties.update({s: _engine_section(s, None) for s in missing})
    return {**own, "properties": properties}


def _engine_section(name: str, own: dict[str, Any] | None) -> dict[str, Any]:
    engine = copy.deepcopy(ENGINE_SCHEMA["properties"][name])
    if own is None:
        return engine
    return {**own, "properties": {**engine["properties"], **own.get("properties", {})}}
