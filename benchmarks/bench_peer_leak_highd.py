"""How much privacy the peers' mis-specified eigenvector law spends in d = 2 to 10 (docs/peers.md, issue 50).

diffprivlib 0.6.6 and OpenDP 0.16.0 draw the top eigenvector from ∝ exp(−uᵀAu)(uᵀΩu)^{−d} instead of the Bingham
law ∝ exp(−uᵀAu) of their ε-DP proof (A = ε/4 (λ_max I − C)). ``ddppm.methods.peer_law`` computes the exact loss
max_u |log p_C(u) − log p_C'(u)| of one release in any d (normalising constants by Dirichlet stick-breaking and
product Gauss–Jacobi; the worst u on the top-eigenvector curve of cos α C + sin α C′). This script searches
neighbouring pairs — random pairs, then Nelder–Mead started from the best random pairs of each row count — over
1–3 rows in the unit ball and the replacing row, and prints the worst loss found per (d, ε) for both laws: a
**lower bound** on the ε each law satisfies. A data set of ≤ 3 rows and its replacing row span at most R⁴, and both
laws are rotation invariant, so for d ≥ 4 the rows are searched in R⁴ ⊂ R^d without loss of generality.

``--library-check D EPS`` instead draws releases from the installed diffprivlib and OpenDP (``.venv-peers``) for
the worst pair found at (D, EPS) and compares the mean of (u·v)² (v the top eigenvector of C) with both laws.

Usage: ``nice -n 19 .venv/bin/python benchmarks/bench_peer_leak_highd.py [--dims 2 … 10] [--epsilons 0.5 1 2 4 8]
[--random 300] [--starts 2] [--out worst.json]``; ``… --library-check 5 2 --pairs worst.json --draws 3000``
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from scipy.optimize import minimize

from ddppm.methods.peer_law import neighbour_covariances, pair_loss, top_alignment

SEARCH_NODES, FINAL_NODES, CHECK_NODES = 24, 40, 80
"""Gauss–Jacobi nodes per factor inside the search, for the reported numbers, and for their error check."""


def _ball(z: np.ndarray) -> np.ndarray:
    """A point of the closed unit ball from unconstrained coordinates: z itself, or z/‖z‖ outside the ball."""
    return z / max(1.0, float(np.linalg.norm(z)))


def _unpack(params: np.ndarray, rows: int, k: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    points = np.zeros((rows + 1, d))
    points[:, :k] = [_ball(z) for z in params.reshape(rows + 1, k)]
    return points[:rows], points[rows]


def _random_pair(rng: np.random.Generator, rows: int, k: int) -> np.ndarray:
    """Unconstrained parameters of a random pair: directions uniform, radii uniform in the ball or 1 (half the
    time each, per point)."""
    z = rng.standard_normal((rows + 1, k))
    radii = np.where(rng.random(rows + 1) < 0.5, 1.0, rng.uniform(0, 1, rows + 1) ** (1 / k))
    return (z / np.linalg.norm(z, axis=1, keepdims=True) * radii[:, None]).ravel()


def searched_loss(d: int, eps: float, law: str, random: int, starts: int, maxiter: int,
                  rng: np.random.Generator) -> dict:  # fmt: skip
    """The worst pair found (random pairs, then Nelder–Mead from the ``starts`` best random pairs per row count),
    re-evaluated with :data:`FINAL_NODES` and :data:`CHECK_NODES`."""
    k = min(d, 4)

    def loss(params, rows, nodes=SEARCH_NODES):
        return pair_loss(*_unpack(params, rows, k, d), eps, law, nodes, angles=360, polish=2)

    found = {1: [], 2: [], 3: []}
    for _ in range(random):
        rows = int(rng.integers(1, 4))
        params = _random_pair(rng, rows, k)
        found[rows].append((loss(params, rows), params))
    evaluations = random
    candidates = []
    for rows, pairs in found.items():
        pairs.sort(key=lambda item: -item[0])
        candidates += [(value, rows, params) for value, params in pairs[:1]]
        for _, params in pairs[:starts]:
            res = minimize(lambda p, rows=rows: -loss(p, rows), params, method="Nelder-Mead",
                           options={"maxiter": maxiter, "xatol": 1e-7, "fatol": 1e-10, "adaptive": True})  # fmt: skip
            evaluations += res.nfev
            candidates.append((-res.fun, rows, res.x))
    value, rows, params = max(candidates, key=lambda item: item[0])
    X, y = _unpack(params, rows, k, d)
    final, check = (pair_loss(X, y, eps, law, nodes) for nodes in (FINAL_NODES, CHECK_NODES))
    return {"d": d, "eps": eps, "law": law, "loss": final, "quadrature_change": abs(check - final),
            "X": X.tolist(), "y": y.tolist(), "evaluations": int(evaluations)}  # fmt: skip


def search(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(50)
    results = []
    print("d   eps  bingham(found)  mis_specified(found)  mis/eps  evaluations(B, mis)  |ΔN|      seconds")
    for d in args.dims:
        for eps in args.epsilons:
            start = time.perf_counter()
            bingham = searched_loss(d, eps, "bingham", args.random // 3, 1, args.maxiter // 2, rng)
            mis = searched_loss(d, eps, "mis_specified", args.random, args.starts, args.maxiter, rng)
            results += [bingham, mis]
            change = max(bingham["quadrature_change"], mis["quadrature_change"])
            print(f"{d:<3d} {eps:<4g} {bingham['loss']:<15.4f} {mis['loss']:<21.4f} {mis['loss'] / eps:<8.3f} "
                  f"{bingham['evaluations']:>6d} {mis['evaluations']:>7d}       {change:.1e}   "
                  f"{time.perf_counter() - start:.0f}", flush=True)  # fmt: skip
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(results, fh, indent=1)


def library_check(args: argparse.Namespace) -> None:
    """Draw from the installed libraries for the worst mis-specified pair at (d, ε) and compare E[(u·v)²]."""
    from ddppm.common_task.peers import PEER_PYTHON, library_eigenvector_draws

    d, eps = int(args.library_check[0]), float(args.library_check[1])
    with open(args.pairs) as fh:
        pair = next(r for r in json.load(fh) if r["d"] == d and r["eps"] == eps and r["law"] == "mis_specified")
    X, y = np.array(pair["X"]), np.array(pair["y"])
    print(f"pair at d = {d}, ε = {eps}: loss {pair['loss']:.4f}\nX = {np.round(X, 6).tolist()}\n"
          f"y = {np.round(y, 6).tolist()}")  # fmt: skip
    for name, C in zip(("C", "C'"), neighbour_covariances(X, y), strict=True):
        v = np.linalg.eigh(C)[1][:, -1]
        expected = {law: top_alignment(C, eps, law) for law in ("bingham", "mis_specified")}
        start = time.perf_counter()
        draws = library_eigenvector_draws(PEER_PYTHON, C, eps, args.draws, seed=7)
        seconds = time.perf_counter() - start
        print(f"{name}: E[(u·v)²] Bingham {expected['bingham']:.4f}, mis-specified {expected['mis_specified']:.4f} "
              f"({args.draws} draws per library, {seconds:.0f} s)")  # fmt: skip
        for library in ("diffprivlib", "opendp"):
            stat = (draws[library] @ v) ** 2
            se = stat.std() / np.sqrt(stat.size)
            z = {law: (stat.mean() - value) / se for law, value in expected.items()}
            print(f"  {library:<12s} {stat.mean():.4f} ± {se:.4f}   z vs Bingham {z['bingham']:+.1f}, "
                  f"z vs mis-specified {z['mis_specified']:+.1f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, nargs="+", default=list(range(2, 11)))
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0, 2.0, 4.0, 8.0])
    parser.add_argument("--random", type=int, default=300, help="random pairs per (d, ε) for the drawn law")
    parser.add_argument("--starts", type=int, default=2, help="Nelder–Mead starts per row count")
    parser.add_argument("--maxiter", type=int, default=400)
    parser.add_argument("--out", default="")
    parser.add_argument("--library-check", nargs=2, metavar=("D", "EPS"))
    parser.add_argument("--pairs", default="worst.json")
    parser.add_argument("--draws", type=int, default=3000)
    args = parser.parse_args()
    library_check(args) if args.library_check else search(args)


if __name__ == "__main__":
    main()
