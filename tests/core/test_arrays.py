"""Blocked row operations (ddppm.core.arrays) equal numpy's one-call forms bit for bit, across block edges."""

from __future__ import annotations

import numpy as np

from ddppm.core import arrays
from ddppm.core.arrays import clip_columns, column_squares, row_norms


def test_clip_columns_is_numpys_clip() -> None:
    X = np.random.default_rng(0).standard_normal((1000, 7)) * 3
    lower, upper = np.linspace(-2, 0, 7), np.linspace(0.5, 4, 7)
    np.testing.assert_array_equal(clip_columns(X, lower, upper), np.clip(X, lower, upper))


def test_row_norms_are_numpys_across_blocks(monkeypatch) -> None:
    monkeypatch.setattr(arrays, "BLOCK_ROWS", 64)
    X = np.random.default_rng(1).standard_normal((1000, 13))
    np.testing.assert_array_equal(row_norms(X), np.linalg.norm(X, axis=1))


def test_column_squares_are_the_squared_sum_bit_for_bit() -> None:
    rng = np.random.default_rng(2)
    for n, d in [(1, 3), (7, 2), (178, 13), (8193, 30), (20000, 100), (500, 1)]:
        X = rng.uniform(-1, 1, (n, d)) / np.sqrt(d)
        np.testing.assert_array_equal(column_squares(X), (X**2).sum(axis=0))
