"""End-to-end tests of the Snakemake workflow on the tiny config (tests/config/tiny.yaml).

One copy of the repository runs the tiny pipeline; it is killed part-way and resumed, which checks that
finished jobs are not redone. The finished outputs are then checked for presence, schema and privacy
(δ ≤ δ limit for every chosen parameter set, re-evaluated independently). Other tests check that config
errors stop the run before any job, that a parameter change reruns only the affected dataset, and that a
failed download leaves no output behind.
"""

from __future__ import annotations

import shutil
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pandas as pd
import pytest
import yaml

from ddppm.accounting.settings import threat_model
from ddppm.core.io import read_parquet
from tests.conftest import REPO, TINY, TINY_RESULTS, copy_repo, snakemake

pytestmark = pytest.mark.slow


def test_resume_after_kill_redoes_nothing_finished(tiny_run):
    assert tiny_run["resumed"].returncode == 0, tiny_run["resumed"].stderr[-3000:]
    assert tiny_run["killed_early"], "the run must have been interrupted part-way for this test to mean anything"
    for path, mtime in tiny_run["finished_before"].items():
        if path.exists():  # temp() chunk files are consumed by the merge; finished outputs must be untouched
            assert path.stat().st_mtime_ns == mtime, f"{path} was recomputed after resuming"
    leftovers = [p for p in (tiny_run["work"] / TINY_RESULTS).rglob("*") if ".tmp-" in p.name]
    assert not leftovers, f"temporary files left behind: {leftovers}"


