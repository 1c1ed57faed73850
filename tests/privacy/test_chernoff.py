"""The Chernoff bound of many pairs at once: against a dense grid, alone against batched, padded and chunked."""

from __future__ import annotations

import numpy as np
import pytest

import ddppm.privacy.chernoff as chernoff
from ddppm.privacy.chernoff import log_delta_tail_many
from ddppm.privacy.gaussian import cgf

EPS = np.array([0.05, 0.5, 2.0, 8.0, 30.0])


def _pairs(seed: int, count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Pairs of 0 to 12 eigenvalues (both signs, several scales) with 1 to 4 realisations each."""
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(count):
        K, R = int(rng.integers(0, 13)), int(rng.integers(1, 5))
        beta = rng.normal(size=K) * rng.choice([0.01, 1.0, 30.0])
        pairs.append((np.where(beta <= -1, -0.6, beta), rng.random((K, R)) * rng.choice([1e-3, 1.0, 50.0])))
    return pairs


def _dense_grid(beta: np.ndarray, w2: np.ndarray, sign: int) -> np.ndarray:
    """``min(0, min_s K(±s) − sε)`` by brute force: a dense log grid of s over the domain, then a dense grid
    around its best point (an independent route: :func:`ddppm.privacy.gaussian.cgf`, no golden section)."""
    bad = beta < 0 if sign > 0 else beta > 0
    limit = np.min((1 + beta[bad]) / np.abs(beta[bad])) if bad.any() else np.inf
    hi = min(1e8, limit * (1 - 1e-12))
    log_s = np.linspace(np.log(1e-10 * min(1, hi)), np.log(hi), 100_001)
    K = cgf(sign * np.exp(log_s), beta, w2)  # (S, R)
    out = np.empty((EPS.size, w2.shape[1]))
    for r in range(w2.shape[1]):
        for k, e in enumerate(EPS):
            obj = K[:, r] - np.exp(log_s) * e
            j = int(np.argmin(obj))
            fine = np.linspace(log_s[max(j - 1, 0)], log_s[min(j + 1, log_s.size - 1)], 10_001)
            fobj = cgf(sign * np.exp(fine), beta, w2[:, [r]])[:, 0] - np.exp(fine) * e
            out[k, r] = min(0.0, float(obj.min()), float(fobj.min()))
    return out


@pytest.mark.parametrize("sign", [+1, -1])
def test_a_batch_matches_a_dense_grid_pair_by_pair(sign: int) -> None:
    pairs = _pairs(3, 8)
    for (beta, w2), got in zip(pairs, log_delta_tail_many(pairs, EPS, sign), strict=True):
        assert got.shape == (EPS.size, w2.shape[1]) and np.all(got <= 0)
        np.testing.assert_allclose(got, _dense_grid(beta, w2, sign), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("sign", [+1, -1])
def test_a_pair_in_a_padded_chunked_batch_is_the_pair_alone(sign: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Padding with β = 0, w² = 0 adds exact zeros, and the chunks (forced small here: many of them, of mixed
    widths) only split the columns: every pair's bound is its bound alone, up to the order of the sums."""
    pairs = _pairs(4, 40)
    alone = [log_delta_tail_many([pair], EPS, sign)[0] for pair in pairs]
    monkeypatch.setattr(chernoff, "_CHUNK", chernoff._GRID_POINTS * 12)
    batched = log_delta_tail_many(pairs, EPS, sign)
    for a, b in zip(alone, batched, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-13)


def test_no_pair_gives_no_bound_and_an_empty_pair_is_gaussian_free() -> None:
    assert log_delta_tail_many([], EPS, +1) == []
    # no eigenvalue at all: ℒ ≡ 0, so K ≡ 0 and the bound is inf_s e^{−sε} → 0 (its log at the grid's end)
    (empty,) = log_delta_tail_many([(np.zeros(0), np.zeros((0, 2)))], EPS, +1)
    np.testing.assert_allclose(empty, -1e8 * EPS[:, None] * np.ones((1, 2)), rtol=1e-9)
