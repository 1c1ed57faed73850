"""How much privacy the peers' mis-specified eigenvector law spends, on the circle and the 2-sphere (docs/peers.md).

diffprivlib 0.6.6 and OpenDP 0.16.0 draw the top eigenvector from ∝ exp(−uᵀAu)(uᵀΩu)^{−d} instead of the Bingham
law ∝ exp(−uᵀAu) their ε-DP proof covers (A = ε/4 (λ_max I − C)). For 2-d data sets the exact privacy loss of one
release between neighbours, max_u |log p_C(u) − log p_C'(u)| with the normalising constants, is a quadrature
(``ddppm.methods.amin.release_log_densities``); so is it for 3-d data sets, on the sphere. This script searches
neighbouring pairs (random pairs, then Nelder–Mead from random starts over 1–3 rows in the unit ball and the
replacing row) and prints, per dimension and ε, the worst loss found for both laws: a **lower bound** on the ε each
law satisfies, to compare with the claimed ε.

Usage: ``.venv/bin/python benchmarks/bench_peer_leak.py [--dims 2 3] [--epsilons 0.5 1 2 4] [--starts 12]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.optimize import minimize

from ddppm.methods.amin import release_log_densities, worst_release_loss

NODES = {2: 1500, 3: 48}
"""Quadrature nodes per angle inside the search (the final numbers are re-evaluated at the default)."""


def _point(params: np.ndarray, d: int) -> np.ndarray:
    """A point of the open unit ball of R^d (d = 2, 3) from d unconstrained coordinates (the optimiser's)."""
    radius = 1.0 / (1.0 + np.exp(-np.clip(params[-1], -50, 50)))
    if d == 2:
        return radius * np.array([np.cos(params[0]), np.sin(params[0])])
    polar, azimuth = params[0], params[1]
    return radius * np.array([np.sin(polar) * np.cos(azimuth), np.sin(polar) * np.sin(azimuth), np.cos(polar)])


def _pair_loss(params: np.ndarray, eps: float, rows: int, law: str, d: int, points: int | None) -> float:
    X = np.array([_point(params[d * i : d * (i + 1)], d) for i in range(rows)])
    y = _point(params[d * rows :], d)
    C = X.T @ X
    C2 = C - np.outer(X[0], X[0]) + np.outer(y, y)
    return float(np.abs(release_log_densities(C, eps, law, points) - release_log_densities(C2, eps, law, points)).max())


def _negative_loss(params: np.ndarray, eps: float, rows: int, law: str, d: int) -> float:
    return -_pair_loss(params, eps, rows, law, d, NODES[d])


def searched_loss(eps: float, law: str, starts: int, rng: np.random.Generator, d: int = 2) -> float:
    """The worst loss found: random pairs, then Nelder–Mead from ``starts`` random starts per row count (each
    optimum re-evaluated with the default quadrature)."""
    best = worst_release_loss(eps, law, 2000 if d == 2 else 300, rng, d=d)
    for rows in (1, 2, 3):
        for _ in range(starts):
            options = {"maxiter": 1500 if d == 2 else 600, "xatol": 1e-6, "fatol": 1e-9}
            start = rng.normal(0, 2, d * (rows + 1))
            result = minimize(_negative_loss, start, args=(eps, rows, law, d), method="Nelder-Mead", options=options)
            best = max(best, _pair_loss(result.x, eps, rows, law, d, None))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[2, 3])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0, 2.0, 4.0])
    parser.add_argument("--starts", type=int, default=12)
    args = parser.parse_args()
    rng = np.random.default_rng(3)
    print("d  eps   bingham(found)  mis_specified(found)  mis/eps   seconds")
    for d in args.dims:
        for eps in args.epsilons:
            start = time.perf_counter()
            found = {law: searched_loss(eps, law, args.starts, rng, d) for law in ("bingham", "mis_specified")}
            print(f"{d:<2d} {eps:<5g} {found['bingham']:<15.4f} {found['mis_specified']:<21.4f} "
                  f"{found['mis_specified'] / eps:<9.3f} {time.perf_counter() - start:.0f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
