"""Unit tests of the local-DP PCA family (Wang & Xu): every formula against an independent route.

Routes: Dykstra's alternating projections, a variational inequality and a conic solver (cvxpy, when
installed) for the Fantope projection and problem (5); Ky Fan's closed form (λ = 0) and a duality-gap
certificate; Monte Carlo for the noise-level λ, the chance level, the privacy loss, the Chernoff bound and the
Wishart law; Kolmogorov–Smirnov tests for the per-user vs aggregated release; brute force for the sensitivity.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import minimize

from ddppm.methods import available_methods, get_method
from ddppm.methods.ldppca.admm import duality_gap, fantope_admm, noise_level_lambda, penalised_objective
from ddppm.methods.ldppca.fantope import clipped_eigenvalues, fantope_projection, fantope_shift, soft_threshold
from ddppm.methods.ldppca.mechanism import (
    SENSITIVITY,
    achieved_delta,
    aggregated_release,
    per_user_release,
    release_sigma,
    symmetric_noise,
    upper_triangle,
    upper_triangle_distance,
)
from ddppm.methods.ldppca.metrics import chance_level, projector_distance, top_eigenvectors
from ddppm.methods.ldppca.models import (
    covariance,
    covariance_eigenvalues,
    haar_subspace,
    nested_scatters,
    norm_exceedance_bound,
    row_scatter,
    sample_rows,
    sparse_subspace,
    sqrt_covariance_apply,
    wishart_scatter,
)
from ddppm.methods.ldppca.screening import solve_penalised_fantope
from ddppm.methods.ldppca.task import LOCAL_DP_PCA, RateInputs
from ddppm.methods.ldppca.theory import fit_constant, theorem2_rates, theorem4_rates


def _sym(rng: np.random.Generator, p: int, scale: float = 1.0) -> np.ndarray:
    G = scale * rng.standard_normal((p, p))
    return (G + G.T) / 2


def _cvxpy_problem5(S: np.ndarray, k: int, lam: float) -> np.ndarray:
    cp = pytest.importorskip("cvxpy")
    p = S.shape[0]
    X = cp.Variable((p, p), symmetric=True)
    constraints = [X >> 0, np.eye(p) - X >> 0, cp.trace(X) == k]
    cp.Problem(cp.Maximize(cp.trace(S @ X) - lam * cp.sum(cp.abs(X))), constraints).solve(solver="CLARABEL")
    return np.asarray(X.value)


# --- Fantope projection (Algorithm 2 line 8) -------------------------------------------------------------


@pytest.mark.parametrize(("p", "k"), [(1, 1), (5, 1), (8, 3), (8, 8), (30, 10)])
def test_fantope_projection_has_trace_k_and_eigenvalues_in_unit_interval(p, k):
    rng = np.random.default_rng(p * 100 + k)
    for scale in (0.01, 1.0, 50.0):
        P = fantope_projection(_sym(rng, p, scale), k)
        eig = np.linalg.eigvalsh(P)
        assert np.trace(P) == pytest.approx(k, abs=1e-10)
        assert eig.min() >= -1e-12 and eig.max() <= 1 + 1e-12
        np.testing.assert_allclose(P, P.T, atol=1e-14)
        np.testing.assert_allclose(fantope_projection(P, k), P, atol=1e-9)  # a projection is idempotent


def test_fantope_shift_solves_the_trace_equation_exactly():
    rng = np.random.default_rng(0)
    for _ in range(20):
        gamma = rng.normal(size=12) * rng.choice([1e-3, 1.0, 1e3])
        k = int(rng.integers(1, 12))
        theta = fantope_shift(gamma, k)
        assert np.clip(gamma - theta, 0, 1).sum() == pytest.approx(k, abs=1e-9)
        assert clipped_eigenvalues(gamma, k).sum() == pytest.approx(k, abs=1e-9)


def test_fantope_projection_matches_dykstras_alternating_projections():
    """Independent route: Dykstra's algorithm between {0 ⪯ X ⪯ I} (clip the eigenvalues to [0, 1]) and the
    affine {tr X = k} (shift by a multiple of I) converges to the projection onto their intersection."""
    rng = np.random.default_rng(1)
    for p, k in [(3, 1), (3, 2), (6, 2), (6, 5)]:
        A = _sym(rng, p, 1.5)
        X, P_inc, Q_inc = A.copy(), np.zeros_like(A), np.zeros_like(A)
        for _ in range(4000):  # a fixed count: Dykstra's iterates may pause while its increments still move
            Y = X + P_inc
            w, U = np.linalg.eigh(Y)
            Z = (U * np.clip(w, 0, 1)) @ U.T  # onto the box
            P_inc = Y - Z
            W = Z + Q_inc
            X = W + (k - np.trace(W)) / p * np.eye(p)  # onto the trace hyperplane
            Q_inc = W - X
        np.testing.assert_allclose(Z, X, atol=1e-9)  # converged: both projections agree
        np.testing.assert_allclose(fantope_projection(A, k), X, atol=1e-7)


def test_fantope_projection_satisfies_the_variational_inequality():
    """P = P_F(A) iff P ∈ F and ⟨A − P, Z − P⟩ <= 0 for all Z ∈ F; the maximum over Z is the sum of the k
    largest eigenvalues of A − P (the extreme points of F are rank-k projectors), a check without clipping."""
    rng = np.random.default_rng(3)
    for p, k in [(4, 1), (7, 3), (20, 6)]:
        A = _sym(rng, p, 2.0)
        P = fantope_projection(A, k)
        top_k = np.linalg.eigvalsh(A - P)[-k:].sum()
        assert top_k == pytest.approx(np.sum((A - P) * P), abs=1e-9)
        Q = fantope_projection(A + _sym(rng, p, 0.5), k)  # another point of F is not closer to A
        assert np.sum((A - Q) ** 2) >= np.sum((A - P) ** 2)


def test_fantope_projection_matches_a_conic_solver():
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(2)
    A, k = _sym(rng, 5), 2
    X = cp.Variable((5, 5), symmetric=True)
    cp.Problem(cp.Minimize(cp.sum_squares(X - A)), [X >> 0, np.eye(5) - X >> 0, cp.trace(X) == k]).solve(
        solver="CLARABEL"
    )
    np.testing.assert_allclose(fantope_projection(A, k), X.value, atol=1e-6)


def test_soft_threshold_is_the_l1_proximal_map():
    grid = np.linspace(-5, 5, 200001)
    for a in (-3.0, -0.4, 0.0, 0.2, 2.5):
        for t in (0.0, 0.5, 1.0):
            brute = grid[np.argmin(0.5 * (grid - a) ** 2 + t * np.abs(grid))]
            assert soft_threshold(np.array(a), t) == pytest.approx(brute, abs=1e-4)


# --- problem (5): ADMM and the screened solver ------------------------------------------------------------


def _tiny_sparse_covariance(seed: int, p: int = 6, k: int = 2, s: int = 3, n: int = 400) -> np.ndarray:
    rng = np.random.default_rng(seed)
    V = sparse_subspace(rng, p, k, s)
    X, _ = sample_rows(rng, V, 3.0, n)
    return X.T @ X / n  # the non-private sample covariance (zero noise)


@pytest.mark.parametrize("seed", [0, 1])
def test_admm_with_zero_noise_matches_the_convex_optimum(seed):
    """σ = 0: S̃ = S; ADMM and an interior-point conic solver find the same optimum of problem (5)."""
    S = _tiny_sparse_covariance(seed)
    lam = 0.2 * np.abs(S - np.diag(np.diag(S))).max()
    result = fantope_admm(S, 2, lam, tol_abs=1e-12, tol_rel=1e-10, max_iter=20000)
    reference = _cvxpy_problem5(S, 2, lam)
    assert result.converged
    assert penalised_objective(S, result.Y, lam) == pytest.approx(penalised_objective(S, reference, lam), rel=1e-6)
    np.testing.assert_allclose(result.Y, reference, atol=1e-4)


def test_admm_without_penalty_gives_the_top_k_projector():
    """λ = 0: the Fantope maximiser of ⟨S, X⟩ is the projector on the top-k eigenvectors (Ky Fan)."""
    S = _tiny_sparse_covariance(3, p=8, k=3, s=5)
    result = fantope_admm(S, 3, 0.0, tol_abs=1e-12, tol_rel=1e-10, max_iter=20000)
    V = top_eigenvectors(S, 3)
    np.testing.assert_allclose(result.Y, V @ V.T, atol=1e-6)


def test_admm_dual_certifies_optimality():
    """The duality gap of ADMM's own dual (W = ρU/λ) vanishes at convergence, and is >= 0 for any W."""
    rng = np.random.default_rng(4)
    S = _sym(rng, 10, 0.3) + np.diag(rng.uniform(0, 1, 10))
    lam = 0.1
    result = fantope_admm(S, 3, lam, tol_abs=1e-12, tol_rel=1e-10, max_iter=50000)
    scale = np.abs(penalised_objective(S, result.X, lam))
    assert duality_gap(S, result.X, result.rho * result.U / lam, lam, 3) == pytest.approx(0, abs=1e-6 * scale)
    assert duality_gap(S, result.X, rng.uniform(-1, 1, (10, 10)), lam, 3) >= -1e-12


