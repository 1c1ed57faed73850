r"""Noise calibration of the private power methods: the paper's σ, its zCDP accounting (with the erratum), and
exact alternatives.

Every method of this family releases ``L`` Gaussian mechanisms (one per power iteration; AnalyzeGauss releases one
noisy matrix, ``L = 1``), each adding noise of standard deviation ``Δ_ℓ σ`` to a query of L2 sensitivity ``Δ_ℓ``.
So each release has noise multiplier σ, and the privacy of the whole run depends on σ and ``L`` only.

Reference: Nicolas et al., "Differentially private and decentralized randomized power method" (2024,
arXiv:2411.01931), Algorithm 1 and Appendix A.2.3 (Theorem 3.2), which uses zero-concentrated DP:
M. Bun and T. Steinke, "Concentrated differential privacy: simplifications, extensions, and lower bounds",
TCC 2016 (arXiv:1605.02065).

Three calibrations (config key ``ppm.sigma_calibration``):

``paper``
    Their Algorithm 1, line 3: ``σ = ε⁻¹ sqrt(4 L ln(1/δ))`` (:func:`paper_sigma`).
``zcdp``
    The σ whose zCDP bound is exactly ε: ``ρ* = (sqrt(ln(1/δ) + ε) − sqrt(ln(1/δ)))²``, ``σ = sqrt(L / (2ρ*))``
    (:func:`zcdp_sigma`).
``gdp``
    The smallest σ for which the L-fold composition is (ε, δ)-DP exactly (Gaussian differential privacy:
    J. Dong, A. Roth and W. Su, "Gaussian differential privacy", JRSS-B 2022, arXiv:1905.02383)
    (:func:`gdp_sigma`).

**Erratum** (their eq. 26–27). With ``ρ = ε²/(8 ln(1/δ))`` (eq. 24) the conversion of Bun & Steinke's
Proposition 1.3 gives ``ρ + 2 sqrt(ρ ln(1/δ)) = ε²/(8 ln(1/δ)) + ε/√2``, not ``+ ε/2`` as printed
(:func:`paper_stated_eps` keeps the printed expression, :func:`paper_sigma_zcdp_eps` the correct one). The
paper's σ therefore meets its ε under the zCDP bound only for ``ε ≤ 8 (1 − 1/√2) ln(1/δ) ≈ 2.34 ln(1/δ)``, not
for ``ε ≤ 4 ln(1/δ)`` (their condition δ ≤ exp(−ε/4)). Every run records the ε its σ actually achieves, both
by the zCDP bound and exactly (:class:`Calibration`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ddppm.core.errors import PrivacyError
from ddppm.privacy.mechanisms import analytic_gaussian_sigma

CALIBRATIONS: tuple[str, ...] = ("paper", "zcdp", "gdp")
"""Values of ``ppm.sigma_calibration``."""


def _check(eps: float, delta: float, releases: int) -> None:
    if not (np.isfinite(eps) and eps > 0):
        raise PrivacyError(f"epsilon must be > 0, got {eps!r}; fix the config key `ppm.epsilons`")
    if not (0 < delta < 1):
        raise PrivacyError(f"delta must lie in (0, 1), got {delta!r}; fix the config key `ppm.delta`")
    if int(releases) < 1:
        raise PrivacyError(f"the number of releases must be >= 1, got {releases!r}; fix `ppm.iterations`")


def paper_sigma(eps: float, delta: float, releases: int) -> float:
    """Noise multiplier of their Algorithm 1, line 3: ``σ = ε⁻¹ sqrt(4 L ln(1/δ))``."""
    _check(eps, delta, releases)
    return float(np.sqrt(4 * releases * np.log(1 / delta)) / eps)


def zcdp_of_sigma(sigma: float, releases: int) -> float:
    """zCDP of ``L`` Gaussian releases with noise multiplier σ: ``ρ = Σ_ℓ Δ_ℓ²/(2 Δ_ℓ² σ²) = L/(2σ²)``.

    Their eq. 20–22: Lemma A.1 (a Gaussian mechanism is ``Δ²/(2σ_ℓ²)``-zCDP) and Lemma A.2 (adaptive
    composition adds the ρ's), with ``σ_ℓ = Δ_ℓ σ``.
    """
    return float(releases / (2 * sigma**2))


def zcdp_to_dp_eps(rho: float, delta: float) -> float:
    """ε of the (ε, δ)-DP guarantee implied by ρ-zCDP: ``ρ + 2 sqrt(ρ ln(1/δ))`` (Bun & Steinke, Prop. 1.3;
    their eq. 25)."""
    return float(rho + 2 * np.sqrt(rho * np.log(1 / delta)))


def paper_stated_eps(eps: float, delta: float) -> float:
    """The ε their eq. 27 states for their σ: ``ε²/(8 ln(1/δ)) + ε/2`` (**erratum**: the last term is ε/√2)."""
    return float(eps**2 / (8 * np.log(1 / delta)) + eps / 2)


def paper_sigma_zcdp_eps(eps: float, delta: float) -> float:
    """The ε their σ really achieves by the zCDP bound (eq. 26 evaluated correctly):
    ``ε²/(8 ln(1/δ)) + ε/√2``."""
    return float(eps**2 / (8 * np.log(1 / delta)) + eps / np.sqrt(2))


def zcdp_rho_for_eps(eps: float, delta: float) -> float:
    """The largest ρ whose zCDP bound is ε: the root of ``ρ + 2 sqrt(ρ ln(1/δ)) = ε``,
    ``ρ* = (sqrt(ln(1/δ) + ε) − sqrt(ln(1/δ)))²``."""
    a = np.log(1 / delta)
    return float((np.sqrt(a + eps) - np.sqrt(a)) ** 2)


def zcdp_sigma(eps: float, delta: float, releases: int) -> float:
    """σ calibrated exactly on the zCDP bound: ``σ = sqrt(L / (2ρ*))`` with :func:`zcdp_rho_for_eps`."""
    _check(eps, delta, releases)
    return float(np.sqrt(releases / (2 * zcdp_rho_for_eps(eps, delta))))


def _log_delta_t(mu: float, t: float) -> float:
    """``ln δ`` of a μ-GDP mechanism at ``ε = μ t + μ²/2``: ``Φ(−t) − e^{ε} Φ(−μ − t)``, where
    ``e^{ε} Φ(−μ−t) = e^{−t²/2} erfcx((μ+t)/√2)/2`` exactly, so no term overflows or cancels for huge μ or ε."""
    from scipy.special import erfcx, log_ndtr

    log_first = log_ndtr(-t)
    log_second = -(t**2) / 2 + np.log(erfcx((mu + t) / np.sqrt(2)) / 2)
    gap = log_second - log_first
    if gap >= 0:
        return -np.inf
    return float(log_first + np.log(-np.expm1(gap)))


def log_gaussian_delta(mu: float, eps: float) -> float:
    r"""``ln δ(ε)`` of a μ-GDP mechanism (equivalently, one Gaussian mechanism with noise multiplier 1/μ):

    .. math:: δ(ε) = Φ(μ/2 − ε/μ) − e^{ε} Φ(−μ/2 − ε/μ)

    (Balle & Wang 2018, Theorem 8; Dong, Roth & Su, Corollary 2.13), computed in log space with the scaled
    complementary error function, so it stays accurate when both terms are tiny (large ε).
    """
    return _log_delta_t(mu, eps / mu - mu / 2)


def gaussian_composition_eps(sigma: float, delta: float, releases: int) -> float:
    """The exact ε at δ of ``L`` adaptively composed Gaussian mechanisms with noise multiplier σ.

    Each release is ``1/σ``-GDP; their composition is ``μ = sqrt(L)/σ``-GDP and no better (Dong, Roth & Su,
    Corollary 3.3), so ε solves ``δ_μ(ε) = δ`` (:func:`log_gaussian_delta`); 0 when δ_μ(0) ≤ δ already. The
    root is found in ``t = ε/μ − μ/2`` (``δ ≈ Φ(−t)`` for large μ), which keeps it exact at any scale.
    """
    from scipy.optimize import brentq

    mu = np.sqrt(releases) / sigma
    target = np.log(delta)
    if log_gaussian_delta(mu, 0.0) <= target:
        return 0.0
    t = brentq(lambda x: _log_delta_t(mu, x) - target, -mu / 2, 40.0, xtol=1e-13, rtol=1e-13)
    return float(mu * t + mu**2 / 2)


def gdp_sigma(eps: float, delta: float, releases: int) -> float:
    """The smallest σ for which ``L`` composed releases are exactly (ε, δ)-DP: ``σ = sqrt(L) σ₁(ε, δ)`` with
    σ₁ the analytic Gaussian calibration of one release (Balle & Wang 2018)."""
    _check(eps, delta, releases)
    return float(np.sqrt(releases) * analytic_gaussian_sigma(eps, delta))


@dataclass(frozen=True)
class Calibration:
    """The noise multiplier of one (method, ε) and the privacy it really gives.

    Attributes
    ----------
    mode : str
        ``paper``, ``zcdp`` or ``gdp`` (:data:`CALIBRATIONS`).
    eps : float
        Target ε.
    delta : float
        δ.
    releases : int
        Number of Gaussian releases ``L`` composed.
    sigma : float
        Noise multiplier: each release adds noise of standard deviation ``Δ_ℓ σ``.
    rho : float
        zCDP of the whole run, ``L/(2σ²)``.
    eps_zcdp : float
        ε at δ by the zCDP bound, ``ρ + 2 sqrt(ρ ln(1/δ))``.
    eps_exact : float
        The exact ε at δ of the composed Gaussian releases (:func:`gaussian_composition_eps`).
    meets_target : bool
        Whether ``eps_exact ≤ eps`` (up to 1e-9 relative): the run is really (ε, δ)-DP.
    """

    mode: str
    eps: float
    delta: float
    releases: int
    sigma: float
    rho: float
    eps_zcdp: float
    eps_exact: float
    meets_target: bool

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def calibrate(eps: float, delta: float, releases: int, mode: str = "paper") -> Calibration:
    """σ for ``releases`` Gaussian releases at (ε, δ) under calibration ``mode``, with the ε it achieves."""
    sigma_of = {"paper": paper_sigma, "zcdp": zcdp_sigma, "gdp": gdp_sigma}
    if mode not in sigma_of:
        raise PrivacyError(f"ppm.sigma_calibration: unknown mode {mode!r}; use one of {list(CALIBRATIONS)}")
    sigma = sigma_of[mode](eps, delta, releases)
    rho = zcdp_of_sigma(sigma, releases)
    exact = gaussian_composition_eps(sigma, delta, releases)
    return Calibration(
        mode=mode,
        eps=float(eps),
        delta=float(delta),
        releases=int(releases),
        sigma=sigma,
        rho=rho,
        eps_zcdp=zcdp_to_dp_eps(rho, delta),
        eps_exact=exact,
        meets_target=bool(exact <= eps * (1 + 1e-9)),
    )
