"""A Flower Grid in one process (tests; no Ray, no network): the real ServerApp and ClientApps, SecAgg+ with real
crypto, every message serialised to protobuf and back as the SuperLink would.

``InProcessGrid`` implements the ``flwr.serverapp.Grid`` interface; every pushed
message is serialised to protobuf and back (so content that cannot cross the wire
fails here too), handed to the ClientApp with a per-node persistent ``Context``
(needed by ``secaggplus_mod``), and the reply is stored for ``pull_messages``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from flwr.app import Context, Error, Message, RecordDict
from flwr.clientapp import ClientApp
from flwr.common.serde import message_from_proto, message_to_proto
from flwr.proto.message_pb2 import Message as ProtoMessage  # pylint: disable=E0611
from flwr.serverapp import Grid, ServerApp
from flwr.supercore.run import Run
from flwr.supercore.task_identity import TaskIdentity

SERVER_NODE_ID = 1  # flwr.common.constant.SUPERLINK_NODE_ID


def _wire(msg: Message) -> Message:
    """Protobuf round trip, like the SuperLink would do."""
    return message_from_proto(
        ProtoMessage.FromString(message_to_proto(msg).SerializeToString()))


class InProcessGrid(Grid):
    def __init__(self, client_app: ClientApp, node_configs: dict[int, dict],
                 run_config: dict, run_id: int = 1) -> None:
        self._app = client_app
        self._run = Run.create_empty(run_id)
        self._ctx = {nid: Context(run_id, nid, dict(nc), RecordDict(), dict(run_config))
                     for nid, nc in node_configs.items()}
        self._replies: dict[str, Message] = {}
        self.n_messages = 0

    def set_run(self, run: Run) -> None:
        self._run = run

    @property
    def run(self) -> Run:
        return self._run

    def create_message(self, content, message_type, dst_node_id, group_id, ttl=None):
        return Message(content, dst_node_id, message_type, ttl=ttl, group_id=group_id)

    def get_node_ids(self) -> Iterable[int]:
        return list(self._ctx)

    def push_messages(self, messages: Iterable[Message]) -> Iterable[str]:
        ids = []
        for msg in messages:
            mid = uuid.uuid4().hex
            msg.metadata.__dict__["_message_id"] = mid
            ins = _wire(msg)
            try:
                reply = self._app(ins, self._ctx[ins.metadata.dst_node_id])
            except Exception as exc:  # the deployment runtime turns this into an Error
                reply = Message(Error(code=0, reason=repr(exc)), reply_to=ins)
            reply.metadata.__dict__["_message_id"] = uuid.uuid4().hex
            self._replies[mid] = _wire(reply)
            self.n_messages += 1
            ids.append(mid)
        return ids

    def pull_messages(self, message_ids: Iterable[str]) -> Iterable[Message]:
        return [self._replies.pop(i) for i in list(message_ids) if i in self._replies]

    def send_and_receive(self, messages, *, timeout=None):
        return list(self.pull_messages(self.push_messages(messages)))


def run_inprocess(server_app: ServerApp, client_app: ClientApp,
                  node_configs: dict[int, dict], run_config: dict) -> InProcessGrid:
    """Execute ``server_app`` to completion; returns the grid (for inspection)."""
    TaskIdentity.run_id, TaskIdentity.node_id, TaskIdentity.task_id = 1, SERVER_NODE_ID, 1
    grid = InProcessGrid(client_app, node_configs, run_config)
    server_app(grid, Context(1, SERVER_NODE_ID, {}, RecordDict(), dict(run_config)))
    return grid
