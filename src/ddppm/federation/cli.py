"""``ddppm agreement``, ``ddppm party`` and ``ddppm coordinate``: a federated release from the command line, in
three terminals or on three machines (docs/federation.md, "A walk-through").

* ``ddppm agreement`` writes the public agreement (JSON) every party and the coordinator accept;
* ``ddppm party DATA --agreement A --index J --coordinator HOST:PORT`` checks the party's rows against the
  agreement (nothing is sent if they fail), prints what it agrees to, then starts its Flower SuperNode and answers
  every message in its own process (:mod:`ddppm.federation.warm`), reading only DATA (once) and its ledger;
* ``ddppm coordinate --agreement A --out release.json`` starts a Flower SuperLink whose Control and runtime APIs
  listen on 127.0.0.1 only (:func:`serve_superlink`), registers the parties' public keys, opens the parties' port,
  runs the release when every party has connected, moves it into place atomically and stops every process it
  started, whatever ends it (a signal included).

Every command exits 2 with one message naming the argument to fix; nothing is drawn before the checks.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
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
from ddppm.federation.processes import die_with_parent, serverapps, stop_process_tree

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
    agree.add_argument("--colluding", type=int, default=0, help="the most parties that may collude with the "
                       "coordinator: under secure aggregation each party adds its noise share for p − c parties")
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
    party.add_argument("--insecure", action="store_true", help="no TLS (a coordinator on this machine only)")
    party.add_argument("--testing-simulation-noise", action="store_true",
                       help="accept an agreement with simulation noise, which protects nothing (tests only)")
    party.set_defaults(run=run_party)

    coordinate = commands.add_parser("coordinate", help="coordinate a federated release (a Flower SuperLink)")
    coordinate.add_argument("--agreement", type=Path, required=True, help="the agreement every party accepted")
    coordinate.add_argument("--out", type=Path, required=True, help="the release file to write (JSON)")
    coordinate.add_argument("--host", help="the address the parties' port listens on (default 0.0.0.0; with "
                            "--insecure, 127.0.0.1)")  # fmt: skip
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
                              standardize=standardize, seed=args.seed, colluding=args.colluding)  # fmt: skip
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


def _host_of(address: str) -> str:
    """The host of ``HOST:PORT`` (``[v6]:PORT`` too)."""
    if address.startswith("["):
        return address[1:].split("]", 1)[0]
    return address.rsplit(":", 1)[0] if ":" in address else address


def is_loopback(host: str) -> bool:
    """True for an address of this machine's loopback interface (``localhost``, 127.0.0.0/8, ::1)."""
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def describe(agreement: Any, index: int) -> str:
    """What a party agrees to, in the words of the agreement (printed before it connects)."""
    sizes = ", ".join(str(size) for size in agreement.sizes)
    return (f"party {index} agrees to agreement {agreement.digest()[:12]}: ε = {agreement.epsilon:g}, "
            f"δ = {agreement.delta:g}, k = {agreement.n_components}, method {agreement.method}, trust "
            f"{agreement.trust}, noise {agreement.noise}\n"
            f"  {len(agreement.sizes)} parties of sizes {sizes} (n = {agreement.n}); this party: index {index}, "
            f"{agreement.sizes[index]} rows; up to {agreement.colluding} of them may collude with the "
            "coordinator")  # fmt: skip


