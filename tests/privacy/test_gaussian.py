"""Tests of ddppm.privacy.gaussian: Rényi divergences, the privacy-loss CGF and the δ tails (docs/method.md §6).

Every value is checked against something computed another way: closed forms, numerical integration, a
Monte Carlo of the privacy loss, or a brute-force minimisation.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import multivariate_normal as mvn

from ddppm.core.errors import PrivacyError
from ddppm.privacy.gaussian import (
    SupportBasis,
    cgf,
    deltas_from_pair,
    diagonalize,
    kl_divergence,
    log_delta_tail,
    renyi_divergence,
)

# ------------------------------------------------------------------------------------------------ helpers


def random_spd(rng: np.random.Generator, dim: int, floor: float = 0.3) -> np.ndarray:
    A = rng.standard_normal((dim, dim))
    return A @ A.T / dim + floor * np.eye(dim)


def renyi_closed(mu1, S1, mu2, S2, a):
    """Textbook D_α (Gil 2011) for non-singular covariances; inf when Σ_α is not PD."""
    Sa = a * S2 + (1 - a) * S1
    if np.linalg.eigvalsh(Sa).min() <= 0:
        return np.inf
    dm = mu1 - mu2
    ld = np.linalg.slogdet
    return a / 2 * dm @ np.linalg.solve(Sa, dm) - (ld(Sa)[1] - (1 - a) * ld(S1)[1] - a * ld(S2)[1]) / (2 * (a - 1))


def renyi_1d(m1, s1, m2, s2, a):
    """D_α(N(m1, s1²) ‖ N(m2, s2²)) in closed form (s are standard deviations)."""
    va = a * s2**2 + (1 - a) * s1**2
    return np.log(s2 / s1) + np.log(s2**2 / va) / (2 * (a - 1)) + a * (m1 - m2) ** 2 / (2 * va)


def kl_closed(mu1, S1, mu2, S2):
    k = len(mu1)
    S2inv = np.linalg.inv(S2)
    dm = mu2 - mu1
    return 0.5 * (np.trace(S2inv @ S1) - k + dm @ S2inv @ dm + np.linalg.slogdet(S2)[1] - np.linalg.slogdet(S1)[1])


def gaussian_pair(S1, S2):
    F1, F2 = np.linalg.cholesky(S1), np.linalg.cholesky(S2)
    return diagonalize(SupportBasis.of_factor(F1), F1, F2)


def case(seed: int, dim: int, spread: float = 0.3, shift: float = 0.6):
    """Two Gaussians with different means AND covariances (Σ₂ = BΣ₁Bᵀ with B near I)."""
    rng = np.random.default_rng(seed)
    S1 = random_spd(rng, dim)
    B = np.eye(dim) + spread * rng.standard_normal((dim, dim)) / np.sqrt(dim)
    S2 = B @ S1 @ B.T
    mu1 = shift * rng.standard_normal(dim)
    mu2 = np.zeros(dim)
    return mu1, S1, mu2, S2


# ------------------------------------------------------------------------------------------------ Rényi divergence


@pytest.mark.parametrize("order", [0.5, 0.9, 1.5, 2.0, 7.0])
def test_renyi_equal_covariances_is_scaled_mahalanobis(order):
    rng = np.random.default_rng(0)
    for dim in (1, 3, 6):
        S = random_spd(rng, dim)
        mu1, mu2 = rng.standard_normal(dim), rng.standard_normal(dim)
        expected = order * (mu1 - mu2) @ np.linalg.solve(S, mu1 - mu2) / 2
        assert renyi_divergence(mu1, S, mu2, S, order) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("order", [0.3, 0.5, 2.0, 3.0])
def test_renyi_diagonal_is_sum_of_1d(order):
    rng = np.random.default_rng(1)
    s1 = rng.uniform(0.5, 1.5, 5)
    s2 = s1 * rng.uniform(0.85, 1.2, 5)  # keeps Σ_α PD for the orders used
    m1, m2 = rng.standard_normal(5), rng.standard_normal(5)
    expected = sum(renyi_1d(m1[k], s1[k], m2[k], s2[k], order) for k in range(5))
    got = renyi_divergence(m1, np.diag(s1**2), m2, np.diag(s2**2), order)
    assert got == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize(
    ("m1", "s1", "m2", "s2", "order"),
    [(0.0, 1.0, 1.0, 1.0, 2.0), (0.3, 1.0, -0.4, 1.3, 2.5), (0.5, 1.2, 0.0, 0.9, 0.5), (1.0, 0.7, 0.0, 1.0, 0.2)],
)
def test_renyi_1d_matches_numerical_integration(m1, s1, m2, s2, order):
    def integrand(y):
        lp = -0.5 * ((y - m1) / s1) ** 2 - np.log(s1 * np.sqrt(2 * np.pi))
        lq = -0.5 * ((y - m2) / s2) ** 2 - np.log(s2 * np.sqrt(2 * np.pi))
        return np.exp(order * lp + (1 - order) * lq)

    integral, err = integrate.quad(integrand, -40, 40, epsabs=1e-14, epsrel=1e-12, limit=200)
    expected = np.log(integral) / (order - 1)
    got = renyi_divergence(np.array([m1]), np.array([[s1**2]]), np.array([m2]), np.array([[s2**2]]), order)
    assert got == pytest.approx(expected, rel=1e-8, abs=1e-12)
    assert got == pytest.approx(renyi_1d(m1, s1, m2, s2, order), rel=1e-10)


@pytest.mark.parametrize("order", [0.5, 2.0])
def test_renyi_2d_matches_numerical_integration(order):
    mu1, S1 = np.array([0.4, -0.3]), np.array([[1.0, 0.3], [0.3, 0.8]])
    mu2, S2 = np.array([0.0, 0.2]), np.array([[1.2, -0.1], [-0.1, 0.9]])
    p, q = mvn(mu1, S1), mvn(mu2, S2)

    def integrand(y, x):
        pt = np.array([x, y])
        return np.exp(order * p.logpdf(pt) + (1 - order) * q.logpdf(pt))

    integral, _ = integrate.dblquad(integrand, -9, 9, -9, 9, epsabs=1e-11, epsrel=1e-9)
    expected = np.log(integral) / (order - 1)
    assert renyi_divergence(mu1, S1, mu2, S2, order) == pytest.approx(expected, rel=1e-6)
    assert renyi_divergence(mu1, S1, mu2, S2, order) == pytest.approx(renyi_closed(mu1, S1, mu2, S2, order), rel=1e-10)


def test_renyi_order_one_is_kl():
    for seed in range(4):
        mu1, S1, mu2, S2 = case(seed, 4)
        assert renyi_divergence(mu1, S1, mu2, S2, 1.0) == pytest.approx(kl_closed(mu1, S1, mu2, S2), rel=1e-10)
        # and the limit α → 1 from both sides
        assert renyi_divergence(mu1, S1, mu2, S2, 1 + 1e-6) == pytest.approx(kl_closed(mu1, S1, mu2, S2), rel=1e-4)
        assert renyi_divergence(mu1, S1, mu2, S2, 1 - 1e-6) == pytest.approx(kl_closed(mu1, S1, mu2, S2), rel=1e-4)


def test_renyi_infinite_outside_cgf_domain():
    # Σ₂ much smaller than Σ₁: Σ_α = αΣ₂ + (1−α)Σ₁ = (0.01α + 1 − α) I is not PD for α ≥ 1/0.99
    S1, S2 = np.eye(3), 0.01 * np.eye(3)
    mu = np.zeros(3)
    assert np.isfinite(renyi_divergence(mu, S1, mu, S2, 1.01))
    assert renyi_divergence(mu, S1, mu, S2, 1.02) == np.inf
    assert renyi_divergence(mu, S1, mu, S2, 5.0) == np.inf
    # the reverse direction is finite for every order
    assert np.isfinite(renyi_divergence(mu, S2, mu, S1, 50.0))


def _different_supports():
    rng = np.random.default_rng(3)
    A, C = rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
    return A @ A.T, C @ C.T  # rank 2, different ranges


def test_renyi_infinite_for_different_supports():
    S1, S2 = _different_supports()
    mu = np.zeros(3)
    for order in (0.5, 2.0):
        assert renyi_divergence(mu, S1, mu, S2, order, rtol=1e-12) == np.inf
        # full-rank Σ₂ vs singular Σ₁ also has different supports
        assert renyi_divergence(mu, S1, mu, np.eye(3), order, rtol=1e-12) == np.inf
    # mean difference leaving a common singular support
    A = np.random.default_rng(4).standard_normal((3, 2))
    off = np.linalg.svd(A)[0][:, 2]
    assert renyi_divergence(off, A @ A.T, np.zeros(3), A @ A.T, 2.0, rtol=1e-12) == np.inf


def test_regression_renyi_different_supports_default_tolerance():
    """Regression (fixed) in same cause as below): at the default rtol two rank-2 covariances with different ranges
    give a
    finite D_α (18.6 at α = 0.5 here) instead of inf, because eigh's round-off null eigenvalue is kept."""
    S1, S2 = _different_supports()
    assert renyi_divergence(np.zeros(3), S1, np.zeros(3), S2, 0.5) == np.inf


