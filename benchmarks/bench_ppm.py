"""Wall time of their Fig. 1 workload at the MovieLens-10M shape (experiment ppm, Nicolas et al.).

The paper reports that its Fig. 1 on MovieLens-10M (71,567 users × 10,677 items, 7,972,582 interactions; 10 runs
× 14 ε × 5 methods) takes about 30 minutes on a 16-core CPU. This script runs the same workload on a seeded
synthetic matrix of the same shape and density (:func:`ddppm.data.recsys.synthetic_interactions`; no network):
p = 32, k = 32, L = 3, δ = 1e-4, 14 log-spaced ε from 1 to 1e4, 10 runs per ε, the default methods of
``ppm.methods`` except AnalyzeGauss, which the paper leaves out at that size too (its dense 10,677 × 10,677 matrix
and one eigendecomposition per run dominate everything). Every product with the item–item matrix goes through the
sparse R; the methods run in ``--jobs`` worker processes (one per core, as the workflow's per-method jobs do).

Usage (from the repository root; run the full size with nice, it takes minutes)::

    nice -n 10 .venv/bin/python benchmarks/bench_ppm.py                # full MovieLens-10M shape
    .venv/bin/python benchmarks/bench_ppm.py --scale 0.25              # users and items × 0.25, same density

It prints the time of each stage, the workload's wall time and the mean errors at three ε (a sanity check).
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd
import yaml
from threadpoolctl import threadpool_limits

from ddppm.data.recsys import MOVIELENS_10M_SHAPE
from ddppm.experiments.ppm import default_section, load_interactions, noiseless_errors, run_method, summarise

_SHARED: dict = {}


def _section(scale: float, seeds: int, epsilons: int, precision: str = "float64") -> dict:
    users, items, interactions = MOVIELENS_10M_SHAPE
    data = {
        "users": max(int(round(users * scale)), 100),
        "items": max(int(round(items * scale)), 64),
        "density": interactions / (users * items),
    }
    methods = [m for m in default_section()["methods"] if m != "analyze_gauss"]
    eps = [float(f"{e:.6g}") for e in np.logspace(0, 4, epsilons)]
    return default_section(data=data, seeds=seeds, epsilons=eps, methods=methods, precision=precision)


def _run(name: str) -> tuple[str, pd.DataFrame, float]:
    start = time.perf_counter()
    with threadpool_limits(1):
        runs = run_method(name, _SHARED["R"], _SHARED["U"], _SHARED["section"])
    return name, runs, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="users and items × scale (density kept)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (methods run in parallel)")
    parser.add_argument("--seeds", type=int, default=10, help="runs per ε")
    parser.add_argument("--epsilons", type=int, default=14, help="number of log-spaced ε in [1, 1e4]")
    parser.add_argument("--precision", choices=("float64", "float32"), default="float64", help="ppm.precision")
    args = parser.parse_args()
    section = _section(args.scale, args.seeds, args.epsilons, args.precision)
    keys = ("data", "block_size", "rank", "iterations", "methods", "precision")
    print(yaml.safe_dump({k: section[k] for k in keys}), end="")

    t0 = time.perf_counter()
    with threadpool_limits(1):
        R, info = load_interactions(section["data"])
    t_data = time.perf_counter() - t0
    print(
        f"data: {info['users']:,} users × {info['items']:,} items, {info['interactions']:,} interactions "
        f"(density {info['density']:.5f}) generated in {t_data:.1f} s"
    )

    from ddppm.data.recsys import ItemItemOperator, top_eigenvectors

    t0 = time.perf_counter()
    with threadpool_limits(1):
        values, U = top_eigenvectors(ItemItemOperator(R), section["rank"], seed=section["seed"])
        floor = noiseless_errors(R, U, section)
    t_ref = time.perf_counter() - t0
    print(
        f"reference: top-{section['rank']} eigenvectors (Lanczos through R) and the noise-free error "
        f"{floor.mean():.3g} in {t_ref:.1f} s"
    )

    _SHARED.update(R=R, U=U, section=section)
    t0 = time.perf_counter()
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=context) as pool:
        results = list(pool.map(_run, section["methods"]))
    wall = time.perf_counter() - t0
    for name, runs, seconds in results:
        print(f"  {name:22s} {len(runs):4d} runs in {seconds:6.1f} s")
    n_runs = sum(len(r) for _, r, _ in results)
    print(
        f"workload: {n_runs} runs ({args.seeds} runs × {args.epsilons} ε × {len(results)} methods) "
        f"in {wall:.1f} s wall with {args.jobs} worker processes"
    )
    summary = summarise(pd.concat([r for _, r, _ in results]), section["bootstrap"])
    eps = np.array(section["epsilons"])
    picks = eps[[0, len(eps) // 2, -1]]
    table = summary[summary["eps"].isin(picks)].pivot(index="method", columns="eps", values="error_mean")
    print("mean relative filter error at three ε:")
    print(table.round(4).to_string())
    print(f"total (data + reference + workload): {t_data + t_ref + wall:.1f} s")


if __name__ == "__main__":
    main()
