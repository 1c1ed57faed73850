"""One (ε, δ) for the whole route: the preprocessing's releases composed exactly with the method's.

The target (ε, δ) of a run is ``μ*``-GDP with ``μ*`` the GDP parameter whose δ at ε is δ (Dong, Roth & Su 2022;
:func:`gdp_mu`). Gaussian releases compose exactly in μ², so a share ``s`` of ``μ*²`` goes to the preprocessing
(``μ_pre = √s μ*``) and the rest to the method (``μ_method = √(1 − s) μ*``): together exactly ``μ*``, hence
exactly δ at ε (:func:`split_budget`). A method calibrated by its own accounting to ``(ε, δ_method)`` with
``δ_method = δ_{μ_method}(ε)`` (:func:`method_target`; where that underflows, a point of the same curve:
:func:`method_pair`) then composes with the preprocessing to the target; its
rows record the δ of everything composed (:func:`end_to_end_delta`), so a method whose own calibration is not
exactly GDP shows as infeasible rather than passing unnoticed.

A pure ε_m-DP method (Amin et al.'s sampler) is dominated by randomised response with ε_m (Kairouz, Oh &
Viswanath 2015), and the composition of randomised response with a μ-GDP mechanism has, exactly,

    δ(ε) = p δ_μ(ε − ε_m) + (1 − p) δ_μ(ε + ε_m),      p = e^{ε_m} / (1 + e^{ε_m}),

with ``δ_μ(x) = Φ(μ/2 − x/μ) − e^x Φ(−μ/2 − x/μ)`` (valid for every real x): the privacy loss of the pair is
that of the Gaussian shifted by ±ε_m (:func:`pure_and_gaussian_delta`). :func:`pure_method_eps` solves it for ε_m.
``tests/common_task/test_budget.py`` checks both against dp-accounting's PLD accountant.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ddppm.common_task.certified import certified_delta, noise_multiplier
from ddppm.core.errors import PrivacyError
from ddppm.privacy.mechanisms import SAFE_SIDE


def gdp_mu(eps: float, delta: float) -> float:
    """The μ whose μ-GDP guarantee has exactly δ at ε: ``1 / (the analytic Gaussian σ/Δ of one release)``."""
    return 1.0 / noise_multiplier(eps, delta)


@dataclass(frozen=True)
class BudgetSplit:
    """``mu_total`` (the target's μ), the preprocessing's ``mu_pre`` and the method's ``mu_method``, with
    ``mu_pre² + mu_method² = mu_total²``."""

    mu_total: float
    mu_pre: float
    mu_method: float


def split_budget(eps: float, delta: float, share: float) -> BudgetSplit:
    """Give ``share`` of the target's μ² to the preprocessing and the rest to the method (module docstring)."""
    if not 0 <= share < 1:
        raise PrivacyError(f"preprocessing share must be in [0, 1), got {share!r} (the method needs some budget)")
    mu = gdp_mu(eps, delta)
    return BudgetSplit(mu, float(np.sqrt(share) * mu), float(np.sqrt(1 - share) * mu))


def pure_and_gaussian_delta(eps_pure: float, mu: float, eps: float) -> float:
    """δ at ε of a pure ``eps_pure``-DP mechanism composed with a ``mu``-GDP one (module docstring): exact, for
    every neighbour, the worst pure mechanism being randomised response."""
    if mu <= 0:
        return float(max(0.0, 1.0 - np.exp(eps - eps_pure)) if eps_pure > eps else 0.0)
    p = 1.0 / (1.0 + np.exp(-eps_pure))  # δ_μ(x) is certified_delta(μ, x), valid for negative x too
    return float(p * certified_delta(mu, eps - eps_pure) + (1 - p) * certified_delta(mu, eps + eps_pure))


def pure_method_eps(eps: float, delta: float, mu_pre: float) -> float:
    """The largest ε_m ≤ ε with :func:`pure_and_gaussian_delta` ``(ε_m, μ_pre, ε) ≤ δ``: the pure method's share
    of the target once the preprocessing has spent ``μ_pre``."""
    from scipy.optimize import brentq

    def excess(eps_m: float) -> float:
        return pure_and_gaussian_delta(eps_m, mu_pre, eps) - delta

    if excess(0.0) > 0:
        raise PrivacyError(f"the preprocessing alone (μ = {mu_pre:.4g}) exceeds δ = {delta:g} at ε = {eps:g}")
    if excess(eps) <= 0:
        return float(eps)
    if excess(0.0) > -SAFE_SIDE * delta:
        raise PrivacyError(f"the preprocessing alone (μ = {mu_pre:.4g}) uses all of δ = {delta:g} at ε = {eps:g}")
    eps_m = float(brentq(excess, 0.0, eps, xtol=1e-13, rtol=1e-13))
    for step in range(64):  # brentq's root may be a hair above δ: step down to SAFE_SIDE below it (as the Gaussian's)
        if excess(eps_m) <= -SAFE_SIDE * delta:
            return eps_m
        eps_m = max(0.0, eps_m - 1e-13 * 2.0**step * eps)
    raise PrivacyError(f"no pure ε_m below ε = {eps:g} meets δ = {delta:g} after the preprocessing (μ = {mu_pre:.4g})")


def method_target(eps: float, delta: float, mu_pre: float) -> float:
    """The δ at ε a Gaussian method is calibrated to once the preprocessing spent ``μ_pre``: that of
    ``μ_method = √(μ*² − μ_pre²)`` (module docstring)."""
    mu_star = gdp_mu(eps, delta)
    if mu_pre >= mu_star:
        raise PrivacyError(f"the preprocessing's μ = {mu_pre:.4g} uses the whole budget μ* = {mu_star:.4g}")
    return certified_delta(float(np.sqrt(mu_star**2 - mu_pre**2)), eps)


SMALLEST_DELTA = 1e-300
"""Below this a method's δ at the target's ε has underflowed (or nearly): :func:`method_pair` moves along the curve."""


def method_pair(eps: float, delta: float, mu_pre: float) -> tuple[float, float]:
    """The (ε_m, δ_m) a Gaussian method is calibrated to once the preprocessing spent ``μ_pre``: a point of
    ``μ_method``'s curve ε ↦ δ_{μ_method}(ε), which every point of that curve names alike for a Gaussian calibration.

    Normally ``(ε, δ_{μ_method}(ε))`` (:func:`method_target`). At large ε that δ underflows (10⁻¹³⁵ at ε = 10⁴,
    δ = 10⁻⁵, share 0.25; 0 in double precision from ε ≈ 3·10⁴), so the pair is then ``(ε_m, δ)`` with ε_m < ε
    the ε at which the same curve has the target's δ. The row's δ is composed from the releases' μ either way."""
    delta_method = method_target(eps, delta, mu_pre)
    if delta_method >= SMALLEST_DELTA:
        return float(eps), delta_method
    from scipy.optimize import brentq

    mu_method = float(np.sqrt(gdp_mu(eps, delta) ** 2 - mu_pre**2))
    eps_method = brentq(lambda x: np.log(certified_delta(mu_method, x) + 1e-320) - np.log(delta), 0.0, eps,
                        xtol=1e-12 * eps, rtol=1e-14)  # fmt: skip
    return float(eps_method), float(delta)


def end_to_end_delta(eps: float, mu_method: float, mu_pre: float) -> float:
    """δ at ε of a ``mu_method``-GDP method after a ``mu_pre``-GDP preprocessing (exact: μ² adds)."""
    return certified_delta(float(np.hypot(mu_method, mu_pre)), eps)
