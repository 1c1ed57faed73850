"""File input/output: Parquet tables with JSON metadata, atomic writes, config hashes.

Every artefact the project writes goes through :func:`atomic_write`, so a crash or an exception never
leaves a half-written file under the final name: the bytes go to a hidden temporary file in the same
directory (``.<basename>.tmp-<random>``) which is renamed over the target with :func:`os.replace`
(atomic on POSIX when source and target share a file system).

Parquet files carry their provenance as JSON in the Arrow schema metadata under the key ``b"ddppm"``;
:func:`write_parquet` always adds the package version and a UTC timestamp to it.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import hashlib
import json
import os
import pickle
import secrets
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ddppm.core.errors import DataError
from ddppm.core.provenance import PACKAGE, environment

__all__ = [
    "METADATA_KEY",
    "atomic_write",
    "config_hash",
    "remove_stale_temporaries",
    "json_default",
    "read_parquet",
    "write_json_atomic",
    "write_parquet",
    "write_text_atomic",
]

METADATA_KEY = b"ddppm"
# Columns holding wall-clock measurements (the cost tables report them): two runs of the same code and
# config agree on every other column, and tests comparing runs ignore only these.
MEASURED_COLUMNS: frozenset[str] = frozenset({"seconds_per_run"})
"""Key of the project's JSON metadata in a Parquet file's Arrow schema metadata."""

PathLike = str | os.PathLike[str]


def json_default(obj: Any) -> Any:
    """JSON ``default`` hook for NumPy values and paths.

    Parameters
    ----------
    obj : Any
        An object that :func:`json.dumps` cannot serialise by itself.

    Returns
    -------
    Any
        A JSON-able equivalent: ``np.ndarray`` -> nested list, NumPy scalar -> Python scalar,
        ``Path`` / ``datetime`` -> ``str``, ``set`` -> sorted list.

    Raises
    ------
    TypeError
        For any other type (as :mod:`json` expects from a ``default`` hook).
    """
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, os.PathLike | _dt.datetime | _dt.date):
        return str(obj)
    if isinstance(obj, set | frozenset):
        return sorted(obj, key=str)
    raise TypeError(f"object of type {type(obj).__name__} is not JSON serialisable")


def config_hash(obj: Any) -> str:
    """Short, stable hash of a JSON-able configuration fragment.

    ``sha256(json.dumps(obj, sort_keys=True, default=str))`` truncated to its first 16 hex digits
    (64 bits), so the hash does not depend on the order of mapping keys.

    Parameters
    ----------
    obj : Any
        Configuration fragment (dicts, lists, numbers, strings; anything else is passed through ``str``).

    Returns
    -------
    str
        16 lowercase hex characters.
    """
    text = json.dumps(obj, sort_keys=True, default=str, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@contextlib.contextmanager
def atomic_write(path: PathLike, mode: int | None = None) -> Iterator[Path]:
    """Context manager that yields a temporary path and moves it onto ``path`` on success.

    The temporary file is created (empty) in the directory of ``path`` under the name
    ``.<basename>.tmp-<random>``; parent directories are created. When the ``with`` body finishes
    normally the temporary file replaces ``path`` atomically (:func:`os.replace`). When the body
    raises, the temporary file is deleted and the exception propagates, so ``path`` is either the old
    file (or absent) or the complete new one, never a partial one.

    Parameters
    ----------
    path : str or os.PathLike
        Final destination.
    mode : int, optional
        Permission bits of the new file (e.g. ``0o600`` for a file only its owner may read), set on the temporary
        before it is renamed, so the file never exists under ``path`` with wider ones. None (the default): 0666
        minus the umask.

    Yields
    ------
    pathlib.Path
        The temporary path to write to.
    """
    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(final)
    tmp = _create_temp(final, mode)
    try:
        yield tmp
        os.replace(tmp, final)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def remove_stale_temporaries(final: PathLike) -> list[Path]:
    """Delete ``.<basename>.tmp-*`` files left next to ``final`` by a writer that was killed.

    Only one job ever writes a given output (Snakemake's rule), so any such file found before a new write
    is a leftover of an interrupted one. Returns the removed paths.
    """
    final = Path(final)
    removed = []
    for stale in final.parent.glob(f".{final.name}.tmp-*"):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
            removed.append(stale)
    return removed


def _create_temp(final: Path, mode: int | None = None) -> Path:
    """Create an empty, exclusive ``.<basename>.tmp-<random>`` file next to ``final``.

    Unlike :func:`tempfile.mkstemp` (mode 0600) the file gets the default permissions (0666 minus the
    umask), so the renamed result is as readable as any other file the user writes; ``mode`` sets them
    exactly instead (the umask does not apply).
    """
    for _ in range(100):
        tmp = final.parent / f".{final.name}.tmp-{secrets.token_hex(6)}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else mode)
        except FileExistsError:
            continue
        try:
            if mode is not None:
                os.fchmod(fd, mode)  # exactly ``mode``: os.open's mode is narrowed by the umask
        finally:
            os.close(fd)
        return tmp
    raise FileExistsError(f"could not create a temporary file next to {str(final)!r}")


def write_text_atomic(path: PathLike, text: str, mode: int | None = None) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (see :func:`atomic_write`; ``mode``: its permission bits)."""
    with atomic_write(path, mode) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json_atomic(path: PathLike, obj: Any) -> None:
    """Write ``obj`` as indented, key-sorted JSON to ``path`` atomically.

    NumPy arrays and scalars are converted by :func:`json_default`.
    """
    write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=True, default=json_default) + "\n")


