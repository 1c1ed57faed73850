"""A coordinator that breaks the protocol, against the party's Flower ClientApp (ddppm.federation.flower) on an
in-process Grid: plaintext steps at trust ``secure_aggregation``, a simulation agreement, rows whose error would
quote a cell, malformed messages, and a re-asked step. Each reply the coordinator receives is a refusal of the fixed
vocabulary and nothing else."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ddppm.federation.agreement import Agreement
from ddppm.federation.plan import Refused
from ddppm.release.ledger import PrivacyLedger
from tests.federation.adversary.test_party import honest_transcript
from tests.federation.conftest import BOUNDS, SIZES, split

pytest.importorskip("flwr", reason="the federation extra installs Flower")
from flwr.app import ConfigRecord, Context, Message, RecordDict  # noqa: E402
from flwr.supercore.task_identity import TaskIdentity  # noqa: E402

from ddppm.federation.flower import clientapp, encode  # noqa: E402
from tests.federation.inprocess_grid import SERVER_NODE_ID, InProcessGrid  # noqa: E402

COLUMNS = [f"x{i}" for i in range(13)]


def _grid(wine, tmp_path: Path, agreement: Agreement, testing: bool = False,
          rows: pd.DataFrame | None = None) -> InProcessGrid:  # fmt: skip
    """Three parties' ClientApps, each with its own CSV, agreement and ledger (party 0's rows may be replaced)."""
    nodes = {}
    for j, part in enumerate(split(wine)):
        folder = tmp_path / f"party{j}"
        folder.mkdir()
        frame = rows if (rows is not None and j == 0) else pd.DataFrame(part, columns=COLUMNS)
        frame.to_csv(folder / "rows.csv", index=False)
        (folder / "agreement.json").write_text(json.dumps(agreement.to_dict()))
        PrivacyLedger.create(folder / "ledger.json", f"party {j}", 50.0, 1e-3)
        nodes[100 + j] = {"data-path": str(folder / "rows.csv"), "agreement-path": str(folder / "agreement.json"),
                          "party-index": j, "ledger-path": str(folder / "ledger.json")}  # fmt: skip
        if testing:
            nodes[100 + j]["testing-simulation-noise"] = True
    TaskIdentity.run_id, TaskIdentity.node_id, TaskIdentity.task_id = 1, SERVER_NODE_ID, 1  # as a ServerApp's
    return InProcessGrid(clientapp, nodes, {})


def _ask(grid: InProcessGrid, node: int, step: str, public: dict, content: RecordDict | None = None) -> Message:
    message = Message(content if content is not None else encode({**public, "step": step}), dst_node_id=node,
                      message_type="query", group_id="attack")  # fmt: skip
    [sent] = grid.push_messages([message])
    [reply] = grid.pull_messages([sent])
    return reply


def _refusal(reply: Message) -> str:
    assert reply.has_error() and not reply.has_content()
    return reply.error.reason


def _entries(tmp_path: Path, j: int = 0) -> int:
    return len(PrivacyLedger(tmp_path / f"party{j}" / "ledger.json").summary()["releases"])


def test_at_secure_aggregation_only_hello_is_answered_in_the_clear(wine, tmp_path):
    """Before: the plain query handler answered every step whatever the trust, so a coordinator could skip SecAgg+
    and read each party's CAPE Gram with σ_z/√p of noise (and the run-config key ``secure-aggregation=false`` did it
    while the certificate said ``secure_aggregation``)."""
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "cape", trust="secure_aggregation", seed=3)
    grid = _grid(wine, tmp_path, agreement)
    hello = _ask(grid, 100, "hello", {})
    assert hello.has_content() and hello.content.array_records["reply"]["value"].numpy().tolist() == [0, 60, 13]
    transcript = honest_transcript(wine, agreement)
    for step, message in transcript:
        assert _refusal(_ask(grid, 100, step, message)) == "refused: protocol"
    assert _entries(tmp_path) == 0  # nothing charged, nothing drawn


def test_a_simulation_agreement_is_refused_unless_the_node_is_marked_for_testing(wine, tmp_path):
    """Before: ``noise: simulation`` was accepted without a word; parties 1..p−1 then sent exact statistics and
    party 0's noise was rebuilt from the public seed (to 3·10⁻¹⁵)."""
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "conventional", noise="simulation", seed=3)
    grid = _grid(wine, tmp_path, agreement)
    for node in (100, 101, 102):
        assert _refusal(_ask(grid, node, "hello", {})) == "refused: agreement"
    transcript = honest_transcript(wine, agreement)
    assert _refusal(_ask(grid, 101, *transcript[0])) == "refused: agreement"
    (tmp_path / "testing").mkdir()
    marked = _grid(wine, tmp_path / "testing", agreement, testing=True)
    assert _ask(marked, 101, "hello", {}).has_content()