def run_party(args: argparse.Namespace) -> int:
    """``ddppm party``: check the rows and the agreement, print what the party agrees to, then serve as the party
    (:func:`ddppm.federation.warm.run_node`): its SuperNode polling every 0.1 s (:mod:`ddppm.federation.supernode`),
    every message answered in this process."""
    from ddppm.federation.flower import keep_rows, read_agreement
    from ddppm.federation.party import Party

    try:
        if args.insecure and not is_loopback(_host_of(args.coordinator)):
            # without TLS anyone on the way reads every reply and can pose as the coordinator
            raise ConfigError(f"--insecure: {args.coordinator} is not a loopback address; --insecure (no TLS) is for a "
                              "coordinator on this machine only. Give --root-certificates (the coordinator's CA "
                              "certificate) and --key (this party's private key) instead")  # fmt: skip
        if not args.insecure and not (args.root_certificates and args.key):
            raise ConfigError("ddppm party: give --root-certificates and --key (TLS and this party's key), or "
                              "--insecure on one machine")  # fmt: skip
        agreement = read_agreement(args.agreement)
        if agreement.noise == "simulation" and not args.testing_simulation_noise:
            raise ConfigError("agreement: its noise is 'simulation', which protects nothing (it is for tests comparing "
                              "a federated release with a one-process fit); ask for an agreement with secure noise "
                              "(or pass --testing-simulation-noise in such a test)")  # fmt: skip
        Party(keep_rows(args.data), args.index, agreement, ledger=args.ledger)  # the checks; nothing drawn
    except DDPPMError as error:
        return _fail("party", error)
    from ddppm.federation.warm import run_node

    node: dict[str, Any] = {"data-path": str(args.data.resolve()), "agreement-path": str(args.agreement.resolve()),
                            "party-index": args.index, "agreement-digest": agreement.digest()}  # fmt: skip
    # the digest pins the agreement this party showed its user: a file changed later is refused
    if args.ledger:
        node["ledger-path"] = str(args.ledger.resolve())
    if args.testing_simulation_noise:
        node["testing-simulation-noise"] = True  # the ClientApp refuses simulation agreements without it
    command = [sys.executable, "-m", "ddppm.federation.supernode", "--superlink", args.coordinator,
               "--node-config", " ".join(f"{k}={json.dumps(v)}" for k, v in node.items())]  # fmt: skip
    command += (["--insecure"] if args.insecure else ["--root-certificates", str(args.root_certificates),
                                                      "--auth-supernode-private-key", str(args.key)])  # fmt: skip
    print(describe(agreement, args.index), flush=True)
    print(f"party {args.index}: {agreement.sizes[args.index]} rows checked; connecting to {args.coordinator}",
          flush=True)  # fmt: skip
    return run_node(command, _free_port(), flower_env())


CERTIFICATE_FILES = ("ca.crt", "server.pem", "server.key")
"""The files of ``--certificates``' folder."""

STEPS_FALLBACK = 64
"""The number of steps a release's wait allows when the public plan cannot be computed before the parties connect
(their number of features is not known yet): more than any method's plan at its default options."""

LAUNCH_SECONDS = 60.0
"""What the wait for a release allows Flower to launch the run's ServerApp, on top of the steps' timeouts."""


class Stopped(Exception):  # noqa: N818 (a signal, not an error)
    """``ddppm coordinate`` received SIGTERM or SIGINT: everything it started is stopped, nothing is released."""

    def __init__(self, number: int) -> None:
        self.number = number
        super().__init__(f"stopped by {signal.Signals(number).name}; nothing is released")


def _planned_steps(agreement: Any) -> int:
    """An upper bound of the release's number of waits of ``--timeout``: its public plan's steps
    (:func:`ddppm.federation.plan.plan_steps`; the parties' number of features d is not known yet, so the longest
    plan over a few d, the box's rounds being fewer for larger d), plus three, four times over at trust
    ``secure_aggregation`` (SecAgg+'s four round trips per step); :data:`STEPS_FALLBACK` if the plan cannot be
    computed."""
    try:
        from ddppm.federation.plan import plan_steps
        from ddppm.federation.public import PublicRelease

        k = int(agreement.n_components)
        longest = max(len(plan_steps(PublicRelease(agreement, d))) for d in (k + 1, k + 10, 100, 1000) if d > k)
        return (longest + 3) * (4 if agreement.trust == "secure_aggregation" else 1)
    except Exception:  # noqa: BLE001 (a bound only: the plan's own errors are the parties' and the ServerApp's)
        return STEPS_FALLBACK


def _absolute(path: Path | None) -> Path | None:
    """``path`` made absolute now: Flower's processes run in other folders."""
    return None if path is None else Path(os.path.abspath(path.expanduser()))


