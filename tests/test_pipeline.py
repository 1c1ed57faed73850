"""Pipeline glue: sharding identity, per-dataset config, config checks, summaries."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from ddppm.errors import ConfigError
from ddppm.network import paper_ring_w, partition_rows
from ddppm.pipeline import (
    check_config,
    chunk_indices,
    dataset_config,
    montecarlo_runs,
    summarize_runs,
    summary_table,
)
from ddppm.problem import DistributedProblem
from tests.conftest import REPO


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((48, 4)) @ np.diag([3, 1.5, 1, 0.5])
    X /= np.linalg.norm(X, axis=1).max()
    return DistributedProblem.from_partition(X, partition_rows(48, 4, seed=0), paper_ring_w(), 10)


@pytest.fixture(scope="module")
def calibration(problem):
    return pd.DataFrame(
        [
            {
                "eps": 5.0,
                "met": True,
                "alpha": 1 / np.sqrt(problem.mu1 * problem.mu2),
                "sigma_q": 0.1,
                "schedule": "geometric",
                "scale": 0.02,
                "ratio": 0.9,
                "T": 6,
            },
            {"eps": 40.0, "met": False},
        ]
    )


@pytest.mark.parametrize("method", ["ddppm", "ldp", "ldp_analytic", "dpm"])
def test_sharded_runs_equal_unsharded_bit_for_bit(problem, calibration, method):
    whole = montecarlo_runs(problem, method, 5.0, 0.008, calibration, 7, np.arange(70), 11, "toy")
    for chunks in (2, 3, 7):
        parts = [
            montecarlo_runs(problem, method, 5.0, 0.008, calibration, 7, chunk_indices(70, chunks, k), 11, "toy")
            for k in range(chunks)
        ]
        merged = pd.concat(parts, ignore_index=True)
        pd.testing.assert_frame_equal(merged, whole, check_exact=True)
    assert whole["error"].notna().all() and whole["seed"].nunique() == 70


def test_seeds_depend_on_labels(problem, calibration):
    a = montecarlo_runs(problem, "ldp", 5.0, 0.008, calibration, 7, np.arange(4), 11, "toy")
    b = montecarlo_runs(problem, "ldp", 5.0, 0.008, calibration, 7, np.arange(4), 11, "other")
    assert not np.array_equal(a["error"], b["error"])
    assert not set(a["seed"]) & set(b["seed"])


def test_infeasible_ddppm_runs_are_marked(problem, calibration):
    runs = montecarlo_runs(problem, "ddppm", 40.0, 1e-4, calibration, 7, np.arange(3), 11, "toy")
    assert not runs["feasible"].any() and runs["error"].isna().all()
    summary = summarize_runs(runs)
    assert not summary["feasible"].iloc[0] and np.isnan(summary["error_mean"].iloc[0])


def test_summary_bands(problem, calibration):
    runs = montecarlo_runs(problem, "ldp", 5.0, 0.008, calibration, 7, np.arange(200), 11, "toy")
    s = summarize_runs(runs).iloc[0]
    assert s["n_runs"] == 200
    assert s["error_lo"] <= s["ci_lo"] <= s["error_mean"] <= s["ci_hi"] <= s["error_hi"]
    cal = calibration.assign(dataset="toy", delta_limit=[0.008, 1e-4])
    table = summary_table(summarize_runs(runs), cal)
    assert table.loc[0, "error_ldp"] == pytest.approx(s["error_mean"])


def _default_config():
    return yaml.safe_load((REPO / "config.yaml").read_text())


def test_dataset_config_isolates_overrides():
    cfg = _default_config()
    before = {ds: dataset_config(cfg, ds)["config_hash"] for ds in cfg["datasets"]}
    cfg["dataset_options"]["wine"]["calibration"] = {"runs": 7}
    after = {ds: dataset_config(cfg, ds)["config_hash"] for ds in cfg["datasets"]}
    assert after["wine"] != before["wine"]
    assert all(after[ds] == before[ds] for ds in cfg["datasets"] if ds != "wine")
    assert dataset_config(cfg, "wine")["calibration"]["runs"] == 7
    assert dataset_config(cfg, "wine")["calibration"]["kappas"] == cfg["calibration"]["kappas"]


def test_check_config_names_the_key():
    cfg = _default_config()
    cfg["delta_limits"]["wine"] = [0.1]
    with pytest.raises(ConfigError, match=r"delta_limits\.wine"):
        check_config(cfg)
    cfg = _default_config()
    del cfg["delta_limits"]["diabetes"]
    with pytest.raises(ConfigError, match=r"delta_limits\.diabetes"):
        check_config(cfg)
    cfg = _default_config()
    cfg["partition"]["m"] = 5
    with pytest.raises(ConfigError, match="topology"):
        check_config(cfg)


def test_schema_rejects_bad_values():
    from snakemake.utils import validate

    schema = str(REPO / "workflow" / "schemas" / "config.schema.yaml")
    validate(_default_config(), schema)
    for key, bad in [("epsilons", [0, 1]), ("epsilons", [-2])]:
        cfg = _default_config()
        cfg[key] = bad
        with pytest.raises(Exception, match="epsilons"):
            validate(cfg, schema)
    cfg = _default_config()
    cfg["delta_limits"]["wine"][0] = 1.5
    with pytest.raises(Exception, match="delta_limits"):
        validate(cfg, schema)
    cfg = _default_config()
    cfg["privacy"]["view"] = "everything"
    with pytest.raises(Exception, match="view"):
        validate(cfg, schema)


def test_sharded_calibration_chooses_the_same(problem):
    from ddppm.pipeline import run_calibration, run_calibration_chunk

    cfg = {
        "epsilons": [5.0, 40.0],
        "delta_limits": [0.05, 1e-3],
        "privacy": {"view": "paper", "realisations": 2, "candidate_kinds": ["zero", "plus"]},
        "calibration": {
            "kappas": [0.3, 3.0, 30.0],
            "ratios": ["growth", "one"],
            "schedules": ["geometric"],
            "t_offsets": [-1],
            "runs": 8,
            "t_max": 25,
            "chunks": 3,
            "seed": 5,
        },
        "config_hash": "test",
    }
    whole, whole_cands, _ = run_calibration(problem, cfg)
    coarse = pd.concat([run_calibration_chunk(problem, cfg, k) for k in range(3)], ignore_index=True)
    sharded, sharded_cands, _ = run_calibration(problem, cfg, coarse)
    pd.testing.assert_frame_equal(sharded, whole)
    pd.testing.assert_frame_equal(sharded_cands, whole_cands)
    assert set(whole_cands["stage"]) == {"coarse", "fine"}