def test_outputs_exist_with_schema(tiny_run):
    res = tiny_run["work"] / TINY_RESULTS
    config = yaml.safe_load((tiny_run["work"] / TINY).read_text())
    methods = yaml.safe_load((tiny_run["work"] / "config.yaml").read_text())["montecarlo"]["methods"]
    models = config["methods"]["ddppm"]["threat_models"]
    for ds in config["datasets"]:
        data, meta = read_parquet(res / "data" / ds / "normalized.parquet")
        assert {"row_id", "x0"} <= set(data.columns)
        assert meta["dataset"]["sha256"] and meta["config_hash"] and meta["package_version"]
        assert {"git_commit", "python", "numpy", "scipy", "pandas", "snakemake"} <= set(meta["provenance"])
        assert meta["provenance"]["numpy"] == np.__version__
        assert np.linalg.norm(data.filter(like="x").to_numpy(), axis=1).max() <= 1 + 1e-12
        part, _ = read_parquet(res / "data" / ds / "partition.parquet")
        assert sorted(part["row_id"]) == list(range(len(data)))
        _, net_meta = read_parquet(res / "data" / ds / "network.parquet")
        assert 0 <= net_meta["lambda2"] < 1 and net_meta["c"] == 20
        for model in models:
            chosen, _ = read_parquet(res / "methods" / "ddppm" / ds / model / "calibration.parquet")
            assert list(chosen["eps"]) == [float(e) for e in config["epsilons"]]
            assert {"c", "t_star", "delta_limit", "met", "reason"} <= set(chosen.columns)
            if chosen["met"].any():  # parameter columns exist where some ε was feasible
                assert {"alpha", "sigma_q", "schedule", "scale", "ratio", "T", "delta"} <= set(chosen)
                assert {"delta_upper", "error_mean", "error_std", "worst_new_row"} <= set(chosen.columns)
            else:
                assert chosen["reason"].str.len().gt(0).all(), "an infeasible row says why"
            curve, _ = read_parquet(res / "methods" / "ddppm" / ds / model / "delta_vs_T.parquet")
            assert list(curve["T"]) == list(range(1, config["methods"]["ddppm"]["delta_curve"]["T_max"] + 1))
            assert np.all((curve["delta"] >= 0) & (curve["delta"] <= 1))
            # Fig. 3 never shows a candidate below the δ the calibration recorded for it (a chosen one: equal)
            own = curve[curve["T"] == curve["T_calibrated"]]
            if len(own):
                shown, recorded = float(own["delta"].iloc[0]), float(own["delta_recorded"].iloc[0])
                assert shown >= recorded * (1 - 1e-9), (ds, model, shown, recorded)
                if own["params_source"].iloc[0] == "calibrated":
                    assert shown == pytest.approx(recorded, rel=1e-9)
        floor, _ = read_parquet(res / "methods" / "ddppm" / ds / "floor.parquet")
        assert set(floor["view"]) == {"network", "paper"} and len(floor) == 2 * len(config["epsilons"])
        assert np.all((floor["floor_hockey"] > 0) & (floor["floor_hockey"] <= floor["pdp_noise_free"] + 1e-12))
        assert (floor["infeasible_every_choice"] == (floor["floor_hockey"] > floor["delta_limit"])).all()
        for model in models:  # a limit the floor excludes is never met under a worst-neighbour threat model
            definition = threat_model(model, config.get("threat_models"))
            if definition["adjacency"] != "worst":
                continue  # a guessed neighbour may meet what the worst cannot (Fig. 2 rings such points)
            chosen, _ = read_parquet(res / "methods" / "ddppm" / ds / model / "calibration.parquet")
            excluded = floor[(floor["view"] == definition["view"]) & floor["infeasible_every_choice"]]["eps"]
            assert not chosen[chosen["eps"].isin(excluded)]["met"].any(), (ds, model)
        for method in methods:
            params, _ = read_parquet(res / "params" / ds / f"{method}.parquet")
            assert list(params.columns[:6]) == ["eps", "delta_limit", "threat_model", "accounting", "delta", "feasible"]
            runs, run_meta = read_parquet(res / "runs" / ds / f"{method}.parquet")  # one job, every ε
            assert run_meta["chunks"] == 1
            assert {"seed", "error", "delta", "delta_limit", "threat_model"} <= set(runs.columns)
            assert sorted(set(runs["eps"])) == sorted(config["epsilons"])
            for _eps, at_eps in runs.groupby("eps"):
                per_model = len(models) if method == "ddppm" else 1
                assert len(at_eps) == config["montecarlo"]["runs"] * per_model
                assert sorted(set(at_eps["run"])) == list(range(config["montecarlo"]["runs"]))
    names = ["fig2.png", "fig2.pdf"] + [f"{fig}_{m}.png" for m in models for fig in ("fig3", "frontier")]
    for name in names + [f"fig2_{ds}.png" for ds in config["datasets"]]:
        assert (res / "figures" / name).stat().st_size > 1000
    summary = pd.read_csv(res / "tables" / "summary.csv")
    assert set(summary["dataset"]) == set(config["datasets"])
    # every row names what its δ covers: the journal keeps the paper's preprocessing; the common task's standard
    # setting and oracle_bounds run from the raw records, its other second settings on the prepared rows
    common = pd.read_csv(res / "common" / "summary.csv")
    assert set(summary["scope"]) == {"prepared_rows"}
    from_records = common["setting"].isin(["standard", "oracle_bounds"])
    assert set(common[from_records]["scope"]) == {"raw_records"} and "oracle_bounds" in set(common["setting"])
    assert set(common[~from_records]["scope"]) == {"prepared_rows"}
    certified = common[(common["setting"] == "standard") & (common["privacy_column"] == "certified")]
    calibrated = certified[certified["method"] != "ldp"]  # the classic Gaussian formula overshoots at ε > 1 (docs)
    assert (calibrated["delta"] <= calibrated["delta_limit"] * (1 + 1e-9)).all()  # the whole route, composed
    clipped = pd.read_csv(res / "common" / "clipping.csv")
    assert list(clipped["dataset"]) == config["common"]["datasets"] and clipped["bounds_source"].str.len().gt(10).all()
    assert set(summary["threat_model"]) == {*models, "none"}
    ddppm_rows = summary[summary["method"] == "ddppm"]
    assert ddppm_rows["feasible"].any(), "the tiny config should have at least one feasible D-DP-PM point"
    assert ddppm_rows.loc[~ddppm_rows["feasible"].astype(bool), "error_mean"].isna().all(), "no error if infeasible"
    # One group-by answers "best private method per (dataset, ε, threat model)": references carry no δ, and the
    # LDP baselines (δ proven for every neighbour and observer) appear under every threat model.
    refs = summary[summary["role"] == "reference"]
    assert set(refs["method"]) == {"oracle", "dpm"} & set(methods)
    assert refs["delta"].isna().all() and refs["feasible"].isna().all() and set(refs["threat_model"]) == {"none"}
    ldp = summary[summary["method"] == "ldp_analytic"]
    assert set(ldp["threat_model"]) == set(models) and len(ldp) == len(ddppm_rows)
    private = summary[summary["role"] == "private"]
    met = private[(private["feasible"] == True) & private["error_mean"].notna()]  # noqa: E712
    best = met.loc[met.groupby(["dataset", "eps", "threat_model"])["error_mean"].idxmin()]
    assert len(best) == len(private[["dataset", "eps", "threat_model"]].drop_duplicates())  # LDP is always met