def write_pickle_atomic(path: PathLike, obj: Any) -> None:
    """Pickle ``obj`` to ``path`` atomically: for a pipeline's intermediate state passed between its own jobs
    (never a published result: those are Parquet, CSV or JSON)."""
    with atomic_write(path) as tmp, open(tmp, "wb") as handle:
        pickle.dump(obj, handle, protocol=pickle.HIGHEST_PROTOCOL)


def read_pickle(path: PathLike) -> Any:
    """What :func:`write_pickle_atomic` wrote (only files this pipeline wrote itself: unpickling runs code)."""
    with open(path, "rb") as handle:
        return pickle.load(handle)


def write_parquet(df: pd.DataFrame, path: PathLike, metadata: Mapping[str, Any]) -> None:
    """Write a data frame to Parquet atomically, with JSON metadata.

    The metadata is stored as JSON under the schema metadata key ``b"ddppm"`` (next to pandas' own
    ``b"pandas"`` entry) and is always augmented with ``provenance`` (git commit and the versions of Python,
    ddppm, numpy, scipy, pandas and snakemake), ``package_version`` and
    ``written_at`` (UTC, ISO 8601); these overwrite keys of the same name in ``metadata``.

    Parameters
    ----------
    df : pandas.DataFrame
        Table to write.
    path : str or os.PathLike
        Destination file; parent directories are created.
    metadata : Mapping[str, Any]
        JSON-able provenance (NumPy arrays / scalars allowed, see :func:`json_default`). Not modified.
    """

    meta = dict(metadata)
    meta["provenance"] = environment()
    meta["package_version"] = meta["provenance"][PACKAGE]
    meta["written_at"] = _dt.datetime.now(_dt.UTC).isoformat()
    payload = json.dumps(meta, sort_keys=True, default=json_default).encode("utf-8")
    table = pa.Table.from_pandas(df)
    schema_meta = dict(table.schema.metadata or {})
    schema_meta[METADATA_KEY] = payload
    table = table.replace_schema_metadata(schema_meta)
    with atomic_write(path) as tmp:
        pq.write_table(table, tmp)


def read_parquet(path: PathLike) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Read a Parquet file written by :func:`write_parquet`.

    Parameters
    ----------
    path : str or os.PathLike
        Parquet file.

    Returns
    -------
    df : pandas.DataFrame
        The table.
    metadata : dict
        The decoded ``b"ddppm"`` metadata, or ``{}`` when the file has none.

    Raises
    ------
    DataError
        If the file does not exist.
    """
    p = Path(path)
    if not p.is_file():
        raise DataError(f"Parquet file {str(p)!r} does not exist; run the step that produces it first.")
    table = pq.read_table(p)
    raw = (table.schema.metadata or {}).get(METADATA_KEY)
    meta: dict[str, Any] = json.loads(raw.decode("utf-8")) if raw else {}
    return table.to_pandas(), meta


@contextlib.contextmanager
def exclusive_lock(path: PathLike) -> Iterator[None]:
    """An exclusive lock (``flock`` on the file ``path``, created if missing) held for the block: for a read, check
    and write that no other process may interleave (a ledger's reservation, a party's journal of steps)."""
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
