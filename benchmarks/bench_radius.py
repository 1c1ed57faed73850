"""How κ of the clipping radius was chosen: a sweep on a simulated log-normal factor model, never on a bench data set
(docs/bounds.md, "The clipping radius").

    .venv/bin/python benchmarks/bench_radius.py               # κ ∈ {2√2, 10, 30, 100} and the fixed radius
    .venv/bin/python benchmarks/bench_radius.py --seeds 12

Records: n = 10,000 rows of d = 8 features, ``exp(1 + f Lᵀ + 0.5 e)`` with two standard normal factors f, loadings
L ~ N(0, 0.5²) and noise e ~ N(0, 1), capped at 1,000 (declared bounds [0, 1,000]: the simulation's design). The
release: ``PrivatePCA(2, ε, 10⁻⁵, method="analyze_gauss", noise="simulation")`` (a curator; the default private
standardisation), with ``common.preprocessing.radius`` set per row. Error: ‖V̂V̂ᵀ − VVᵀ‖_F/√(2k) against the PCA of
the standardised records, mean over the seeds.
"""

from __future__ import annotations

import argparse

import numpy as np

import ddppm.release.estimator as estimator
from ddppm import PrivatePCA
from ddppm.common_task.clip_radius import OPERATOR_KAPPA, RadiusPlan
from ddppm.common_task.preprocessing import PreprocessingPlan
from ddppm.common_task.task import subspace_error

EPSILONS = (1.0, 5.0, 50.0)
KAPPAS = (OPERATOR_KAPPA, 10.0, 30.0, 100.0)


def records(n: int = 10_000, d: int = 8, seed: int = 7) -> np.ndarray:
    """The module docstring's log-normal factor model."""
    rng = np.random.default_rng(seed)
    factors, loadings = rng.standard_normal((n, 2)), rng.normal(0, 0.5, (2, d))
    return np.minimum(np.exp(1.0 + factors @ loadings + 0.5 * rng.standard_normal((n, d))), 1000.0)


def mean_error(X: np.ndarray, radius: RadiusPlan, eps: float, seeds: int) -> float:
    """The release's mean error with ``radius`` (the estimator's plan patched for this call only)."""
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    V = np.linalg.eigh(Z.T @ Z)[1][:, ::-1][:, :2]
    bounds = {"source": "the simulation's design: values capped at 1,000", "all_features": [0, 1000]}
    original = estimator.PreprocessingPlan
    estimator.PreprocessingPlan = lambda scale: PreprocessingPlan(scale=scale, radius=radius)
    try:
        return float(np.mean([subspace_error(PrivatePCA(2, eps, 1e-5, bounds, method="analyze_gauss",
                                                        noise="simulation", random_state=s).fit(X).components_.T, V)
                              for s in range(seeds)]))  # fmt: skip
    finally:
        estimator.PreprocessingPlan = original


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=6)
    args = parser.parse_args()
    X = records()
    print(f"{'radius':>16} | " + " ".join(f"ε = {eps:<5g}" for eps in EPSILONS))
    rows = [("fixed (2√d)", RadiusPlan(adaptive=False))] + [(f"κ = {k:.3g}", RadiusPlan(kappa=k)) for k in KAPPAS]
    for label, plan in rows:
        errors = [mean_error(X, plan, eps, args.seeds) for eps in EPSILONS]
        print(f"{label:>16} | " + " ".join(f"{e:<9.4f}" for e in errors), flush=True)


if __name__ == "__main__":
    main()
