"""Deliberately broken copies of a method that the audit must catch (its power). They live only here, in the tests
and in the audit's config, never in the method registry.

* ``noise_third``: σ one third of its calibrated value;
* ``half_sensitivity``: the sensitivity taken for the wrong adjacency, Δ/2 (dp-accounting's issue #378 is this
  factor 2: replace-one against add/remove), so every noise scale is halved;
* ``no_noise``: the release without its noise (the journal D-DP-PM's first release is such a release);
* ``one_release`` (CAPE only): σ_z calibrated for one release instead of the aggregator's whole view;
* ``no_first_noise`` (the certified D-DP-PM only): its first release without noise, the journal algorithm's leak.

A mutant keeps its method's claim, and the audit scores it with the method's test *as specified* (the claimed
calibration), so nothing of the bug is told to the attack.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ddppm.common_task.base import CommonTaskMethod
from ddppm.common_task.task import CommonTask
from ddppm.methods.cape import CAPE
from ddppm.methods.certified.algorithm import draw
from ddppm.methods.certified.method import CertifiedDDPPM, common_params, network_view

MUTANTS = {"noise_third": 1.0 / 3.0, "half_sensitivity": 0.5, "no_noise": 0.0}
"""Each mutant's factor on the method's calibrated noise scale."""

OPERATING_POINTS = {"analyze_gauss/no_noise": (2.0, 1e-5, 2_000), "analyze_gauss/noise_third": (2.0, 1e-5, 10_000),
                    "analyze_gauss/half_sensitivity": (2.0, 1e-5, 50_000),
                    "ddppm_certified/no_first_noise": (2.0, 1e-5, 2_000),
                    "ppm_theirs_sqrt2/noise_third": (2.0, 1e-5, 10_000)}  # fmt: skip
"""(claimed ε, δ, counted draws per side) at which the audit flags each mutant (tested on a small witness pair). The
true ε of AnalyzeGauss's mutants at δ = 1e-5 are ∞, 7.1 and 4.4 against the claimed 2; halving σ is the hardest to
see: at 4,000 draws the bound (about 2.0) does not clear the claim. The certified D-DP-PM without noise on its first
release is told apart with certainty by that release's own term (its likelihood ratio is infinite), so the bound is
limited by the counts alone, ln(N / ln 40) ≈ 6.3 at N = 2,000."""


class ScaledNoise:
    """A method whose calibrated noise (``params["sigma"]``) is multiplied by ``factor``, its claim unchanged."""

    def __init__(self, method: Any, factor: float, mutant: str) -> None:
        self.method, self.factor, self.mutant = method, float(factor), mutant
        self.trust_model, self.audit_witness = method.trust_model, method.audit_witness
        self.claimed: Any = None

    def common_calibrate(self, task: CommonTask, eps: float, delta_limit: float, options: dict[str, Any]) -> Any:
        self.claimed = self.method.common_calibrate(task, eps, delta_limit, options)
        sigma = self.claimed.params["sigma"] * self.factor
        return replace(self.claimed, params={**self.claimed.params, "sigma": sigma})

    def common_view(self, task: CommonTask, calibrated: Any, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        return self.method.common_view(task, calibrated, rngs)

    def common_view_scores(self, first: CommonTask, second: CommonTask, calibrated: Any, views: np.ndarray) -> Any:
        """The method's own statistics at its *claimed* calibration."""
        return self.method.common_view_scores(first, second, self.claimed, views)


class OneReleaseAccounting(ScaledNoise):
    """CAPE with σ_z calibrated for one release, not for the aggregator's whole view of all m releases: its noise is
    ``sqrt((m + 1)/(2m))`` of the certified one (:func:`ddppm.methods.cape.view_leakage`)."""

    def __init__(self, method: Any) -> None:
        super().__init__(method, 1.0, "one_release")

    def common_calibrate(self, task: CommonTask, eps: float, delta_limit: float, options: dict[str, Any]) -> Any:
        self.factor = float(np.sqrt((task.m + 1) / (2 * task.m)))
        return super().common_calibrate(task, eps, delta_limit, options)


class FirstReleaseWithoutNoise(ScaledNoise):
    """The certified D-DP-PM whose first release carries no noise (``z^(1) = X_jᵀX_j B⁰``, what the journal's
    Algorithm 1 releases), every later release and the claim unchanged."""

    def __init__(self, method: Any) -> None:
        super().__init__(method, 1.0, "no_first_noise")

    def common_view(self, task: CommonTask, calibrated: Any, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        params = common_params(task, calibrated)
        draws = draw(rngs, params.T, task.m, task.d, task.k)
        draws.G[0] = 0.0
        return network_view(task, params, draws)


def has_exact_scores(method: Any) -> bool:
    """True when ``method`` (or the method a mutant breaks) gives its view's likelihood ratio
    (:meth:`ddppm.common_task.base.CommonTaskMethod.common_view_scores`)."""
    target = method.method if isinstance(method, ScaledNoise) else method
    return type(target).common_view_scores is not CommonTaskMethod.common_view_scores


SPECIFIC = {"one_release": (CAPE, OneReleaseAccounting), "no_first_noise": (CertifiedDDPPM, FirstReleaseWithoutNoise)}
"""The mutants that break one method's own accounting or algorithm: name → (that method's class, the mutant's)."""


def mutant(method: Any, name: str) -> ScaledNoise:
    """The mutant ``name`` (:data:`MUTANTS` or :data:`SPECIFIC`) of ``method``."""
    if name in SPECIFIC:
        if not isinstance(method, SPECIFIC[name][0]):
            raise ValueError(f"audit.mutants: {name!r} breaks {SPECIFIC[name][0].name!r} only, not {method.name!r}")
        return SPECIFIC[name][1](method)
    if name not in MUTANTS:
        raise ValueError(f"audit.mutants: unknown mutant {name!r}; known: {sorted(MUTANTS) + sorted(SPECIFIC)}")
    return ScaledNoise(method, MUTANTS[name], name)
