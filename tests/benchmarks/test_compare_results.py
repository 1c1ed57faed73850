"""The tables' comparison (benchmarks/compare_results.py): exact by default; with ``--rtol`` the numeric columns
within a relative tolerance, the largest change of each table reported, the rest exact."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

from compare_results import compare, largest_change  # noqa: E402


def _runs(tmp_path: Path, delta: list[float], verdict: list[str], seconds: float = 1.0) -> Path:
    root = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
    (root / "tables").mkdir(parents=True)
    pd.DataFrame({"method": ["a", "b", "c"], "delta": delta, "verdict": verdict, "seconds": [seconds] * 3}).to_csv(
        root / "tables" / "t.csv", index=False)
    return root


def test_exact_by_default_and_within_the_tolerance_with_rtol(tmp_path: Path, capsys) -> None:
    old = _runs(tmp_path, [1e-6, 0.0, 0.5], ["ok", "ok", "no"])
    moved = _runs(tmp_path, [1e-6 * (1 + 3e-9), 0.0, 0.5], ["ok", "ok", "no"])
    assert len(compare(old, moved)) == 1  # exact: any move differs
    assert compare(old, moved, rtol=1e-8) == []
    assert "3e-09  tables/t.csv" in capsys.readouterr().out
    assert compare(old, moved, rtol=1e-9)[0].startswith("tables/t.csv: a value moved by 3e-09")


def test_a_verdict_or_a_zero_that_moves_is_never_within_tolerance(tmp_path: Path) -> None:
    old = _runs(tmp_path, [1e-6, 0.0, 0.5], ["ok", "ok", "no"])
    assert compare(old, _runs(tmp_path, [1e-6, 0.0, 0.5], ["ok", "no", "no"]), rtol=1.0)  # a verdict changed
    assert compare(old, _runs(tmp_path, [1e-6, 1e-300, 0.5], ["ok", "ok", "no"]), rtol=1e-8)  # 0 became > 0
    frame = pd.DataFrame({"x": [np.nan, 1.0]})
    assert largest_change(frame, frame.copy()) == 0.0  # NaN stays NaN: no change
    assert compare(old, _runs(tmp_path, [1e-6, 0.0, 0.5], ["ok", "ok", "no"], seconds=9.0)) == []  # times ignored
