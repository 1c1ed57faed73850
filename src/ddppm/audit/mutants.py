"""Deliberately broken copies of a method that the audit must catch (its power). They live only here, in the tests
and in the audit's config, never in the method registry.

* ``noise_third``: σ one third of its calibrated value;
* ``half_sensitivity``: the sensitivity taken for the wrong adjacency, Δ/2 (dp-accounting's issue #378 is this
  factor 2: replace-one against add/remove), so every noise scale is halved;
* ``no_noise``: the release without its noise (the journal D-DP-PM's first release is such a release);
* ``one_release`` (CAPE only): σ_z calibrated for one release instead of the aggregator's whole view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ddppm.common_task.task import CommonTask

MUTANTS = {"noise_third": 1.0 / 3.0, "half_sensitivity": 0.5, "no_noise": 0.0}
"""Each mutant's factor on the method's calibrated noise scale."""

OPERATING_POINTS = {"no_noise": (2.0, 1e-5, 2_000), "noise_third": (2.0, 1e-5, 10_000),
                    "half_sensitivity": (2.0, 1e-5, 50_000)}  # fmt: skip
"""(claimed ε, δ, counted draws per side) at which the audit flags each mutant of AnalyzeGauss (tested). The true ε of
the mutants at δ = 1e-5 are ∞, 7.1 and 4.4 against the claimed 2; halving σ is the hardest to see: at 4,000 draws
the bound (about 2.0) does not clear the claim."""


class ScaledNoise:
    """A method whose calibrated noise (``params["sigma"]``) is multiplied by ``factor``, its claim unchanged."""

    def __init__(self, method: Any, factor: float, mutant: str) -> None:
        self.method, self.factor, self.mutant = method, float(factor), mutant
        self.trust_model = method.trust_model

    def common_calibrate(self, task: CommonTask, eps: float, delta_limit: float, options: dict[str, Any]) -> Any:
        calibrated = self.method.common_calibrate(task, eps, delta_limit, options)
        return replace(calibrated, params={**calibrated.params, "sigma": calibrated.params["sigma"] * self.factor})

    def common_view(self, task: CommonTask, calibrated: Any, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        return self.method.common_view(task, calibrated, rngs)


class OneReleaseAccounting(ScaledNoise):
    """CAPE with σ_z calibrated for one release, not for the aggregator's whole view of all m releases: its noise is
    ``sqrt((m + 1)/(2m))`` of the certified one (:func:`ddppm.methods.cape.view_leakage`)."""

    def __init__(self, method: Any) -> None:
        super().__init__(method, 1.0, "one_release")

    def common_calibrate(self, task: CommonTask, eps: float, delta_limit: float, options: dict[str, Any]) -> Any:
        self.factor = float(np.sqrt((task.m + 1) / (2 * task.m)))
        return super().common_calibrate(task, eps, delta_limit, options)


def mutant(method: Any, name: str) -> ScaledNoise:
    """The mutant ``name`` (:data:`MUTANTS`) of ``method``."""
    if name == "one_release":
        return OneReleaseAccounting(method)
    if name not in MUTANTS:
        raise ValueError(f"audit.mutants: unknown mutant {name!r}; known: {sorted(MUTANTS)}")
    return ScaledNoise(method, MUTANTS[name], name)
