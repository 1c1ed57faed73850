"""How much privacy the peers' mis-specified eigenvector law spends, on the circle (docs/peers.md).

diffprivlib 0.6.6 and OpenDP 0.16.0 draw the top eigenvector from ∝ exp(−uᵀAu)(uᵀΩu)^{−d} instead of the Bingham
law ∝ exp(−uᵀAu) their ε-DP proof covers (A = ε/4 (λ_max I − C)). For 2-d data sets the exact privacy loss of one
release between neighbours, max_u |log p_C(u) − log p_C'(u)| with the normalising constants, is a quadrature
(``ddppm.methods.amin.circle_log_densities``). This script searches neighbouring pairs (random pairs, then
Nelder–Mead from random starts over 1–3 rows in the unit disc and the replacing row) and prints, per ε, the worst
loss found for both laws: a **lower bound** on the ε each law satisfies, to compare with the claimed ε.

Usage: ``.venv/bin/python benchmarks/bench_peer_leak.py [--epsilons 0.5 1 2 4] [--starts 12]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.optimize import minimize

from ddppm.methods.amin import circle_log_densities, worst_circle_loss


def _point(angle: float, logit: float) -> np.ndarray:
    """A point of the open unit disc from unconstrained coordinates (the optimiser's)."""
    return np.array([np.cos(angle), np.sin(angle)]) / (1.0 + np.exp(-np.clip(logit, -50, 50)))


def _negative_loss(params: np.ndarray, eps: float, rows: int, law: str) -> float:
    X = np.array([_point(params[2 * i], params[2 * i + 1]) for i in range(rows)])
    y = _point(params[2 * rows], params[2 * rows + 1])
    C = X.T @ X
    C2 = C - np.outer(X[0], X[0]) + np.outer(y, y)
    difference = circle_log_densities(C, eps, law, 1500) - circle_log_densities(C2, eps, law, 1500)
    return -float(np.abs(difference).max())


def searched_loss(eps: float, law: str, starts: int, rng: np.random.Generator) -> float:
    """The worst loss found: random pairs, then Nelder–Mead from ``starts`` random starts per row count."""
    best = worst_circle_loss(eps, law, 2000, rng)
    for rows in (1, 2, 3):
        for _ in range(starts):
            options = {"maxiter": 1500, "xatol": 1e-6, "fatol": 1e-9}
            start = rng.normal(0, 2, 2 * rows + 2)
            result = minimize(_negative_loss, start, args=(eps, rows, law), method="Nelder-Mead", options=options)
            best = max(best, -float(result.fun))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0, 2.0, 4.0])
    parser.add_argument("--starts", type=int, default=12)
    args = parser.parse_args()
    rng = np.random.default_rng(3)
    print("eps   bingham(found)  mis_specified(found)  mis/eps   seconds")
    for eps in args.epsilons:
        start = time.perf_counter()
        found = {law: searched_loss(eps, law, args.starts, rng) for law in ("bingham", "mis_specified")}
        print(f"{eps:<5g} {found['bingham']:<15.4f} {found['mis_specified']:<21.4f} "
              f"{found['mis_specified'] / eps:<9.3f} {time.perf_counter() - start:.0f}")  # fmt: skip


if __name__ == "__main__":
    main()