def _singular_pair(seed: int):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((4, 2))
    B = A @ (np.eye(2) + 0.2 * rng.standard_normal((2, 2)))
    mu1 = A @ rng.standard_normal(2) * 0.3
    V, _ = np.linalg.qr(A)
    return mu1, A @ A.T, np.zeros(4), B @ B.T, V


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_renyi_matching_singular_supports_with_loose_tolerance(seed):
    """With a tolerance above eigh's round-off the support is found and D_α equals the restricted value."""
    mu1, S1, mu2, S2, V = _singular_pair(seed)
    for order in (0.5, 2.0):
        expected = renyi_closed(V.T @ mu1, V.T @ S1 @ V, V.T @ mu2, V.T @ S2 @ V, order)
        got = renyi_divergence(mu1, S1, mu2, S2, order, rtol=1e-12)
        assert got == pytest.approx(expected, rel=1e-8)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_regression_renyi_matching_singular_supports_default_tolerance(seed):
    """Regression (fixed) in privacy.renyi_divergence / SupportBasis.of_cov): with the default rtol = 1e-22 the
    ~1e-17·λ_max
    round-off eigenvalues of eigh are kept as 'support', so matching singular supports give inf or a wrong
    finite value. The restricted divergence is finite and the docstring promises singular covariances."""
    mu1, S1, mu2, S2, V = _singular_pair(seed)
    for order in (0.5, 2.0):
        expected = renyi_closed(V.T @ mu1, V.T @ S1 @ V, V.T @ mu2, V.T @ S2 @ V, order)
        got = renyi_divergence(mu1, S1, mu2, S2, order)
        if np.isfinite(expected):
            assert got == pytest.approx(expected, rel=1e-8)
        else:  # Σ_α not positive definite on the support: the divergence is infinite
            assert got == np.inf


