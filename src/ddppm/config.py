"""The whole configuration: the journal pipeline's schema completed with every registered experiment's section.

:mod:`ddppm.pipeline.config` knows the journal pipeline (datasets, network, methods, threat models) and imports
no experiment; :mod:`ddppm.experiments` knows each other paper's experiment (its schema and cross-key checks).
This module joins the two, so neither imports the other: ``config.yaml`` is validated by :func:`validate_config`
here (the workflow's ``common.smk`` calls it before any job).
"""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

from ddppm.experiments import available_experiments, get_experiment
from ddppm.pipeline import config as pipeline_config


@cache
def config_schema() -> dict[str, Any]:
    """The full schema: :func:`ddppm.pipeline.config.pipeline_schema` with ``experiments`` listing every
    registered experiment and each experiment's section ``<name>`` at the top level."""
    schema = copy.deepcopy(pipeline_config.pipeline_schema())
    experiments = available_experiments()
    schema["properties"]["experiments"]["items"]["enum"] = list(experiments) or [None]
    schema["properties"]["experiments"]["default"] = list(experiments)
    for name, experiment in experiments.items():
        section = {"description": f"settings of experiment `{name}`", **copy.deepcopy(experiment.schema)}
        schema["properties"][name] = {**section, "default": {}}
    return schema


def check_experiments(config: dict[str, Any]) -> None:
    """Each listed experiment's cross-key checks (:meth:`Experiment.check_config` on its section ``<name>``, with
    the whole validated config for what it shares, e.g. the ``threat_models``)."""
    for name in config.get("experiments", []):
        get_experiment(name).check_config(config[name], config)


def config_notes(config: dict[str, Any]) -> list[str]:
    """Every listed experiment's notes on the validated ``config`` (:meth:`Experiment.notes`): what it skips."""
    return [note for name in config.get("experiments", []) for note in get_experiment(name).notes(config[name], config)]


def validate_config(config: dict[str, Any]) -> dict[str, Any]:
    """Validate ``config`` in place against :func:`config_schema`, fill in every default, and run the
    experiments' and the pipeline's cross-key checks; a :class:`~ddppm.core.errors.ConfigError` names the key."""
    return pipeline_config.validate_config(config, config_schema(), extra_checks=(check_experiments,))


CONFIG_REFERENCE_PATH = "config/README.md"
"""Where :func:`config_reference` is written (``python -m ddppm.config``), relative to the repository's root."""


def _resolve(node: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    """``node`` with a ``$ref`` into ``#/definitions/`` replaced by its target (the node's own keys win)."""
    while "$ref" in node:
        target = definitions[node["$ref"].removeprefix("#/definitions/")]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _type_of(node: dict[str, Any], definitions: dict[str, Any]) -> str:
    """A node's type in words: its JSON type or allowed values, with its bounds (``number > 0``, ``one of a, b``)."""
    if "enum" in node:
        return "one of " + ", ".join(f"`{value}`" for value in node["enum"])
    kind = node.get("type", "any")
    kind = " or ".join(kind) if isinstance(kind, list) else kind
    if kind == "array" and isinstance(node.get("items"), dict):
        items = _resolve(node["items"], definitions)
        if items.get("type") == "object" or "properties" in items:
            return "list of objects"
        inner = _type_of(items, definitions)
        return f"list of ({inner})" if " " in inner else f"list of {inner}"
    bounds = [(node.get(key), sign) for key, sign in
              (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<"))]  # fmt: skip
    return ", ".join([kind, *(f"{sign} {value}" for value, sign in bounds if value is not None)])


def _cell(text: str) -> str:
    """One table cell: one line, pipes escaped, and ``<`` outside code spans (``<name>`` is no HTML tag)."""
    parts = " ".join(str(text).split()).replace("|", "\\|").split("`")
    return "`".join(part if i % 2 else part.replace("<", "&lt;") for i, part in enumerate(parts))


def _rows(name: str, node: dict[str, Any], definitions: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(dotted key, type, default, description) of ``node`` and of every key below it (``<name>`` for a key the
    user names, such as a data set)."""
    node = _resolve(node, definitions)
    default = f"`{json.dumps(node['default'], ensure_ascii=False)}`" if "default" in node else ""
    rows = [(f"`{name}`", _type_of(node, definitions), default, node.get("description", ""))]
    for key, child in node.get("properties", {}).items():
        rows += _rows(f"{name}.{key}", child, definitions)
    if isinstance(node.get("additionalProperties"), dict):
        rows += _rows(f"{name}.<name>", node["additionalProperties"], definitions)
    items = node.get("items")
    if isinstance(items, dict) and "properties" in _resolve(items, definitions):
        rows += _rows(f"{name}[]", items, definitions)[1:]
    return rows


def config_reference() -> str:
    """``config/README.md``: every key of the configuration, from :func:`config_schema` (the pipeline's schema, each
    registered method's and each experiment's), with its type, default and description."""
    schema = config_schema()
    definitions = schema.get("definitions", {})
    required = schema.get("required", [])
    lines = [
        "# ddppm's configuration: every key",
        "",
        "<!-- written by `python -m ddppm.config` from the config schemas: do not edit by hand -->",
        "",
        "The workflow reads one YAML file: `config.yaml` at the repository's root when you run `snakemake` there,",
        "or `config/config.yaml`, the same file, in a deployment made by snakedeploy (which copies this folder), or",
        "any file given with `--configfile`. A key you leave out takes the default below; a key the schema does not",
        "know, or a value it does not allow, stops the run before any job starts, with a message naming the key and",
        "the fix. Required: " + ", ".join(f"`{key}`" for key in required) + ".",
        "",
        "`<name>` stands for a name you choose (a data set, a threat model, a method); `a[]` for each element of the",
        "list `a`. The schemas this page is made from: `src/ddppm/pipeline/config.schema.yaml` (the pipeline),",
        "each method's own (`methods.<name>`) and each experiment's `src/ddppm/experiments/<name>.schema.yaml` (the",
        "section `<name>`, run when `experiments` lists it). Rewrite this page after changing one:",
        "`python -m ddppm.config` (a test fails while it is out of date).",
        "",
        _cell(schema.get("description", "")),
    ]
    for key, node in schema["properties"].items():
        node = _resolve(node, definitions)
        lines += ["", f"## `{key}`" + (" (required)" if key in required else ""), ""]
        lines += ["| key | type | default | description |", "|---|---|---|---|"]
        lines += [f"| {' | '.join(_cell(part) for part in row)} |" for row in _rows(key, node, definitions)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m ddppm.config [PATH]``: write :func:`config_reference` to PATH (default ``config/README.md``)."""
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(prog="python -m ddppm.config", description=main.__doc__)
    parser.add_argument("path", nargs="?", default=CONFIG_REFERENCE_PATH, help="where to write it")
    path = Path(parser.parse_args(argv).path)
    path.write_text(config_reference(), encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
