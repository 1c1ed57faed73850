"""The base both D-DP-PM variants stand on: a gossip method calibrated by the accounting engine.

A subclass says how it calibrates under one threat model (:meth:`Method.calibrate`), how it runs
(:meth:`Method.run_errors`) and, for the common task's searched rows, how it calibrates by the common task's error
and what it estimates there (:meth:`searched_calibrate`, :meth:`searched_estimates`;
:func:`ddppm.methods.gossip_base.searched.searched_runs` runs them). Everything else is here.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ddppm.core.problem import DistributedProblem
from ddppm.methods.base import Method

if TYPE_CHECKING:
    from ddppm.methods.gossip_base.searched import SearchedCalibration


class CalibratedGossipMethod(Method):
    """A decentralised method whose parameters the accounting engine calibrates (:mod:`ddppm.accounting`)."""

    calibrated = True
    trust_model = "gossip"

    def choose_params(
        self, problem: DistributedProblem, eps: np.ndarray, delta_limits: np.ndarray, options: dict[str, Any]
    ) -> pd.DataFrame:
        """Calibrate in one process under every threat model of ``options`` (the built-in definitions); the
        workflow shards this into one job per (data set, threat model)."""
        frames = [self.calibrate(problem, eps, delta_limits, options, name)[0] for name in options["threat_models"]]
        return pd.concat(frames, ignore_index=True)

    @abstractmethod
    def searched_calibrate(self, job: SearchedCalibration) -> pd.DataFrame:
        """The parameter table on the common task under the job's searched threat model, chosen by the common
        task's error, with ``delta_standard``: the hockey-stick δ of the worst neighbour found."""

    @abstractmethod
    def searched_estimates(
        self, problem: DistributedProblem, row: pd.Series, rngs: Sequence[np.random.Generator]
    ) -> np.ndarray:
        """Agent 0's estimates of the common task's ``v`` at a calibration row's parameters, ``(R, d, 1)``."""
