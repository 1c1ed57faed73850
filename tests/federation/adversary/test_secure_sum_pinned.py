"""A coordinator that does not run SecAgg+ honestly (ddppm.federation.secure_sum.pinned_secaggplus_mod).

A malicious ServerApp on the in-process Grid (real ClientApps, Flower's real ``secaggplus_mod`` and crypto, every
message through protobuf) sends SecAgg+'s messages by hand, with its own parameters and with nodes it simulates
(keys it made itself). Each attack is run first against Flower's own mod, where it recovers the victim's vector or
a sum over fewer parties, then against the pinned mod, where the party's reply is the error ``refused: protocol`` and
no reply the Grid carried lets the coordinator undo the victim's masks. The attack the pinning cannot stop (every
peer simulated) is run too: it still succeeds, as the mod's docstring says.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("flwr", reason="the federation extra installs Flower")
from flwr.app import ConfigRecord, Context, Message, RecordDict  # noqa: E402
from flwr.client.mod import secaggplus_mod  # noqa: E402
from flwr.clientapp import ClientApp  # noqa: E402
from flwr.common import bytes_to_ndarray  # noqa: E402
from flwr.common.secure_aggregation.crypto.shamir import combine_shares, create_shares  # noqa: E402
from flwr.common.secure_aggregation.crypto.symmetric_encryption import (  # noqa: E402
    decrypt,
    encrypt,
    generate_shared_key,
)
from flwr.common.secure_aggregation.ndarrays_arithmetic import factor_extract, parameters_mod  # noqa: E402
from flwr.common.secure_aggregation.quantization import dequantize  # noqa: E402
from flwr.common.secure_aggregation.secaggplus_utils import (  # noqa: E402
    pseudo_rand_gen,
    share_keys_plaintext_concat,
    share_keys_plaintext_separate,
)
from flwr.serverapp import Grid, ServerApp  # noqa: E402
from flwr.supercore.primitives.asymmetric import (  # noqa: E402
    bytes_to_private_key,
    bytes_to_public_key,
    generate_key_pairs,
    private_key_to_bytes,
    public_key_to_bytes,
)

from ddppm.federation import secure_sum as ss  # noqa: E402
from ddppm.federation.agreement import Agreement  # noqa: E402
from ddppm.federation.coordinator import PartyFailed  # noqa: E402
from tests.federation.conftest import BOUNDS, SIZES  # noqa: E402
from tests.federation.inprocess_grid import run_inprocess  # noqa: E402

NODES = (100, 101, 102)  # one per party of the agreement: p = 3
VICTIM = 100
SCALE = 10.0
VALUES = {node: np.random.default_rng(node).uniform(-SCALE, SCALE, 6) for node in NODES}
"""What each party would send: its reply to a step (secure_reply divides it by the public scale)."""
QUANTUM = 2 * ss.CLIPPING_RANGE / 2**ss.QUANTISATION_BITS  # one party's rounding, in units of the scale
HONEST_SETUP = {"stage": "setup", "sample_num": 3, "share_num": 3, "threshold": 3,
                "clipping_range": ss.CLIPPING_RANGE, "target_range": 2**ss.QUANTISATION_BITS,
                "mod_range": 2**ss.MODULUS_BITS, "max_weight": ss.MAX_WEIGHT}  # fmt: skip
"""What ddppm's coordinator sends at setup to three parties (SecAggPlusWorkflow in secure_sum)."""


def _party_app(mod: Callable) -> ClientApp:
    """A party's ClientApp behind ``mod``: it answers every masked step with its value."""
    app = ClientApp()

    @app.train(mods=[mod])
    def train(msg: Message, context: Context) -> Message:
        return Message(ss.secure_reply(VALUES[context.node_id], SCALE), reply_to=msg)

    return app