@pytest.mark.parametrize("order", [0.0, -1.0, np.inf, np.nan])
def test_renyi_rejects_bad_order(order):
    with pytest.raises(PrivacyError, match="order must be finite and > 0"):
        renyi_divergence(np.zeros(1), np.eye(1), np.zeros(1), np.eye(1), order)


# ------------------------------------------------------------------------------------------------ CGF


def _pair_and_w2(seed: int, dim: int):
    mu1, S1, mu2, S2 = case(seed, dim)
    pair = gaussian_pair(S1, S2)
    w, outside = pair.coordinates(mu1 - mu2)
    assert not outside.any() and pair.singular is None
    return pair, w**2, (mu1, S1, mu2, S2)


def test_cgf_endpoints_convexity_and_renyi_identity():
    for seed in range(3):
        pair, w2, (mu1, S1, mu2, S2) = _pair_and_w2(seed, 3)
        assert cgf(np.array([0.0]), pair.beta, w2)[0, 0] == pytest.approx(0.0, abs=1e-14)
        assert cgf(np.array([-1.0]), pair.beta, w2)[0, 0] == pytest.approx(0.0, abs=1e-14)
        s = np.linspace(-2.0, 3.0, 501)
        K = cgf(s, pair.beta, w2)[:, 0]
        finite = np.isfinite(K)
        assert finite[(s >= -1) & (s <= 0)].all()  # K is finite on [−1, 0] always
        Kf = K[finite]
        second = Kf[:-2] - 2 * Kf[1:-1] + Kf[2:]
        assert second.min() > -1e-10
        for sv in (-0.7, -0.2, 0.5, 1.0, 2.0):
            Ks = cgf(np.array([sv]), pair.beta, w2)[0, 0]
            D = renyi_divergence(mu1, S1, mu2, S2, 1 + sv)
            if np.isfinite(D):
                assert Ks == pytest.approx(sv * D, rel=1e-9, abs=1e-13)
                assert Ks == pytest.approx(sv * renyi_closed(mu1, S1, mu2, S2, 1 + sv), rel=1e-9, abs=1e-13)
            else:
                assert Ks == np.inf


