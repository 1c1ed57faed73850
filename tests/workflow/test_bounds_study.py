"""`snakemake bounds_study` on the tiny config: every (data set, width, estimator, method, ε) is summarised, the width
1 runs of the default estimator are the standard setting's runs (same draws, same numbers), the findings judge the
target, each data set has its figure, and a second run has nothing to do."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ddppm.core.io import read_parquet
from tests.conftest import TINY, TINY_RESULTS, snakemake


@pytest.mark.slow
def test_the_bounds_study_on_the_tiny_config(tiny_run) -> None:
    work = tiny_run["work"]
    done = snakemake(work, "bounds_study", "--configfile", TINY)
    assert done.returncode == 0, done.stderr[-3000:]
    folder = work / TINY_RESULTS / "bounds"
    summary = pd.read_csv(folder / "summary.csv")
    assert set(summary["dataset"]) == {"wine", "diabetes"} and set(summary["width"]) == {1.0, 4.0}
    assert set(summary["estimator"]) == {"range_shrinking", "one_shot"}
    assert summary["error_mean"].between(0, 1).all()
    # Width 1 with the default estimator is the common task's standard setting: the same runs, bit for bit.
    runs = read_parquet(folder / "runs" / "wine.parquet")[0]
    standard = read_parquet(work / TINY_RESULTS / "common" / "runs" / "standard" / "wine.parquet")[0]
    mine = runs[(runs["width"] == 1) & (runs["estimator"] == "range_shrinking")]
    keys = ["method", "k", "eps", "run"]
    if "adaptive" in standard:
        standard = standard[~standard["adaptive"].astype(bool)]
    joined = mine.merge(standard, on=keys, suffixes=("", "_standard"))
    assert len(joined) == len(mine) > 0
    np.testing.assert_array_equal(joined["error"], joined["error_standard"])
    findings = (folder / "findings.txt").read_text().splitlines()
    assert findings[0].startswith("The price of loose bounds")
    assert any(line.startswith("diabetes, ε = 10: the private standardisation alone") for line in findings)
    for ds in ("wine", "diabetes"):
        assert (folder / "figures" / f"{ds}.png").stat().st_size > 10_000
    again = snakemake(work, "bounds_study", "--configfile", TINY, "-n")
    assert "Nothing to be done" in again.stdout + again.stderr
