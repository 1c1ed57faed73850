"""The journal and workshop D-DP-PM on the common task (ddppm.methods.ddppm.common_searched): estimates equal the
agent-by-agent simulations, calibrated rows in the common task's format, and beside the table, never in it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ddppm.accounting.iteration import DDPPMParams, NoiseSchedule, scale_draws
from ddppm.common_task.run import run_methods, which_method
from ddppm.common_task.task import CommonTask, subspace_error
from ddppm.core.errors import ConfigError
from ddppm.core.network import gossip
from ddppm.experiments.common import check_searched, tables
from ddppm.experiments.common_findings import findings
from ddppm.experiments.workshop import default_section, method_options
from ddppm.methods.ddppm.algorithm import ddppm_agentwise
from ddppm.methods.ddppm.common_searched import journal_estimates
from ddppm.methods.gossip_base.searched import searched_runs
from ddppm.methods.workshop.algorithm import WorkshopParams, workshop_agentwise
from ddppm.methods.workshop.common_searched import workshop_estimates
from ddppm.privacy.threat_models import BUILT_IN
from ddppm.testing import synthetic_problem


def _unit(A: np.ndarray) -> np.ndarray:
    return A / np.linalg.norm(A, axis=0)


def test_journal_estimate_is_agent_zeros_last_consensus_in_the_simulation():
    """Agent 0's consensus of the released z^(T) in Algorithm 1 run agent by agent (line 6) is the estimate."""
    problem = synthetic_problem(c=3)
    rng = np.random.default_rng(0)
    params = DDPPMParams(0.3, 1 / np.sqrt(problem.n), NoiseSchedule("constant", 0.02), 4)
    z0, zp = rng.standard_normal((problem.n, 5)), rng.standard_normal((4, problem.n, 5))
    run = ddppm_agentwise(problem, params, *scale_draws(params, z0, zp))
    consensus = problem.m * gossip(problem.W, run.z_releases[-1], problem.c)[0]  # z_0^(T+1/2), (d, R)
    got = journal_estimates(problem, params, z0, zp)[:, :, 0].T
    np.testing.assert_allclose(got, _unit(consensus), rtol=1e-10, atol=1e-12)


def test_workshop_estimate_is_agent_zeros_last_consensus_in_the_simulation():
    problem = synthetic_problem(c=3)
    rng = np.random.default_rng(1)
    T, R = 3, 4
    params = WorkshopParams(0.3, 1 / np.sqrt(problem.n), NoiseSchedule("constant", 0.05), T)
    z0 = rng.standard_normal((problem.n, R))
    zp = rng.standard_normal((T, problem.m * problem.d, R))
    zu = rng.standard_normal((problem.n, R))
    run = workshop_agentwise(problem, params, params.sigma_q * z0, params.sigmas[:, None, None] * zp, zu, 1.0)
    got = workshop_estimates(problem, params, (z0, zp, zu))[:, :, 0].T
    np.testing.assert_allclose(got, _unit(run.a[0]), rtol=1e-10, atol=1e-12)


SMALL = {
    "privacy": {"realisations": 2, "candidate_kinds": ["zero", "plus"], "search_rows": 1, "search_directions": 1,
                "search_rounds": 1, "search_keep": 1, "search_width": 2},
    "calibration": {"kappas": [1.0, 10.0], "ratios": ["growth"], "t_coarse": [2, 4], "t_offsets": [],
                    "fine_steps": [], "runs": 10, "max_verifications": 2},
}  # fmt: skip


@pytest.fixture(scope="module")
def searched():
    """Both variants calibrated under `sound` on a small problem, at a loose limit (0.3) and an impossible one."""
    problem = synthetic_problem(n=32, d=3, c=3)
    section = default_section(method_options={"ddppm": SMALL, "ddppm_workshop": SMALL})
    variants = {name: method_options(section, name) for name in ("ddppm", "ddppm_workshop")}
    definitions = {"sound": BUILT_IN["sound"].as_dict()}
    # the common task lists them in its prepared-rows setting (the searches run on the pipeline's prepared rows)
    loose = searched_runs(problem, "toy", [5.0, 50.0], 0.3, variants, "sound", definitions, runs=6, seed=0,
                          setting="prepared_rows")  # fmt: skip
    strict = searched_runs(problem, "toy", [0.5], 1e-12, variants, "sound", definitions, 6, 0, setting="prepared_rows")
    return problem, loose, strict


