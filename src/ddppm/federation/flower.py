"""The party and the coordinator as Flower apps (``flwr`` 1.42, the deployment engine; docs/federation.md).

* :data:`clientapp` runs on each party's SuperNode. Its node config names the party's own files: ``data-path``
  (its CSV: a header row, one record per row), ``agreement-path`` (the agreement it accepted, JSON),
  ``party-index`` and, optionally, ``ledger-path``. For every message it rebuilds the
  :class:`~ddppm.federation.party.Party` from them and from the state Flower keeps for it between messages, and
  replies with its noisy contribution. It opens no other file.
* :data:`serverapp` runs the coordinator (:func:`~ddppm.federation.coordinator.coordinate`) over the SuperLink:
  a ``hello`` round maps each SuperNode to its party index (checking every party's agreement digest, size and
  number of features), then every step is one query per party, the replies summed in the parties' order. Its run
  config names ``agreement-path`` and ``out-path`` (the release, JSON, written atomically).

Both import Flower only here: the rest of the package runs without it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from flwr.app import Array, ArrayRecord, ConfigRecord, Context, Error, Message, RecordDict
from flwr.clientapp import ClientApp
from flwr.common.constant import ErrorCode
from flwr.serverapp import Grid, ServerApp

from ddppm.core.errors import ConfigError, DDPPMError
from ddppm.core.io import write_text_atomic
from ddppm.federation.agreement import Agreement, read_agreement
from ddppm.federation.coordinator import PartyFailed, coordinate
from ddppm.federation.party import Party
from ddppm.federation.plan import Refused, refusal_of
from ddppm.federation.plan import log as party_log
from ddppm.federation.public import PublicRelease
from ddppm.federation.secure_sum import pinned_secaggplus_mod, public_scale, secure_reply, secure_sum

clientapp = ClientApp()
serverapp = ServerApp()

POLL_SECONDS = 0.05
"""How often the coordinator asks the SuperLink for replies (Flower's Grid waits 3 s between pulls)."""


def encode(public: dict[str, Any]) -> RecordDict:
    """A message's public part as Flower records: arrays in an ArrayRecord, the rest (numbers, strings, None) in a
    ConfigRecord (None as the key's name in ``none``)."""
    arrays = {k: Array(np.ascontiguousarray(v, dtype=float)) for k, v in public.items() if isinstance(v, np.ndarray)}
    rest = {k: v for k, v in public.items() if not isinstance(v, np.ndarray) and v is not None}
    rest["none"] = [k for k, v in public.items() if v is None]
    return RecordDict({"arrays": ArrayRecord(arrays), "config": ConfigRecord(rest)})


def decode(content: RecordDict) -> dict[str, Any]:
    """:func:`encode`'s inverse."""
    public: dict[str, Any] = {k: a.numpy() for k, a in content.array_records["arrays"].items()}
    config = dict(content.config_records["config"])
    public.update({k: None for k in config.pop("none", [])})
    public.update(config)
    return public


def _rows_key(path: Path) -> str | None:
    """A version of the party's file: a hash of its path, size and modification time (None: not a file)."""
    import hashlib

    if not path.is_file():
        return None
    stat = path.stat()
    return hashlib.sha256(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:32]


_KEPT: dict[str, np.ndarray] = {}


def keep_rows(path: str | Path) -> np.ndarray:
    """The party's rows (:func:`ddppm.release.user_files.read_records`' rules: a header row, numeric columns),
    parsed now and kept in this process's memory for every later message (a warm executor, :mod:`ddppm.federation.warm`,
    answers every message in this process, so no parsed copy is written to disk)."""
    from ddppm.release.user_files import read_records

    path = Path(path)
    frame, _ = read_records(path, None)
    rows = frame.to_numpy(dtype=float)
    key = _rows_key(path)
    if key is not None:
        _KEPT.clear()
        _KEPT[key] = rows
    return rows


def read_party_rows(path: str | Path) -> np.ndarray:
    """The party's rows: those :func:`keep_rows` kept in this process if the file has not changed since, else
    parsed once per version of the file. Under Flower's process per message (a stock SuperNode), parsing 10⁵ rows
    each time cost seconds, so the parsed rows stay on the party's own machine, readable by its user only, in
    ``$DDPPM_CACHE_DIR/party-rows/`` (default ``~/.cache/ddppm/party-rows/``), under the file's version; delete the
    folder after a release to keep no copy. ``ddppm party`` keeps them in memory only."""
    import io

    from ddppm.core.io import atomic_write
    from ddppm.release.user_files import read_records

    path = Path(path)
    key = _rows_key(path)
    if key in _KEPT:
        return _KEPT[key]
    cached = None
    if key is not None:
        base = os.environ.get("DDPPM_CACHE_DIR") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        cached = Path(base) / ("party-rows" if os.environ.get("DDPPM_CACHE_DIR") else "ddppm/party-rows") / f"{key}.npy"
        if cached.is_file():
            return np.load(cached)
    frame, _ = read_records(path, None)
    rows = frame.to_numpy(dtype=float)
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        buffer = io.BytesIO()
        np.save(buffer, rows)
        with atomic_write(cached) as temporary:
            temporary.chmod(0o600)
            temporary.write_bytes(buffer.getvalue())
    return rows


OPEN_LOG = "DDPPM_PARTY_OPEN_LOG"
"""Environment variable naming a file to which a party's process appends every path it opens (a test's watch:
``tests/federation/test_flower.py`` checks that no party opens another party's file)."""


def _watch_opens() -> None:
    log = os.environ.get(OPEN_LOG)
    if not log:
        return

    def hook(event: str, args: tuple) -> None:
        if event == "open" and isinstance(args[0], str | Path) and str(args[0]) != log:
            with open(log, "a") as handle:  # noqa: PTH123 (the hook itself is audited: the log is skipped above)
                handle.write(f"{args[0]}\n")

    sys.addaudithook(hook)


@clientapp.query()
def party_query(msg: Message, context: Context) -> Message:
    """One step of this SuperNode's party (module docstring), in the clear: the ``hello`` round, and every step at
    trust ``local``; at trust ``secure_aggregation`` only ``hello`` (every other step goes through SecAgg+). Any
    failure is answered with a refusal from :data:`~ddppm.federation.plan.REFUSALS` alone."""
    _watch_opens()
    return _refusing(msg, lambda: _party_query(msg, context))


def _party_query(msg: Message, context: Context) -> Message:
    node = context.node_config
    agreement = _accepted_agreement(node)
    index = int(node["party-index"])
    try:
        public = decode(msg.content)
        step = public.pop("step")
    except Exception as error:  # noqa: BLE001 (a malformed message: its contents decide nothing)
        raise Refused("protocol", f"a message that does not decode ({type(error).__name__})") from None
    if step == "hello":  # the party's checks (its rows, the agreement's sizes and bounds) run here, before any noise
        try:
            X = read_party_rows(str(node["data-path"]))
            Party(X, index, agreement)
        except Exception as error:  # noqa: BLE001 (the rows' own error may quote a cell: it stays here)
            raise Refused("rows", f"{type(error).__name__}: {error}") from None
        reply = np.array([index, X.shape[0], X.shape[1]], dtype=float)
        content = RecordDict({"reply": ArrayRecord({"value": Array(reply)}),
                              "digest": ConfigRecord({"agreement": agreement.digest()})})  # fmt: skip
        return Message(content, reply_to=msg)
    if agreement.trust == "secure_aggregation":
        raise Refused("protocol", f"step {step!r} in the clear at trust secure_aggregation (only hello is)")
    value = _answer(context, step, public)
    return Message(RecordDict({"reply": ArrayRecord({"value": Array(value)})}), reply_to=msg)


def _accepted_agreement(node: Any) -> Agreement:
    """The agreement this party accepted (its node config's ``agreement-path``); simulation noise protects nothing,
    so it is refused unless the node config says ``testing-simulation-noise`` (tests comparing with one process)."""
    try:
        agreement = read_agreement(str(node["agreement-path"]))
    except Exception as error:  # noqa: BLE001 (the party's own file: its error stays here)
        raise Refused("agreement", f"{type(error).__name__}: {error}") from None
    pinned = node.get("agreement-digest")
    if pinned is not None and pinned != agreement.digest():  # `ddppm party` pins the agreement it showed its user
        raise Refused("agreement", f"the agreement file now has digest {agreement.digest()[:12]}; this party accepted "
                      f"{str(pinned)[:12]}")  # fmt: skip
    if agreement.noise != "secure" and str(node.get("testing-simulation-noise", "")).lower() not in ("true", "1"):
        raise Refused("agreement", "an agreement with simulation noise (it protects nothing; for tests only, with "
                      "the node config testing-simulation-noise=true)")  # fmt: skip
    return agreement


def _refusing(msg: Message, answer: Any) -> Message:
    """``answer()``, or an error reply carrying only the refusal's word (``refused: protocol`` for any failure
    that is not a :class:`~ddppm.federation.plan.Refused`); the details go to this party's own log."""
    try:
        return answer()
    except Exception as error:  # noqa: BLE001 (every failure becomes a refusal of the fixed vocabulary)
        refusal = refusal_of(error)
        party_log.error("party: %s (%s: %s)", refusal, type(error).__name__, getattr(error, "detail", error))
        return Message(Error(code=ErrorCode.CLIENT_APP_RAISED_EXCEPTION, reason=refusal), reply_to=msg)


@clientapp.train(mods=[pinned_secaggplus_mod])
def party_secure(msg: Message, context: Context) -> Message:
    """One step of this party through secure aggregation (:mod:`ddppm.federation.secure_sum`): the same reply as
    :func:`party_query`'s, masked by ``secaggplus_mod`` before it leaves the node."""
    _watch_opens()

    def answer() -> Message:
        _accepted_agreement(context.node_config)
        try:
            config = msg.content.config_records["fitins.config"]
            public = {k: (np.asarray(v, dtype=float) if isinstance(v, list) else v)
                      for k, v in json.loads(str(config["public"])).items()}  # fmt: skip
            step, scale = str(config["step"]), float(config["scale"])
        except Exception as error:  # noqa: BLE001 (a malformed message: its contents decide nothing)
            raise Refused("protocol", f"a secure step that does not decode ({type(error).__name__})") from None
        value = _answer(context, step, public, scale=scale)
        return Message(secure_reply(value, scale), reply_to=msg)

    return _refusing(msg, answer)


_LIVE: dict[tuple[int, int], tuple[str, Party]] = {}
"""The parties of the run this process answered last, by (run, node), each with the state it saved (a warm
executor's process answers every message of its node: :mod:`ddppm.federation.warm`)."""


def _answer(context: Context, step: str, public: dict[str, Any], scale: float | None = None) -> np.ndarray:
    """Answer ``step`` as this node's party and save its state. The party is the one this process kept from the
    run's previous message if the saved state is the one it left; otherwise it is rebuilt from its files and the
    saved state (Flower's process per message; a restarted executor). Both answer the same bits (tested)."""
    node = context.node_config
    state_key = f"party:{context.run_id}"  # per run: Flower copies a run series' state into its next run
    party_state = context.state.config_records.get(state_key)
    saved = str(party_state["state"]) if party_state is not None else None
    key = (context.run_id, context.node_id)
    for other in [k for k in _LIVE if k[0] != context.run_id]:
        del _LIVE[other]  # a new run: the previous run's parties are done
    live = _LIVE.pop(key, None)
    if live is not None and live[0] == saved:
        party = live[1]
    else:
        ledger = str(node["ledger-path"]) if "ledger-path" in node else None
        try:
            party = Party(read_party_rows(str(node["data-path"])), int(node["party-index"]),
                          _accepted_agreement(node), ledger=ledger, run=f"flower-run:{context.run_id}",
                          state=json.loads(saved) if saved is not None else None)  # fmt: skip
        except Refused:
            raise
        except Exception as error:  # noqa: BLE001 (the rows' own error may quote a cell: it stays here)
            raise Refused("rows", f"{type(error).__name__}: {error}") from None
    try:
        if scale is not None:
            _check_scale(party, step, scale)
        value = party.answer(step, public)
    finally:  # a refused or failed step still moves the party on: it is never answered again in this run
        state = json.dumps(party.state)
        context.state.config_records[state_key] = ConfigRecord({"state": state})
        _LIVE[key] = (state, party)
    return np.asarray(value, float)


def _check_scale(party: Party, step: str, scale: float) -> None:
    """Secure aggregation's public scale is the party's own (:func:`step_scales`, from the agreement alone): a
    coordinator's tiny scale would clip a reply to its signs, a huge one would leave another party's share alone in
    the sum."""
    try:
        expected = step_scales(party.public)(step)
    except (KeyError, ValueError) as error:
        raise Refused("protocol", f"no public scale for step {step!r} ({type(error).__name__})") from None
    if scale != expected:
        raise Refused("protocol", f"the secure step {step!r} came with scale {scale!r}; the agreement's is "
                      f"{expected!r}")  # fmt: skip


class FlowerTransport:
    """The coordinator's transport over a Flower Grid: one query per party and step, replies summed in the
    parties' order (:class:`~ddppm.federation.coordinator.InProcess`'s contract)."""

    def __init__(self, grid: Grid, nodes: list[int], timeout: float, secure: Any = None,
                 names: list[int | str] | None = None) -> None:  # fmt: skip
        self.grid, self.nodes, self.timeout = grid, nodes, timeout
        self.context, self.secure = secure, secure is not None  # secure: the ServerApp's context, for SecAgg+
        self.scales: Any = None
        self.received = [0] * len(nodes)  # payload bytes received from each party (plain replies; masked: scaled)
        self.steps = 0
        self.names = list(range(len(nodes))) if names is None else names  # party indices, or the nodes' ids
        self.round = 0

    @property
    def parties(self) -> int:
        return len(self.nodes)

    def ask(self, step: str, public: dict[str, Any], step_name: str | None = None) -> list[Message]:
        """Send ``step`` to every party and return the replies in the parties' order; a party that refuses or does
        not answer within the timeout is named (``step_name``: the step to name, when ``step`` is a probe)."""
        nodes = self.nodes
        self.round += 1
        messages = [Message(encode({**public, "step": step}), dst_node_id=node, message_type="query",
                            group_id=f"{self.round}:{step}") for node in nodes]  # fmt: skip
        ids = list(self.grid.push_messages(messages))
        gone = [self.names[j] for j, i in enumerate(ids) if i is None]  # the SuperLink no longer knows its node
        if gone:
            raise PartyFailed(gone[0], step_name or step, f"{gone}: the SuperLink could not deliver the message (the "
                              "party's node left)")  # fmt: skip
        pending = set(ids)
        replies: dict[str, Message] = {}
        deadline = time.monotonic() + self.timeout
        while pending:
            for reply in self.grid.pull_messages(list(pending)):
                replies[reply.metadata.reply_to_message_id] = reply
                pending.discard(reply.metadata.reply_to_message_id)
            if pending and time.monotonic() > deadline:
                silent = [self.names[ids.index(i)] for i in pending]
                failed = PartyFailed(silent[0], step_name or step, f"{silent} did not answer within {self.timeout:g} "
                                     "s (dead, or the connection dropped)")  # fmt: skip
                if step != "hello":  # a reply lost when another party's node died: name the party that is gone
                    self.ask("hello", {}, step_name=step_name or step)
                raise failed
            if pending:
                time.sleep(POLL_SECONDS)
        ordered = [replies[i] for i in ids]
        for j, message in enumerate(ordered):
            if message.has_error():
                raise PartyFailed(self.names[j], step_name or step, message.error.reason)
        return ordered

    def each(self, step: str, public: dict[str, Any]) -> list[np.ndarray]:
        """Every party's reply, in the parties' order (trust ``local`` only: each release is public)."""
        if self.secure:
            raise ConfigError(f"coordinator: step {step!r} needs each party's release, which secure aggregation hides")
        return self._plain(step, public)

    def _plain(self, step: str, public: dict[str, Any]) -> list[np.ndarray]:
        """One step in the clear: every party's reply, its payload counted."""
        self.steps += 1
        replies = [m.content.array_records["reply"]["value"].numpy() for m in self.ask(step, public)]
        for j, reply in enumerate(replies):
            self.received[j] += int(reply.nbytes)
        return replies

    def sum(self, step: str, public: dict[str, Any]) -> np.ndarray:
        if self.secure:
            self.steps += 1
            plain = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in public.items()}
            config = {"step": step, "public": json.dumps(plain), "scale": self.scales(step)}
            try:
                total = secure_sum(self.grid, self.context, self.nodes, config, config["scale"], self.timeout)
                self.received = [b + int(total.nbytes) for b in self.received]  # each party's masked vector
                return total
            except PartyFailed as failed:  # SecAgg+ does not say who: the party that no longer answers, if any
                self.ask("hello", {}, step_name=step)
                raise failed
        replies = self._plain(step, public)
        total = replies[0]
        for reply in replies[1:]:
            total = total + reply
        return total


