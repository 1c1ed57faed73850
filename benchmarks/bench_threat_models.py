"""Cost of each threat model's accountant on Diabetes: heuristic vs worst-case neighbour, Chernoff vs exact.

Prints, for T = 1, 2 and T* at Corollary 1's α, σ_q and a constant effective noise η, the time of one
``evaluate_delta`` over the 7-ε grid (8 own-randomness realisations, every observer) and δ(ε = 5), under

* paper    = (paper view,   Chernoff, heuristic neighbour)
* exact    = (paper view,   exact,    heuristic neighbour)
* worst    = (paper view,   Chernoff, worst-case search)
* sound    = (network view, exact,    worst-case search)

and the ratio of the worst-case search to the heuristic (the search's extra cost). Not a test: run
``python benchmarks/bench_threat_models.py``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ddppm.accounting.accountant import AccountantSettings, evaluate_delta
from ddppm.accounting.iteration import DDPPMParams, NoiseSchedule
from ddppm.testing import paper_problem

EPS = np.array([1.0, 2.0, 5.0, 10.0, 20.0, 40.0, 100.0])
MODELS = {
    "paper": {"view": "paper", "accounting": "chernoff", "adjacency": "heuristic"},
    "exact": {"view": "paper", "accounting": "exact", "adjacency": "heuristic"},
    "worst": {"view": "paper", "accounting": "chernoff", "adjacency": "worst"},
    "sound": {"view": "network", "accounting": "exact", "adjacency": "worst"},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--eta", type=float, default=4.64, help="constant effective noise η_t")
    parser.add_argument("--T", type=int, nargs="+", default=[1, 2, 9])
    args = parser.parse_args()
    problem = paper_problem("diabetes")
    alpha, sigma_q = 1 / np.sqrt(problem.mu1 * problem.mu2), 1 / np.sqrt(problem.n)
    print(f"Diabetes n={problem.n}, d={problem.d}, m={problem.m}, c={problem.c}, η={args.eta}, 7 ε, R_δ = 8")
    print(f"{'T':>3} {'model':>6} {'seconds':>8} {'pairs':>6} {'δ(ε=5)':>10} {'δ(ε=1)':>10}")
    for T in args.T:
        params = DDPPMParams(alpha, sigma_q, NoiseSchedule("geometric", args.eta * sigma_q, alpha), T)
        times = {}
        for name, model in MODELS.items():
            settings = AccountantSettings(**model, realisations=8, seed=2)
            start = time.perf_counter()
            result = evaluate_delta(problem, params, EPS, settings)
            times[name] = time.perf_counter() - start
            pairs = len(result.pairs) // EPS.size
            print(f"{T:>3} {name:>6} {times[name]:>8.2f} {pairs:>6} {result.delta[2]:>10.3g} {result.delta[0]:>10.3g}")
        exact_ratio, search_ratio = times["exact"] / times["paper"], times["worst"] / times["paper"]
        print(f"    exact/Chernoff time {exact_ratio:.1f}×, search/heuristic {search_ratio:.1f}×")


if __name__ == "__main__":
    main()
