"""Benchmark: Algorithm 2's Fantope ADMM at p = 400 (Wang & Xu, Fig. 4 setting), plain and screened.

Setting: covariance model (7) with λ = 1, k = 10, a row-sparse subspace (s = 15 and 80), p = 400, ε = 1,
δ = 1e-4, the paper's σ; ``S̃ = S + σ Ḡ`` with the users' scatter S drawn from its exact law (rows at
n = 2000, Wishart above) and λ at the noise level (``noise_level_lambda``). For each n it times

* **full ADMM**: ``fantope_admm`` on the whole 400 × 400 problem (one eigendecomposition per iteration);
* **screened**: ``solve_penalised_fantope``, the solver the workflow uses (closed form when no off-diagonal
  entry exceeds λ, else ADMM on the screened block, with the optimality check (★));

and prints seconds, iterations, block size, the objective of problem (5) of both (they must agree) and the
error ``||V̂V̂ᵀ − VVᵀ||_F``. BLAS runs on one thread (as in the workflow's jobs) unless ``--threads`` says
otherwise.

Usage: ``.venv/bin/python benchmarks/bench_ldppca.py [--p 400] [--k 10] [--threads 1] [--seed 0]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from ddppm.methods.ldppca.admm import fantope_admm, noise_level_lambda, penalised_objective
from ddppm.methods.ldppca.mechanism import release_sigma, symmetric_noise
from ddppm.methods.ldppca.metrics import projector_distance, top_eigenvectors
from ddppm.methods.ldppca.models import nested_scatters, sparse_subspace
from ddppm.methods.ldppca.screening import solve_penalised_fantope

N_VALUES = [2000, 2 * 10**10, 2 * 10**11, 2 * 10**12, 2 * 10**14]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--p", type=int, default=400)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sigma = release_sigma(1.0, 1e-4, "paper")
    header = f"{'s':>3} {'n':>8} {'solver':>9} {'seconds':>8} {'iters':>6} {'block':>5} {'objective':>13} {'error':>6}"
    print(f"p = {args.p}, k = {args.k}, ε = 1, δ = 1e-4, paper σ = {sigma:.3f}, BLAS threads = {args.threads}")
    print(header)
    with threadpool_limits(limits=args.threads):
        for s in (15, 80):
            rng = np.random.default_rng([args.seed, s])
            V = sparse_subspace(rng, args.p, args.k, s)
            for draw in nested_scatters(rng, V, 1.0, N_VALUES, max_row_entries=4_000_000):
                n = draw.n
                S_tilde = draw.scatter / n + sigma / np.sqrt(n) * symmetric_noise(rng, args.p)
                lam = noise_level_lambda(sigma, n, args.p)
                start = time.perf_counter()
                full = fantope_admm(S_tilde, args.k, lam)
                t_full = time.perf_counter() - start
                start = time.perf_counter()
                screened = solve_penalised_fantope(S_tilde, args.k, lam)
                t_screened = time.perf_counter() - start
                for name, Y, seconds, iters, block, converged in (
                    ("full", full.Y, t_full, full.iterations, args.p, full.converged),
                    ("screened", screened.Y, t_screened, screened.iterations, screened.block.size, screened.converged),
                ):
                    error = projector_distance(top_eigenvectors(Y, args.k), V)
                    flag = "" if converged else "  (not converged)"
                    print(
                        f"{s:>3} {n:>8.0e} {name:>9} {seconds:>8.3f} {iters:>6} {block:>5} "
                        f"{penalised_objective(S_tilde, Y, lam):>13.6e} {error:>6.3f}{flag}"
                    )


if __name__ == "__main__":
    main()