def connect(grid: Grid, agreement: Agreement, timeout: float) -> tuple[list[int], int]:
    """Wait for the parties' SuperNodes, then map each to its party index (``hello``): every one must hold the
    agreement's digest, its size, and the same number of features. Returns the nodes in the parties' order, and d."""
    deadline = time.monotonic() + timeout
    parties = len(agreement.sizes)
    while len(nodes := sorted(grid.get_node_ids())) < parties:
        if time.monotonic() > deadline:
            raise ConfigError(f"coordinator: {len(nodes)} of {parties} parties connected within {timeout:g} s")
        time.sleep(0.2)
    replies = FlowerTransport(grid, nodes, timeout, names=[f"node {node}" for node in nodes]).ask("hello", {})
    order: dict[int, int] = {}
    features = set()
    for node, reply in zip(nodes, replies, strict=True):
        index, size, d = (int(v) for v in reply.content.array_records["reply"]["value"].numpy())
        digest = reply.content.config_records["digest"]["agreement"]
        if digest != agreement.digest():
            raise ConfigError(f"coordinator: party {index} accepted another agreement (digest {digest[:12]}…)")
        if index in order or not 0 <= index < parties or size != agreement.sizes[index]:
            raise ConfigError(f"coordinator: node {node} says party {index} with {size} rows; the agreement has "
                              f"{parties} parties of sizes {list(agreement.sizes)}, each once")  # fmt: skip
        order[index] = node
        features.add(d)
    if len(features) != 1:
        raise ConfigError(f"coordinator: the parties' records have different numbers of features {sorted(features)}")
    return [order[j] for j in range(parties)], features.pop()


