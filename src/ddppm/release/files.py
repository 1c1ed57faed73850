"""Records in files read a batch at a time with pyarrow (:mod:`ddppm.release.rows`): a Parquet file,
a folder of Parquet files (one data set: every file has the same columns), or a CSV file (a header row).

A Parquet data set knows its count of rows (its metadata): no counting pass. Every column is a feature (``ddppm
fit --parties`` is refused with a stream: one holder reads every row). A column that is not numeric is refused with
its name before any pass; an empty value (null) is refused in the pass that meets it, before any noise is drawn.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ddppm.core.errors import ConfigError, DataError
from ddppm.release.rows import BLOCK_ROWS, RowBlocks
from ddppm.release.user_files import separator

PARQUET = (".parquet", ".pq")


def file_blocks(path: Path, batch_rows: int = BLOCK_ROWS) -> RowBlocks:
    """The records of the file or folder ``path`` as :class:`~ddppm.release.rows.RowBlocks` (module docstring).

    Read synchronously, a batch at a time, a file after another (``ParquetFile.iter_batches``, ``pyarrow.csv``'s
    streaming reader): ``pyarrow.dataset``'s read-ahead and pre-buffering held 3.5 GB at 10⁸ × 10 while the fit
    worked on each batch; this holds one row group (measured peak 0.3 GB for reading alone)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix in PARQUET)
        if not files:
            raise DataError(f"data: the folder {path} holds no Parquet file (*.parquet)")
    elif not path.is_file():
        raise DataError(f"data: {path} is not a file or a folder")
    elif path.suffix in PARQUET or path.suffix == ".csv":
        files = [path]
    else:
        raise ConfigError(f"data: {path.name} is not a Parquet (.parquet) or CSV (.csv) file, nor a folder of Parquet "
                          "files")  # fmt: skip
    try:
        if path.suffix == ".csv":
            schemas, n = [(path, _csv_reader(path, batch_rows).schema)], None
        else:
            metadata = [pq.read_metadata(f) for f in files]
            schemas = [(f, m.schema.to_arrow_schema()) for f, m in zip(files, metadata, strict=True)]
            n = sum(m.num_rows for m in metadata)
    except (pa.ArrowInvalid, OSError) as error:
        raise DataError(f"data: {path.name} cannot be read ({error})") from None
    schema = schemas[0][1]
    columns = [field.name for field in schema]
    for f, other in schemas:  # every file, not only the first: a later file's text or dates would be read as numbers
        if other.names != schema.names:
            raise DataError(f"data: {f.name} has the columns {other.names}, {files[0].name} has {schema.names}: the "
                            "files of one data set share their columns")  # fmt: skip
        text = [c.name for c in other if not (pa.types.is_integer(c.type) or pa.types.is_floating(c.type)
                                              or pa.types.is_boolean(c.type) or pa.types.is_null(c.type))]  # fmt: skip
        if text:
            raise DataError(f"data: the columns {text} of {f.name} are not numeric; drop them, or encode them as "
                            "numbers with declared bounds")  # fmt: skip

    def batches() -> Iterator[np.ndarray]:
        try:
            for f in files:
                if f.suffix == ".csv":
                    reader: Any = _csv_reader(f, batch_rows)
                else:
                    reader = pq.ParquetFile(f, pre_buffer=False).iter_batches(batch_size=batch_rows, columns=columns)
                for batch in reader:
                    yield as_rows(batch, f.name)
        except (pa.ArrowInvalid, OSError) as error:
            raise DataError(f"data: {path.name} cannot be read ({error})") from None

    blocks = RowBlocks(batches, f"data {path.name}", n, columns)
    if n is not None:
        blocks._d = len(columns)
    return blocks


def _csv_reader(path: Path, batch_rows: int) -> Any:
    """``pyarrow.csv``'s streaming reader of ``path`` (blocks of about ``batch_rows`` rows of 16 numbers), with the
    separator ``ddppm fit`` detects (:func:`~ddppm.release.user_files.separator`) and every column read as float64:
    types guessed from the first block would refuse a later ``1.5`` in a column of whole numbers."""
    import csv

    import pyarrow as pa
    import pyarrow.csv as pcsv

    delimiter = separator(path)
    with open(path, encoding="utf-8-sig", errors="replace", newline="") as handle:
        header = next(csv.reader(handle, delimiter=delimiter), [])
    as_float = pcsv.ConvertOptions(column_types={c: pa.float64() for c in header})
    return pcsv.open_csv(path, read_options=pcsv.ReadOptions(block_size=max(batch_rows * 16 * 8, 1 << 20)),
                         parse_options=pcsv.ParseOptions(delimiter=delimiter), convert_options=as_float)  # fmt: skip


def as_rows(batch: object, name: str) -> np.ndarray:
    """A record batch as a float64 array (rows × columns); a null is refused, naming its column."""
    out = np.empty((batch.num_rows, batch.num_columns))
    for j, column in enumerate(batch.columns):
        if column.null_count:
            raise DataError(f"data: column {batch.schema.field(j).name!r} of {name} has empty values; a private PCA "
                            "needs every value (impute them with public rules first)")  # fmt: skip
        try:
            out[:, j] = column.to_numpy(zero_copy_only=False)
        except (TypeError, ValueError) as error:
            raise DataError(f"data: column {batch.schema.field(j).name!r} of {name} is not numeric ({error})") from None
    return out
