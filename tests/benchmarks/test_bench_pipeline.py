"""The timing record's explanation: job times read from a Snakemake log, and each rule's script."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_pipeline import export_commit, job_seconds, rule_scripts  # noqa: E402

LOG = """Select jobs to execute...
[Fri Nov 27 21:52:28 2026]
localrule partition:
    output: results/data/wine/partition.parquet
    jobid: 5
[Fri Nov 27 21:52:30 2026]
rule montecarlo:
    output: results/runs/wine/ldp.parquet
    jobid: 7
[Fri Nov 27 21:52:31 2026]
Finished jobid: 5 (Rule: partition)
1 of 3 steps (33%) done
[Fri Nov 27 21:53:02 2026]
Finished jobid: 7 (Rule: montecarlo)
2 of 3 steps (67%) done
[Fri Nov 27 21:53:02 2026]
localrule all:
    jobid: 0
[Fri Nov 27 21:53:02 2026]
Finished jobid: 0 (Rule: all)
"""


def test_job_times_run_from_each_jobs_start_to_its_finish_line():
    """Interleaved jobs: each is timed from the stamp above its rule line to the stamp above its finish line."""
    assert sorted(job_seconds(LOG)) == [("all", 0.0), ("montecarlo", 32.0), ("partition", 3.0)]


def test_every_rule_with_a_script_is_found():
    scripts = rule_scripts(REPO)
    assert scripts["montecarlo"].name == "montecarlo.py" and scripts["partition"].name == "partition.py"
    assert "all" not in scripts  # no script: nothing to start
    assert all(path.is_file() for path in scripts.values()), [r for r, p in scripts.items() if not p.is_file()]


def test_a_baseline_commit_is_exported_as_a_fresh_clone_has_it(tmp_path: Path) -> None:
    """``--baseline REV`` times the commit's tracked files: exactly ``git ls-tree`` of it, with the peers'
    environment linked where the checkout has one."""
    import subprocess

    commit = export_commit("HEAD", tmp_path / "base", root=REPO)
    tracked = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", "HEAD"], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout.split()
    written = sorted(p.relative_to(tmp_path / "base").as_posix() for p in (tmp_path / "base").rglob("*")
                     if p.is_file() and ".venv-peers" not in p.parts)  # fmt: skip
    assert written == sorted(tracked)
    assert commit == subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout.strip()
    assert (tmp_path / "base" / ".venv-peers").is_symlink() == (REPO / ".venv-peers").exists()


def test_the_readme_names_the_baseline_of_the_same_hour() -> None:
    from ddppm.pipeline.readme import timings_block

    record = {"wall_seconds": 708.0, "jobs": 218, "cores": 2, "date": "2026-11-28", "commit": "abc1234",
              "summed_job_seconds": 1402.0, "summed_startup_seconds": 101.7,
              "costliest_rules": [{"rule": "ddppm_calibrate", "jobs": 12, "seconds": 270.0}],
              "baseline": {"commit": "def5678", "wall_seconds": 719.0, "jobs": 218,
                           "summed_job_seconds": 1424.0}}  # fmt: skip
    text = timings_block({"default": record})
    assert "took **11 min 48 s**" in text
    assert "Commit def5678, timed right after on the same machine, took 11 min 59 s (jobs 23 min 44 s)" in text
    assert "Commit" not in timings_block({"default": {k: v for k, v in record.items() if k != "baseline"}})
