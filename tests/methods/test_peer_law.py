"""The peers' release law in any dimension (ddppm.methods.peer_law): the Dirichlet/Gauss–Jacobi normalising
constants against the sphere quadrature of d = 2, 3, Monte Carlo and importance sampling in d = 5 and closed forms;
the worst-u search against brute-force multi-start optimisation; the rotation reduction the pair search uses."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import erf

from ddppm.methods.amin import mis_specified_log_density, release_log_densities, sample_bingham, sphere_nodes
from ddppm.methods.peer_law import (
    _law_parts,
    dirichlet_nodes,
    log_normaliser,
    log_normaliser_mc,
    log_sphere_area,
    max_log_ratio,
    neighbour_covariances,
    pair_loss,
    psi,
    top_alignment,
)

LAWS = ("bingham", "mis_specified")


def _rows(rng: np.random.Generator, n: int, d: int, k: int | None = None) -> np.ndarray:
    """n rows on the unit sphere of R^k (k ≤ d, padded with zeros to R^d)."""
    X = np.zeros((n, d))
    X[:, : k or d] = rng.standard_normal((n, k or d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _log_density(C: np.ndarray, eps: float, law: str, u: np.ndarray) -> np.ndarray:
    lam_max, b, _, _ = _law_parts(C, eps)
    return psi(np.einsum("ij,jk,ik->i", u, C, u), lam_max, b, C.shape[0], eps, law) - log_normaliser(C, eps, law)


@pytest.mark.parametrize("mult", [(1, 1), (1, 2), (1, 1, 1), (1, 1, 1, 7), (2, 3, 1, 4)])
def test_dirichlet_nodes_reproduce_dirichlet_moments(mult):
    W, w = dirichlet_nodes(mult, 12)
    half, total = np.array(mult) / 2, sum(mult) / 2
    assert w.sum() == pytest.approx(1.0) and np.allclose(W.sum(axis=1), 1.0)
    np.testing.assert_allclose(w @ W, half / total, rtol=1e-12)
    np.testing.assert_allclose(w @ W**2, half * (half + 1) / (total * (total + 1)), rtol=1e-12)
    if len(mult) > 1:
        cross = w @ (W[:, 0] * W[:, 1])
        assert cross == pytest.approx(half[0] * half[1] / (total * (total + 1)), rel=1e-12)


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("law", LAWS)
def test_normalised_density_matches_the_sphere_quadrature(d, law):
    """d = 2, 3: the same normalised log-density as amin.release_log_densities (trapezoid / Gauss–Legendre)."""
    rng = np.random.default_rng(d)
    u, _ = sphere_nodes(d, {2: 4000, 3: 96}[d])
    for eps in (0.5, 4.0, 8.0):
        for n in (1, 2, 3):
            C = (X := _rows(rng, n, d) * rng.uniform(0.3, 1.0, (n, 1))).T @ X
            np.testing.assert_allclose(_log_density(C, eps, law, u), release_log_densities(C, eps, law), atol=1e-10)


def test_bingham_constant_in_three_dimensions_closed_form():
    """∫_{S²} exp(−a u₃²) dσ = 2π √(π/a) erf(√a): C = diag(1, 1, 0) at ε gives A = diag(0, 0, ε/4)."""
    for eps in (0.5, 4.0, 20.0):
        a = eps / 4
        closed = np.log(2 * np.pi * np.sqrt(np.pi / a) * erf(np.sqrt(a)))
        assert log_normaliser(np.diag([1.0, 1.0, 0.0]), eps, "bingham") == pytest.approx(closed, abs=1e-12)


@pytest.mark.parametrize("law", LAWS)
def test_normaliser_in_five_dimensions_against_monte_carlo_and_importance_sampling(law):
    rng = np.random.default_rng(5)
    X = _rows(rng, 3, 5) * np.array([[1.0], [0.8], [0.6]])
    C, eps = X.T @ X, 4.0
    exact = log_normaliser(C, eps, law)
    assert abs(log_normaliser(C, eps, law, nodes=80) - exact) < 1e-12  # converged in the nodes
    u = rng.standard_normal((400_000, 5))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    A = eps / 4 * (np.linalg.eigvalsh(C).max() * np.eye(5) - C)
    log_f = -np.einsum("ij,jk,ik->i", u, A, u) if law == "bingham" else mis_specified_log_density(A, u)
    f = np.exp(log_f)
    plain, plain_se = log_sphere_area(5) + np.log(f.mean()), f.std() / np.sqrt(f.size) / f.mean()
    assert abs(plain - exact) < 4 * plain_se, (plain, exact, plain_se)
    sampled, se = log_normaliser_mc(C, eps, law, 400_000, rng)
    assert abs(sampled - exact) < 4 * se, (sampled, exact, se)


def _sample_mis_specified(C: np.ndarray, eps: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """Exact draws of ∝ exp(−uᵀAu)(uᵀΩu)^{−d}: ACG(Ω) proposals accepted with exp(−q)(1 + 2q/b)^{−d/2} ≤ 1."""
    from ddppm.methods.amin import bingham_envelope

    d = C.shape[0]
    env = bingham_envelope(eps / 4 * (np.linalg.eigvalsh(C).max() * np.eye(d) - C))
    z = rng.standard_normal((size * 60, d)) / np.sqrt(env.omega)
    u = z / np.linalg.norm(z, axis=1, keepdims=True)
    q = (u**2) @ env.lam
    keep = rng.random(len(q)) < np.exp(-q - d / 2 * np.log1p(2 * q / env.b))
    assert keep.sum() >= size
    return u[keep][:size] @ env.basis.T


def test_top_alignment_in_five_dimensions_against_monte_carlo():
    rng = np.random.default_rng(8)
    X = _rows(rng, 3, 5)
    C, eps = X.T @ X, 4.0
    v = np.linalg.eigh(C)[1][:, -1]
    draws = {
        "bingham": sample_bingham(-eps / 4 * C, 30_000, rng),
        "mis_specified": _sample_mis_specified(C, eps, 30_000, rng),
    }
    expected = {law: top_alignment(C, eps, law) for law in LAWS}
    assert expected["mis_specified"] > expected["bingham"] + 0.05  # the drawn law is more concentrated
    for law in LAWS:
        stat = (draws[law] @ v) ** 2
        assert abs(stat.mean() - expected[law]) < 4 * stat.std() / np.sqrt(stat.size), (law, stat.mean(), expected)


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("law", LAWS)
def test_worst_u_at_least_the_quadrature_maximum_and_close(d, law):
    rng = np.random.default_rng(10 + d)
    for eps in (1.0, 4.0):
        for n in (1, 2, 3):
            X, y = _rows(rng, n, d), _rows(rng, 1, d)[0] * rng.uniform(0.5, 1.0)
            C, C2 = neighbour_covariances(X, y)
            grid = np.abs(release_log_densities(C, eps, law) - release_log_densities(C2, eps, law)).max()
            found, u = max_log_ratio(C, C2, eps, law)
            assert grid - 1e-9 <= found <= grid + 2e-3, (grid, found)
            assert abs(np.linalg.norm(u) - 1) < 1e-12


@pytest.mark.parametrize("law", LAWS)
def test_worst_u_in_six_dimensions_against_multistart_optimisation(law):
    """No local maximum of |log p_C − log p_C′| from 40 random starts on S⁵ exceeds the curve search."""
    rng = np.random.default_rng(6)
    d, eps = 6, 4.0
    X, y = _rows(rng, 3, d), _rows(rng, 1, d)[0]
    C, C2 = neighbour_covariances(X, y)
    found, u_star = max_log_ratio(C, C2, eps, law)

    (l1, b1, _, _), (l2, b2, _, _) = _law_parts(C, eps), _law_parts(C2, eps)
    offset = log_normaliser(C2, eps, law) - log_normaliser(C, eps, law)

    def loss(z):
        u = z / np.linalg.norm(z)
        return -abs(psi(u @ C @ u, l1, b1, d, eps, law) - psi(u @ C2 @ u, l2, b2, d, eps, law) + offset)

    assert -loss(u_star) == pytest.approx(found, abs=1e-10)
    best = max(-minimize(loss, rng.standard_normal(d), method="BFGS").fun for _ in range(40))
    assert best <= found + 1e-7 and best > found - 1e-6, (best, found)


def test_rows_in_four_dimensions_lose_nothing_by_rotation():
    """The search puts ≤ 3 rows and the replacing row in R⁴ ⊂ R^d: a random rotation of the pair in R^8 has the
    same loss (both laws are rotation invariant)."""
    rng = np.random.default_rng(4)
    d = 8
    X, y = _rows(rng, 3, d, k=4), _rows(rng, 1, d, k=4)[0] * 0.7
    Q = np.linalg.qr(rng.standard_normal((d, d)))[0]
    for law in LAWS:
        assert pair_loss(X @ Q.T, y @ Q.T, 2.0, law) == pytest.approx(pair_loss(X, y, 2.0, law), abs=1e-9)


@pytest.mark.parametrize("d", [4, 7, 10])
def test_bingham_law_within_half_epsilon(d):
    """The exponential mechanism's bound: at the libraries' β = ε/4 the Bingham law's loss is at most ε/2."""
    rng = np.random.default_rng(d)
    for eps in (1.0, 8.0):
        losses = [pair_loss(_rows(rng, 2, d), _rows(rng, 1, d)[0], eps, "bingham") for _ in range(5)]
        assert 0 < max(losses) <= eps / 2 + 1e-9
