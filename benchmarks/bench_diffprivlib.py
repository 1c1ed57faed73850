"""Benchmark: IBM diffprivlib's PCA, the peer users already run, against the project's central methods on the
common task (docs/common_task.md, "The peer: diffprivlib").

diffprivlib 0.6.6 does not import beside the project's scikit-learn (1.9), so it runs in the peers' environment
(``--peer-venv``, default ``.venv-peers``, built from ``requirements/peers.lock`` by ``requirements/install.sh``),
through its own API (``diffprivlib.models.PCA(n_components=k, epsilon=ε, data_norm=1, centered=True)``). The rows,
the target (top-k eigenvectors of ``XᵀX``) and the metric (``‖V̂V̂ᵀ − VVᵀ‖_F/√(2k)``) are the project's. The
project's methods with a ``central`` trust model run at the same ε with δ = ``--delta``; diffprivlib's ε is pure (δ
= 0), so at equal ε it promises more.

It prints, per (data set, k, ε), the mean error with its 95 % interval of diffprivlib and of each central
method, the ratio to the best of them, and the seconds per run; ``--csv`` writes the table.

Usage: ``.venv/bin/python benchmarks/bench_diffprivlib.py [--datasets diabetes digits] [--ranks 1 2]
[--epsilons 0.5 1 2 5 10] [--runs 50] [--delta 1e-5] [--csv results/benchmarks/diffprivlib.csv]``
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ddppm.common.base import common_task_methods
from ddppm.common.peers import peer_estimates
from ddppm.common.run import run_methods, summarise
from ddppm.common.task import CommonTask, subspace_error
from ddppm.config import validate_config
from ddppm.pipeline.config import dataset_config
from ddppm.pipeline.steps import matrix_of, prepare_dataset

REPO = Path(__file__).resolve().parents[1]


def peer_python(venv: Path) -> Path:
    """The peers' interpreter (``requirements/install.sh`` builds ``.venv-peers`` from its hashed lock)."""
    python = venv / "bin" / "python"
    if subprocess.run([str(python), "-c", "import diffprivlib"], capture_output=True).returncode != 0:
        sys.exit(f"no diffprivlib at {python}: run requirements/install.sh (./run.sh and ./run_tests.sh do)")
    return python


def rows(config: dict, dataset: str) -> np.ndarray:
    """The rows exactly as the pipeline's rule prepare_dataset makes them (config.yaml's loader options)."""
    frame, _ = prepare_dataset(dataset, dataset_config(config, dataset)["dataset"])
    return matrix_of(frame)


def interval(errors: np.ndarray) -> tuple[float, float]:
    return float(errors.mean()), float(1.96 * errors.std(ddof=1) / np.sqrt(errors.size))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["diabetes", "digits"])
    parser.add_argument("--ranks", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--epsilons", nargs="+", type=float, default=[0.5, 1.0, 2.0, 5.0, 10.0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--peer-venv", type=Path, default=REPO / ".venv-peers")
    parser.add_argument("--csv", type=Path, default=None)
    args = parser.parse_args()

    import yaml

    config = yaml.safe_load((REPO / "config.yaml").read_text())
    validate_config(config)
    python = peer_python(args.peer_venv)
    central = {name: m for name, m in common_task_methods().items() if m.trust_model == "central"}
    options = {"adjacency": "replace_one", "iterations": int(config.get("common", {}).get("iterations", 10))}
    table = []
    for dataset in args.datasets:
        X = rows(config, dataset)
        start = time.perf_counter()
        peer = peer_estimates(python, X, args.ranks, args.epsilons, args.runs)
        peer_seconds = (time.perf_counter() - start) / (args.runs * len(args.ranks) * len(args.epsilons))
        for k in args.ranks:
            task = CommonTask(X, tuple(np.array_split(np.arange(X.shape[0]), 4)), k)
            ours = summarise(run_methods(task, args.epsilons, args.delta, args.runs, 0, options, central, dataset))
            for eps in args.epsilons:
                mean, half = interval(subspace_error(peer[(k, eps)], task.V))
                table.append({"dataset": dataset, "k": k, "eps": eps, "method": "diffprivlib PCA (pure ε)",
                              "delta": 0.0, "error_mean": mean, "error_half_ci": half,
                              "seconds_per_run": peer_seconds})  # fmt: skip
                for row in ours[ours["eps"] == eps].itertuples():
                    table.append({"dataset": dataset, "k": k, "eps": eps, "method": row.method, "delta": row.delta,
                                  "error_mean": row.error_mean, "error_half_ci": row.error_ci_hi - row.error_mean,
                                  "seconds_per_run": row.seconds_per_run})  # fmt: skip
    out = pd.DataFrame(table)
    best = out[out["method"] != "diffprivlib PCA (pure ε)"].groupby(["dataset", "k", "eps"])["error_mean"].min()
    out["ratio_to_best_project_central"] = (
        out["error_mean"].to_numpy() / best.loc[list(zip(out["dataset"], out["k"], out["eps"], strict=True))].to_numpy()
    )
    with pd.option_context("display.width", 160, "display.max_rows", 500, "display.float_format", "{:.4g}".format):
        print(out.to_string(index=False))
    if args.csv is not None:
        args.csv.parent.mkdir(parents=True, exist_ok=True)
        out.to_csv(args.csv, index=False)
        print(f"wrote {args.csv}")


if __name__ == "__main__":
    main()
