"""Data, partition and network steps, and rebuilding the problem from the pipeline's files.

Every function is usable without Snakemake: it takes plain dictionaries (the validated config) and
returns DataFrames plus the metadata stored beside them in Parquet.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from ddppm.core.io import read_parquet
from ddppm.core.network import mixing_matrix, second_eigenvalue, validate_mixing_matrix
from ddppm.core.partition import partition_rows, parts_from_assignment
from ddppm.core.problem import DistributedProblem
from ddppm.data import Dataset, check_unit_ball, load_dataset, normalize


def setup_logging(log_path: str | Path | None) -> logging.Logger:
    """Send this step's log (and uncaught tracebacks) to the rule's ``log:`` file."""
    logger = logging.getLogger("ddppm")
    logger.setLevel(logging.INFO)
    logger.handlers.clear()
    handler: logging.Handler = logging.FileHandler(log_path, mode="w") if log_path else logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    if log_path:
        sys.stderr = open(log_path, "a")  # noqa: SIM115 - tracebacks of a failing job land in its log
    return logger


# --- data, partition, network ------------------------------------------------------------------------------


def prepare_dataset(name: str, options: dict) -> tuple[pd.DataFrame, dict]:
    """Load ``name`` and normalise it so every row is in the unit ball.

    ``options`` is ``dataset_options.<name>`` with the schema's defaults filled in (:func:`dataset_config`).
    """
    dataset = load_raw_dataset(name, options)
    X, info = normalize(dataset.matrix, options["normalization"])
    check_unit_ball(X, key=f"dataset_options.{name}")
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    frame.insert(0, "row_id", np.arange(X.shape[0]))
    return frame, {"dataset": dataset.meta, "normalization": info}


def load_raw_dataset(name: str, options: dict) -> Dataset:
    """The raw records of ``name`` (not normalised), as ``dataset_options.<name>`` (defaults filled) loads them."""
    options = {k: v for k, v in options.items() if k not in ("normalization", "public_bounds")}
    source = options.pop("source")
    loader_args = {k: options.pop(k) for k in ("url", "sha256", "seed") if k in options}
    return load_dataset(name, source=source, **loader_args, **options)


def matrix_of(frame: pd.DataFrame) -> np.ndarray:
    return frame[[c for c in frame.columns if c.startswith("x")]].to_numpy(dtype=float)


def partition_and_network(n: int, partition_cfg: dict, network_cfg: dict) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Row → agent table and the mixing matrix with its checks (Assumption 2) and ``λ₂``."""
    m = int(partition_cfg["m"])
    parts = partition_rows(
        n, m, seed=partition_cfg["seed"], shuffle=partition_cfg["shuffle"], sizes=partition_cfg.get("sizes")
    )
    agent = np.empty(n, dtype=int)
    for i, rows in enumerate(parts):
        agent[rows] = i
    part_df = pd.DataFrame({"row_id": np.arange(n), "agent": agent})
    W = mixing_matrix(network_cfg["topology"], m, seed=network_cfg["seed"], edge_prob=network_cfg.get("edge_prob"))
    validate_mixing_matrix(W, key="network")
    lam2 = second_eigenvalue(W)
    net_df = pd.DataFrame(W, columns=[f"w{j}" for j in range(m)])
    net_df.insert(0, "agent", np.arange(m))
    meta = {
        "c": int(network_cfg["c"]),
        "topology": network_cfg["topology"],
        "lambda2": lam2,
        "m": m,
        "sizes": [len(p) for p in parts],
    }
    return part_df, net_df, meta


def problem_from_files(
    data_path: str | Path, partition_path: str | Path, network_path: str | Path
) -> DistributedProblem:
    """Rebuild the :class:`DistributedProblem` from the pipeline's Parquet files."""
    data, _ = read_parquet(data_path)
    part, _ = read_parquet(partition_path)
    net, net_meta = read_parquet(network_path)
    W = net[[c for c in net.columns if c.startswith("w")]].to_numpy(dtype=float)
    validate_mixing_matrix(W, key="network")
    X = matrix_of(data.sort_values("row_id"))
    assign = part.sort_values("row_id")["agent"].to_numpy()
    return DistributedProblem.from_partition(X, parts_from_assignment(assign, W.shape[0]), W, int(net_meta["c"]))