def run_coordinator(args: argparse.Namespace) -> int:
    """``ddppm coordinate``: a SuperLink (its Control and runtime APIs on 127.0.0.1 only), the parties' keys
    registered before their port opens, the run, its release moved into place, and every process it started
    stopped, on any exit, SIGTERM and SIGINT included (the temporary folder with the SuperLink's secrets removed)."""
    from ddppm.federation.flower import read_agreement

    try:
        agreement_path, out, certificates = (_absolute(p) for p in (args.agreement, args.out, args.certificates))
        keys = [_absolute(key) for key in args.party_keys]
        agreement = read_agreement(agreement_path)
        if not args.insecure and not (certificates and keys):
            raise ConfigError("ddppm coordinate: give --certificates and --party-keys (TLS, and who may connect), "
                              "or --insecure on one machine")  # fmt: skip
        if keys and len(keys) != len(agreement.sizes):
            raise ConfigError(f"--party-keys: {len(keys)} keys for {len(agreement.sizes)} parties")
        missing = [str(key) for key in keys if not key.is_file()]
        if missing:
            raise ConfigError(f"--party-keys: {', '.join(missing)} not found")
        if certificates is not None and not args.insecure:
            absent = [name for name in CERTIFICATE_FILES if not (certificates / name).is_file()]
            if absent:
                raise ConfigError(f"--certificates: {certificates} has no {', '.join(absent)} (the folder must hold "
                                  f"{', '.join(CERTIFICATE_FILES)})")  # fmt: skip
        if not out.parent.is_dir():
            raise ConfigError(f"--out: {out.parent} is not a folder")
    except DDPPMError as error:
        return _fail("coordinate", error)
    host = args.host or ("127.0.0.1" if args.insecure else "0.0.0.0")
    if args.insecure and not is_loopback(host):
        print(f"ddppm coordinate: WARNING: --insecure on {host}: no TLS and no party keys; ANYONE WHO REACHES PORT "
              f"{args.port} CAN READ EVERY MESSAGE AND TAKE PART AS A PARTY", file=sys.stderr, flush=True)  # fmt: skip
    settings = argparse.Namespace(**{**vars(args), "agreement": agreement_path, "out": out, "host": host,
                                     "certificates": certificates, "party_keys": keys})  # fmt: skip
    stopped: list[int] = []

    def on_signal(number: int, _frame: object) -> None:
        stopped.append(number)
        if len(stopped) == 1:  # once: a second signal must not interrupt the teardown
            raise Stopped(number)

    previous: dict[int, Any] = {}
    started: list[subprocess.Popen] = []  # the SuperLink, as soon as it exists (a signal may come at any line)
    try:
        previous.update({number: signal.signal(number, on_signal) for number in (signal.SIGTERM, signal.SIGINT)})
        home = Path(tempfile.mkdtemp(prefix="ddppm-coordinator-"))
        try:
            link = _start_superlink(settings, home, started)
            for key in keys:
                _flwr(home, "supernode", "register", str(key), "local")
            _open_fleet(settings, home, link)
            print(f"waiting for {len(agreement.sizes)} parties at {host}:{args.port}", flush=True)
            release = _run_release(settings, agreement, home, link)
        finally:
            stopped.append(0)  # from here on a signal only waits for the teardown
            for process in started:
                stop_process_tree(process)
            shutil.rmtree(home, ignore_errors=True)
    except Stopped as signalled:
        print(f"ddppm coordinate: {signalled}", file=sys.stderr)
        return 128 + signalled.number
    except DDPPMError as error:
        return _fail("coordinate", error)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    privacy = release["privacy"]
    print(f"released {privacy['k']} direction(s) by {privacy['method']} across {privacy['parties']} parties at "
          f"ε = {privacy['epsilon']:g}, δ = {privacy['delta']:.3g} → {out}")
    return 0