def test_searched_rows_have_the_common_runs_format(searched):
    problem, (runs, params), (strict, _) = searched
    task = CommonTask.from_problem(problem, 1)
    reference = run_methods(task, [5.0], 1e-5, 2, 0, {"adjacency": "replace_one", "iterations": 2})
    assert list(runs.columns) == list(reference.columns)
    assert set(runs["privacy_column"]) == {"searched"} and set(runs["trust_model"]) == {"gossip"}
    met = runs[runs["feasible"]]
    assert len(met) and met.groupby(["method", "eps"]).size().eq(6).all()  # every feasible point ran 6 times
    assert met["error"].between(0, 1).all() and (met["delta"] <= 0.3).all()
    # the recorded δ is the calibration's Definition-1 δ at the parameters that ran, never above its two-sided δ
    chosen = params[params["feasible"]].set_index(["method", "eps"])
    np.testing.assert_allclose(met.groupby(["method", "eps"])["delta"].first().loc[chosen.index],
                               chosen["delta_standard"])  # fmt: skip
    journal = chosen.loc["ddppm"]
    assert len(journal) and (journal["delta_standard"] <= journal["delta"] * (1 + 1e-9)).all()
    # no parameters meet an impossible limit: one row per (variant, ε), no error
    assert not strict["feasible"].any() and strict["error"].isna().all() and len(strict) == 2


def test_searched_errors_are_the_common_metric_of_the_chosen_parameters(searched):
    """The runs' errors are the common task's error of agent 0's consensus at the chosen parameters: replayed."""
    from ddppm.core.seeds import run_generators
    from ddppm.methods.ddppm.common_searched import searched_estimates

    problem, (runs, params), _ = searched
    task = CommonTask.from_problem(problem, 1)
    row = params[(params["method"] == "ddppm") & params["feasible"]].iloc[0]
    rngs = run_generators(0, ("toy", 1, "ddppm", float(row["eps"])), range(6))
    replay = subspace_error(searched_estimates(problem, row, rngs), task.V)
    ran = runs[(runs["method"] == "ddppm") & (runs["eps"] == row["eps"])].sort_values("run")["error"]
    np.testing.assert_allclose(ran.to_numpy(), replay)


def test_searched_rows_go_beside_the_table_never_in_it(searched):
    problem, (runs, _), _ = searched
    task = CommonTask.from_problem(problem, 1)
    certified = run_methods(task, [5.0, 50.0], 0.3, 4, 0, {"adjacency": "replace_one", "iterations": 2},
                            dataset="toy", setting="prepared_rows")  # fmt: skip
    out = tables(pd.concat([certified, runs], ignore_index=True))
    assert not set(out["which_method"]["best"]) & {"ddppm", "ddppm_workshop"}
    assert not set(out["which_method"]["runner_up"].dropna()) & {"ddppm", "ddppm_workshop"}
    beside = out["not_certified"]
    assert set(beside["method"]) == {"ddppm", "ddppm_workshop"} and (beside["delta_is"] == "at least").all()
    assert beside["label"].notna().all()
    section = {"delta": 0.3, "adjacency": "replace_one", "runs": 4, "iterations": 2}
    lines = findings(out["which_method"], out["summary"], section, beside)
    searched_lines = [line for line in lines if line.startswith("Searched, not certified")]
    assert len(searched_lines) == 2 and all("lower bound" in line for line in searched_lines)
    assert which_method(out["summary"])["best"].notna().all()


def test_searched_config_is_checked():
    # a data set outside common.datasets is skipped, not an error (a note says so: tests/common_task/test_settings.py)
    section = {"datasets": ["wine"], "searched": {"methods": {"ddppm": ["sbm_graph_signal"]}, "threat_model": "sound"}}
    check_searched(section["searched"], section, {})
    guessed = {"methods": {"ddppm": ["wine"]}, "threat_model": "paper"}
    with pytest.raises(ConfigError, match=r"common\.searched\.threat_model.*worst"):
        check_searched(guessed, section, {})
    with pytest.raises(ConfigError, match=r"common\.searched\.threat_model"):
        check_searched({**guessed, "threat_model": "nope"}, section, {})


def test_searched_data_sets_follow_the_config():
    """Each data set runs the variants that list it; the rule file asks for the union, in common.datasets order."""
    from ddppm.experiments.common import searched_datasets

    config = {"common": {"datasets": ["wine", "sbm_graph_signal", "diabetes"],
                         "searched": {"methods": {"ddppm": ["sbm_graph_signal"],
                                                  "ddppm_workshop": ["diabetes", "sbm_graph_signal"]}}}}  # fmt: skip
    assert searched_datasets(config) == ["sbm_graph_signal", "diabetes"]
    assert searched_datasets({"common": {**config["common"], "searched": {"methods": {}}}}) == []


def test_hockey_statistic_needs_the_exact_tail():
    """``delta_statistic: hockey`` compares Definition 1's δ, which only the exact accounting computes."""
    from ddppm.accounting.accountant import AccountantSettings
    from ddppm.accounting.calibration import Calibration, CalibrationGrid

    problem = synthetic_problem(n=32, d=3, c=3)
    grid = CalibrationGrid(kappas=(1.0,), ratios=("growth",), t_coarse=(2,), runs=4, delta_statistic="hockey")
    with pytest.raises(ConfigError, match=r"delta_statistic.*exact"):
        Calibration(problem, np.array([5.0]), np.array([0.1]), grid, AccountantSettings(view="network")).prepare()