@serverapp.main()
def coordinator_main(grid: Grid, context: Context) -> None:
    """Run one federated release and write it (module docstring); on any failure, the release file holds the error
    alone, and nothing is released."""
    out = Path(str(context.run_config["out-path"]))
    try:
        document = _release(grid, context)
    except Exception as error:
        reason = str(error) if isinstance(error, DDPPMError) else (f"the coordinator failed ({type(error).__name__}: "
                                                                   f"{error}); nothing is released")  # fmt: skip
        write_text_atomic(out, json.dumps({"error": reason}) + "\n")
        raise
    write_text_atomic(out, json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def _release(grid: Grid, context: Context) -> dict[str, Any]:
    """The release of the run's agreement. A run config's ``agreement-digest`` (``ddppm coordinate`` sets it; the
    parties refuse a run without theirs) must be the agreement file's: the file read here is the one the run was
    started for, not one changed since."""
    config = context.run_config
    agreement = read_agreement(str(config["agreement-path"]))
    digest = config.get("agreement-digest")
    if digest and digest != agreement.digest():
        raise ConfigError(f"coordinator: the run is for agreement {str(digest)[:12]}, but {config['agreement-path']} "
                          f"holds agreement {agreement.digest()[:12]}; nothing is released")  # fmt: skip
    timeout = float(config.get("timeout", 120.0))
    _quick_pulls(timeout)
    started = time.monotonic()
    nodes, d = connect(grid, agreement, timeout)
    connected = time.monotonic()
    secure = agreement.trust == "secure_aggregation"  # the parties answer nothing else in the clear
    transport = FlowerTransport(grid, nodes, timeout, secure=context if secure else None)
    transport.scales = step_scales(PublicRelease(agreement, d))
    release = coordinate(transport, agreement, d)
    return {"components": release.components.tolist(), "mean": release.mean.tolist(),
            "scale": release.scale.tolist(), "privacy": release.certificate.to_dict(),
            "transport": {"steps": transport.steps, "payload_bytes_per_party": transport.received,
                          "secure_aggregation": transport.secure,
                          "seconds": {"connect": round(connected - started, 3),
                                      "release": round(time.monotonic() - connected, 3)}}}  # fmt: skip


def _quick_pulls(timeout: float) -> None:
    """Let the coordinator's Grid retry a reply it cannot fetch yet after 10 ms, not Flower 1.42's 1 s, and give up
    after ``timeout`` seconds, not two hours (its ``pull_objects`` defaults, which the Grid does not let a ServerApp
    set). The first try often misses: a second per step was a third of a release's time. A party that dies while
    it uploads its reply leaves parts that never come: the Grid then returns an error reply, which names the party,
    instead of waiting for them (docs/federation.md, "Speed", "Faults")."""
    import functools

    import flwr.superlink.grid.http_grid as http_grid
    from flwr.supercore.inflatable.inflatable_utils import pull_objects

    http_grid.pull_objects = functools.partial(pull_objects, initial_backoff=0.01, backoff_cap=0.5, max_time=timeout)


def step_scales(public: PublicRelease) -> Any:
    """Each step's public scale for secure aggregation (:func:`~ddppm.federation.secure_sum.public_scale`): n plus
    50 times the largest noise standard deviation a party adds in it (the preprocessing's, from its plan; the
    method's, :meth:`~ddppm.common_task.base.CommonTaskMethod.federated_noise`)."""
    noise = public.noise
    spread = np.sqrt(noise.parties) if noise is not None else 1.0
    stds = {"box_counts": noise.sigma_range, "sums": max(noise.sigma_sum, np.nan_to_num(noise.sigma_squares)),
            "norm_counts": noise.sigma_radius} if noise is not None else {}  # fmt: skip

    def scale(step: str) -> float:  # the method's noise (its calibration) only when a method step asks
        if step.startswith("method"):
            std = public.method.federated_noise(public)
        else:
            std = spread * float(np.nan_to_num(stds[step]))
        return public_scale(public.agreement.n, std)

    return scale
