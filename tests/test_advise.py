"""``ddppm advise`` (ddppm.advise): an answer from public parameters only. It opens no data file (watched with an
audit hook on every file the process opens during the call), and its answer is the method map's at that shape."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ddppm.advise import advise
from ddppm.cli import main
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


def test_the_raw_records_route_is_the_common_tasks(capsys: pytest.CaptureFixture) -> None:
    """Simulation identity: the advisor's raw-records answer is the mean error of the common task's raw-records
    route (public preparation, private standardisation, the method) run on the simulated records draw by draw."""
    import numpy as np

    from ddppm.common_task.preprocessing import PreprocessingPlan
    from ddppm.common_task.raw_records import raw_records_runs
    from ddppm.methods import get_method
    from ddppm.studies.method_map import Shape, raw_shape_records

    members, facts = advise(n=400, d=6, m=4, eps=5.0, delta=1e-5, trust="central", runs_start=6, runs_cap=6,
                            looseness=3.0)  # fmt: skip
    assert facts["scope"] == "raw_records" and "3 times wider" in facts["assumption"]
    best = members.iloc[0]
    shape, errors = Shape(400, 6, 2.0, 4, 1), []
    for draw in range(6):
        records = raw_shape_records(shape, 0, draw, 3.0)
        runs = raw_records_runs(records, [5.0], [1e-5], [1], 1, 1, 0, PreprocessingPlan(),
                                {"adjacency": "replace_one", "iterations": 10}, dataset=f"map/{shape.label}/{draw}",
                                methods={best["method"]: get_method(best["method"])})  # fmt: skip
        errors.append(float(runs.loc[runs["method"] == best["method"], "error"].iloc[0]))
    assert best["error_mean"] == pytest.approx(np.mean(errors), abs=1e-4)
    assert main(["advise", "--n", "400", "--d", "6", "--m", "4", "--eps", "5", "--delta", "1e-5", "--trust",
                 "central", "--runs", "4", "--prepared-rows"]) == 0  # fmt: skip
    assert "Scope: the δ covers rows already in the unit ball" in capsys.readouterr().out
    with pytest.raises(ValueError, match="--looseness"):
        advise(n=400, d=6, m=4, eps=5.0, delta=1e-5, trust="central", looseness=0.5)


def test_simulated_raw_records_and_their_bounds() -> None:
    """At looseness 1 the declared bounds are each feature's mean ± 4 population sd (they hold nearly every value);
    at looseness w they are w times wider and still hold the data's mean."""
    import numpy as np

    from ddppm.studies.method_map import Shape, raw_shape_records

    shape = Shape(20_000, 5, 3.0, 2, 1)
    tight, loose = raw_shape_records(shape, 1, 0, 1.0), raw_shape_records(shape, 1, 0, 4.0)
    np.testing.assert_array_equal(tight.X, loose.X)
    inside = (tight.X >= tight.bounds.lower) & (tight.X <= tight.bounds.upper)
    assert inside.mean() > 0.999
    np.testing.assert_allclose(tight.bounds.upper - tight.bounds.lower, 8 * tight.X.std(axis=0), rtol=0.03)
    np.testing.assert_allclose(loose.bounds.upper - loose.bounds.lower, 4 * (tight.bounds.upper - tight.bounds.lower))
    mean = tight.X.mean(axis=0)
    assert ((loose.bounds.lower < mean) & (mean < loose.bounds.upper)).all()


def test_the_answer_gives_every_simulated_methods_mean_error_and_names_the_tie_break() -> None:
    """``mean_errors`` has every usable method's simulated mean error (members or not: ``method="auto"`` reads them
    at the other gaps), the members' equal to their table's; a tie's rendering names the rule that breaks it."""
    from ddppm.methods import common_task_methods
    from ddppm.studies.advisor import render

    members, facts = advise(n=400, d=6, m=4, eps=5.0, delta=1e-5, trust="secure_aggregation", runs_start=6,
                            runs_cap=6)  # fmt: skip
    usable = {name for name, m in common_task_methods().items() if m.trust_model != "central"}
    assert set(facts["mean_errors"]) == usable and len(members) < len(usable)
    for row in members.itertuples():
        assert facts["mean_errors"][row.method] == pytest.approx(row.error_mean, abs=1e-4)
    assert all(0 <= error <= 1 for error in facts["mean_errors"].values())
    text = render(members, {**facts, "separated": False}, "secure_aggregation", 5.0, 1e-5)
    assert "breaks such a tie by a stated public rule" in text
    assert "stated public rule" not in render(members, {**facts, "separated": True}, "secure_aggregation", 5.0, 1e-5)
