"""A data set from a local file: the user's own data, named in the config (``dataset_options.<name>``).

``source: file`` with ``path`` (CSV, TSV or Parquet, chosen by the extension) loads the file's columns as the raw
records, one row per data point, under a name the user picks: no record in ``datasets.yaml`` and no sha256 (the
file is an ``input:`` of the jobs that read it, so editing it reruns exactly them). ``columns`` picks the columns
(names, or 0-based positions), ``drop_columns`` leaves some out; ``header`` and ``delimiter`` describe a CSV or TSV
(default: the first line is a header when one of its fields is not a number; ``,`` for ``.csv``, tab for
``.tsv``). Every cell of the chosen columns must be a finite number, no column may hold one value in every row, and
there must be at least 2 rows: otherwise a :class:`~ddppm.core.errors.DataError` names the file, the line, the
column and the config key (the config's validation reads the file, so this happens before any job).

:func:`file_shape` reads only the header (and counts the rows) so the config's validation can check the declared
public bounds against the number of columns before any job; :func:`read_local_file` reads the values.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ddppm.core.errors import ConfigError, DataError

FILE_OPTIONS = ("path", "columns", "drop_columns", "header", "delimiter")
"""The loader options of ``source: file`` (config keys under ``dataset_options.<name>``)."""
FORMATS = {".csv": ",", ".tsv": "\t", ".parquet": None, ".pq": None}
"""The extensions read (a CSV or TSV may also end in ``.gz``, ``.bz2``, ``.xz`` or ``.zip``), with their default
delimiter (``None``: Parquet)."""
_COMPRESSED = (".gz", ".bz2", ".xz", ".zip")


def file_format(path: str | Path, key: str) -> str | None:
    """The default delimiter of ``path`` by its extension (``None`` for Parquet); ``key`` names the config entry.

    Raises
    ------
    ConfigError
        An extension that is not one of :data:`FORMATS`.
    """
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] in _COMPRESSED:
        suffixes = suffixes[:-1]
    if not suffixes or suffixes[-1] not in FORMATS:
        raise ConfigError(
            f"{key}.path: {str(path)!r} is not a CSV, TSV or Parquet file; name it with one of the extensions "
            f"{', '.join(FORMATS)} (a CSV or TSV may be compressed: {', '.join(_COMPRESSED)})"
        )
    return FORMATS[suffixes[-1]]


def _existing(path: str | Path, key: str) -> Path:
    p = Path(path)
    if not p.is_file():
        raise DataError(f"{key}.path: no file at {str(p)!r} (a relative path is relative to the directory snakemake "
                        f"runs in, the repository's root; now {str(Path.cwd())!r}); fix the path")  # fmt: skip
    return p


def _sniff_header(p: Path, delimiter: str) -> bool:
    first = pd.read_csv(p, sep=delimiter, header=None, nrows=1, dtype=str, skipinitialspace=True)
    return any(not _is_number(str(v).strip()) for v in first.iloc[0].tolist()) if len(first) else False


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _read(
    p: Path, options: dict[str, Any], key: str, nrows: int | None = None, usecols: list[int] | None = None
) -> tuple[pd.DataFrame, int | None]:
    """The file as a frame (every column, or ``usecols``) and the line number of its first record (``None`` for
    Parquet, whose records have row numbers); CSV cells stay strings, so nothing is coerced unseen."""
    default = file_format(p, key)
    if default is None:
        given = sorted(set(options) & {"header", "delimiter"})
        if given:
            raise ConfigError(f"{key}.{given[0]}: does nothing for a Parquet file (its columns are named); remove it")
        import pyarrow.parquet as pq

        frame = pq.read_schema(p).empty_table().to_pandas() if nrows == 0 else pd.read_parquet(p)
        return frame, None
    delimiter = options.get("delimiter") or default
    header = options.get("header")
    try:
        if header is None:
            header = _sniff_header(p, delimiter)
        frame = pd.read_csv(p, sep=delimiter, header=0 if header else None, nrows=nrows, usecols=usecols, dtype=str,
                            keep_default_na=False, skipinitialspace=True, skip_blank_lines=True)  # fmt: skip
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError) as exc:
        raise DataError(f"data file {str(p)!r} ({key}.path) cannot be read as a table with delimiter "
                        f"{delimiter!r}: {exc}; fix the file or set {key}.delimiter") from None  # fmt: skip
    return frame, 2 if header else 1


def _select(frame: pd.DataFrame, options: dict[str, Any], key: str, p: Path) -> pd.DataFrame:
    """The chosen columns: ``columns`` (in that order) or every column, less ``drop_columns``."""
    names = list(frame.columns)

    def column(item: Any, option: str) -> Any:
        if isinstance(item, bool) or not isinstance(item, int | str):
            raise ConfigError(f"{key}.{option}: {item!r} is neither a column name nor a 0-based position")
        if isinstance(item, int):
            if not 0 <= item < len(names):
                raise ConfigError(f"{key}.{option}: position {item} is out of range for {str(p)!r}, which has "
                                  f"{len(names)} columns (positions start at 0)")  # fmt: skip
            return names[item]
        if item not in names:
            raise ConfigError(f"{key}.{option}: {str(p)!r} has no column {item!r} (its columns: {names[:20]}"
                              f"{' ...' if len(names) > 20 else ''}); fix the name")  # fmt: skip
        return item

    chosen = [column(c, "columns") for c in options.get("columns") or names]
    dropped = {column(c, "drop_columns") for c in options.get("drop_columns") or ()}
    chosen = [c for c in chosen if c not in dropped]
    if not chosen:
        raise ConfigError(f"{key}: no column of {str(p)!r} is left to read; check {key}.columns and drop_columns")
    return frame[chosen]


def file_shape(path: str | Path, options: dict[str, Any], key: str) -> tuple[int, int]:
    """``(n, d)`` of the records the options read from ``path``, from its header and one column only (no other
    value is parsed): what the config's checks need before any job (n and d are public: docs/privacy.md).

    Parameters
    ----------
    path : str or Path
        The file.
    options : dict
        ``columns``, ``drop_columns``, ``header``, ``delimiter`` (the others are ignored).
    key : str
        The config entry, e.g. ``dataset_options.mine``, for error messages.

    Returns
    -------
    tuple of int
        Rows and chosen columns.
    """
    p = _existing(path, key)
    d = _select(_read(p, options, key, nrows=0)[0], options, key, p).shape[1]
    if file_format(p, key) is None:
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(p).metadata.num_rows), d
    return len(_read(p, options, key, usecols=[0])[0].index), d


def file_columns(path: str | Path, options: dict[str, Any], key: str) -> list[str]:
    """The names of the columns the options read from ``path``, in order (from the header alone)."""
    p = _existing(path, key)
    return [str(c) for c in _select(_read(p, options, key, nrows=0)[0], options, key, p).columns]


NA_TOKENS = ("", "nan", "NaN", "NAN", "NA", "N/A", "n/a", "null", "NULL", "None", "?")
"""Cells read as missing values (an error: the pipeline does not impute)."""


def _column(raw: pd.Series) -> tuple[pd.Series, pd.Series, pd.Series]:
    """A column's numbers, its missing cells and its cells that are not numbers."""
    if pd.api.types.is_numeric_dtype(raw) and not pd.api.types.is_bool_dtype(raw):
        numbers = raw.astype(float)
        return numbers, numbers.isna(), pd.Series(False, index=raw.index)
    text = raw.astype("string").str.strip()
    missing = (text.isna() | text.isin(NA_TOKENS)).astype(bool)
    numbers = pd.to_numeric(text.where(~missing), errors="coerce").astype(float)
    return numbers, missing, (numbers.isna() & ~missing).astype(bool)


