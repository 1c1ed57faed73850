"""Tests of evaluate_delta against the independent reference (ddppm.accounting.reference), and invariances."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ddppm.accounting.accountant import AccountantSettings, evaluate_delta
from ddppm.accounting.iteration import DDPPMParams, NoiseSchedule, ddppm_errors, draw_standard_normals
from ddppm.accounting.reference import cgf_direct, delta_reference, domain_limit
from ddppm.core.errors import ConfigError, PrivacyError
from ddppm.core.seeds import run_generators
from ddppm.privacy.gaussian import SupportBasis, cgf, diagonalize
from ddppm.testing import synthetic_problem

KEYS = ["observer", "agent", "row", "kind", "eps"]


def make_problem(n=24, d=3, c=3, seed=1):
    return synthetic_problem(n, d, (3.0, 1.5, 0.5), seed, c)


def params_for(problem, T, kappa, kind="geometric"):
    alpha = 1 / np.sqrt(problem.mu1 * problem.mu2)
    sq = 1 / np.sqrt(problem.n)
    ratio = problem.mu2 / problem.mu1 if kind == "geometric" else 1.0
    return DDPPMParams(alpha, sq, NoiseSchedule(kind, kappa * sq, ratio), T)


@pytest.fixture(scope="module")
def problem():
    return make_problem()


def assert_log_close(a, b, rtol=1e-6):
    """``log a ≈ log b`` relative to ``max(1, |log b|)``; values both below 1e-280 count as equal (underflow)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    tiny = (a < 1e-280) & (b < 1e-280)
    la, lb = np.log(np.where(tiny, 1, a)), np.log(np.where(tiny, 1, b))
    err = np.abs(la - lb) / np.maximum(1, np.abs(lb))
    assert err.max() <= rtol, f"max relative log error {err.max():.3g}"


# ------------------------------------------------------------------------------------------------ vs reference


CASES = [
    # view, rank_mode, T, kappa, observers, eps
    ("network", "support", 2, 100.0, (0, 2), [5.0, 20.0, 100.0]),
    ("network", "paper", 2, 100.0, (1,), [5.0, 20.0, 100.0]),
    ("paper", "support", 2, 10.0, (0, 3), [1.0, 5.0, 20.0, 40.0]),
    ("paper", "paper", 3, 30.0, (1,), [2.0, 10.0, 40.0]),
    ("paper", "support", 3, 30.0, (2,), [2.0, 10.0, 40.0]),
]


@pytest.mark.parametrize(("view", "rank_mode", "T", "kappa", "observers", "eps"), CASES)
def test_fast_path_equals_reference(problem, view, rank_mode, T, kappa, observers, eps):
    params = params_for(problem, T, kappa)
    settings = AccountantSettings(view=view, rank_mode=rank_mode, realisations=2, observers=observers, seed=4)
    fast = evaluate_delta(problem, params, eps, settings)
    ref = delta_reference(problem, params, eps, settings)
    a = fast.pairs.set_index(KEYS).sort_index()
    b = ref.pairs.set_index(KEYS).sort_index()
    assert a.index.equals(b.index)
    assert len(a) == len(observers) * 3 * 3 * len(eps)  # 3 other agents × 3 candidate kinds per observer
    for col in ("delta_mean", "delta_upper_mean", "delta_lower_mean", "delta_max"):
        assert_log_close(a[col].to_numpy(), b[col].to_numpy())
    assert_log_close(fast.delta, ref.delta)
    assert_log_close(fast.delta_upper, ref.delta_upper)
    assert (a["singular"] == "").all() and (b["singular"] == "").all()
    # the comparison is not vacuous: δ spans decades and both tails are non-trivial somewhere
    assert a["delta_mean"].min() < 1e-2 and (a["delta_mean"] < 1).any()
    assert ((a["delta_lower_mean"] > 1e-12) & (a["delta_lower_mean"] < 1)).any()


