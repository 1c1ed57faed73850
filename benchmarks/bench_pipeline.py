"""Time a whole reproduction from scratch and record it: the one source of the run times the docs quote.

    python benchmarks/bench_pipeline.py tiny        # tests/config/tiny.yaml, in a fresh copy of the repository
    python benchmarks/bench_pipeline.py default     # the default run (config.yaml), in a fresh copy
    python benchmarks/bench_pipeline.py default --workdir .   # in this checkout (its results/ must not exist)

It prints the wall time, the number of jobs and the cores, and writes them to benchmarks/timings.yaml (with the
date, the commit and the machine's core count). ``python -m ddppm.pipeline.readme`` then writes the sentence the
README and docs/pipeline.md show from that file, and ``--check`` fails when they disagree with it.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from ddppm.testing import copy_checkout

ROOT = Path(__file__).resolve().parents[1]
TIMINGS = ROOT / "benchmarks" / "timings.yaml"
CONFIGS = {"tiny": ["--configfile", "tests/config/tiny.yaml"], "default": []}
RESULTS = {"tiny": "results-tiny", "default": "results"}


def run(config: str, workdir: Path, cores: int) -> dict[str, object]:
    """Run the configuration from scratch in ``workdir`` and return what the record keeps."""
    if (workdir / RESULTS[config]).exists():
        sys.exit(f"{workdir / RESULTS[config]} exists: a timing is from scratch only (remove it or use a copy)")
    snakemake = Path(sys.executable).with_name("snakemake")
    env = {**os.environ, "PYTHONPATH": f"{workdir / 'src'}:{os.environ.get('PYTHONPATH', '')}"}
    # As requirements/install.sh does for ./run.sh: the package compiled once, not in every job's process.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(workdir / "src" / "ddppm")], check=True,
                   capture_output=True)  # fmt: skip
    start = time.perf_counter()
    proc = subprocess.run(
        [str(snakemake), "--cores", str(cores), *CONFIGS[config]], cwd=workdir, env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"the {config} run failed:\n{proc.stderr[-3000:]}")
    steps = re.findall(r"(\d+) of (\d+) steps \(100%\) done", proc.stdout + proc.stderr)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return {
        "wall_seconds": round(wall, 1),
        "jobs": int(steps[-1][1]) if steps else None,
        "cores": cores,
        "machine_cores": os.cpu_count(),
        "date": datetime.date.today().isoformat(),
        "commit": commit.stdout.strip() or None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", choices=sorted(CONFIGS))
    parser.add_argument("--workdir", type=Path, help="run here instead of a fresh copy of the repository")
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        workdir = args.workdir.resolve() if args.workdir else copy_checkout(ROOT, Path(scratch))
        record = run(args.config, workdir, args.cores)
    timings = yaml.safe_load(TIMINGS.read_text()) if TIMINGS.exists() else {}
    timings[args.config] = record
    TIMINGS.write_text(yaml.safe_dump(timings, sort_keys=True), encoding="utf-8")
    minutes, seconds = divmod(record["wall_seconds"], 60)
    print(f"{args.config}: {int(minutes)} min {seconds:.0f} s wall, {record['jobs']} jobs, {args.cores} cores")


if __name__ == "__main__":
    main()
