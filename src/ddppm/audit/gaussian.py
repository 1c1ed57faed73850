"""The Gaussian mechanism's exact privacy curve, and the most powerful test against it: the estimator's own check.

For ``y = f(X) + N(0, σ²I)`` and neighbours whose ``f`` differ by ``Δ``, the privacy loss is ``N(μ²/2, μ²)`` with
``μ = Δ/σ``, and the mechanism is (ε, δ)-DP exactly for
``δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)`` (Balle & Wang 2018, Theorem 8): :func:`gaussian_epsilon` inverts it.
The likelihood-ratio test projects the view on the difference of the means (:func:`linear_scores`).
"""

from __future__ import annotations

import math

import numpy as np


def gaussian_delta(eps: float, mu: float) -> float:
    """The exact δ of the Gaussian mechanism with ``μ = Δ/σ`` at ``eps``."""
    from scipy.stats import norm

    return float(norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * norm.cdf(-mu / 2 - eps / mu))


def gaussian_epsilon(delta: float, mu: float) -> float:
    """The least ε with :func:`gaussian_delta` ≤ ``delta`` (0 when δ(0) is already below it)."""
    from scipy.optimize import brentq

    if gaussian_delta(0.0, mu) <= delta:
        return 0.0
    upper = 1.0
    while gaussian_delta(upper, mu) > delta:
        upper *= 2
    return float(brentq(lambda e: gaussian_delta(e, mu) - delta, 0.0, upper, xtol=1e-12))


def linear_scores(views: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """The views' projections on ``direction`` (the likelihood-ratio statistic when the noise is isotropic and
    ``direction`` is the difference of the two means)."""
    return np.asarray(views, float) @ np.asarray(direction, float)