def _run_release(args: argparse.Namespace, agreement: Any, home: Path, link: subprocess.Popen) -> dict[str, Any]:
    """Submit the run and wait for its release, written by the ServerApp inside ``home``, then move it onto
    ``--out`` (the previous release stays until then, and stays if the run fails). The wait ends when the release
    is there, when the ServerApp has ended or the SuperLink reports the run finished without one, when the
    SuperLink stops, or after the launch plus ``--timeout`` for each planned step."""
    temporary = home / "release.json"
    config = {"agreement-path": str(args.agreement), "out-path": str(temporary), "timeout": float(args.timeout),
              "agreement-digest": agreement.digest()}  # fmt: skip
    done = _flwr(home, "run", str(Path(__file__).parent / "app"), "local", "--format", "json", "--run-config",
                 " ".join(f"{k}={json.dumps(v)}" for k, v in config.items()))  # fmt: skip
    run_id = _run_id(done)
    steps = _planned_steps(agreement)
    bound = LAUNCH_SECONDS + float(args.timeout) * (steps + 2)  # the connection, the hello round, every step
    deadline = time.monotonic() + bound
    seen_serverapp, next_status = False, time.monotonic() + 2.0
    while not temporary.exists():
        if link.poll() is not None:
            raise ConfigError(f"the SuperLink stopped (exit {link.returncode}); nothing is released{_log_tail(home)}")
        now = time.monotonic()
        if now > deadline:
            raise ConfigError(f"no release within {bound:g} s (Flower's launch, then --timeout {args.timeout:g} s for "
                              f"each of up to {steps + 2} steps); nothing is released{_log_tail(home)}")  # fmt: skip
        running = serverapps(link.pid)
        seen_serverapp = seen_serverapp or bool(running)
        ended = seen_serverapp and not running and "the run's ServerApp ended without a release"
        if not ended and not running and run_id is not None and now > next_status:
            # only while no ServerApp runs (launching, or gone): `flwr ls` is a Python process, a second of a core
            next_status = now + 3.0
            status = _run_status(home, run_id)
            if status.startswith("finished"):
                ended = f"the SuperLink reports the run {status} without a release"
            elif status == "running" and not serverapps(link.pid):  # it ran and is gone before the loop saw it
                ended = "the run's ServerApp ended without a release"
        if ended:
            time.sleep(1.0)  # the ServerApp writes the release before it ends: a last look
            if not temporary.exists():
                raise ConfigError(f"{ended}; nothing is released{_log_tail(home)}")
        time.sleep(0.2)
    release = json.loads(temporary.read_text(encoding="utf-8"))
    if "error" in release:
        raise ConfigError(release["error"])
    try:
        os.replace(temporary, args.out)  # atomic: the previous release is replaced, never missing
    except OSError:  # another file system than the temporary folder's: through a temporary file beside --out
        write_text_atomic(args.out, temporary.read_text(encoding="utf-8"))
    return release


def _run_id(done: subprocess.CompletedProcess) -> int | None:
    """The run's id in ``flwr run --format json``'s answer (None if Flower did not say)."""
    with contextlib.suppress(ValueError, TypeError, AttributeError):
        return int(json.loads(done.stdout)["run-id"])
    return None


def _run_status(home: Path, run_id: int) -> str:
    """The run's status as the SuperLink reports it (``flwr ls``), e.g. ``running`` or ``finished:failed``; empty
    if it did not answer."""
    with contextlib.suppress(ValueError, KeyError, IndexError, TypeError, subprocess.TimeoutExpired):
        done = subprocess.run([_flower("flwr"), "ls", "local", "--run-id", str(run_id), "--format", "json"],
                              capture_output=True, text=True, env=flower_env(FLWR_HOME=str(home)),
                              timeout=60)  # fmt: skip
        return str(json.loads(done.stdout)["runs"][0]["status"])
    return ""


def _log_tail(home: Path, lines: int = 15) -> str:
    """The SuperLink's last log lines (its log goes with the temporary folder)."""
    with contextlib.suppress(OSError):
        tail = (home / "superlink.log").read_text(errors="replace").splitlines()[-lines:]
        return "\nthe SuperLink's last log lines:\n" + "\n".join(tail) if tail else ""
    return ""


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