def test_singular_laws_agree_with_reference(problem):
    """σ_p ≡ 0: q_j^(T) lives in col(X_j) vs col(X'_j), so in the network view the laws are mutually singular."""
    params = DDPPMParams(
        1 / np.sqrt(problem.mu1 * problem.mu2), 1 / np.sqrt(problem.n), NoiseSchedule("constant", 0.0), 2
    )
    settings = AccountantSettings(view="network", realisations=2, observers=(0,))
    fast = evaluate_delta(problem, params, [1.0, 10.0], settings)
    ref = delta_reference(problem, params, [1.0, 10.0], settings)
    assert (fast.pairs["singular"] != "").all() and (ref.pairs["singular"] != "").all()
    np.testing.assert_array_equal(fast.pairs["delta_mean"], 1.0)
    np.testing.assert_array_equal(ref.pairs["delta_mean"], 1.0)


def test_regression_paper_rank_mode_nan_for_singular_projection(problem):
    """Regression (fixed) in privacy.diagonalize / _domain_limit, accountant.evaluate_delta): in rank mode
    ``paper`` a projected
    adjacent covariance that is singular (γ = 1 + β ≤ 0 by round-off) makes _domain_limit negative,
    log_delta_tail takes log of a negative number and the pair's δ is NaN; evaluate_delta's idxmax/max then
    silently skip the NaN pair when taking the worst case."""
    params = DDPPMParams(
        1 / np.sqrt(problem.mu1 * problem.mu2), 1 / np.sqrt(problem.n), NoiseSchedule("constant", 0.0), 3
    )
    settings = AccountantSettings(view="paper", rank_mode="paper", realisations=2)
    res = evaluate_delta(problem, params, [1.0, 5.0], settings)
    assert not res.pairs["delta_mean"].isna().any()


# ------------------------------------------------------------------------------------------------ invariances


def test_delta_and_error_invariant_under_reparametrisation(problem):
    """δ and the Monte-Carlo error depend on (T, η_t = σ_p(t)/(σ_q α^t)) only (DDPPMParams.effective_noise)."""
    T = 2
    base = params_for(problem, T, 20.0)
    k, f = 3.7, 1.6
    scaled = DDPPMParams(
        base.alpha, k * base.sigma_q, NoiseSchedule("geometric", k * base.schedule.scale, base.schedule.ratio), T
    )
    moved = DDPPMParams(
        f * base.alpha, base.sigma_q, NoiseSchedule("geometric", base.schedule.scale, f * base.schedule.ratio), T
    )
    both = DDPPMParams(
        f * base.alpha,
        k * base.sigma_q,
        NoiseSchedule("geometric", k * base.schedule.scale, f * base.schedule.ratio),
        T,
    )
    for p in (scaled, moved, both):
        np.testing.assert_allclose(p.effective_noise(), base.effective_noise(), rtol=1e-13)
        assert p.canonical_key() == base.canonical_key()
    eps = np.array([2.0, 10.0, 40.0])
    for view in ("paper", "network"):
        settings = AccountantSettings(view=view, realisations=3)
        ref = evaluate_delta(problem, base, eps, settings)
        assert (ref.pairs["delta_mean"] < 1e-3).any()
        for p in (scaled, moved, both):
            res = evaluate_delta(problem, p, eps, settings)
            assert_log_close(res.pairs["delta_mean"].to_numpy(), ref.pairs["delta_mean"].to_numpy(), rtol=1e-7)
            assert_log_close(res.delta, ref.delta, rtol=1e-7)
            assert res.worst == ref.worst or np.allclose(ref.delta, 1.0)
    z0, zp = draw_standard_normals(problem.n, T, run_generators(0, ("inv",), range(50)))
    err = ddppm_errors(problem, base, z0, zp)
    for p in (scaled, moved, both):
        np.testing.assert_allclose(ddppm_errors(problem, p, z0, zp), err, rtol=1e-10)


def test_delta_stable_under_rank_tolerance(problem):
    eps = np.array([2.0, 10.0, 40.0])
    for view, kappa in (("paper", 10.0), ("network", 100.0)):
        params = params_for(problem, 3, kappa)
        a = evaluate_delta(problem, params, eps, AccountantSettings(view=view, realisations=2, rank_rtol=1e-20))
        b = evaluate_delta(problem, params, eps, AccountantSettings(view=view, realisations=2, rank_rtol=1e-24))
        assert_log_close(a.pairs["delta_mean"].to_numpy(), b.pairs["delta_mean"].to_numpy(), rtol=1e-8)


