"""gaussian_tail_delta: closed forms, Monte Carlo, exact ≤ Chernoff, and its input checks."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import multivariate_normal, norm

from ddppm.core.errors import PrivacyError
from ddppm.privacy import gaussian_tail_delta

EPS = np.array([0.5, 1.0, 2.0, 5.0, 10.0])


@pytest.mark.parametrize("distance", [0.3, 1.0, 3.0])
def test_equal_covariances_closed_form(distance):
    """Σ₁ = Σ₂: ℒ ~ N(D²/2, D²) with D the Mahalanobis distance of the means."""
    rng = np.random.default_rng(1)
    A = rng.standard_normal((3, 3))
    cov = A @ A.T + np.eye(3)
    direction = rng.standard_normal(3)
    mu2 = direction * distance / np.sqrt(direction @ np.linalg.solve(cov, direction))
    D = distance
    expected = norm.cdf(D / 2 - EPS / D) + norm.cdf(-EPS / D - D / 2)
    got = gaussian_tail_delta(np.zeros(3), cov, mu2, cov, EPS)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-300)


def test_monte_carlo_on_small_gaussians():
    rng = np.random.default_rng(7)
    for _ in range(3):
        A, B = rng.standard_normal((2, 2)), rng.standard_normal((2, 2))
        cov1, cov2 = A @ A.T + 0.5 * np.eye(2), B @ B.T + 0.5 * np.eye(2)
        mu1, mu2 = rng.standard_normal(2), rng.standard_normal(2)
        P, Q = multivariate_normal(mu1, cov1), multivariate_normal(mu2, cov2)
        y = rng.multivariate_normal(mu1, cov1, size=200_000)
        y2 = rng.multivariate_normal(mu2, cov2, size=200_000)
        loss_pq, loss_qp = P.logpdf(y) - Q.logpdf(y), Q.logpdf(y2) - P.logpdf(y2)
        for e, exact in zip(EPS[:3], gaussian_tail_delta(mu1, cov1, mu2, cov2, EPS[:3]), strict=True):
            p = max(np.mean(np.abs(loss_pq) > e), np.mean(np.abs(loss_qp) > e))  # both orders of the pair
            se = np.sqrt(max(p * (1 - p), 1e-6) / y.shape[0])
            assert abs(exact - p) < 5 * se, (exact, p)


def test_exact_never_exceeds_chernoff():
    rng = np.random.default_rng(3)
    for _ in range(10):
        k = int(rng.integers(1, 6))
        A, B = rng.standard_normal((k, k)), rng.standard_normal((k, k))
        cov1, cov2 = A @ A.T + 0.1 * np.eye(k), B @ B.T + 0.1 * np.eye(k)
        mu1, mu2 = rng.standard_normal(k), 0.5 * rng.standard_normal(k)
        grid = np.array([0.5, 1, 2, 5, 10, 20, 40, 100.0])
        exact = gaussian_tail_delta(mu1, cov1, mu2, cov2, grid, "exact")
        chernoff = gaussian_tail_delta(mu1, cov1, mu2, cov2, grid, "chernoff")
        assert np.all(exact <= chernoff * (1 + 1e-9) + 1e-300)


def test_both_orders_of_the_pair_count():
    """δ is symmetric in the two laws: the reverse order can leak more than the forward one."""
    a = gaussian_tail_delta([0.0], [[1.0]], [1.0], [[4.0]], EPS)
    b = gaussian_tail_delta([1.0], [[4.0]], [0.0], [[1.0]], EPS)
    np.testing.assert_allclose(a, b, rtol=1e-12)


def test_singular_laws_give_delta_one():
    cov1 = np.diag([1.0, 0.0])
    cov2 = np.diag([1.0, 1.0])
    np.testing.assert_array_equal(gaussian_tail_delta([0, 0], cov1, [0, 0], cov2, [1.0, 5.0]), [1.0, 1.0])


@pytest.mark.parametrize(
    "args, message",
    [
        (([0.0, 0.0], np.eye(3), [0.0, 0.0], np.eye(2), [1.0]), "shape"),
        (([0.0], [[1.0]], [0.0, 1.0], np.eye(2), [1.0]), "dimensions"),
        (([np.nan], [[1.0]], [0.0], [[1.0]], [1.0]), "finite"),
        (([0.0, 0.0], [[1.0, 0.5], [0.0, 1.0]], [0.0, 0.0], np.eye(2), [1.0]), "symmetric"),
        (([0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]], [0.0, 0.0], np.eye(2), [1.0]), "positive semi-definite"),
        (([0.0], [[1.0]], [1.0], [[1.0]], [0.0]), "ε must be finite and > 0"),
    ],
)
def test_bad_inputs_raise_clear_errors(args, message):
    with pytest.raises(PrivacyError, match=message):
        gaussian_tail_delta(*args)


def test_unknown_method_raises():
    with pytest.raises(PrivacyError, match="method"):
        gaussian_tail_delta([0.0], [[1.0]], [1.0], [[1.0]], [1.0], method="imhof")


@pytest.mark.parametrize("accounting", ["exact", "chernoff"])
def test_a_generalised_eigenvalue_without_a_reciprocal_gives_delta_one(accounting: str) -> None:
    """γ = 1 + β ≥ 2⁵³: the order seen from the other data set has ``1/γ − 1 = −1`` in double precision (no
    variance left in that direction), as singular as the forward order's γ ≤ rtol. δ = 1 for both accountings,
    instead of the ValueError that stopped a calibration (two BLAS threads had moved a γ from 1e13 to 1e17)."""
    from ddppm.privacy.gaussian import GaussianPair
    from ddppm.privacy.tails import pair_tail_deltas

    beta = np.array([1e17, 0.3])
    pair = GaussianPair(beta=beta, whiten=np.eye(2), V0=None, mean_tol=0.0, singular=None, residual=None)
    tails = pair_tail_deltas(pair, np.array([[0.5], [0.2]]), EPS, accounting)
    np.testing.assert_array_equal(tails.delta, 1.0)
    # just below the limit both orders are computed: a finite γ of 1e13 is no singularity
    pair = GaussianPair(beta=np.array([1e13, 0.3]), whiten=np.eye(2), V0=None, mean_tol=0.0, singular=None,
                        residual=None)  # fmt: skip
    assert np.all(np.isfinite(pair_tail_deltas(pair, np.array([[0.5], [0.2]]), EPS, accounting).delta))
