"""The certificate of a release (``PrivatePCA.privacy_``): what is promised, to whom, and how it was composed.

One record's replacement (adjacency ``replace_one``: any record replaced by any other inside the declared bounds)
changes, from the view of the trust model's observer, the releases listed in ``releases``: the private
preprocessing's (the private box's histograms, the sums, the sums of squares, the norms' histogram that sets the
clipping radius: one record's party releases them) and
the method's. Gaussian releases compose exactly in μ² (μ-GDP, Dong, Roth & Su 2022); a pure ε_m-DP method composes
with them as randomised response does (:func:`ddppm.common_task.budget.pure_and_gaussian_delta`). The δ at ε is
exact for the μ (an upper bound over every neighbour: sensitivity plus composition), docs/release.md says more.

The check: OpenDP's own privacy map (zCDP) of each Gaussian release at its sensitivity and noise, summed, equals
``μ²/2`` (:func:`opendp_check`), and OpenDP's conversion of that ρ to (ε, δ), a looser bound, is given beside.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ddppm.common_task.base import Calibrated, GaussianRelease, failure_delta, releases_mu
from ddppm.common_task.preprocessing import PreprocessingNoise
from ddppm.release.noise import OPENDP_SAMPLER, opendp_module, opendp_rho

ADJACENCY = "replace_one: one record replaced by any other record inside the declared bounds"
SCOPE = "raw_records"
GDP_COMPOSITION = "exact μ-GDP composition of Gaussian releases (Dong, Roth & Su 2022)"
PURE_COMPOSITION = ("pure ε_m-DP method ∘ μ-GDP preprocessing, exact (randomised response dominates the pure "
                    "mechanism: Kairouz, Oh & Viswanath 2015)")  # fmt: skip


def composition_words(pure_dp: bool, eps: float, test_failure: float) -> str:
    """How the certified δ is composed: μ-GDP (or a pure method with μ-GDP preprocessing), plus, for a method with a
    propose-test-release test that fails with probability at most ``test_failure``, the
    :func:`~ddppm.common_task.base.failure_delta` it adds to δ."""
    words = PURE_COMPOSITION if pure_dp else GDP_COMPOSITION
    if test_failure > 0:
        words += (f"; plus (1 + e^ε)·{test_failure:g} = {failure_delta(eps, test_failure):.4g} for a test that fails "
                  f"with probability at most {test_failure:g} (propose-test-release)")  # fmt: skip
    return words


STATISTICS_WORDS = {
    "mean_on_bound": "mean on its declared bound (projected)",
    "variance_on_floor": "variance on its public floor, the scale set by the noise, not the data",
    "variance_on_bound": "variance cut to its largest possible value, the half-width squared (projected)",
}

NOISE_WORDS = {
    "secure": f"secure: {OPENDP_SAMPLER}; public randomness (starts) from numpy",
    "simulation": "simulation: numpy floating-point Gaussians; reproducible, NOT for releasing real data",
}


@dataclass(frozen=True)
class Certificate:
    """``privacy_`` of a fitted :class:`~ddppm.release.estimator.PrivatePCA` (module docstring). ``delta`` is the
    certified δ at ``epsilon`` of everything released, ``delta_target`` what was asked."""

    epsilon: float
    delta: float
    delta_target: float
    adjacency: str
    trust: str
    method: str
    method_label: str
    method_source: str
    method_trust_model: str
    method_choice: str
    observer: str
    parties: int
    preprocessing_party: str
    scope: str
    n: int
    d: int
    k: int
    bounds: str
    noise: str
    composition: str
    mu: float
    releases: tuple[dict[str, Any], ...]
    check: dict[str, Any] = field(default_factory=dict)
    statistics: dict[str, list[int]] = field(default_factory=dict)
    """The features whose released mean or variance was projected onto what the bounds allow, or raised to the
    variances' public floor (:func:`~ddppm.common_task.preprocessing.projection_notes`): post-processing, no cost."""

    def __str__(self) -> str:
        """The certificate as a person reads it: the promise, its scope, and each release."""
        lines = [f"(ε = {self.epsilon:g}, δ = {self.delta:.4g})-DP, certified (target δ = {self.delta_target:g}), "
                 f"for {self.adjacency}; scope {self.scope}", f"trust: {self.trust} (the method needs "
                 f"{self.method_trust_model}); observer: {self.observer}",
                 f"method: {self.method_label} [{self.method}] ({self.method_source}); {self.method_choice}",
                 f"noise: {self.noise}", f"bounds: {self.bounds}",
                 f"composition: {self.composition}: μ = {self.mu:.4g}"]  # fmt: skip
        lines += [f"  {r['stage']}: Δ = {r['sensitivity']:.4g}, σ = {r['sigma']:.4g}, × {r['count']}"
                  for r in self.releases]  # fmt: skip
        lines += [f"released statistics: {STATISTICS_WORDS[key]}: features {features}"
                  for key, features in self.statistics.items()]  # fmt: skip
        check = self.check
        lines.append(f"OpenDP's map: ρ = {check['opendp_rho']:.6g} (ours μ²/2 = {check['rho_from_mu']:.6g}, "
                     f"{'agrees' if check['agrees'] else 'DISAGREES'}); its own δ at ε: {check['opendp_delta']:.3g}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (floats, strings, lists)."""
        return {key: (list(value) if isinstance(value, tuple) else value) for key, value in asdict(self).items()}


def release_rows(noise: PreprocessingNoise | None, own: Calibrated) -> list[dict[str, Any]]:
    """Each kind of release one record's observer sees: its stage, L2 sensitivity, noise σ, count and μ."""
    stages: list[tuple[str, GaussianRelease]] = []
    if noise is not None:
        stages += noise.stages()
    stages += [("method", r) for r in own.releases]
    return [{"stage": stage, "sensitivity": r.sensitivity, "sigma": r.sigma, "count": r.count,
             "mu": float(r.count**0.5 * r.sensitivity / r.sigma)} for stage, r in stages]  # fmt: skip


def opendp_check(releases: Sequence[dict[str, Any]], eps: float) -> dict[str, Any]:
    """OpenDP's map of every Gaussian release composed (zCDP adds): its ρ, ours (μ²/2), whether they agree, and
    OpenDP's own (ε, δ) conversion of its ρ (valid, looser than the exact GDP δ; NaN where that conversion
    overflows, as it does at ε of the order of 10⁴)."""
    if not releases:
        return {"opendp_rho": 0.0, "rho_from_mu": 0.0, "agrees": True, "opendp_delta": 0.0}
    rho = sum(r["count"] * opendp_rho(r["sensitivity"], r["sigma"]) for r in releases)
    ours = sum(r["mu"] ** 2 for r in releases) / 2
    dp = opendp_module()
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    unit = [dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=r["sigma"] / r["sensitivity"])
            for r in releases for _ in range(int(r["count"]))]  # fmt: skip
    profile = dp.c.make_zCDP_to_approxDP(dp.c.make_composition(unit)).map(1.0)
    try:
        opendp_delta = float(profile.delta(float(eps)))
    except dp.OpenDPException:  # its conversion computes e^x in floats: at large ε (10⁴) it overflows
        opendp_delta = float("nan")
    return {"opendp_rho": float(rho), "rho_from_mu": float(ours), "agrees": bool(np.isclose(rho, ours, rtol=1e-9)),
            "opendp_delta": opendp_delta}  # fmt: skip


def composed_mu(noise: PreprocessingNoise | None, own: Calibrated) -> float:
    """μ of every Gaussian release composed (the preprocessing's and the method's)."""
    releases = (*(noise.releases if noise is not None else ()), *own.releases)
    return float(releases_mu(releases)) if releases else 0.0
