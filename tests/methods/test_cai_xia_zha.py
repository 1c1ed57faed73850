"""Cai, Xia & Zha's noisy projector with our private gap test (ddppm.methods.cai_xia_zha): the Davis–Kahan
sensitivity against a brute-force search, the gap's sensitivity, the test's failure rate, and the δ against
dp-accounting."""

from __future__ import annotations

import numpy as np
import pytest

from ddppm.common_task.task import CommonTask
from ddppm.core.network import mixing_matrix
from ddppm.core.seeds import run_generators
from ddppm.methods import get_method
from ddppm.methods.cai_xia_zha import private_projector, projector, projector_sensitivity, top_gap

OPTIONS = {"adjacency": "replace_one", "iterations": 4}


def _task(X: np.ndarray, k: int = 1, m: int = 2) -> CommonTask:
    return CommonTask(X, tuple(np.array_split(np.arange(len(X)), m)), k, mixing_matrix("complete", m))


def _unit_ball(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    X = rng.standard_normal(shape)
    return X / np.maximum(1.0, np.linalg.norm(X, axis=-1, keepdims=True)) * rng.uniform(size=shape[:-1] + (1,))


@pytest.mark.parametrize(("d", "k"), [(3, 1), (4, 2), (5, 1)])
def test_the_projectors_change_never_exceeds_its_davis_kahan_bound(d: int, k: int) -> None:
    """Over small data sets with small and large gaps and every kind of replacement (random, the top direction's
    negative, an orthogonal unit row), ‖P(X) − P(X′)‖_F ≤ Δ(g) for the gap of X and for that of X′; near a tiny gap
    the cap is what holds, and the change comes within half of it."""
    rng = np.random.default_rng(d * 10 + k)
    worst_ratio, worst_cap = 0.0, 0.0
    for trial in range(3000):
        n = int(rng.integers(3, 12))
        X = _unit_ball(rng, (n, d)) * (rng.uniform(0.2, 1.0, size=d) if trial % 2 else 1.0)
        A = X.T @ X
        row = int(rng.integers(n))
        top = np.linalg.eigh(A)[1][:, -1]
        candidates = [_unit_ball(rng, (d,)), -top, np.linalg.svd(top[None])[2][-1], np.zeros(d)]
        for x_new in candidates:
            Y = X.copy()
            Y[row] = x_new
            change = float(np.linalg.norm(projector(A, k) - projector(Y.T @ Y, k)))
            bound = min(projector_sensitivity(top_gap(A, k), k, d), projector_sensitivity(top_gap(Y.T @ Y, k), k, d))
            assert change <= bound + 1e-9
            worst_ratio = max(worst_ratio, change / bound)
            worst_cap = max(worst_cap, change / projector_sensitivity(0.0, k, d))
    assert worst_ratio > 0.3 and worst_cap > 0.5


def test_the_gap_moves_by_at_most_twice_the_spectral_change() -> None:
    rng = np.random.default_rng(5)
    worst = 0.0
    for _ in range(3000):
        X = _unit_ball(rng, (8, 4))
        Y = X.copy()
        Y[0] = _unit_ball(rng, (4,)) if rng.uniform() < 0.5 else -X[0] / max(np.linalg.norm(X[0]), 1e-12)
        worst = max(worst, abs(top_gap(X.T @ X, 1) - top_gap(Y.T @ Y, 1)))
    assert worst <= 2.0 + 1e-12


def test_the_gaps_lower_bound_fails_at_its_stated_rate() -> None:
    """With a large δ limit the failure probability β is measurable: P(t > g) = β (binomial 5-sigma band)."""
    method = get_method("cai_xia_zha")
    task = _task(_unit_ball(np.random.default_rng(1), (60, 4)))
    calibrated = method.common_calibrate(task, 1.0, 0.9, OPTIONS)
    beta = calibrated.test_failure
    draws = 40_000
    lowers = np.array([private_projector(task, calibrated.params, rng)[0]
                       for rng in run_generators(4, ("gap",), range(draws))])  # fmt: skip
    failures = int(np.sum(lowers > top_gap(task.gram, 1)))
    assert abs(failures - beta * draws) <= 5 * np.sqrt(beta * draws) + 1


@pytest.mark.parametrize(("eps", "limit"), [(0.5, 1e-5), (2.0, 1e-3), (8.0, 1e-6)])
def test_the_delta_against_dp_accounting(eps: float, limit: float) -> None:
    """δ = PLD(gap test ∘ projector release)(ε) + (1 + e^ε)β = the limit."""
    dp_accounting = pytest.importorskip("dp_accounting", reason="the test extra installs dp-accounting")
    from dp_accounting import pld

    task = _task(_unit_ball(np.random.default_rng(2), (40, 4)))
    calibrated = get_method("cai_xia_zha").common_calibrate(task, eps, limit, OPTIONS)
    accountant = pld.PLDAccountant()
    for release in calibrated.releases:
        accountant.compose(dp_accounting.GaussianDpEvent(release.sigma / release.sensitivity))
    expected = accountant.get_delta(eps) + (1 + np.exp(eps)) * calibrated.test_failure
    assert calibrated.delta == pytest.approx(expected, rel=1e-4)
    assert calibrated.delta == pytest.approx(limit, rel=1e-6) and calibrated.feasible


def test_the_view_gives_the_estimate() -> None:
    """Simulation identity: the top eigenvector of the view's noisy projector is the estimate."""
    method = get_method("cai_xia_zha")
    task = _task(_unit_ball(np.random.default_rng(3), (50, 4)))
    calibrated = method.common_calibrate(task, 5.0, 1e-5, OPTIONS)
    views = method.common_view(task, calibrated, run_generators(6, ("v",), range(4)))
    estimates = method.common_estimate(task, calibrated, run_generators(6, ("v",), range(4)), OPTIONS)
    iu = np.triu_indices(task.d)
    for view, estimate in zip(views, estimates, strict=True):
        P = np.zeros((task.d, task.d))
        P[iu] = view[1:]
        vector = np.linalg.eigh(P + np.triu(P, 1).T)[1][:, -1]
        assert abs(float(vector @ estimate[:, 0])) == pytest.approx(1.0, abs=1e-10)
