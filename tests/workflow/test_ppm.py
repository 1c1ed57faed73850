"""Experiment ppm end to end on the tiny config: both figures, their tables, and reruns of exactly what a change
affects (slow: the session's tiny run)."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from ddppm.core.io import read_parquet
from ddppm.methods.ppm import calibrate
from tests.conftest import REPO, TINY, TINY_RESULTS, snakemake

pytestmark = pytest.mark.slow
TARGETS = ("ppm_fig1", "ppm_fig2")


@pytest.fixture(scope="module")
def ppm_run(tiny_run):
    """The session's tiny run (it builds every experiment, this one included)."""
    assert tiny_run["resumed"].returncode == 0, tiny_run["resumed"].stderr[-3000:]
    work = tiny_run["work"]
    return work, work / TINY_RESULTS, ("--configfile", TINY)


def test_fig1_tables_hold_every_method_and_the_accounting(ppm_run):
    _, results, _ = ppm_run
    section = yaml.safe_load((REPO / TINY).read_text())["ppm"]
    summary, meta = read_parquet(results / "ppm" / "tables" / "errors.parquet")
    assert set(summary["method"]) == set(section["methods"])  # the tiny config exercises every method
    assert sorted(summary["eps"].unique()) == sorted(map(float, section["epsilons"]))
    assert (summary["runs"] == section["seeds"]).all()
    assert (summary["error_lo"] <= summary["error_mean"] + 1e-12).all()
    assert (summary["error_mean"] <= summary["error_hi"] + 1e-12).all()
    assert summary["error_mean"].between(0, 2).all() and len(meta["config_hash"]) == 16
    for _, row in summary.iterrows():  # σ and the ε it gives, recomputed
        releases = 1 if row["method"] == "analyze_gauss" else section["iterations"]
        cal = calibrate(row["eps"], 1e-4, releases, "paper")
        assert row["sigma"] == pytest.approx(cal.sigma) and row["meets_target"] == cal.meets_target
    mean = summary.pivot(index="eps", columns="method", values="error_mean")
    top = mean.index.max()
    assert mean.loc[top, "ppm_theirs_sqrt2"] < mean.loc[top, "fedpower"]  # local DP needs far more noise
    assert (mean.iloc[-1] < mean.iloc[0]).all()  # every method improves with ε
    runs, _ = read_parquet(results / "ppm" / "runs" / "ppm_decentralised.parquet")
    assert len(runs) == section["seeds"] * len(section["epsilons"])
    same_start = runs.groupby("run")["init_seed"].nunique()
    assert (same_start == 1).all()  # run r starts from the same G₀ at every ε
    other, _ = read_parquet(results / "ppm" / "runs" / "fedpower.parquet")
    np.testing.assert_array_equal(np.sort(runs["init_seed"].unique()), np.sort(other["init_seed"].unique()))
    lines = (results / "ppm" / "tables" / "findings.txt").read_text().splitlines()
    assert lines[0].startswith("Private randomized power methods") and len(lines) >= 6
    assert lines[1].startswith("Setting: Synthetic implicit feedback: 500 users")
    for name in ("fig1", "fig2"):
        for ext in ("png", "pdf"):
            assert (results / "ppm" / "figures" / f"{name}.{ext}").stat().st_size > 10_000


def test_fig2_table_compares_both_bounds(ppm_run):
    _, results, _ = ppm_run
    cfg = yaml.safe_load((REPO / TINY).read_text())["ppm"]["sensitivity_ratio"]
    table, _ = read_parquet(results / "ppm" / "tables" / "sensitivity_ratio.parquet")
    k = np.arange(cfg["k_min"], cfg["k_max"] + 1, cfg["k_step"])
    assert len(table) == len(cfg["sizes"]) * k.size
    assert (table["prior_mean"] >= table["theirs_mean"]).all()  # √k‖X‖_max ≥ max_i ‖X_i:‖ always
    assert (table["ratio_empirical"] > table["ratio_approximation"]).all()  # their approximation is conservative


def test_a_setting_reruns_exactly_the_jobs_that_read_it(ppm_run):
    work, _, args = ppm_run
    dry = snakemake(work, *TARGETS, *args, "-n")
    assert dry.returncode == 0 and "Nothing to be done" in dry.stdout + dry.stderr
    changed = yaml.safe_load((work / TINY).read_text())
    changed["ppm"]["bootstrap"]["resamples"] = 300
    (work / "ppm_changed.yaml").write_text(yaml.safe_dump(changed))
    out = snakemake(work, *TARGETS, "--configfile", "ppm_changed.yaml", "-n", "--rerun-triggers", "params")
    lines = out.stdout.splitlines()
    jobs = {line.split("rule ", 1)[1].rstrip(":") for line in lines if line.startswith(("rule ", "localrule "))}
    assert jobs == {"ppm_summary", "ppm_figure_fig1", "ppm_fig1"}, out.stdout[-2000:]
