"""The other source papers' headline experiments, one module each, each with its own config section.

An experiment ``<name>`` is a module ``ddppm.experiments.<name>`` (its library entry points: data, runs,
tables) and a schema ``<name>.schema.yaml`` beside it. The schema is the config section ``<name>`` at the
top level of ``config.yaml`` and holds every default; ``experiments: [...]`` lists the ones to run, and the
workflow then includes ``workflow/rules/experiments/<name>.smk``. Nothing else names an experiment.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

_HERE = Path(__file__).parent


@cache
def available_experiments() -> dict[str, dict[str, Any]]:
    """Every experiment's config schema, by name (sorted): one ``<name>.schema.yaml`` in this package."""
    return {
        p.name.removesuffix(".schema.yaml"): yaml.safe_load(p.read_text(encoding="utf-8"))
        for p in sorted(_HERE.glob("*.schema.yaml"))
    }


def experiment_module(name: str) -> str:
    """The module of experiment ``name`` (for code-change tracking)."""
    return f"{__name__}.{name}"
