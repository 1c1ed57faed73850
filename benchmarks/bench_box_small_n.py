"""The private box at small n (docs/bounds.md, "Small n: the box must not do harm"): the numbers of its tables.

    .venv/bin/python benchmarks/bench_box_small_n.py             # every table (about a minute on one core)
    .venv/bin/python benchmarks/bench_box_small_n.py --only scale

* ``widths``: the curator's private standardisation alone (the exact top-1 subspace of its rows against the
  standardised records', the bench's ``preprocessing_only_curator`` rows) at ε = 5, δ = 10⁻⁵, under each estimator,
  with the declared bounds widened ×1 to ×10, 40 runs over 10 draws: the bounds study's own draws
  (:func:`ddppm.common_task.raw_records.raw_records_runs`, common.seed 0), computed without the study's methods.
* ``small_n``: at the declared bounds, every bench data set with n ≤ 1,000 and every ε of the study's grid,
  range_shrinking against one_shot by the paired 95 % interval over the draws (the study's small-n finding).
* ``scale``: ``PrivatePCA(1, ε, 10⁻⁵, standardize=True, trust="central", method="analyze_gauss",
  noise="simulation")``'s ``scale_`` over each feature's standard deviation (of the records clipped to the declared
  bounds), seeds 0..39: the 5th and 95th percentiles, the least and most over the features.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd

from ddppm import PrivatePCA
from ddppm.common_task.preprocessing import PreprocessingPlan
from ddppm.common_task.raw_records import RawRecords, raw_records_runs
from ddppm.data import load_dataset
from ddppm.data.public_prep import public_bounds, widen_bounds
from ddppm.methods import get_method
from ddppm.studies.bounds import small_n_findings

DATASETS = ("diabetes", "breast_cancer", "wine", "ami_synthetic", "digits")
WIDTHS = (1.0, 1.5, 2.0, 4.0, 10.0)
EPSILONS = (1.0, 2.0, 5.0, 10.0)
OPTIONS = {"adjacency": "replace_one", "iterations": 3}


def preprocessing_runs(name: str, widths: tuple[float, ...], eps: tuple[float, ...]) -> pd.DataFrame:
    """The curator's preprocessing-only runs of one data set at each width and estimator (one curator, the study's
    seeds and draws; AnalyzeGauss is the one method run, as the rows need a method of the curator's party)."""
    X = np.asarray(load_dataset(name, source="default").matrix, float)
    declared = public_bounds(name, X.shape[1])
    frames = []
    for width in widths:
        records = RawRecords(X, (np.arange(len(X)),), np.ones((1, 1)), 1, widen_bounds(declared, width), "standardize")
        for estimator in ("range_shrinking", "one_shot"):
            runs = raw_records_runs(records, list(eps), [1e-5] * len(eps), [1], 40, 10, 0,
                                    PreprocessingPlan(estimator=estimator), OPTIONS, dataset=name,
                                    methods={"analyze_gauss": get_method("analyze_gauss")})  # fmt: skip
            runs = runs[runs["method"] == "preprocessing_only_curator"]
            frames.append(runs.assign(width=width, estimator=estimator, n=len(X)))
    return pd.concat(frames, ignore_index=True)


def widths_table() -> None:
    runs = pd.concat([preprocessing_runs(name, WIDTHS, (5.0,)) for name in DATASETS], ignore_index=True)
    means = runs.groupby(["estimator", "dataset", "width"])["error"].mean()
    for estimator in ("range_shrinking", "one_shot"):
        print(f"\n| `{estimator}`, ε = 5 | " + " | ".join(f"×{w:g}" for w in WIDTHS) + " |")
        print("|---|" + "---|" * len(WIDTHS))
        for name in DATASETS:
            print(f"| {name} | " + " | ".join(f"{means[estimator, name, w]:.3f}" for w in WIDTHS) + " |")


def small_n_table() -> None:
    runs = pd.concat([preprocessing_runs(name, (1.0,), EPSILONS) for name in ("diabetes", "breast_cancer", "wine")],
                     ignore_index=True)  # fmt: skip
    section = {"estimators": ["range_shrinking", "one_shot"], "targets": {"small_n": 1000}}
    print("\n" + "\n".join(small_n_findings(runs, section)))


def scale_table() -> None:
    for name in ("diabetes", "breast_cancer", "wine"):
        X = np.asarray(load_dataset(name, source="default").matrix, float)
        bounds = public_bounds(name, X.shape[1])
        entry = {"kind": bounds.kind, "source": bounds.source,
                 "features": np.column_stack([bounds.lower, bounds.upper]).tolist()}  # fmt: skip
        truth = np.clip(X, bounds.lower, bounds.upper).std(axis=0)
        for eps in EPSILONS:
            ratios = []
            for seed in range(40):
                model = PrivatePCA(1, epsilon=eps, delta=1e-5, bounds=entry, standardize=True, trust="central",
                                   method="analyze_gauss", noise="simulation", random_state=seed)  # fmt: skip
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # ClippingWarning: a few records lie outside the bounds
                    ratios.append(model.fit(X).scale_ / truth)
            ratios = np.array(ratios)
            inside = ((ratios >= 1 / 3) & (ratios <= 3)).mean(axis=0).min()
            low, high = np.percentile(ratios, 5, axis=0).min(), np.percentile(ratios, 95, axis=0).max()
            print(
                f"{name} (n = {len(X)}), ε = {eps:g}: scale_/sd 5th percentile {low:.2f}, 95th {high:.2f} "
                f"(least and most over the features); worst feature in [1/3, 3] in {inside:.0%} of seeds"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["widths", "small_n", "scale"], default=None)
    args = parser.parse_args()
    tables = {"widths": widths_table, "small_n": small_n_table, "scale": scale_table}
    for key, table in tables.items():
        if args.only in (None, key):
            table()


if __name__ == "__main__":
    main()
