"""``ddppm agreement`` and ``ddppm party`` (ddppm.federation.cli): the agreement written from the command line is
the one the API builds; bad arguments and a party's bad rows stop with exit 2 and one message, before anything
connects or is drawn. (A whole run through these commands is docs/federation.md's walk-through; the processes
themselves are tested in test_flower.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ddppm.cli import main
from ddppm.federation.agreement import Agreement
from tests.federation.conftest import SIZES, split


@pytest.fixture
def files(tmp_path: Path, wine) -> Path:
    for j, rows in enumerate(split(wine)):
        pd.DataFrame(rows, columns=[f"x{i}" for i in range(13)]).to_csv(tmp_path / f"party{j}.csv", index=False)
    (tmp_path / "bounds.yaml").write_text("source: test, a wide box\nall_features: [-50, 2000]\n")
    return tmp_path


def _agreement(folder: Path, *extra: str) -> int:
    return main(["agreement", "--out", str(folder / "agreement.json"), "--bounds", str(folder / "bounds.yaml"),
                 "--k", "2", "--eps", "5", "--delta", "1e-6", "--sizes", "60,60,58", *extra])  # fmt: skip


def test_the_agreement_command_writes_the_agreement_the_api_builds(files):
    assert _agreement(files, "--method", "cape", "--trust", "secure_aggregation", "--seed", "3") == 0
    written = Agreement.from_dict(json.loads((files / "agreement.json").read_text()))
    bounds = {"source": "test, a wide box", "all_features": [-50, 2000]}
    assert written == Agreement(2, 5.0, 1e-6, bounds, SIZES, "cape", trust="secure_aggregation", seed=3)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--method", "ldppca_gaussian"], "no federated protocol yet"),
        (["--method", "nope"], "is not a method"),
        (["--method", "cape"], "needs trust 'secure_aggregation'"),
        (["--method", "conventional", "--sizes", "60;60"], "--sizes"),
    ],
)
def test_a_bad_agreement_is_refused_and_nothing_written(files, capsys, extra, message):
    assert _agreement(files, *extra) == 2
    assert message in capsys.readouterr().err and not (files / "agreement.json").exists()


def test_a_party_checks_its_rows_before_it_connects(files, capsys):
    assert _agreement(files, "--method", "conventional") == 0
    rows = pd.read_csv(files / "party1.csv")
    rows.iloc[3, 2] = np.nan
    rows.to_csv(files / "party1.csv", index=False)
    party = ["party", str(files / "party1.csv"), "--agreement", str(files / "agreement.json"), "--index", "1",
             "--coordinator", "127.0.0.1:1", "--insecure"]  # fmt: skip
    assert main(party) == 2
    assert "empty, NaN or infinite" in capsys.readouterr().err
    party[1], party[5] = str(files / "party0.csv"), "2"
    assert main(party) == 2  # party 0's 60 rows are not party 2's 58
    assert "the agreement says 58" in capsys.readouterr().err
    assert main(["party", str(files / "party0.csv"), "--agreement", str(files / "agreement.json"), "--index", "0",
                 "--coordinator", "127.0.0.1:1"]) == 2  # fmt: skip
    assert "--root-certificates and --key" in capsys.readouterr().err
