"""Workflow test of the local-DP PCA experiment: its targets in the session's tiny run.

Checks the contents of every table (runs, points, fits, findings), that the figures carry their provenance,
that a finished run has nothing left to do, and that changing one figure's settings reruns only that figure.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import yaml
from PIL import Image

from ddppm.core.io import read_parquet
from ddppm.methods.ldppca.metrics import chance_level
from tests.conftest import TINY, TINY_RESULTS, snakemake

pytestmark = pytest.mark.slow

TARGETS = ("ldppca_fig3", "ldppca_fig4", "ldppca")


@pytest.fixture(scope="module")
def run(tiny_run):
    """The session's tiny run (it builds every experiment, this one included)."""
    work = tiny_run["work"]
    tiny = yaml.safe_load((work / TINY).read_text())["ldppca"]
    config = ("--configfile", TINY)
    return {"work": work, "results": work / TINY_RESULTS, "proc": tiny_run["resumed"], "config": config, "tiny": tiny}


def test_both_figures_are_drawn_and_stamped(run):
    assert run["proc"].returncode == 0, run["proc"].stderr[-3000:]
    for figure in ("fig3", "fig4"):
        png = run["results"] / "figures" / f"ldppca_{figure}.png"
        assert (run["results"] / "figures" / f"ldppca_{figure}.pdf").stat().st_size > 10_000
        with Image.open(png) as image:
            assert image.size[0] > 1000
            assert re.fullmatch(r"config [0-9a-f]{16} · git \S+ · ddppm \S+", image.text["Description"])


def test_runs_tables_hold_every_run_with_consistent_values(run):
    tiny = run["tiny"]
    for figure, panels in (("fig3", 2), ("fig4", 2)):
        cfg = tiny[figure]
        for i in range(panels):
            runs, meta = read_parquet(run["results"] / "ldppca" / figure / f"runs~panel{i}.parquet")
            assert meta["config_hash"] and meta["figure"] == figure and meta["panel_index"] == i
            assert meta["data"]["norm_enforcement"] == "rescale"
            for column in ("n", "p", "k", "run", "seed", "rows_drawn", "rows_outside_ball"):
                assert runs[column].dtype == np.int64, column
            assert set(runs["sigma_mode"]) == set(tiny["sigma_modes"])
            methods = ["ldppca_gaussian"] if figure == "fig3" else ["ldppca_fantope", "ldppca_gaussian"]
            assert set(runs["method"]) == set(methods)
            counts = runs.groupby(["k", "sparsity", "n", "p", "eps", "sigma_mode", "method"], dropna=False).size()
            assert (counts == cfg["runs"]).all()
            assert len(counts) == len(cfg["panels"][i]["values"]) * len(tiny["sigma_modes"]) * len(methods)
            assert runs["error"].between(0, np.sqrt(2 * runs["k"]) + 1e-9).all()
            np.testing.assert_allclose(runs["chance"], chance_level(runs["k"], runs["p"]))
            sigma = runs.pivot_table(index=["n", "p", "eps"], columns="sigma_mode", values="sigma")
            np.testing.assert_allclose(sigma["corrected"] / sigma["paper"], np.sqrt(2))
            assert (runs["feasible"] == (runs["delta_achieved"] <= runs["delta"] * (1 + 1e-9))).all()
            assert (runs["rows_drawn"] <= runs["n"]).all()
            if figure == "fig4":
                fantope = runs[runs["method"] == "ldppca_fantope"]
                assert fantope["converged"].all() and (fantope["penalty"] > 0).all()


def test_summary_fits_and_findings_say_what_the_runs_show(run):
    res = run["results"] / "ldppca"
    summary, _ = read_parquet(res / "summary.parquet")
    csv = pd.read_csv(res / "summary.csv")
    assert len(csv) == len(summary) and list(csv.columns) == list(summary.columns)
    fig3 = summary[(summary["figure"] == "fig3") & (summary["varied"] == "n")]
    assert fig3.loc[fig3["n"] == 1000, "error_over_chance"].between(0.8, 1.2).all()  # pure noise: chance level
    assert (fig3.loc[fig3["n"] == 10**11, "error_over_chance"] < 0.2).all()  # plenty of users: far below
    # at ε = 1 the printed σ misses δ with the true sensitivity √2; the classic σ with √2 meets it
    fig4 = summary[summary["figure"] == "fig4"]
    assert not fig4.loc[fig4["sigma_mode"] == "paper", "feasible"].any()
    assert fig4.loc[fig4["sigma_mode"] == "corrected", "feasible"].all()
    small = fig4[(fig4["n"] == 200) & (fig4["method"] == "ldppca_fantope")]
    assert (small["closed_form_fraction"] == 1).all()  # the noise hides every off-diagonal entry
    fits = pd.read_csv(res / "theory_fit.csv")
    sweep = fits[(fits["figure"] == "fig4") & (fits["varied"] == "n") & (fits["method"] == "ldppca_fantope")]
    assert (sweep["points"] > 0).all()
    assert sweep["slope_rate"].to_numpy() == pytest.approx(-0.5)
    assert sweep["slope_data"].to_numpy() == pytest.approx(-0.5, abs=0.15)
    drawn = summary.loc[summary["in_fit"] & (summary["figure"] == "fig4"), "theory_proof"]
    assert drawn.notna().all() and (drawn > 0).all()
    title, *lines = (res / "findings.txt").read_text(encoding="utf-8").strip().splitlines()
    assert "Wang & Xu" in title and len(lines) >= 4
    assert any("reaches half the chance level" in line for line in lines)


def test_finished_run_is_up_to_date_and_a_figure_change_reruns_only_that_figure(run):
    again = snakemake(run["work"], *TARGETS, *run["config"], "--dry-run")
    assert again.returncode == 0, again.stderr[-2000:]
    assert "Nothing to be done" in again.stdout + again.stderr
    override = run["work"] / "fig4_runs.yaml"
    override.write_text(yaml.safe_dump({"ldppca": {"fig4": {"runs": 3}}}))  # merged over the tiny section
    cfg = ("--configfile", TINY, str(override), *run["config"][2:])
    changed = snakemake(run["work"], *TARGETS, *cfg, "--dry-run")
    assert changed.returncode == 0, changed.stderr[-2000:]
    plan = changed.stdout + changed.stderr
    outputs = [line for line in plan.splitlines() if line.strip().startswith("output:")]
    assert any("fig4/runs~panel0.parquet" in line for line in outputs)
    assert any("fig4/runs~panel1.parquet" in line for line in outputs)
    assert not any("fig3" in line for line in outputs), "a fig4 setting must not rerun fig3 jobs"
    counts = dict(re.findall(r"^(ldppca_\w+)\s+(\d+)$", plan, flags=re.MULTILINE))
    assert counts["ldppca_panel"] == "2" and counts["ldppca_summary"] == "1" and counts["ldppca_figure"] == "1"