def test_screened_solver_matches_the_full_problem():
    rng = np.random.default_rng(5)
    for trial in range(4):
        p, k = 12, 2
        V = sparse_subspace(rng, p, k, 4)
        S = covariance(V, 4.0) + _sym(rng, p, 2e-3)
        lam = [5e-4, 1e-3, 3e-3, 1e-2][trial]
        screened = solve_penalised_fantope(S, k, lam, tol_abs=1e-12, tol_rel=1e-10, max_iter=50000)
        full = fantope_admm(S, k, lam, tol_abs=1e-12, tol_rel=1e-10, max_iter=50000)
        assert penalised_objective(S, screened.Y, lam) == pytest.approx(penalised_objective(S, full.Y, lam), rel=1e-6)
        assert screened.block.size <= p


def test_screened_closed_form_is_optimal_when_the_penalty_hides_every_off_diagonal_entry():
    rng = np.random.default_rng(6)
    S = _sym(rng, 9, 0.1) + np.diag(rng.uniform(0, 1, 9))
    lam = 1.01 * np.abs(S - np.diag(np.diag(S))).max()
    solution = solve_penalised_fantope(S, 3, lam)
    assert solution.closed_form and solution.iterations == 0
    top3 = np.argsort(np.diag(S))[-3:]
    np.testing.assert_array_equal(np.flatnonzero(np.diag(solution.Y)), np.sort(top3))
    W = np.clip(S / lam, -1, 1)  # the certificate of the extension lemma
    np.fill_diagonal(W, 1.0)
    assert duality_gap(S, solution.Y, W, lam, 3) == pytest.approx(0, abs=1e-12)
    if importlib.util.find_spec("cvxpy") is not None:  # the certificate above stands without it
        ref = _cvxpy_problem5(S, 3, lam)
        assert penalised_objective(S, ref, lam) == pytest.approx(penalised_objective(S, solution.Y, lam), abs=1e-6)


