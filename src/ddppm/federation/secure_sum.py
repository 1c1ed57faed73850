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
* **Masks from the full secret.** Flower expands every mask with ``pseudo_rand_gen``, which folds the shared secret
  into 32 bits and seeds numpy's ``RandomState``: whoever holds a masked vector and the sum's self-mask seeds (the
  coordinator, after the unmasking) finds a pairwise mask at p = 2 by trying 2^32 seeds. Both ``secaggplus_mod`` and
  the workflow look that function up as a global of their own module at every call, so :func:`strong_masks`
  replaces it on both sides, for the duration of a sum, by :func:`chacha20_masks`: ChaCha20 keyed by SHA-256 of the
  whole secret, exact rejection sampling (uniform on [0, bound)). The coordinator installs it in :func:`secure_sum`,
  the party in :func:`pinned_secaggplus_mod`; the coordinator says so in every masked step's config
  (:data:`MASKS_KEY`) and a party refuses a sum whose coordinator does not, so that an old coordinator and a new
  party never release a sum of mismatched masks (a coordinator that says so and does not spoils only its own sum:
  the party's masks are the strong ones whatever it says).
* **Research grade still.** Flower's SecAgg+ with ddppm's checks around it, tested here against the attacks in
  ``tests/federation/adversary/test_secure_sum_pinned.py``; not an audited implementation.

The coordinator is not trusted to run SecAgg+ honestly. Each party runs :func:`pinned_secaggplus_mod`, which checks
every SecAgg+ message against the party's own agreement before Flower's ``secaggplus_mod`` sees it (what that stops,
and what it cannot, is in its docstring: a coordinator that simulates parties still can).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ddppm.federation.plan import REFUSED, Refused  # REFUSED: the reason of every refusal the pinned mod sends
from ddppm.federation.plan import log as party_log

QUANTISATION_BITS = 30
"""Flower casts quantised values to int32: 2^30 is the finest it takes."""
MODULUS_BITS = 40
"""The masked sum of p quantised vectors must stay below 2^40: up to 2^10 parties."""
CLIPPING_RANGE = 1.0
"""A party's reply over the public scale lies in [−1, 1] (:func:`secure_reply`)."""
MAX_WEIGHT = 1.0
"""Every party reports weight 1 (module docstring)."""
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

    fit_config = {**config, MASKS_KEY: MASKS}  # the parties refuse a coordinator that does not expand as they do
    strategy = KeepSum(fraction_fit=1.0, fraction_evaluate=0.0, min_fit_clients=len(nodes),
                       min_available_clients=len(nodes), on_fit_config_fn=lambda _: dict(fit_config))  # fmt: skip
    legacy = LegacyContext(context, config=ServerConfig(num_rounds=1), strategy=strategy)
    for node in nodes:
        legacy.client_manager.register(GridClientProxy(node, grid, grid.run.run_id))
    legacy.state.config_records["config"] = ConfigRecord({"current_round": 1})
    legacy.state.array_records["parameters"] = ArrayRecord()
    # every party shares with every party (1.0: all of them), and every share is needed: the pinned mod checks both
    workflow = SecAggPlusWorkflow(num_shares=1.0, reconstruction_threshold=len(nodes), max_weight=MAX_WEIGHT,
                                  clipping_range=CLIPPING_RANGE, quantization_range=2**QUANTISATION_BITS,
                                  modulus_range=2**MODULUS_BITS, timeout=timeout)  # fmt: skip
    with strong_masks():
        workflow(grid, legacy)
    if strategy.aggregate is None or len(strategy.summed) != len(nodes):
        raise PartyFailed("a party", str(config.get("step")), f"secure aggregation summed {len(strategy.summed)} "
                          f"of {len(nodes)} parties: one dropped out, refused, or its connection dropped")  # fmt: skip
    return (len(strategy.summed) * scale * strategy.aggregate[0]).reshape(strategy.shape)


def secure_reply(value: np.ndarray, scale: float) -> Any:
    """A party's reply in the FitRes layout ``secaggplus_mod`` masks: its value over the public scale, clipped to
    [−1, 1] (module docstring), weight 1; its shape (public) in the plaintext metrics."""
    from flwr.app import ArrayRecord, ConfigRecord, MetricRecord, RecordDict

    if not (isinstance(scale, float) and np.isfinite(scale) and scale > 0):  # the party checked it is its own
        raise ValueError(f"secure aggregation's public scale must be a positive finite number, not {scale!r}")
    value = np.asarray(value, float)
    scaled = np.clip(value.ravel() / scale, -1.0, 1.0)
    return RecordDict({"fitres.parameters": ArrayRecord([scaled]),
                       "fitres.num_examples": MetricRecord({"num_examples": 1}),
                       "fitres.metrics": ConfigRecord({"shape": json.dumps(list(value.shape))}),
                       "fitres.status": ConfigRecord({"code": 0, "message": "OK"})})  # fmt: skip


# --- masks from the full shared secret -------------------------------------------------------------------------------

MASKS = "chacha20-sha256-rejection-v1"
"""The mask expansion both sides install (:func:`chacha20_masks`)."""
MASKS_KEY = "ddppm-secagg-masks"
"""The key of :data:`MASKS` in every masked step's ``fitins.config``: a party refuses a sum that does not carry it."""
_MASK_DOMAIN = b"ddppm secagg+ mask expansion v1\x00"
_MASK_MODULES = ("flwr.client.mod.secure_aggregation.secaggplus_mod",
                 "flwr.server.workflow.secure_aggregation.secaggplus_workflow")  # fmt: skip
"""The modules that call ``pseudo_rand_gen`` (each imported the name: each has its own global to replace)."""


def chacha20_masks(seed: bytes, num_range: int, dimensions_list: list[tuple[int, ...]]) -> list[np.ndarray]:
    """Flower's ``pseudo_rand_gen`` (same arguments, same output: one int64 array per shape), from the whole seed.

    The key is SHA-256 of a domain label and every byte of ``seed`` (a 32-byte self-mask seed, or the 44-byte
    base64 of a 32-byte ECDH+HKDF pairwise key: 256 bits either way); ChaCha20's keystream (nonce 0: a key expands
    one stream) is read as little-endian 64-bit words. A word is kept if it lies below the largest multiple of
    ``num_range`` that fits in 2^64 and reduced modulo ``num_range``: every kept word's residue is exactly uniform on
    [0, num_range) (no modulo bias; for a power of two every word is kept). The draws fill the shapes in order, so
    the same seed and shapes give the same arrays on the party's side and on the coordinator's.

    Flower's own draws ``randint(0, num_range − 1)``, i.e. on [0, num_range − 2]; masks from this one are uniform on
    the whole group, which is what a one-time pad modulo ``num_range`` needs.
    """
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms

    if not 2 <= num_range <= 2**63:
        raise ValueError(f"mask expansion: the bound {num_range} must lie in [2, 2^63] (int64 output)")
    key = hashlib.sha256(_MASK_DOMAIN + bytes(seed)).digest()
    stream = Cipher(algorithms.ChaCha20(key, bytes(16)), mode=None).encryptor()
    limit = (2**64 // num_range) * num_range  # 2^64 exactly when num_range is a power of two: nothing to reject
    sizes = [math.prod(shape) for shape in dimensions_list]
    draws = np.empty(sum(sizes), dtype=np.uint64)
    filled = 0
    while filled < len(draws):
        missing = len(draws) - filled
        # at least half the words are kept (limit > 2^63); a few extra make one more pass rare
        words = np.frombuffer(stream.update(bytes(8 * (missing + missing // 8 + 8))), dtype="<u8")
        if limit < 2**64:
            words = words[words < np.uint64(limit)]
        kept = (words[:missing] % np.uint64(num_range)) if limit < 2**64 else words[:missing] & np.uint64(num_range - 1)
        draws[filled : filled + len(kept)] = kept
        filled += len(kept)
    out, start = [], 0
    for shape, size in zip(dimensions_list, sizes, strict=True):
        out.append(draws[start : start + size].astype(np.int64).reshape(shape))
        start += size
    return out


def _mask_modules() -> dict[str, Any]:
    """The modules of :data:`_MASK_MODULES`, imported (by name: each package re-exports a function of its module's
    name, which ``import … as`` would bind instead)."""
    import flwr.client.mod.secure_aggregation.secaggplus_mod  # noqa: F401
    import flwr.server.workflow.secure_aggregation.secaggplus_workflow  # noqa: F401

    return {name: sys.modules[name] for name in _MASK_MODULES}


_MASKS_LOCK = threading.Lock()
_MASKS_USERS = 0
_FLOWER_MASKS: dict[str, Any] = {}


@contextlib.contextmanager
def strong_masks() -> Iterator[None]:
    """Within this block, ``secaggplus_mod`` and ``SecAggPlusWorkflow`` expand their masks with
    :func:`chacha20_masks` rather than Flower's ``pseudo_rand_gen`` (module docstring).

    Both modules call ``pseudo_rand_gen`` through their own module global at every call, so replacing those two
    globals is the whole hook. Blocks nest and may overlap across threads (the in-process Grid runs the coordinator
    and its parties in one process): the first to enter installs, the last to leave restores Flower's."""
    global _MASKS_USERS
    with _MASKS_LOCK:
        if _MASKS_USERS == 0:
            for name, module in _mask_modules().items():
                _FLOWER_MASKS[name] = module.pseudo_rand_gen
                module.pseudo_rand_gen = chacha20_masks
        _MASKS_USERS += 1
    try:
        yield
    finally:
        with _MASKS_LOCK:
            _MASKS_USERS -= 1
            if _MASKS_USERS == 0:
                for name, module in _mask_modules().items():
                    module.pseudo_rand_gen = _FLOWER_MASKS.pop(name)


# --- the party's check of the coordinator's SecAgg+ parameters ------------------------------------------------------

_PIN_RECORD = "ddppm-secagg-pin"
_STAGES = ("setup", "share_keys", "collect_masked_vectors", "unmask")
class _HandlerRefused(Exception):
    """The party's handler answered with an error (a refusal of its own): Flower's mod would not know what to mask."""


def _pinned_setup(configs: Any, p: int) -> None:
    expected = {"sample_num": p, "share_num": p, "threshold": p, "clipping_range": CLIPPING_RANGE,
                "target_range": 2**QUANTISATION_BITS, "mod_range": 2**MODULUS_BITS,
                "max_weight": MAX_WEIGHT}  # fmt: skip
    for key, value in expected.items():
        got = configs.get(key)
        # type(...) is: True is an int in Python, and 1 == 1.0; the coordinator's types are exactly these
        if type(got) is not type(value) or got != value:
            raise Refused("protocol", f"setup: {key} = {got!r}, the agreement's p = {p} pins it to {value!r}")


def _pinned_peers(configs: Any, p: int, own: int) -> list[int]:
    names = [key for key in configs if key != "stage"]
    try:
        peers = [int(name) for name in names]
    except ValueError:
        raise Refused("protocol", f"share_keys: a peer named {names!r} is not a node id") from None
    if len(peers) != p or len(set(peers)) != p or own not in peers:
        raise Refused("protocol", f"share_keys: peers {sorted(peers)} are not p = {p} distinct nodes with this "
                      f"one ({own})")  # fmt: skip
    return sorted(peers)


def _pinned_sources(msg: Any, configs: Any, pinned: list[int], own: int) -> None:
    sources = list(configs.get("srcs", []))
    others = sorted(set(pinned) - {own})
    if sorted(sources) != others or len(configs.get("ctxts", [])) != len(sources):
        raise Refused("protocol", f"collect_masked_vectors: sources {sources} are not the pinned peers {others}, "
                      "once each")  # fmt: skip
    fitins = msg.content.config_records.get("fitins.config")
    if fitins is None or fitins.get(MASKS_KEY) != MASKS:
        raise Refused("protocol", f"collect_masked_vectors: the coordinator does not expand masks with {MASKS}")


def _pinned_unmask(configs: Any, pinned: list[int]) -> None:
    active, dead = list(configs.get("active_nids", [])), list(configs.get("dead_nids", []))
    if dead:
        raise Refused("protocol", f"unmask: nodes {dead} reported dead (a sum over fewer parties carries less noise)")
    if sorted(active) != pinned:
        raise Refused("protocol", f"unmask: self-mask shares asked for {sorted(active)}, the pinned set is {pinned}")


def _check(msg: Any, ctxt: Any, pin: dict[str, Any]) -> tuple[str, list[int]]:
    """The stage ``msg`` opens and the pinned peers after it, if the message keeps the pin;
    :class:`~ddppm.federation.plan.Refused` (``protocol``) otherwise."""
    from ddppm.federation.agreement import read_agreement

    p = len(read_agreement(str(ctxt.node_config["agreement-path"])).sizes)
    own = int(msg.metadata.dst_node_id)
    configs = msg.content.config_records.get("secaggplus_configs")
    if configs is None:
        raise Refused("protocol", "a train message without SecAgg+'s configs")
    stage = configs.get("stage")
    done = str(pin.get("stage", "unmask"))  # a new node, or one whose last sum ended or was refused
    expected = _STAGES[(_STAGES.index(done) + 1) % len(_STAGES)]
    if stage != expected:  # Flower's mod would accept a setup at any stage: a sum here runs start to end, once
        raise Refused("protocol", f"stage {stage!r} after {done!r}: expected {expected!r}")
    pinned = [int(n) for n in pin.get("peers", [])]
    if stage == "setup":
        _pinned_setup(configs, p)
        pinned = []
    elif stage == "share_keys":
        pinned = _pinned_peers(configs, p, own)
    elif stage == "collect_masked_vectors":
        _pinned_sources(msg, configs, pinned, own)
    else:
        _pinned_unmask(configs, pinned)
    return stage, pinned


def pinned_secaggplus_mod(msg: Any, ctxt: Any, call_next: Any) -> Any:
    """Flower's ``secaggplus_mod``, behind the party's own checks of what the coordinator asks at every stage.

    The party reads p (the number of parties, ``len(agreement.sizes)``) from its own agreement (its node config's
    ``agreement-path``) and refuses, before Flower's mod sees anything, any SecAgg+ message that does not hold:

    * **setup**: as many shares as parties and a reconstruction threshold of p (every party shares its secrets with
      every party, and every share is needed to rebuild one), p sampled nodes, and ddppm's clipping range
      (:data:`CLIPPING_RANGE`), quantisation (2^:data:`QUANTISATION_BITS`), modulus (2^:data:`MODULUS_BITS`) and
      weight (:data:`MAX_WEIGHT`);
    * **share keys**: exactly p distinct nodes, itself among them: the pinned set, for the rest of the sum;
    * **collect masked vectors**: the encrypted shares come from the p − 1 other pinned nodes, each once (so the
      reply carries every pairwise mask), and the coordinator expands masks as the party does (:data:`MASKS_KEY`);
    * **unmask**: nobody reported dead, and self-mask seed shares asked for exactly the pinned set: the party never
      hands out a share of a secret key (those are asked for dead nodes only) nor of a node outside the set;
    * the stages in order, one sum at a time (a setup only after an unmask, or after a refusal).

    A refusal is a Flower error whose reason is :data:`REFUSED` and nothing else; the details go to the party's log
    (``logging``, ERROR); nothing reaches Flower's mod or the party's handler, and the party's next sum must start
    at setup. Masks are expanded by :func:`strong_masks` while Flower's mod runs.

    **What holds.** With every party running this mod, a coordinator learns from one sum nothing beyond the sum of
    every party the agreement names *that it lets take part*: a threshold of 1, fewer shares or nodes than p, an extra
    or repeated node, a dropped pairwise mask, a party reported dead, or a share asked for outside the set is refused
    before any share or masked vector that would let it be undone leaves the party. That stops the threshold-1
    attack (one simulated neighbour's share rebuilds a party's seeds) and the partial-sum attacks made with the
    protocol's parameters (a sum over fewer parties would carry less noise than the certificate assumes). At
    threshold p every secret needs the party's own share, which it gives only for the self-mask seeds of the pinned
    set: its first secret key, hence its pairwise masks with the real peers, never leaves it. A real peer that does
    not run this mod can be made to give its own keys away, and then counts as simulated (below).

    **What does not.** Node ids are assigned by the coordinator (the SuperLink) and SecAgg+'s public keys are not
    signed with the parties' identities, so a party cannot tell a real peer from one the coordinator simulates with
    keys it made itself. A coordinator that replaces m of the p − 1 peers by simulated nodes holds their shares and
    pairwise keys and obtains the sum over the p − m real parties; with m = p − 1 it unmasks one party's vector (the
    checks above all pass: tested). Closing that needs an agreement that carries each party's long-term public key
    and SecAgg+ keys signed with it (not built), or a transport that authenticates the parties to each other.
    Collusion: c parties colluding with the coordinator learn the sum of the others from theirs; an agreement's
    ``colluding`` bound c sizes every party's share of the noise for the p − c honest ones
    (:class:`~ddppm.federation.agreement.Agreement`).
    """
    if msg.metadata.message_type != "train":
        return call_next(msg, ctxt)
    from flwr.app import ConfigRecord, Error, Message
    from flwr.client.mod import secaggplus_mod
    from flwr.common.constant import ErrorCode

    def refuse(detail: str) -> Any:
        party_log.error("SecAgg+ refused (node %s): %s", ctxt.node_id, detail)
        ctxt.state.config_records[_PIN_RECORD] = ConfigRecord({"stage": "unmask"})  # the next sum starts over
        return Message(Error(code=ErrorCode.MOD_FAILED_PRECONDITION, reason=REFUSED), reply_to=msg)

    pin = dict(ctxt.state.config_records.get(_PIN_RECORD, ConfigRecord({"stage": "unmask"})))
    try:
        stage, pinned = _check(msg, ctxt, pin)
    except Refused as refused:
        return refuse(refused.detail)
    except Exception as error:  # noqa: BLE001 (a malformed message, an unreadable agreement: refused, details logged)
        return refuse(f"{type(error).__name__}: {error}")
    # a failure inside Flower's mod (a ciphertext that does not decrypt...) also ends this sum for the party
    ctxt.state.config_records[_PIN_RECORD] = ConfigRecord({"stage": "unmask"})
    refusals: list[Any] = []

    def answer(message: Any, context: Any) -> Any:
        reply = call_next(message, context)
        if reply.has_error():  # the party's own refusal goes back as it is, with nothing masked
            refusals.append(reply.error)
            raise _HandlerRefused
        return reply

    try:
        with strong_masks():
            reply = secaggplus_mod(msg, ctxt, answer)
    except _HandlerRefused:
        return Message(refusals[0], reply_to=msg)
    except Exception as error:  # noqa: BLE001 (Flower's own checks: the details go to the party's log only)
        return refuse(f"secaggplus_mod at {stage}: {type(error).__name__}: {error}")
    record = {"stage": stage, "peers": pinned} if pinned else {"stage": stage}
    ctxt.state.config_records[_PIN_RECORD] = ConfigRecord(record)
    return reply
