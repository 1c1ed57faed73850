"""Time a whole reproduction from scratch and record it: the one source of the run times the docs quote.

    python benchmarks/bench_pipeline.py tiny        # tests/config/tiny.yaml, in a fresh copy of the repository
    python benchmarks/bench_pipeline.py default     # the default run (config.yaml), in a fresh copy
    python benchmarks/bench_pipeline.py default --workdir .   # in this checkout (its results/ must not exist)
    python benchmarks/bench_pipeline.py default --baseline HEAD~1   # then that commit, right after, the same way

Time only compares within one session: on the 2-core virtual machine of 2026-11-28 the same commit took 10 min
29 s and, four hours later, 11 min 59 s (two concurrent jobs slow each other by a varying amount). ``--baseline
REV`` therefore times the commit ``REV`` (its files as ``git archive`` gives them) right after the working copy,
and records it beside it (``baseline``), so a speed change is read as the difference of two runs of one hour.

It prints the wall time, the number of jobs and the cores, and writes them to benchmarks/timings.yaml (with the
date, the commit and the machine's core count), with what explains the wall time, read from Snakemake's log of
the run: the summed job time (each job from its start to its finish line, 1 s resolution), the summed start-up
(per job, the start of a fresh interpreter running its script's top-level imports, benchmarks/bench_startup.py,
measured once per script after the run) and the ten rules with the most summed job time (jobs, seconds).
``python -m ddppm.pipeline.readme`` then writes the sentences the README and docs/pipeline.md show from that file,
and ``--check`` fails when they disagree with it.
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

from ddppm.testing import copy_checkout, link_peers_environment

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_startup, beside this file

ROOT = Path(__file__).resolve().parents[1]
TIMINGS = ROOT / "benchmarks" / "timings.yaml"
CONFIGS = {"tiny": ["--configfile", "tests/config/tiny.yaml"], "default": []}
RESULTS = {"tiny": "results-tiny", "default": "results"}


STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
RULE = re.compile(r"^(?:rule|checkpoint) (\w+):", re.MULTILINE)
SCRIPT = re.compile(r"^    script:\s*\n\s*\"([^\"]+)\"", re.MULTILINE)


def job_seconds(log: str) -> list[tuple[str, float]]:
    """(rule, seconds) of every job of a Snakemake log: from the time stamp above its ``rule``/``localrule`` line
    to the one above its ``Finished jobid`` line."""
    now, started, pending, jobs = None, {}, None, []
    for line in log.splitlines():
        if match := STAMP.match(line.strip()):
            now = datetime.datetime.strptime(match.group(1), "%a %b %d %H:%M:%S %Y")
        elif line.startswith(("rule ", "localrule ")) and line.rstrip().endswith(":"):
            pending = (line.split()[1].rstrip(":"), now)
        elif pending and line.strip().startswith("jobid:"):
            started[line.split(":")[1].strip()] = pending
            pending = None
        elif match := re.match(r"Finished jobid: (\d+) \(Rule: (\w+)\)", line.strip()):
            rule, start = started.pop(match.group(1), (match.group(2), now))
            jobs.append((rule, (now - start).total_seconds() if now and start else 0.0))
    return jobs


def rule_scripts(workdir: Path) -> dict[str, Path]:
    """The script each rule runs (``script:``), from the rule files."""
    found = {}
    for path in [workdir / "Snakefile", *sorted((workdir / "workflow" / "rules").rglob("*.smk"))]:
        text = path.read_text(encoding="utf-8")
        heads = list(RULE.finditer(text))
        for head, following in zip(heads, [*heads[1:], None], strict=False):
            script = SCRIPT.search(text, head.end(), following.start() if following else len(text))
            if script:
                found[head.group(1)] = (path.parent / script.group(1)).resolve()
    return found


def explained(log: str, workdir: Path) -> dict[str, object]:
    """Summed job time, summed start-up and the ten costliest rules of a run's log."""
    from bench_startup import median_times, top_level_imports

    jobs = job_seconds(log)
    per_rule: dict[str, list[float]] = {}
    for rule, seconds in jobs:
        per_rule.setdefault(rule, []).append(seconds)
    scripts = rule_scripts(workdir)
    starts = {}
    for rule in per_rule:
        if rule in scripts and scripts[rule].is_file():
            code = "; ".join(top_level_imports(scripts[rule])) or "pass"
            starts[rule] = median_times(code, 3)[0]
    costliest = sorted(per_rule.items(), key=lambda item: -sum(item[1]))[:10]
    return {
        "summed_job_seconds": round(sum(s for _, s in jobs), 1),
        "summed_startup_seconds": round(sum(starts.get(r, 0.0) * len(s) for r, s in per_rule.items()), 1),
        "costliest_rules": [{"rule": rule, "jobs": len(s), "seconds": round(sum(s), 1)} for rule, s in costliest],
    }


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
        **explained(proc.stdout + proc.stderr, workdir),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", choices=sorted(CONFIGS))
    parser.add_argument("--workdir", type=Path, help="run here instead of a fresh copy of the repository")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--baseline", metavar="REV", help="then time this commit the same way, right after")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        workdir = args.workdir.resolve() if args.workdir else copy_checkout(ROOT, Path(scratch))
        record = run(args.config, workdir, args.cores)
    if args.baseline:
        record["baseline"] = baseline(args.config, args.baseline, args.cores)
    timings = yaml.safe_load(TIMINGS.read_text()) if TIMINGS.exists() else {}
    timings[args.config] = record
    TIMINGS.write_text(yaml.safe_dump(timings, sort_keys=True), encoding="utf-8")
    minutes, seconds = divmod(record["wall_seconds"], 60)
    print(f"{args.config}: {int(minutes)} min {seconds:.0f} s wall, {record['jobs']} jobs, {args.cores} cores")
    print(f"summed job time {record['summed_job_seconds']} s, of which start-up ~{record['summed_startup_seconds']} s")
    for cost in record["costliest_rules"]:
        print(f"  {cost['rule']:32s} {cost['jobs']:4d} jobs {cost['seconds']:8.1f} s")
    if "baseline" in record:
        base = record["baseline"]
        summed = base["summed_job_seconds"]
        print(f"baseline {base['commit']} (timed right after): {base['wall_seconds']} s wall, job time {summed} s")


def baseline(config: str, rev: str, cores: int) -> dict[str, object]:
    """Time the commit ``rev`` as :func:`run` timed the working copy: its tracked files (``git archive``, what a
    fresh clone has) in a scratch folder, with the peers' environment linked as :func:`copy_checkout` does."""
    with tempfile.TemporaryDirectory() as scratch:
        commit = export_commit(rev, Path(scratch))
        record = run(config, Path(scratch), cores)
    return {"commit": commit, **{key: record[key] for key in ("wall_seconds", "jobs", "summed_job_seconds")}}


def export_commit(rev: str, dest: Path, root: Path = ROOT) -> str:
    """The tracked files of commit ``rev`` of ``root`` written to ``dest`` (``git archive``), the peers'
    environment linked in; returns the commit's short hash."""
    commit = subprocess.run(["git", "rev-parse", "--short", rev], cwd=root, check=True, capture_output=True, text=True)
    archive = subprocess.run(["git", "archive", rev], cwd=root, check=True, capture_output=True).stdout
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    link_peers_environment(root, dest)
    return commit.stdout.strip()


if __name__ == "__main__":
    main()
