"""Certified δ of the common task: Gaussian mechanisms of known sensitivity, composed exactly.

A release ``f(X) + N(0, σ²I)`` with L2 sensitivity Δ is ``μ = Δ/σ``-GDP, and a (possibly adaptive) sequence
of such releases is ``sqrt(Σ μ_i²)``-GDP, exactly: no tighter (ε, δ) holds for every neighbour (Dong, Roth & Su
2022, Corollaries 2.13 and 3.3). Its δ at ε is the hockey-stick divergence of Definition 1 between
``N(0, 1)`` and ``N(μ, 1)``, the larger of the two orders (they are equal here):

    δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)        (Balle & Wang 2018, Theorem 8).

This is an upper bound for every neighbour, by proof (sensitivity plus composition): the ``certified`` privacy
column. ``tests/common_task/test_task.py`` checks it against the PLD accountant of Google's ``dp-accounting``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ddppm.core.errors import PrivacyError
from ddppm.privacy.mechanisms import analytic_gaussian_log_delta, analytic_gaussian_sigma


def composed_mu(sensitivities: Sequence[float], sigmas: Sequence[float]) -> float:
    """``sqrt(Σ (Δ_i/σ_i)²)``: the GDP parameter of the composed Gaussian releases."""
    delta = np.asarray(sensitivities, float)
    sigma = np.asarray(sigmas, float)
    if delta.shape != sigma.shape or delta.size == 0 or np.any(sigma <= 0) or np.any(delta < 0):
        raise PrivacyError("certified δ: give one sensitivity Δ ≥ 0 and one noise σ > 0 per release")
    return float(np.sqrt(np.sum((delta / sigma) ** 2)))


def certified_delta(mu: float, eps: float) -> float:
    """δ(ε) of a μ-GDP mechanism (Definition 1's δ, for every neighbour): the analytic Gaussian δ of one release
    with noise multiplier 1/μ."""
    if mu <= 0:
        return 0.0
    return float(np.exp(analytic_gaussian_log_delta(1.0 / mu, float(eps))))  # one release of sensitivity μ, σ = 1


def noise_multiplier(eps: float, delta: float, releases: int = 1) -> float:
    """The smallest σ/Δ for which ``releases`` equal Gaussian releases are (ε, δ)-DP: ``sqrt(releases)`` times
    the analytic Gaussian calibration of one (Balle & Wang 2018)."""
    if releases < 1:
        raise PrivacyError(f"certified δ: a method makes at least one release, got {releases}")
    return float(np.sqrt(releases) * analytic_gaussian_sigma(eps, delta))
