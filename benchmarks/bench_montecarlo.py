"""Benchmark: vectorised Monte Carlo of D-DP-PM vs a Python loop over runs (docs/method.md §4).

R runs of D-DP-PM on Diabetes (normalised, 4 agents, paper ring, c = 20, T = 10, Corollary-1 parameters):

* vectorised: ``draw_standard_normals`` for all R runs, then ``ddppm_errors`` (one ``n × R`` matrix product per
  iteration);
* loop: for each run, its own generator, ``draw_standard_normals`` with that one generator, ``ddppm_network`` on
  1-column inputs and ``sin_error``.

Both use the same per-run generators (``seeds.run_generators``), so the errors must agree run by run.

Usage: ``.venv/bin/python benchmarks/bench_montecarlo.py [--runs 1000] [--T 10] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ddppm.accounting.iteration import DDPPMParams, ddppm_errors, ddppm_network, draw_standard_normals, scale_draws
from ddppm.core.metrics import sin_error
from ddppm.core.problem import DistributedProblem
from ddppm.core.seeds import run_generators
from ddppm.testing import corollary_params, paper_problem

LABELS = ("bench", "montecarlo", "diabetes")


def build(T: int, c: int = 20) -> tuple[DistributedProblem, DDPPMParams]:
    """Diabetes as the workflow builds it, with Corollary 1's parameters (κ = 1)."""
    problem = paper_problem("diabetes", c)
    return problem, corollary_params(problem, T)


def vectorised(problem: DistributedProblem, params: DDPPMParams, runs: int) -> tuple[np.ndarray, float]:
    t0 = time.perf_counter()
    z0, zp = draw_standard_normals(problem.n, params.T, run_generators(0, LABELS, range(runs)))
    t_draw = time.perf_counter() - t0
    err = ddppm_errors(problem, params, z0, zp)
    return err, t_draw


def loop(problem: DistributedProblem, params: DDPPMParams, runs: int) -> np.ndarray:
    v = problem.top_eigenvector
    out = np.empty(runs)
    for r in range(runs):
        z0, zp = draw_standard_normals(problem.n, params.T, run_generators(0, LABELS, [r]))
        q0, P = scale_draws(params, z0, zp)
        out[r] = sin_error(v, ddppm_network(problem, params, q0, P))[0]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--T", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3, help="best of this many timings")
    args = ap.parse_args()

    problem, params = build(args.T)
    problem.Xi, problem.top_eigenvector  # noqa: B018 - build the cached matrices outside the timings
    print(f"Diabetes n={problem.n}, d={problem.d}, m={problem.m}, c={problem.c}, T={params.T}, runs={args.runs}")

    t_vec, t_loop, t_draw = np.inf, np.inf, np.inf
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        err_vec, td = vectorised(problem, params, args.runs)
        t_vec, t_draw = min(t_vec, time.perf_counter() - t0), min(t_draw, td)
        t0 = time.perf_counter()
        err_loop = loop(problem, params, args.runs)
        t_loop = min(t_loop, time.perf_counter() - t0)

    diff = np.abs(err_vec - err_loop)
    print(f"vectorised : {t_vec:8.3f} s  (of which drawing the unit normals: {t_draw:.3f} s)")
    print(f"python loop: {t_loop:8.3f} s")
    print(
        f"speed-up   : {t_loop / t_vec:8.1f}x  (excluding the shared draw time: "
        f"{(t_loop - t_draw) / max(t_vec - t_draw, 1e-12):.1f}x)"
    )
    print(
        f"errors: mean {err_vec.mean():.6f}, identical bit for bit: {bool(np.all(err_vec == err_loop))}, "
        f"max |difference| {diff.max():.3g}, max relative {np.max(diff / np.abs(err_loop)):.3g}"
    )
    if diff.max() > 1e-12:
        raise SystemExit("FAIL: vectorised and looped errors differ by more than 1e-12")


if __name__ == "__main__":
    main()
