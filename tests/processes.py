"""Processes seen through /proc, for the tests that start and end real processes (tests/cluster's Slurm harness,
tests/federation's Flower federation on loopback)."""

from __future__ import annotations

from pathlib import Path


def alive(pid: int | None) -> bool:
    """True for a running process; an exited one not yet reaped (zombie) counts as gone."""
    if not pid:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def descendants(pids: list[int]) -> list[int]:
    """Every descendant of ``pids`` (from /proc), parents before their children."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], list(pids)
    while todo:
        for child in children.get(todo.pop(0), []):
            if child not in found:
                found.append(child)
                todo.append(child)
    return found
