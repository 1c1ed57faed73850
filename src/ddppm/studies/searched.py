"""The journal and workshop D-DP-PM in the agents study, where their accountant follows (``agents.searched``).

Their δ can only be searched (data-dependent covariances), so they are no common-task method: at the numbers of
agents of ``searched.ms`` each variant is calibrated to the study's δ limit under a searched threat model (default
``sound``: network view, exact tail, worst neighbour found; Definition 1's hockey-stick δ), by the common task's
own route for them (:func:`ddppm.methods.gossip_base.searched.searched_runs`), and run like every other method.
Their δ is "at least" (privacy column ``searched``): a lower bound, never a certificate.

At every other m of ``agents.ms`` the table has one row per (variant, ε) with no error and a ``note`` that says
why it was not run and the largest m reached: the calibration's cost grows about as m^2.7 (the accountant's
(observer, neighbour) pairs grow as m², each with the m-sized release model; ``benchmarks/bench_scaling.py``), so
past ``searched.ms`` it leaves the studies' budget.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ddppm.common_task.task import CommonTask, chance_error
from ddppm.core.problem import DistributedProblem
from ddppm.methods.gossip_base.searched import searched_runs
from ddppm.pipeline.method_options import method_options, section_defaults
from ddppm.privacy.threat_models import BUILT_IN, resolve

NOT_REACHED = (
    "not run: the searched calibration's cost grows about as m^2.7 (measured at n = 20,000, d = 50: 83 s per "
    "point at m = 4, 436 s at m = 8; benchmarks/bench_scaling.py), so past m = {reached} it leaves the studies' "
    "30-minute budget (studies.agents.searched.ms; largest m reached: {reached})"
)


def searched_context(context: dict[str, Any] | None) -> dict[str, Any]:
    """The config the variants' options come from: ``workshop`` (their options, as on the common task) and
    ``threat_models``; defaults where ``context`` lacks them (a study run outside the pipeline)."""
    context = dict(context or {})
    if "workshop" not in context:
        context["workshop"] = section_defaults("workshop")
    context.setdefault("threat_models", {name: tm.as_dict() for name, tm in BUILT_IN.items()})
    return context


def searched_point(
    section: dict[str, Any], task: CommonTask, label: str, m: int, context: dict[str, Any] | None = None
) -> pd.DataFrame:
    """The searched variants' runs at one point of the agents study (``task``: its rows, agents and network): their
    calibrations and runs where ``m`` is in ``agents.searched.ms``, else one not-reached row per (variant, ε)."""
    cfg = section["agents"]["searched"]
    if not cfg["methods"]:
        return pd.DataFrame()
    eps = [float(e) for e in section["epsilons"]]
    if int(m) not in [int(x) for x in cfg["ms"]]:
        reached = max([int(x) for x in cfg["ms"] if int(x) < int(m)], default=0)
        return not_reached(task, cfg["methods"], eps, float(section["delta"]),
                           NOT_REACHED.format(reached=reached or "none"))  # fmt: skip
    context = searched_context(context)
    name = cfg["threat_model"]
    definitions = {name: resolve(name, context["threat_models"], "studies.agents.searched.threat_model").as_dict()}
    variants = {method: method_options(context["workshop"], method) for method in cfg["methods"]}
    problem = DistributedProblem.from_partition(task.X, list(task.parts), task.W, task.consensus)
    runs, _ = searched_runs(problem, label, eps, float(section["delta"]), variants, name, definitions,
                            int(section["runs"]), int(section["seed"]))  # fmt: skip
    model = definitions[name]
    return runs.assign(note=f"threat model {name}: {model['view']} view, {model['accounting']} tail, "
                            f"{model['adjacency']} neighbour")  # fmt: skip


def not_reached(task: CommonTask, methods: list[str], eps: list[float], delta: float, note: str) -> pd.DataFrame:
    """One row per (variant, ε) in the common task's runs format with no error, ``feasible`` False and ``note``."""
    rows = [
        {"setting": "standard", "dataset": "", "k": 1, "method": method, "trust_model": "gossip",
         "privacy_column": "searched", "eps": e, "delta_limit": delta, "delta": np.nan, "feasible": False,
         "sigma": np.nan, "noise_multiplier": np.nan, "run": 0, "error": np.nan, "captured_variance": np.nan,
         "seconds_per_run": np.nan, "floats_per_agent": 0, "rounds": 0, "memory": "", "note": note}  # fmt: skip
        for method in methods
        for e in eps
    ]
    return pd.DataFrame(rows).assign(chance_error=chance_error(task.d, 1))
