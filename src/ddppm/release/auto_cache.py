"""The cache of ``method="auto"``'s choice (:mod:`ddppm.release.auto`): in this process and on disk.

The choice is a function of public parameters only (everything that enters the advisor's simulation and the rule:
:meth:`ddppm.release.auto.Problem.key_fields`), so it is stored under a hash of them together with a **code key**:
the package's version and a digest of every ``.py`` file of the installed ``ddppm`` package (any change to the
code that simulates, ranks or decides forgets every stored choice). Nothing private enters the key or the entry.

On disk the entries live in ``$DDPPM_CACHE_DIR/auto-method/`` (default ``~/.cache/ddppm/auto-method/``), one JSON
file per key, written atomically (a temporary file in the same directory, then :func:`os.replace`). An entry is
never trusted blindly: a file that cannot be read or parsed, that names another key or rule, or whose content fails
the caller's check is ignored and the choice is computed again (and stored afresh). An unwritable directory only
costs the time.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Mapping
from contextlib import suppress
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

ENVIRONMENT_VARIABLE = "DDPPM_CACHE_DIR"
SUBDIRECTORY = "auto-method"

_MEMORY: dict[str, dict[str, Any]] = {}
"""The choices computed or read in this process, by key."""


def cache_dir() -> Path:
    """Where choices are stored: ``$DDPPM_CACHE_DIR/auto-method``, else ``~/.cache/ddppm/auto-method``."""
    base = os.environ.get(ENVIRONMENT_VARIABLE)
    root = Path(base) if base else Path.home() / ".cache" / "ddppm"
    return root / SUBDIRECTORY


PACKAGE = Path(__file__).resolve().parents[1]
"""The installed ``ddppm`` package's directory (its source files make the code key)."""


@cache
def code_digest() -> str:
    """The package's version and a SHA-256 of every ``.py`` file of the ``ddppm`` package (path and bytes, in
    sorted order): the code key of every entry. Computed once per process."""
    try:
        installed = version("ddppm")
    except PackageNotFoundError:  # a source tree without installation: the files alone
        installed = "unknown"
    digest = hashlib.sha256(installed.encode())
    for path in sorted(PACKAGE.rglob("*.py")):
        digest.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_key(fields: Mapping[str, Any]) -> str:
    """The key of a choice: a SHA-256 of its public ``fields`` (canonical JSON) and :func:`code_digest`."""
    canonical = json.dumps(dict(fields), sort_keys=True, separators=(",", ":"), default=_plain)
    return hashlib.sha256((code_digest() + "\0" + canonical).encode()).hexdigest()


def _plain(value: Any) -> Any:
    if isinstance(value, tuple | list | set | frozenset):
        return list(value)
    raise TypeError(f"cache key: {value!r} is not a plain public parameter")


def remembered(key: str, valid: Callable[[dict[str, Any]], bool]) -> tuple[dict[str, Any] | None, str]:
    """The stored record of ``key`` and where it came from (``memory`` or ``disk``), or ``(None, "")``: a disk
    entry counts only if it parses, names ``key`` and passes ``valid`` (the caller's check of its content)."""
    if key in _MEMORY:
        return _MEMORY[key], "memory"
    entry = cache_dir() / f"{key}.json"
    try:
        record = json.loads(entry.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, ""
    try:
        trusted = isinstance(record, dict) and record.get("key") == key and bool(valid(record))
    except (KeyError, TypeError, ValueError, AttributeError):  # a record of another shape than ours
        trusted = False
    if not trusted:
        return None, ""
    _MEMORY[key] = record
    return record, "disk"


def remember(key: str, record: dict[str, Any]) -> None:
    """Keep ``record`` (JSON-ready, with ``record["key"] == key``) in this process and write it to disk atomically;
    a directory that cannot be written is skipped silently."""
    if record.get("key") != key:
        raise ValueError(f"cache record: its key {record.get('key')!r} is not {key!r}")
    _MEMORY[key] = record
    entry = cache_dir() / f"{key}.json"
    temporary = None
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=entry.parent, prefix=f".{key[:16]}.", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(record, stream, sort_keys=True)
        os.replace(temporary, entry)
    except OSError:
        if temporary is not None:
            with suppress(OSError):
                os.unlink(temporary)


def forget_in_process() -> None:
    """Empty this process's cache (the disk's entries stay)."""
    _MEMORY.clear()
