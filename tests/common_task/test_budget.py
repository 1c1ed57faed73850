"""One (ε, δ) for the whole route (ddppm.common_task.budget): the preprocessing's Gaussian releases composed with a
Gaussian method (μ² adds) or a pure-ε one (randomised response ⊗ Gaussian), each checked against dp-accounting's
PLD accountant and, independently of it, by numerical integration of the hockey-stick divergence."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

from ddppm.common_task.budget import (
    end_to_end_delta,
    gdp_mu,
    method_pair,
    method_target,
    pure_and_gaussian_delta,
    pure_method_eps,
    split_budget,
)
from ddppm.common_task.certified import certified_delta, composed_mu
from ddppm.core.errors import PrivacyError

POINTS = [(1.0, 1e-5, 0.1), (5.0, 1e-5, 0.25), (0.5, 1e-6, 0.5)]


@pytest.mark.parametrize(("eps", "delta", "share"), POINTS)
def test_the_split_composes_to_the_target_by_dp_accounting(eps, delta, share):
    dp_accounting = pytest.importorskip("dp_accounting", reason="the test extra installs dp-accounting")
    from dp_accounting import pld

    split = split_budget(eps, delta, share)
    assert split.mu_pre**2 + split.mu_method**2 == pytest.approx(split.mu_total**2, rel=1e-12)
    accountant = pld.PLDAccountant(value_discretization_interval=1e-5)  # the default 1e-4: off by up to 1e-6
    accountant.compose(dp_accounting.GaussianDpEvent(1 / split.mu_pre))  # the preprocessing (sensitivity-normalised)
    accountant.compose(dp_accounting.GaussianDpEvent(1 / split.mu_method))  # the method's releases, as one
    assert abs(accountant.get_delta(eps) - delta) <= min(1e-9, 1e-6 * delta)  # within 1e-9, and 1e-6 relative
    ours = certified_delta(composed_mu([1.0, 1.0], [1 / split.mu_pre, 1 / split.mu_method]), eps)
    assert ours == pytest.approx(delta, rel=1e-9)


@pytest.mark.parametrize(("eps", "delta", "share"), POINTS)
def test_a_gaussian_method_calibrated_to_its_target_composes_to_delta(eps, delta, share):
    mu_pre = split_budget(eps, delta, share).mu_pre
    target = method_target(eps, delta, mu_pre)
    assert target < delta  # the method gets less than the whole budget
    assert end_to_end_delta(eps, gdp_mu(eps, target), mu_pre) == pytest.approx(delta, rel=1e-8)


@pytest.mark.parametrize("eps", [5.0, 1e3, 1e4])
def test_the_method_pair_is_the_target_eps_where_its_delta_is_representable(eps):
    mu_pre = split_budget(eps, 1e-5, 0.25).mu_pre
    assert method_pair(eps, 1e-5, mu_pre) == (eps, method_target(eps, 1e-5, mu_pre))


@pytest.mark.parametrize("eps", [3e4, 1e5, 1e6])
def test_where_the_methods_delta_underflows_the_pair_moves_along_the_same_curve(eps):
    """δ_{μ_m}(ε) is 0 in double precision here; the pair (ε_m, δ) names the same μ_m, checked by the route back
    (the analytic Gaussian's μ of the pair) and by the closed form δ_μ(x) = Φ(μ/2 − x/μ) − e^x Φ(−μ/2 − x/μ)."""
    delta, split = 1e-5, split_budget(eps, 1e-5, 0.25)
    assert method_target(eps, delta, split.mu_pre) == 0.0  # the underflow this handles
    eps_m, delta_m = method_pair(eps, delta, split.mu_pre)
    assert (delta_m, eps_m < eps) == (delta, True)
    assert gdp_mu(eps_m, delta_m) == pytest.approx(split.mu_method, rel=1e-9)
    mu = split.mu_method
    closed = norm.cdf(mu / 2 - eps_m / mu) - np.exp(eps_m + norm.logcdf(-mu / 2 - eps_m / mu))
    assert closed == pytest.approx(delta, rel=1e-6)


def _hockey_stick_by_quadrature(eps_pure: float, mu: float, eps: float) -> float:
    """δ(ε) between P = RR(ε_pure) × N(μ, 1) and Q = RR reversed × N(0, 1), integrated numerically."""
    p = np.exp(eps_pure) / (1 + np.exp(eps_pure))
    total = 0.0
    for p_a, q_a in ((p, 1 - p), (1 - p, p)):
        def gap(x, p_a=p_a, q_a=q_a):
            return max(p_a * norm.pdf(x - mu) - np.exp(eps) * q_a * norm.pdf(x), 0.0)

        total += integrate.quad(gap, -40, 40, points=[0.0, mu], limit=400, epsabs=1e-14, epsrel=1e-12)[0]
    return total


@pytest.mark.parametrize(("eps_pure", "mu", "eps"), [(0.5, 0.3, 1.0), (3.0, 0.6, 5.0), (0.2, 1.0, 2.0)])
def test_pure_plus_gaussian_matches_quadrature_and_dp_accounting(eps_pure, mu, eps):
    ours = pure_and_gaussian_delta(eps_pure, mu, eps)
    assert ours == pytest.approx(_hockey_stick_by_quadrature(eps_pure, mu, eps), rel=1e-6, abs=1e-12)
    pytest.importorskip("dp_accounting", reason="the test extra installs dp-accounting")
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    pure = pld_lib.from_privacy_parameters(common.DifferentialPrivacyParameters(eps_pure, 0.0),
                                           value_discretization_interval=1e-5)  # fmt: skip
    gauss = pld_lib.from_gaussian_mechanism(1 / mu, value_discretization_interval=1e-5)
    theirs = pure.compose(gauss).get_delta_for_epsilon(eps)
    assert abs(theirs - ours) <= 1e-9 + 1e-5 * ours  # the PLD's discretisation is pessimistic by up to ~1e-5


def test_the_pure_methods_share_solves_the_composition():
    eps, delta = 2.0, 1e-5
    mu_pre = split_budget(eps, delta, 0.25).mu_pre
    eps_m = pure_method_eps(eps, delta, mu_pre)
    assert 0 < eps_m < eps
    assert pure_and_gaussian_delta(eps_m, mu_pre, eps) == pytest.approx(delta, rel=1e-9)
    assert pure_and_gaussian_delta(eps_m * 1.01, mu_pre, eps) > delta  # the largest such ε_m
    assert pure_and_gaussian_delta(eps, 0.0, eps) == 0.0  # no preprocessing: the whole ε, δ = 0


def test_budgets_outside_their_range_are_refused():
    with pytest.raises(PrivacyError, match="share"):
        split_budget(1.0, 1e-5, 1.0)
    with pytest.raises(PrivacyError, match="whole budget"):
        method_target(1.0, 1e-5, gdp_mu(1.0, 1e-5))
    with pytest.raises(PrivacyError, match="alone"):
        pure_method_eps(1.0, 1e-5, 2 * gdp_mu(1.0, 1e-5))


@pytest.mark.parametrize("eps", [0.5, 1.0])
def test_the_pure_methods_whole_route_meets_the_target_within_1e9_of_dp_accounting(eps):
    """At the common task's δ = 1e-5, Amin et al.'s share after a quarter of μ² on the preprocessing: the PLD
    accountant (fine discretisation, pessimistic) puts the composition within 1e-9 of the target."""
    pytest.importorskip("dp_accounting", reason="the test extra installs dp-accounting")
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    delta = 1e-5
    mu_pre = split_budget(eps, delta, 0.25).mu_pre
    eps_m = pure_method_eps(eps, delta, mu_pre)
    pure = pld_lib.from_privacy_parameters(common.DifferentialPrivacyParameters(eps_m, 0.0),
                                           value_discretization_interval=2e-6)  # fmt: skip
    gauss = pld_lib.from_gaussian_mechanism(1 / mu_pre, value_discretization_interval=2e-6)
    assert abs(pure.compose(gauss).get_delta_for_epsilon(eps) - delta) <= 1e-9
