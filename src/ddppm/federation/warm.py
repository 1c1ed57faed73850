"""A party's warm executor: the party's own process answers every message of a run (docs/federation.md, "Speed").

Flower 1.42's SuperNode, by default (``--isolation subprocess``), starts a new ``flwr-clientapp`` process for every
message: about 1.5 s of imports and of loading the app per step of a release, more when several parties share a
machine. With ``--isolation process`` the SuperNode runs no ClientApp itself; it hands each message, as a task with
a one-time token, to whatever process asks its runtime API (127.0.0.1 only). :func:`serve` is that process: it asks
for tasks, runs ddppm's :data:`~ddppm.federation.flower.clientapp` on each in this process (imports loaded once,
the party's rows parsed once and kept in memory: :func:`~ddppm.federation.flower.keep_rows`), and hands the reply
and the updated state back, the steps Flower's own ``flwr-clientapp`` takes (``flwr.supernode.runtime.
run_clientapp``: pull the task's input, run the app, push the reply, push the task's output).

It runs only ddppm's ClientApp, the one installed with this party's ddppm: the app bundle (FAB) that the
coordinator ships with the run is never installed or imported. A run is answered only if its app is this one (its
publisher, name and version, :func:`installed_app`) and its run config's ``agreement-digest`` is the digest of the
agreement this party accepted (:func:`check_run`). Whatever fails, the coordinator receives one of the fixed
refusals (:func:`~ddppm.federation.plan.refusal_of`: ``refused: protocol`` unless the error names another of
:data:`ddppm.federation.plan.REFUSALS`); the details, which may carry the party's file names or values, go to the
party's own log only. The replies are the same messages as under subprocess isolation (tested): the party's state
between messages lives in Flower's context, as there.
"""

from __future__ import annotations

import functools
import time
import tomllib
from collections.abc import Callable
from logging import ERROR
from pathlib import Path

from flwr.app import Context, Message
from flwr.app.error import Error
from flwr.common.constant import ErrorCode, SubStatus
from flwr.common.serde import context_from_proto, run_from_proto
from flwr.proto.node_pb2 import Node
from flwr.proto.runtime_pb2 import AcquireTaskRequest, PullAppMessagesRequest, PullTaskInputRequest
from flwr.supercore import log
from flwr.supercore.constant import TaskType
from flwr.supercore.heartbeat import HeartbeatSender, make_task_heartbeat_fn_http
from flwr.supercore.inflatable.inflatable_protobuf_utils import (
    make_confirm_message_received_fn_protobuf,
    make_pull_object_fn_protobuf,
)
from flwr.supercore.inflatable.inflatable_utils import pull_and_inflate_object_from_tree
from flwr.supercore.interceptors import (
    RuntimeTokenHttpInterceptor,
    RuntimeVersionHttpInterceptor,
    SuperExecAuthHttpInterceptor,
)
from flwr.supercore.retry import make_simple_http_retry_invoker
from flwr.supercore.run import Run
from flwr.supercore.runtime import RuntimeHttpClient
from flwr.supercore.task_identity import TaskIdentity
from flwr.supernode.runtime.run_clientapp import push_message, push_task_output

from ddppm.federation.agreement import read_agreement
from ddppm.federation.flower import clientapp
from ddppm.federation.plan import REFUSAL_TEXTS, REFUSED, Refused, refusal_of

POLL_SECONDS = 0.05
"""How often the executor asks the SuperNode for a task (Flower's own SuperExec: 1 s, or its environment's
``FLWR_SUPEREXEC_TASK_POLL_INTERVAL``)."""

APP_NAME = "ddppm-federation"
"""The app this executor runs (``src/ddppm/federation/app/pyproject.toml``'s project name)."""

APP_FOLDER = Path(__file__).parent / "app"
"""The installed app's folder: its ``pyproject.toml`` names the publisher, the name and the version a run must have."""

ACQUIRE = "/flwr.proto.Runtime/AcquireTask"
"""The runtime API's method that hands out tasks: signed with the SuperNode's secret (:func:`run_node`)."""

