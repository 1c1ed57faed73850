"""Remote data sources: a checksummed, atomic download, a reader for delimited numeric tables, and a data set
loaded from a pinned URL (config ``source: url``)."""

from __future__ import annotations

import hashlib
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ddppm.core.errors import ConfigError, DataError
from ddppm.core.io import atomic_write

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
URL_LOADER_OPTIONS = ("delimiter", "header", "drop_last_column", "drop_columns", "check_shape", "timeout")
"""Options of ``source: url`` besides ``url`` and ``sha256``."""


def read_numeric_table(
    path: str | Path,
    *,
    delimiter: str | None = None,
    header: bool | None = None,
    drop_last_column: bool = False,
    drop_columns: Sequence[int] = (),
) -> np.ndarray:
    """Read a delimited numeric table into an ``n × d`` float64 matrix.

    Expected format: one data point per line, fields separated by a delimiter (comma, semicolon, tab
    or runs of whitespace), optionally a single header line. Columns that are not entirely numeric
    (e.g. a class label such as ``M``/``B``) are dropped; so are the columns listed in
    ``drop_columns`` (0-based positions in the file, applied first, e.g. an id or a numeric class
    column) and, with ``drop_last_column=True``, the last remaining column (e.g. the response ``Y`` of
    the LARS diabetes file). Missing values are an error.

    Parameters
    ----------
    path : str or Path
        The file.
    delimiter : str, optional
        Field separator; default: sniffed from the first line (``,`` then ``;`` then tab, else
        whitespace).
    header : bool, optional
        Whether the first line is a header; default: yes if it has no numeric field or fewer numeric
        fields than the second line.
    drop_last_column : bool
        Drop the last column after the non-numeric ones are removed.
    drop_columns : sequence of int
        Positions of columns to drop before anything else.

    Returns
    -------
    numpy.ndarray
        Float64 matrix.

    Raises
    ------
    DataError
        Empty file, no numeric column, or missing / non-finite values.
    """
    p = Path(path)
    with p.open("r", encoding="utf-8", errors="replace") as fh:
        lines = (line for line in fh if line.strip())
        first = next(lines, "")
        second = next(lines, "")
    if not first:
        raise DataError(f"data file {str(p)!r} is empty.")
    if delimiter is None:
        delimiter = next((c for c in (",", ";", "\t") if c in first), r"\s+")
    if header is None:
        pattern = delimiter if delimiter == r"\s+" else re.escape(delimiter)
        n_first, n_second = (
            sum(_is_number(f.strip().strip("\"'")) for f in re.split(pattern, line.strip()))
            for line in (first, second or first)
        )
        # A header line has fewer numeric fields than a data line (or none at all).
        header = n_first == 0 or n_first < n_second
    df = pd.read_csv(
        p,
        sep=delimiter,
        header=0 if header else None,
        engine="python" if len(delimiter) > 1 else "c",
        skipinitialspace=True,
        skip_blank_lines=True,
    )
    if drop_columns:
        bad = [i for i in drop_columns if not -df.shape[1] <= int(i) < df.shape[1]]
        if bad:
            raise DataError(
                f"drop_columns {bad} out of range for {str(p)!r}, which has {df.shape[1]} columns; "
                "fix `drop_columns` (0-based positions) in the config."
            )
        df = df.drop(columns=[df.columns[int(i)] for i in drop_columns])
    numeric = df.apply(pd.to_numeric, errors="coerce")
    for position, column in enumerate(df.columns):
        bad = numeric[column].isna() & df[column].notna()
        if bad.any() and numeric[column].notna().any():
            # Mostly numbers with some text: a corrupt or missing-value cell, never a label column.
            row = int(np.flatnonzero(bad.to_numpy())[0])
            line = row + 1 + (1 if header else 0)
            raise DataError(
                f"data file {str(p)!r}, line {line}, column {position} ({column!r}): {df[column].iloc[row]!r} is "
                f"not a number ({int(bad.sum())} such cell(s) in that column). Fix the file, or declare the column "
                "as one to drop with `dataset_options.<name>.drop_columns`."
            )
    keep = [c for c in df.columns if numeric[c].notna().sum() == df[c].notna().sum() and df[c].notna().any()]
    numeric = numeric[keep]
    if drop_last_column and numeric.shape[1] > 0:
        numeric = numeric.iloc[:, :-1]
    if numeric.shape[1] == 0:
        raise DataError(f"data file {str(p)!r} has no numeric column; expected a delimited numeric table.")
    X = numeric.to_numpy(dtype=np.float64)
    if not np.all(np.isfinite(X)):
        bad = int((~np.isfinite(X)).any(axis=1).sum())
        raise DataError(f"data file {str(p)!r} has {bad} row(s) with missing or non-finite values.")
    return np.ascontiguousarray(X)


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def download(url: str, sha256: str, dest: Path, timeout: float = 30) -> Path:
    """Download ``url`` to ``dest`` atomically and verify its sha256.

    If ``dest`` already exists with the expected checksum nothing is downloaded. Otherwise the body is
    streamed into a temporary file next to ``dest`` (:func:`ddppm.io.atomic_write`), hashed, and only
    moved to ``dest`` when the digest matches; on any failure no partial file is left behind.

    Parameters
    ----------
    url : str
        Source URL (``http``, ``https`` or ``file``).
    sha256 : str
        Expected hex digest (config key ``datasets.<name>.sha256``).
    dest : Path
        Destination file; parent directories are created.
    timeout : float
        Socket timeout in seconds.

    Returns
    -------
    Path
        ``dest``.

    Raises
    ------
    DataError
        Malformed ``sha256``, a network / HTTP error (the message names the URL), or a checksum
        mismatch (the message gives expected and actual digests).
    """
    expected = sha256.strip().lower()
    if not _HEX64.match(expected):
        raise DataError(
            f"sha256 {sha256!r} for {url} is not a 64-character hex digest; set `sha256` in the config "
            "to the file's sha256 (e.g. from `sha256sum`)."
        )
    dest = Path(dest)
    if dest.is_file() and _file_sha256(dest) == expected:
        return dest
    try:
        with atomic_write(dest) as tmp:
            h = hashlib.sha256()
            try:
                with urllib.request.urlopen(url, timeout=timeout) as resp, tmp.open("wb") as out:
                    for chunk in iter(lambda: resp.read(1 << 16), b""):
                        h.update(chunk)
                        out.write(chunk)
            except urllib.error.HTTPError as exc:
                raise DataError(f"download of {url} failed: HTTP {exc.code} {exc.reason}.") from exc
            except (urllib.error.URLError, OSError, ValueError) as exc:
                raise DataError(f"download of {url} failed: {exc}. Check the URL and the network.") from exc
            actual = h.hexdigest()
            if actual != expected:
                raise DataError(
                    f"checksum mismatch for {url}: expected sha256 {expected}, got {actual}. Update "
                    "`sha256` in the config if the file legitimately changed, or check the URL."
                )
    except OSError as exc:  # e.g. the cache directory cannot be created
        raise DataError(f"cannot store the download of {url} at {str(dest)!r}: {exc}") from exc
    return dest


