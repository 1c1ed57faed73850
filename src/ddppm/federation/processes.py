"""The processes ``ddppm coordinate`` starts, found and stopped (docs/federation.md, "The coordinator's lifecycle"):
Flower's SuperLink starts its SuperExec and the run's ServerApp in sessions of their own, which the SuperLink's
process group does not reach, so they are found through /proc.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path


def _children() -> dict[int, list[int]]:
    """Each process's children, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry.name))
    return children


def descendants(pids: int | list[int]) -> list[int]:
    """Every descendant of ``pids`` (one pid or several; from /proc), parents first: Flower starts its SuperExec and
    the ServerApp in sessions of their own, which the SuperLink's process group does not reach."""
    children, found, todo = _children(), [], [pids] if isinstance(pids, int) else list(pids)
    while todo:
        for child in children.get(todo.pop(0), []):
            if child not in found:
                found.append(child)
                todo.append(child)
    return found


def alive(pid: int | None) -> bool:
    """Whether ``pid`` runs (neither gone nor a zombie not yet reaped)."""
    if not pid:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def serverapps(pid: int) -> list[int]:
    """The ServerApp processes among ``pid``'s descendants (Flower's ``flwr-serverapp``)."""
    found = []
    for child in descendants(pid):
        with contextlib.suppress(OSError):
            if b"flwr-serverapp" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.append(child)
    return found


def stop_process_tree(process: subprocess.Popen, grace: float = 10.0) -> None:
    """End ``process``, its process group and every descendant: SIGTERM, then SIGKILL after ``grace`` seconds."""
    tree = descendants(process.pid)
    for pid in tree:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=grace)
    while any(alive(pid) for pid in tree) and time.monotonic() < deadline:
        time.sleep(0.1)
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    for pid in tree + descendants(process.pid):
        if alive(pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def die_with_parent() -> None:
    """In a child, before it runs (``preexec_fn``): end it with SIGTERM when its parent dies, even by SIGKILL
    (``PR_SET_PDEATHSIG``), so that a killed party or coordinator leaves no SuperNode or SuperLink behind."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
