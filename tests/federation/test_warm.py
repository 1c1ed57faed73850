"""A party's warm executor (ddppm.federation.warm): one task runs ddppm's ClientApp in this process and hands back
its reply and status; a run of another app, of another version of this one, or of another agreement is refused
with the app never called; whatever fails, the coordinator receives a fixed refusal only, never the error's text
(which may quote the party's data), and the details stay in the party's log. (End to end, with real SuperNodes, in
test_flower.py: the commands' release, and a killed party leaving no process.)"""

from __future__ import annotations

import json
import logging
import types

import numpy as np
import pytest

pytest.importorskip("flwr", reason="the federation extra installs Flower")
from flwr.app import Array, ArrayRecord, Context, Error, Message, RecordDict  # noqa: E402
from flwr.common.constant import SubStatus  # noqa: E402

from ddppm.federation import warm  # noqa: E402
from ddppm.federation.agreement import Agreement  # noqa: E402
from tests.federation.conftest import BOUNDS, SIZES  # noqa: E402

SECRET = "Jane Doe, MRN 0012345"
"""A CSV cell of the party's that an error message could quote."""


class _Heartbeat:
    is_running = False

    def __init__(self, *_args) -> None:
        pass

    def start(self) -> None:
        self.is_running = True

    def stop(self) -> None:
        self.is_running = False


class _RowsRefused(Exception):  # noqa: N818 (as the party's refusals)
    refusal = "refused: rows"


@pytest.fixture
def task(monkeypatch, tmp_path):
    """One task whose run is of ``fab_id`` at ``version`` with ``run_config``; ``app``: the ClientApp (default: one
    that replies ones). Returns whether it completed, what was pushed back (reply, status, details) and the app's
    calls."""
    from flwr.supercore.task_identity import TaskIdentity

    for name, value in (("_run_id", 1), ("_node_id", 7), ("_task_id", 1)):  # as a task sets them
        monkeypatch.setattr(TaskIdentity, name, value)
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "conventional")
    (tmp_path / "agreement.json").write_text(json.dumps(agreement.to_dict()))
    pushed: dict = {}
    calls: list = []
    incoming = Message(RecordDict({"x": ArrayRecord({"v": Array(np.zeros(2))})}), dst_node_id=7,
                       message_type="query")  # fmt: skip
    incoming.metadata.__dict__["_message_id"] = "m1"
    client = types.SimpleNamespace(close=lambda: None)
    monkeypatch.setattr(warm, "_client", lambda *a, **k: client)
    monkeypatch.setattr(warm, "HeartbeatSender", _Heartbeat)
    monkeypatch.setattr(warm, "push_message", lambda _c, reply, _ctx: pushed.update(reply=reply))
    monkeypatch.setattr(warm, "push_task_output", lambda _c, _ctx, status, details: pushed.update(
        status=status, details=details))  # fmt: skip

    def replies(message, context):
        return Message(RecordDict({"reply": ArrayRecord({"value": Array(np.ones(2))})}), reply_to=message)

    def run(fab_id: str = "ddppm/ddppm-federation", version: str | None = None, run_config: dict | None = None,
            app=replies):  # fmt: skip
        version = warm.installed_app()[1] if version is None else version
        run_config = {"agreement-digest": agreement.digest()} if run_config is None else run_config
        context = Context(1, 7, {"agreement-path": str(tmp_path / "agreement.json")}, RecordDict(), run_config)
        run_info = types.SimpleNamespace(fab_id=fab_id, fab_version=version)
        monkeypatch.setattr(warm, "pull_task_input", lambda _c: (incoming, context, run_info))

        def watched(message, context):
            calls.append(message)
            return app(message, context)

        monkeypatch.setattr(warm, "clientapp", watched)
        pushed.clear()
        return warm.run_task("127.0.0.1:1", "token"), dict(pushed), calls

    return run


def test_the_installed_app_is_the_one_in_the_apps_pyproject():
    assert warm.installed_app() == ("ddppm/ddppm-federation", "0.1.0")


def test_a_task_of_ddppms_app_runs_here_and_its_reply_goes_back(task):
    completed, pushed, calls = task()
    assert completed and pushed["status"] == SubStatus.COMPLETED and len(calls) == 1
    assert not pushed["reply"].has_error()
    np.testing.assert_array_equal(pushed["reply"].content.array_records["reply"]["value"].numpy(), [1.0, 1.0])


@pytest.mark.parametrize(
    ("fab_id", "version", "run_config"),
    [
        ("someone/other-app", None, None),  # another app
        ("someone/ddppm-federation", None, None),  # the name alone is not the identity: another publisher
        ("ddppm/ddppm-federation", "0.0.9", None),  # another version of this app
        ("ddppm/ddppm-federation", None, {}),  # no agreement-digest in the run config
        ("ddppm/ddppm-federation", None, {"agreement-digest": "0" * 64}),  # another agreement's
    ],
)
def test_a_run_that_is_not_this_partys_is_refused_and_the_app_never_runs(task, caplog, fab_id, version, run_config):
    with caplog.at_level(logging.ERROR):
        completed, pushed, calls = task(fab_id, version, run_config)
    assert not completed and calls == []
    assert pushed["status"] == SubStatus.FAILED and pushed["details"] == "refused: protocol"
    assert pushed["reply"].has_error() and pushed["reply"].error.reason == "refused: protocol"
    assert "this party runs only" in caplog.text or "agreement-digest" in caplog.text  # the details: here only


def test_an_error_quoting_the_partys_data_reaches_the_coordinator_as_a_fixed_refusal(task, caplog):
    """The attack: a coordinator's message makes the party's code fail on a CSV cell; the error's text, which
    quotes the cell, must not be the reason sent back."""

    def fails(message, context):
        raise ValueError(f"could not convert string to float: '{SECRET}'")

    with caplog.at_level(logging.ERROR):
        completed, pushed, _ = task(app=fails)
    assert not completed
    assert pushed["details"] == "refused: protocol" and pushed["reply"].error.reason == "refused: protocol"
    assert SECRET not in repr(pushed["reply"].error) and SECRET not in pushed["details"]
    assert SECRET in caplog.text  # the party's own log keeps it


def test_an_errors_own_refusal_is_sent_and_only_a_fixed_one(task):
    completed, pushed, _ = task(app=lambda m, c: (_ for _ in ()).throw(_RowsRefused(SECRET)))
    assert not completed and pushed["reply"].error.reason == "refused: rows" and pushed["details"] == "refused: rows"

    class Odd(Exception):
        refusal = f"refused: {SECRET}"  # not one of the fixed refusals

    completed, pushed, _ = task(app=lambda m, c: (_ for _ in ()).throw(Odd()))
    assert pushed["reply"].error.reason == "refused: protocol"


def test_an_error_reply_of_the_app_is_sent_only_as_a_fixed_refusal(task):
    def leaks(message, context):
        return Message(Error(code=0, reason=f"ValueError: {SECRET}"), reply_to=message)

    _, pushed, _ = task(app=leaks)
    assert pushed["reply"].error.reason == "refused: protocol"

    def refuses(message, context):
        return Message(Error(code=0, reason="refused: budget"), reply_to=message)

    _, pushed, _ = task(app=refuses)
    assert pushed["reply"].error.reason == "refused: budget"