def test_cgf_is_log_mgf_of_privacy_loss():
    """K(s) = ln E_P[e^{sℒ}]: Monte Carlo of the privacy loss at moderate s (finite variance, 2s in domain)."""
    pair, w2, (mu1, S1, mu2, S2) = _pair_and_w2(12, 3)
    rng = np.random.default_rng(12)
    y = rng.multivariate_normal(mu1, S1, size=400_000)
    loss = mvn(mu1, S1).logpdf(y) - mvn(mu2, S2).logpdf(y)
    for s in (-0.6, 0.3, 0.6, 1.0):
        assert np.isfinite(cgf(np.array([2 * s]), pair.beta, w2)[0, 0])
        e = np.exp(s * loss)
        mc, se = e.mean(), e.std() / np.sqrt(e.size)
        K = cgf(np.array([s]), pair.beta, w2)[0, 0]
        assert abs(np.exp(K) - mc) < 4 * se
    kl = kl_divergence(pair, mu1 - mu2)[0]
    assert kl == pytest.approx(kl_closed(mu1, S1, mu2, S2), rel=1e-10)
    assert abs(loss.mean() - kl) < 4 * loss.std() / np.sqrt(loss.size)


# ------------------------------------------------------------------------------------------------ δ tails


MC_CASES = [(21, 2), (22, 3), (23, 4), (24, 3)]


@pytest.fixture(scope="module")
def mc_losses():
    out = {}
    for seed, dim in MC_CASES:
        mu1, S1, mu2, S2 = case(seed, dim, spread=0.35, shift=0.7)
        rng = np.random.default_rng(1000 + seed)
        y = rng.multivariate_normal(mu1, S1, size=1_000_000)
        out[(seed, dim)] = ((mu1, S1, mu2, S2), mvn(mu1, S1).logpdf(y) - mvn(mu2, S2).logpdf(y))
    return out