def test_a_rows_error_reaches_the_coordinator_as_one_word(wine, tmp_path):
    """Before: a CSV cell ("Jane Doe, MRN 0012345") reached the coordinator in a ``hello`` error."""
    frame = pd.DataFrame(split(wine)[0], columns=COLUMNS).astype(object)
    frame.iloc[3, 2] = "Jane Doe, MRN 0012345"
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "conventional", seed=3)
    grid = _grid(wine, tmp_path, agreement, rows=frame)
    reply = _ask(grid, 100, "hello", {})
    assert _refusal(reply) == "refused: rows"
    from flwr.common.serde import message_to_proto

    assert b"Jane" not in message_to_proto(reply).SerializeToString() and b"MRN" not in str(reply).encode()
    assert _ask(grid, 101, "hello", {}).has_content()  # the other parties are unaffected


def test_malformed_messages_are_refused_as_protocol_and_cost_nothing(wine, tmp_path):
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "conventional", seed=3)
    grid = _grid(wine, tmp_path, agreement)
    garbage = [RecordDict({"config": ConfigRecord({"step": "sums"})}),  # no arrays record
               RecordDict({}),
               encode({"agreement": agreement.digest()})]  # no step  # fmt: skip
    for content in garbage:
        assert _refusal(_ask(grid, 100, "", {}, content=content)) == "refused: protocol"
    assert _refusal(_ask(grid, 100, "sums", {"agreement": agreement.digest(), "lower": np.ones(3)})) == \
        "refused: protocol"  # fmt: skip
    assert _entries(tmp_path) == 0
    assert _ask(grid, 100, "hello", {}).has_content()


def test_a_step_re_asked_through_flower_is_refused_and_the_ledger_holds_the_run_once(wine, tmp_path):
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "conventional", seed=3)
    grid = _grid(wine, tmp_path, agreement)
    transcript = honest_transcript(wine, agreement)
    first = _ask(grid, 100, *transcript[0])
    assert first.has_content()
    for _ in range(20):
        assert _refusal(_ask(grid, 100, *transcript[0])) == "refused: protocol"
    for step, message in transcript[1:]:
        assert _ask(grid, 100, step, message).has_content()
    assert _refusal(_ask(grid, 100, *transcript[-1])) == "refused: protocol"
    assert _entries(tmp_path) == 1


def _context(tmp_path: Path, run_id: int, state: RecordDict | None = None, j: int = 0, **node: object) -> Context:
    """Party j's Flower context for run ``run_id`` (the files :func:`_grid` wrote), with ``state`` carried over."""
    folder = tmp_path / f"party{j}"
    config = {"data-path": str(folder / "rows.csv"), "agreement-path": str(folder / "agreement.json"),
              "party-index": j, "ledger-path": str(folder / "ledger.json"), **node}  # fmt: skip
    return Context(run_id, 100 + j, config, state if state is not None else RecordDict(), {})


