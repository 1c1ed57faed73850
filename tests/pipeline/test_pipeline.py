"""Pipeline glue: the method registry's parameter tables, sharding identity, per-dataset config, summaries."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest
import yaml

from ddppm.accounting.settings import threat_model
from ddppm.config import validate_config
from ddppm.core.errors import ConfigError
from ddppm.methods import PARAM_COLUMNS, available_methods, get_method
from ddppm.methods.ddppm.params import param_rows
from ddppm.methods.ddppm.steps import run_calibration, run_calibration_chunk
from ddppm.pipeline.config import dataset_config, job_params
from ddppm.pipeline.montecarlo import (
    chunk_indices,
    montecarlo_runs,
    montecarlo_table,
    run_order,
    summarize_runs,
)
from ddppm.pipeline.tables import SUMMARY_COLUMNS, summary_table
from tests.conftest import REPO

EPS, LIMITS = np.array([5.0, 40.0]), np.array([0.008, 1e-4])


@pytest.fixture(scope="module")
def chosen(toy_problem):
    """A calibration's chosen table: feasible at ε = 5, infeasible at ε = 40."""
    problem = toy_problem
    return pd.DataFrame(
        [
            {
                "eps": 5.0,
                "delta_limit": 0.008,
                "met": True,
                "alpha": 1 / np.sqrt(problem.mu1 * problem.mu2),
                "sigma_q": 0.1,
                "schedule": "geometric",
                "scale": 0.02,
                "ratio": 0.9,
                "T": 6,
                "delta": 0.005,
                "delta_se": 0.001,
                "delta_max": 0.006,
                "delta_upper": 0.004,
                "error_mean": 0.5,
                "t_star": 7,
                "reason": "",
            },
            {"eps": 40.0, "delta_limit": 1e-4, "met": False, "t_star": 7, "reason": "no candidate met the δ limit"},
        ]
    )


@pytest.fixture(scope="module")
def param_tables(toy_problem, chosen):
    tables = {
        name: method.choose_params(toy_problem, EPS, LIMITS, _method_options(name))
        for name, method in available_methods().items()
        if not method.calibrated
    }
    tables["ddppm"] = param_rows(chosen, "network", threat_model("network"))
    return tables


def _method_options(name):
    return validate_config(_default_config())["methods"][name]


def _default_config():
    return yaml.safe_load((REPO / "config.yaml").read_text())


def test_every_method_has_the_contract(param_tables):
    for name, method in available_methods().items():
        assert method.name == name and method.label and {"color", "marker", "linestyle"} <= set(method.style)
        assert method.config_schema["type"] == "object"
        if name in param_tables:
            table = param_tables[name]
            assert list(table.columns[: len(PARAM_COLUMNS)]) == list(PARAM_COLUMNS)
            assert table["eps"].tolist() == EPS.tolist()


@pytest.mark.parametrize("method", ["ddppm", "ldp", "ldp_analytic", "dpm"])
def test_sharded_runs_equal_unsharded_bit_for_bit(toy_problem, param_tables, method):
    params = param_tables[method]
    whole = montecarlo_runs(toy_problem, method, 5.0, params, np.arange(70), 11, "toy")
    for chunks in (2, 3, 7):
        parts = [
            montecarlo_runs(toy_problem, method, 5.0, params, chunk_indices(70, chunks, k), 11, "toy")
            for k in range(chunks)
        ]
        merged = pd.concat(parts, ignore_index=True)
        pd.testing.assert_frame_equal(merged, whole, check_exact=True)
    assert whole["error"].notna().all() and whole["seed"].nunique() == 70


@pytest.mark.parametrize("method", ["ddppm", "ldp"])
def test_one_job_per_method_equals_one_job_per_eps(toy_problem, param_tables, method):
    """Rule montecarlo's table (every ε in one job, or its shards gathered) holds, row for row and bit for bit, what
    a job per ε computes: the seeds never depend on which job runs them."""
    params = param_tables[method]
    whole = montecarlo_table(toy_problem, method, params, np.arange(40), 11, "toy")
    per_eps = run_order(
        pd.concat([montecarlo_runs(toy_problem, method, e, params, np.arange(40), 11, "toy") for e in EPS])
    )
    pd.testing.assert_frame_equal(whole, per_eps, check_exact=True)
    shards = [montecarlo_table(toy_problem, method, params, chunk_indices(40, 3, k), 11, "toy") for k in range(3)]
    pd.testing.assert_frame_equal(run_order(pd.concat(shards, ignore_index=True)), whole, check_exact=True)
    assert sorted(set(whole["eps"])) == sorted(EPS.tolist())
    assert list(whole["eps"]) == sorted(whole["eps"]) and whole.groupby(["eps", "threat_model"]).size().eq(40).all()


