"""Tests of ddppm.data.local_file: the user's own CSV, TSV or Parquet file as a data set (source ``file``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ddppm.core.errors import ConfigError, DataError
from ddppm.data import load_dataset
from ddppm.data.local_file import file_sha256, file_shape, read_local_file
from ddppm.data.public_prep import prepare_public, public_bounds

KEY = "dataset_options.mine"
BOUNDS = {"kind": "declared", "source": "the sensors' ranges", "features": [[0, 10], [-5, 5], [0, 1]]}


def _records(n: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"id": np.arange(n), "a": rng.uniform(0, 10, n), "b": rng.normal(0, 2, n),
                         "c": rng.uniform(0, 1, n), "label": rng.choice(["x", "y"], n)})  # fmt: skip


def _load(path: Path, **options):
    return load_dataset("mine", source="file", path=str(path), **options)


@pytest.mark.parametrize("fmt", ["csv", "tsv", "parquet"])
def test_a_file_loads_with_its_shape_and_its_bounds(tmp_path: Path, fmt: str) -> None:
    frame = _records()
    path = tmp_path / f"mine.{fmt}"
    if fmt == "parquet":
        frame.to_parquet(path)
    else:
        frame.to_csv(path, index=False, sep="," if fmt == "csv" else "\t")
    ds = _load(path, columns=["a", "b", "c"])
    np.testing.assert_allclose(ds.matrix, frame[["a", "b", "c"]].to_numpy(), rtol=1e-15)
    assert ds.shape == (40, 3) == file_shape(path, {"columns": ["a", "b", "c"]}, KEY)
    assert ds.meta["source"] == "file" and ds.meta["label"] == "mine" and ds.meta["file_sha256"] == file_sha256(path)
    bounds = public_bounds("mine", ds.shape[1], BOUNDS)
    np.testing.assert_array_equal(bounds.lower, [0, -5, 0])
    assert bounds.kind == "declared"
    rows = prepare_public(ds.matrix, bounds)  # values outside [-5, 5] are clipped: every row in the unit ball
    assert np.linalg.norm(rows, axis=1).max() <= 1 + 1e-12


def test_columns_by_position_drop_columns_and_no_header(tmp_path: Path) -> None:
    path = tmp_path / "plain.csv"
    path.write_text("1,2,3,9\n4,5,6,8\n7,8,9,7\n")
    assert read_local_file(path, {}, KEY).shape == (3, 4)  # no header: the first line is a record
    np.testing.assert_array_equal(read_local_file(path, {"drop_columns": [3]}, KEY)[:, -1], [3, 6, 9])
    np.testing.assert_array_equal(read_local_file(path, {"columns": [2, 0]}, KEY)[0], [3, 1])
    by_name = tmp_path / "named.csv"
    _records(5).to_csv(by_name, index=False)
    assert read_local_file(by_name, {"drop_columns": ["id", "label"]}, KEY).shape == (5, 3)
    assert file_shape(by_name, {"drop_columns": ["id", "label"]}, KEY) == (5, 3)


@pytest.mark.parametrize(
    "text, options, error, message",
    [
        ("a,b\n1,2\n3,x\n4,5\n", {}, DataError, r"mine\.csv.*options\.mine\.path.*line 3, column 'b': 'x' is not"),
        ("a,b\n1,2\n3,\n4,5\n", {}, DataError, r"line 3, column 'b': '' is missing.*does not impute"),
        ("a,b\n1,2\nNaN,3\n4,5\n", {}, DataError, r"line 3, column 'a': 'NaN' is missing, NaN or infinite"),
        ("a,b\n1,2\n3,inf\n", {}, DataError, r"column 'b': 'inf' is missing, NaN or infinite"),
        ("a,b\n1,2\n", {}, DataError, r"has 1 data row; a data set needs at least 2 rows"),
        ("a,b\n1,2\n3,2\n", {}, DataError, r"column\(s\) \['b'\] hold one value in every row \(2 in 'b'\)"),
        ("a,b\n1,2\n3,4\n", {"columns": ["a", "z"]}, ConfigError, r"dataset_options\.mine\.columns: .* no column 'z'"),
        ("a,b\n1,2\n3,4\n", {"drop_columns": [5]}, ConfigError, r"dataset_options\.mine\.drop_columns: position 5"),
        ("a,b\n1,2\n3,4\n", {"drop_columns": ["a", "b"]}, ConfigError, r"no column of .* is left"),
    ],
)
def test_a_bad_file_names_the_file_the_cell_and_the_key(tmp_path, text, options, error, message) -> None:
    path = tmp_path / "mine.csv"
    path.write_text(text)
    with pytest.raises(error, match=message):
        _load(path, **options)


def test_a_bad_parquet_cell_names_its_row(tmp_path: Path) -> None:
    path = tmp_path / "mine.parquet"
    pd.DataFrame({"a": [1.0, np.nan, 3.0], "b": ["1", "2", "three"]}).to_parquet(path)
    with pytest.raises(DataError, match=r"row 1, column 'a': nan is missing"):
        _load(path)
    with pytest.raises(DataError, match=r"row 2, column 'b': 'three' is not a number"):
        _load(path, columns=["b"])
    with pytest.raises(ConfigError, match=r"dataset_options\.mine\.delimiter: does nothing for a Parquet file"):
        _load(path, delimiter=";")


def test_a_missing_or_unknown_file_names_the_key(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"dataset_options\.mine\.path: no file at .*relative to the directory"):
        _load(tmp_path / "nowhere.csv")
    (tmp_path / "mine.xlsx").write_text("a\n1\n")
    with pytest.raises(ConfigError, match=r"dataset_options\.mine\.path: .* is not a CSV, TSV or Parquet file"):
        _load(tmp_path / "mine.xlsx")
    with pytest.raises(ConfigError, match=r"dataset_options\.mine\.path: source 'file' needs"):
        load_dataset("mine", source="file")
    with pytest.raises(ConfigError, match=r"dataset_options\.mine\.url: does nothing for source 'file'"):
        _load(tmp_path / "mine.xlsx", url="https://example.org")


def test_an_unknown_name_without_a_file_says_how_to_add_one() -> None:
    with pytest.raises(DataError, match=r"unknown dataset 'mine'.*`dataset_options\.mine`: source file, path"):
        load_dataset("mine")


def test_the_bounds_must_match_the_columns(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"dataset_options\.mine\.public_bounds\.features: 3 pairs for 4 features"):
        public_bounds("mine", 4, BOUNDS)
    with pytest.raises(ConfigError, match=r"dataset_options\.mine\.public_bounds: 'mine' has no public bounds"):
        public_bounds("mine", 3)
