"""The release on long-tailed records: with the private clipping radius its error falls with ε to the target (no
floor that ε cannot remove), where the fixed radius c√d stays biased at every ε (docs/bounds.md)."""

from __future__ import annotations

import numpy as np
import pytest

import ddppm.release.route as route
from ddppm import PrivatePCA
from ddppm.common_task.clip_radius import RadiusPlan
from ddppm.common_task.preprocessing import PreprocessingPlan
from ddppm.common_task.task import subspace_error

BOUNDS = {"source": "counts of visits, 0 to 500 by the survey's design", "all_features": [0, 500]}


def _visits(n: int = 20000, d: int = 8, seed: int = 5) -> np.ndarray:
    """Negative-binomial counts driven by two normal factors (log link), capped at 500."""
    rng = np.random.default_rng(seed)
    factors = rng.standard_normal((n, 2))
    loadings = np.vstack([np.linspace(0.3, 1.1, d), np.where(np.arange(d) % 2, 0.4, -0.3)])
    mean = np.exp(np.log(np.linspace(1, 8, d)) + factors @ loadings)
    return np.minimum(rng.negative_binomial(1.5, 1.5 / (1.5 + mean)), 500).astype(float)


def _standardised_pca(X: np.ndarray, k: int) -> np.ndarray:
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    return np.linalg.eigh(Z.T @ Z)[1][:, ::-1][:, :k]


def _errors(X: np.ndarray, k: int, eps: float, seeds: range = range(3)) -> float:
    V = _standardised_pca(X, k)
    return float(np.mean([subspace_error(PrivatePCA(k, eps, 1e-6, BOUNDS, method="analyze_gauss",
                                                    noise="simulation", random_state=s).fit(X).components_.T, V)
                          for s in seeds]))  # fmt: skip


def test_the_error_falls_with_epsilon_to_the_target(monkeypatch: pytest.MonkeyPatch) -> None:
    X = _visits()
    adaptive = {eps: _errors(X, 2, eps) for eps in (1.0, 5.0, 1e4)}
    assert adaptive[1e4] <= 0.02 and _errors(X, 1, 1e4) <= 0.02
    assert adaptive[1e4] < adaptive[5.0] < adaptive[1.0]

    def fixed(scale: bool) -> PreprocessingPlan:
        return PreprocessingPlan(scale=scale, radius=RadiusPlan(adaptive=False))

    monkeypatch.setattr(route, "PreprocessingPlan", fixed)
    fixed_errors = {eps: _errors(X, 2, eps) for eps in (5.0, 1e4)}
    assert fixed_errors[1e4] > 5 * adaptive[1e4]  # the fixed radius' bias does not fall with ε
    assert adaptive[5.0] <= 0.5 * fixed_errors[5.0]
