"""A user's files, read for ``ddppm fit`` and ``ddppm party``: the records' CSV (a header row, one record per row,
numeric columns, optionally a column naming each row's party) and the bounds' YAML (docs/release.md, "From the
command line")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from ddppm.core.errors import ConfigError, DataError


def read_records(path: Path, parties_column: str | None) -> tuple[pd.DataFrame, np.ndarray | None]:
    """The CSV's numeric records and, with ``parties_column``, each row's party label."""
    if not path.is_file():
        raise DataError(f"data: {path} is not a file")
    try:
        frame = pd.read_csv(path, sep=separator(path))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise DataError(f"data: {path.name} is not a table of one record per row with one value per header column "
                        f"({str(error).strip()})") from None  # fmt: skip
    if frame.empty:
        raise DataError(f"data: {path.name} has no records (a header row, then one record per row)")
    parties = None
    if parties_column is not None:
        if parties_column not in frame.columns:
            raise ConfigError(f"--parties: no column {parties_column!r} in {path.name}; its columns are "
                              f"{list(frame.columns)}")  # fmt: skip
        parties = frame.pop(parties_column).to_numpy()
    text = [str(c) for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    if text:
        column = frame[text[0]]
        words = column[pd.to_numeric(column, errors="coerce").isna() & column.notna()]
        example = f" such as {words.iloc[0]!r} (line {words.index[0] + 2})" if len(words) else ""
        raise DataError(f"data: the columns {text} of {path.name} are not numeric: {text[0]!r} holds text{example}; "
                        "write plain numbers (no quotes, no thousands separators), drop the columns, encode them as "
                        "numbers with declared bounds, or name a party column with --parties")  # fmt: skip
    values = frame.to_numpy(dtype=float)
    if not np.all(np.isfinite(values)):
        bad = [str(c) for c in frame.columns if not np.all(np.isfinite(frame[c].to_numpy(dtype=float)))]
        raise DataError(f"data: the columns {bad} of {path.name} hold empty, NaN or infinite values; a private PCA "
                        "needs every value (impute them with public rules first)")  # fmt: skip
    return frame, parties


def separator(path: Path) -> str:
    """The CSV's separator: ``,``, or ``;`` or a tab when the header line holds no comma but one of those (a
    spreadsheet's export in many locales)."""
    with open(path, encoding="utf-8-sig", errors="replace") as handle:
        header = handle.readline()
    if "," in header:
        return ","
    return ";" if ";" in header else ("\t" if "\t" in header else ",")


def read_bounds(path: Path, columns: list[str]) -> dict[str, Any]:
    """The bounds file as the estimator's mapping, ``features`` put in the columns' order."""
    if not path.is_file():
        raise ConfigError(f"--bounds: {path} is not a file")
    try:
        entry = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as error:
        raise ConfigError(f"--bounds: {path.name} is not valid YAML ({error})") from None
    if not isinstance(entry, dict):
        raise ConfigError(f"--bounds: {path.name} must be a mapping with `source` and `features` (docs/release.md)")
    features = entry.get("features")
    if isinstance(features, dict):
        missing = [c for c in columns if c not in features]
        extra = [str(c) for c in features if c not in columns]
        if missing or extra:
            raise ConfigError(f"--bounds: {path.name}'s features must name every column once: missing {missing}, "
                              f"unknown {extra}")  # fmt: skip
        entry = {**entry, "features": [features[c] for c in columns]}
    return entry