def test_more_noise_gives_smaller_delta(problem):
    """Paper view: the leakage goes through the consensus of the others' noisy iterates, so raising σ_p helps."""
    eps = np.array([2.0, 5.0, 10.0, 20.0])
    settings = AccountantSettings(view="paper", realisations=3)
    deltas = [evaluate_delta(problem, params_for(problem, 2, k), eps, settings).delta for k in (1.0, 3.0, 10.0, 30.0)]
    deltas = np.array(deltas)
    assert np.all(np.diff(deltas, axis=0) <= 1e-12)
    assert np.all(deltas[-1] < deltas[0]) or np.all(deltas[0] == 1.0)
    assert deltas[-1, -1] < 0.2 * deltas[0, -1]


def test_network_view_has_a_noise_floor(problem):
    """Network view: z_j^(1) = X_jᵀ q_j^(0) is released before any σ_p noise, so δ cannot fall below the
    leakage of that first release however large σ_p is (δ at κ = 100 and κ = 1000 nearly equal)."""
    eps = np.array([10.0, 20.0])
    settings = AccountantSettings(view="network", realisations=2)
    d100 = evaluate_delta(problem, params_for(problem, 1, 100.0), eps, settings).delta
    d1000 = evaluate_delta(problem, params_for(problem, 1, 1000.0), eps, settings).delta
    d1 = evaluate_delta(problem, params_for(problem, 1, 1.0), eps, settings).delta
    assert np.all(d1000 <= d100 + 1e-12) and np.all(d100 <= d1)
    np.testing.assert_allclose(d1000, d100, rtol=0.05)
    assert d1000.min() > 0.05


def test_pairs_table_and_worst(problem):
    params = params_for(problem, 2, 10.0)
    eps = np.array([1.0, 5.0, 20.0])
    res = evaluate_delta(problem, params, eps, AccountantSettings(view="paper", realisations=3))
    pairs = res.pairs
    assert len(pairs) == 4 * 3 * 3 * eps.size
    assert not (pairs["observer"] == pairs["agent"]).any()
    for e_idx, e in enumerate(eps):
        sub = pairs[pairs["eps"] == e]
        assert res.delta[e_idx] == sub["delta_mean"].max()
        assert res.delta_max[e_idx] == sub["delta_max"].max()
        assert res.delta_upper[e_idx] == sub["delta_upper_mean"].max()
        w = res.worst[e_idx]
        row = sub[
            (sub.observer == w["observer"])
            & (sub.agent == w["agent"])
            & (sub.row == w["row"])
            & (sub.kind == w["kind"])
        ]
        assert row["delta_mean"].iloc[0] == res.delta[e_idx]
    assert np.all(res.delta <= res.delta_max) and np.all(res.delta <= 1)
    assert np.all(pd.notna(res.delta_se))


# ------------------------------------------------------------------------------------------------ bad inputs


@pytest.mark.parametrize("eps", [[0.0], [-1.0], [1.0, np.nan], [np.inf], []])
def test_bad_epsilons_raise_privacy_error(problem, eps):
    params = params_for(problem, 2, 10.0)
    with pytest.raises(PrivacyError, match="epsilons"):
        evaluate_delta(problem, params, eps, AccountantSettings(view="paper", realisations=1))
    with pytest.raises(PrivacyError, match="epsilons"):
        delta_reference(problem, params, eps, AccountantSettings(view="paper", realisations=1))


def test_unknown_view_and_rank_mode_raise_config_error(problem):
    params = params_for(problem, 2, 10.0)
    with pytest.raises(ConfigError, match="threat_models.<name>.view"):
        evaluate_delta(problem, params, [1.0], AccountantSettings(view="everyone", realisations=1))
    with pytest.raises(ConfigError, match="methods.ddppm.privacy.rank_mode"):
        evaluate_delta(problem, params, [1.0], AccountantSettings(rank_mode="full", realisations=1))
    with pytest.raises(ConfigError, match="methods.ddppm.privacy.rank_mode"):
        delta_reference(problem, params, [1.0], AccountantSettings(rank_mode="full", realisations=1, observers=(0,)))
    with pytest.raises(ConfigError, match="methods.ddppm.privacy.candidate_kinds"):
        AccountantSettings(candidate_kinds=("zero", "swap"))