TASK_RETRY_SECONDS = 30.0
"""How long a task's requests to the SuperNode are retried (Flower's own ClientApp: forever) before the task fails."""


def _client(address: str, *interceptors: object, retry: bool = True) -> RuntimeHttpClient:
    """A client of the SuperNode's runtime API on loopback; ``retry``: Flower's retries, for at most
    :data:`TASK_RETRY_SECONDS` (the polling client has none: a failed poll is retried by the loop, which first
    checks that the SuperNode is alive)."""
    invoker = None
    if retry:
        invoker = make_simple_http_retry_invoker()
        invoker.max_time = TASK_RETRY_SECONDS
    return RuntimeHttpClient.from_server_address(
        server_address=address, insecure=True, root_certificates=None,
        interceptors=[RuntimeVersionHttpInterceptor(component_name="flwr-clientapp"), *interceptors],
        retry_invoker=invoker)  # fmt: skip


def pull_task_input(client: RuntimeHttpClient) -> tuple[Message, Context, Run]:
    """The task's message, context and run: ``flwr.supernode.runtime.run_clientapp.pull_task_input``'s steps, but
    retrying an object the SuperNode has not stored yet after 10 ms, not Flower's 1 s (its first try usually
    misses: a second per message, most of a step's time), and for :data:`TASK_RETRY_SECONDS`, not two hours."""
    task = client.PullTaskInput(PullTaskInputRequest())
    TaskIdentity.task_id, TaskIdentity.run_id = task.task_id, task.run.run_id  # as Flower's ClientApp sets them
    TaskIdentity.node_id = task.context.node_id
    context, run = context_from_proto(task.context), run_from_proto(task.run)
    pulled = client.PullMessages(PullAppMessagesRequest())
    if not pulled.messages_list:
        raise RuntimeError("no message from the SuperNode's runtime API")
    node, tree = Node(node_id=context.node_id), pulled.message_object_trees[0]
    message = pull_and_inflate_object_from_tree(
        tree, make_pull_object_fn_protobuf(client.PullObject, node, context.run_id),
        make_confirm_message_received_fn_protobuf(client.ConfirmMessageReceived, node, context.run_id),
        return_type=Message, initial_backoff=0.01, backoff_cap=0.5, max_time=TASK_RETRY_SECONDS)  # fmt: skip
    message.metadata.__dict__["_message_id"] = tree.object_id
    return message, context, run


@functools.cache
def installed_app() -> tuple[str, str]:
    """The installed app's identity: ``publisher/name`` (a run's ``fab_id``) and its version (its ``fab_version``)."""
    project = tomllib.loads((APP_FOLDER / "pyproject.toml").read_text(encoding="utf-8"))
    publisher = project["tool"]["flwr"]["app"]["publisher"]
    return f"{publisher}/{project['project']['name']}", str(project["project"]["version"])


def check_run(run: Run, context: Context) -> None:
    """Answer only a run of the installed app (its publisher and name, and its version) whose run config carries
    the digest of the agreement this party accepted; else :class:`~ddppm.federation.plan.Refused` (``protocol``)."""
    fab_id, version = installed_app()
    if run.fab_id != fab_id or run.fab_version != version:
        raise Refused("protocol", f"this party runs only {fab_id}=={version}, not {run.fab_id}=={run.fab_version}")
    digest = read_agreement(str(context.node_config["agreement-path"])).digest()
    sent = context.run_config.get("agreement-digest")
    if sent != digest:
        raise Refused("protocol", f"the run's agreement-digest {str(sent)[:12]!r} is not this party's agreement's "
                         f"{digest[:12]}")  # fmt: skip


