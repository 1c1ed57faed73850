"""Are two runs' tables the same? Every Parquet and CSV file under two results directories, compared exactly.

Used to check that a speed change moves no number (issue 49): run the default (or tiny) config before and after
into two directories, then ``python benchmarks/compare_results.py OLD NEW``. Excepted, as the speed issue allows:
columns that time something (their names say so: ``seconds``, ``_s``, ``time``), the peers' rows (their fits
stop on a wall-clock budget), the provenance table (it names commits), and the Monte-Carlo runs' file layout (a
job per (dataset, method) since issue 49; the runs themselves are compared, row for row, after concatenation).
Exit status 1 if anything differs.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pandas as pd

TIMING = re.compile(r"(seconds|_s$|^s$|time|duration|elapsed)", re.IGNORECASE)
SKIPPED = re.compile(r"(^|/)(benchmarks|logs|report)/|provenance|peers")
RUN_ORDER = ["dataset", "method", "eps", "threat_model", "run"]


def read(path: Path) -> pd.DataFrame:
    return pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)


def comparable(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.drop(columns=[c for c in frame.columns if TIMING.search(str(c))])
    for column in ("method", "library"):
        if column in frame.columns:
            frame = frame[~frame[column].astype(str).str.contains("diffprivlib|opendp", regex=True)]
    return frame.reset_index(drop=True)


def tables(root: Path) -> dict[str, Path]:
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.suffix in (".parquet", ".csv") and not SKIPPED.search(rel) and not rel.startswith("runs/"):
            found[rel] = path
    return found


def runs(root: Path) -> pd.DataFrame:
    """Every Monte-Carlo run, whatever the file layout (a file per ε before issue 49, per method after)."""
    files = sorted((root / "runs").rglob("*.parquet"))
    frame = pd.concat([pd.read_parquet(p) for p in files if "chunk~" not in p.name], ignore_index=True)
    return frame.sort_values(RUN_ORDER, kind="stable").reset_index(drop=True)


def compare(old: Path, new: Path) -> list[str]:
    problems = []
    before, after = tables(old), tables(new)
    for rel in sorted(set(before) ^ set(after)):
        problems.append(f"{rel}: only in {'the old' if rel in before else 'the new'} run")
    for rel in sorted(set(before) & set(after)):
        try:
            pd.testing.assert_frame_equal(comparable(read(before[rel])), comparable(read(after[rel])), check_exact=True)
        except AssertionError as exc:
            problems.append(f"{rel}: {str(exc).splitlines()[0:4]}")
    if (old / "runs").is_dir() and (new / "runs").is_dir():
        try:
            pd.testing.assert_frame_equal(runs(old), runs(new), check_exact=True)
        except AssertionError as exc:
            problems.append(f"runs/: {str(exc).splitlines()[0:4]}")
    print(f"compared {len(set(before) & set(after))} tables and the Monte-Carlo runs: {len(problems)} differ")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    args = parser.parse_args(argv)
    problems = compare(args.old, args.new)
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
