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
from ddppm.privacy.chernoff import log_delta_tail_many
from ddppm.privacy.exact import ExactTails, exact_tails, exact_tails_many
from ddppm.privacy.gaussian import (
    DEFAULT_RANK_RTOL,
    GaussianPair,
    SupportBasis,
    check_gaussian,
    cov_factor,
    diagonalize,
    log_delta_tail,
)
from ddppm.privacy.threat_models import ACCOUNTINGS


@dataclass(frozen=True)
class TailDeltas:
    """For every ε (rows) and realisation (columns): two-sided δ, the upper and lower tails, and the
    hockey-stick δ (NaN under ``chernoff``, which does not bound it)."""

    delta: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    hockey: np.ndarray


def reversed_coordinates(beta: np.ndarray, w2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same pair seen from the other data set: whitened by ``Σ₂`` instead of ``Σ₁``.

    With ``Σ₁ = I`` and ``Σ₂ = diag(γ)``, whitening by ``Σ₂`` gives ``Σ₂ = I``, ``Σ₁ = diag(1/γ)`` and mean
    difference ``w/√γ``: so ``β' = 1/(1+β) − 1`` and ``w'² = w²/(1+β)``.
    """
    gamma = 1.0 + np.asarray(beta, float)
    return 1.0 / gamma - 1.0, np.asarray(w2, float) / gamma[:, None]


def _reversed_singular(beta: np.ndarray) -> str | None:
    """Why the order seen from the other data set is numerically singular, or ``None``: a generalised eigenvalue
    ``γ ≥ 2⁵³`` has ``1/γ − 1`` round to −1 (its law ``diag(1/γ)`` has no resolvable variance there), as the
    forward order's ``γ ≤ rtol`` is singular. δ = 1 then, never understated (found when two BLAS threads moved a
    ``γ`` of Ami's ``sound`` calibration from about 1e13 to 1e17, which stopped it with a ValueError)."""
    beta = np.asarray(beta, float)
    if beta.size and not np.all(1.0 / (1.0 + beta) - 1.0 > -1.0):
        return f"a generalised eigenvalue of {1 + float(beta.max()):.3g} has no reciprocal in double precision"
    return None


def _one_direction(
    beta: np.ndarray,
    w2: np.ndarray,
    eps: np.ndarray,
    accounting: str,
    tails: ExactTails | None = None,
    bounds: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, ...]:
    """Upper tail, lower tail and hockey stick of one order of a pair; ``tails``: its exact tails if computed;
    ``bounds``: the logarithms of its Chernoff bounds on the upper and lower tails if computed."""
    if accounting == "chernoff":
        if bounds is None:
            bounds = (log_delta_tail(beta, w2, eps, +1), log_delta_tail(beta, w2, eps, -1))
        upper, lower = np.exp(bounds[0]), np.exp(bounds[1])
        return upper, lower, np.full(upper.shape, np.nan)
    if tails is None:
        with np.errstate(invalid="ignore"):
            tails = exact_tails(beta, w2, eps)
    upper, lower = tails.upper.copy(), tails.lower.copy()
    # Where the inversion fails numerically (NaN, e.g. at generalised eigenvalues spanning 20 decades) the
    # Chernoff bound stands in: still an upper bound, never 1 by accident. It is computed only for those
    # realisations (profiling: the bound's minimisation over s was a third of an exact evaluation).
    failed = np.flatnonzero((np.isnan(upper) | np.isnan(lower)).any(axis=0))
    if failed.size:
        w2_failed = np.asarray(w2, float).reshape(len(beta), -1)[:, failed]
        bound_upper = np.exp(log_delta_tail(beta, w2_failed, eps, +1))
        bound_lower = np.exp(log_delta_tail(beta, w2_failed, eps, -1))
        upper[:, failed] = np.where(np.isnan(upper[:, failed]), bound_upper, np.minimum(upper[:, failed], bound_upper))
        lower[:, failed] = np.where(np.isnan(lower[:, failed]), bound_lower, np.minimum(lower[:, failed], bound_lower))
    hockey = np.where(np.isnan(tails.hockey_stick), upper, np.minimum(tails.hockey_stick, upper))
    return upper, lower, hockey


def pair_tail_deltas(pair: GaussianPair, delta_mu: np.ndarray, eps: np.ndarray, accounting: str) -> TailDeltas:
    """δ(ε) of a diagonalised pair for each realised mean difference (columns of ``delta_mu``).

    Adjacency is symmetric, so (ε, δ)-DP needs both orders of the pair: the loss of ``X`` against its
    neighbour ``X'`` (``ℒ = ln p/q`` under P) and of ``X'`` against ``X`` (``ln q/p`` under Q). Each order
    gives a two-sided δ = ``min(1, Pr(ℒ > ε) + Pr(ℒ < −ε))``; the reported δ is the larger, element by element,
    with that order's tails; the hockey-stick δ is the larger of the two orders' own. (The paper's Theorem 2
    bounds one order only.)
    Undefined values (NaN) count as δ = 1: never understate δ.
    """
    return pair_tail_deltas_many([(pair, delta_mu)], eps, accounting)[0]


def pair_tail_deltas_many(
    items: list[tuple[GaussianPair, np.ndarray]], eps: np.ndarray, accounting: str
) -> list[TailDeltas]:
    """:func:`pair_tail_deltas` of many (pair, mean differences) at one ε grid; under ``exact`` the tails of every
    pair and both orders come from one vectorised pass (:func:`ddppm.privacy.exact.exact_tails_many`)."""
    eps = np.asarray(eps, float)
    if accounting not in ACCOUNTINGS:
        raise ConfigError(f"threat_models.<name>.accounting: unknown {accounting!r}; use one of {ACCOUNTINGS}")
    coordinates = []
    for pair, delta_mu in items:
        w, outside = pair.coordinates(delta_mu)
        coordinates.append((pair.beta, w**2, outside, pair.singular or _reversed_singular(pair.beta)))
    orders = [((beta, w2), reversed_coordinates(beta, w2)) for beta, w2, _, singular in coordinates if singular is None]
    flat = [o for both in orders for o in both]
    exact: list = [None] * len(flat)
    bounds: list = [None] * len(flat)
    if accounting == "exact" and orders:
        with np.errstate(invalid="ignore"):
            exact = exact_tails_many(flat, eps)
    if accounting == "chernoff" and orders:  # every order of every pair in one batch per tail
        bounds = list(zip(log_delta_tail_many(flat, eps, +1), log_delta_tail_many(flat, eps, -1), strict=True))
    out, k = [], 0
    for _beta, w2, outside, singular in coordinates:
        if singular is not None:
            ones = np.ones((eps.size, w2.shape[1]))
            out.append(TailDeltas(ones, ones, ones, ones))
            continue
        (fwd, bwd), tails, bound = orders[k], exact[2 * k : 2 * k + 2], bounds[2 * k : 2 * k + 2]
        k += 1
        fixed = []
        for (b, v2), exact_tails_of_order, bound_of_order in ((fwd, tails[0], bound[0]), (bwd, tails[1], bound[1])):
            upper, lower, hockey = _one_direction(b, v2, eps, accounting, exact_tails_of_order, bound_of_order)
            upper, lower = np.nan_to_num(upper, nan=1.0), np.nan_to_num(lower, nan=1.0)
            hockey = hockey if accounting == "chernoff" else np.nan_to_num(hockey, nan=1.0)
            fixed.append((np.minimum(1.0, upper + lower), upper, lower, hockey))
        take_back = fixed[1][0] > fixed[0][0]
        delta, upper, lower = (np.where(take_back, b, f) for f, b in zip(fixed[0][:3], fixed[1][:3], strict=True))
        # Definition 1's δ is the larger hockey-stick divergence of the two orders, whichever order has the larger
        # two-sided tail (taking the hockey stick of that order understated it by up to 9.5 % on random 2-D pairs).
        hockey = np.fmax(fixed[0][3], fixed[1][3])
        for a in (delta, upper, lower, hockey):
            a[:, outside] = 1.0  # the mean difference leaves the support: the laws are mutually singular
        out.append(TailDeltas(delta, upper, lower, hockey))
    return out


TAIL_KINDS = ("two_sided", "hockey_stick")


def gaussian_tail_delta(
    mu1, cov1, mu2, cov2, eps, method: str = "exact", rtol: float = DEFAULT_RANK_RTOL, kind: str = "two_sided"
) -> np.ndarray:
    """δ(ε) of ``P = N(mu1, cov1)`` against ``Q = N(mu2, cov2)``, the larger of the two orders (P against Q, and
    Q against P), as (ε, δ)-DP over a symmetric adjacency requires.

    ``kind="two_sided"``: the journal's Definition 2, ``Pr(ℒ > ε) + Pr(ℒ < −ε)``; ``kind="hockey_stick"``:
    Definition 1, ``E_P[(1 − e^{ε−ℒ})₊]`` (exact method only; the standard (ε, δ)-DP δ, never larger).

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
    if kind not in TAIL_KINDS or (kind == "hockey_stick" and method != "exact"):
        raise PrivacyError(
            f"gaussian_tail_delta: kind must be one of {TAIL_KINDS} (hockey_stick with method='exact'), got {kind!r}"
        )
    pair = diagonalize(SupportBasis.of_cov(cov1, rtol), cov_factor(cov1), cov_factor(cov2), "support")
    tails = pair_tail_deltas(pair, (mu1 - mu2)[:, None], eps, method)
    return (tails.hockey if kind == "hockey_stick" else tails.delta)[:, 0]
