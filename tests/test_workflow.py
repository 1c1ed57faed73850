"""End-to-end tests of the Snakemake workflow on the tiny config (tests/config/tiny.yaml).

One copy of the repository runs the tiny pipeline; it is killed part-way and resumed, which checks that
finished jobs are not redone. The finished outputs are then checked for presence, schema and privacy
(δ ≤ δ limit for every chosen parameter set, re-evaluated independently). Other tests check that config
errors stop the run before any job, that a parameter change reruns only the affected dataset, and that a
failed download leaves no output behind.
"""

from __future__ import annotations

import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pandas as pd
import pytest
import yaml

from ddppm.io import read_parquet
from tests.conftest import TINY, copy_repo, snakemake

pytestmark = pytest.mark.slow


def test_resume_after_kill_redoes_nothing_finished(tiny_run):
    assert tiny_run["resumed"].returncode == 0, tiny_run["resumed"].stderr[-3000:]
    assert tiny_run["killed_early"], "the run must have been interrupted part-way for this test to mean anything"
    for path, mtime in tiny_run["finished_before"].items():
        if path.exists():  # temp() chunk files are consumed by the merge; finished outputs must be untouched
            assert path.stat().st_mtime_ns == mtime, f"{path} was recomputed after resuming"
    leftovers = [p for p in (tiny_run["work"] / "results").rglob("*") if ".tmp-" in p.name]
    assert not leftovers, f"temporary files left behind: {leftovers}"


def test_outputs_exist_with_schema(tiny_run):
    res = tiny_run["work"] / "results"
    config = yaml.safe_load((tiny_run["work"] / TINY).read_text())
    for ds in config["datasets"]:
        data, meta = read_parquet(res / "data" / ds / "normalized.parquet")
        assert {"row_id", "x0"} <= set(data.columns)
        assert meta["dataset"]["sha256"] and meta["config_hash"] and meta["package_version"]
        assert np.linalg.norm(data.filter(like="x").to_numpy(), axis=1).max() <= 1 + 1e-12
        part, _ = read_parquet(res / "data" / ds / "partition.parquet")
        assert sorted(part["row_id"]) == list(range(len(data)))
        _, net_meta = read_parquet(res / "data" / ds / "network.parquet")
        assert 0 <= net_meta["lambda2"] < 1 and net_meta["c"] == 20
        chosen, cal_meta = read_parquet(res / "calibration" / f"{ds}.parquet")
        assert list(chosen["eps"]) == [float(e) for e in config["epsilons"]]
        assert {
            "alpha",
            "sigma_q",
            "schedule",
            "scale",
            "ratio",
            "T",
            "c",
            "t_star",
            "delta",
            "delta_upper",
            "delta_limit",
            "error_mean",
            "error_std",
            "met",
        } <= set(chosen.columns)
        for method in ("ddppm", "ldp", "ldp_analytic", "dpm"):
            for eps in config["epsilons"]:
                runs, run_meta = read_parquet(res / "runs" / ds / method / f"eps~{eps:g}.parquet")
                assert len(runs) == config["montecarlo"]["runs"]
                assert list(runs["run"]) == list(range(len(runs)))
                assert {"seed", "error"} <= set(runs.columns)
                assert run_meta["chunks"] == (2 if ds == "diabetes" else 1)
        curve, _ = read_parquet(res / "privacy" / ds / "delta_vs_T.parquet")
        assert list(curve["T"]) == list(range(1, config["delta_curve"]["T_max"] + 1))
        assert np.all((curve["delta"] >= 0) & (curve["delta"] <= 1))
    for name in ["fig2.png", "fig2.pdf", "fig3.png", "fig3.pdf"] + [f"fig2_{ds}.png" for ds in config["datasets"]]:
        assert (res / "figures" / name).stat().st_size > 1000
    summary = pd.read_csv(res / "tables" / "summary.csv")
    assert set(summary["dataset"]) == set(config["datasets"])


