"""Tests of ddppm.methods.ddppm.theory: the covariance Ω of q^(T), the proxy of eq. (71) and Theorem 3 (eq. 40)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ddppm.accounting.iteration import (
    DDPPMParams,
    NoiseSchedule,
    ddppm_errors,
    ddppm_network,
    draw_standard_normals,
    scale_draws,
)
from ddppm.core.errors import ConfigError
from ddppm.core.metrics import sin_error
from ddppm.core.network import paper_ring_w, partition_rows
from ddppm.core.problem import DistributedProblem
from ddppm.methods.ddppm.theory import (
    _diag_minus_rank_one_extremes,
    _hw_f,
    _proxy_from,
    _xi_eigh,
    corollary1_rho_bound,
    expected_sin2_proxy,
    final_covariance,
    hanson_wright_delta,
    omega_weights,
    theorem3_bound,
)

GAMMA = 0.05


def make_problem(n: int = 60, d: int = 5, c: int = 40, seed: int = 0, scales=(4.0, 1.5, 1.0, 0.7, 0.5)):
    """Rows in the unit ball, a clear eigengap, the paper's 4-agent ring."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.asarray(scales)[:d]
    X /= np.linalg.norm(X, axis=1).max()
    return DistributedProblem.from_partition(X, partition_rows(n, 4, seed=seed), paper_ring_w(), c)


def params_for(problem: DistributedProblem, T: int, kind: str = "geometric", kappa: float = 0.1) -> DDPPMParams:
    """Corollary-1 style parameters: α = 1/sqrt(μ₁μ₂), σ_q = 1/sqrt(n), σ_p(t) = κσ_q r^t."""
    alpha = 1.0 / math.sqrt(problem.mu1 * problem.mu2)
    sq = 1.0 / math.sqrt(problem.n)
    ratio = problem.mu2 / problem.mu1 if kind == "geometric" else 1.0
    return DDPPMParams(alpha=alpha, sigma_q=sq, schedule=NoiseSchedule(kind, kappa * sq, ratio), T=T)


def simulate_q(problem: DistributedProblem, params: DDPPMParams, runs: int, seed: int = 0) -> np.ndarray:
    rngs = [np.random.default_rng([seed, r]) for r in range(runs)]
    q0, P = scale_draws(params, *draw_standard_normals(problem.n, params.T, rngs))
    return ddppm_network(problem, params, q0, P)


# --------------------------------------------------------------------------------------------- Ω


def test_final_covariance_equals_matrix_power_formula():
    pr = make_problem(n=24, d=4, c=2, scales=(3.0, 1.5, 1.0, 0.5))  # c = 2: Ξ differs from XXᵀ
    p = params_for(pr, T=4, kappa=0.5)
    A = p.alpha * pr.Xi
    expected = p.sigma_q**2 * np.linalg.matrix_power(A, 2 * p.T)
    for k, s in enumerate(p.sigmas, start=1):
        expected += s**2 * np.linalg.matrix_power(A, 2 * (p.T - k))
    Omega = final_covariance(pr, p)
    np.testing.assert_allclose(Omega, expected, rtol=1e-9, atol=1e-12 * np.abs(expected).max())
    np.testing.assert_allclose(Omega, Omega.T)
    assert np.linalg.eigvalsh(Omega).min() > 0


def test_final_covariance_matches_simulated_runs():
    """Ω̂ = QQᵀ/R over R runs; each entry's z-score uses Var(Ω̂_ij) = (Ω_iiΩ_jj + Ω_ij²)/R (zero mean).

    With 300 distinct entries, max |z| > 5.5 has probability < 300 · 4e-8 ≈ 1e-5 (and the seeds are fixed).
    """
    pr = make_problem(n=24, d=4, c=2, scales=(3.0, 1.5, 1.0, 0.5))
    p = params_for(pr, T=3, kappa=1.0)
    R = 20000
    q = simulate_q(pr, p, R)
    emp = q @ q.T / R
    Omega = final_covariance(pr, p)
    dg = np.diag(Omega)
    se = np.sqrt((np.outer(dg, dg) + Omega**2) / R)
    z = np.abs(emp - Omega) / se
    assert z.max() < 5.5
    assert np.linalg.norm(emp - Omega) / np.linalg.norm(Omega) < 0.05


