"""Amin et al.'s mechanism (ddppm.methods.amin): the Bingham sampler against the Bingham law by independent routes
(quadrature in d = 2 and 3, importance sampling from the uniform law in higher d), the libraries' mis-specified
acceptance rule reproduced, and the mechanism's privacy loss by quadrature."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import dblquad, quad

from ddppm.methods.amin import (
    AminCovariance,
    bingham_envelope,
    iterative_eigenvector_sampling,
    mis_specified_log_density,
    sample_bingham,
)


def _circle(theta: float) -> np.ndarray:
    return np.array([np.cos(theta), np.sin(theta)])


def _circle_mean(statistic, log_density) -> float:
    """E[statistic(θ)] under the density ∝ exp(log_density(θ)) on the circle, by quadrature."""
    weight = lambda t: np.exp(log_density(t))  # noqa: E731
    num = quad(lambda t: statistic(t) * weight(t), 0, 2 * np.pi, limit=400)[0]
    return num / quad(weight, 0, 2 * np.pi, limit=400)[0]


@pytest.mark.parametrize("A", [np.diag([0.0, 3.0]), np.array([[2.0, 1.5], [1.5, 0.5]]), np.diag([0.0, 40.0])])
def test_bingham_on_the_circle_matches_quadrature(A):
    rng = np.random.default_rng(11)
    draws = sample_bingham(A, 40_000, rng)
    assert np.allclose(np.linalg.norm(draws, axis=1), 1)
    top = np.linalg.eigh(A)[1][:, 0]  # the direction of least uᵀAu: the mode
    for stat_draw, stat_angle in (
        (lambda u: np.abs(u @ top), lambda t: abs(_circle(t) @ top)),
        (lambda u: (u @ top) ** 2, lambda t: (_circle(t) @ top) ** 2),
    ):
        values = stat_draw(draws)
        exact = _circle_mean(stat_angle, lambda t: -_circle(t) @ A @ _circle(t))
        assert abs(values.mean() - exact) < 5 * values.std() / np.sqrt(len(values)), (values.mean(), exact)


def test_bingham_on_the_sphere_matches_quadrature():
    A = np.array([[4.0, 1.0, 0.0], [1.0, 1.0, 0.5], [0.0, 0.5, 0.0]])
    draws = sample_bingham(A, 60_000, np.random.default_rng(3))

    def point(phi: float, theta: float) -> np.ndarray:
        return np.array([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi), np.cos(theta)])

    def expectation(f) -> float:
        density = lambda theta, phi: np.exp(-point(phi, theta) @ A @ point(phi, theta)) * np.sin(theta)  # noqa: E731
        num = dblquad(lambda th, ph: f(point(ph, th)) * density(th, ph), 0, 2 * np.pi, 0, np.pi)[0]
        return num / dblquad(density, 0, 2 * np.pi, 0, np.pi)[0]

    for i in range(3):
        values = draws[:, i] ** 2
        exact = expectation(lambda u, i=i: u[i] ** 2)
        assert abs(values.mean() - exact) < 5 * values.std() / np.sqrt(len(values)), (i, values.mean(), exact)
    values = draws[:, 0] * draws[:, 1]
    exact = expectation(lambda u: u[0] * u[1])
    assert abs(values.mean() - exact) < 5 * values.std() / np.sqrt(len(values))


def test_bingham_in_higher_dimension_matches_importance_sampling():
    """d = 7: the law of projections on fixed directions, against uniform draws weighted by exp(−uᵀAu) (an exact
    route that shares nothing with the sampler), compared as CDFs (weighted two-sample Kolmogorov distance)."""
    rng = np.random.default_rng(5)
    d = 7
    Q = np.linalg.qr(rng.standard_normal((d, d)))[0]
    A = Q @ np.diag(np.linspace(0.0, 6.0, d)) @ Q.T
    draws = sample_bingham(A, 30_000, rng)
    uniform = rng.standard_normal((400_000, d))
    uniform /= np.linalg.norm(uniform, axis=1, keepdims=True)
    log_w = -np.einsum("ij,jk,ik->i", uniform, A, uniform)
    w = np.exp(log_w - log_w.max())
    w /= w.sum()
    for direction in (Q[:, 0], Q[:, -1], np.ones(d) / np.sqrt(d)):
        proj_draws, proj_ref = draws @ direction, uniform @ direction
        grid = np.linspace(-1, 1, 201)
        cdf_draws = (proj_draws[:, None] <= grid).mean(axis=0)
        cdf_ref = ((proj_ref[:, None] <= grid) * w[:, None]).sum(axis=0)
        assert np.max(np.abs(cdf_draws - cdf_ref)) < 0.015
        # the moments the mechanism's utility rests on
        assert abs(np.mean(proj_draws**2) - np.sum(w * proj_ref**2)) < 0.01


def _libraries_rule(A: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """The acceptance rule of diffprivlib 0.6.6 (``mechanisms/bingham.py``) and OpenDP 0.16.0
    (``extras/sklearn/_make_eigenvector``), written from its formula: accept with
    ``exp(−uᵀAu) / (M (uᵀΩu)^{d/2})`` (the correct rule multiplies by ``(uᵀΩu)^{d/2}``)."""
    env = bingham_envelope(A)
    d = env.lam.size
    out = []
    while len(out) < size:
        z = rng.standard_normal((4 * size, d)) / np.sqrt(env.omega)
        u = z / np.linalg.norm(z, axis=1, keepdims=True)
        log_accept = -(u**2) @ env.lam - (d / 2) * np.log((u**2) @ env.omega) - env.log_M
        out.extend(u[np.log(rng.random(len(u))) < log_accept])
    return np.array(out[:size]) @ env.basis.T


def test_the_libraries_rule_samples_the_mis_specified_law_not_bingham():
    """Reproduces the defect: on the circle the libraries' rule matches ∝ exp(−uᵀAu)(uᵀΩu)^{−d} by quadrature and
    departs from the Bingham law by far more than its Monte Carlo error; the correct rule matches Bingham."""
    A = np.diag([0.0, 3.0])
    rng = np.random.default_rng(7)
    wrong, right = _libraries_rule(A, 20_000, rng), sample_bingham(A, 20_000, rng)
    stat = lambda t: abs(np.sin(t))  # noqa: E731  (|sin θ| to the top direction e₁)
    bingham = _circle_mean(stat, lambda t: -_circle(t) @ A @ _circle(t))
    mis = _circle_mean(stat, lambda t: mis_specified_log_density(A, _circle(t))[0])
    se = 0.3 / np.sqrt(20_000)
    assert abs(np.abs(wrong[:, 1]).mean() - mis) < 5 * se
    assert abs(np.abs(right[:, 1]).mean() - bingham) < 5 * se
    assert bingham - mis > 40 * se  # the two laws differ: 0.364 against 0.193 here


def test_one_draw_is_private_at_the_stated_epsilon():
    """On the circle, the exact log-density ratio of one draw between two neighbouring data sets (the replaced
    row along the top direction, the new one orthogonal: the score moves by the full sensitivity 1) stays within
    ε_i/2 at the paper's β = ε_i/4 (Δ = 1), and reaches at least ε_i/4 (the score term alone)."""
    eps_i = 2.0
    beta = eps_i / 4
    X = np.array([[1.0, 0.0], [0.8, 0.3], [0.6, -0.2]])
    Y = X.copy()
    Y[0] = [0.0, 1.0]
    grid = np.linspace(0, 2 * np.pi, 721)

    def log_density(C: np.ndarray) -> np.ndarray:
        score = lambda t: beta * _circle(t) @ C @ _circle(t)  # noqa: E731
        log_z = np.log(quad(lambda t: np.exp(score(t)), 0, 2 * np.pi, limit=400)[0])
        return np.array([score(t) - log_z for t in grid])

    log_ratio = [log_density(X.T @ X), log_density(Y.T @ Y)]
    worst = np.max(np.abs(log_ratio[0] - log_ratio[1]))
    assert eps_i / 4 <= worst <= eps_i / 2 + 1e-9


