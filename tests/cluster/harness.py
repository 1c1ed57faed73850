"""Start and stop the throwaway Slurm cluster of tests/cluster, also when the test run is killed.

:func:`running_cluster` starts ``slurm.sh start DIR`` with this process as the cluster's recorded owner and
always runs ``slurm.sh stop DIR`` afterwards: on a normal exit, on an exception, and on SIGTERM or SIGINT (a
``timeout``, a CI time limit, Ctrl-C), where Python would otherwise die without running any finalizer. After the
stop the signal is delivered again with its previous handler, so the process ends as the signal meant. A SIGKILL
cannot be caught: the next ``slurm.sh start`` then finds the cluster's owner gone and stops it itself.

Before it stops the cluster, the signal handler ends this process's own children (every descendant): a
Snakemake driver then cancels its Slurm jobs while slurmctld can still answer, and a ``slurm.sh start`` still
running stops the daemons it has started (its trap). Only after they are gone (or killed after
:data:`CHILDREN_GRACE_S`) is the cluster stopped, so nothing starts a daemon or waits on one after the stop.

``python -m tests.cluster.harness hold DIR READY [SNAKEFILE]`` starts a cluster, writes READY and waits to be
killed; with SNAKEFILE it first starts Snakemake on that workflow through profiles/slurm (the teardown tests use
it).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from tests.processes import alive, descendants

SLURM_SH = Path(__file__).resolve().with_name("slurm.sh")
DAEMONS = ("munged", "slurmctld", "slurmd")
START_TIMEOUT_S = 120
STOP_TIMEOUT_S = 90
CHILDREN_GRACE_S = 45
"""How long the children get after SIGTERM (a Snakemake driver cancels its Slurm jobs and waits for them)."""


def slurm_sh(*args: str | Path, timeout: int, owner: int | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "SLURM_TEST_OWNER_PID": str(owner if owner is not None else os.getpid())}
    try:
        return subprocess.run(
            ["bash", str(SLURM_SH), *map(str, args)],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            start_new_session=True,  # a signal to this process's group (timeout's second send) must not cut it short
        )
    except subprocess.TimeoutExpired as exc:
        return subprocess.CompletedProcess(exc.cmd, 124, str(exc.stdout or ""), f"{exc.stderr or ''}\n[timed out]")


def read_pid(path: Path) -> int | None:
    try:
        return int(Path(path).read_text().strip())
    except (OSError, ValueError):
        return None


def end_children(grace: float = CHILDREN_GRACE_S) -> None:
    """End every descendant of this process: SIGINT first (Snakemake cancels its Slurm jobs on an interrupt; on
    SIGTERM it would wait for them to finish), up to ``grace`` seconds; then SIGTERM (a child that ignores SIGINT, as
    a shell's background job does), 5 s; then SIGKILL."""
    pending = descendants([os.getpid()])
    for sig, wait in ((signal.SIGINT, grace), (signal.SIGTERM, 5.0), (signal.SIGKILL, 0.0)):
        pending = [pid for pid in [*pending, *descendants([os.getpid()])] if alive(pid)]
        for pid in dict.fromkeys(pending):
            with suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and any(alive(pid) for pid in pending):
            time.sleep(0.2)
            with suppress(ChildProcessError):
                while os.waitpid(-1, os.WNOHANG)[0]:  # reap this process's own children as they end
                    pass


def cluster_processes(state_dir: Path) -> list[int]:
    """Every live daemon of the cluster in ``state_dir``, found in /proc (not from its pid files, which a start
    interrupted early has not written): munged names the folder on its command line, slurmctld and slurmd carry
    its SLURM_CONF."""
    folder = str(Path(state_dir).resolve())
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or (entry / "comm").read_text().strip() not in DAEMONS:
                continue
            cmdline, environ = (entry / "cmdline").read_bytes(), (entry / "environ").read_bytes()
        except OSError:
            continue
        if f"{folder}/".encode() in cmdline or f"SLURM_CONF={folder}/slurm.conf".encode() in environ.split(b"\0"):
            if alive(int(entry.name)):
                found.append(int(entry.name))
    return found


def daemon_pids(state_dir: Path) -> dict[str, int | None]:
    return {name: read_pid(Path(state_dir) / f"{name}.pid") for name in DAEMONS}


def stop(state_dir: Path) -> subprocess.CompletedProcess:
    return slurm_sh("stop", state_dir, timeout=STOP_TIMEOUT_S)


@contextmanager
def stop_on_signals(state_dir: Path) -> Iterator[dict[str, bool]]:
    """While inside: SIGTERM and SIGINT first stop the cluster in ``state_dir``, then act as before. Yields a
    dict whose ``"stopped"`` turns True once the handler has stopped the cluster (so no one stops it twice: under
    load one stop can take most of a minute).

    A signal this process ignores stays ignored: a shell starts background jobs with SIGINT ignored (``cmd &``,
    ``nohup``), and stopping the cluster on a signal that then does not end the process would leave it running
    without its cluster (the re-delivered signal would be ignored too)."""
    watched = (signal.SIGTERM, signal.SIGINT)
    previous = {sig: signal.getsignal(sig) for sig in watched if signal.getsignal(sig) is not signal.SIG_IGN}
    state = {"stopped": False}

    def note(text: str) -> None:  # what the handler did, beside the cluster's folder (teardown.log)
        with suppress(OSError), Path(f"{state_dir}.teardown.log").open("a") as log:
            log.write(f"{time.strftime('%H:%M:%S')} pid {os.getpid()}: {text}\n")

    def again(signum, frame):
        note(f"signal {signum} again, while stopping: ignored")

    def handler(signum, frame):
        # Not the previous handlers yet: ``timeout`` sends its signal twice (to this process, then to its group),
        # and a second one arriving under the default action would end this process before the cluster is stopped.
        for sig in previous:
            signal.signal(sig, again)
        note(f"signal {signum}: ending {len(descendants([os.getpid()]))} child processes")
        end_children()  # first: whatever they do on SIGTERM may need the cluster, or start a daemon
        note("children ended; stopping the cluster")
        done = stop(state_dir)
        note(f"slurm.sh stop: exit {done.returncode}; {done.stderr.strip()[-400:]}")
        for sig, old in previous.items():
            signal.signal(sig, old)
        state["stopped"] = True
        os.kill(os.getpid(), signum)  # delivered again, to the handler that was there before

    for sig in previous:
        signal.signal(sig, handler)
    try:
        yield state
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@contextmanager
def running_cluster(state_dir: Path) -> Iterator[subprocess.CompletedProcess]:
    """A running cluster in ``state_dir`` owned by this process; stopped on exit, error, SIGTERM or SIGINT.

    Yields the completed ``slurm.sh start`` (its stdout's last line exports SLURM_CONF); raises RuntimeError
    with the script's output if it failed.
    """
    state_dir = Path(state_dir)
    with stop_on_signals(state_dir) as signalled:
        try:
            started = slurm_sh("start", state_dir, timeout=START_TIMEOUT_S)
            if started.returncode != 0:
                raise RuntimeError(f"slurm.sh start failed (rc={started.returncode}):\n{started.stderr[-3000:]}")
            yield started
        finally:
            if not signalled["stopped"]:
                stop(state_dir)


def hold(state_dir: str, ready: str, snakefile: str | None = None, where: str = "slurm") -> None:
    """Start a cluster, say so in ``ready`` (with ``snakefile``: once Snakemake runs that workflow's jobs, through
    profiles/slurm, or with ``where="local"`` on this machine in a session of its own as the tests' shared tiny
    run does, from the Snakefile's folder), and wait until a signal ends this process, or until a file
    ``<ready>.release`` appears: then stop the cluster as a test run's teardown does, and return."""
    with running_cluster(Path(state_dir)) as started:
        if snakefile is not None and where == "local":
            folder = Path(snakefile).parent
            log = (folder / "snakemake.log").open("w")
            subprocess.Popen([str(Path(sys.executable).parent / "snakemake"), "--snakefile", snakefile, "--cores", "1"],
                             cwd=folder, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                             start_new_session=True)  # fmt: skip
        elif snakefile is not None:
            conf = started.stdout.strip().splitlines()[-1].split("=", 1)[1]
            folder = Path(snakefile).parent
            env = {**os.environ, "SLURM_CONF": conf,
                   "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/sbin", "/usr/bin",
                                            os.environ.get("PATH", "")])}  # fmt: skip
            profile = Path(__file__).resolve().parents[2] / "profiles" / "slurm"
            log = (folder / "snakemake.log").open("w")
            subprocess.Popen([str(Path(sys.executable).parent / "snakemake"), "--snakefile", snakefile, "--profile",
                              str(profile), "--workflow-profile", "none", "--max-threads", "1",
                              "--slurm-init-seconds-before-status-checks", "2",
                              "--seconds-between-status-checks", "2"],
                             cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=log,
                             stderr=subprocess.STDOUT)  # fmt: skip
        Path(ready).write_text(str(os.getpid()))
        while not Path(f"{ready}.release").exists():
            time.sleep(0.5)


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5, 6) or sys.argv[1] != "hold":
        sys.exit("usage: python -m tests.cluster.harness hold DIR READY [SNAKEFILE [slurm|local]]")
    hold(sys.argv[2], sys.argv[3], *sys.argv[4:])