def test_seeds_depend_on_labels(toy_problem, param_tables):
    a = montecarlo_runs(toy_problem, "ldp", 5.0, param_tables["ldp"], np.arange(4), 11, "toy")
    b = montecarlo_runs(toy_problem, "ldp", 5.0, param_tables["ldp"], np.arange(4), 11, "other")
    assert not np.array_equal(a["error"], b["error"])
    assert not set(a["seed"]) & set(b["seed"])


def test_reference_uses_the_same_seeds_at_every_eps(toy_problem, param_tables):
    """The no-privacy reference does not depend on ε, so it must not wobble with it."""
    a = montecarlo_runs(toy_problem, "dpm", 5.0, param_tables["dpm"], np.arange(40), 11, "toy")
    b = montecarlo_runs(toy_problem, "dpm", 40.0, param_tables["dpm"], np.arange(40), 11, "toy")
    np.testing.assert_array_equal(a["error"], b["error"])
    assert a["error"].mean() < 1e-2


def test_infeasible_runs_are_marked(toy_problem, param_tables):
    runs = montecarlo_runs(toy_problem, "ddppm", 40.0, param_tables["ddppm"], np.arange(3), 11, "toy")
    assert not runs["feasible"].any() and runs["error"].isna().all()
    summary = summarize_runs(runs)
    assert not summary["feasible"].iloc[0] and np.isnan(summary["error_mean"].iloc[0])


def test_summary_bands_and_tidy_table(toy_problem, param_tables):
    runs = pd.concat(
        [
            montecarlo_runs(toy_problem, m, e, param_tables[m], np.arange(64), 11, "toy")
            for m in ("ldp", "ddppm")
            for e in EPS
        ]
    )
    summary = summarize_runs(runs)
    s = summary[(summary["method"] == "ldp") & (summary["eps"] == 5.0)].iloc[0]
    assert s["n_runs"] == 64
    assert s["error_lo"] <= s["mean_ci_lo"] <= s["error_mean"] <= s["mean_ci_hi"] <= s["error_hi"]
    table = summary_table(summary)
    assert list(table.columns) == SUMMARY_COLUMNS
    # LDP's δ is the Gaussian mechanism's for every neighbour and observer: its rows repeat under each threat model.
    assert len(table) == 4 and set(table["threat_model"]) == {"network"} and set(table["role"]) == {"private"}
    row = table[(table["method"] == "ddppm") & (table["eps"] == 5.0)].iloc[0]
    assert row["accounting"] == "chernoff" and row["delta"] == 0.005 and bool(row["feasible"])
    two = summary_table(summary, threat_models=["paper", "sound"])
    ldp = two[two["method"] == "ldp"]
    assert sorted(ldp["threat_model"]) == ["paper", "paper", "sound", "sound"]
    assert ldp.groupby("eps")["error_mean"].nunique().eq(1).all()


def test_summary_answers_best_private_method_in_one_group_by():
    """References (no privacy, or handed v_R) never win; a baseline valid for every threat model competes in each."""
    from ddppm.pipeline.tables import best_private, one_row_per_method

    rows = [
        # dataset, eps, method, threat_model, accounting, error, delta, feasible
        ("d", 5.0, "ddppm", "paper", "exact", 0.30, 0.01, True),
        ("d", 5.0, "ddppm", "sound", "exact", np.nan, np.nan, False),
        ("d", 5.0, "ldp_analytic", "none", "gaussian_mechanism", 0.90, 0.02, True),
        ("d", 5.0, "oracle", "none", "gaussian_mechanism", 0.10, 0.02, True),
        ("d", 5.0, "dpm", "none", "none", 0.01, 0.0, True),
    ]
    errors = pd.DataFrame(
        rows, columns=["dataset", "eps", "method", "threat_model", "accounting", "error_mean", "delta", "feasible"]
    ).assign(delta_limit=0.04, error_lo=np.nan, error_hi=np.nan)
    table = summary_table(errors)
    refs = table[table["role"] == "reference"]
    assert set(refs["method"]) == {"oracle", "dpm"} and set(refs["threat_model"]) == {"none"}
    assert refs["delta"].isna().all() and refs["feasible"].isna().all()
    # Through the CSV, as a user reads it.
    from io import StringIO

    read = pd.read_csv(StringIO(table.to_csv(index=False)))
    best = best_private(read).set_index("threat_model")
    assert best.loc["paper", "method"] == "ddppm" and best.loc["paper", "error_mean"] == 0.30
    assert best.loc["sound", "method"] == "ldp_analytic" and best.loc["sound", "error_mean"] == 0.90
    once = one_row_per_method(read)
    assert (once["method"] == "ldp_analytic").sum() == 1 and len(once) == 5