def test_noise_level_lambda_is_the_quantile_of_the_largest_noise_entry():
    """Monte Carlo: P(max_{i<=j} |E_ij| > λ) = α for i.i.d. N(0, (σ² + 1/4)/n) entries."""
    rng = np.random.default_rng(7)
    p, n, sigma, alpha = 4, 50, 3.0, 0.1
    lam = noise_level_lambda(sigma, n, p, alpha=alpha)
    tau = np.sqrt((sigma**2 + 0.25) / n)
    draws = tau * rng.standard_normal((200000, p * (p + 1) // 2))
    freq = np.mean(np.abs(draws).max(axis=1) > lam)
    assert freq == pytest.approx(alpha, abs=4 * np.sqrt(alpha * (1 - alpha) / 200000))
    assert noise_level_lambda(sigma, n, p, alpha=alpha, scale=2.0) == pytest.approx(2 * lam)


# --- the release (Algorithm 1 lines 1–4) and its σ ----------------------------------------------------------


def test_per_user_and_aggregated_paths_agree_in_distribution():
    rng = np.random.default_rng(8)
    n, p, sigma, draws = 20, 3, 1.7, 3000
    X = rng.normal(size=(n, p)) / 3
    S = X.T @ X / n
    per_user = np.stack([per_user_release(X, sigma, rng) for _ in range(draws)]) - S
    aggregated = aggregated_release(np.broadcast_to(S, (draws, p, p)), n, sigma, rng) - S
    for i, j in [(0, 0), (0, 1), (2, 1), (2, 2)]:
        assert stats.ks_2samp(per_user[:, i, j], aggregated[:, i, j]).pvalue > 1e-3
    for noise in (per_user, aggregated):  # upper-triangle covariance σ²/n I, symmetric matrices
        np.testing.assert_allclose(noise, np.swapaxes(noise, 1, 2))
        cov = np.cov(upper_triangle(noise).T)
        np.testing.assert_allclose(cov, sigma**2 / n * np.eye(6), atol=6 * sigma**2 / n / np.sqrt(draws))


def test_symmetric_noise_has_iid_unit_entries_on_and_above_the_diagonal():
    Z = symmetric_noise(np.random.default_rng(9), 4, (20000,))
    ut = upper_triangle(Z)
    np.testing.assert_allclose(np.cov(ut.T), np.eye(10), atol=0.04)
    np.testing.assert_array_equal(Z, np.swapaxes(Z, 1, 2))


def test_sensitivity_of_the_upper_triangle_release_is_sqrt2():
    e1, e2 = np.eye(3)[:2]
    assert upper_triangle_distance(e1, e2) == pytest.approx(np.sqrt(2))
    rng = np.random.default_rng(10)
    worst = 0.0
    for _ in range(15):  # local maximisation from random starts in the unit ball never exceeds √2
        z0 = rng.normal(size=6)

        def neg(z):
            x, y = z[:3], z[3:]
            x = x / max(1, np.linalg.norm(x))
            y = y / max(1, np.linalg.norm(y))
            return -upper_triangle_distance(x, y)

        worst = max(worst, -minimize(neg, z0, method="Nelder-Mead", options={"maxiter": 4000}).fun)
    assert worst <= SENSITIVITY + 1e-9
    assert worst >= SENSITIVITY - 1e-3


def test_sigma_modes_follow_their_formulas():
    eps, delta = 0.5, 1e-4
    paper = np.sqrt(2 * np.log(1.25 / delta)) / eps
    assert release_sigma(eps, delta, "paper") == pytest.approx(paper)
    assert release_sigma(eps, delta, "corrected") == pytest.approx(np.sqrt(2) * paper)
    assert achieved_delta(release_sigma(eps, delta, "analytic"), eps) == pytest.approx(delta, rel=1e-6)
    assert achieved_delta(release_sigma(eps, delta, "corrected"), eps) < delta / 100  # classic: loose at ε < 1
    # The erratum: the paper's σ assumes Δ = 1. At Δ = √2 the looseness of the classic bound still covers
    # ε = 0.5 (Fig. 3), but not ε = 1 (Fig. 4), where it achieves δ ≈ 1.6e-4 > 1e-4.
    assert achieved_delta(paper, eps) < delta
    assert achieved_delta(release_sigma(1.0, delta, "paper"), 1.0) == pytest.approx(1.57e-4, rel=0.01)
    with pytest.raises(ValueError, match="ldppca.sigma_modes"):
        release_sigma(eps, delta, "bogus")


def test_achieved_delta_matches_a_monte_carlo_privacy_loss():
    """Hockey-stick δ(ε) = E_P[(1 − e^{ε − L})_+] of the releases of e₁ and e₂ (the worst pair), by Monte Carlo."""
    rng = np.random.default_rng(11)
    sigma, eps, draws = 1.5, 0.5, 400000
    x, y = np.eye(2)
    mx, my = upper_triangle(np.outer(x, x)), upper_triangle(np.outer(y, y))
    out = mx + sigma * rng.standard_normal((draws, 3))
    loss = (np.sum((out - my) ** 2, axis=1) - np.sum((out - mx) ** 2, axis=1)) / (2 * sigma**2)
    terms = np.maximum(1 - np.exp(eps - loss), 0)
    mc, se = terms.mean(), terms.std() / np.sqrt(draws)
    assert achieved_delta(sigma, eps) == pytest.approx(mc, abs=4 * se)


# --- metric and chance level ---------------------------------------------------------------------------------


def test_projector_distance_and_chance_level():
    rng = np.random.default_rng(12)
    p, k = 12, 4
    V = haar_subspace(rng, p, k)
    W = haar_subspace(rng, p, k)
    assert projector_distance(W, V) == pytest.approx(np.linalg.norm(W @ W.T - V @ V.T))
    assert projector_distance(V, V) == pytest.approx(0, abs=1e-7)
    guesses = np.stack([haar_subspace(rng, p, k) for _ in range(20000)])
    mean_square = np.mean(projector_distance(guesses, V) ** 2)
    assert mean_square == pytest.approx(chance_level(k, p) ** 2, rel=0.01)
    assert chance_level(5, 40) == pytest.approx(np.sqrt(10 - 50 / 40))


# --- data models ------------------------------------------------------------------------------------------------


def test_covariance_model_and_its_square_root():
    rng = np.random.default_rng(13)
    p, k, spike = 10, 3, 1.0
    V = haar_subspace(rng, p, k)
    Sigma = covariance(V, spike)
    eig = np.linalg.eigvalsh(Sigma)
    top, bottom = covariance_eigenvalues(p, spike)
    np.testing.assert_allclose(eig[-k:], top)
    np.testing.assert_allclose(eig[:-k], bottom)
    np.testing.assert_allclose(top, 1 / (5 * p)) and np.testing.assert_allclose(bottom, 1 / (10 * p))
    root = sqrt_covariance_apply(V, spike, np.eye(p))
    np.testing.assert_allclose(root @ root, Sigma, atol=1e-15)


def test_sparse_subspace_is_orthonormal_with_s_nonzero_rows():
    V = sparse_subspace(np.random.default_rng(14), 50, 4, 9)
    np.testing.assert_allclose(V.T @ V, np.eye(4), atol=1e-12)
    assert np.count_nonzero(np.linalg.norm(V, axis=1) > 0) == 9


@pytest.mark.parametrize("enforcement", ["rescale", "resample"])
def test_rows_lie_in_the_unit_ball_and_the_chernoff_bound_holds(enforcement):
    """p = 2, k = 1: P(||x|| > 1) is about 2e-3, so some rows need the enforcement."""
    rng = np.random.default_rng(15)
    V = np.array([[1.0], [0.0]])
    X, outside = sample_rows(rng, V, 1.0, 200000, enforcement)
    assert np.linalg.norm(X, axis=1).max() <= 1 + 1e-12
    assert outside > 0
    raw = sqrt_covariance_apply(V, 1.0, rng.standard_normal((2, 400000))).T
    freq = np.mean(np.linalg.norm(raw, axis=1) > 1)
    bound = norm_exceedance_bound(np.array([0.1, 0.05]))
    assert freq <= bound
    assert bound < 20 * freq  # and it is not vacuous


@pytest.mark.parametrize("enforcement", ["rescale", "resample"])
def test_row_scatter_equals_the_scatter_of_the_rows(enforcement):
    """Same generator state: the scatter formed without the rows equals XᵀX of :func:`sample_rows`."""
    V = np.array([[1.0], [0.0]])
    X, outside_rows = sample_rows(np.random.default_rng(19), V, 1.0, 50000, enforcement)
    scatter, outside = row_scatter(np.random.default_rng(19), V, 1.0, 50000, enforcement)
    assert outside == outside_rows > 0
    np.testing.assert_allclose(scatter, X.T @ X, rtol=1e-10)


def test_exceedance_bound_at_the_experiment_settings():
    """Rows leave the ball with probability < 1e-13 for p >= 20; at p = 10, k = 5 the bound is 2.4e-7."""
    for p, k in [(20, 10), (40, 20), (400, 10)]:
        top, bottom = covariance_eigenvalues(p, 1.0)
        assert norm_exceedance_bound(np.r_[np.full(k, top), np.full(p - k, bottom)]) < 1e-13
    top, bottom = covariance_eigenvalues(10, 1.0)
    assert norm_exceedance_bound(np.r_[np.full(5, top), np.full(5, bottom)]) == pytest.approx(2.36e-7, rel=0.01)


def test_wishart_scatter_has_the_law_of_a_row_scatter():
    rng = np.random.default_rng(16)
    p, m, draws = 3, 30, 4000
    V = haar_subspace(rng, p, 1)
    wish = np.stack([wishart_scatter(rng, V, 2.0, m) for _ in range(draws)])
    rows = np.stack(
        [(lambda X: X.T @ X)(sqrt_covariance_apply(V, 2.0, rng.standard_normal((p, m))).T) for _ in range(draws)]
    )
    Sigma = covariance(V, 2.0)
    np.testing.assert_allclose(wish.mean(axis=0), m * Sigma, atol=5 * np.sqrt(m / draws) * Sigma.max() * 2)
    for i, j in [(0, 0), (0, 1), (1, 2)]:
        assert stats.ks_2samp(wish[:, i, j], rows[:, i, j]).pvalue > 1e-3
        expected_var = m * (Sigma[i, j] ** 2 + Sigma[i, i] * Sigma[j, j])  # Wishart variance
        assert wish[:, i, j].var() == pytest.approx(expected_var, rel=0.1)


def test_nested_scatters_mix_rows_and_wishart_blocks():
    rng = np.random.default_rng(17)
    V = haar_subspace(rng, 5, 2)
    draws = nested_scatters(rng, V, 1.0, [10, 100, 100000], max_row_entries=1000)
    assert [d.rows_drawn for d in draws] == [10, 100, 100]  # the last block (99900 users) is Wishart
    assert draws[-1].clip_probability_bound > 0 and draws[0].clip_probability_bound == 0
    assert draws[-1].rows_outside_ball == 0
    np.testing.assert_allclose(draws[-1].scatter / 1e5, covariance(V, 1.0), atol=3e-3 / 5)
    with pytest.raises(ValueError, match="increasing"):
        nested_scatters(rng, V, 1.0, [100, 10], 1000)


# --- theory and methods -------------------------------------------------------------------------------------------


def test_fit_constant_recovers_a_known_constant():
    shape = np.array([1.0, 0.5, 0.1, 0.02])
    constant, rms, used = fit_constant(3.0 * shape * np.exp([0.1, -0.1, 0.1, -0.1]), shape)
    assert constant == pytest.approx(3.0) and rms == pytest.approx(0.1) and used == 4
    assert np.isnan(fit_constant(np.array([np.nan]), np.array([1.0]))[0])


def test_rates_in_the_covariance_model():
    p, k, n, sigma = 40, 5, 1e6, 2.0
    top, bottom = covariance_eigenvalues(p, 1.0)
    trace = k * top + (p - k) * bottom
    r2 = theorem2_rates(n, p, k, sigma, top, top - bottom, trace)
    assert r2["stated"] == pytest.approx(2 * np.sqrt(k * p * sigma**2 / n))  # λ_1/g = 2 for λ = 1
    assert r2["proof"] == pytest.approx(10 * p * np.sqrt(k / n) * (np.sqrt(p) * sigma + np.sqrt(top * trace)))
    r4 = theorem4_rates(n, 400, 20, sigma, 1 / 2000, 1 / 4000)
    assert r4["proof"] / r4["stated"] == pytest.approx((sigma + 1 / 2000) / (sigma * 1 / 2000) / 1)


def test_registered_methods_recover_the_subspace_without_noise():
    methods = available_methods(task=LOCAL_DP_PCA)
    assert set(methods) == {"ldppca_gaussian", "ldppca_fantope"}
    assert "ldppca_gaussian" not in available_methods()  # the journal task lists only its own methods
    rng = np.random.default_rng(18)
    p, k = 30, 3
    V = sparse_subspace(rng, p, k, 6)
    Sigma = covariance(V, 1.0)[None]
    for name in methods:
        options = {"penalty": 1e-8, "tol_rel": 1e-9, "tol_abs": 1e-12} if name == "ldppca_fantope" else {}
        bases, facts = get_method(name).estimate(Sigma, k, 10**6, 0.0, options)
        assert projector_distance(bases, V)[0] == pytest.approx(0, abs=1e-3)
        np.testing.assert_allclose(bases[0].T @ bases[0], np.eye(k), atol=1e-8)
        point = RateInputs(n=1e4, p=p, k=k, sparsity=6, sigma=1.0, top_eigenvalue=0.1, eigengap=0.05, trace=1.0)
        assert set(get_method(name).rates(point)) == {"stated", "proof"}


def test_findings_name_sparsities_without_empty_sets():
    from ddppm.methods.ldppca.summary import _which_is_better

    assert _which_is_better([4], []) == "Algorithm 2 is the better one at every sparsity (s = 4)"
    assert _which_is_better([4, 8], [16]) == (
        "Algorithm 2 is the better one for s ∈ {4, 8} and the worse one for s = 16"
    )
    assert _which_is_better([], []) == "the two tie"
