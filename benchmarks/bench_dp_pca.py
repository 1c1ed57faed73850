"""DP-PCA's batch step, factored against direct: time per ε of 100 runs on the common task's spiked set, and the
largest difference of the two routes' distances and clipped sums.

    .venv/bin/python benchmarks/bench_dp_pca.py [--runs 100] [--repeat 3]

The factored route (``ddppm.methods.dp_pca.batch_distances`` and ``clipped_sum``) reads each batch of rows three
times and forms no (runs, B, d) array beyond the rows; the direct route forms the gradients, their offsets from the
centre and the clipped points (``clip_to_ball``). Both are timed over a whole run of DP-PCA (every step), the
direct one by swapping it in.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import ddppm.methods.dp_pca as dp
from ddppm.common_task.task import CommonTask
from ddppm.core.seeds import run_generators
from ddppm.data.synthetic import spiked_synthetic
from ddppm.methods import get_method


def _direct_distances(rows: np.ndarray, w: np.ndarray, centre: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = np.einsum("rbd,rd->rb", rows, w)
    offsets = rows * p[..., None] - centre[:, None, :]
    return p, np.linalg.norm(offsets, axis=-1)


def _direct_sum(rows: np.ndarray, p: np.ndarray, distances: np.ndarray, centre: np.ndarray,
                radius: np.ndarray) -> np.ndarray:  # fmt: skip
    return dp.clip_to_ball(rows * p[..., None], centre, radius).sum(axis=1)


def _best(call, repeat: int) -> tuple[float, np.ndarray]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = call()
        times.append(time.perf_counter() - start)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    X = spiked_synthetic(20_000, 50)
    X /= np.linalg.norm(X, axis=1).max()
    task = CommonTask(X, (np.arange(len(X)),), 1)
    method = get_method("dp_pca")
    calibrated = method.common_calibrate(task, 5.0, 1e-5, {"adjacency": "replace_one"})

    def run() -> np.ndarray:
        return dp.dp_pca_transcript(task.X, calibrated.params, run_generators(0, ("bench",), range(args.runs)))["sums"]

    factored, sums = _best(run, args.repeat)
    routes = (dp.batch_distances, dp.clipped_sum)
    dp.batch_distances, dp.clipped_sum = _direct_distances, _direct_sum
    try:
        direct, direct_sums = _best(run, args.repeat)
    finally:
        dp.batch_distances, dp.clipped_sum = routes
    print(f"DP-PCA, spiked set (n = 20,000, d = 50, T = {dp.batch_count(len(X))}), {args.runs} runs, one ε")
    print(f"  factored route: {factored:.3f} s   direct route: {direct:.3f} s   ratio {direct / factored:.2f}×")
    print(f"  largest difference of the noisy sums: {np.max(np.abs(sums - direct_sums)):.2e} (round-off)")


if __name__ == "__main__":
    main()
