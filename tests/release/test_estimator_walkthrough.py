"""docs/release.md's walk-through runs as written (Wine's raw records, bounds from units) and prints what the page
says it prints: two directions of 13 features, a certified δ at most the target with OpenDP's agreement, and the
seven releases with the sensitivities the page derives."""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path

import numpy as np

from ddppm.release.estimator import ClippingWarning

DOC = Path(__file__).resolve().parents[2] / "docs" / "release.md"


def test_the_walkthrough_runs_and_prints_what_the_page_says() -> None:
    block = re.search(r"```python\n(.*?)```", DOC.read_text(), re.S).group(1)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), warnings.catch_warnings():
        warnings.simplefilter("error", ClippingWarning)  # the page says no value is clipped
        exec(compile(block, str(DOC), "exec"), {})
    lines = printed.getvalue().splitlines()
    assert lines[0] == "(2, 13)"
    delta, _, agrees = lines[1].split()
    assert float(delta) <= 1e-5 and agrees == "True"
    stages = [line.rsplit(" ", 3) for line in lines[2:]]
    assert len(stages) == 7
    box, sums, squares, unit = round(np.sqrt(26), 3), 2.0, round(np.sqrt(2 / 13), 3), round(np.sqrt(2), 3)
    assert [float(s[1]) for s in stages] == [box] * 3 + [sums, squares, unit, unit]
    assert "clipping radius" in stages[5][0]
