"""``ddppm agreement``, ``ddppm party`` and ``ddppm coordinate``: a federated release from the command line, in
three terminals or on three machines (docs/federation.md, "A walk-through").

* ``ddppm agreement`` writes the public agreement (JSON) every party and the coordinator accept;
* ``ddppm party DATA --agreement A --index J --coordinator HOST:PORT`` checks the party's rows against the
  agreement (nothing is sent if they fail), then starts its Flower SuperNode and answers every message in its own
  process (:mod:`ddppm.federation.warm`), reading only DATA (once) and its ledger;
* ``ddppm coordinate --agreement A --out release.json`` starts a Flower SuperLink, registers the parties' public
  keys, runs the release when every party has connected, writes it atomically and stops the SuperLink.

Every command exits 2 with one message naming the argument to fix; nothing is drawn before the checks.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ddppm.core.errors import ConfigError, DDPPMError
from ddppm.core.io import write_text_atomic

QUIET = {"FLWR_TELEMETRY_ENABLED": "0", "FLWR_DISABLE_UPDATE_CHECK": "1", "FLWR_SUPEREXEC_TASK_POLL_INTERVAL": "0.1"}
"""Flower's telemetry and update check off (a party's machine talks to its coordinator only), and its SuperExec
polling for tasks every 0.1 s rather than 1 s (each step of a release is one task on every party)."""


def flower_env(**more: str) -> dict[str, str]:
    """The environment of Flower's processes: this interpreter's scripts first on PATH (the SuperLink and the
    SuperNodes start Flower's other processes by name), telemetry off."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, **QUIET, "PATH": path, **more}


def add_commands(commands: Any) -> None:
    """The three subcommands (:func:`ddppm.cli.main`)."""
    agree = commands.add_parser("agreement", help="write the public agreement of a federated release (JSON)")
    agree.add_argument("--out", type=Path, required=True, help="the agreement file to write")
    agree.add_argument("--bounds", type=Path, required=True, help="YAML bounds file (as `ddppm fit --bounds`)")
    agree.add_argument("--columns-from", type=Path, help="a CSV whose header names the columns (its header only is "
                       "read), when the bounds name features by column")  # fmt: skip
    agree.add_argument("--k", type=int, required=True, help="principal directions to release")
    agree.add_argument("--eps", type=float, required=True, help="ε of the whole release")
    agree.add_argument("--delta", type=float, required=True, help="δ of the whole release")
    agree.add_argument("--sizes", required=True, help="each party's count of rows, in order: e.g. 60,60,58")
    agree.add_argument("--method", required=True, help="a method that runs across parties (docs/federation.md)")
    agree.add_argument("--trust", choices=("local", "secure_aggregation"), default="local")
    preparation = agree.add_mutually_exclusive_group()
    preparation.add_argument("--center-only", action="store_true", help="centre privately, do not scale")
    preparation.add_argument("--no-standardize", action="store_true", help="neither centre nor scale")
    agree.add_argument("--seed", type=int, default=0, help="the public randomness (a power method's start)")
    agree.set_defaults(run=write_agreement)

    party = commands.add_parser("party", help="take part in a federated release as one party (a Flower SuperNode)")
    party.add_argument("data", type=Path, help="this party's CSV: a header row, one record per row")
    party.add_argument("--agreement", type=Path, required=True, help="the agreement this party accepted")
    party.add_argument("--index", type=int, required=True, help="this party's position in the agreement's sizes")
    party.add_argument("--coordinator", required=True, help="the coordinator's HOST:PORT")
    party.add_argument("--ledger", type=Path, help="this party's privacy ledger (ddppm ledger create)")
    party.add_argument("--root-certificates", type=Path, help="the CA certificate of the coordinator's TLS")
    party.add_argument("--key", type=Path, help="this party's private key (its public key registered with the "
                       "coordinator)")  # fmt: skip
    party.add_argument("--insecure", action="store_true", help="no TLS (one machine, tests only)")
    party.set_defaults(run=run_party)

    coordinate = commands.add_parser("coordinate", help="coordinate a federated release (a Flower SuperLink)")
    coordinate.add_argument("--agreement", type=Path, required=True, help="the agreement every party accepted")
    coordinate.add_argument("--out", type=Path, required=True, help="the release file to write (JSON)")
    coordinate.add_argument("--host", default="0.0.0.0", help="the address to listen on")
    coordinate.add_argument("--port", type=int, default=9092, help="the port the parties connect to")
    coordinate.add_argument("--certificates", type=Path, help="a folder with ca.crt, server.pem and server.key")
    coordinate.add_argument("--party-keys", type=Path, nargs="*", default=[],
                            help="the parties' public keys (OpenSSH); only these may connect")  # fmt: skip
    coordinate.add_argument("--insecure", action="store_true", help="no TLS, no keys (one machine, tests only)")
    coordinate.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for a party at each step")
    coordinate.set_defaults(run=run_coordinator)


def _fail(command: str, error: Exception) -> int:
    print(f"ddppm {command}: {error}", file=sys.stderr)
    return 2


def write_agreement(args: argparse.Namespace) -> int:
    """``ddppm agreement``."""
    from ddppm.federation.agreement import Agreement
    from ddppm.release.user_files import read_bounds

    try:
        columns = pd_header(args.columns_from) if args.columns_from else []
        bounds = read_bounds(args.bounds, columns)
        try:
            sizes = [int(s) for s in args.sizes.split(",")]
        except ValueError:
            raise ConfigError(f"--sizes: {args.sizes!r} must be counts separated by commas, e.g. 60,60,58") from None
        standardize: bool | str = False if args.no_standardize else ("center" if args.center_only else True)
        agreement = Agreement(args.k, args.eps, args.delta, bounds, sizes, args.method, trust=args.trust,
                              standardize=standardize, seed=args.seed)  # fmt: skip
        _check_method(agreement)
    except DDPPMError as error:
        return _fail("agreement", error)
    write_text_atomic(args.out, json.dumps(agreement.to_dict(), indent=2, ensure_ascii=False) + "\n")
    print(f"agreement {agreement.digest()[:12]}: {args.method}, k = {args.k}, ε = {args.eps:g}, δ = {args.delta:g}, "
          f"{len(sizes)} parties → {args.out}")
    return 0


def _check_method(agreement: Any) -> None:
    """The agreement's method runs across parties and serves its trust level (before anyone starts)."""
    from ddppm.common_task.run import TRUST_ORDER
    from ddppm.federation.protocols import federated_methods, protocol_of
    from ddppm.methods import common_task_methods

    methods = common_task_methods()
    if agreement.method not in methods:
        raise ConfigError(f"--method: {agreement.method!r} is not a method; those that run across parties are "
                          f"{federated_methods()}")  # fmt: skip
    method = protocol_of(methods[agreement.method])
    if TRUST_ORDER.get(method.trust_model, -1) < TRUST_ORDER[agreement.trust]:
        raise ConfigError(f"--trust: {method.name} needs trust {method.trust_model!r}, more than {agreement.trust!r}")


def pd_header(path: Path) -> list[str]:
    """The column names of a CSV's header row (nothing else is read)."""
    if not path.is_file():
        raise ConfigError(f"--columns-from: {path} is not a file")
    with open(path, encoding="utf-8-sig") as handle:
        return [name.strip() for name in handle.readline().rstrip("\n").split(",")]


def run_party(args: argparse.Namespace) -> int:
    """``ddppm party``: check the rows, then serve as the party (:func:`ddppm.federation.warm.run_node`): its
    SuperNode polling every 0.1 s (:mod:`ddppm.federation.supernode`), every message answered in this process."""
    from ddppm.federation.flower import keep_rows, read_agreement
    from ddppm.federation.party import Party

    try:
        if not args.insecure and not (args.root_certificates and args.key):
            raise ConfigError("ddppm party: give --root-certificates and --key (TLS and this party's key), or "
                              "--insecure on one machine")  # fmt: skip
        agreement = read_agreement(args.agreement)
        Party(keep_rows(args.data), args.index, agreement, ledger=args.ledger)  # the checks; nothing drawn
    except DDPPMError as error:
        return _fail("party", error)
    from ddppm.federation.warm import run_node

    node = {"data-path": str(args.data.resolve()), "agreement-path": str(args.agreement.resolve()),
            "party-index": args.index}  # fmt: skip
    if args.ledger:
        node["ledger-path"] = str(args.ledger.resolve())
    command = [sys.executable, "-m", "ddppm.federation.supernode", "--superlink", args.coordinator,
               "--node-config", " ".join(f"{k}={json.dumps(v)}" for k, v in node.items())]  # fmt: skip
    command += (["--insecure"] if args.insecure else ["--root-certificates", str(args.root_certificates),
                                                      "--auth-supernode-private-key", str(args.key)])  # fmt: skip
    print(f"party {args.index}: {agreement.sizes[args.index]} rows checked; connecting to {args.coordinator}",
          flush=True)  # fmt: skip
    return run_node(command, _free_port(), flower_env())


def run_coordinator(args: argparse.Namespace) -> int:
    """``ddppm coordinate``: a SuperLink, the parties' keys registered, the run, its release, the SuperLink stopped."""
    from ddppm.federation.flower import read_agreement

    try:
        agreement = read_agreement(args.agreement)
        if not args.insecure and not (args.certificates and args.party_keys):
            raise ConfigError("ddppm coordinate: give --certificates and --party-keys (TLS, and who may connect), "
                              "or --insecure on one machine")  # fmt: skip
        if args.party_keys and len(args.party_keys) != len(agreement.sizes):
            raise ConfigError(f"--party-keys: {len(args.party_keys)} keys for {len(agreement.sizes)} parties")
    except DDPPMError as error:
        return _fail("coordinate", error)
    home = Path(tempfile.mkdtemp(prefix="ddppm-coordinator-"))
    link = None
    try:
        link = _start_superlink(args, home)
        for key in args.party_keys:
            _flwr(home, "supernode", "register", str(key), "local")
        print(f"waiting for {len(agreement.sizes)} parties at {args.host}:{args.port}", flush=True)
        args.out.unlink(missing_ok=True)
        config = {"agreement-path": str(args.agreement.resolve()), "out-path": str(args.out.resolve()),
                  "timeout": float(args.timeout)}  # fmt: skip
        _flwr(home, "run", str(Path(__file__).parent / "app"), "local", "--run-config",
              " ".join(f"{k}={json.dumps(v)}" for k, v in config.items()))  # fmt: skip
        while not args.out.exists():
            if link.poll() is not None:
                raise ConfigError(f"the SuperLink stopped (exit {link.returncode}); see {home / 'superlink.log'}")
            time.sleep(0.2)
        release = json.loads(args.out.read_text())
        if "error" in release:
            raise ConfigError(release["error"])
    except DDPPMError as error:
        return _fail("coordinate", error)
    finally:
        if link is not None and link.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(link.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                link.wait(timeout=10)
            if link.poll() is None:
                os.killpg(link.pid, signal.SIGKILL)
        shutil.rmtree(home, ignore_errors=True)
    privacy = release["privacy"]
    print(f"released {privacy['k']} direction(s) by {privacy['method']} across {privacy['parties']} parties at "
          f"ε = {privacy['epsilon']:g}, δ = {privacy['delta']:.3g} → {args.out}")
    return 0


def _free_port() -> int:
    """A free local port for the SuperNode's own runtime API (Flower's default, 9094, would collide when several
    parties share a machine)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _flower(name: str) -> str:
    found = shutil.which(name, path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if found is None:
        raise ConfigError(f"{name} not found: install ddppm's federation extra (pip install 'ddppm[federation]')")
    return found


def _start_superlink(args: argparse.Namespace, home: Path) -> subprocess.Popen:
    command = [_flower("flower-superlink"), "--host", args.host, "--port", str(args.port),
               "--disable-runtime-dependency-installation"]  # fmt: skip
    if args.insecure:
        command.append("--insecure")
    else:
        folder = args.certificates
        command += ["--ssl-ca-certfile", str(folder / "ca.crt"), "--ssl-certfile", str(folder / "server.pem"),
                    "--ssl-keyfile", str(folder / "server.key"), "--enable-supernode-auth"]  # fmt: skip
    log = open(home / "superlink.log", "w")  # noqa: SIM115 (the SuperLink writes it until stopped)
    link = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True, env=flower_env(FLWR_HOME=str(home)))  # fmt: skip
    connection = "insecure = true" if args.insecure else f'root-certificates = "{args.certificates / "ca.crt"}"'
    host = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
    (home / "config.toml").write_text(f'[superlink]\ndefault = "local"\n\n[superlink.local]\n'
                                      f'address = "{host}:{args.port}"\n{connection}\n')  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done = subprocess.run([_flower("flwr"), "supernode", "list", "local"], capture_output=True, text=True,
                              env=flower_env(FLWR_HOME=str(home)))  # fmt: skip
        if done.returncode == 0:
            return link
        if link.poll() is not None:
            raise ConfigError(f"the SuperLink did not start (exit {link.returncode}); is port {args.port} free?")
        time.sleep(0.3)
    raise ConfigError(f"the SuperLink did not answer on port {args.port} within 60 s")


def _flwr(home: Path, *arguments: str) -> None:
    done = subprocess.run([_flower("flwr"), *arguments], capture_output=True, text=True,
                          env=flower_env(FLWR_HOME=str(home)))  # fmt: skip
    if done.returncode:
        raise ConfigError(f"flwr {arguments[0]}: {done.stdout.strip()} {done.stderr.strip()}")