def test_reference_cgf_matches_library_cgf():
    """The reference's slogdet/solve K(s) and the library's simultaneous-diagonalisation K(s) agree."""
    rng = np.random.default_rng(3)
    A = rng.standard_normal((5, 5))
    S1 = A @ A.T / 5 + 0.2 * np.eye(5)
    B = np.eye(5) + 0.3 * rng.standard_normal((5, 5))
    S2 = B @ S1 @ B.T
    dmu = rng.standard_normal(5)
    F1, F2 = np.linalg.cholesky(S1), np.linalg.cholesky(S2)
    pair = diagonalize(SupportBasis.of_factor(F1), F1, F2)
    w2 = (pair.whiten @ dmu)[:, None] ** 2
    for sign in (+1, -1):
        limit = domain_limit(S1, S2, sign)
        bad = pair.beta < 0 if sign > 0 else pair.beta > 0
        exact = np.min((1 + pair.beta[bad]) / np.abs(pair.beta[bad])) if bad.any() else np.inf
        assert limit == pytest.approx(min(exact, 1e8), rel=1e-9)
        for s in np.geomspace(1e-6, 0.999 * min(limit, 50), 7):
            assert cgf_direct(sign * s, S1, S2, dmu) == pytest.approx(
                cgf(np.array([sign * s]), pair.beta, w2)[0, 0], rel=1e-8, abs=1e-14
            )
        if np.isfinite(exact):
            assert cgf_direct(sign * exact * 1.01, S1, S2, dmu) == np.inf


def test_regression_duplicate_epsilons_misalign_results(problem):
    """Regression (fixed) in accountant.evaluate_delta / check_epsilons): a repeated ε is merged by
    ``groupby("eps")``, so
    ``delta`` is shorter than ``eps`` and no longer aligned with it. Fix: reject duplicates in
    check_epsilons (naming `epsilons`) or group by the ε index instead of its value."""
    with pytest.raises(PrivacyError, match="epsilons"):
        evaluate_delta(problem, params_for(problem, 2, 10.0), [5.0, 1.0, 5.0], AccountantSettings(view="paper"))


def test_low_rank_route_is_taken_and_changes_nothing(problem, monkeypatch):
    """evaluate_delta under `sound`'s network view diagonalises every pair on the low-rank route
    (ddppm.privacy.gaussian.diagonalize) and gives the dense route's δ, hockey stick and KL."""
    import ddppm.accounting.accountant as accountant
    import ddppm.privacy.gaussian as gaussian

    routes = []

    def spy(*args, **kwargs):
        pair = gaussian.diagonalize(*args, **kwargs)
        routes.append(pair.residual is not None)
        return pair

    monkeypatch.setattr(accountant, "diagonalize", spy)
    params = params_for(problem, 3, 30.0)
    settings = AccountantSettings(view="network", accounting="exact", realisations=2, observers=(0, 2), seed=4)
    eps = [2.0, 10.0, 40.0]
    low = evaluate_delta(problem, params, eps, settings).pairs.set_index(KEYS).sort_index()
    assert routes and all(routes)
    monkeypatch.setattr(gaussian, "LOW_RANK_SHARE", 0.0)
    dense = evaluate_delta(problem, params, eps, settings).pairs.set_index(KEYS).sort_index()
    assert not any(routes[len(low) // len(eps) :])
    for col in ("delta_mean", "delta_hockey_mean", "delta_upper_mean", "delta_lower_mean"):
        assert_log_close(low[col].to_numpy(), dense[col].to_numpy(), rtol=1e-7)
    np.testing.assert_allclose(low["kl_mean"], dense["kl_mean"], rtol=1e-6)
    assert low["delta_mean"].min() < 0.05 and (low["delta_mean"] > 0.5).any()  # δ spans a range: not vacuous