def test_tiny_run_never_touches_results(tiny_run):
    assert TINY_RESULTS != "results"
    assert not (tiny_run["work"] / "results").exists()


def test_chosen_parameters_meet_delta_limit(tiny_run):
    """Every chosen parameter set's δ, recomputed here from the stored data, is within its limit."""
    from ddppm.accounting.accountant import evaluate_delta
    from ddppm.accounting.rows import params_from_row
    from ddppm.accounting.settings import accountant_settings
    from ddppm.config import validate_config
    from ddppm.pipeline.config import dataset_config
    from ddppm.pipeline.steps import problem_from_files

    res = tiny_run["work"] / TINY_RESULTS
    base = yaml.safe_load((tiny_run["work"] / "config.yaml").read_text())
    tiny = yaml.safe_load((tiny_run["work"] / TINY).read_text())
    from snakemake.utils import update_config

    update_config(base, tiny)
    merged = validate_config(base)
    checked = 0
    for ds in tiny["datasets"]:
        problem = problem_from_files(
            *(res / "data" / ds / f for f in ("normalized.parquet", "partition.parquet", "network.parquet"))
        )
        cfg = dataset_config(merged, ds)
        params, _ = read_parquet(res / "params" / ds / "ddppm.parquet")
        for _, row in params[params["feasible"]].iterrows():
            settings = accountant_settings(
                cfg["methods"]["ddppm"]["privacy"], cfg["threat_models"][row["threat_model"]]
            )
            assert row["delta"] <= row["delta_limit"]
            again = evaluate_delta(problem, params_from_row(row), np.array([row["eps"]]), settings)
            assert again.delta[0] <= row["delta_limit"]
            assert again.delta[0] == pytest.approx(row["delta"], rel=1e-9)
            checked += 1
    assert checked >= 2, "the tiny config should have feasible points under both threat models"