@pytest.mark.parametrize(("seed", "dim"), MC_CASES)
def test_delta_tails_bound_monte_carlo_and_are_not_absurdly_loose(mc_losses, seed, dim):
    """δ⁺ ≥ Pr(ℒ > ε), δ⁻ ≥ Pr(ℒ < −ε) (Chernoff), never > 1, and within a modest factor of the truth.

    Observed Chernoff/truth ratios on these cases: at most 5.4 where the probability is ≥ 0.05 and at most
    20.3 where it is ≥ 1e-3 (the ratio grows as the probability shrinks); the test allows 8 and 25.
    """
    (mu1, S1, mu2, S2), loss = mc_losses[(seed, dim)]
    eps = np.array([0.05, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0])
    tails = deltas_from_pair(gaussian_pair(S1, S2), mu1 - mu2, eps)
    N = loss.size
    assert np.all(tails.upper <= 1) and np.all(tails.lower <= 1) and np.all(tails.delta <= 1)
    np.testing.assert_allclose(tails.delta, np.minimum(1, tails.upper + tails.lower))
    for k, e in enumerate(eps):
        for bound, p in ((tails.upper[k, 0], np.mean(loss > e)), (tails.lower[k, 0], np.mean(loss < -e))):
            se = np.sqrt(p * (1 - p) / N)
            assert bound >= p - 3 * se
            if p >= 0.05:
                assert bound <= 8 * p
            elif p >= 1e-3:
                assert bound <= 25 * p
        both = np.mean(np.abs(loss) > e)
        assert tails.delta[k, 0] >= both - 3 * np.sqrt(both * (1 - both) / N)


def test_delta_decreases_with_epsilon_and_is_one_for_singular_pairs():
    pair, w2, (mu1, S1, mu2, S2) = _pair_and_w2(5, 3)
    eps = np.geomspace(0.01, 50, 30)
    tails = deltas_from_pair(pair, mu1 - mu2, eps)
    assert np.all(np.diff(tails.upper[:, 0]) <= 1e-15) and np.all(np.diff(tails.lower[:, 0]) <= 1e-15)
    # Σ₂ with mass outside Σ₁'s range: mutually singular laws, δ = 1 in support mode
    A = np.random.default_rng(6).standard_normal((3, 2))
    F1, F2 = A, np.column_stack([A[:, 0], A[:, 1] + np.array([0.0, 0.0, 1.0])])
    assert np.linalg.matrix_rank(np.column_stack([F1, F2])) == 3  # the two ranges differ
    singular = diagonalize(SupportBasis.of_factor(F1), F1, F2, "support")
    assert singular.singular is not None
    np.testing.assert_array_equal(deltas_from_pair(singular, np.zeros(3), eps).delta, 1.0)


@pytest.mark.parametrize("sign", [+1, -1])
def test_golden_section_matches_dense_grid_minimum(sign):
    for seed, dim in ((31, 3), (32, 5), (33, 2)):
        pair, w2, _ = _pair_and_w2(seed, dim)
        eps = np.array([0.05, 0.5, 2.0, 8.0, 30.0])
        got = log_delta_tail(pair.beta, w2, eps, sign)[:, 0]
        # brute force: dense log grid over the whole domain, then a dense local grid around the minimum
        bad = pair.beta < 0 if sign > 0 else pair.beta > 0
        limit = np.min((1 + pair.beta[bad]) / np.abs(pair.beta[bad])) if bad.any() else np.inf
        hi = min(1e8, limit * (1 - 1e-12))
        log_s = np.linspace(np.log(1e-10 * min(1, hi)), np.log(hi), 200_001)
        K = cgf(sign * np.exp(log_s), pair.beta, w2)[:, 0]
        for k, e in enumerate(eps):
            obj = K - np.exp(log_s) * e
            j = int(np.argmin(obj))
            fine = np.linspace(log_s[max(j - 1, 0)], log_s[min(j + 1, log_s.size - 1)], 20_001)
            fobj = cgf(sign * np.exp(fine), pair.beta, w2)[:, 0] - np.exp(fine) * e
            brute = min(0.0, float(obj.min()), float(fobj.min()))
            assert got[k] <= 0
            assert got[k] == pytest.approx(brute, rel=1e-8, abs=1e-12)


# ------------------------------------------------------------------------------------------- low-rank route