def test_the_method_releases_orthonormal_directions_with_pure_epsilon():
    from ddppm.common_task.task import CommonTask

    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 6)) * np.array([3.0, 2.0, 1.0, 0.5, 0.3, 0.1])
    X /= np.linalg.norm(X, axis=1, keepdims=True).max()
    task = CommonTask(X, (np.arange(0, 150), np.arange(150, 300)), 2)
    method = AminCovariance()
    calibrated = method.common_calibrate(task, 5.0, 1e-5, {"adjacency": "replace_one"})
    assert calibrated.delta == 0.0 and calibrated.feasible
    assert calibrated.params["beta"] == pytest.approx(5.0 / 2 / 4)
    V = method.common_estimate(task, calibrated, [np.random.default_rng(s) for s in range(3)], {})
    assert V.shape == (3, 6, 2)
    for v in V:
        assert np.allclose(v.T @ v, np.eye(2), atol=1e-10)
    huge = method.common_calibrate(task, 1e6, 1e-5, {"adjacency": "replace_one"})
    V = method.common_estimate(task, huge, [np.random.default_rng(9)], {})[0]
    assert np.linalg.norm(V @ V.T - task.V @ task.V.T) < 0.05, "at huge ε the draws concentrate on the top-k subspace"


def test_iterative_sampling_is_orthonormal_and_concentrates():
    C = np.diag([50.0, 20.0, 1.0, 0.5])
    V = iterative_eigenvector_sampling(C, 2, np.array([5.0, 5.0]), np.random.default_rng(2))
    assert np.allclose(V.T @ V, np.eye(2), atol=1e-10)
    assert np.linalg.norm(V @ V.T - np.diag([1.0, 1.0, 0, 0])) < 0.3


