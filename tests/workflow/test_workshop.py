"""Experiment workshop end to end on the tiny config (the session's tiny run): Fig. 1, its tables, δ recomputed
from the recorded parameters, and reruns of exactly what a change affects (slow)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from ddppm.accounting.neighbours import neighbours_from_table
from ddppm.accounting.settings import accountant_settings, threat_model
from ddppm.core.io import read_parquet
from ddppm.experiments.workshop import default_section, delta_limits
from ddppm.experiments.workshop_claims import claims_table
from ddppm.methods import get_method
from ddppm.methods.workshop.accounting import total_delta
from ddppm.methods.workshop.budget import BudgetSplit
from ddppm.methods.workshop.calibration import params_from_row
from ddppm.pipeline.steps import problem_from_files
from tests.conftest import REPO, TINY, TINY_RESULTS, snakemake

pytestmark = pytest.mark.slow
TARGET = "workshop_fig1"


@pytest.fixture(scope="module")
def workshop_run(tiny_run):
    """The session's tiny run (it builds every experiment, this one included)."""
    assert tiny_run["resumed"].returncode == 0, tiny_run["resumed"].stderr[-3000:]
    work = tiny_run["work"]
    tiny = yaml.safe_load((REPO / TINY).read_text())["workshop"]
    return work, work / TINY_RESULTS, ("--configfile", TINY), default_section(**tiny)


def test_fig1_tables_hold_every_method_threat_model_and_eps(workshop_run):
    _, results, _, section = workshop_run
    summary, meta = read_parquet(results / "workshop" / "tables" / "summary.parquet")
    eps = sorted(map(float, section["epsilons"]))
    for method in section["methods"]:
        rows = summary[summary["method"] == method]
        proven = getattr(get_method(method), "delta_holds_for_every_threat_model", False)
        models = section["threat_models"] if method in ("ddppm", "ddppm_workshop") else ["none"]
        models = ["network_proven"] if proven else models  # LDP: proven for every neighbour and observer
        assert sorted(rows["threat_model"].unique()) == sorted(models)
        assert sorted(rows["eps"].unique()) == eps
    assert (summary["n_runs"] == section["runs"]).all()
    np.testing.assert_allclose(summary["delta_limit"], delta_limits(summary["eps"], section["delta_levels"]))
    feasible = summary[summary["feasible"].astype(bool)]
    assert (feasible["delta"] <= feasible["delta_limit"] * (1 + 1e-9)).all()
    assert summary["error_mean"].dropna().between(0, 1 + 1e-9).all() and len(meta["config_hash"]) == 16
    for ext in ("png", "pdf"):
        assert (results / "workshop" / "figures" / f"fig1.{ext}").stat().st_size > 10_000


def test_budget_split_and_composed_delta_recomputed_from_the_recorded_parameters(workshop_run):
    """Every row of the budget table: the split and the final noise factor follow the config; δ recomputed
    independently from the recorded iteration parameters and the calibration's neighbours equals the table's."""
    _, results, _, section = workshop_run
    budget, _ = read_parquet(results / "workshop" / "tables" / "budget.parquet")
    split = BudgetSplit.from_config(section["budget"])
    assert len(budget) == len(section["threat_models"]) * len(section["epsilons"])
    np.testing.assert_allclose(budget["eps_final"], split.eps_final_share * budget["eps"])
    np.testing.assert_allclose(budget["eps_iterations"] + budget["eps_final"], budget["eps"])
    np.testing.assert_allclose(budget["delta_final"], split.delta_final_share * budget["delta_limit"])
    files = ("normalized.parquet", "partition.parquet", "network.parquet")
    problem = problem_from_files(*(results / "workshop" / "data" / f for f in files))
    for tm in section["threat_models"]:
        params, meta = read_parquet(results / "workshop" / "calibration" / f"ddppm_workshop~{tm}.parquet")
        model = threat_model(tm)
        accounting = model["accounting"]
        rows = budget[budget["threat_model"] == tm]
        factors = split.noise_factors(rows["eps"], rows["delta_limit"], accounting)
        np.testing.assert_allclose(rows["final_noise_factor"], factors, rtol=1e-12)
        for _, row in params[params["feasible"].astype(bool)].iterrows():
            got = recompute_delta(problem, section, row, tm, meta)
            assert got == pytest.approx(float(row["delta"]), rel=1e-6, abs=1e-12)
            assert got <= float(row["delta_limit"]) * (1 + 1e-9)


def recompute_delta(problem, section, row, tm, meta) -> float:
    """The composed δ of one recorded row, from the library's accountant with the calibration's neighbours."""
    from ddppm.experiments.workshop import method_options

    options = method_options(section, "ddppm_workshop")
    settings = accountant_settings(options["privacy"], threat_model(tm))
    neighbours = neighbours_from_table(pd.DataFrame(meta["calibration"]["neighbours"]))
    budget = BudgetSplit.from_config(options["budget"])
    table = total_delta(
        problem,
        params_from_row(row),
        [float(row["eps"])],
        [float(row["delta_limit"])],
        settings,
        budget,
        options["privacy"]["chernoff_bound"],
        neighbours=neighbours,
    )
    return float(table["delta"].iloc[0])


def test_claims_table_is_recomputed_from_the_summary(workshop_run):
    _, results, _, section = workshop_run
    summary, _ = read_parquet(results / "workshop" / "tables" / "summary.parquet")
    claims, _ = read_parquet(results / "workshop" / "tables" / "claims.parquet")
    pd.testing.assert_frame_equal(claims.reset_index(drop=True), claims_table(summary, section), check_dtype=False)
    lines = (results / "workshop" / "tables" / "findings.txt").read_text().splitlines()
    assert lines[0].startswith("Workshop D-DP-PM") and any("[sound]" in line for line in lines)


def test_a_setting_reruns_exactly_the_jobs_that_read_it(workshop_run):
    work, _, args, _ = workshop_run
    dry = snakemake(work, TARGET, *args, "-n")
    assert dry.returncode == 0 and "Nothing to be done" in dry.stdout + dry.stderr
    changed = yaml.safe_load((work / TINY).read_text())
    changed["workshop"]["claims"] = {"drop": 0.1}
    (work / "changed.yaml").write_text(yaml.safe_dump(changed))
    out = snakemake(work, TARGET, "--configfile", "changed.yaml", "-n", "--rerun-triggers", "params")
    lines = out.stdout.splitlines()
    jobs = {line.split("rule ", 1)[1].rstrip(":") for line in lines if line.startswith(("rule ", "localrule "))}
    assert jobs == {"workshop_summary", "workshop_figure_fig1", "workshop_fig1"}, out.stdout[-2000:]
