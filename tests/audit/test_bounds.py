"""The audit's estimator (ddppm.audit.bounds) checked on the Gaussian mechanism, whose exact ε is known
(ddppm.audit.gaussian): the bound never exceeds the true ε over 20 seeds, and it approaches it as N grows."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from ddppm.audit.bounds import audit_scores, clopper_pearson, epsilon_lower_bound, resolvable_delta_gap
from ddppm.audit.gaussian import gaussian_delta, gaussian_epsilon


def test_the_gaussian_curve_against_its_integral() -> None:
    """δ(ε) = E_P[(1 − e^{ε − L})₊] for the privacy loss L ~ N(μ²/2, μ²), by quadrature."""
    from scipy.integrate import quad

    for mu, eps in [(0.5, 0.3), (1.0, 1.0), (2.0, 3.0)]:
        integrand = lambda z, mu=mu, eps=eps: max(0.0, 1 - np.exp(eps - (mu**2 / 2 + mu * z))) * norm.pdf(z)  # noqa: E731
        direct = quad(integrand, -10, 10, limit=200)[0]
        assert gaussian_delta(eps, mu) == pytest.approx(direct, rel=1e-6, abs=1e-12)
        assert gaussian_delta(gaussian_epsilon(1e-5, mu), mu) == pytest.approx(1e-5, rel=1e-6)


def test_clopper_pearson_covers_at_its_level() -> None:
    rng = np.random.default_rng(0)
    hits = sum(lo <= 0.1 <= hi for lo, hi in (clopper_pearson(int(k), 200) for k in rng.binomial(200, 0.1, 2000)))
    assert hits / 2000 >= 0.95  # exact intervals are conservative
    assert clopper_pearson(0, 100)[0] == 0.0 and clopper_pearson(100, 100)[1] == 1.0


def test_counts_that_prove_nothing_give_zero() -> None:
    assert epsilon_lower_bound(50, 100, 50, 100, 1e-5) == 0.0
    assert epsilon_lower_bound(100, 100, 0, 100, 1e-5) > 2.0  # perfect separation, limited by the counts


def test_the_bound_never_exceeds_the_true_epsilon_and_approaches_it() -> None:
    mu, delta = 1.0, 1e-5
    true = gaussian_epsilon(delta, mu)
    bounds = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        bounds.append(audit_scores(rng.standard_normal(20_000), mu + rng.standard_normal(20_000), delta).eps_lower)
    assert max(bounds) <= true and min(bounds) > 0.5
    growing = []
    for n in (1_000, 30_000, 1_000_000):
        rng = np.random.default_rng(99)
        growing.append(audit_scores(rng.standard_normal(2 * n), mu + rng.standard_normal(2 * n), delta).eps_lower)
    assert growing[0] < growing[1] < growing[2] <= true and growing[2] > 0.7 * true


def test_the_resolution_limit_grows_with_epsilon_and_shrinks_with_draws() -> None:
    assert resolvable_delta_gap(5.0, 10**5) > resolvable_delta_gap(1.0, 10**5) > resolvable_delta_gap(1.0, 10**7)
    assert resolvable_delta_gap(5.0, 10**5) == pytest.approx((1 + np.exp(5)) * np.sqrt(np.log(40) / 2e5))


def test_the_statistic_is_chosen_on_held_out_draws() -> None:
    """Among a useless statistic and the likelihood ratio, the chosen one is the ratio (column 1), and a perfect
    separator among noise columns is found and bounded by the counts alone (ln(N / ln 40) at most)."""
    rng = np.random.default_rng(3)
    n = 20_000
    x = np.column_stack([rng.standard_normal(n), rng.standard_normal(n)])
    p = np.column_stack([rng.standard_normal(n), 2.0 + rng.standard_normal(n)])
    result = audit_scores(x, p, 1e-5)
    assert result.statistic == 1
    assert result.eps_lower == pytest.approx(audit_scores(x[:, 1], p[:, 1], 1e-5).eps_lower)
    perfect = audit_scores(np.column_stack([x, -np.ones(n)]), np.column_stack([p, np.ones(n)]), 1e-5)
    assert perfect.statistic == 2 and perfect.false_pos == 0 and perfect.true_pos == n // 2
    assert 0.9 * np.log(n / 2 / np.log(40)) < perfect.eps_lower <= np.log(n / 2 / np.log(40))
