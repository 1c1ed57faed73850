"""The certified D-DP-PM by deflation (ddppm.methods.certified.deflation): the vectorised form against the
agent-by-agent one, k = 1 against the block algorithm, the noise-free limit against an eigendecomposition, the
sensitivity of a deflated release against a search over rows, and its δ against the GDP composition."""

from __future__ import annotations

import numpy as np
import pytest

from ddppm.common_task.adjacency import release_sensitivity
from ddppm.common_task.certified import certified_delta
from ddppm.core.network import mixing_matrix
from ddppm.methods import get_method
from ddppm.methods.certified.algorithm import CertifiedParams, certified_network, draw
from ddppm.methods.certified.deflation import CertifiedDeflation, deflation_agentwise, deflation_network
from ddppm.studies.tasks import scale_task, spiked_rows


def _blocks(rng: np.random.Generator, m: int = 3, rows: int = 6, d: int = 5) -> list[np.ndarray]:
    blocks = [rng.standard_normal((rows, d)) * np.linspace(1.6, 0.3, d) for _ in range(m)]
    top = max(np.linalg.norm(b, axis=1).max() for b in blocks)
    return [b / top for b in blocks]


def _draws(k: int, T: int, m: int, d: int, runs: int, seed: int = 0) -> list:
    return [draw([np.random.default_rng((seed, l, r)) for r in range(runs)], T, m, d, 1) for l in range(k)]


def test_agentwise_equals_the_vectorised_network_form() -> None:
    blocks, W, c = _blocks(np.random.default_rng(0)), mixing_matrix("ring", 3), 3
    params = CertifiedParams((0.4, 0.2, 0.3))
    draws = _draws(3, params.T, 3, 5, runs=4)
    grams = np.stack([b.T @ b for b in blocks])
    net = deflation_network(grams, np.linalg.matrix_power(W, c), params, draws)
    assert net.shape == (3, 4, 5, 3)
    for r in range(4):
        np.testing.assert_allclose(net[:, r], deflation_agentwise(blocks, W, c, params, draws, run=r), atol=1e-10)


def test_one_component_is_the_block_algorithm_with_k_one() -> None:
    blocks, W = _blocks(np.random.default_rng(1)), mixing_matrix("complete", 3)
    params = CertifiedParams((0.3, 0.3))
    draws = _draws(1, params.T, 3, 5, runs=5)
    grams = np.stack([b.T @ b for b in blocks])
    np.testing.assert_allclose(
        deflation_network(grams, W, params, draws), certified_network(grams, W, params, draws[0]).bases, atol=1e-12
    )


def test_estimates_are_orthonormal_and_the_noise_free_limit_is_the_top_k_eigenvectors() -> None:
    rng = np.random.default_rng(2)
    X = rng.standard_normal((400, 6)) * np.array([3.0, 2.0, 1.3, 0.6, 0.4, 0.2])
    X /= np.linalg.norm(X, axis=1).max()
    blocks = np.array_split(X, 4)
    params = CertifiedParams.constant(300, 1e-9)  # σ → 0: deflated power iterations
    draws = _draws(3, params.T, 4, 6, runs=2)
    grams = np.stack([b.T @ b for b in blocks])
    V = deflation_network(grams, np.full((4, 4), 0.25), params, draws)  # W = 11ᵀ/m: exact averages
    np.testing.assert_allclose(np.swapaxes(V, -1, -2) @ V, np.broadcast_to(np.eye(3), (4, 2, 3, 3)), atol=1e-9)
    top = np.linalg.eigh(X.T @ X)[1][:, ::-1][:, :3]
    np.testing.assert_allclose(np.abs(np.einsum("dk,jrdk->jrk", top, V)), 1.0, atol=1e-6)


@pytest.mark.parametrize("adjacency", ["replace_one", "distance_one"])
def test_a_deflated_release_moves_by_at_most_the_one_direction_sensitivity(adjacency: str) -> None:
    """sup ‖P(xxᵀ − x′x′ᵀ)P b‖ over rows in the unit ball (and ‖x − x′‖ ≤ 1 for distance_one), searched over
    random rows, and the extreme pair (x along b, x′ = 0): never above Δ₁, and Δ₁ is reached."""
    rng = np.random.default_rng(3)
    d = 6
    bound = release_sensitivity("power_step", adjacency, block=1)
    found = np.linalg.qr(rng.standard_normal((d, 2)))[0]
    P = np.eye(d) - found @ found.T
    b = P @ rng.standard_normal(d)
    b /= np.linalg.norm(b)
    x = rng.standard_normal((20000, d))
    x *= (rng.uniform(size=(20000, 1)) ** (1 / d)) / np.linalg.norm(x, axis=1, keepdims=True)
    x_new = x + rng.standard_normal(x.shape) * (0.3 if adjacency == "distance_one" else 1.0)
    x_new /= np.maximum(1.0, np.linalg.norm(x_new, axis=1, keepdims=True))
    if adjacency == "distance_one":
        keep = np.linalg.norm(x - x_new, axis=1) <= 1
        x, x_new = x[keep], x_new[keep]
    u, u_new = x @ P, x_new @ P
    moves = np.linalg.norm(u * (u @ b)[:, None] - u_new * (u_new @ b)[:, None], axis=1)
    assert moves.max() <= bound + 1e-12
    # x = b (in the projection's range, ‖x‖ = 1), x′ = 0 (‖x − x′‖ = 1 as well): the move reaches Δ₁.
    assert np.linalg.norm(P @ np.outer(b, b) @ P @ b) == pytest.approx(bound)


def test_calibration_composes_over_k_runs_of_t_releases() -> None:
    task = scale_task(spiked_rows(600, 8, 0), 4, "ring", 2, 3, 0)
    options = {"adjacency": "replace_one", "iterations": 5}
    method = CertifiedDeflation()
    calibrated = method.common_calibrate(task, 2.0, 1e-5, options)
    sigma, delta1 = calibrated.params["sigma"], release_sensitivity("power_step", "replace_one", 1)
    mu = delta1 * np.sqrt(3 * 5) / sigma  # k·T Gaussian mechanisms of sensitivity Δ₁ and noise σ
    assert calibrated.delta == pytest.approx(certified_delta(mu, 2.0), rel=1e-9)
    assert calibrated.delta == pytest.approx(1e-5, rel=1e-6) and calibrated.feasible
    block = get_method("ddppm_certified").common_calibrate(task, 2.0, 1e-5, options)
    # The block pays Δ = √2 once for k ≥ 2, deflation √k: at k = 3 deflation needs more noise per Δ.
    assert sigma / delta1 > block.params["sigma"] / block.params["sensitivity"]
    V = method.common_estimate(task, calibrated, [np.random.default_rng(i) for i in range(3)], options)
    assert V.shape == (3, 8, 3)
    np.testing.assert_allclose(np.swapaxes(V, -1, -2) @ V, np.broadcast_to(np.eye(3), (3, 3, 3)), atol=1e-9)
    costs = method.common_costs(task, calibrated)
    assert costs["rounds"] == 3 * 5 * 2 and costs["floats_per_agent"] == 3 * 5 * 2 * 8