def test_chosen_parameters_meet_delta_limit(tiny_run):
    """Every chosen parameter set's δ, recomputed here from the stored data, is within its limit."""
    from ddppm.accountant import evaluate_delta
    from ddppm.calibration import params_from_row
    from ddppm.pipeline import accountant_settings, dataset_config, load_problem

    res = tiny_run["work"] / "results"
    base = yaml.safe_load((tiny_run["work"] / "config.yaml").read_text())
    tiny = yaml.safe_load((tiny_run["work"] / TINY).read_text())
    merged = {**base, **{k: ({**base[k], **v} if isinstance(v, dict) and k in base else v) for k, v in tiny.items()}}
    checked = 0
    for ds in tiny["datasets"]:
        chosen, _ = read_parquet(res / "calibration" / f"{ds}.parquet")
        problem = load_problem(
            *(res / "data" / ds / f for f in ("normalized.parquet", "partition.parquet", "network.parquet"))
        )
        settings = accountant_settings(dataset_config(merged, ds)["privacy"])
        for _, row in chosen[chosen["met"]].iterrows():
            assert row["delta"] <= row["delta_limit"]
            again = evaluate_delta(problem, params_from_row(row), np.array([row["eps"]]), settings)
            assert again.delta[0] <= row["delta_limit"]
            assert again.delta[0] == pytest.approx(row["delta"], rel=1e-9)
            checked += 1
    assert checked >= 1, "the tiny config should have at least one feasible ε"


def test_config_error_stops_before_any_job(tmp_path):
    work = copy_repo(tmp_path)
    bad = yaml.safe_load((work / TINY).read_text())
    bad["epsilons"] = [-1, 40]
    (work / "bad.yaml").write_text(yaml.safe_dump(bad))
    out = snakemake(work, "--configfile", "bad.yaml")
    assert out.returncode != 0
    assert "epsilons" in out.stdout + out.stderr
    assert not (work / "results").exists()
    bad["epsilons"] = [5, 40, 100]
    (work / "bad.yaml").write_text(yaml.safe_dump(bad))
    out = snakemake(work, "--configfile", "bad.yaml")
    assert out.returncode != 0 and "delta_limits.wine" in out.stdout + out.stderr
    assert not (work / "results").exists()


def test_param_change_reruns_only_that_dataset(tiny_run, tmp_path):
    work = tiny_run["work"]
    changed = yaml.safe_load((work / TINY).read_text())
    changed.setdefault("dataset_options", {})["wine"] = {"calibration": {"runs": 11}}
    (work / "changed.yaml").write_text(yaml.safe_dump(changed))
    out = snakemake(work, "--configfile", "changed.yaml", "-n")
    assert out.returncode == 0, out.stderr[-2000:]
    text = out.stdout + out.stderr
    assert "wildcards: dataset=wine" in text
    assert "dataset=diabetes" not in text
    (work / "changed.yaml").unlink()


class _Handler(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass


def test_failed_download_leaves_no_output(tmp_path):
    served = tmp_path / "served"
    served.mkdir()
    np.savetxt(served / "wine.csv", np.random.default_rng(0).random((178, 13)), delimiter=",")
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(served)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        work = copy_repo(tmp_path / "repo")
        cfg = yaml.safe_load((work / TINY).read_text())
        cfg["datasets"] = ["wine"]
        cfg["epsilons"] = [5]
        cfg["delta_limits"] = {"wine": [0.04]}
        cfg["dataset_options"] = {
            "wine": {"source": "url", "url": f"http://127.0.0.1:{server.server_port}/wine.csv", "sha256": "0" * 64}
        }
        (work / "url.yaml").write_text(yaml.safe_dump(cfg))
        out = snakemake(work, "results/data/wine/normalized.parquet", "--configfile", "url.yaml")
        assert out.returncode != 0
        log = (work / "results" / "logs" / "prepare_dataset" / "wine.log").read_text()
        assert "sha256" in log.lower()
        assert not (work / "results" / "data" / "wine" / "normalized.parquet").exists()
        assert not [p for p in (work / "results").rglob("*") if ".tmp-" in p.name]
    finally:
        server.shutdown()
        server.server_close()


def test_report_has_every_figure_and_table_with_caption(tiny_run, tmp_path):
    report = tmp_path / "report.html"
    out = snakemake(tiny_run["work"], "--configfile", TINY, "--report", str(report))
    assert out.returncode == 0, out.stderr[-2000:]
    html = report.read_text()
    for name in ("fig2.png", "fig2_diabetes.png", "fig2_wine.png", "fig3.png", "summary.csv"):
        assert name in html, f"{name} missing from the report"
    assert html.count("Config hash") >= 5
    assert "for dataset <strong>wine</strong>" in html
