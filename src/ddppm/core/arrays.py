"""Row-wise array operations on large data in blocks: the same numbers as numpy's one-call forms, bit for bit, in a
fraction of the memory traffic (what a release of 10⁶ × 100 records spends its time on, docs/release.md)."""

from __future__ import annotations

import numpy as np

BLOCK_ROWS = 8192
"""Rows per block (a few MB at d = 100: in cache)."""


def clip_columns(X: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """``np.clip(X, lower, upper)`` for per-column bounds with ``lower ≤ upper`` (a new array): as max then min,
    which numpy runs several times faster than ``clip`` with array bounds; equal for every non-NaN value."""
    clipped = np.maximum(X, lower)
    np.minimum(clipped, upper, out=clipped)
    return clipped


def row_norms(X: np.ndarray) -> np.ndarray:
    """``np.linalg.norm(X, axis=1)``, a block of rows at a time (each row's sum is the same, so are the bits)."""
    norms = np.empty(X.shape[0])
    for start in range(0, X.shape[0], BLOCK_ROWS):
        norms[start : start + BLOCK_ROWS] = np.linalg.norm(X[start : start + BLOCK_ROWS], axis=1)
    return norms