def test_chosen_delta_recomputed_by_an_independent_route(tiny_run):
    """Each met row's δ, at the neighbour the calibration found worst, by a route that shares no code with
    ``evaluate_delta``: the observer's conditional law from the literal M and L of eq. (20)–(21)
    (``conditional_law_full``) for X and for the neighbour, then ``gaussian_tail_delta`` on the two Gaussians
    (both orders), averaged over the observer's own-randomness realisations."""
    from ddppm.accounting.accountant import own_randomness
    from ddppm.accounting.neighbours import Neighbour, apply_neighbour
    from ddppm.accounting.release import conditional_law_full
    from ddppm.accounting.rows import params_from_row
    from ddppm.accounting.settings import accountant_settings
    from ddppm.config import validate_config
    from ddppm.pipeline.config import dataset_config
    from ddppm.pipeline.steps import problem_from_files
    from ddppm.privacy.tails import gaussian_tail_delta

    res = tiny_run["work"] / TINY_RESULTS
    base = yaml.safe_load((tiny_run["work"] / "config.yaml").read_text())
    tiny = yaml.safe_load((tiny_run["work"] / TINY).read_text())
    from snakemake.utils import update_config

    update_config(base, tiny)
    merged = validate_config(base)
    checked = set()
    for ds in tiny["datasets"]:
        problem = problem_from_files(
            *(res / "data" / ds / f for f in ("normalized.parquet", "partition.parquet", "network.parquet"))
        )
        cfg = dataset_config(merged, ds)
        for model in cfg["methods"]["ddppm"]["threat_models"]:
            definition = cfg["threat_models"][model]
            settings = accountant_settings(cfg["methods"]["ddppm"]["privacy"], definition)
            chosen, _ = read_parquet(res / "methods" / "ddppm" / ds / model / "calibration.parquet")
            for _, row in chosen[chosen["met"]].iterrows():
                params = params_from_row(row)
                observer = int(row["worst_observer"])
                neighbour = Neighbour(
                    int(row["worst_agent"]), int(row["worst_row"]), row["worst_kind"],
                    np.asarray(yaml.safe_load(row["worst_new_row"]), float),
                )  # fmt: skip
                laws = [
                    conditional_law_full(p, params.alpha, params.sigma_q, params.sigmas, observer, definition["view"])
                    for p in (problem, apply_neighbour(problem, neighbour))
                ]
                own = own_randomness(problem, params, observer, settings)
                deltas = [
                    gaussian_tail_delta(
                        laws[0].mean_map @ own[:, r], laws[0].cov, laws[1].mean_map @ own[:, r], laws[1].cov,
                        [row["eps"]], method=definition["accounting"],
                    )[0]
                    for r in range(own.shape[1])
                ]  # fmt: skip
                assert np.mean(deltas) == pytest.approx(row["delta"], rel=1e-6, abs=1e-300), (ds, model, row["eps"])
                assert np.mean(deltas) <= row["delta_limit"] * (1 + 1e-6)
                checked.add(definition["accounting"])
    assert checked == {"chernoff", "exact"}, "the tiny run must meet a limit under both accountings"


def test_config_error_stops_before_any_job(tmp_path):
    work = copy_repo(tmp_path)
    bad = yaml.safe_load((work / TINY).read_text())
    bad["epsilons"] = [-1, 40]
    (work / "bad.yaml").write_text(yaml.safe_dump(bad))
    out = snakemake(work, "--configfile", "bad.yaml")
    assert out.returncode != 0
    assert "epsilons" in out.stdout + out.stderr
    assert not (work / TINY_RESULTS).exists()
    bad["epsilons"] = [5, 40, 100]
    (work / "bad.yaml").write_text(yaml.safe_dump(bad))
    out = snakemake(work, "--configfile", "bad.yaml")
    assert out.returncode != 0 and "delta_limits.wine" in out.stdout + out.stderr
    assert not (work / TINY_RESULTS).exists()


def _dry_run_jobs(work, config: dict) -> dict[str, list[str]]:
    """Rule → wildcard lines of every job a dry run with ``config`` would run."""
    (work / "changed.yaml").write_text(yaml.safe_dump(config))
    try:
        out = snakemake(work, "--configfile", "changed.yaml", "-n")
    finally:
        (work / "changed.yaml").unlink()
    assert out.returncode == 0, out.stderr[-2000:]
    jobs: dict[str, list[str]] = {}
    rule = None
    for line in (out.stdout + out.stderr).splitlines():
        if line.startswith(("rule ", "localrule ")):
            rule = line.split()[1].rstrip(":")
            jobs.setdefault(rule, [])
        elif rule and line.strip().startswith("wildcards:"):
            jobs[rule].append(line.strip())
    return jobs


GATHERS = {"summarize_runs", "figure_fig2", "figure_fig2_panel", "summary_table", "all"}
REPORT_PAGES = {"summary_table_html", "provenance_table", "report_landing", "rule_graph"}
"""The report's pages gather the tables: they rerun whenever a table they show does (the rule graph whenever the
config keys that choose the default target's rules change, as dropping a method does)."""


def test_param_change_reruns_only_that_dataset(tiny_run):
    changed = yaml.safe_load((tiny_run["work"] / TINY).read_text())
    changed.setdefault("dataset_options", {})["wine"] = {"methods": {"ddppm": {"calibration": {"runs": 11}}}}
    jobs = _dry_run_jobs(tiny_run["work"], changed)
    lines = [w for ws in jobs.values() for w in ws]
    assert any("dataset=wine" in w for w in jobs["ddppm_calibrate"])
    assert not any("dataset=diabetes" in w for w in lines)
    assert "method_params" not in jobs, "closed-form methods do not wait for D-DP-PM's calibration"


