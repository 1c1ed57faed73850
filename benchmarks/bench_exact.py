"""Benchmark: exact privacy-loss tails (``privacy.exact.exact_tails``) vs the Chernoff bound on the same inputs.

Setting: a random pair in whitened coordinates with K = 300 generalised eigenvalues ``γ_k = 1 + β_k``
(``|β|`` log-uniform over [1e-4, 10]; half of them reflected to ``γ = 1/(1 + |β|)``, i.e. ``β ∈ (−0.91, 0)``),
R = 8 realisations of ``w² = (σ_w z)²`` (``z ~ N(0, I)``, ``σ_w = 0.1``), ε ∈ {1, 2, 5, 10, 20, 40, 100}.

* **exact**: ``exact_tails`` — saddle point per (ε, realisation, tail), then a steepest-descent contour
  integral of the inverse Laplace transform (Pr(ℒ > ε), Pr(ℒ < −ε) and the hockey stick H(ε)).
* **Chernoff**: the project's route, coded here so the script does not depend on the accountant: one
  log-spaced grid of 160 values of s shared by all ε, then 40 golden-section steps in ``log s`` vectorised
  over (ε, realisation), for δ⁺ = inf e^{K(s)−sε} and δ⁻ = inf e^{K(−s)−sε}.

It prints both times (best of ``--repeat``), their ratio, the two δ tables for one realisation, the range
of exact / Chernoff (how loose the bound is, per tail) and a consistency check of the exact tails
(``Pr(ℒ > x) + Pr(ℒ < x) = 1``, from ε and −ε, and ``H ≤ Pr(ℒ > ε)``).

Usage: ``.venv/bin/python benchmarks/bench_exact.py [--K 300] [--R 8] [--wscale 0.1] [--beta-max 10] [--seed 0]
[--repeat 5]`` (``--beta-max 0.1 --wscale 0.01`` gives a private regime with δ down to ~1e-40).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ddppm.privacy.exact import exact_tails

EPS = np.array([1.0, 2.0, 5.0, 10.0, 20.0, 40.0, 100.0])
GRID_POINTS = 160
GOLDEN_STEPS = 40


def build(K: int, R: int, wscale: float, seed: int, beta_max: float = 10.0) -> tuple[np.ndarray, np.ndarray]:
    """``β`` (K,) spread over the decades from 1e-4 to ``beta_max`` with both signs, and ``w²`` (K, R)."""
    rng = np.random.default_rng(seed)
    mag = np.exp(rng.uniform(np.log(1e-4), np.log(beta_max), K))
    beta = np.where(rng.random(K) < 0.5, mag, -mag / (1 + mag))  # γ = 1 + |β| or 1/(1 + |β|)
    w2 = (wscale * rng.standard_normal((K, R))) ** 2
    return beta, w2


def chernoff_log_delta(beta: np.ndarray, w2: np.ndarray, eps: np.ndarray, sign: int) -> np.ndarray:
    """``log inf_{s>0} exp(K(sign·s) − sε)`` capped at 0, shape (E, R): grid bracket + golden section."""
    ell = np.log1p(beta)
    bad = beta < 0 if sign > 0 else beta > 0
    limit = float(np.min((1 + beta[bad]) / np.abs(beta[bad]))) if bad.any() else np.inf
    hi = min(1e8, limit * (1 - 1e-12))
    log_s = np.linspace(np.log(1e-10 * min(1.0, hi)), np.log(hi), GRID_POINTS)

    def logdet(s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        shifted = (1 + sign * s)[..., None] * beta
        with np.errstate(divide="ignore", invalid="ignore"):
            value = np.sum(np.log1p(shifted) - (1 + sign * s)[..., None] * ell, axis=-1)
        return 1 + shifted, value, np.all(1 + shifted > 0, axis=-1)

    def cgf_grid(s: np.ndarray) -> np.ndarray:  # s (S,) shared by every realisation -> (S, R)
        denom, ld, ok = logdet(s)
        with np.errstate(divide="ignore", invalid="ignore"):
            K = (sign * s * (1 + sign * s) / 2)[:, None] * ((1 / denom) @ w2) - 0.5 * ld[:, None]
        return np.where(ok[:, None], K, np.inf)

    def cgf_pairs(s: np.ndarray) -> np.ndarray:  # s (E, R), one per (eps, realisation) -> (E, R)
        denom, ld, ok = logdet(s)
        with np.errstate(divide="ignore", invalid="ignore"):
            K = sign * s * (1 + sign * s) / 2 * np.einsum("erk,kr->er", 1 / denom, w2) - 0.5 * ld
        return np.where(ok, K, np.inf)

    s_grid = np.exp(log_s)
    grid_obj = cgf_grid(s_grid)[:, None, :] - s_grid[:, None, None] * eps[None, :, None]  # (S, E, R)
    best = np.argmin(grid_obj, axis=0)
    a, b = log_s[np.maximum(best - 1, 0)], log_s[np.minimum(best + 1, GRID_POINTS - 1)]

    def objective(ls: np.ndarray) -> np.ndarray:
        return cgf_pairs(np.exp(ls)) - np.exp(ls) * eps[:, None]

    ratio = (np.sqrt(5) - 1) / 2
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = objective(c), objective(d)
    for _ in range(GOLDEN_STEPS):
        left = fc < fd
        a, b = np.where(left, a, c), np.where(left, d, b)
        c_new = np.where(left, b - ratio * (b - a), d)
        d_new = np.where(left, c, a + ratio * (b - a))
        probe = objective(np.where(left, c_new, d_new))
        fc, fd = np.where(left, probe, fd), np.where(left, fc, probe)
        c, d = c_new, d_new
    return np.minimum(np.minimum(np.minimum(fc, fd), grid_obj.min(axis=0)), 0.0)


def chernoff(beta: np.ndarray, w2: np.ndarray, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.exp(chernoff_log_delta(beta, w2, eps, +1)), np.exp(chernoff_log_delta(beta, w2, eps, -1))


def best_time(fn, repeat: int) -> tuple[float, object]:  # noqa: ANN001 - any callable
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def ratio_range(num: np.ndarray, den: np.ndarray) -> str:
    ok = (den > 1e-300) & (den < 1)
    r = num[ok] / den[ok]
    return f"min {r.min():.3g}, median {np.median(r):.3g}, max {r.max():.3g} ({ok.sum()} values with bound < 1)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--K", type=int, default=300, help="eigen-coordinates")
    ap.add_argument("--R", type=int, default=8, help="realisations of w")
    ap.add_argument("--wscale", type=float, default=0.1, help="scale of the whitened mean difference w")
    ap.add_argument("--beta-max", type=float, default=10.0, help="largest |beta| (smallest is 1e-4)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=5, help="timings are the best of this many runs")
    args = ap.parse_args()

    beta, w2 = build(args.K, args.R, args.wscale, args.seed, args.beta_max)
    print(
        f"K={args.K} (beta in [{beta.min():.3g}, {beta.max():.3g}], {int((beta < 0).sum())} negative), "
        f"R={args.R}, wscale={args.wscale}, eps={EPS.tolist()}"
    )
    exact_tails(beta, w2, EPS)  # warm-up (imports, allocations)
    chernoff(beta, w2, EPS)
    t_exact, ex = best_time(lambda: exact_tails(beta, w2, EPS), args.repeat)
    t_chern, (c_up, c_lo) = best_time(lambda: chernoff(beta, w2, EPS), args.repeat)

    print(f"\nexact    exact_tails          : {t_exact * 1e3:8.1f} ms  (both tails and the hockey stick)")
    print(f"Chernoff grid + golden section: {t_chern * 1e3:8.1f} ms  (both tails)")
    print(f"ratio exact / Chernoff        : {t_exact / t_chern:8.2f}x  (best of {args.repeat})")

    np.set_printoptions(linewidth=120)
    print("\nrealisation 0:")
    print("  exact    upper :", np.array2string(ex.upper[:, 0], precision=4))
    print("  Chernoff upper :", np.array2string(c_up[:, 0], precision=4))
    print("  exact    lower :", np.array2string(ex.lower[:, 0], precision=4))
    print("  Chernoff lower :", np.array2string(c_lo[:, 0], precision=4))
    print("  exact    delta :", np.array2string(ex.delta[:, 0], precision=4))
    print("  Chernoff delta :", np.array2string(np.minimum(1, c_up + c_lo)[:, 0], precision=4))
    print("  hockey stick   :", np.array2string(ex.hockey_stick[:, 0], precision=4))

    print("\nlooseness of the bound, exact / Chernoff over all (eps, realisation):")
    print("  upper tail :", ratio_range(ex.upper, c_up))
    print("  lower tail :", ratio_range(ex.lower, c_lo))
    c_delta = np.minimum(1, c_up + c_lo)
    print("  delta      :", ratio_range(ex.delta, c_delta))
    if np.any(ex.upper > c_up * (1 + 1e-9)) or np.any(ex.lower > c_lo * (1 + 1e-9)):
        raise SystemExit("exact tail above the Chernoff bound")

    both = exact_tails(beta, w2, np.concatenate([EPS, -EPS]))
    E = EPS.size
    print("\nconsistency of the exact tails:")
    print(f"  max |Pr(L > x) + Pr(L < x) - 1| (x = +-eps): {np.abs(both.upper[:E] + both.lower[E:] - 1).max():.2e}")
    print(f"  H <= Pr(L > eps) everywhere: {bool(np.all(ex.hockey_stick <= ex.upper * (1 + 1e-12)))}")


if __name__ == "__main__":
    main()
