"""What the journal D-DP-PM's accountant costs as the agents m, the dimension d, the iterations T and the rows n grow.

One ``evaluate_delta`` (every observer, 7 ε, R_δ = 8 realisations) under each threat model, on the seeded spiked
rows (``ddppm.studies.tasks.spiked_rows``) split over m agents on a ring (c = 20), at Corollary 1's α, σ_q = 1/√n
and a constant effective noise η = 4.64 (as ``bench_threat_models.py``). One size moves at a time around the base
point; a call over ``--budget`` seconds stops that sweep (the table says where). For each threat model and size
the script prints the times and the exponent b of a least-squares fit ``seconds ≈ a · size^b`` over the points
that finished, and the projected time of one evaluation at m = 32, d = 50, T = 5 (the issue's target point)
from the fitted exponents (a product of per-size factors: a projection, not a measurement).

The floor (the parameter-free search every worst-neighbour search starts from, once per data set) is timed
apart and printed beside each point; it is not in ``seconds``. Run it as a Snakemake job runs (one BLAS thread:
``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1``); with two threads on a busy 2-core machine the small products of
the low-rank route slow down by an order of magnitude (measured).

Usage: ``.venv/bin/python benchmarks/bench_scaling.py [--models paper sound] [--budget 120] [--out scaling.csv]``
(``--table scaling.csv`` prints the fits of an earlier run again).
Not a test.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from ddppm.accounting.accountant import AccountantSettings, evaluate_delta
from ddppm.accounting.floor import cached_floor
from ddppm.accounting.iteration import DDPPMParams, NoiseSchedule
from ddppm.core.network import mixing_matrix
from ddppm.core.partition import partition_rows
from ddppm.core.problem import DistributedProblem
from ddppm.privacy.threat_models import BUILT_IN
from ddppm.studies.tasks import spiked_rows

EPS = np.array([1.0, 2.0, 5.0, 10.0, 20.0, 40.0, 100.0])
BASE = {"m": 4, "d": 10, "T": 2, "n": 400}
SWEEPS = {"m": [4, 8, 16, 32], "d": [5, 10, 20, 40], "T": [1, 2, 4, 8], "n": [200, 400, 800, 1600]}
TARGET = {"m": 32, "d": 50, "T": 5, "n": 400}


def problem_of(m: int, d: int, n: int, c: int = 20) -> DistributedProblem:
    """The spiked rows (n × d, seeded) over m agents on a ring."""
    X = spiked_rows(n, d, 0)
    W = mixing_matrix("ring", m) if m > 2 else mixing_matrix("complete", m)
    return DistributedProblem.from_partition(X, partition_rows(n, m, seed=0), W, c)


def one_evaluation(point: dict[str, int], model: str, eta: float) -> tuple[float, float, float]:
    """Seconds of one ``evaluate_delta`` at ``point`` under ``model``, its δ at ε = 5, and the seconds of the
    parameter-free floor its worst-neighbour search starts from (computed first and apart: once per data set and
    ε grid, shared by every evaluation of a calibration; 0 for a heuristic neighbour)."""
    problem = problem_of(point["m"], point["d"], point["n"])
    alpha, sigma_q = 1 / np.sqrt(problem.mu1 * problem.mu2), 1 / np.sqrt(problem.n)
    params = DDPPMParams(alpha, sigma_q, NoiseSchedule("geometric", eta * sigma_q, alpha), point["T"])
    settings = AccountantSettings(**BUILT_IN[model].as_dict(), realisations=8, seed=2)
    floor_seconds = 0.0
    if settings.adjacency == "worst" and settings.search_floor_seeds:
        start = time.perf_counter()
        cached_floor(problem, EPS, settings.view, settings.floor)
        floor_seconds = time.perf_counter() - start
    start = time.perf_counter()
    result = evaluate_delta(problem, params, EPS, settings)
    return time.perf_counter() - start, float(result.delta[2]), floor_seconds


def fit_exponent(sizes: list[float], seconds: list[float]) -> float:
    """b of ``seconds ≈ a · size^b`` (least squares in logs); NaN with fewer than two points."""
    if len(sizes) < 2:
        return float("nan")
    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])


def summarise(table: pd.DataFrame) -> None:
    """Print the fitted exponents and the projection. Points where δ(ε = 5) reached 1 are left out of the fits:
    the accountant stops early there (its time says nothing about the cost of a δ below 1)."""
    print("\nfitted exponents b (seconds ≈ a · size^b; points with δ = 1 left out), projected to", TARGET)
    for model, group in table.groupby("model", sort=False):
        kept = group[group["delta_eps5"] < 1 - 1e-9]
        exponents = {s: fit_exponent(list(g["value"]), list(g["seconds"])) for s, g in kept.groupby("size")}
        base = group[(group["value"] == group["size"].map(BASE))]["seconds"].median()
        factor = np.prod([(TARGET[s] / BASE[s]) ** b for s, b in exponents.items() if np.isfinite(b)])
        text = ", ".join(f"{s}: {b:.2f}" for s, b in exponents.items())
        print(f"{model:>11}: {text}; base {base:.2f} s (median) → projected {base * factor:,.0f} s at the target")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=["paper", "sound"], choices=sorted(BUILT_IN))
    parser.add_argument("--sizes", nargs="+", default=list(SWEEPS), choices=list(SWEEPS))
    parser.add_argument("--budget", type=float, default=120.0, help="seconds one call may take before a sweep stops")
    parser.add_argument("--eta", type=float, default=4.64)
    parser.add_argument("--out", default="", help="also write the table as CSV here")
    parser.add_argument("--table", default="", help="only summarise a CSV an earlier run wrote with --out")
    args = parser.parse_args()
    if args.table:
        summarise(pd.read_csv(args.table))
        return
    rows = []
    print(f"base point {BASE}; one evaluate_delta, 7 ε, R_δ = 8; budget {args.budget:g} s per call")
    one_evaluation(BASE, "paper", args.eta)  # warm-up (imports, caches): not timed
    for model in args.models:
        for size in args.sizes:
            for value in SWEEPS[size]:
                point = {**BASE, size: value}
                seconds, delta, floor = one_evaluation(point, model, args.eta)
                rows.append({"model": model, "size": size, "value": value, "seconds": seconds, "delta_eps5": delta,
                             "floor_seconds": floor})  # fmt: skip
                print(f"{model:>11} {size}={value:<5} {seconds:9.2f} s  δ(ε=5) = {delta:.3g}  (floor {floor:.1f} s)",
                      flush=True)  # fmt: skip
                if seconds > args.budget:
                    print(f"{model:>11} {size}: stopped after {size}={value} (over the budget)", flush=True)
                    break
    table = pd.DataFrame(rows)
    summarise(table)
    if args.out:
        table.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