def test_omega_weights_horner_matches_direct_sum():
    pr = make_problem()
    p = params_for(pr, T=6, kind="constant", kappa=2.0)
    mu = np.array([pr.mu1, pr.mu2, 0.3, 0.0, -0.2])
    x = (p.alpha * mu) ** 2
    direct = p.sigma_q**2 * x**p.T + sum(s**2 * x ** (p.T - k) for k, s in enumerate(p.sigmas, start=1))
    np.testing.assert_allclose(omega_weights(mu, p), direct, rtol=1e-12)


# --------------------------------------------------------------------------------------------- proxy


def test_proxy_is_norm_weighted_mean_of_sin2_not_the_mean():
    """E[‖Pq‖²]/E[‖q‖²] = 1 − vᵀΩv/TrΩ exactly, i.e. the ‖q‖²-weighted mean of sin²; E[sin²] is different.

    Ratio estimator Σy/Σx with y = ‖Pq‖², x = ‖q‖²: delta-method s.e. = sd(y − p x)/(√R · mean x).
    """
    pr = make_problem()
    p = params_for(pr, T=6, kind="constant", kappa=0.1)
    proxy = expected_sin2_proxy(pr, p)
    Omega = final_covariance(pr, p)
    v = pr.top_eigenvector
    assert proxy == pytest.approx(1 - v @ Omega @ v / np.trace(Omega), rel=1e-9)

    R = 20000
    q = simulate_q(pr, p, R, seed=1)
    x = np.sum(q**2, axis=0)
    sin2 = sin_error(v, q) ** 2
    y = sin2 * x
    ratio = y.sum() / x.sum()
    se_ratio = np.std(y - proxy * x, ddof=1) / (math.sqrt(R) * x.mean())
    assert abs(ratio - proxy) < 4 * se_ratio

    # Eq. (72) claims E[sin²] = proxy; here E[sin²] exceeds it by many standard errors (and a large factor).
    se_mean = np.std(sin2, ddof=1) / math.sqrt(R)
    assert sin2.mean() - proxy > 10 * se_mean
    assert sin2.mean() > 3 * proxy


def test_proxy_is_isotropic_limit():
    """With Ω ∝ I the proxy is (n−1)/n, which is then also E[sin²] (direction independent of the norm)."""
    n = 50
    vt = np.zeros(n)
    vt[3] = 1.0
    assert _proxy_from(np.ones(n), vt) == pytest.approx((n - 1) / n)


# --------------------------------------------------------------------------------------------- helpers


@pytest.mark.parametrize("seed", range(6))
def test_diag_minus_rank_one_extremes_match_eigvalsh(seed):
    rng = np.random.default_rng(seed)
    n = 30
    d = rng.exponential(size=n) * 10 ** rng.uniform(-3, 1, size=n)
    a = rng.standard_normal(n) * 10 ** rng.uniform(-2, 0.5, size=n)
    if seed % 2:
        d[:5] = d[0]  # ties
        a[5:9] = 0.0  # deflated entries
    if seed == 4:
        a[np.argmax(d)] = 0.0  # the largest diagonal entry is itself an eigenvalue
    lo, hi = _diag_minus_rank_one_extremes(d, a**2)
    ev = np.linalg.eigvalsh(np.diag(d) - np.outer(a, a))
    scale = max(abs(ev).max(), 1.0)
    assert lo == pytest.approx(ev[0], abs=1e-12 * scale)
    assert hi == pytest.approx(ev[-1], abs=1e-12 * scale)


