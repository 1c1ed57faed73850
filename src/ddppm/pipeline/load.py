"""Build a problem from a dataset name, as the workflow does, with every default from the config schema."""

from __future__ import annotations

from ddppm.core.partition import parts_from_assignment
from ddppm.core.problem import DistributedProblem
from ddppm.pipeline.config import dataset_config, validate_config
from ddppm.pipeline.steps import matrix_of, partition_and_network, prepare_dataset


def load_problem(
    dataset: str = "diabetes",
    *,
    partition: dict | None = None,
    network: dict | None = None,
    **dataset_options,
) -> DistributedProblem:
    """A dataset, normalised and split among agents on a network, as the workflow builds it.

    Every option not given takes the configuration schema's default (4 agents on the paper's ring,
    ``c = 20``, standardised rows scaled into the unit ball). ``partition`` and ``network`` are dicts of
    the config sections of the same names; other keywords are ``dataset_options.<dataset>`` keys.

    >>> problem = load_problem("wine")
    >>> problem.m, problem.d
    (4, 13)
    """
    config = validate_config(
        {
            "datasets": [dataset],
            "epsilons": [1.0],
            "delta_limits": {dataset: [0.5]},
            "partition": dict(partition or {}),
            "network": dict(network or {}),
            "dataset_options": {dataset: dict(dataset_options)} if dataset_options else {},
        }
    )
    cfg = dataset_config(config, dataset)
    frame, _ = prepare_dataset(dataset, cfg["dataset"])
    part, net, meta = partition_and_network(len(frame), cfg["partition"], cfg["network"])
    W = net[[c for c in net.columns if c.startswith("w")]].to_numpy(dtype=float)
    parts = parts_from_assignment(part.sort_values("row_id")["agent"].to_numpy(), W.shape[0])
    return DistributedProblem.from_partition(matrix_of(frame.sort_values("row_id")), parts, W, meta["c"])
