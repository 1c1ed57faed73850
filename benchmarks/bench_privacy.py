"""Benchmark: the fast accountant (``accountant.evaluate_delta``) vs the straightforward reference
(``reference.delta_reference``) on Diabetes.

Setting: Diabetes (``data.load_dataset("diabetes")``, ``data.normalize``), ``partition_rows(n, 4, seed=0)``, the
paper's ring W, c = 20, T = 10, Corollary-1 parameters (α = 1/sqrt(μ₁μ₂), σ_q = 1/√n, geometric schedule
with scale σ_q and ratio μ₂/μ₁), ε ∈ {1, 2, 5, 10, 20, 40, 100}, default ``AccountantSettings()`` (network
view, support rank mode, R_δ = 8 realisations, candidate_rows = 1, three candidate kinds).

The reference refactorises every ``Σ_s`` for every s, ε and realisation, so on the full pair set it takes far
too long. By default it is timed on a few (observer, candidate) pairs only, and its total is estimated by
scaling with the pair count (separately for pairs the reference finds mutually singular, which skip the
s-optimisation, and the rest). ``--full`` runs it on every pair instead.

Usage: ``.venv/bin/python benchmarks/bench_privacy.py [--view network|paper] [--T 10]
[--schedule geometric|constant] [--kappa 1] [--pairs 1] [--full] [--reference-rtol 1e-16]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from ddppm.accounting.accountant import AccountantSettings, evaluate_delta
from ddppm.accounting.iteration import DDPPMParams
from ddppm.accounting.reference import delta_reference
from ddppm.core.problem import DistributedProblem
from ddppm.testing import corollary_params, paper_problem

EPS = np.array([1.0, 2.0, 5.0, 10.0, 20.0, 40.0, 100.0])
KEYS = ["observer", "agent", "row", "kind"]


def build(
    T: int = 10, c: int = 20, schedule: str = "geometric", kappa: float = 1.0
) -> tuple[DistributedProblem, DDPPMParams]:
    """Diabetes problem and Corollary-1 parameters (σ_p(t) = κ σ_q (μ₂/μ₁)^t; κ = 1 by default)."""
    problem = paper_problem("diabetes", c)
    return problem, corollary_params(problem, T, kappa, schedule)


def log_rel_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|ln a − ln b| / max(1, |ln b|); pairs of values that both underflow (< 1e-280) count as equal."""
    tiny = (a < 1e-280) & (b < 1e-280)
    la, lb = np.log(np.where(tiny, 1, a)), np.log(np.where(tiny, 1, b))
    return np.abs(la - lb) / np.maximum(1, np.abs(lb))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--view", default="network", choices=["network", "paper"])
    ap.add_argument("--T", type=int, default=10)
    ap.add_argument("--schedule", default="geometric", choices=["geometric", "constant"])
    ap.add_argument("--kappa", type=float, default=1.0, help="noise scale in units of sigma_q (Corollary 1: 1)")
    ap.add_argument("--pairs", type=int, default=1, help="pairs the reference is timed on (without --full)")
    ap.add_argument("--full", action="store_true", help="run the reference on every pair")
    ap.add_argument(
        "--reference-rtol",
        type=float,
        default=1e-16,
        help="eigh tolerance of the reference (must sit in the gap of the spectrum; see README)",
    )
    args = ap.parse_args()

    problem, params = build(args.T, schedule=args.schedule, kappa=args.kappa)
    settings = AccountantSettings(view=args.view)
    problem.Xi  # noqa: B018 - cached property, built outside the timings
    print(
        f"Diabetes n={problem.n}, d={problem.d}, m={problem.m}, c={problem.c}, T={params.T}, "
        f"view={settings.view}, rank_mode={settings.rank_mode}, R_delta={settings.realisations}"
    )
    print(
        f"alpha={params.alpha:.6g} sigma_q={params.sigma_q:.6g} ratio={params.schedule.ratio:.6g} "
        f"eta_T={params.effective_noise()[-1]:.3g}"
    )

    t0 = time.perf_counter()
    fast = evaluate_delta(problem, params, EPS, settings)
    t_fast = time.perf_counter() - t0
    n_pairs = len(fast.pairs) // EPS.size
    print(
        f"\nfast path  evaluate_delta : {t_fast:9.2f} s for {n_pairs} pairs x {EPS.size} eps x "
        f"{settings.realisations} realisations"
    )
    print("  delta       :", np.array2string(fast.delta, precision=4))
    print("  delta_upper :", np.array2string(fast.delta_upper, precision=4))
    singular_fast = fast.pairs.groupby(KEYS, sort=False)["singular"].first().ne("")
    singular_fast.index = [(int(o), int(a), int(r), str(k)) for o, a, r, k in singular_fast.index]
    print(f"  pairs flagged mutually singular by the fast path: {int(singular_fast.sum())} of {n_pairs}")

    if args.full:
        chosen = None
    else:
        # time the reference on the first non-singular pairs (the expensive kind) and one singular pair
        ordered = list(singular_fast[~singular_fast].index) + list(singular_fast[singular_fast].index)
        chosen = ordered[: args.pairs]
        if singular_fast.any() and not singular_fast[~singular_fast].empty and args.pairs == 1:
            chosen.append(singular_fast[singular_fast].index[0])
    t0 = time.perf_counter()
    timings = {}
    ref_frames = []
    for key in chosen if chosen is not None else [None]:
        only = None if key is None else {tuple(key)}
        t1 = time.perf_counter()
        ref = delta_reference(problem, params, EPS, settings, only_pairs=only, rtol=args.reference_rtol)
        timings[key] = time.perf_counter() - t1
        ref_frames.append(ref.pairs)
    t_ref_measured = time.perf_counter() - t0

    ref_pairs = pd.concat(ref_frames, ignore_index=True)
    if chosen is None:
        t_ref = t_ref_measured
        print(f"\nreference  delta_reference: {t_ref:9.2f} s on all {n_pairs} pairs (measured)")
    else:
        ref_singular = ref_pairs.groupby(KEYS, sort=False)["singular"].first().ne("")
        t_ns = [timings[k] for k in chosen if not ref_singular.loc[tuple(k)]]
        t_s = [timings[k] for k in chosen if ref_singular.loc[tuple(k)]]
        n_sing = int(singular_fast.sum())
        est_ns = np.mean(t_ns) if t_ns else np.mean(t_s)
        est_s = np.mean(t_s) if t_s else est_ns
        t_ref = est_ns * (n_pairs - n_sing) + est_s * n_sing
        print(f"\nreference  delta_reference: measured on {len(chosen)} pair(s) only ({t_ref_measured:.2f} s in all):")
        for k in chosen:
            tag = "singular" if ref_singular.loc[tuple(k)] else "non-singular"
            print(f"  pair {tuple(k)} ({tag} for the reference): {timings[k]:.2f} s")
        print(
            f"  ESTIMATED for all {n_pairs} pairs by scaling with the pair count "
            f"({n_pairs - n_sing} non-singular x {est_ns:.2f} s + {n_sing} singular x {est_s:.2f} s): "
            f"{t_ref:.1f} s"
        )

    print(
        f"\nspeed-up reference / fast : {t_ref / t_fast:9.1f}x"
        + ("" if chosen is None else "  (reference time extrapolated)")
    )

    a = fast.pairs.set_index([*KEYS, "eps"]).sort_index()
    b = ref_pairs.set_index([*KEYS, "eps"]).sort_index()
    common = a.index.intersection(b.index)
    print(f"\nagreement on the {len(common) // EPS.size} pair(s) both computed ({len(common)} (pair, eps) values):")
    for col in ("delta_mean", "delta_upper_mean", "delta_lower_mean"):
        x, y = a.loc[common, col].to_numpy(), b.loc[common, col].to_numpy()
        rel = np.abs(x - y) / np.maximum(np.abs(y), 1e-300)
        print(
            f"  {col:17s}: max relative difference {rel.max():.3g}, max relative difference in log "
            f"{log_rel_diff(x, y).max():.3g}"
        )
    sing_a, sing_b = a.loc[common, "singular"].ne(""), b.loc[common, "singular"].ne("")
    print(
        f"  singular flags agree: {bool((sing_a == sing_b).all())} "
        f"(fast {int(sing_a.sum() // EPS.size)}, reference {int(sing_b.sum() // EPS.size)} pairs)"
    )
    for key in common.droplevel("eps").unique():
        fast_d = np.array2string(a.loc[key, "delta_mean"].to_numpy(), precision=4)
        ref_d = np.array2string(b.loc[key, "delta_mean"].to_numpy(), precision=4)
        print(f"  pair {key}:\n    fast delta {fast_d}\n    ref  delta {ref_d}")


if __name__ == "__main__":
    main()
