"""D-DP-PM on the common task: what can be said of its δ under the gossip trust model (docs/common_task.md).

Its releases have data-dependent covariances, so no certified δ exists. What the project can prove is a floor:
the hockey-stick δ (Definition 1) of the first, noise-free release ``X_jᵀq_j^(0)`` under the worst neighbour the
floor's search found (:mod:`ddppm.accounting.floor`), which every observer on the network sees whatever the
parameters. :func:`common_lower_bounds` turns the floor table of one data set into the common task's lower-bound
rows (:mod:`ddppm.common_task.bounds`): network view only, the trust model ``gossip``.
"""

from __future__ import annotations

import pandas as pd

from ddppm.common_task.bounds import BOUND_COLUMNS
from ddppm.methods.ddppm.method import DDPPM

FLOOR_BASIS = (
    "parameter-free floor: hockey-stick δ of the noise-free first release under the worst neighbour found "
    "(network view; searched among ‖x − x′‖ ≤ 1 moves, which are replace_one neighbours too, so it bounds δ "
    "under either adjacency); no choice of T, σ, α reaches a smaller δ"
)


def common_lower_bounds(floor: pd.DataFrame) -> pd.DataFrame:
    """The network-view rows of a floor table (:func:`ddppm.methods.ddppm.steps.floor_table`) as lower bounds on
    D-DP-PM's δ for every parameter choice: columns :data:`ddppm.common_task.bounds.BOUND_COLUMNS`."""
    network = floor[floor["view"] == "network"]
    out = pd.DataFrame(
        {
            "dataset": network["dataset"].to_numpy(),
            "method": DDPPM.name,
            "label": f"{DDPPM.label} (journal), network view",
            "trust_model": DDPPM.trust_model,
            "eps": network["eps"].to_numpy(float),
            "delta_at_least": network["floor_hockey"].to_numpy(float),
            "basis": FLOOR_BASIS,
        }
    )
    return out[list(BOUND_COLUMNS)]