def test_hw_f_matches_dense_computation():
    """f(Δ) in Ω's eigenbasis equals [2‖Q−ΘΩ‖_F√L + 2‖Q−ΘΩ‖₂L]/TrΩ computed with dense matrices."""
    pr = make_problem(n=24, d=4, c=2, scales=(3.0, 1.5, 1.0, 0.5))
    p = params_for(pr, T=3, kind="constant", kappa=1.0)
    Omega = final_covariance(pr, p)
    ev, V = np.linalg.eigh(Omega)
    Oh = (V * np.sqrt(np.clip(ev, 0, None))) @ V.T
    v = pr.top_eigenvector
    P = np.eye(pr.n) - np.outer(v, v)
    Q = Oh @ P @ Oh
    proxy = 1 - v @ Omega @ v / np.trace(Omega)
    L = math.log(1 / GAMMA)
    mu, U = _xi_eigh(pr)
    w = omega_weights(mu, p)
    vt = U.T @ v
    for delta in (0.0, 0.01, 0.3):
        A = Q - (proxy + delta) * Omega
        dense = (2 * np.linalg.norm(A, "fro") * math.sqrt(L) + 2 * np.linalg.norm(A, 2) * L) / np.trace(Omega)
        assert _hw_f(delta, w, w * vt**2, _proxy_from(w, vt), L) == pytest.approx(dense, rel=1e-8)


def test_hanson_wright_delta_is_least_self_consistent_value_when_one_exists():
    """Near-isotropic Ω with a large γ: a valid Δ exists; it is the least Δ with Δ ≥ f(Δ) and the iterate's limit."""
    n = 200
    rng = np.random.default_rng(0)
    w = 1 + 0.1 * rng.random(n)
    vt = rng.standard_normal(n)
    gamma = 0.95
    res = hanson_wright_delta(w, vt, gamma)
    assert res["feasible"] and np.isfinite(res["delta"])
    L = math.log(1 / gamma)
    wn = w / w.max()
    vtn = vt / np.linalg.norm(vt)
    proxy = _proxy_from(wn, vtn)

    def f(x):
        return _hw_f(x, wn, wn * vtn**2, proxy, L)

    delta = res["delta"]
    assert delta >= f(delta) - 1e-12
    grid = np.linspace(0, delta, 400)[:-1]
    assert all(g < f(g) for g in grid)  # nothing smaller is self-consistent
    assert res["iterate_converged"]
    assert res["delta_iterate"] == pytest.approx(delta, rel=1e-6)


def test_hanson_wright_step_is_vacuous_below_gamma_0875_for_exact_consensus():
    """v an eigenvector of Ω: ‖Q−ΘΩ‖ ≥ Θ vᵀΩv forces K = 2√L + 2L ≤ 1, i.e. γ ≥ 0.875, for Θ ≤ 1."""
    n = 500
    w = np.ones(n)
    w[0] = 3.0
    vt = np.zeros(n)
    vt[0] = 1.0
    for gamma in (0.01, 0.05, 0.5, 0.87):
        res = hanson_wright_delta(w, vt, gamma)
        assert not res["feasible"] and res["delta"] == math.inf
        assert res["max_slack"] < 0
    assert hanson_wright_delta(w, vt, 0.9)["feasible"]


# --------------------------------------------------------------------------------------------- Theorem 3


def test_power_term_decays_like_mu_ratio_squared_without_noise():
    pr = make_problem(c=200)  # λ₂^c ≈ 6e-61: no consensus error
    r2 = (pr.mu2 / pr.mu1) ** 2
    prev = None
    for T in range(1, 9):
        p = DDPPMParams(alpha=1.0 / pr.mu1, sigma_q=0.1, schedule=NoiseSchedule("constant", 0.0), T=T)
        b = theorem3_bound(pr, p)
        assert b["rho"] == pytest.approx(1.0)
        assert b["power_term"] == pytest.approx(2 * (pr.n - 1) * r2**T, rel=1e-9)
        assert b["consensus_term"] < 1e-50
        assert b["proxy"] <= b["power_term"] / 2 * (1 + 1e-9)  # eq. (77) without the factor 2
        if prev is not None:
            assert b["power_term"] / prev == pytest.approx(r2, rel=1e-9)
        prev = b["power_term"]


