"""Config sections described by JSON schemas: defaults, merging and validation with readable errors.

Every config section of the project (the journal pipeline's, each method's ``methods.<name>``, each
experiment's ``<name>``) is a JSON schema whose ``default`` entries are the only place defaults live. This
module is the one implementation of what all of them need:

* :func:`schema_defaults`: every default of a schema, as a section;
* :func:`merge`: a nested override over a base (dicts merge key by key, anything else replaces);
* :func:`validate`: check a section against its schema (optionally filling in defaults as it goes) and raise a
  :class:`~ddppm.core.errors.ConfigError` that names the config key, what is wrong and the fix;
* :func:`canonical`: a key-sorted copy (reordering keys in a YAML file is no parameter change).
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Callable
from functools import cache
from typing import Any

from ddppm.core.errors import ConfigError


def schema_defaults(schema: dict[str, Any]) -> Any:
    """Every default of ``schema``: an object's own ``default`` with its properties' defaults merged in (objects
    without a default of their own descend too), a leaf's ``default`` otherwise (``None`` if it has none)."""
    if schema.get("type") == "object" and "properties" in schema:
        base = copy.deepcopy(schema.get("default", {})) or {}
        for key, sub in schema["properties"].items():
            if "default" in sub or sub.get("type") == "object":
                value = schema_defaults(sub)
                base[key] = merge(value, base[key]) if isinstance(base.get(key), dict) else value
        return base
    return copy.deepcopy(schema.get("default"))


def merge(base: Any, override: Any) -> Any:
    """``override`` over ``base``, as a new object: where both are dicts they merge key by key (recursively);
    anything else in ``override`` replaces what ``base`` has."""
    if not (isinstance(base, dict) and isinstance(override, dict)):
        return copy.deepcopy(override)
    out = copy.deepcopy(base)
    for key, value in override.items():
        out[key] = merge(out[key], value) if key in out else copy.deepcopy(value)
    return out


def canonical(value: Any) -> Any:
    """Key-sorted copy, so that reordering keys in a YAML file is not a parameter change."""
    if isinstance(value, dict):
        return {k: canonical(value[k]) for k in sorted(value)}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    return value


def _with_defaults(cls):
    """A validator class that also fills in each property's ``default`` (before descending into it)."""
    from jsonschema import validators

    validate_properties = cls.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for key, sub in properties.items():
                if "default" in sub and key not in instance:
                    instance[key] = copy.deepcopy(sub["default"])
        yield from validate_properties(validator, properties, instance, schema)

    return validators.extend(cls, {"properties": set_defaults})


@cache
def validator_class(fill_defaults: bool = False):
    """Draft 2020-12 validation; with ``fill_defaults``, one that fills in every missing property's ``default`` in
    place. Built on first use: jsonschema is imported by the jobs that validate, not by every job (issue 49)."""
    from jsonschema import Draft202012Validator

    return _with_defaults(Draft202012Validator) if fill_defaults else Draft202012Validator


Hint = Callable[[str, str], str | None]
"""``hint(parent_key, unknown_key)``: a sentence pointing an unknown key to where it belongs, or ``None``."""


def _key_of(path, prefix: str = "") -> str:
    parts = [prefix] if prefix else []
    return ".".join(parts + [str(p) for p in path]) or "<top level>"


def readable(error, prefix: str = "", hint: Hint | None = None) -> str:
    """One line for a :mod:`jsonschema` error: the config key, what is wrong and the fix (never the schema).

    ``prefix`` is the section's own key (``workshop``) when the instance is a section; ``hint`` explains an
    unknown key that lives elsewhere (a method configured in its experiment's section, say)."""
    key = _key_of(error.absolute_path, prefix)
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed)) if isinstance(error.instance, dict) else []
        hints = []
        for name in extra:
            elsewhere = hint(key, name) if hint else None
            if elsewhere:
                hints.append(f"`{name}` ({elsewhere})")
                continue
            close = difflib.get_close_matches(name, allowed, n=1)
            hints.append(f"`{name}`" + (f" (did you mean `{close[0]}`?)" if close else ""))
        where = "the top level" if key == "<top level>" else f"`{key}`"
        allowed_text = f" Allowed keys: {', '.join(allowed)}." if allowed else ""
        return f"unknown key {', '.join(hints)} in {where}.{allowed_text}"
    if error.validator == "enum":
        return f"config key `{key}`: {error.instance!r} is not one of {error.validator_value}."
    if error.validator == "required":
        return f"config is missing required key {error.message.split()[0]} at {key}."
    about = error.schema.get("description")
    return f"config key `{key}`: {error.message}." + (f" The key means: {about}." if about else "")


def validate(
    instance: Any,
    schema: dict[str, Any],
    key: str = "",
    fill_defaults: bool = False,
    hint: Hint | None = None,
    context: str = "",
) -> None:
    """Validate ``instance`` (the config section at ``key``; ``""`` for the whole config) against ``schema``;
    with ``fill_defaults`` every missing default is filled in place first. Raises :class:`ConfigError` listing
    the first three problems, each naming its full config key (``context`` is appended to the first line)."""
    validator = validator_class(fill_defaults)(schema)
    errors = sorted(validator.iter_errors(instance), key=lambda e: (len(e.absolute_path), str(e.absolute_path)))
    if errors:
        lines = [readable(e, key, hint) for e in errors[:3]]
        more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
        text = "\n  ".join(lines)
        raise ConfigError(f"invalid configuration{context}:\n  {text}{more}")


def section_with_defaults(schema: dict[str, Any], key: str, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The section ``key`` with every default of ``schema``, nested ``overrides`` merged in, validated."""
    section = merge(schema_defaults(schema), overrides or {})
    validate(section, schema, key)
    return section
