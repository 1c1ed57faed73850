"""A Flower federation on loopback, as separate processes (Flower 1.42's deployment engine): one SuperLink, one
SuperNode per party, ``flwr run`` of ddppm's app; TLS (a CA and a server certificate made here) and SuperNode
authentication (an EC key pair per party, registered with the SuperLink before the nodes start). Every process
runs in its own session and is torn down by process group; the grandchildren Flower starts in sessions of their
own (SuperExec, the ServerApp's and ClientApps' processes) are found in /proc before the teardown and killed if
they outlive it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import ddppm
from tests.processes import alive, descendants

BIN = Path(sys.executable).parent
APP = Path(ddppm.__file__).parent / "federation" / "app"
QUIET = {"FLWR_TELEMETRY_ENABLED": "0", "FLWR_DISABLE_UPDATE_CHECK": "1",
         "FLWR_DISABLE_RUNTIME_DEPENDENCY_INSTALLATION": "1", "FLWR_SUPEREXEC_TASK_POLL_INTERVAL": "0.1",
         "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}  # fmt: skip


WARM_NODE = """
import json, os, sys
from ddppm.federation.flower import keep_rows
from ddppm.federation.warm import run_node
config, port, supernode = json.loads(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])
keep_rows(config["data-path"])
sys.exit(run_node(supernode, port, dict(os.environ)))
"""
"""A party as ``ddppm party`` runs it (:mod:`ddppm.federation.warm`): its rows parsed once, its SuperNode with
process isolation, every message answered in this process."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def make_tls(folder: Path) -> dict[str, Path]:
    """A CA and a server certificate for 127.0.0.1 and localhost."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    folder.mkdir(parents=True, exist_ok=True)
    start = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)

    def name(text: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    ca_key, key = ec.generate_private_key(ec.SECP384R1()), ec.generate_private_key(ec.SECP384R1())
    ca = (x509.CertificateBuilder().subject_name(name("ddppm test CA")).issuer_name(name("ddppm test CA"))
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number()).not_valid_before(start)
          .not_valid_after(start + dt.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))  # fmt: skip
    server = (x509.CertificateBuilder().subject_name(name("127.0.0.1")).issuer_name(ca.subject)
              .public_key(key.public_key()).serial_number(x509.random_serial_number()).not_valid_before(start)
              .not_valid_after(start + dt.timedelta(days=1))
              .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                          x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                             critical=False)
              .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
              .sign(ca_key, hashes.SHA256()))  # fmt: skip
    pem = serialization.Encoding.PEM
    files = {"ca": folder / "ca.crt", "cert": folder / "server.pem", "key": folder / "server.key"}
    files["ca"].write_bytes(ca.public_bytes(pem))
    files["cert"].write_bytes(server.public_bytes(pem))
    files["key"].write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))  # fmt: skip
    files["key"].chmod(0o600)
    return files


def make_node_key(folder: Path, name: str) -> tuple[Path, Path]:
    """An EC P-384 key pair in OpenSSH format, as ``flower-supernode`` and ``flwr supernode register`` take."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    folder.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP384R1())
    private, public = folder / name, folder / f"{name}.pub"
    private.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                          serialization.NoEncryption()))  # fmt: skip
    private.chmod(0o600)
    public.write_bytes(key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                                     serialization.PublicFormat.OpenSSH))  # fmt: skip
    return private, public