def test_dropping_a_method_or_rechunking_reruns_nothing_finished(tiny_run):
    """The method list and the chunk count are read by no finished job: only gathers rerun."""
    changed = yaml.safe_load((tiny_run["work"] / TINY).read_text())
    changed.setdefault("montecarlo", {})["methods"] = ["ddppm", "ldp", "dpm"]
    changed["montecarlo"]["chunks"] = 3
    jobs = _dry_run_jobs(tiny_run["work"], changed)
    gathers = GATHERS | REPORT_PAGES
    assert set(jobs) <= gathers, f"finished jobs would rerun: {sorted(set(jobs) - gathers)}"
    assert "summary_table" in jobs


def test_code_change_reruns_exactly_its_users(tiny_run):
    """Editing a library module reruns the jobs whose code uses it, and nothing else: the LDP module's two journal
    methods (and no other method's journal jobs), and the common task's and the workshop's runs, which run LDP."""
    work = tiny_run["work"]
    module = work / "src" / "ddppm" / "methods" / "ldp.py"
    original = module.read_text()
    module.write_text(original + "\n# an edit\n")
    try:
        jobs = _dry_run_jobs(work, yaml.safe_load((work / TINY).read_text()))
    finally:
        module.write_text(original)
    rerun = {w.split("method=")[1].split(",")[0] for w in jobs["method_params"]}
    assert rerun == {"ldp", "ldp_analytic"}, "both LDP variants live in the edited module, nothing else does"
    assert {"common_runs", "workshop_runs"} <= set(jobs), "both run the LDP baselines"
    assert not {"workshop_data", "workshop_calibrate", "ddppm_calibrate", "ddppm_floor", "ppm_runs"} & set(jobs)
    others = ("method=ddppm", "method=dpm", "method=oracle")
    assert not any(o in w for ws in jobs.values() for w in ws for o in others)
    # and the unchanged file reruns nothing
    assert _dry_run_jobs(work, yaml.safe_load((work / TINY).read_text())) == {}


def _planned_jobs(work, *extra: str) -> set[tuple[str, str]]:
    """(rule, wildcards) of every job a dry run of the tiny config plans."""
    out = snakemake(work, "--configfile", TINY, "-n", *extra)
    assert out.returncode == 0, out.stderr[-2000:]
    jobs: set[tuple[str, str]] = set()
    rule = None
    for line in (out.stdout + out.stderr).splitlines():
        if line.startswith(("rule ", "localrule ")):
            rule = line.split()[1].rstrip(":")
            jobs.add((rule, ""))
        elif rule and line.strip().startswith("wildcards:"):
            jobs.discard((rule, ""))
            jobs.add((rule, line.strip()))
    return jobs


# A module each registry hands out (found at run time, named by no import statement of the rules' scripts), and
# what must rerun when it changes: the rules (or outputs) whose jobs use it. Their dependents follow by themselves.
REGISTRY_EDITS = {
    "methods/conventional.py": ["common_runs"],  # a common-task method, nothing else runs it
    "methods/ldppca/mechanism.py": ["ldppca_panel", "common_runs"],  # Wang & Xu's methods and their adapter
    "methods/ppm/algorithms.py": ["ppm_data", "ppm_sensitivity_ratio", "common_runs"],
    "methods/workshop/budget.py": ["workshop_calibrate", "ddppm_common_searched"],  # the workshop D-DP-PM
    "methods/certified/algorithm.py": [  # a journal method too: only its own jobs of the journal rules
        "common_runs",
        "ddppm_certified_frontier",
        f"{TINY_RESULTS}/params/diabetes/ddppm_certified.parquet",
        f"{TINY_RESULTS}/params/wine/ddppm_certified.parquet",
    ],
    "experiments/ppm.py": ["ppm_data", "ppm_sensitivity_ratio"],  # an experiment (its own registry)
}


