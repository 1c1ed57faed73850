"""The coordinator's ports, attacked (ddppm.federation.cli): Flower 1.42's Control API (``flwr run``, ``flwr
supernode register``) has no account authentication, so a stranger holding only the public CA certificate could
register a node and run a foreign app on the coordinator's machine. Now the SuperLink's Control and runtime APIs
listen on 127.0.0.1 only, the parties' port serves Flower's Fleet API alone, and it opens only after the parties'
keys are registered. Real processes; the parties' port is also dialled on this machine's non-loopback address."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("flwr", reason="the federation extra installs Flower")
from ddppm.federation import cli  # noqa: E402
from ddppm.federation.agreement import Agreement  # noqa: E402
from tests.federation.conftest import BOUNDS, SIZES  # noqa: E402
from tests.federation.loopback import BIN, QUIET, Process, free_port, make_node_key, make_tls  # noqa: E402
from tests.processes import alive, descendants  # noqa: E402

pytestmark = pytest.mark.slow


def listening(pid: int) -> list[tuple[str, int]]:
    """The (address, port) of every TCP socket process ``pid`` listens on, from /proc/net/tcp{,6} and its fds."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    found = []
    for table, width in (("tcp", 8), ("tcp6", 32)):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] != "0A" or fields[9] not in inodes:  # 0A: LISTEN
                continue
            address, port = fields[1].split(":")
            raw = bytes.fromhex(address)
            # the kernel writes each 32-bit word in host order (little-endian here)
            packed = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            family = socket.AF_INET if width == 8 else socket.AF_INET6
            found.append((socket.inet_ntop(family, packed), int(port, 16)))
    return found


def other_addresses() -> list[str]:
    """This machine's IPv4 addresses off the loopback interface (``ip -4 -o addr``)."""
    with contextlib.suppress(OSError):
        table = subprocess.run(["ip", "-4", "-o", "addr"], capture_output=True, text=True, timeout=10).stdout
        return [line.split()[3].split("/")[0] for line in table.splitlines()
                if len(line.split()) > 3 and not line.split()[3].startswith("127.")]  # fmt: skip
    return []


def reachable(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=2).close()
        return True
    except OSError:
        return False


def post(url: str, context=None) -> int:
    """The HTTP status of an empty POST (as Flower's clients send protobuf bodies)."""
    request = urllib.request.Request(url, data=b"", method="POST",
                                     headers={"Content-Type": "application/protobuf"})  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_the_parties_port_opens_after_the_keys_and_serves_the_fleet_api_alone(tmp_path: Path):
    """The SuperLink as ``ddppm coordinate`` starts it: before ``--open-when`` exists, the parties' port refuses
    connections while the Control API already answers on loopback; after, that port serves Flower's Fleet API and
    its health check, and answers 404 to the Control and runtime APIs."""
    port = free_port()
    home = tmp_path / "home"
    home.mkdir()
    command = [sys.executable, "-m", "ddppm.federation.superlink", "--public-host", "127.0.0.1",
               "--public-port", str(port), "--control-port-file", str(home / "control-port"),
               "--open-when", str(home / "open"), "--", "--insecure",
               "--disable-runtime-dependency-installation"]  # fmt: skip
    env = {**os.environ, **QUIET, "FLWR_HOME": str(home), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    link = Process("superlink", command, env, tmp_path / "superlink.log")
    try:
        control_file = home / "control-port"
        deadline = time.monotonic() + 60
        while not (control_file.is_file() and control_file.read_text().strip()) and time.monotonic() < deadline:
            assert link.popen.poll() is None, link.lines
            time.sleep(0.1)
        control = int(control_file.read_text())
        assert post(f"http://127.0.0.1:{control}/v1/control/list-runs") != 404  # the Control API, on loopback
        assert not reachable("127.0.0.1", port)  # the keys would be registered now: no party can connect yet
        (home / "open").touch()
        deadline = time.monotonic() + 30
        while not reachable("127.0.0.1", port) and time.monotonic() < deadline:
            time.sleep(0.1)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10) as response:
            assert response.status == 200
        for api in ("control/list-runs", "control/start-run", "control/list-nodes", "runtime/get-nodes",
                    "runtime/pull-messages", "runtime/acquire-task"):  # fmt: skip
            assert post(f"http://127.0.0.1:{port}/v1/{api}") == 404, api
        assert post(f"http://127.0.0.1:{port}/v1/fleet/pull-messages") != 404  # the parties' API is served
        sockets = listening(link.popen.pid)
        assert ("127.0.0.1", control) in sockets and ("127.0.0.1", port) in sockets
        assert {port for _, port in sockets} == {control, port}  # nothing else listens (no legacy gRPC APIs)
    finally:
        os.killpg(link.popen.pid, signal.SIGTERM)
        link.popen.wait(timeout=30)