def _low_rank_case(seed: int, N: int = 40, K: int = 60, rank: int = 3):
    """``F₂ = F₁ + (rank-r update)``: the shape of a D-DP-PM neighbour (one row moves the whole model a little)."""
    rng = np.random.default_rng(seed)
    F1 = rng.standard_normal((N, K)) / np.sqrt(K)
    F2 = F1 + 0.4 * rng.standard_normal((N, rank)) @ rng.standard_normal((rank, K)) / np.sqrt(K)
    dmu = rng.standard_normal((N, rank)) @ rng.standard_normal((rank, 2))  # two realisations
    return F1, F2, dmu


def test_low_rank_route_matches_dense_route_and_the_direct_cgf(monkeypatch):
    """The low-rank route of diagonalize (rank(F₂ − F₁) = 3 of 40) gives the dense route's β, the direct
    K(s) from slogdet/solve (ddppm.accounting.reference.cgf_direct) and the same exact tails."""
    import ddppm.privacy.gaussian as gaussian
    from ddppm.accounting.reference import cgf_direct
    from ddppm.privacy.tails import pair_tail_deltas

    F1, F2, dmu = _low_rank_case(41)
    support = SupportBasis.of_factor(F1)
    low = diagonalize(support, F1, F2)
    monkeypatch.setattr(gaussian, "LOW_RANK_SHARE", 0.0)
    dense = diagonalize(support, F1, F2)
    assert low.residual is not None and dense.residual is None  # both routes were taken
    assert low.beta.size <= 2 * 3 + 1 < dense.beta.size
    big = np.sort(dense.beta[np.abs(dense.beta) > 1e-9])
    np.testing.assert_allclose(np.sort(low.beta[np.abs(low.beta) > 1e-9]), big, rtol=1e-9)
    S1, S2 = F1 @ F1.T, F2 @ F2.T
    w_low, _ = low.coordinates(dmu)
    for s in (-0.3, 0.2, 1.5):
        for r in range(dmu.shape[1]):
            direct = cgf_direct(s, S1, S2, dmu[:, r])
            assert cgf(np.array([s]), low.beta, w_low[:, [r]] ** 2)[0, 0] == pytest.approx(direct, rel=1e-8)
    eps = np.array([0.5, 2.0, 8.0])
    a, b = pair_tail_deltas(low, dmu, eps, "exact"), pair_tail_deltas(dense, dmu, eps, "exact")
    for x, y in ((a.delta, b.delta), (a.hockey, b.hockey)):
        np.testing.assert_allclose(x, y, rtol=1e-7)
    assert 1e-6 < a.delta.min() < a.delta.max() < 1  # not vacuous
    np.testing.assert_allclose(kl_divergence(low, dmu), kl_divergence(dense, dmu), rtol=1e-9)


def test_low_rank_route_keeps_the_support_checks():
    """N > K (Σ₁ singular): an update inside Σ₁'s range stays absolutely continuous; one that leaves it is
    mutually singular (δ = 1), on the low-rank route as on the dense one."""
    rng = np.random.default_rng(42)
    F1 = rng.standard_normal((60, 40)) / np.sqrt(40)
    support = SupportBasis.of_factor(F1)
    assert support.V0.shape[1] == 20
    inside = F1 + 0.3 * (support.V @ rng.standard_normal((40, 2))) @ rng.standard_normal((2, 40)) / np.sqrt(40)
    outside = F1 + 0.3 * (support.V0[:, :1] @ rng.standard_normal((1, 40)))
    ok, bad = diagonalize(support, F1, inside), diagonalize(support, F1, outside)
    assert ok.residual is not None and bad.residual is not None
    assert ok.singular is None and bad.singular is not None
    np.testing.assert_array_equal(deltas_from_pair(bad, np.zeros(60), [1.0]).delta, 1.0)
    _, left = ok.coordinates(support.V0[:, :1])  # a mean difference off the support is caught too
    assert left.all()
