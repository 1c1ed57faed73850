"""δ(ε) of a pair of Gaussian laws under either accounting: the Chernoff bound or the exact tail.

``δ(ε) = Pr_P(ℒ > ε) + Pr_P(ℒ < −ε)`` (the two-sided Definition 2), ``ℒ = ln p/q`` the privacy loss of
``P = N(μ₁, Σ₁)`` against ``Q = N(μ₂, Σ₂)``. ``chernoff`` bounds each tail by Theorem 2
(:func:`ddppm.privacy.gaussian.deltas_from_pair`); ``exact`` computes them (:mod:`ddppm.privacy.exact`) and also
the hockey-stick δ of Definition 1, ``E_P[(1 − e^{ε−ℒ})₊]``. Both work in the simultaneous-diagonalisation
basis of :func:`ddppm.privacy.gaussian.diagonalize`, so one factorisation serves every ε.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ddppm.core.errors import ConfigError, PrivacyError
from ddppm.privacy.exact import exact_tails
from ddppm.privacy.gaussian import (
    DEFAULT_RANK_RTOL,
    GaussianPair,
    SupportBasis,
    check_gaussian,
    cov_factor,
    deltas_from_pair,
    diagonalize,
)

ACCOUNTINGS = ("chernoff", "exact")


@dataclass(frozen=True)
class TailDeltas:
    """For every ε (rows) and realisation (columns): two-sided δ, the upper and lower tails, and the
    hockey-stick δ (NaN under ``chernoff``, which does not bound it)."""

    delta: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    hockey: np.ndarray


def pair_tail_deltas(pair: GaussianPair, delta_mu: np.ndarray, eps: np.ndarray, accounting: str) -> TailDeltas:
    """δ(ε) of a diagonalised pair for each realised mean difference (columns of ``delta_mu``)."""
    eps = np.asarray(eps, float)
    if accounting == "chernoff":
        t = deltas_from_pair(pair, delta_mu, eps)
        return TailDeltas(t.delta, t.upper, t.lower, np.full(t.delta.shape, np.nan))
    if accounting != "exact":
        raise ConfigError(f"threat_models.<name>.accounting: unknown {accounting!r}; use one of {ACCOUNTINGS}")
    w, outside = pair.coordinates(delta_mu)
    shape = (eps.size, w.shape[1])
    if pair.singular is not None:
        ones = np.ones(shape)
        return TailDeltas(ones, ones, ones, ones)
    tails = exact_tails(pair.beta, w**2, eps)
    upper, lower, hockey = tails.upper.copy(), tails.lower.copy(), tails.hockey_stick.copy()
    for a in (upper, lower, hockey):
        a[:, outside] = 1.0  # the mean difference leaves the support: the laws are mutually singular
    return TailDeltas(np.minimum(1.0, upper + lower), upper, lower, hockey)


def gaussian_tail_delta(
    mu1, cov1, mu2, cov2, eps, method: str = "exact", rtol: float = DEFAULT_RANK_RTOL
) -> np.ndarray:
    """Two-sided δ(ε) = Pr(ℒ > ε) + Pr(ℒ < −ε) of ``P = N(mu1, cov1)`` against ``Q = N(mu2, cov2)``.

    ``method="exact"``: the true tails of the privacy loss, a generalised non-central χ², by saddle-point
    contour inversion of its characteristic function; ``method="chernoff"``: Theorem 2's bound on each tail.
    Covariances may be singular: if one law has mass where the other has none, δ = 1. Usable on its own::

        >>> gaussian_tail_delta([0.0], [[1.0]], [1.0], [[1.0]], [1.0, 2.0]).round(4)
        array([0.3753, 0.073 ])

    Returns
    -------
    numpy.ndarray
        δ for each ε, shape ``(len(eps),)``.
    """
    mu1, cov1 = check_gaussian(mu1, cov1, "gaussian_tail_delta (mu1, cov1)")
    mu2, cov2 = check_gaussian(mu2, cov2, "gaussian_tail_delta (mu2, cov2)")
    if mu1.shape != mu2.shape:
        raise PrivacyError(f"gaussian_tail_delta: the two laws have dimensions {mu1.size} and {mu2.size}")
    eps = np.atleast_1d(np.asarray(eps, float))
    if eps.size == 0 or not np.all(np.isfinite(eps)) or np.any(eps <= 0):
        raise PrivacyError(f"gaussian_tail_delta: ε must be finite and > 0, got {eps.tolist()}")
    if not 0 < rtol < 1:
        raise PrivacyError(f"gaussian_tail_delta: rtol must lie in (0, 1), got {rtol!r}")
    if method not in ACCOUNTINGS:
        raise PrivacyError(f"gaussian_tail_delta: method must be one of {ACCOUNTINGS}, got {method!r}")
    pair = diagonalize(SupportBasis.of_cov(cov1, rtol), cov_factor(cov1), cov_factor(cov2), "support")
    return pair_tail_deltas(pair, (mu1 - mu2)[:, None], eps, method).delta[:, 0]
