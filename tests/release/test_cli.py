"""``ddppm fit`` (ddppm.release.cli): from the documented CSV and bounds file to a JSON release with the components,
the private mean and scale and the certificate; bad input is refused with nothing written; it reads only the
named files."""

from __future__ import annotations

import builtins
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from sklearn.datasets import load_wine

from ddppm.cli import main
from ddppm.data.public_prep import public_bounds


@pytest.fixture
def wine_files(tmp_path: Path) -> tuple[Path, Path]:
    wine = load_wine(as_frame=True).frame.drop(columns="target")
    wine.loc[7, "alcohol"] = 17.5  # above the declared 8-16 % vol: one value clipped
    wine["hospital"] = np.arange(len(wine)) % 3
    data = tmp_path / "wine.csv"
    wine.to_csv(data, index=False)
    declared = public_bounds("wine", 13)
    features = {c: [float(lo), float(hi)] for c, lo, hi in zip(wine.columns[:13], declared.lower, declared.upper,
                                                                 strict=True)}  # fmt: skip
    bounds = tmp_path / "bounds.yaml"
    bounds.write_text(yaml.safe_dump({"source": declared.source, "kind": declared.kind, "features": features}))
    return data, bounds


def test_fit_writes_the_release(wine_files, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    data, bounds = wine_files
    out = tmp_path / "release.json"
    opened = []
    real_open = builtins.open

    def watched(file, *args, **kwargs):
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", watched)
    code = main(["fit", str(data), "--bounds", str(bounds), "--k", "2", "--eps", "2", "--delta", "1e-5",
                 "--trust", "secure_aggregation", "--method", "ppm_decentralised", "--parties", "hospital",
                 "--out", str(out)])  # fmt: skip
    monkeypatch.undo()
    assert code == 0
    release = json.loads(out.read_text())
    assert len(release["columns"]) == 13 and "hospital" not in release["columns"]
    V = np.asarray(release["components"])
    np.testing.assert_allclose(V @ V.T, np.eye(2), atol=1e-10)
    assert len(release["mean"]) == len(release["scale"]) == 13
    privacy = release["privacy"]
    assert privacy["delta"] <= 1e-5 and privacy["parties"] == 3 and privacy["scope"] == "raw_records"
    assert privacy["check"]["agrees"] and "secure" in privacy["noise"]
    assert "1 value(s) fell outside" in capsys.readouterr().err  # for the data holder only, not in the file
    assert "clipped" not in out.read_text()
    foreign = [f for f in opened if f.endswith((".csv", ".yaml", ".json", ".parquet"))
               and Path(f).resolve() not in {data.resolve(), bounds.resolve()}]  # fmt: skip
    assert not foreign


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda frame: frame.assign(alcohol=frame["alcohol"].astype(str) + "%"), "not numeric"),
        (lambda frame: frame.assign(ash=np.where(np.arange(len(frame)) == 4, np.nan, frame["ash"])), "NaN"),
    ],
)
def test_bad_files_write_nothing(wine_files, tmp_path: Path, capsys, edit, match: str) -> None:
    data, bounds = wine_files
    edit(pd.read_csv(data)).to_csv(data, index=False)
    out = tmp_path / "release.json"
    code = main(["fit", str(data), "--bounds", str(bounds), "--k", "2", "--eps", "1", "--delta", "1e-5",
                 "--parties", "hospital", "--method", "analyze_gauss", "--out", str(out)])  # fmt: skip
    assert code == 2 and not out.exists()
    assert match in capsys.readouterr().err


@pytest.mark.parametrize(
    ("write", "match"),
    [
        (lambda data, bounds: data.write_text(data.read_text().splitlines()[0] + "\n"), "has no records"),
        (lambda data, bounds: data.write_text("\n".join(data.read_text().splitlines()[:2]) + "\n"), "bad input"),
        (lambda data, bounds: bounds.write_text("source: [unclosed\n"), "not valid YAML"),
        (lambda data, bounds: bounds.write_text("source: units\nrow_norm: -1\n"), "row_norm: -1 must be a positive"),
        (lambda data, bounds: bounds.write_text(bounds.read_text() + "all_features: [0, 1]\n"), "not both"),
        (lambda data, bounds: bounds.write_text(bounds.read_text() + "row_norm: 5\n"), "row_norm scales the rows"),
        (lambda data, bounds: bounds.write_text(bounds.read_text() + "Source: lab\n"), "unknown key 'Source'"),
    ],
)
def test_malformed_files_end_in_a_message_not_a_traceback(wine_files, tmp_path: Path, capsys, write, match) -> None:
    data, bounds = wine_files
    write(data, bounds)
    out = tmp_path / "r.json"
    code = main(["fit", str(data), "--bounds", str(bounds), "--k", "1", "--eps", "1", "--delta", "1e-5",
                 "--parties", "hospital", "--method", "analyze_gauss", "--out", str(out)])  # fmt: skip
    assert code == 2 and not out.exists()
    assert match in capsys.readouterr().err


def test_center_only_and_no_standardize_exclude_each_other(wine_files, tmp_path: Path) -> None:
    data, bounds = wine_files
    with pytest.raises(SystemExit):
        main(["fit", str(data), "--bounds", str(bounds), "--k", "1", "--eps", "1", "--delta", "1e-5",
              "--center-only", "--no-standardize", "--out", str(tmp_path / "r.json")])  # fmt: skip


def test_a_bounds_file_missing_a_column_is_named(wine_files, tmp_path: Path, capsys) -> None:
    data, bounds = wine_files
    entry = yaml.safe_load(bounds.read_text())
    del entry["features"]["proline"]
    bounds.write_text(yaml.safe_dump(entry))
    code = main(["fit", str(data), "--bounds", str(bounds), "--k", "1", "--eps", "1", "--delta", "1e-5",
                 "--parties", "hospital", "--out", str(tmp_path / "r.json")])  # fmt: skip
    assert code == 2 and "missing ['proline']" in capsys.readouterr().err


def test_fit_reads_a_parquet_folder_a_batch_at_a_time(wine_files, tmp_path: Path) -> None:
    """A folder of Parquet files, and a CSV with --stream, are released whole (every row, the columns named); a
    party column is refused there (one holder reads every row)."""
    data, bounds = wine_files
    frame = pd.read_csv(data).drop(columns="hospital")
    folder = tmp_path / "wine"
    folder.mkdir()
    for j, start in enumerate(range(0, len(frame), 50)):
        frame.iloc[start : start + 50].to_parquet(folder / f"part-{j}.parquet")
    frame.to_csv(tmp_path / "plain.csv", index=False)
    common = ["--bounds", str(bounds), "--k", "2", "--eps", "3", "--delta", "1e-6", "--method", "analyze_gauss"]
    assert main(["fit", str(folder), *common, "--out", str(tmp_path / "parquet.json")]) == 0
    assert main(["fit", str(tmp_path / "plain.csv"), "--stream", *common, "--out", str(tmp_path / "csv.json")]) == 0
    for name in ("parquet.json", "csv.json"):
        release = json.loads((tmp_path / name).read_text())
        assert release["columns"] == list(frame.columns) and release["privacy"]["n"] == len(frame)
        V = np.asarray(release["components"])
        np.testing.assert_allclose(V @ V.T, np.eye(2), atol=1e-10)
    refused = main(["fit", str(folder), *common, "--parties", "hospital", "--out", str(tmp_path / "no.json")])
    assert refused == 2 and not (tmp_path / "no.json").exists()