def test_a_stranger_with_the_ca_certificate_cannot_reach_the_control_api(tmp_path: Path):
    """The attack of the review: ``ddppm coordinate`` with TLS and the parties' keys on every address (its default
    ``--host``); a stranger holding ``ca.crt`` runs ``flwr supernode register`` and ``flwr run`` against the
    parties' port: both fail, and the Control API's own port does not answer off loopback."""
    certificates = make_tls(tmp_path / "certs")
    keys = [make_node_key(tmp_path / "keys", f"party{j}")[1] for j in range(3)]
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "conventional")
    (tmp_path / "agreement.json").write_text(json.dumps(agreement.to_dict()))
    (tmp_path / "tmp").mkdir()
    port = free_port()
    command = [sys.executable, "-m", "ddppm", "coordinate", "--agreement", str(tmp_path / "agreement.json"),
               "--out", str(tmp_path / "release.json"), "--certificates", str(tmp_path / "certs"),
               "--port", str(port), "--timeout", "120", "--party-keys", *map(str, keys)]  # fmt: skip
    coordinator = Process("coordinator", command, {**os.environ, **QUIET, "TMPDIR": str(tmp_path / "tmp")},
                          tmp_path / "coordinator.log")  # fmt: skip
    try:
        coordinator.wait_for("waiting for 3 parties at 0.0.0.0", 90)
        (home,) = (tmp_path / "tmp").iterdir()
        control = int((home / "control-port").read_text())
        (link,) = [pid for pid in descendants([coordinator.popen.pid])
                   if b"ddppm.federation.superlink" in Path(f"/proc/{pid}/cmdline").read_bytes()]  # fmt: skip
        sockets = listening(link)
        assert ("127.0.0.1", control) in sockets  # the Control API: loopback only
        assert ("0.0.0.0", port) in sockets  # the parties' port: every address, as asked
        for address in other_addresses():
            assert reachable(address, port), address  # the parties reach their port there
            assert not reachable(address, control), address  # and not the Control API
        # the stranger's own machine: only the public CA certificate, and a key of its own
        stranger = tmp_path / "stranger"
        stranger.mkdir()
        _, public = make_node_key(stranger, "stranger")
        (stranger / "config.toml").write_text(f'[superlink]\ndefault = "coordinator"\n\n[superlink.coordinator]\n'
                                              f'address = "127.0.0.1:{port}"\n'
                                              f'root-certificates = "{certificates["ca"]}"\n')  # fmt: skip
        env = {**os.environ, **QUIET, "FLWR_HOME": str(stranger)}
        for arguments in (["supernode", "register", str(public), "coordinator"], ["ls", "coordinator"],
                          ["run", str(Path(cli.__file__).parent / "app"), "coordinator"]):  # fmt: skip
            done = subprocess.run([str(BIN / "flwr"), *arguments], capture_output=True, text=True, env=env,
                                  timeout=60, cwd=stranger)  # fmt: skip
            assert done.returncode != 0, (arguments, done.stdout, done.stderr)
        listed = subprocess.run([str(BIN / "flwr"), "supernode", "list", "local", "--format", "json"],
                                capture_output=True, text=True, timeout=60,
                                env={**os.environ, **QUIET, "FLWR_HOME": str(home)})  # fmt: skip
        assert listed.returncode == 0 and len(json.loads(listed.stdout)["nodes"]) == 3  # the parties' keys only
        runs = subprocess.run([str(BIN / "flwr"), "ls", "local", "--format", "json"], capture_output=True, text=True,
                              timeout=60, env={**os.environ, **QUIET, "FLWR_HOME": str(home)})  # fmt: skip
        assert len(json.loads(runs.stdout)["runs"]) == 1  # ddppm's own run only
    finally:
        tree = descendants([coordinator.popen.pid])
        os.kill(coordinator.popen.pid, signal.SIGTERM)
        coordinator.popen.wait(timeout=40)
        deadline = time.monotonic() + 10
        while any(alive(pid) for pid in tree) and time.monotonic() < deadline:
            time.sleep(0.1)
    assert not any(alive(pid) for pid in tree)