@pytest.mark.parametrize("module", sorted(REGISTRY_EDITS))
def test_editing_a_discovered_module_reruns_exactly_its_jobs(tiny_run, module):
    """The code hash of a rule covers the modules it reaches through a registry: editing one plans exactly the
    jobs that use it and their dependents (the same plan as forcing those jobs), nothing less, nothing more."""
    work = tiny_run["work"]
    path = work / "src" / "ddppm" / module
    original = path.read_text()
    path.write_text(original + "\n# an edit\n")
    try:
        edited = _planned_jobs(work)
    finally:
        path.write_text(original)
    forced = _planned_jobs(work, "--forcerun", *REGISTRY_EDITS[module])
    assert edited, f"editing {module} reran nothing: a stale result"
    assert edited == forced, (sorted(edited - forced), sorted(forced - edited))


def test_editing_a_data_set_record_reruns_the_jobs_that_load_it(tiny_run):
    """The data sets' records (src/ddppm/data/datasets.yaml: loaders, labels, declared bounds) are data a module
    reads: editing one plans the data sets' preparation, the clipping table and the common task's runs again."""
    work = tiny_run["work"]
    path = work / "src" / "ddppm" / "data" / "datasets.yaml"
    original = path.read_text()
    path.write_text(original.replace("all_features: [0, 16]", "all_features: [0, 17]"))
    try:
        rules = {rule for rule, _ in _planned_jobs(work)}
    finally:
        path.write_text(original)
    assert {"prepare_dataset", "common_clipping", "common_runs"} <= rules
    assert _planned_jobs(work) == set()


def _docs_example_method() -> str:
    """The common-task method of docs/pipeline.md ("Add a method"), as a user copies it."""
    text = (REPO / "docs" / "pipeline.md").read_text(encoding="utf-8")
    block = text.split("<!-- example-method:begin -->")[1].split("<!-- example-method:end -->")[0]
    return block.split("```python\n")[1].split("```")[0]


def test_a_common_task_method_is_one_file_that_reruns_its_runs_and_reaches_the_summary(tiny_run, tmp_path):
    """The docs' example, written as one new file under ddppm.methods of a copy of the finished tiny run: the
    registry finds it, the common task's runs rerun and the journal's do not, and after the run it is in the
    summary in every setting (the end-to-end one from the raw records included), certified within the limit."""
    work = tmp_path / "work"
    shutil.copytree(tiny_run["work"], work, symlinks=True)
    (work / "src" / "ddppm" / "methods" / "noisy_second_moment.py").write_text(_docs_example_method())
    rules = {rule for rule, _ in _planned_jobs(work)}
    assert "common_runs" in rules
    assert not rules & {"montecarlo_chunk", "method_params", "ddppm_calibrate", "workshop_calibrate", "ppm_runs"}
    out = snakemake(work, f"{TINY_RESULTS}/common/summary.csv", "--configfile", TINY)  # targets first
    assert out.returncode == 0, out.stderr[-2000:]
    summary = pd.read_csv(work / TINY_RESULTS / "common" / "summary.csv")
    added = summary[summary["method"] == "noisy_second_moment"]
    assert set(added["setting"]) == set(summary["setting"]) and set(added["scope"]) == {"raw_records", "prepared_rows"}
    assert added["feasible"].all() and added["label"].eq("noisy second moment, every entry (example)").all()
    assert added["error_mean"].between(0, 1).all()


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
        cfg["experiments"] = []  # only the data step runs; no experiment may name another data set
        cfg["epsilons"] = [5]
        cfg["delta_limits"] = {"wine": [0.04]}
        cfg["dataset_options"] = {
            "wine": {"source": "url", "url": f"http://127.0.0.1:{server.server_port}/wine.csv", "sha256": "0" * 64}
        }
        (work / "url.yaml").write_text(yaml.safe_dump(cfg))
        out = snakemake(work, f"{TINY_RESULTS}/data/wine/normalized.parquet", "--configfile", "url.yaml")
        assert out.returncode != 0
        assert "ConfigError" not in out.stderr, out.stderr[-2000:]
        log = (work / TINY_RESULTS / "logs" / "prepare_dataset" / "wine.log").read_text()
        assert "sha256" in log.lower()
        assert not (work / TINY_RESULTS / "data" / "wine" / "normalized.parquet").exists()
        assert not [p for p in (work / TINY_RESULTS).rglob("*") if ".tmp-" in p.name]
    finally:
        server.shutdown()
        server.server_close()