def _default_cache_dir() -> Path:
    env = os.environ.get("DDPPM_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "ddppm"


def load_url(
    name: str,
    *,
    url: str | None,
    sha256: str | None,
    cache_dir: str | Path | None,
    options: dict[str, Any],
    meta: dict[str, Any],
    columns: int | None = None,
) -> np.ndarray:
    """Data set ``name`` from ``url`` (pinned by ``sha256``), downloaded into ``cache_dir`` and read with
    :func:`read_numeric_table` (``options``: its own and ``timeout``, ``check_shape``); ``meta`` gets the url, the
    file's sha256 and the cache path. ``columns``: the number of columns the data set must have (unless
    ``check_shape`` is false), or ``None``."""
    if not url:
        raise DataError(f"dataset {name!r} has source 'url' but no URL; set `dataset_options.{name}.url`.")
    if not sha256:
        raise DataError(
            f"dataset {name!r} has source 'url' but no pinned checksum; set `dataset_options.{name}.sha256` "
            "to the sha256 hex digest of the file."
        )
    unknown = sorted(set(options) - set(URL_LOADER_OPTIONS))
    if unknown:
        raise ConfigError(
            f"unknown option(s) {unknown} for dataset {name!r} with source 'url'; valid options are "
            f"{', '.join(URL_LOADER_OPTIONS)}. Fix `dataset_options.{name}`."
        )
    opts = dict(options)
    timeout = float(opts.pop("timeout", 30.0))
    check_shape = bool(opts.pop("check_shape", True))
    basename = Path(urllib.parse.urlparse(url).path).name or "download"
    cache = Path(cache_dir) if cache_dir is not None else _default_cache_dir()
    dest = cache / f"{name}-{sha256.strip().lower()[:12]}-{basename}"
    path = download(url, sha256, dest, timeout=timeout)
    X = read_numeric_table(path, **opts)
    if check_shape and columns is not None and X.shape[1] != columns:
        raise DataError(
            f"dataset {name!r} from {url} has {X.shape[1]} numeric columns, the expected shape has "
            f"{columns}; drop label/id columns with `dataset_options.{name}.drop_columns` or "
            f"`drop_last_column`, or set `dataset_options.{name}.check_shape: false`."
        )
    meta.update(url=url, file_sha256=sha256.strip().lower(), cache_path=str(path), options=dict(options))
    meta["origin"] = url
    return X
