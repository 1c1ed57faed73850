"""How long every rule script takes to start: the wall time of a fresh interpreter that runs the script's top-level
imports, i.e. a Snakemake job before its work (issue 49, "a cheap start").

    .venv/bin/python benchmarks/bench_startup.py                      # every script, target 0.5 s
    .venv/bin/python benchmarks/bench_startup.py --target 0.4 --repeat 5
    .venv/bin/python benchmarks/bench_startup.py experiment_step method_params --importtime

Every Snakemake job runs one script of ``workflow/scripts/`` in a new Python process, so what the script imports at
its top level is paid once per job (hundreds of jobs in a run, most of them small). For each script this collects the
``import`` statements of its module body (also inside a top-level ``try``; never those inside a function, a class, a
loop or a branch, which run as part of the work), runs them alone in a fresh ``python -c`` (the script's other code
needs the ``snakemake`` object, and is the job's work, not its start) with one BLAS thread, as a job has
(:data:`JOB_ENVIRONMENT`), and takes the median wall time of ``--repeat`` interpreters, after one untimed warm-up run
that writes the byte code. The interpreters' CPU time (user + system, median) is printed beside it: on a shared
machine it moves less than the wall time. The bare interpreter's start (``python -c pass``) is printed for reference;
it is part of every time. Not included: Snakemake's own preamble of a ``script:`` (which unpickles the job's
``snakemake`` object), and what a script imports at run time, such as the one method or experiment it looks up in a
registry.

It prints one line per script, slowest first, flags every script over ``--target`` seconds and exits with status 1
if any is. ``--importtime`` prints, for the named scripts, the slowest modules of ``python -X importtime``
(cumulative microseconds), to find what a start pays for. Timings depend on the machine and its load: quote the
machine with the numbers (benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import ast
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "workflow" / "scripts"
DEFAULT_TARGET = 0.5
"""Seconds a job may spend starting (interpreter and top-level imports) before its work."""
BLAS_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
JOB_ENVIRONMENT = {**os.environ, **{variable: os.environ.get(variable, "1") for variable in BLAS_VARIABLES}}
"""The environment a job starts in: one BLAS thread, as the Snakefile sets unless the caller chose (BLAS otherwise
starts a thread per core while numpy imports, which costs CPU time a job does not pay)."""


def top_level_imports(path: Path) -> list[str]:
    """The import statements a script runs before its own code: those of the module body, also in a top-level
    ``try`` (not in functions, classes, loops or branches: those run as part of the work), as source lines."""
    found: list[str] = []

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.Import | ast.ImportFrom):
                found.append(ast.unparse(node))
            elif isinstance(node, ast.Try):
                for block in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                    visit(block)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return found


def timed(code: str) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of a fresh interpreter that runs ``code`` and exits (it must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=JOB_ENVIRONMENT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"running {code!r} failed:\n{proc.stderr[-2000:]}")
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def median_times(code: str, repeat: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``repeat`` fresh interpreters, after one untimed warm-up (byte code written,
    files cached)."""
    timed(code)
    runs = [timed(code) for _ in range(repeat)]
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def slowest_modules(code: str, count: int) -> list[tuple[int, str]]:
    """The ``count`` modules with the largest cumulative import time (µs) when a fresh interpreter runs ``code``."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        cwd=ROOT,
        env=JOB_ENVIRONMENT,
        capture_output=True,
        text=True,
        check=True,
    )
    rows = []
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line and "cumulative" not in line:
            _, cumulative, name = line[len("import time:") :].split("|")
            rows.append((int(cumulative), name.rstrip()))
    return sorted(rows, reverse=True)[:count]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scripts", nargs="*", help="script names (default: every workflow/scripts/*.py)")
    parser.add_argument("--target", type=float, default=DEFAULT_TARGET, help="seconds (default %(default)s)")
    parser.add_argument("--repeat", type=int, default=3, help="fresh interpreters per script (median)")
    parser.add_argument("--importtime", action="store_true", help="also list each script's slowest imports")
    parser.add_argument("--top", type=int, default=12, help="modules listed with --importtime")
    args = parser.parse_args(argv)

    paths = sorted(SCRIPTS.glob("*.py"))
    if args.scripts:
        wanted = {Path(s).stem for s in args.scripts}
        unknown = wanted - {p.stem for p in paths}
        if unknown:
            parser.error(f"no such scripts in {SCRIPTS}: {sorted(unknown)}")
        paths = [p for p in paths if p.stem in wanted]

    bare, bare_cpu = median_times("pass", args.repeat)
    print(f"python {sys.version.split()[0]}, bare interpreter start {bare:.3f} s wall, {bare_cpu:.3f} s CPU "
          f"(median of {args.repeat})")  # fmt: skip
    times: dict[str, tuple[float, float]] = {}
    for path in paths:
        code = "\n".join(top_level_imports(path)) or "pass"
        times[path.stem] = median_times(code, args.repeat)
        if args.importtime:
            print(f"\n{path.name}: slowest imports (cumulative)")
            for micros, name in slowest_modules(code, args.top):
                print(f"  {micros / 1e6:7.3f} s  {name}")

    over = sorted(name for name, (seconds, _) in times.items() if seconds > args.target)
    width = max(len(name) for name in times)
    print(f"\n{'script':<{width}}  wall (s)  CPU (s)")
    for name, (seconds, cpu) in sorted(times.items(), key=lambda item: -item[1][0]):
        flag = f"  OVER the {args.target:g} s target" if seconds > args.target else ""
        print(f"{name:<{width}}  {seconds:8.3f}  {cpu:7.3f}{flag}")
    walls = [seconds for seconds, _ in times.values()]
    print(
        f"\n{len(times)} scripts: median {statistics.median(walls):.3f} s, slowest {max(walls):.3f} s wall; "
        f"{len(over)} over the {args.target:g} s target"
    )
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
