"""benchmarks/moved_entries.py: an entry moved when its mean changed by more than the larger interval half-width."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from moved_entries import moved  # noqa: E402


def _summary(means, halves) -> pd.DataFrame:
    means, halves = np.asarray(means, float), np.asarray(halves, float)
    return pd.DataFrame({"setting": "standard", "dataset": "wine", "method": ["a", "b", "c", "d"], "k": 1,
                         "eps": 5.0, "error_mean": means, "error_ci_lo": means - halves,
                         "error_ci_hi": means + halves})  # fmt: skip


def test_only_moves_beyond_the_larger_half_width_count() -> None:
    old = _summary([0.5, 0.5, 0.5, 0.5], [0.1, 0.01, 0.01, np.nan])
    new = _summary([0.55, 0.55, 0.505, 0.5 + 1e-12], [0.01, 0.01, 0.01, np.nan])
    found = moved(old, new)
    # a: 0.05 within the old 0.1; b: 0.05 beyond 0.01; c: 0.005 within; d: no interval, compared exactly
    assert found["method"].tolist() == ["b", "d"]
    np.testing.assert_allclose(found["change"], [0.05, 1e-12], rtol=1e-4)  # 0.5 + 1e-12 − 0.5 in floats
