"""Private preprocessing with a declared share of the budget (docs/privacy.md, "What is public").

After the public preparation (:func:`ddppm.data.public_prep.prepare_public`: rows in the unit ball, each a
function of its own record and the declared bounds), centring at the data's mean reads every row, so it is a
mechanism: the Gaussian mechanism on the mean of the rows. One replaced record moves one row by at most 2 in L2
norm (both lie in the unit ball), so the mean moves by at most Δ = 2/n (n is public under replace-one), and
``mean + N(0, σ² I)`` is ``μ = Δ/σ``-GDP. The centred rows ``clip₁(z_i − mean̂)`` (each row's norm clipped to 1)
depend on row i and the release only: post-processing.

The budget: the target (ε, δ) of a run is ``μ*``-GDP with ``μ*`` the GDP parameter whose δ at ε is δ (Dong, Roth &
Su 2022; :func:`gdp_mu`). Gaussian releases compose exactly in μ², so a share ``s`` of ``μ*²`` goes to the
preprocessing (``μ_pre = √s μ*``) and the rest to the method (``μ_method = √(1 − s) μ*``): together exactly
``μ*``, hence exactly δ at ε (:func:`split_budget`; checked against dp-accounting's PLD accountant). This holds
for a trusted curator who computes the mean; a method with no trusted party needs the mean released locally too
(each agent's noisy sum), which costs more noise (not here yet).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ddppm.common.base import GaussianRelease
from ddppm.common.certified import noise_multiplier
from ddppm.core.errors import PrivacyError


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


def mean_sensitivity(n: int) -> float:
    """L2 sensitivity of the mean of n rows in the unit ball under replace-one: 2/n."""
    return 2.0 / n


def private_centring(Z: np.ndarray, mu: float, rng: np.random.Generator) -> tuple[np.ndarray, GaussianRelease]:
    """Centre the rows ``Z`` (unit ball) at a Gaussian release of their mean with GDP parameter ``mu``, then clip
    each row's norm to 1. Returns the centred rows and the release (sensitivity, σ) for the accounting."""
    Z = np.asarray(Z, float)
    if mu <= 0:
        raise PrivacyError("private centring needs a positive share of the budget (mu > 0)")
    sensitivity = mean_sensitivity(Z.shape[0])
    sigma = sensitivity / mu
    mean_hat = Z.mean(axis=0) + rng.normal(0.0, sigma, Z.shape[1])
    centred = Z - mean_hat
    norms = np.linalg.norm(centred, axis=1, keepdims=True)
    return centred / np.maximum(norms, 1.0), GaussianRelease(sensitivity, sigma)
