"""Secure aggregation through Flower's SecAgg+ (``flwr`` 1.42): the coordinator learns the parties' sum and
nothing else (docs/federation.md, "Secure aggregation").

SecAgg+ (Bell et al., CCS 2020) as Flower 1.42 builds it is a legacy workflow: ``secaggplus_mod`` on each
party's ``train`` handler, :class:`flwr.server.workflow.SecAggPlusWorkflow` on the coordinator, in the old
FitIns/FitRes layout. Each party divides its reply by a public ``scale`` so that every entry lies in [−1, 1],
quantises it to 2^:data:`QUANTISATION_BITS` levels (unbiased random rounding), masks it with pairwise and
self masks, and the coordinator unmasks the sum of the quantised vectors only. The workflow returns a weighted
mean; every party reports weight 1, so the sum is that mean times the number summed. What it costs and where it ends:

* **Precision.** The quantisation step is 2·scale/2^30 per party: about 10⁻⁹·scale per entry; far below the noise.
* **The scale is public**: ``n + 50·s`` with n the parties' total rows (every statistic of rows in the unit ball
  is at most n_j in absolute value) and s the largest noise standard deviation a party adds in the step. A party
  clips its reply to it; that changes a reply only when its noise passes 50 standard deviations (probability below
  10⁻⁵⁴⁰ per entry), which adds nothing representable to δ (the argument of
  :func:`ddppm.common_task.base.failure_delta`).
* **All or nothing.** SecAgg+ would unmask the sum of the parties that stayed; a release needs every party's share
  of the noise, so a sum over fewer parties is refused and nothing is released.
* **Research grade.** Flower's masks are expanded from 32 bits of each shared secret (numpy's ``RandomState``;
  ``flwr/common/secure_aggregation/secaggplus_utils.py``); say so to whoever relies on it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

QUANTISATION_BITS = 30
"""Flower casts quantised values to int32: 2^30 is the finest it takes."""
MODULUS_BITS = 40
"""The masked sum of p quantised vectors must stay below 2^40: up to 2^10 parties."""
SCALE_SIGMAS = 50.0


def public_scale(n: int, largest_std: float) -> float:
    """``n + 50·s`` (module docstring)."""
    return float(n + SCALE_SIGMAS * largest_std)


POLL_SECONDS = 0.05
"""How often the coordinator asks for SecAgg+'s replies (Flower 1.42's ``send_and_receive`` waits 3 s between pulls,
and every sum takes four exchanges)."""


class QuickReplies:
    """A Grid whose ``send_and_receive`` asks for the replies every :data:`POLL_SECONDS` (Flower's own loop, with its
    3 s sleep shortened); everything else is the wrapped Grid's."""

    def __init__(self, grid: Any) -> None:
        self._grid = grid

    def __getattr__(self, name: str) -> Any:
        return getattr(self._grid, name)

    def send_and_receive(self, messages: Any, *, timeout: float | None = None) -> list[Any]:
        import time

        pending = {i for i in self._grid.push_messages(messages) if i}
        deadline = time.time() + (timeout if timeout is not None else 0.0)
        replies: list[Any] = []
        while timeout is None or time.time() < deadline:
            found = list(self._grid.pull_messages(pending))
            replies.extend(found)
            pending.difference_update(m.metadata.reply_to_message_id for m in found)
            if not pending:
                break
            time.sleep(POLL_SECONDS)
        return replies


def secure_sum(grid: Any, context: Any, nodes: Sequence[int], config: dict[str, Any], scale: float,
               timeout: float) -> np.ndarray:  # fmt: skip
    """The sum of the parties' replies (each divided by ``scale``, clipped to [−1, 1]) through SecAgg+, times
    ``scale``; ``config`` reaches every party as its ``fitins.config``. Refuses unless every party was summed: the
    reconstruction needs every party's shares, so the coordinator never unmasks a sum over fewer parties (whose
    noise would be less than the certificate's)."""
    from flwr.app import ArrayRecord, ConfigRecord
    from flwr.common import parameters_to_ndarrays
    from flwr.server import LegacyContext, ServerConfig
    from flwr.server.compat.grid_client_proxy import GridClientProxy
    from flwr.server.strategy import FedAvg
    from flwr.server.workflow import SecAggPlusWorkflow

    from ddppm.federation.coordinator import PartyFailed

    grid = QuickReplies(grid)
    if len(nodes) >= 2 ** (MODULUS_BITS - QUANTISATION_BITS):
        raise ValueError(f"secure aggregation: {len(nodes)} parties would overflow the masked sum")

    class KeepSum(FedAvg):
        """The workflow writes the unmasked aggregate into the results: keep it, and how many were summed."""

        aggregate: list[np.ndarray] | None = None
        shape: tuple[int, ...] = ()
        summed: list[int] = []

        def aggregate_fit(self, server_round, results, failures):  # type: ignore[override]
            self.summed = [int(proxy.node_id) for proxy, _ in results]
            if results:
                self.aggregate = parameters_to_ndarrays(results[0][1].parameters)
                self.shape = tuple(int(s) for s in json.loads(str(results[0][1].metrics["shape"])))
            return (results[0][1].parameters if results else None), {}

    strategy = KeepSum(fraction_fit=1.0, fraction_evaluate=0.0, min_fit_clients=len(nodes),
                       min_available_clients=len(nodes), on_fit_config_fn=lambda _: dict(config))  # fmt: skip
    legacy = LegacyContext(context, config=ServerConfig(num_rounds=1), strategy=strategy)
    for node in nodes:
        legacy.client_manager.register(GridClientProxy(node, grid, grid.run.run_id))
    legacy.state.config_records["config"] = ConfigRecord({"current_round": 1})
    legacy.state.array_records["parameters"] = ArrayRecord()
    SecAggPlusWorkflow(num_shares=1.0, reconstruction_threshold=len(nodes), max_weight=1.0, clipping_range=1.0,
                       quantization_range=2**QUANTISATION_BITS, modulus_range=2**MODULUS_BITS,
                       timeout=timeout)(grid, legacy)  # fmt: skip
    if strategy.aggregate is None or len(strategy.summed) != len(nodes):
        raise PartyFailed("a party", str(config.get("step")), f"secure aggregation summed {len(strategy.summed)} "
                          f"of {len(nodes)} parties: one dropped out, refused, or its connection dropped")  # fmt: skip
    return (len(strategy.summed) * scale * strategy.aggregate[0]).reshape(strategy.shape)


def secure_reply(value: np.ndarray, scale: float) -> Any:
    """A party's reply in the FitRes layout ``secaggplus_mod`` masks: its value over the public scale, clipped to
    [−1, 1] (module docstring), weight 1; its shape (public) in the plaintext metrics."""
    from flwr.app import ArrayRecord, ConfigRecord, MetricRecord, RecordDict

    value = np.asarray(value, float)
    scaled = np.clip(value.ravel() / scale, -1.0, 1.0)
    return RecordDict({"fitres.parameters": ArrayRecord([scaled]),
                       "fitres.num_examples": MetricRecord({"num_examples": 1}),
                       "fitres.metrics": ConfigRecord({"shape": json.dumps(list(value.shape))}),
                       "fitres.status": ConfigRecord({"code": 0, "message": "OK"})})  # fmt: skip