def read_local_file(path: str | Path, options: dict[str, Any], key: str) -> np.ndarray:
    """The chosen columns of ``path`` as an ``n × d`` float64 matrix (rows = data points).

    Parameters
    ----------
    path : str or Path
        A CSV, TSV or Parquet file (:data:`FORMATS`).
    options : dict
        ``columns``, ``drop_columns``, ``header``, ``delimiter`` (module docstring).
    key : str
        The config entry (``dataset_options.<name>``) named in errors.

    Returns
    -------
    numpy.ndarray
        C-contiguous float64 matrix.

    Raises
    ------
    DataError
        No such file, a cell that is not a number, a missing or non-finite value, fewer than 2 rows: the message
        names the file, the line (or row) and the column, and the key.
    ConfigError
        An unknown extension, column name or position, or an option that does nothing for the format.
    """
    p = _existing(path, key)
    frame, first_line = _read(p, options, key)
    frame = _select(frame, options, key, p)
    values = np.empty(frame.shape, dtype=np.float64)
    for j, name in enumerate(frame.columns):
        numbers, missing, bad = _column(frame[name])
        problems = (
            (bad, "is not a number", f"fix the file, or leave the column out with {key}.drop_columns or {key}.columns"),
            (missing | ~np.isfinite(numbers.fillna(0.0)), "is missing, NaN or infinite",
             "the pipeline does not impute: fill those cells or drop those rows"),
        )  # fmt: skip
        for mask, what, fix in problems:
            if mask.any():
                row = int(np.flatnonzero(mask.to_numpy())[0])
                cell = frame[name].iloc[row]
                cell = repr(cell) if isinstance(cell, str) else str(cell)
                where = f"row {row}" if first_line is None else f"line {row + first_line}"
                raise DataError(f"data file {str(p)!r} ({key}.path), {where}, column {name!r}: "
                                f"{cell} {what} ({int(mask.sum())} such cell(s) in that column); "
                                f"{fix}")  # fmt: skip
        values[:, j] = numbers.to_numpy(dtype=np.float64)
    if values.shape[0] == 0:
        raise DataError(f"data file {str(p)!r} ({key}.path) has no data rows (only a header line); a data set "
                        "needs at least 2 rows, one data point per row")  # fmt: skip
    if values.shape[0] < 2:
        raise DataError(f"data file {str(p)!r} ({key}.path) has 1 data row; a data set needs at least 2 rows (one "
                        "data point per row)")  # fmt: skip
    constant = [j for j in range(values.shape[1]) if np.all(values[:, j] == values[0, j])]
    if constant:
        names = [c.item() if isinstance(c, np.generic) else c for c in (frame.columns[j] for j in constant)]
        raise DataError(f"data file {str(p)!r} ({key}.path): column(s) {names} hold one value in every row "
                        f"({values[0, constant[0]]:g} in {names[0]!r}): a constant "
                        "column carries no direction and its standard deviation is 0; leave it out with "
                        f"{key}.drop_columns: {names}")  # fmt: skip
    return np.ascontiguousarray(values)


def file_sha256(path: str | Path) -> str:
    """Hex sha256 of the file's bytes (recorded in the outputs' provenance; never required in the config)."""
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_local(name: str, options: dict[str, Any]) -> tuple[np.ndarray, dict[str, Any]]:
    """The records of data set ``name`` from its file (``options``: ``dataset_options.<name>`` without ``source``)
    and the metadata to record: path, the file's sha256, the options.

    Raises
    ------
    ConfigError
        No ``path``, or an option ``source: file`` does not take.
    """
    key = f"dataset_options.{name}"
    unknown = sorted(set(options) - set(FILE_OPTIONS))
    if unknown:
        raise ConfigError(f"{key}.{unknown[0]}: does nothing for source 'file' (its options: "
                          f"{', '.join(FILE_OPTIONS)}); remove it")  # fmt: skip
    if not options.get("path"):
        raise ConfigError(f"{key}.path: source 'file' needs the file's path (CSV, TSV or Parquet)")
    X = read_local_file(options["path"], options, key)
    meta = {"origin": str(options["path"]), "path": str(options["path"]), "file_sha256": file_sha256(options["path"]),
            "options": dict(options)}  # fmt: skip
    return X, meta