def test_param_rows_record_every_sigma(chosen):
    table = param_rows(chosen, "network", threat_model("network"))
    first = table.iloc[0]
    sigmas = yaml.safe_load(first["sigma_p"])
    assert len(sigmas) == first["T"] == 6
    np.testing.assert_allclose(sigmas, 0.02 * 0.9 ** np.arange(1, 7))
    assert str(table["T"].dtype) == "Int64" and pd.isna(table.iloc[1]["T"])


def test_validate_fills_defaults_from_the_schema_only():
    cfg = validate_config(_default_config())
    assert cfg["methods"]["ddppm"]["privacy"]["seed"] == 2
    assert cfg["methods"]["dpm"]["t_star_tol"] == 1e-3
    assert cfg["montecarlo"]["chunks"] == 1
    assert "methods" not in cfg["dataset_options"]["wine"], "overrides must not get defaults injected"


def test_dataset_config_isolates_overrides():
    cfg = validate_config(_default_config())
    keys = ("methods.ddppm.calibration",)
    before = {ds: job_params(cfg, ds, keys)["config_hash"] for ds in cfg["datasets"]}
    cfg["dataset_options"]["wine"]["methods"] = {"ddppm": {"calibration": {"runs": 7}}}
    after = {ds: job_params(cfg, ds, keys)["config_hash"] for ds in cfg["datasets"]}
    assert after["wine"] != before["wine"]
    assert all(after[ds] == before[ds] for ds in cfg["datasets"] if ds != "wine")
    wine = dataset_config(cfg, "wine")["methods"]["ddppm"]["calibration"]
    assert wine["runs"] == 7 and wine["kappas"] == cfg["methods"]["ddppm"]["calibration"]["kappas"]


def test_job_params_hold_exactly_the_keys_read():
    cfg = validate_config(_default_config())
    before = job_params(cfg, "wine", ("montecarlo.runs", "montecarlo.seed", "methods.ldp"))
    changed = copy.deepcopy(cfg)
    changed["montecarlo"]["chunks"] = 5
    changed["montecarlo"]["methods"] = ["ldp", "dpm"]
    changed["methods"]["ddppm"]["calibration"]["runs"] = 3
    assert job_params(changed, "wine", ("montecarlo.runs", "montecarlo.seed", "methods.ldp")) == before
    assert set(before) == {"montecarlo", "methods", "config_hash"}


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda c: c["delta_limits"].__setitem__("wine", [0.1]), r"delta_limits\.wine has 1 values"),
        (lambda c: c["delta_limits"].pop("diabetes"), r"delta_limits\.diabetes is missing"),
        (lambda c: c["partition"].__setitem__("m", 5), r"paper_ring needs partition\.m = 4"),
        (lambda c: c["delta_limits"].__setitem__("wien", [0.1] * 7), r"delta_limits\.wien: unknown dataset.*`wine`"),
        (lambda c: c.__setitem__("epsilons", [1, 2, 5, 10, 20, 40, 40.0000001]), r"epsilons.*print alike"),
        (lambda c: c.__setitem__("epsilon", [1]), r"unknown key `epsilon` \(did you mean `epsilons`\?\)"),
        (lambda c: c["methods"]["ddppm"].__setitem__("threat_models", ["nope"]), r"'nope' is not defined"),
        (lambda c: c["montecarlo"].__setitem__("methods", ["ldpp"]), r"montecarlo\.methods\.0.*'ldpp' is not one of"),
        (lambda c: c["delta_limits"]["wine"].__setitem__(0, 1.5), r"delta_limits\.wine\.0"),
        (
            lambda c: (c["network"].__setitem__("topology", "ring"), c["partition"].__setitem__("m", 1000)),
            r"partition\.m = 1000 agents but \w+ has \d+ rows; every agent needs a row: use m <= \d+",
        ),
        (
            lambda c: (c["network"].__setitem__("topology", "grid"), c["partition"].__setitem__("m", 5)),
            r"topology 'grid' needs a composite number of agents",
        ),
        (lambda c: c["network"].__setitem__("c", 0), r"network\.c`: 0 is less than the minimum of 1"),
        (lambda c: c["partition"].__setitem__("m", 1), r"partition\.m`: 1 is less than the minimum of 2"),
        (lambda c: c["dataset_options"]["wine"].__setitem__("n", 50), r"dataset_options\.wine\.n: does nothing"),
        (lambda c: c["dataset_options"]["wine"].__setitem__("seed", 1), r"dataset_options\.wine\.seed: does nothing"),
    ],
)
def test_config_errors_name_the_key(edit, message):
    cfg = _default_config()
    edit(cfg)
    with pytest.raises(ConfigError, match=message) as info:
        validate_config(cfg)
    assert len(str(info.value).splitlines()) <= 4, "errors must be a few lines, never a schema dump"