class Process:
    """A started process in its own session, its output kept (and written to ``log``)."""

    def __init__(self, name: str, command: list[str], env: dict[str, str], log: Path) -> None:
        self.name, self.lines = name, []
        self.popen = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, start_new_session=True, text=True,
                                      bufsize=1)  # fmt: skip
        self._pump = threading.Thread(target=self._read, args=(log,), daemon=True)
        self._pump.start()

    def _read(self, log: Path) -> None:
        with log.open("w") as handle:
            for line in self.popen.stdout:  # type: ignore[union-attr]
                self.lines.append(line.rstrip())
                handle.write(f"[{time.monotonic():.2f}] {line}")
                handle.flush()

    def wait_for(self, text: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(text in line for line in list(self.lines)):
                return
            if self.popen.poll() is not None:
                time.sleep(0.3)
                if any(text in line for line in list(self.lines)):
                    return
                raise RuntimeError(f"{self.name} exited ({self.popen.returncode}) before {text!r}:\n"
                                   + "\n".join(self.lines[-20:]))  # fmt: skip
            time.sleep(0.05)
        raise TimeoutError(f"{self.name}: no {text!r} within {timeout} s")


@dataclass
class Federation:
    """A running SuperLink and its parties' SuperNodes (:func:`federation`)."""

    folder: Path
    address: str
    tls: dict[str, Path] | None
    processes: list[Process] = field(default_factory=list)
    killed: list[int] | None = None
    """After the teardown: the processes that outlived their SIGTERM's grace and had to be killed."""

    def leftovers(self) -> list[str]:
        """Processes still running whose command line names this federation's folder (after the teardown: none)."""
        table = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout.splitlines()[1:]
        return [line for line in table if str(self.folder) in line and "ps -eo" not in line]

    def env(self, name: str) -> dict[str, str]:
        home = self.folder / "home" / name  # one FLWR_HOME per "machine"
        home.mkdir(parents=True, exist_ok=True)
        return {**os.environ, **QUIET, "FLWR_HOME": str(home), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}

    def flwr(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        env = self.env("cli")
        connection = f'root-certificates = "{self.tls["ca"]}"' if self.tls else "insecure = true"
        (Path(env["FLWR_HOME"]) / "config.toml").write_text(
            f'[superlink]\ndefault = "local"\n\n[superlink.local]\naddress = "{self.address}"\n{connection}\n')
        return subprocess.run([str(BIN / "flwr"), *args], env=env, cwd=self.folder, capture_output=True, text=True,
                              timeout=timeout)  # fmt: skip

    def register(self, public_key: Path) -> None:
        done = self.flwr("supernode", "register", str(public_key), "local", "--format", "json")
        if done.returncode:
            raise RuntimeError(f"flwr supernode register: {done.stdout}\n{done.stderr}")

    def supernode(self, name: str, node_config: dict[str, object], key: Path | None = None,
                  retries: int | None = None, env: dict[str, str] | None = None,
                  warm: bool = False) -> Process:  # fmt: skip
        """A party's SuperNode; ``warm``: with the party's own process answering every message, as ``ddppm party``
        runs it (:data:`WARM_NODE`), else Flower's process per message."""
        config = " ".join(f"{k}={json.dumps(v)}" for k, v in node_config.items())
        command = [sys.executable, "-m", "ddppm.federation.supernode", "--superlink", self.address,
                   "--node-config", config]  # fmt: skip
        if self.tls:
            command += ["--root-certificates", str(self.tls["ca"])]
            command += ["--auth-supernode-private-key", str(key)] if key else []
        else:
            command += ["--insecure"]
        command += ["--max-retries", str(retries)] if retries is not None else []
        if warm:
            command = [sys.executable, "-c", WARM_NODE, json.dumps(node_config), str(free_port()), json.dumps(command)]
        else:
            command += ["--port", str(free_port())]
        process = Process(name, command, {**self.env(name), **(env or {})}, self.folder / "logs" / f"{name}.log")
        self.processes.append(process)
        return process

    def submit(self, run_config: dict[str, object]) -> None:
        """Submit ddppm's app with ``run_config``, as ``ddppm coordinate`` does: with the ``agreement-digest`` of its
        ``agreement-path`` (the parties refuse a run without theirs)."""
        from ddppm.federation.agreement import read_agreement

        run_config = dict(run_config)
        if "agreement-path" in run_config:
            run_config.setdefault("agreement-digest", read_agreement(str(run_config["agreement-path"])).digest())
        config = " ".join(f"{k}={json.dumps(v)}" for k, v in run_config.items())
        done = self.flwr("run", str(APP), "local", "--format", "json", "--run-config", config)
        if done.returncode:
            raise RuntimeError(f"flwr run: {done.stdout}\n{done.stderr}")

    def run(self, run_config: dict[str, object], result: Path, timeout: float = 240) -> dict:
        """Submit ddppm's app with ``run_config`` (:meth:`submit`) and wait for its result file."""
        self.submit(run_config)
        deadline = time.monotonic() + timeout
        while not result.exists():
            if time.monotonic() > deadline:
                logs = {p.name: p.lines[-15:] for p in self.processes}
                raise TimeoutError(f"no {result.name} within {timeout} s; logs: {json.dumps(logs, indent=1)}")
            time.sleep(0.1)
        return json.loads(result.read_text())

    def stop(self, grace: float = 10.0) -> list[int]:
        """SIGTERM every process group (last started first), SIGKILL what is left, then any descendant; returns the
        processes that had to be killed after the grace."""
        tree = descendants([p.popen.pid for p in self.processes if p.popen.poll() is None])
        for process in reversed(self.processes):
            if process.popen.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.popen.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for process in self.processes:
            try:
                process.popen.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(process.popen.pid, signal.SIGKILL)
                process.popen.wait()
        while any(alive(pid) for pid in tree) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [pid for pid in tree if alive(pid)]
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        return left


def _ready(url: str, ca: Path | None, timeout: float) -> None:
    context = ssl.create_default_context(cafile=str(ca)) if ca else None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(url, timeout=1, context=context) as response:
                if response.status == 200:
                    return
        time.sleep(0.05)
    raise TimeoutError(f"the SuperLink did not answer {url} within {timeout} s")


@contextlib.contextmanager
def federation(folder: Path, tls: bool) -> Iterator[Federation]:
    """A SuperLink on a free loopback port (TLS and SuperNode authentication, or ``--insecure``); torn down on
    exit, whatever happened."""
    (folder / "logs").mkdir(parents=True, exist_ok=True)
    port = free_port()
    running = Federation(folder, f"127.0.0.1:{port}", make_tls(folder / "certs") if tls else None)
    command = [str(BIN / "flower-superlink"), "--host", "127.0.0.1", "--port", str(port),
               "--disable-runtime-dependency-installation"]  # fmt: skip
    if running.tls:
        command += ["--ssl-ca-certfile", str(running.tls["ca"]), "--ssl-certfile", str(running.tls["cert"]),
                    "--ssl-keyfile", str(running.tls["key"]), "--enable-supernode-auth"]  # fmt: skip
    else:
        command += ["--insecure"]
    running.processes.append(Process("superlink", command, running.env("superlink"), folder / "logs" / "link.log"))
    try:
        _ready(f"{'https' if tls else 'http'}://{running.address}/health", running.tls["ca"] if tls else None, 60)
        yield running
    finally:
        running.killed = running.stop()
