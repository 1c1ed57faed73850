"""``ddppm advise`` (ddppm.advise): an answer from public parameters only. It opens no data file (watched with an
audit hook on every file the process opens during the call), and its answer is the method map's at that shape."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ddppm.advise import advise, main
from tests.conftest import REPO

DATA_SUFFIXES = (".csv", ".tsv", ".parquet", ".npy", ".npz", ".txt", ".data", ".xlsx", ".gz", ".zip", ".json")
_OPENED: list[str] = []
_WATCHING = [False]


def _watch(event: str, args: tuple) -> None:
    if _WATCHING[0] and event == "open" and args and isinstance(args[0], str | bytes | Path):
        _OPENED.append(str(args[0]))


sys.addaudithook(_watch)


def test_advise_opens_no_data_file(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    import ddppm.data.datasets as datasets

    def forbidden(*args, **kwargs):
        raise AssertionError("the advisor loaded a data set")

    monkeypatch.setattr(datasets, "load_dataset", forbidden)
    _OPENED.clear()
    _WATCHING[0] = True
    try:
        code = main(["advise", "--n", "400", "--d", "6", "--m", "4", "--eps", "2", "--delta", "1e-5",
                     "--trust", "local", "--runs", "8"])  # fmt: skip
    finally:
        _WATCHING[0] = False
    out = capsys.readouterr().out
    assert code == 0
    data_files = [p for p in _OPENED if p.lower().endswith(DATA_SUFFIXES) or "results" in Path(p).parts]
    assert not data_files, f"the advisor opened {data_files}"
    assert "Competitive set" in out and "Assumed: Gaussian rows" in out and "no data file was read" in out


def test_the_answer_is_the_simulated_competitive_set() -> None:
    members, facts = advise(n=400, d=6, m=4, eps=5.0, delta=1e-5, trust="central", runs_start=8, runs_cap=8)
    assert facts["best"] == members.iloc[0]["method"] and facts["runs"] == 8
    assert (members["error_lo"] <= members["error_mean"]).all() and (members["error_mean"] <= members["error_hi"]).all()
    assert (members["floats_per_agent"] > 0).all() and (members["rounds"] >= 1).all()
    assert facts["separated"] == (len(members) == 1)


def test_bad_trust_is_refused() -> None:
    with pytest.raises(ValueError, match="--trust"):
        advise(n=400, d=6, m=4, eps=5.0, delta=1e-5, trust="curator")
    proc = subprocess.run([sys.executable, "-m", "ddppm", "advise", "--n", "10"], capture_output=True, text=True,
                          cwd=REPO)  # fmt: skip
    assert proc.returncode == 2 and "--d" in proc.stderr
