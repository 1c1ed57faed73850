"""Kill anywhere, resume, identical (issue 63): the tiny configuration run to the end once without interruption, and
once killed with SIGKILL at ``--kills`` moments drawn over its length, each time resumed with
``--rerun-incomplete``; then every table of the two runs compared with ``compare_results.py``. They must be equal.

    .venv/bin/python benchmarks/chaos.py                         # 10 kills, seed 0, the tiny config
    .venv/bin/python benchmarks/chaos.py --kills 3 --seed 7 --keep /tmp/chaos

Each run works in its own copy of the checkout (``ddppm.testing.copy_checkout``). The reference run gives the run's
length L. The kill moments are ``--kills`` times drawn uniformly from (0, L) with ``--seed``, sorted: attempt i
runs Snakemake (in its own process group, as a user's terminal does) for the gap between moments i − 1 and i, then
SIGKILLs the whole group: the driver and every job it started, mid-write. After each kill the working-directory lock
is removed (``--unlock``: a killed Snakemake cannot) and the next attempt starts with ``--rerun-incomplete``. A kill
that finds the run already finished is recorded as not landed. The last attempt runs to the end.

It prints one line per kill (its moment, the tables finished by then, the jobs that were mid-write, which Snakemake's
``.snakemake/incomplete`` markers name and the resume reruns), then the comparison: tables compared and how many
differ, and exits with status 1 if any does. Exit 0 means every kill was survived with identical tables.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare_results import compare  # noqa: E402

from ddppm.testing import copy_checkout  # noqa: E402

SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def kill_moments(length: float, kills: int, seed: int) -> list[float]:
    """``kills`` moments drawn uniformly over (0, length), sorted (seeded: the same schedule for the same seed)."""
    return sorted(float(t) for t in np.random.default_rng(seed).uniform(0.0, length, kills))


def environment(work: Path) -> dict[str, str]:
    """A run in the copy ``work``: its own sources first, one BLAS thread per job (as the Snakefile sets)."""
    return {**os.environ, "PYTHONPATH": f"{work / 'src'}:{os.environ.get('PYTHONPATH', '')}",
            "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}  # fmt: skip


def start(work: Path, config: str, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([SNAKEMAKE, "--cores", "2", "--configfile", config, *extra], cwd=work,
                            env=environment(work), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip


def finished_tables(results: Path) -> int:
    return sum(1 for p in results.rglob("*") if p.suffix in (".parquet", ".csv"))


def incomplete(work: Path) -> int:
    """How many outputs Snakemake's markers name as mid-write (the jobs a resume reruns)."""
    markers = work / ".snakemake" / "incomplete"
    return sum(1 for p in markers.rglob("*") if p.is_file()) if markers.exists() else 0


def chaos(work: Path, config: str, results: Path, moments: list[float]) -> list[dict[str, float | int | bool]]:
    """Run with a SIGKILL at each moment (gaps between them), resuming after each; the last attempt runs to the end."""
    record, previous = [], 0.0
    for moment in moments:
        process = start(work, config, "--rerun-incomplete")
        try:
            process.wait(timeout=moment - previous)
            landed = False  # the run had finished before the kill
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            landed = True
        record.append({"moment_s": round(moment, 1), "landed": landed, "tables_done": finished_tables(results),
                       "mid_write": incomplete(work)})  # fmt: skip
        subprocess.run([SNAKEMAKE, "--configfile", config, "--unlock"], cwd=work, env=environment(work),
                       capture_output=True, check=True)  # fmt: skip
        previous = moment
        if not landed:
            break
    last = start(work, config, "--rerun-incomplete")
    if last.wait() != 0:
        raise RuntimeError(f"the resumed run failed (exit {last.returncode}); see {work}/.snakemake/log")
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="tests/config/tiny.yaml", help="the config both runs use")
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="work in this folder and keep both copies (default: a temporary one)")
    args = parser.parse_args(argv)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="ddppm-chaos-"))
    results_dir = yaml.safe_load((ROOT / args.config).read_text())["results_dir"]
    reference, chaotic = (copy_checkout(ROOT, folder / name) for name in ("reference", "chaos"))
    start_s = time.perf_counter()
    if start(reference, args.config).wait() != 0:
        print(f"the uninterrupted run failed; see {reference}/.snakemake/log", file=sys.stderr)
        return 1
    length = time.perf_counter() - start_s
    moments = kill_moments(length, args.kills, args.seed)
    print(f"uninterrupted run: {length:.0f} s; kill moments (seed {args.seed}): {[round(m, 1) for m in moments]}")
    start_s = time.perf_counter()
    record = chaos(chaotic, args.config, chaotic / results_dir, moments)
    for i, kill in enumerate(record, 1):
        print(f"  kill {i} at {kill['moment_s']} s: {'landed' if kill['landed'] else 'the run had finished'}, "
              f"{kill['tables_done']} tables written, {kill['mid_write']} outputs mid-write")
    problems = compare(reference / results_dir, chaotic / results_dir)
    landed = sum(k["landed"] for k in record)
    summary = {"kills": args.kills, "landed": landed, "seed": args.seed, "reference_s": round(length, 1),
               "chaos_s": round(time.perf_counter() - start_s, 1), "differences": len(problems)}  # fmt: skip
    print(json.dumps(summary))
    for line in problems:
        print(line)
    if args.keep is None:
        shutil.rmtree(folder, ignore_errors=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
