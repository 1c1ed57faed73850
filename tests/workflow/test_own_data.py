"""End to end: the user's own CSV as a data set of the common task, by one config entry (README, "Your own data").

A copy of the repository gets a small CSV (300 rows, 6 features and an id column) at a relative path and a copy of
the tiny config with ``dataset_options.mine`` (source file, path, public bounds) and ``mine`` in
``common.datasets``: a dry run schedules its jobs; a real run of its preparation, its common-task runs (standard
setting, from the raw records) and the clipping table records the file's sha256 and its clipping; editing the file
then reruns exactly the jobs that read it and their dependents, and a bad entry stops before any job.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from tests.conftest import TINY, TINY_RESULTS, copy_repo, snakemake

pytestmark = pytest.mark.slow

ENTRY = {
    "source": "file",
    "path": "data/mine.csv",
    "drop_columns": ["id"],
    "public_bounds": {"kind": "declared", "source": "test: unit normals scaled by at most 3", "all_features": [-8, 8]},
}
TARGETS = (
    f"{TINY_RESULTS}/common/runs/standard/mine.parquet",
    f"{TINY_RESULTS}/data/wine/normalized.parquet",
    f"{TINY_RESULTS}/common/clipping.csv",
)


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    work = copy_repo(tmp_path_factory.mktemp("own-data"))
    (work / "data").mkdir()
    X = np.random.default_rng(0).normal(size=(300, 6)) * [3, 2, 1, 1, 0.5, 0.5]
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(6)]).assign(id=np.arange(300))
    frame.to_csv(work / "data" / "mine.csv", index=False)
    config = yaml.safe_load((work / TINY).read_text())
    config.setdefault("dataset_options", {})["mine"] = ENTRY
    config["common"]["datasets"] = ["wine", "digits", "mine"]
    (work / "mine.yaml").write_text(yaml.safe_dump(config))
    return work


def _planned(work, *args: str) -> set[tuple[str, str]]:
    """(rule, wildcards) of every job a dry run plans."""
    out = snakemake(work, *args, "--configfile", "mine.yaml", "-n")
    assert out.returncode == 0, out.stderr[-2000:]
    jobs, rule = set(), None
    for line in (out.stdout + out.stderr).splitlines():
        if line.startswith(("rule ", "localrule ")):
            rule = line.split()[1].rstrip(":")
            jobs.add((rule, ""))
        elif rule and line.strip().startswith("wildcards:"):
            jobs.discard((rule, ""))
            jobs.add((rule, line.strip().removeprefix("wildcards: ")))
    return jobs


def test_a_user_file_in_common_datasets_schedules_its_jobs(work) -> None:
    jobs = _planned(work)
    for rule, wildcards in [("prepare_dataset", "dataset=mine"), ("partition", "dataset=mine"),
                            ("common_runs", "setting=standard, dataset=mine"), ("common_figure", "dataset=mine"),
                            ("common_clipping", ""), ("common_summary", "")]:  # fmt: skip
        assert (rule, wildcards) in jobs, (rule, wildcards)


def test_a_bad_entry_stops_before_any_job(work) -> None:
    config = yaml.safe_load((work / "mine.yaml").read_text())
    config["dataset_options"]["mine"] = {k: v for k, v in ENTRY.items() if k != "public_bounds"}
    (work / "bad.yaml").write_text(yaml.safe_dump(config))
    out = snakemake(work, "--configfile", "bad.yaml", "-n")
    text = out.stdout + out.stderr
    assert out.returncode != 0 and "dataset_options.mine.public_bounds: the file 'data/mine.csv'" in text, text[-1500:]
    assert "Traceback" not in text and not (work / TINY_RESULTS).exists()
    config["common"]["datasets"] = ["wine", "yours"]
    (work / "bad.yaml").write_text(yaml.safe_dump(config))
    out = snakemake(work, "--configfile", "bad.yaml", "-n")
    text = out.stdout + out.stderr
    assert "common.datasets: 'yours': unknown dataset" in text and "`source: file`" in text, text[-1500:]


def test_a_tiny_run_on_the_file_and_an_edit_reruns_exactly_what_reads_it(work) -> None:
    out = snakemake(work, *TARGETS, "--configfile", "mine.yaml")
    assert out.returncode == 0, out.stderr[-3000:]
    path = work / "data" / "mine.csv"
    meta = json.loads(pq.read_schema(work / TINY_RESULTS / "data" / "mine" / "normalized.parquet").metadata[b"ddppm"])
    assert meta["dataset"]["file_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert meta["dataset"]["shape"] == [300, 6]
    runs = pd.read_parquet(work / TINY_RESULTS / "common" / "runs" / "standard" / "mine.parquet")
    assert set(runs["scope"]) == {"raw_records"} and runs["error"].between(0, 1).all()
    clipping = pd.read_csv(work / TINY_RESULTS / "common" / "clipping.csv").set_index("dataset")
    assert clipping.loc["mine", "d"] == 6 and clipping.loc["mine", "bounds_kind"] == "declared"
    assert 0 < clipping.loc["mine", "values_clipped"] < 0.01  # values beyond ±8 (2.7 σ of the widest feature)
    assert _planned(work, *TARGETS) == set()
    lines = path.read_text().splitlines()
    lines[1] = "0.5," + lines[1].split(",", 1)[1]
    path.write_text("\n".join(lines) + "\n")
    readers = {("prepare_dataset", "dataset=mine"), ("common_runs", "setting=standard, dataset=mine"),
               ("common_clipping", "")}  # fmt: skip
    assert _planned(work, *TARGETS) == readers | {("partition", "dataset=mine")}  # and only their dependents


def test_a_small_set_of_yours_runs_alone_and_its_findings_match_its_table(work) -> None:
    """As a new user would (README, "Your own data"): one file of 20 rows and 3 columns (scikit-learn's linnerud
    shape) as the only data set of the tiny config's common task. The dry run says what it skips and what so few
    rows support, the run writes the set's own answer, and its findings say what its table says per trust level
    (no method is recommended where the table says none beats chance)."""
    rows = np.random.default_rng(3).uniform([0, 0, 0], [20, 250, 250], (20, 3)).round()
    pd.DataFrame(rows, columns=["chins", "situps", "jumps"]).to_csv(work / "data" / "few.csv", index=False)
    config = yaml.safe_load((work / TINY).read_text())
    config.setdefault("dataset_options", {})["few"] = {"source": "file", "path": "data/few.csv", "public_bounds": {
        "kind": "declared", "source": "counts of exercises in a test", "features": [[0, 40], [0, 400], [0, 400]]}}
    config["common"]["datasets"] = ["few"]
    (work / "few.yaml").write_text(yaml.safe_dump(config))
    dry = snakemake(work, "common_task", "--configfile", "few.yaml", "-n")
    notes = dry.stdout + dry.stderr
    assert dry.returncode == 0, notes[-2000:]
    assert "`journal_delta_limits` is skipped" in notes and "few has only n = 20 rows" in notes
    done = snakemake(work, "common_task", "--configfile", "few.yaml")
    assert done.returncode == 0, done.stderr[-3000:]
    folder = work / TINY_RESULTS / "common" / "datasets" / "few"
    answer = (folder / "answer.md").read_text().splitlines()[2]
    findings = (folder / "findings.txt").read_text()
    cells = [c.strip() for c in answer.split("|")[2:5]]
    words = ("with no trusted party", "with secure aggregation", "with a trusted curator")
    for cell, trust in zip(cells, words, strict=True):
        sentence = findings.split(trust, 1)[1].split(";")[0]
        if cell.startswith("no method beats chance"):
            assert sentence.startswith(" no method beats chance"), (cell, sentence)
        elif cell.startswith("tie:"):
            assert "tied within noise" in sentence, (cell, sentence)
        else:
            assert sentence.startswith(f" use {cell.split('`')[1]}"), (cell, sentence)
    assert "Where to look" in done.stdout + done.stderr and f"{folder}/answer.md".endswith("few/answer.md")