def test_report_has_every_figure_and_table_with_caption(tiny_run, tmp_path):
    report = tmp_path / "report.html"
    out = snakemake(tiny_run["work"], "--configfile", TINY, "--report", str(report))
    assert out.returncode == 0, out.stderr[-2000:]
    html = report.read_text()
    for name in (
        "fig2.png",
        "fig2_diabetes.png",
        "fig2_wine.png",
        "fig3_paper.png",
        "fig3_sound.png",
        "frontier_sound.png",
        "summary.csv",
    ):
        assert name in html, f"{name} missing from the report"
    assert html.count("Config hash") >= 5
    assert "for dataset <strong>wine</strong>" in html


def test_a_path_of_another_results_dir_gets_a_hint(pristine_copy):
    """Asking the tiny config for a default-run path (results/ instead of results-tiny/) says why, before any job."""
    out = snakemake(pristine_copy, "-n", "results/common/summary.csv", "--configfile", TINY)
    text = out.stdout + out.stderr
    assert out.returncode != 0
    assert "it writes to results-tiny/ (results_dir). Ask for results-tiny/common/summary.csv" in text, text[-1500:]
    assert not (pristine_copy / TINY_RESULTS).exists()


@pytest.fixture(scope="module")
def pristine_copy(tmp_path_factory):
    return copy_repo(tmp_path_factory.mktemp("bad-configs"))


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda c: c.__setitem__("epsilon", [5]), "unknown key `epsilon` (did you mean `epsilons`?)"),
        (lambda c: c["delta_limits"].__setitem__("wien", [0.1, 0.1]), "delta_limits.wien: unknown dataset"),
        (lambda c: c.__setitem__("epsilons", [5, 5.0000001]), "print alike"),
        (lambda c: c.setdefault("network", {}).__setitem__("c", 0), "network.c`: 0 is less than the minimum of 1"),
        (lambda c: c.setdefault("partition", {}).__setitem__("m", 1), "partition.m`: 1 is less than the minimum"),
        (lambda c: c["dataset_options"]["wine"].__setitem__("n", 50), "dataset_options.wine.n: does nothing"),
        (
            lambda c: c["methods"]["ddppm"].__setitem__("threat_models", ["paper", "typo"]),
            "'typo' is not defined under `threat_models`",
        ),
        (
            lambda c: c["methods"].__setitem__("ddppm_workshop", {"budget": {"eps_final_share": 0.5}}),
            "`workshop.method_options.ddppm_workshop` and `workshop.budget`",
        ),
        (
            lambda c: c["montecarlo"].__setitem__("methods", ["ddppm_workshop", "ldp"]),
            "montecarlo.methods: 'ddppm_workshop' is calibrated but has no rule file",
        ),
        (lambda c: c.setdefault("common", {}).__setitem__("delta", 0.05), "common.delta = 0.05 is not below 1/n"),
        (
            lambda c: c.setdefault("workshop", {}).__setitem__("budget", {"eps_final_share": 1.5}),
            "workshop.budget.eps_final_share",
        ),
        (
            lambda c: c.setdefault("workshop", {}).__setitem__("delta_levels", {"breaks": [5], "levels": [0.2]}),
            "workshop.delta_levels: 1 breaks need 2 levels",
        ),
    ],
)
def test_bad_config_fails_the_dry_run_before_any_job(pristine_copy, edit, message):
    cfg = yaml.safe_load((pristine_copy / TINY).read_text())
    cfg.setdefault("dataset_options", {}).setdefault("wine", {})
    edit(cfg)
    (pristine_copy / "bad.yaml").write_text(yaml.safe_dump(cfg))
    out = snakemake(pristine_copy, "--configfile", "bad.yaml", "-n")
    text = out.stdout + out.stderr
    assert out.returncode != 0
    assert message in text, text[-1500:]
    assert 'File "' not in text and "Traceback" not in text, "the message alone, no traceback: " + text[-1500:]
    assert not (pristine_copy / TINY_RESULTS).exists()