def test_a_new_run_that_inherits_the_last_runs_state_starts_afresh_and_is_charged(wine, tmp_path):
    """Before (a review's attack): Flower copies a run series' state into its next run, and the party took the saved
    state's run and charge as its own: a second run, at ε = 200 on a budget of 50, answered 31 steps for the first
    run's one ledger entry. Now a party's state is kept per run and bound to its run and agreement."""
    from ddppm.federation.flower import _answer

    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "conventional", seed=3)
    _grid(wine, tmp_path, agreement)
    transcript = honest_transcript(wine, agreement)
    first = _context(tmp_path, 1)
    for step, message in transcript:
        _answer(first, step, message)
    inherited = _context(tmp_path, 2, state=RecordDict(dict(first.state.config_records)))
    _answer(inherited, *transcript[0])  # the new run begins at its first step, and is charged
    runs = [entry["run"] for entry in PrivacyLedger(tmp_path / "party0" / "ledger.json").summary()["releases"]]
    assert runs == ["flower-run:1", "flower-run:2"]
    with pytest.raises(Refused):  # a state of another run offered as this run's
        from ddppm.federation.party import Party

        Party(split(wine)[0], 0, agreement, run="flower-run:3", state=json.loads(
            str(first.state.config_records["party:1"]["state"])))  # fmt: skip


def test_an_agreement_file_changed_after_the_party_started_is_refused(wine, tmp_path):
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "conventional", seed=3)
    grid = _grid(wine, tmp_path, agreement)
    for j in range(3):
        grid._ctx[100 + j].node_config["agreement-digest"] = agreement.digest()  # as `ddppm party` pins it
    assert _ask(grid, 100, "hello", {}).has_content()
    richer = Agreement(2, 200.0, 1e-6, BOUNDS, SIZES, "conventional", seed=3, method_options={"iterations": 30})
    (tmp_path / "party0" / "agreement.json").write_text(json.dumps(richer.to_dict()))
    assert _refusal(_ask(grid, 100, "hello", {})) == "refused: agreement"
    assert _refusal(_ask(grid, 100, *honest_transcript(wine, richer)[0])) == "refused: agreement"
    assert _entries(tmp_path) == 0


@pytest.mark.parametrize("scale", [1e-300, 0.0, float("nan"), -1.0, 1e300, "agreement's times 1.5"])
def test_a_secure_step_with_another_scale_than_the_agreements_is_refused_before_any_charge(wine, tmp_path, scale):
    """Before (a review's attack): the secure step's scale was the coordinator's: 1e-300 clipped a reply to its
    signs, and the honest scale to one party with 1e300 to the others left that party's own share alone in the
    unmasked sum (its residual's standard deviation 1.095, its share's σ_z/√3 = 1.13, the sum's σ_z = 1.96)."""
    from ddppm.federation.flower import party_secure, step_scales
    from ddppm.federation.public import PublicRelease

    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "cape", trust="secure_aggregation", seed=3)
    _grid(wine, tmp_path, agreement)
    transcript = honest_transcript(wine, agreement)
    honest = step_scales(PublicRelease(agreement, 13))
    step, public = transcript[0]
    plain = json.dumps({k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in public.items()})
    sent = 1.5 * honest(step) if isinstance(scale, str) else scale
    config = ConfigRecord({"step": step, "public": plain, "scale": sent})
    message = Message(RecordDict({"fitins.config": config}), dst_node_id=100, message_type="train")
    message.metadata.__dict__["_message_id"] = "crafted"
    reply = party_secure(message, _context(tmp_path, 1))
    assert _refusal(reply) == "refused: protocol" and _entries(tmp_path) == 0
    config = ConfigRecord({"step": step, "public": plain, "scale": honest(step)})
    message = Message(RecordDict({"fitins.config": config}), dst_node_id=100, message_type="train")
    message.metadata.__dict__["_message_id"] = "honest"
    assert party_secure(message, _context(tmp_path, 2)).has_content() and _entries(tmp_path) == 1


def test_values_that_are_not_real_numbers_are_refused_as_protocol(wine):
    from ddppm.federation.party import Party

    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "conventional", seed=3)
    transcript = honest_transcript(wine, agreement)
    step, message = transcript[0]
    lower = message["lower"]
    for crafted in [lower.astype(complex), lower.astype(object), [str(v) for v in lower], [True] * lower.size,
                    [10**400] * lower.size]:  # fmt: skip
        with pytest.raises(Refused, match="^refused: protocol$"):
            Party(split(wine)[0], 0, agreement).answer(step, {**message, "lower": crafted})
