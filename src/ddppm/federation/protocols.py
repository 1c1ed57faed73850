"""How a method runs across parties: its two halves, declared by the method itself (docs/federation.md,
"Methods", and "Adding a method").

A method that runs in a federation sets ``federated = True`` and defines
:meth:`~ddppm.common_task.base.CommonTaskMethod.party_release` (what a party sends at a step: a statistic of its
own standardised rows plus its noise, drawn as the one-process estimate draws that party's part) and, when the
top k of the summed releases is not its answer, :meth:`~ddppm.common_task.base.CommonTaskMethod.federated_estimate`
(the coordinator's half). ``secure_sum_only``: with secure noise, only through secure aggregation.
"""

from __future__ import annotations

from typing import Any

from ddppm.core.errors import ConfigError
from ddppm.methods import common_task_methods


def federated_methods() -> list[str]:
    """The names of the methods that run across parties today."""
    served = ("local", "secure_aggregation", "gossip")
    return sorted(n for n, m in common_task_methods().items() if m.federated and m.trust_model in served)


def protocol_of(method: Any) -> Any:
    """``method`` itself when it runs across parties, else a clear refusal naming those that do."""
    if not getattr(method, "federated", False):
        raise ConfigError(f"federation: method {method.name!r} has no federated protocol yet; the methods that run "
                          f"across parties are {federated_methods()}")  # fmt: skip
    return method


def released_message(released: Any) -> dict[str, Any]:
    """The released statistics as a message's public part (empty: the records are not centred)."""
    if released is None:
        return {}
    message = {"mean": released.mean, "radius": released.radius}
    if released.variance is not None:
        message["variance"] = released.variance
    return message
