"""The workshop D-DP-PM's privacy budget: the split ε₁ : ε_i, the final Gaussian mechanism and the composition.

The paper (§3.1, after Theorem 1) releases the iterations with ``(ε_i, δ_i)`` per agent and the final vector with
a Gaussian mechanism at ``(ε₁, δ₁)``, and composes:

    ε = max_i ε_i + ε₁,        δ = max_i δ_i + δ₁.

It says that "giving the majority of ε to ε₁" helps accuracy but gives no split, no δ₁ and no value of the
sensitivity ``Δ_q``. Here they are config values (``workshop.budget``), recorded in every table:

* ``ε₁ = eps_final_share · ε`` and ``ε_i = ε − ε₁`` for every agent;
* ``δ₁ = delta_final_share · δ_limit``; the iterations must then meet ``max_i δ_i(ε_i) ≤ δ_limit − δ₁``;
* the final noise ``σ_{u,i} = Δ_q · σ(ε₁, δ₁) · α‖z_i^(T+1/2)‖`` (:mod:`.algorithm`): ``σ(ε₁, δ₁)`` is the noise of a
  Gaussian mechanism of sensitivity 1, either the paper's classic ``sqrt(2 ln(1.25/δ₁))/ε₁`` (Dwork & Roth,
  Theorem A.1, proven for ε₁ < 1 only) or the exact analytic one (Balle & Wang 2018), valid for every ε₁.
  ``final_mechanism: by_accounting`` takes the classic one under the Chernoff accounting (the paper's own
  reading) and the analytic one under the exact accounting, where δ₁ must be the true δ of the release.

The composition is the basic (adaptive) composition theorem (Dwork & Roth, Theorem 3.16): the final noise scale
depends on the released ``z``'s, which is allowed because the second mechanism may be chosen after seeing the
first one's output.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ddppm.core.errors import ConfigError
from ddppm.methods.workshop.schema import schema_default
from ddppm.privacy.mechanisms import analytic_gaussian_delta, analytic_gaussian_sigma, classic_gaussian_sigma

FINAL_MECHANISMS = ("by_accounting", "classic", "analytic")


@dataclass(frozen=True)
class BudgetSplit:
    """``ε₁ = eps_final_share·ε``, ``δ₁ = delta_final_share·δ_limit``, ``Δ_q`` and the final mechanism (module doc)."""

    eps_final_share: float = schema_default("budget", "eps_final_share")
    delta_final_share: float = schema_default("budget", "delta_final_share")
    delta_q: float = schema_default("budget", "delta_q")
    final_mechanism: str = schema_default("budget", "final_mechanism")

    def __post_init__(self) -> None:
        key = "workshop.budget"
        if not 0 < self.eps_final_share < 1:
            raise ConfigError(f"{key}.eps_final_share must lie in (0, 1), got {self.eps_final_share!r}")
        if not 0 < self.delta_final_share < 1:
            raise ConfigError(f"{key}.delta_final_share must lie in (0, 1), got {self.delta_final_share!r}")
        if not (np.isfinite(self.delta_q) and self.delta_q >= 1):
            raise ConfigError(
                f"{key}.delta_q must be >= 1 (a multiple of the exact row-change bound α‖z_i^(T+1/2)‖; "
                f"below 1 it understates the sensitivity), got {self.delta_q!r}"
            )
        if self.final_mechanism not in FINAL_MECHANISMS:
            raise ConfigError(f"{key}.final_mechanism must be one of {FINAL_MECHANISMS}, got {self.final_mechanism!r}")

    @classmethod
    def from_config(cls, budget: dict) -> BudgetSplit:
        """From the validated section ``workshop.budget``."""
        return cls(
            eps_final_share=float(budget["eps_final_share"]),
            delta_final_share=float(budget["delta_final_share"]),
            delta_q=float(budget["delta_q"]),
            final_mechanism=str(budget["final_mechanism"]),
        )

    def mechanism(self, accounting: str) -> str:
        """``classic`` or ``analytic``: the final Gaussian mechanism under an accounting (module doc)."""
        if self.final_mechanism != "by_accounting":
            return self.final_mechanism
        return "analytic" if accounting == "exact" else "classic"

    def split(self, eps, delta_limits) -> dict[str, np.ndarray]:
        """``eps_iterations = ε − ε₁``, ``eps_final = ε₁``, ``delta_final = δ₁`` and ``delta_iterations_limit``."""
        eps = np.asarray(eps, float)
        limits = np.asarray(delta_limits, float)
        eps_final = self.eps_final_share * eps
        delta_final = self.delta_final_share * limits
        return {
            "eps_iterations": eps - eps_final,
            "eps_final": eps_final,
            "delta_final": delta_final,
            "delta_iterations_limit": limits - delta_final,
        }

    def unit_sigma(self, eps_final: float, delta_final: float, accounting: str) -> float:
        """``σ(ε₁, δ₁)`` of a Gaussian mechanism of sensitivity 1 (classic or analytic, :meth:`mechanism`)."""
        sigma = classic_gaussian_sigma if self.mechanism(accounting) == "classic" else analytic_gaussian_sigma
        return float(sigma(float(eps_final), float(delta_final)))

    def noise_factors(self, eps, delta_limits, accounting: str) -> np.ndarray:
        """``f = Δ_q σ(ε₁, δ₁)`` for each ε: the final noise is ``σ_{u,i} = f α‖z_i^(T+1/2)‖``."""
        parts = self.split(eps, delta_limits)
        return np.array(
            [
                self.delta_q * self.unit_sigma(e1, d1, accounting)
                for e1, d1 in zip(parts["eps_final"], parts["delta_final"], strict=True)
            ]
        )

    def final_delta_actual(self, eps_final: float, noise_factor: float) -> float:
        """The exact δ at ε₁ of the final release (Balle & Wang 2018, Theorem 8) for noise ``f`` in units of
        the true sensitivity, ``Δ/σ = 1/f``: equal to δ₁ for the analytic mechanism, above it for the classic
        one at ε₁ ≥ 1 (and below ``δ₁`` when ``Δ_q > 1``)."""
        return analytic_gaussian_delta(float(noise_factor), float(eps_final))


def compose(eps_iterations, delta_iterations, eps_final, delta_final) -> tuple[np.ndarray, np.ndarray]:
    """``(ε, δ) = (max_i ε_i + ε₁, max_i δ_i + δ₁)`` (paper, after Theorem 1). The maxima over agents are taken by
    the accountant (worst observer); here ``ε_i`` is the same for every agent."""
    return (
        np.asarray(eps_iterations, float) + np.asarray(eps_final, float),
        np.asarray(delta_iterations, float) + np.asarray(delta_final, float),
    )
