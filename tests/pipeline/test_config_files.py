"""Tests of ddppm.pipeline.config for a data set from the user's own file (``dataset_options.<name>.source: file``):
a new name declared by its file is accepted everywhere a data set is named, an unknown one is not, and a bad
declaration stops the validation (before any job) naming the key."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from ddppm.config import validate_config
from ddppm.core.errors import ConfigError
from ddppm.core.schema import merge
from ddppm.pipeline.config import dataset_config, dataset_files, dataset_rows, job_params, known_datasets
from tests.conftest import REPO, TINY

BOUNDS = {"kind": "declared", "source": "the instrument's range", "all_features": [-3, 3]}


@pytest.fixture(scope="module")
def base() -> dict:
    """config.yaml with the tiny config merged over it, as `snakemake --configfile tests/config/tiny.yaml` reads it."""
    return merge(*(yaml.safe_load((REPO / name).read_text()) for name in ("config.yaml", TINY)))


@pytest.fixture
def user_csv(tmp_path: Path) -> Path:
    path = tmp_path / "mine.csv"
    pd.DataFrame(np.random.default_rng(0).normal(size=(300, 5)), columns=list("abcde")).to_csv(path, index=False)
    return path


def _with_file(base: dict, path: Path, **entry) -> dict:
    config = copy.deepcopy(base)
    config.setdefault("dataset_options", {})["mine"] = {"source": "file", "path": str(path), **entry}
    config.setdefault("common", {})["datasets"] = ["wine", "mine"]
    return config


def test_a_new_name_declared_by_its_file_is_accepted(base, user_csv) -> None:
    config = validate_config(_with_file(base, user_csv, public_bounds=BOUNDS, normalization="standardize"))
    assert "mine" in known_datasets(config) and "mine" in config["common"]["datasets"]
    assert dataset_files(config, ["wine", "mine", "mine"]) == [str(user_csv)]
    assert dataset_rows(config, "mine") == 300
    loader = dataset_config(config, "mine")["dataset"]
    assert loader["source"] == "file" and loader["public_bounds"] == BOUNDS
    assert job_params(config, "mine", ("dataset",))["dataset"]["path"] == str(user_csv)  # no sha256 anywhere


def test_a_file_can_also_run_in_the_journal_figures(base, user_csv) -> None:
    config = _with_file(base, user_csv, public_bounds=BOUNDS)
    config["datasets"] = ["wine", "mine"]
    config["delta_limits"]["mine"] = list(config["delta_limits"]["wine"])
    assert validate_config(config)["datasets"] == ["wine", "mine"]


def test_an_unknown_name_is_rejected_with_the_way_to_add_it(base) -> None:
    config = copy.deepcopy(base)
    config.setdefault("common", {})["datasets"] = ["wine", "mine"]
    with pytest.raises(ConfigError, match=r"common\.datasets: 'mine': unknown dataset.*`dataset_options\.mine` with "
                                          r"`source: file`, `path` and `public_bounds`"):  # fmt: skip
        validate_config(config)
    config = copy.deepcopy(base)
    config["datasets"] = ["wine", "mine"]
    with pytest.raises(ConfigError, match=r"datasets: 'mine': unknown dataset"):
        validate_config(config)
    config = copy.deepcopy(base)
    config.setdefault("dataset_options", {})["mine"] = {"source": "url", "url": "https://example.org/x.csv"}
    with pytest.raises(ConfigError, match=r"dataset_options\.mine: unknown dataset"):
        validate_config(config)


@pytest.mark.parametrize(
    "entry, message",
    [
        ({}, r"dataset_options\.mine\.public_bounds: the file .* \(300 rows, 5 columns\) has no public bounds"),
        (
            {"public_bounds": {**{k: v for k, v in BOUNDS.items() if k != "all_features"}, "features": [[0, 1]] * 4}},
            r"dataset_options\.mine\.public_bounds\.features: 4 pairs for 5 features.*has 5 columns as read",
        ),
        (
            {"public_bounds": BOUNDS, "columns": ["a", "b"], "drop_columns": ["b"], "url": "https://example.org"},
            r"dataset_options\.mine\.url: does nothing for mine with source 'file'",
        ),
        ({"public_bounds": BOUNDS, "columns": ["a", "zz"]}, r"dataset_options\.mine\.columns: .* no column 'zz'"),
        ({"public_bounds": BOUNDS, "normalization": "sphere"}, r"dataset_options\.mine\.normalization: 'sphere'"),
    ],
)
def test_a_bad_file_entry_stops_before_any_job(base, user_csv, entry, message) -> None:
    with pytest.raises(ConfigError, match=message):
        validate_config(_with_file(base, user_csv, **entry))


def test_a_name_must_be_a_path_segment(base, user_csv) -> None:
    config = _with_file(base, user_csv, public_bounds=BOUNDS)
    config["dataset_options"]["my data/1"] = config["dataset_options"].pop("mine")
    config["common"]["datasets"] = ["wine", "my data/1"]
    with pytest.raises(ConfigError, match=r"dataset_options\.my data/1: a data set's name is part of file paths"):
        validate_config(config)


def test_a_missing_file_or_too_few_rows_stop_before_any_job(base, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"dataset_options\.mine\.path: no file at"):
        validate_config(_with_file(base, tmp_path / "nowhere.csv", public_bounds=BOUNDS))
    small = tmp_path / "small.parquet"
    pd.DataFrame({"a": [0.1, 0.2, 0.3], "b": [1.0, 2.0, 3.0]}).to_parquet(small)
    config = _with_file(base, small, public_bounds=BOUNDS, partition={"m": 4})
    with pytest.raises(ConfigError, match=r"partition\.m = 4 agents but mine has 3 rows"):
        validate_config(config)


def test_the_documented_entries_validate(base, tmp_path: Path) -> None:
    """The README's one-line entry and docs/common_task.md's ("Your own data"), with their file in place."""
    import re

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    inline = re.search(r"`(dataset_options:\s*\{mine:.*?\}\}\})`", readme, flags=re.S).group(1)
    docs = (REPO / "docs" / "common_task.md").read_text(encoding="utf-8").split("## Your own data")[1]
    block = docs.split("```yaml\n")[1].split("```")[0]
    for snippet, columns in ((inline, ["x"]), (block, ["id", "t", "h", "load"])):
        entry = yaml.safe_load(snippet)
        path = tmp_path / Path(entry["dataset_options"]["mine"]["path"]).name
        rows = np.abs(np.random.default_rng(1).normal(size=(50, len(columns)))) * 5
        pd.DataFrame(rows, columns=columns).to_csv(path, index=False)
        entry["dataset_options"]["mine"]["path"] = str(path)
        config = copy.deepcopy(base)
        config["dataset_options"]["mine"] = entry["dataset_options"]["mine"]
        config["common"]["datasets"] = entry.get("common", {}).get("datasets", ["wine", "mine"])
        assert "mine" in validate_config(config)["common"]["datasets"]


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "content, message",
    [
        ("a,b,c\n1,2,3\n4,,6\n7,8,9\n", r"mine\.csv.*line 3, column 'b': .* is missing, NaN or infinite"),
        ("a,b,c\n1,2,3\n4,nan,6\n7,8,9\n", r"line 3, column 'b': .* is missing, NaN or infinite"),
        ("a,b,c\n1,2,3\n4,inf,6\n7,8,9\n", r"line 3, column 'b': 'inf' is missing, NaN or infinite"),
        ("a,b,c\n1,2,3\n4,red,6\n7,8,9\n", r"line 3, column 'b': 'red' is not a number.*drop_columns"),
        ("a,b,c\n1,5,3\n4,5,6\n7,5,9\n", r"column\(s\) \['b'\] hold one value in every row .*drop_columns: \['b'\]"),
        ("a,b,c\n", r"has no data rows \(only a header line\)"),
        ("a,b,c\n1,2,3\n", r"has 1 data row; a data set needs at least 2"),
    ],
)
def test_a_bad_file_stops_the_dry_run_naming_file_column_and_fix(base, tmp_path: Path, content, message) -> None:
    """Every check of a file's contents runs in the config's validation (the dry run), before any job: a missing,
    NaN or infinite cell, text, a constant column, a header without rows, one row."""
    path = _write(tmp_path / "mine.csv", content)
    with pytest.raises(ConfigError, match=message):
        validate_config(_with_file(base, path, public_bounds=BOUNDS, partition={"m": 2}))


def test_reversed_bounds_name_the_feature_and_its_column(base, user_csv) -> None:
    bounds = {"kind": "declared", "source": "a test", "features": [[0, 1], [0, 1], [5, 2], [0, 1], [0, 1]]}
    with pytest.raises(ConfigError, match=r"public_bounds\.features\[2\]: lower 5 is not below upper 2 .*column 'c'"):
        validate_config(_with_file(base, user_csv, public_bounds=bounds))


def test_a_small_data_set_gets_a_note_on_what_it_supports(base, tmp_path: Path) -> None:
    """Twenty rows: the config validates, and one note names n, the agents and the advisor's command for the shape."""
    from ddppm.config import config_notes

    rows = np.random.default_rng(2).uniform(0, 10, (20, 3))
    path = tmp_path / "few.csv"
    pd.DataFrame(rows, columns=["x", "y", "z"]).to_csv(path, index=False)
    config = validate_config(_with_file(base, path, public_bounds={**BOUNDS, "all_features": [0, 10]}))
    notes = [n for n in config_notes(config) if n.startswith("mine has only")]
    assert len(notes) == 1 and "n = 20 rows over m = 4 agents" in notes[0]
    assert "ddppm advise --n 20 --d 3 --m 4" in notes[0]
