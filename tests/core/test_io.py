"""Tests of ddppm.core.io: Parquet metadata round trip, atomic writes, config hashes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import ddppm.core.errors
from ddppm.core.io import (
    METADATA_KEY,
    atomic_write,
    config_hash,
    read_parquet,
    write_json_atomic,
    write_parquet,
    write_text_atomic,
)


def test_parquet_roundtrip_keeps_data_and_metadata(tmp_path: Path) -> None:
    df = pd.DataFrame({"eps": [1.0, 2.0, 5.0], "err": [0.9, 0.5, 0.1], "method": ["a", "b", "c"]})
    meta = {
        "dataset": "wine",
        "seed": np.int64(7),
        "delta": np.float32(0.25),
        "grid": np.array([[1, 2], [3, 4]]),
        "nested": {"ok": True},
        "package_version": "bogus",
    }
    path = tmp_path / "sub" / "dir" / "out.parquet"
    write_parquet(df, path, meta)
    assert meta["package_version"] == "bogus" and "written_at" not in meta  # caller's dict untouched

    back, got = read_parquet(path)
    pd.testing.assert_frame_equal(back, df)
    assert got["dataset"] == "wine"
    assert got["seed"] == 7 and isinstance(got["seed"], int)
    assert got["delta"] == pytest.approx(0.25)
    assert got["grid"] == [[1, 2], [3, 4]]
    assert got["nested"] == {"ok": True}
    assert got["package_version"] == ddppm.__version__
    assert got["written_at"].endswith("+00:00")
    # stored under the documented schema key, next to pandas' own metadata
    schema_meta = pq.read_schema(path).metadata
    assert METADATA_KEY in schema_meta and b"pandas" in schema_meta
    assert json.loads(schema_meta[METADATA_KEY])["dataset"] == "wine"
    assert [p.name for p in path.parent.iterdir()] == ["out.parquet"]


def test_read_parquet_without_metadata_returns_empty_dict(tmp_path: Path) -> None:
    path = tmp_path / "plain.parquet"
    pd.DataFrame({"x": [1, 2]}).to_parquet(path)
    df, meta = read_parquet(path)
    assert meta == {} and df["x"].tolist() == [1, 2]


def test_read_parquet_missing_file_raises(tmp_path: Path) -> None:
    with pytest.raises(ddppm.core.errors.DataError, match="does not exist"):
        read_parquet(tmp_path / "nope.parquet")


def test_atomic_write_replaces_on_success(tmp_path: Path) -> None:
    target = tmp_path / "a" / "file.txt"
    with atomic_write(target) as tmp:
        assert tmp.parent == target.parent
        assert tmp.name.startswith(".file.txt.tmp-")
        assert not target.exists()
        tmp.write_text("new")
    assert target.read_text() == "new"
    assert [p.name for p in target.parent.iterdir()] == ["file.txt"]


def test_atomic_write_leaves_nothing_when_body_raises(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    with pytest.raises(RuntimeError, match="boom"), atomic_write(target) as tmp:
        tmp.write_text("partial")
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []

    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_write(target) as tmp:
        tmp.write_text("partial")
        raise RuntimeError("boom")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["file.txt"]


def test_text_and_json_helpers(tmp_path: Path) -> None:
    write_text_atomic(tmp_path / "t.txt", "hello\n")
    assert (tmp_path / "t.txt").read_text() == "hello\n"
    write_json_atomic(tmp_path / "j.json", {"b": np.arange(3), "a": np.float64(0.5)})
    assert json.loads((tmp_path / "j.json").read_text()) == {"a": 0.5, "b": [0, 1, 2]}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j.json", "t.txt"]


def test_config_hash_stable_under_key_order() -> None:
    a = {"eps": [1, 2, 5], "network": {"topology": "ring", "m": 4}, "seed": 0}
    b = {"seed": 0, "network": {"m": 4, "topology": "ring"}, "eps": [1, 2, 5]}
    h = config_hash(a)
    assert h == config_hash(b)
    assert len(h) == 16 and all(c in "0123456789abcdef" for c in h)
    assert config_hash({**a, "seed": 1}) != h
    assert config_hash({"eps": [2, 1, 5]}) != config_hash({"eps": [1, 2, 5]})  # list order matters
    assert config_hash({"p": Path("x")}) == config_hash({"p": "x"})  # default=str