@pytest.mark.parametrize("d", [2, 3])
def test_privacy_loss_bingham_within_half_epsilon_mis_specified_larger(d):
    """Exact (quadrature) loss over random neighbouring pairs in d = 2 and 3: the Bingham law at
    A = ε/4(λ_max I − C) stays within ε/2 (the exponential-mechanism bound); the libraries' law spends more (a lower
    bound, never a proof)."""
    from ddppm.methods.amin import worst_release_loss

    trials = 300 if d == 2 else 60
    for eps in (1.0, 4.0):
        bingham = worst_release_loss(eps, "bingham", trials, np.random.default_rng(1), d=d)
        mis = worst_release_loss(eps, "mis_specified", trials, np.random.default_rng(1), d=d)
        assert 0.15 * eps < bingham <= eps / 2 + 1e-6
        assert mis > 1.3 * bingham


@pytest.mark.parametrize("d", [2, 3])
def test_release_densities_integrate_to_one(d):
    from ddppm.methods.amin import release_log_densities, sphere_nodes

    C = np.array([[0.6, 0.2, 0.1], [0.2, 0.3, 0.0], [0.1, 0.0, 0.2]])[:d, :d]
    _, weights = sphere_nodes(d, 200 if d == 2 else 48)
    for law in ("bingham", "mis_specified"):
        density = np.exp(release_log_densities(C, 3.0, law, 200 if d == 2 else 48))
        assert np.sum(weights * density) == pytest.approx(1.0, rel=1e-9)


def test_sphere_quadrature_against_the_closed_bingham_constant():
    """On S², ∫ exp(−a z²) dS = 2π √(π/a) erf(√a) (the integral over z ∈ [−1, 1] of the band's area 2π dz)."""
    from scipy.special import erf

    from ddppm.methods.amin import sphere_nodes

    nodes, weights = sphere_nodes(3, 40)
    assert weights.sum() == pytest.approx(4 * np.pi, rel=1e-12)
    for a in (0.5, 3.0, 12.0):
        exact = 2 * np.pi * np.sqrt(np.pi / a) * erf(np.sqrt(a))
        assert np.sum(weights * np.exp(-a * nodes[:, 2] ** 2)) == pytest.approx(exact, rel=1e-10)
        tilted = nodes @ np.array([0.6, 0.0, 0.8])  # a pole off the grid's axis: the same integral
        assert np.sum(weights * np.exp(-a * tilted**2)) == pytest.approx(exact, rel=1e-6)
