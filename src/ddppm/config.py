"""The whole configuration: the journal pipeline's schema completed with every registered experiment's section.

:mod:`ddppm.pipeline.config` knows the journal pipeline (datasets, network, methods, threat models) and imports
no experiment; :mod:`ddppm.experiments` knows each other paper's experiment (its schema and cross-key checks).
This module joins the two, so neither imports the other: ``config.yaml`` is validated by :func:`validate_config`
here (the workflow's ``common.smk`` calls it before any job).
"""

from __future__ import annotations

import copy
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
