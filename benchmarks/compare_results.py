"""Are two runs' tables the same? Every Parquet and CSV file under two results directories, compared exactly.

Used to check that a speed change moves no number (issue 49): run the default (or tiny) config before and after
into two directories, then ``python benchmarks/compare_results.py OLD NEW``. Excepted, as the speed issue allows:
columns that time something (their names say so: ``seconds``, ``_s``, ``time``), the peers' rows (their fits
stop on a wall-clock budget), the provenance table (it names commits), and the Monte-Carlo runs' file layout (a
job per (dataset, method) since issue 49; the runs themselves are compared, row for row, after concatenation).
Exit status 1 if anything differs.

``--rtol 1e-8`` (issue 62: "tables may move in their last bits") compares the numeric columns to that relative
tolerance instead (``|new − old| ≤ rtol·|old|``; a value that was 0 must stay 0), the others exactly, and prints
the largest relative change of each table that moved at all: the tolerance report of a run after an exact-arithmetic
shortcut. Exit status 1 if any table moves beyond it or changes shape or a non-numeric value.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np
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


def largest_change(old: pd.DataFrame, new: pd.DataFrame) -> float:
    """The largest relative change ``|new − old|/|old|`` over the numeric cells (inf where a 0 moved); the frames
    must have the same shape, columns and non-numeric values (else ``AssertionError``)."""
    numeric = [c for c in old.columns if pd.api.types.is_float_dtype(old[c])]
    pd.testing.assert_frame_equal(old.drop(columns=numeric), new.drop(columns=numeric), check_exact=True)
    pd.testing.assert_index_equal(old.columns, new.columns)
    largest = 0.0
    for column in numeric:
        a, b = old[column].to_numpy(float), new[column].to_numpy(float)
        same = (a == b) | (np.isnan(a) & np.isnan(b))
        if same.all():
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            change = np.where(same, 0.0, np.abs(b - a) / np.abs(a))
        largest = max(largest, float(np.nanmax(np.where(np.isnan(change), np.inf, change))))
    return largest


def _check(rel: str, old: pd.DataFrame, new: pd.DataFrame, rtol: float | None, report: dict[str, float]) -> str | None:
    """One table's problem (None: equal, or within ``rtol``; its largest change recorded in ``report``)."""
    try:
        if rtol is None:
            pd.testing.assert_frame_equal(old, new, check_exact=True)
            return None
        change = largest_change(old, new)
    except AssertionError as exc:
        return f"{rel}: {str(exc).splitlines()[0:4]}"
    if change > 0:
        report[rel] = change
    return None if change <= rtol else f"{rel}: a value moved by {change:.3g} relative, beyond {rtol:g}"


def compare(old: Path, new: Path, rtol: float | None = None) -> list[str]:
    """Every table of ``old`` against ``new`` (module docstring): the problems, one line each."""
    problems, report = [], {}
    before, after = tables(old), tables(new)
    for rel in sorted(set(before) ^ set(after)):
        problems.append(f"{rel}: only in {'the old' if rel in before else 'the new'} run")
    for rel in sorted(set(before) & set(after)):
        problem = _check(rel, comparable(read(before[rel])), comparable(read(after[rel])), rtol, report)
        problems += [problem] if problem else []
    if (old / "runs").is_dir() and (new / "runs").is_dir():
        problem = _check("runs/", runs(old), runs(new), rtol, report)
        problems += [problem] if problem else []
    print(f"compared {len(set(before) & set(after))} tables and the Monte-Carlo runs: {len(problems)} differ"
          + (f" beyond {rtol:g} relative" if rtol is not None else ""))  # fmt: skip
    if rtol is not None:
        print(f"{len(report)} moved at all; the largest relative change of each:")
        for rel, change in sorted(report.items(), key=lambda item: -item[1]):
            print(f"  {change:.3g}  {rel}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--rtol", type=float, help="relative tolerance of numeric values (default: exact)")
    args = parser.parse_args(argv)
    problems = compare(args.old, args.new, args.rtol)
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
