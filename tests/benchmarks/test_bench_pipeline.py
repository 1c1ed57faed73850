"""The timing record's explanation: job times read from a Snakemake log, and each rule's script."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_pipeline import job_seconds, rule_scripts  # noqa: E402

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
