"""`snakemake radius_study` on the tiny config, in a fresh copy of the checkout (it needs no other job of the tiny run):
both radii at every (method, k, ε), the findings judge the three targets, the figure exists, the default target does
not build it, and a second run has nothing to do."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from tests.conftest import REPO, TINY, TINY_RESULTS, copy_repo, snakemake


@pytest.mark.slow
def test_the_radius_study_on_the_tiny_config(tmp_path) -> None:
    work = copy_repo(tmp_path)
    done = snakemake(work, "radius_study", "--configfile", TINY)
    assert done.returncode == 0, done.stderr[-3000:]
    folder = work / TINY_RESULTS / "radius"
    section = yaml.safe_load((REPO / TINY).read_text())["radius"]
    summary = pd.read_csv(folder / "summary.csv")
    methods = summary[~summary["method"].str.startswith("preprocessing_only")]
    assert set(methods["dataset"]) == set(section["datasets"]) and set(methods["radius"]) == {"fixed", "adaptive"}
    assert len(methods) == 2 * 3 * 2 * len(section["epsilons"])  # radii × methods × k × ε
    assert methods["error_mean"].between(0, 1).all() and (methods["error_ci_lo"] <= methods["error_mean"]).all()
    findings = (folder / "findings.txt").read_text().splitlines()
    assert findings[0].startswith("The clipping radius, fixed (c√d) against private")
    for target in ("(a)", "(b)", "(c)"):
        line = next(line for line in findings if line.startswith(f"Target {target}"))
        assert ": met" in line or ": not met" in line
    assert (folder / "figure.png").stat().st_size > 10_000 and (folder / "figure.pdf").exists()
    again = snakemake(work, "radius_study", "--configfile", TINY, "-n")
    assert "Nothing to be done" in again.stdout + again.stderr
    default = snakemake(work, "--configfile", TINY, "-n")
    assert default.returncode == 0 and "radius_runs" not in default.stdout