@pytest.fixture
def node_configs(tmp_path: Path) -> dict[int, dict]:
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "cape", trust="secure_aggregation", noise="simulation")
    assert len(agreement.sizes) == len(NODES)
    configs = {}
    for j, node in enumerate(NODES):
        path = tmp_path / f"agreement{j}.json"
        path.write_text(json.dumps(agreement.to_dict()))
        configs[node] = {"agreement-path": str(path), "party-index": j, "testing-simulation-noise": True}
    return configs




@dataclass
class Simulated:
    """A node the coordinator simulates: SecAgg+'s two key pairs, made by the coordinator."""

    nid: int
    keys: dict[str, bytes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("1", "2"):
            sk, pk = generate_key_pairs()
            self.keys[f"sk{name}"], self.keys[f"pk{name}"] = private_key_to_bytes(sk), public_key_to_bytes(pk)

    @property
    def public(self) -> list[bytes]:
        return [self.keys["pk1"], self.keys["pk2"]]

    def secret_with(self, which: str, public_key: bytes) -> bytes:
        return generate_shared_key(bytes_to_private_key(self.keys[f"sk{which}"]), bytes_to_public_key(public_key))

    def read(self, ciphertext: bytes, sender_pk2: bytes) -> tuple[bytes, bytes]:
        """A share a real party encrypted for this node: of its self-mask seed and of its first secret key."""
        plaintext = decrypt(self.secret_with("2", sender_pk2), ciphertext)
        _, _, seed_share, key_share = share_keys_plaintext_separate(plaintext)
        return seed_share, key_share

    def ciphertext_for(self, dst: int, dst_pk2: bytes, threshold: int) -> bytes:
        """What this node would have sent ``dst`` at share keys (shares of secrets the coordinator made up)."""
        seed, key = (create_shares(b"\x07" * 32, threshold, 3)[0] for _ in range(2))
        return encrypt(self.secret_with("2", dst_pk2), share_keys_plaintext_concat(self.nid, dst, seed, key))


class Coordinator:
    """The malicious coordinator's hands: SecAgg+'s stages as messages it writes itself."""

    def __init__(self, grid: Grid) -> None:
        self.grid = grid
        self.public_keys: dict[int, list[bytes]] = {}

    def send(self, stage: str, configs: dict[int, dict[str, Any]]) -> dict[int, Message]:
        messages = []
        for node, config in configs.items():
            content = RecordDict({"secaggplus_configs": ConfigRecord({"stage": stage, **config})})
            if stage == "collect_masked_vectors":  # what ddppm's coordinator puts in every masked step's config
                content.config_records["fitins.config"] = ConfigRecord({ss.MASKS_KEY: ss.MASKS})
            messages.append(self.grid.create_message(content, "train", node, "1"))
        return {reply.metadata.src_node_id: reply for reply in self.grid.send_and_receive(messages)}

    def setup(self, nodes, **changes) -> dict[int, Message]:
        replies = self.send("setup", {node: {**HONEST_SETUP, **changes, "stage": "setup"} for node in nodes})
        for node, reply in replies.items():
            if not reply.has_error():
                configs = reply.content.config_records["secaggplus_configs"]
                self.public_keys[node] = [configs["pk1"], configs["pk2"]]
        return replies

    def share_keys(self, views: dict[int, dict[int, list[bytes]]]) -> dict[int, Message]:
        """``views``: for each node, the peers (and their public keys) it is told about."""
        return self.send("share_keys", {node: {str(peer): keys for peer, keys in peers.items()}
                                        for node, peers in views.items()})  # fmt: skip


def _configs(reply: Message) -> Any:
    return reply.content.config_records["secaggplus_configs"]


def _unmask(masked: list[np.ndarray], seed: bytes, pairwise: dict[int, bytes], expand: Callable) -> np.ndarray:
    """The victim's value from its masked vector, its self-mask seed and its pairwise keys (by peer)."""
    shapes = [a.shape for a in masked]
    vector = [v - m for v, m in zip(masked, expand(seed, 2**ss.MODULUS_BITS, shapes), strict=True)]
    for peer, key in pairwise.items():  # the victim added a mask shared with a smaller id, subtracted a larger one's
        sign = 1 if VICTIM > peer else -1
        vector = [v - sign * m for v, m in zip(vector, expand(key, 2**ss.MODULUS_BITS, shapes), strict=True)]
    factor, quantised = factor_extract(parameters_mod(vector, 2**ss.MODULUS_BITS))
    assert factor == 2**ss.QUANTISATION_BITS  # weight 1 at max weight 1: the unmasking is right
    return SCALE * dequantize(quantised, ss.CLIPPING_RANGE, 2**ss.QUANTISATION_BITS)[0]


def _refused(reply: Message) -> bool:
    return reply.has_error() and reply.error.reason == ss.REFUSED


SIMULATED = (998, 999)
"""The ids of the nodes the coordinator simulates (it assigns node ids: nothing marks them)."""


def _leaked_nothing_of_the_victim(carried: list[Message]) -> bool:
    """No reply the Grid carried holds the victim's masked vector, a share of the victim's secrets encrypted for a
    node the coordinator simulates, or a share of anyone's secret in the clear (shares encrypted for the real peers
    are what every sum sends: the coordinator cannot read them)."""
    for reply in carried:
        if reply.has_error():
            continue
        configs = _configs(reply)
        if reply.metadata.src_node_id == VICTIM and ("masked_params" in configs
                                                     or set(configs.get("dsts", [])) & set(SIMULATED)):  # fmt: skip
            return False
        if "shares" in configs:
            return False
    return True


def _run(attack: Callable[[Coordinator], Any], mod: Callable | ClientApp, node_configs: dict[int, dict]) -> Any:
    """``attack`` as the ServerApp of a run on the in-process Grid, the parties behind ``mod`` (or the ClientApp
    given); what it returned."""
    app, out = ServerApp(), []

    @app.main()
    def main(grid: Grid, context: Context) -> None:
        out.append(attack(Coordinator(grid)))

    run_inprocess(app, mod if isinstance(mod, ClientApp) else _party_app(mod), node_configs, {})
    return out[0]


# --- (a) the threshold set to 1, with one simulated neighbour ---------------------------------------------------------


def _threshold_one(coordinator: Coordinator) -> Any:
    """One simulated neighbour receives the victim's share of its seeds; at threshold 1 one share is the seed."""
    replies = coordinator.setup([VICTIM, 101], threshold=1)
    if replies[VICTIM].has_error():
        return replies[VICTIM]
    fake = Simulated(999)
    keys = coordinator.public_keys
    reply = coordinator.share_keys({VICTIM: {VICTIM: keys[VICTIM], 101: keys[101], 999: fake.public}})[VICTIM]
    if reply.has_error():
        return reply
    dsts, ciphertexts = list(_configs(reply)["dsts"]), list(_configs(reply)["ctxts"])
    seed_share, _ = fake.read(ciphertexts[dsts.index(999)], keys[VICTIM][1])
    # the simulated node alone is forwarded: at threshold 1, Flower's mod asks for no more
    reply = coordinator.send("collect_masked_vectors", {VICTIM: {
        "ctxts": [fake.ciphertext_for(VICTIM, keys[VICTIM][1], 1)], "srcs": [999]}})[VICTIM]  # fmt: skip
    if reply.has_error():
        return reply
    masked = [bytes_to_ndarray(b) for b in _configs(reply)["masked_params"]]
    return _unmask(masked, combine_shares([seed_share]), {999: fake.secret_with("1", keys[VICTIM][0])},
                   pseudo_rand_gen)  # fmt: skip


def test_before_the_pin_a_threshold_of_one_unmasks_a_party(node_configs):
    recovered = _run(_threshold_one, secaggplus_mod, node_configs)
    np.testing.assert_allclose(recovered, VALUES[VICTIM], atol=SCALE * QUANTUM)


def test_a_threshold_of_one_is_refused_at_setup(node_configs, carried, caplog):
    with caplog.at_level(logging.ERROR, logger="ddppm.party"):
        reply = _run(_threshold_one, ss.pinned_secaggplus_mod, node_configs)
    assert _refused(reply) and _leaked_nothing_of_the_victim(carried)
    victim = [m for m in carried if m.metadata.src_node_id == VICTIM]
    assert len(victim) == 1 and _refused(victim[0])  # its public keys never left it
    assert any("threshold = 1" in r.getMessage() for r in caplog.records)  # the details: the party's log only
    assert "threshold" not in victim[0].error.reason


def test_ddppms_party_app_runs_behind_the_pin(node_configs, carried):
    from ddppm.federation.flower import clientapp

    assert _refused(_run(_threshold_one, clientapp, node_configs)) and _leaked_nothing_of_the_victim(carried)


# --- (b) a simulated neighbour added to the peers ---------------------------------------------------------------------


def _honest_keys(coordinator: Coordinator) -> dict[int, list[bytes]]:
    assert not any(r.has_error() for r in coordinator.setup(NODES).values())
    return dict(coordinator.public_keys)


def test_a_simulated_fourth_party_is_refused_at_setup(node_configs, carried):
    def attack(coordinator):
        return coordinator.setup([VICTIM], sample_num=4, share_num=4)[VICTIM]

    assert _refused(_run(attack, ss.pinned_secaggplus_mod, node_configs)) and _leaked_nothing_of_the_victim(carried)


def test_a_simulated_neighbour_added_at_share_keys_is_refused(node_configs, carried):
    def attack(coordinator):
        keys = _honest_keys(coordinator)
        return coordinator.share_keys({VICTIM: {**keys, 999: Simulated(999).public}})[VICTIM]

    assert _refused(_run(attack, ss.pinned_secaggplus_mod, node_configs)) and _leaked_nothing_of_the_victim(carried)


@pytest.mark.parametrize("sources", [[101], [101, 101], [101, 999], [VICTIM, 101, 102]],
                         ids=["one-peer-dropped", "a-peer-twice", "a-stranger", "itself"])  # fmt: skip
def test_sources_other_than_the_pinned_peers_are_refused_before_the_party_answers(node_configs, carried, sources):
    """A pairwise mask left out would leave the victim's vector behind fewer masks: refused before the party's
    handler runs (nothing masked is made)."""
    fake = Simulated(999)

    def attack(coordinator):
        keys = _honest_keys(coordinator)
        replies = coordinator.share_keys({node: keys for node in NODES})
        to_victim = {}
        for node, reply in replies.items():
            for dst, ciphertext in zip(_configs(reply)["dsts"], _configs(reply)["ctxts"], strict=True):
                if dst == VICTIM:
                    to_victim[node] = ciphertext
        to_victim[999] = fake.ciphertext_for(VICTIM, keys[VICTIM][1], 3)
        to_victim[VICTIM] = to_victim[101]
        return coordinator.send("collect_masked_vectors", {VICTIM: {
            "ctxts": [to_victim[s] for s in sources], "srcs": sources}})[VICTIM]  # fmt: skip

    assert _refused(_run(attack, ss.pinned_secaggplus_mod, node_configs)) and _leaked_nothing_of_the_victim(carried)


# --- (c) a live party reported dead, or a share asked for outside the set ----------------------------------------


def _honest_until_unmask(coordinator: Coordinator) -> dict[int, list[np.ndarray]]:
    """Every stage as ddppm's coordinator runs it, up to the masked vectors (by node)."""
    keys = _honest_keys(coordinator)
    replies = coordinator.share_keys({node: keys for node in NODES})
    forwarded: dict[int, dict[str, list]] = {node: {"ctxts": [], "srcs": []} for node in NODES}
    for src, reply in replies.items():
        for dst, ciphertext in zip(_configs(reply)["dsts"], _configs(reply)["ctxts"], strict=True):
            forwarded[dst]["ctxts"].append(ciphertext)
            forwarded[dst]["srcs"].append(src)
    replies = coordinator.send("collect_masked_vectors", forwarded)
    return {node: [bytes_to_ndarray(b) for b in _configs(reply)["masked_params"]] for node, reply in replies.items()}


def _victim_reported_dead(coordinator: Coordinator) -> Any:
    """The victim is told about as active (its self-mask seed's shares) and as dead (its first key's shares): both
    rebuilt, its vector comes out alone."""
    masked = _honest_until_unmask(coordinator)
    replies = coordinator.send("unmask", {node: {"active_nids": list(NODES), "dead_nids": [VICTIM]} for node in NODES})
    if any(reply.has_error() for reply in replies.values()):
        return replies
    seed_shares, key_shares = [], []
    for reply in replies.values():  # the shares come in the order asked: the active nodes', then the dead ones'
        seed, key = [s for n, s in zip(_configs(reply)["nids"], _configs(reply)["shares"], strict=True) if n == VICTIM]
        seed_shares.append(seed)
        key_shares.append(key)
    key = bytes_to_private_key(combine_shares(key_shares))
    pairwise = {peer: generate_shared_key(key, bytes_to_public_key(coordinator.public_keys[peer][0]))
                for peer in NODES if peer != VICTIM}  # fmt: skip
    return _unmask(masked[VICTIM], combine_shares(seed_shares), pairwise, pseudo_rand_gen)


def test_before_the_pin_a_live_party_reported_dead_is_unmasked(node_configs):
    recovered = _run(_victim_reported_dead, secaggplus_mod, node_configs)
    np.testing.assert_allclose(recovered, VALUES[VICTIM], atol=SCALE * QUANTUM)


@pytest.mark.parametrize("active, dead", [(list(NODES), [VICTIM]), ([101, 102], [VICTIM]),
                                          ([*NODES, 999], []), ([VICTIM, 101], [])],
                         ids=["active-and-dead", "live-party-dead", "a-stranger", "one-missing"])  # fmt: skip
def test_a_dead_list_or_a_share_outside_the_set_is_refused_at_unmask(node_configs, carried, active, dead):
    def attack(coordinator):
        _honest_until_unmask(coordinator)
        return coordinator.send("unmask", {node: {"active_nids": active, "dead_nids": dead} for node in NODES})

    replies = _run(attack, ss.pinned_secaggplus_mod, node_configs)
    assert all(_refused(reply) for reply in replies.values())
    # the masked vectors reached the coordinator (as in every sum), but no share that would remove a mask
    assert not any("shares" in _configs(m) for m in carried if not m.has_error())


# --- (d) fewer shares than parties --------------------------------------------------------------------------------


def _two_of_three(coordinator: Coordinator) -> Any:
    """ddppm's own secure sum, run over two of the three parties: their sum, with two parties' noise."""
    context = Context(1, 1, {}, RecordDict(), {})
    try:
        return ss.secure_sum(coordinator.grid, context, [VICTIM, 101], {"step": "attack"}, SCALE, 30.0)
    except PartyFailed as failed:
        return failed


def test_before_the_pin_a_sum_over_fewer_parties_is_unmasked(node_configs):
    partial = _run(_two_of_three, secaggplus_mod, node_configs)
    np.testing.assert_allclose(partial, VALUES[VICTIM] + VALUES[101], atol=2 * SCALE * QUANTUM)


def test_fewer_shares_or_parties_than_the_agreement_are_refused_at_setup(node_configs, carried):
    assert isinstance(_run(_two_of_three, ss.pinned_secaggplus_mod, node_configs), PartyFailed)
    assert carried and all(_refused(m) for m in carried) and _leaked_nothing_of_the_victim(carried)

    def fewer_shares(coordinator):  # three parties sampled, each sharing with two
        return coordinator.setup(NODES, share_num=2, threshold=2)

    assert all(_refused(r) for r in _run(fewer_shares, ss.pinned_secaggplus_mod, node_configs).values())


@pytest.mark.parametrize("change", [{"clipping_range": 1000.0}, {"target_range": 2**20}, {"mod_range": 2**32},
                                    {"max_weight": 1e-3}, {"threshold": True}, {"threshold": 3.0}])  # fmt: skip
def test_other_parameters_than_ddppms_are_refused_at_setup(node_configs, change):
    def attack(coordinator):
        return coordinator.setup([VICTIM], **change)[VICTIM]

    assert _refused(_run(attack, ss.pinned_secaggplus_mod, node_configs))


def test_after_a_refusal_only_a_new_setup_is_taken(node_configs, carried):
    def attack(coordinator):
        first = coordinator.setup([VICTIM], threshold=1)[VICTIM]
        keys = {VICTIM: [b"\x01" * 91, b"\x02" * 91], 101: Simulated(101).public, 102: Simulated(102).public}
        second = coordinator.share_keys({VICTIM: keys})[VICTIM]
        third = coordinator.setup([VICTIM])[VICTIM]
        return first, second, third

    first, second, third = _run(attack, ss.pinned_secaggplus_mod, node_configs)
    assert _refused(first) and _refused(second) and not third.has_error()


# --- what the pin cannot stop, and the honest sum ---------------------------------------------------------------


def test_a_coordinator_simulating_every_peer_still_unmasks_a_party(node_configs):
    """The limit the mod's docstring states: node ids and SecAgg+'s keys are not bound to the parties, so a
    coordinator that simulates all p − 1 peers passes every check and holds every share."""
    fakes = {998: Simulated(998), 999: Simulated(999)}

    def attack(coordinator):
        coordinator.setup([VICTIM])
        own = coordinator.public_keys[VICTIM]
        reply = coordinator.share_keys({VICTIM: {VICTIM: own, **{n: f.public for n, f in fakes.items()}}})[VICTIM]
        sent = zip(_configs(reply)["dsts"], _configs(reply)["ctxts"], strict=True)
        seed_shares = [fakes[dst].read(ciphertext, own[1])[0] for dst, ciphertext in sent]
        forwarded = {"ctxts": [f.ciphertext_for(VICTIM, own[1], 3) for f in fakes.values()], "srcs": list(fakes)}
        reply = coordinator.send("collect_masked_vectors", {VICTIM: forwarded})[VICTIM]
        masked = [bytes_to_ndarray(b) for b in _configs(reply)["masked_params"]]
        reply = coordinator.send("unmask", {VICTIM: {"active_nids": [VICTIM, *fakes], "dead_nids": []}})[VICTIM]
        asked = zip(_configs(reply)["nids"], _configs(reply)["shares"], strict=True)
        seed_shares += [share for owner, share in asked if owner == VICTIM]  # its own share of its own seed
        pairwise = {n: f.secret_with("1", own[0]) for n, f in fakes.items()}
        return _unmask(masked, combine_shares(seed_shares), pairwise, ss.chacha20_masks)  # the pinned mod's masks

    np.testing.assert_allclose(_run(attack, ss.pinned_secaggplus_mod, node_configs), VALUES[VICTIM],
                               atol=SCALE * QUANTUM)  # fmt: skip


def test_the_honest_sum_through_the_pinned_mod_equals_the_plain_sum(node_configs, carried, monkeypatch):
    expanded = []
    monkeypatch.setattr(ss, "chacha20_masks", lambda *a, _f=ss.chacha20_masks: expanded.append(1) or _f(*a))

    def honest(coordinator):
        return ss.secure_sum(coordinator.grid, Context(1, 1, {}, RecordDict(), {}), list(NODES), {"step": "x"},
                             SCALE, 30.0)  # fmt: skip

    total = _run(honest, ss.pinned_secaggplus_mod, node_configs)
    np.testing.assert_allclose(total, sum(VALUES.values()), rtol=0, atol=1e-5)
    assert not any(m.has_error() for m in carried) and len(carried) == 4 * len(NODES)
    # each party expands its self mask and two pairwise masks, the coordinator the three self masks
    assert len(expanded) == 3 * len(NODES) + len(NODES)
