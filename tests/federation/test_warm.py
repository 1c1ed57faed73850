"""A party's warm executor (ddppm.federation.warm): one task runs ddppm's ClientApp in this process and hands back
its reply and status; a run of another app is refused with an error reply, the app never called. (End to end,
with real SuperNodes, in test_flower.py: the commands' release, and a killed party leaving no process.)"""

from __future__ import annotations

import types

import numpy as np
import pytest

pytest.importorskip("flwr", reason="the federation extra installs Flower")
from flwr.app import Array, ArrayRecord, Context, Message, RecordDict  # noqa: E402
from flwr.common.constant import SubStatus  # noqa: E402

from ddppm.federation import warm  # noqa: E402


class _Heartbeat:
    is_running = False

    def __init__(self, *_args) -> None:
        pass

    def start(self) -> None:
        self.is_running = True

    def stop(self) -> None:
        self.is_running = False


@pytest.fixture
def task(monkeypatch):
    """One task whose run is of ``fab_id``; returns what was pushed back (reply, status, details) and the app's
    calls."""
    from flwr.supercore.task_identity import TaskIdentity

    for name, value in (("_run_id", 1), ("_node_id", 7), ("_task_id", 1)):  # as a task sets them
        monkeypatch.setattr(TaskIdentity, name, value)
    pushed: dict = {}
    calls: list = []
    incoming = Message(RecordDict({"x": ArrayRecord({"v": Array(np.zeros(2))})}), dst_node_id=7,
                       message_type="query")  # fmt: skip
    incoming.metadata.__dict__["_message_id"] = "m1"
    context = Context(1, 7, {}, RecordDict(), {})
    client = types.SimpleNamespace(close=lambda: None)
    monkeypatch.setattr(warm, "_client", lambda *a, **k: client)
    monkeypatch.setattr(warm, "HeartbeatSender", _Heartbeat)
    monkeypatch.setattr(warm, "push_message", lambda _c, reply, _ctx: pushed.update(reply=reply))
    monkeypatch.setattr(warm, "push_task_output", lambda _c, _ctx, status, details: pushed.update(
        status=status, details=details))  # fmt: skip

    def app(message, context):
        calls.append(message)
        return Message(RecordDict({"reply": ArrayRecord({"value": Array(np.ones(2))})}), reply_to=message)

    monkeypatch.setattr(warm, "clientapp", app)

    def run(fab_id: str):
        run_info = types.SimpleNamespace(fab_id=fab_id)
        monkeypatch.setattr(warm, "pull_task_input", lambda _c: (incoming, context, run_info))
        return warm.run_task("127.0.0.1:1", "token"), pushed, calls

    return run


def test_a_task_of_ddppms_app_runs_here_and_its_reply_goes_back(task):
    completed, pushed, calls = task("ddppm/ddppm-federation")
    assert completed and pushed["status"] == SubStatus.COMPLETED and len(calls) == 1
    assert not pushed["reply"].has_error()
    np.testing.assert_array_equal(pushed["reply"].content.array_records["reply"]["value"].numpy(), [1.0, 1.0])


def test_a_task_of_another_app_is_refused_and_the_app_never_runs(task):
    completed, pushed, calls = task("someone/other-app")
    assert not completed and calls == []
    assert pushed["status"] == SubStatus.FAILED and "runs only ddppm's ddppm-federation" in pushed["details"]
    assert pushed["reply"].has_error() and "other-app" in pushed["reply"].error.reason
