"""Which entries of the common task's summary moved between two runs by more than their intervals?

    python benchmarks/moved_entries.py OLD_RESULTS NEW_RESULTS [--out moved.csv]

Reads ``common/summary.csv`` of both results directories and keeps the (setting, data set, method, k, ε) entries
present in both whose mean errors differ by more than the larger of their two 95 % interval half-widths (an entry
with no interval, e.g. a single run, is compared exactly). Prints a count per setting and data set, the largest
moves, and writes them all to ``--out``. Used to say, when a change to shared code moves the bench, which numbers
moved and by how much (issue 60); the why is the change's note.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

KEY = ["setting", "dataset", "method", "k", "eps"]


def moved(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """The entries of both summaries whose mean error moved beyond the larger interval half-width."""
    both = old[[*KEY, "error_mean", "error_ci_lo", "error_ci_hi"]].merge(
        new[[*KEY, "error_mean", "error_ci_lo", "error_ci_hi"]], on=KEY, suffixes=("_old", "_new"))
    half = np.fmax((both["error_ci_hi_old"] - both["error_ci_lo_old"]) / 2,
                   (both["error_ci_hi_new"] - both["error_ci_lo_new"]) / 2)  # fmt: skip
    both["change"] = both["error_mean_new"] - both["error_mean_old"]
    out = both[np.abs(both["change"]) > np.nan_to_num(half, nan=0.0)]
    return out.assign(half_width=half[out.index]).sort_values("change", key=np.abs, ascending=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--out", type=Path, default=Path("moved.csv"))
    args = parser.parse_args()
    old, new = (pd.read_csv(folder / "common" / "summary.csv") for folder in (args.old, args.new))
    found = moved(old, new)
    print(f"{len(found)} of {len(old.merge(new[KEY], on=KEY))} shared entries moved beyond their intervals")
    print(found.groupby(["setting", "dataset"]).size().rename("moved").to_string())
    print(found.head(25)[[*KEY, "error_mean_old", "error_mean_new", "change", "half_width"]].to_string(index=False))
    found.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