@pytest.mark.parametrize("c", [1, 3, 10, 40])
@pytest.mark.parametrize("kind", ["geometric", "constant"])
def test_deterministic_part_of_theorem3_holds(c, kind):
    """Eq. (79): proxy ≤ consensus + power; Davis–Kahan: sin²(u, v) ≤ consensus term; E ≤ n_i m λ₂^c."""
    pr = make_problem(c=c)
    mu, U = _xi_eigh(pr)
    u = U[:, 0]
    v = pr.top_eigenvector
    for T in (1, 3, 8, 20):
        for kappa in (0.01, 1.0, 30.0):
            b = theorem3_bound(pr, params_for(pr, T, kind, kappa))
            assert b["proxy"] <= b["consensus_term"] + b["power_term"]
            assert b["E_exact"] <= b["E_bound"] * (1 + 1e-9)
            assert 1 - (u @ v) ** 2 <= b["consensus_term"] + 1e-12
            assert b["E_exact"] == pytest.approx(np.linalg.norm(pr.Xi - pr.X @ pr.X.T, 2), rel=1e-8, abs=1e-14)


def test_corollary1_bounds_rho_when_its_conditions_hold():
    pr = make_problem()
    for T in (2, 5, 10):
        for kappa in (0.1, 1.0):
            p = params_for(pr, T, "geometric", kappa)
            p = DDPPMParams(p.alpha, p.sigma_q, NoiseSchedule("geometric", kappa, pr.mu2 / pr.mu1), T)
            cor = corollary1_rho_bound(pr, p)
            assert cor["conditions_met"]
            b = theorem3_bound(pr, p)
            assert b["rho"] <= cor["bound"]
            assert b["rho_corollary1"] == cor["bound"]


SETTINGS = [("constant", 0.01, 8), ("constant", 0.1, 8), ("constant", 0.1, 12), ("constant", 1.0, 12)]


@pytest.fixture(scope="module")
def simulated_settings():
    pr = make_problem()
    rngs = [np.random.default_rng([7, r]) for r in range(4000)]
    z0, zp = draw_standard_normals(pr.n, 12, rngs)
    out = []
    for kind, kappa, T in SETTINGS:
        p = params_for(pr, T, kind, kappa)
        err = ddppm_errors(pr, p, z0, zp)
        out.append((theorem3_bound(pr, p, GAMMA), err))
    return out


def test_theorem3_bound_holds_but_is_vacuous(simulated_settings):
    """With Θ and Δ self-consistent no valid Δ exists, so the only bound Theorem 3 proves is sin ≤ 1."""
    for b, err in simulated_settings:
        assert b["bound_sin"] >= np.quantile(err, 1 - GAMMA)
        assert not b["hw_feasible"]
        assert b["hanson_wright_term"] == math.inf
        assert b["bound_sin"] == 1.0
        assert not b["hw_iterate_converged"]  # the plain iteration Δ ← f(Δ) from 0 does not converge


@pytest.mark.xfail(
    strict=True,
    reason="Theorem 3 fails under the literal one-step reading (Δ = f(0), Θ = 1 − vᵀΩv/TrΩ inside the norms): "
    "in these settings 22-26% of runs exceed the bound instead of at most 5%",
)
def test_theorem3_one_step_reading_bounds_95pct_quantile(simulated_settings):
    for b, err in simulated_settings:
        assert b["bound_sin_one_step"] >= np.quantile(err, 1 - GAMMA)


def test_one_step_reading_violation_is_large(simulated_settings):
    """The finding behind the xfail above, stated positively (fraction exceeding well above γ = 5%)."""
    for b, err in simulated_settings:
        assert b["bound_sin_one_step"] < 1.0
        assert np.mean(err > b["bound_sin_one_step"]) > 0.12


def test_theorem3_bound_keys_and_types():
    pr = make_problem()
    b = theorem3_bound(pr, params_for(pr, 5))
    for key in ("bound_sin", "consensus_term", "power_term", "hanson_wright_term", "proxy", "rho"):
        assert isinstance(b[key], float)
    assert 0.0 <= b["bound_sin"] <= 1.0
    assert b["n_i"] == int(pr.sizes.max())
    assert b["lambda2_W"] == pytest.approx(0.5)


@pytest.mark.parametrize("gamma", [0.0, 1.0, -0.1, 2.0])
def test_gamma_is_validated(gamma):
    pr = make_problem()
    with pytest.raises(ConfigError):
        theorem3_bound(pr, params_for(pr, 3), gamma=gamma)
