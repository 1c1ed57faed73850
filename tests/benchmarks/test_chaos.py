"""The kill-anywhere benchmark's schedule (benchmarks/chaos.py): seeded, sorted, within the run's length, so a
recorded seed replays the same kills. (The benchmark itself runs the tiny config twice: too long for the suite.)"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

from chaos import incomplete, kill_moments  # noqa: E402


def test_the_kill_moments_are_seeded_sorted_and_within_the_run() -> None:
    moments = kill_moments(94.0, 10, seed=0)
    assert moments == kill_moments(94.0, 10, seed=0) != kill_moments(94.0, 10, seed=1)
    assert len(moments) == 10 and moments == sorted(moments) and 0 < moments[0] and moments[-1] < 94.0


def test_mid_write_outputs_are_counted_from_snakemakes_markers(tmp_path: Path) -> None:
    assert incomplete(tmp_path) == 0
    markers = tmp_path / ".snakemake" / "incomplete" / "@abc"
    markers.mkdir(parents=True)
    (markers / "def").write_text("")
    (tmp_path / ".snakemake" / "incomplete" / "xyz").write_text("")
    assert incomplete(tmp_path) == 2