def _start_superlink(args: argparse.Namespace, home: Path, started: list[subprocess.Popen]) -> subprocess.Popen:
    """Start :func:`~ddppm.federation.superlink.serve_superlink` (Flower's SuperLink, its APIs split: Control and
    runtime on 127.0.0.1 only), appended to ``started`` at once, and wait until its Control API answers; the
    parties' port is not open yet (:func:`_open_fleet`)."""
    command = [sys.executable, "-m", "ddppm.federation.superlink", "--public-host", args.host,
               "--public-port", str(args.port), "--control-port-file", str(home / "control-port"),
               "--open-when", str(home / "open-fleet"), "--", "--disable-runtime-dependency-installation"]  # fmt: skip
    if args.insecure:
        command.append("--insecure")
    else:
        folder = args.certificates
        command += ["--ssl-ca-certfile", str(folder / "ca.crt"), "--ssl-certfile", str(folder / "server.pem"),
                    "--ssl-keyfile", str(folder / "server.key"), "--enable-supernode-auth"]  # fmt: skip
    env = flower_env(FLWR_HOME=str(home))
    for name in ("FLWR_INTERNAL_GRPC_CONTROL_API", "FLWR_INTERNAL_GRPC_FLEET_API"):
        env.pop(name, None)  # Flower's legacy gRPC APIs would listen on 0.0.0.0
    log = open(home / "superlink.log", "w")  # noqa: SIM115 (the SuperLink writes it until stopped)
    link = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True, env=env, preexec_fn=die_with_parent)  # noqa: PLW1509  # fmt: skip
    started.append(link)
    log.close()  # the child holds its own copy
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if link.poll() is not None:
            raise ConfigError(f"the SuperLink did not start (exit {link.returncode}); is port {args.port} free?"
                              f"{_log_tail(home)}")  # fmt: skip
        port_file = home / "control-port"
        if port_file.is_file() and port_file.read_text().strip():
            # the Control API: plain HTTP on loopback (only this machine reaches it; no certificate needs to name
            # 127.0.0.1)
            (home / "config.toml").write_text(f'[superlink]\ndefault = "local"\n\n[superlink.local]\naddress = '
                                              f'"127.0.0.1:{port_file.read_text().strip()}"\ninsecure = true\n')
            with contextlib.suppress(subprocess.TimeoutExpired):
                done = subprocess.run([_flower("flwr"), "supernode", "list", "local"], capture_output=True,
                                      text=True, env=flower_env(FLWR_HOME=str(home)), timeout=60)  # fmt: skip
                if done.returncode == 0:
                    return link
        time.sleep(0.3)
    raise ConfigError(f"the SuperLink's Control API did not answer within 60 s{_log_tail(home)}")


def _open_fleet(args: argparse.Namespace, home: Path, link: subprocess.Popen) -> None:
    """Open the parties' port (after their keys are registered) and wait until it accepts connections."""
    import socket

    (home / "open-fleet").touch()
    target = "127.0.0.1" if args.host in ("0.0.0.0", "::", "") else args.host.strip("[]")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if link.poll() is not None:
            raise ConfigError(f"the SuperLink stopped (exit {link.returncode}){_log_tail(home)}")
        with contextlib.suppress(OSError), socket.create_connection((target, args.port), timeout=1):
            return
        time.sleep(0.1)
    raise ConfigError(f"the parties' port {args.host}:{args.port} did not open within 30 s{_log_tail(home)}")


def _flwr(home: Path, *arguments: str) -> subprocess.CompletedProcess:
    """``flwr ARGUMENTS`` against this coordinator's SuperLink (its Control API, on loopback)."""
    try:
        done = subprocess.run([_flower("flwr"), *arguments], capture_output=True, text=True,
                              env=flower_env(FLWR_HOME=str(home)), timeout=120)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise ConfigError(f"flwr {arguments[0]}: no answer from the SuperLink within 120 s") from None
    if done.returncode:
        raise ConfigError(f"flwr {arguments[0]}: {done.stdout.strip()} {done.stderr.strip()}")
    return done
