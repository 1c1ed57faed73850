"""The bounds study's small-n target (ddppm.studies.bounds.small_n_findings): at the declared bounds, on every data
set with n ≤ bounds.targets.small_n and at every ε, range_shrinking's preprocessing-only error against one_shot's by
the paired interval over the shared draws; judged met or not met, with the numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ddppm.common_task.ranking import student_quantile
from ddppm.studies.bounds import small_n_findings

SECTION = {"estimators": ["range_shrinking", "one_shot"], "targets": {"small_n": 1000}}


def _runs(dataset: str, n: int, eps: float, shift: float, seed: int, draws: int = 10, per_draw: int = 4,
          width: float = 1.0) -> pd.DataFrame:  # fmt: skip
    """Preprocessing-only runs of both estimators at one point: one_shot's error per draw, range_shrinking's the same
    plus ``shift`` plus a draw's noise (each draw's error repeated over its runs, as the study writes them)."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.3, 0.6, draws)
    new = base + shift + rng.normal(0, 0.02, draws)
    frames = []
    for estimator, errors in (("one_shot", base), ("range_shrinking", new)):
        frames.append(pd.DataFrame({"n": n, "width": width, "estimator": estimator, "dataset": dataset, "k": 1,
                                    "method": "preprocessing_only_curator", "eps": eps,
                                    "run": np.arange(draws * per_draw), "draw": np.repeat(np.arange(draws), per_draw),
                                    "error": np.repeat(errors, per_draw)}))  # fmt: skip
    return pd.concat(frames, ignore_index=True)


def _paired_interval(runs: pd.DataFrame) -> tuple[float, float, float]:
    """The paired interval by hand: per draw, the difference of the two estimators' errors; Student's t over draws."""
    at = runs.groupby(["estimator", "draw"])["error"].mean().unstack(0)
    difference = (at["range_shrinking"] - at["one_shot"]).to_numpy()
    half = student_quantile(0.975, difference.size - 1) * difference.std(ddof=1) / np.sqrt(difference.size)
    return float(difference.mean()), float(difference.mean() - half), float(difference.mean() + half)


def test_a_better_or_equal_estimator_meets_the_target():
    runs = pd.concat([_runs("wine", 178, 5.0, -0.05, 0), _runs("wine", 178, 1.0, 0.0, 1),
                      _runs("diabetes", 442, 5.0, -0.1, 2)], ignore_index=True)  # fmt: skip
    lines = small_n_findings(runs, SECTION)
    assert lines[0].startswith("Small n (n ≤ 1000)") and lines[0].endswith(": met.")
    assert len(lines) == 4  # the verdict and one line per (data set, ε)
    mean, lo, hi = _paired_interval(runs[(runs["dataset"] == "wine") & (runs["eps"] == 5.0)])
    assert f"paired difference {mean:+.3f} [{lo:+.3f}, {hi:+.3f}]" in lines[1]
    assert "wine (n = 178), ε = 5" in lines[1]


def test_a_significantly_worse_point_is_named():
    runs = pd.concat([_runs("wine", 178, 5.0, 0.1, 3), _runs("diabetes", 442, 2.0, 0.0, 4)], ignore_index=True)
    lines = small_n_findings(runs, SECTION)
    assert lines[0].endswith("not met at wine ε = 5.")
    mean, lo, _ = _paired_interval(runs[runs["dataset"] == "wine"])
    assert lo > 0 and f"{mean:+.3f}" in lines[1]


@pytest.mark.parametrize("case", ["large_n", "wide_only", "one_estimator"])
def test_what_the_target_does_not_judge(case):
    """Data sets above small_n, widths other than the declared bounds and a study without both estimators give no
    finding."""
    if case == "large_n":
        runs, section = _runs("digits", 1797, 5.0, 0.1, 5), SECTION
    elif case == "wide_only":
        runs, section = _runs("wine", 178, 5.0, 0.1, 6, width=4.0), SECTION
    else:
        runs, section = _runs("wine", 178, 5.0, 0.1, 7), {**SECTION, "estimators": ["range_shrinking"]}
    assert small_n_findings(runs, section) == []
