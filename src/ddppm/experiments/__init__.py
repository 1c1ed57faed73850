"""The other source papers' headline experiments, one module each, each with its own config section.

The contract and the registry are in :mod:`ddppm.experiments.base`: an experiment is its module, its schema
``<name>.schema.yaml`` beside it and its rule file ``workflow/rules/experiments/<name>.smk`` (at most four files
with its own docs page or caption; the older experiments have their own scripts too). Nothing else names an
experiment.
"""

from ddppm.experiments.base import (
    Experiment,
    available_experiments,
    experiment_step,
    get_experiment,
    register_experiment,
)

__all__ = ["Experiment", "available_experiments", "experiment_step", "get_experiment", "register_experiment"]
