"""Start and stop the throwaway Slurm cluster of tests/cluster, also when the test run is killed.

:func:`running_cluster` starts ``slurm.sh start DIR`` with this process as the cluster's recorded owner and
always runs ``slurm.sh stop DIR`` afterwards: on a normal exit, on an exception, and on SIGTERM or SIGINT (a
``timeout``, a CI time limit, Ctrl-C), where Python would otherwise die without running any finalizer. After the
stop the signal is delivered again with its previous handler, so the process ends as the signal meant. A SIGKILL
cannot be caught: the next ``slurm.sh start`` then finds the cluster's owner gone and stops it itself.

``python -m tests.cluster.harness hold DIR READY`` starts a cluster, writes READY and waits to be killed (the
teardown tests use it).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SLURM_SH = Path(__file__).resolve().with_name("slurm.sh")
DAEMONS = ("munged", "slurmctld", "slurmd")
START_TIMEOUT_S = 120
STOP_TIMEOUT_S = 90


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
        )
    except subprocess.TimeoutExpired as exc:
        return subprocess.CompletedProcess(exc.cmd, 124, str(exc.stdout or ""), f"{exc.stderr or ''}\n[timed out]")


def read_pid(path: Path) -> int | None:
    try:
        return int(Path(path).read_text().strip())
    except (OSError, ValueError):
        return None


def alive(pid: int | None) -> bool:
    """True for a running process; an exited one not yet reaped (zombie) counts as gone."""
    if not pid:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


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

    def handler(signum, frame):
        for sig, old in previous.items():
            signal.signal(sig, old)
        stop(state_dir)
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


def hold(state_dir: str, ready: str) -> None:
    """Start a cluster, say so in ``ready``, and wait until a signal ends this process."""
    with running_cluster(Path(state_dir)):
        Path(ready).write_text(str(os.getpid()))
        while True:
            time.sleep(0.5)


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "hold":
        sys.exit("usage: python -m tests.cluster.harness hold DIR READY")
    hold(sys.argv[2], sys.argv[3])