def _small_calibration_options(chunks: int) -> dict:
    options = validate_config(_default_config())["methods"]["ddppm"]
    options["privacy"].update({"realisations": 2, "candidate_kinds": ["zero", "plus"]})
    options["calibration"].update(
        {
            "kappas": [0.3, 3.0, 30.0],
            "ratios": ["growth", "one"],
            "schedules": ["geometric"],
            "t_offsets": [-1],
            "runs": 8,
            "t_max": 25,
            "chunks": chunks,
            "seed": 5,
        }
    )
    return options


def test_sharded_calibration_chooses_the_same():
    from ddppm.testing import synthetic_problem

    problem = synthetic_problem(48, 4, (3.0, 1.6, 1.0, 0.5), seed=2, c=10)
    options = _small_calibration_options(3)
    model = threat_model("paper")
    eps, limits = [5.0, 40.0], [0.05, 1e-3]
    whole, whole_cands, _ = run_calibration(problem, eps, limits, options, model)
    coarse = pd.concat(
        [run_calibration_chunk(problem, eps, limits, options, model, k, 3) for k in range(3)], ignore_index=True
    )
    sharded, sharded_cands, _ = run_calibration(problem, eps, limits, options, model, coarse)
    pd.testing.assert_frame_equal(sharded, whole)
    pd.testing.assert_frame_equal(sharded_cands, whole_cands)
    assert set(whole_cands["stage"]) == {"coarse", "fine"}


def test_prepared_neighbour_search_is_shared_by_every_job(tmp_path, monkeypatch):
    """The worst-case neighbour search runs once (ddppm_calibrate_prepare); the chunk and final jobs load it
    through a pickle and choose exactly what a calibration that searched itself chooses, without searching."""
    from ddppm.accounting.calibration import Calibration
    from ddppm.core.io import read_pickle, write_pickle_atomic
    from ddppm.methods.ddppm.steps import prepare_calibration
    from ddppm.testing import synthetic_problem

    problem = synthetic_problem(40, 4, (3.0, 1.6, 1.0, 0.5), seed=3, c=10)
    options = _small_calibration_options(2)
    options["calibration"].update({"kappas": [3.0, 300.0], "ratios": ["growth"]})
    model = threat_model("paper_worst")
    eps, limits = [5.0, 40.0], [0.3, 0.05]
    whole, whole_cands, _ = run_calibration(problem, eps, limits, options, model)
    write_pickle_atomic(tmp_path / "prepared.pickle", prepare_calibration(problem, eps, limits, options, model))
    state = read_pickle(tmp_path / "prepared.pickle")
    assert len(state["pool"]) > 0 and len(state["_searched"]) == 1  # the middle candidate's search

    def no_search(self):
        raise AssertionError("searched again")

    monkeypatch.setattr(Calibration, "search_neighbours", no_search)
    coarse = pd.concat(
        [run_calibration_chunk(problem, eps, limits, options, model, k, 2, state) for k in range(2)],
        ignore_index=True,
    )
    shared, shared_cands, _ = run_calibration(problem, eps, limits, options, model, coarse, state)
    pd.testing.assert_frame_equal(shared, whole)
    pd.testing.assert_frame_equal(shared_cands, whole_cands)
    with pytest.raises(ConfigError, match="ddppm_calibrate_prepare"):
        run_calibration(problem, [5.0, 20.0], limits, options, model, coarse, state)


def test_unknown_method_is_a_config_error():
    with pytest.raises(ConfigError, match="montecarlo.methods"):
        get_method("nope")