def run_task(address: str, token: str) -> bool:
    """Run one task (one message to this party) with its token; True if the app answered without an error. A
    failure is logged here in full and sent as its refusal only (:func:`~ddppm.federation.plan.refusal_of`)."""
    client = _client(address, RuntimeTokenHttpInterceptor(token))
    heartbeat = HeartbeatSender(make_task_heartbeat_fn_http(client))
    message, context, reply = None, None, None
    status, details = SubStatus.FAILED, REFUSED
    try:
        heartbeat.start()
        message, context, run = pull_task_input(client)
        check_run(run, context)
        reply = clientapp(message=message, context=context)
        if reply.has_error() and reply.error.reason not in REFUSAL_TEXTS:
            # the app's own error reply carries the app's text: only a fixed refusal may leave
            log(ERROR, "ddppm party: the app replied with an error: %s", reply.error.reason)
            reply = Message(Error(code=reply.error.code, reason=REFUSED), reply_to=message)
        status, details = SubStatus.COMPLETED, ""
    except Exception as error:  # noqa: BLE001 (any failure becomes the refusal the coordinator names)
        log(ERROR, "ddppm party: the task failed: %s", getattr(error, "detail", "") or error, exc_info=error)
        details = refusal_of(error)
        if message is not None:
            reply = Message(Error(code=ErrorCode.CLIENT_APP_RAISED_EXCEPTION, reason=details), reply_to=message)
    finally:
        try:
            if reply is not None and context is not None:
                push_message(client, reply, context)
            push_task_output(client, context, status, details)
        finally:
            if heartbeat.is_running:
                heartbeat.stop()
            client.close()
    return status == SubStatus.COMPLETED


def serve(address: str, running: Callable[[], bool] = lambda: True, secret: bytes | None = None) -> None:
    """Ask the SuperNode at ``address`` (its runtime API) for tasks and run each, while ``running()`` (false once
    the party is told to stop, or its SuperNode's process has ended). ``secret``: the SuperNode's SuperExec secret,
    which signs every request for a task (no other process on the machine can take the party's messages)."""
    from ddppm.release.noise import opendp_module

    opendp_module()  # the secure sampler's imports, once, before the first step waits for them
    signed = [SuperExecAuthHttpInterceptor(master_secret=secret, protected_methods=frozenset({ACQUIRE}))]
    client = _client(address, *(signed if secret else []), retry=False)
    try:
        while running():
            try:
                found = client.AcquireTask(AcquireTaskRequest(supported_task_types=[TaskType.CLIENT_APP]))
            except Exception:  # noqa: BLE001 (the SuperNode not up yet, or gone: running() decides)
                time.sleep(0.2)
                continue
            if found.HasField("task") and found.token:
                run_task(address, found.token)
            else:
                time.sleep(POLL_SECONDS)
    finally:
        client.close()


def run_node(supernode: list[str], port: int, env: dict[str, str]) -> int:
    """Start the party's SuperNode (``supernode``: its command, without ``--isolation`` and ``--port``) with
    process isolation, its runtime API on 127.0.0.1:``port`` and a fresh SuperExec secret (a file readable by this
    user only, removed at the end), and serve its tasks here until it ends; SIGTERM and SIGINT stop both. The
    SuperNode is told to die with this process (``PR_SET_PDEATHSIG``), so a killed party leaves no SuperNode behind.
    Returns the SuperNode's exit status."""
    import os
    import secrets
    import signal
    import subprocess
    import tempfile

    from ddppm.federation.processes import die_with_parent

    secret = secrets.token_bytes(32)
    handle, secret_file = tempfile.mkstemp(prefix="ddppm-party-")  # mode 0600
    os.write(handle, secret)
    os.close(handle)
    command = [*supernode, "--isolation", "process", "--port", str(port), "--superexec-auth-secret-file", secret_file]
    stopped: list[int] = []

    def on_signal(number: int, _frame: object) -> None:
        stopped.append(number)  # no lock here: a handler that takes one can deadlock with the interrupted code

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    node = subprocess.Popen(command, env=env, preexec_fn=die_with_parent)  # noqa: PLW1509 (a single-threaded parent)
    try:
        serve(f"127.0.0.1:{port}", lambda: not stopped and node.poll() is None, secret=secret)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        if node.poll() is None:
            node.terminate()
            try:
                node.wait(timeout=10)
            except subprocess.TimeoutExpired:
                node.kill()
                node.wait()
        Path(secret_file).unlink(missing_ok=True)
    return int(node.returncode or 0)
