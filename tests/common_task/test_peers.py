"""The bridge to the peers' own environment (ddppm.common_task.peers, ddppm.common_task.peer_library), checked with a
stand-in ``diffprivlib`` whose PCA is exact or slow, so no real library is needed: the components come back per
point, each run gets its own random state, a point's time budget stops a slow fit and counts it, a larger ε of the
same library and k after a point that ran out of time is not tried (and the findings say so), the runs are in
the common task's format and the summary counts the unfinished fits. A failing peer is an error with its stderr.
The real libraries are checked in tests/common_task/test_peers_samplers.py."""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ddppm.common_task.peer_library import FINISHED, NOT_STARTED, SKIPPED, TIMED_OUT
from ddppm.common_task.peers import (
    PEER_PYTHON,
    check_peer_environment,
    check_peer_python,
    library_seeds,
    peer_fits,
    peer_python,
)
from ddppm.common_task.run import summarise
from ddppm.common_task.task import CommonTask, subspace_error
from ddppm.config import validate_config
from ddppm.core.errors import ConfigError, DDPPMError
from ddppm.core.network import paper_ring_w
from ddppm.core.partition import partition_rows
from ddppm.core.problem import DistributedProblem
from ddppm.experiments.common_peers import not_tried, peer_findings, peer_runs, peer_runs_of_dataset, point_outcomes
from ddppm.methods import get_method

STAND_IN = r'''
import os, time
import numpy as np

class PCA:
    """Exact top-k of XᵀX; records its arguments, as diffprivlib's PCA takes them; sleeps when ε ≥ 100."""
    def __init__(self, n_components, *, epsilon, data_norm, centered, random_state):
        assert data_norm == 1.0 and centered is True and epsilon > 0
        self.k, self.slow = n_components, epsilon >= 100
        with open(os.environ["STAND_IN_LOG"], "a") as log:
            log.write(f"{n_components} {epsilon} {random_state}\n")

    def fit(self, X):
        if self.slow:
            time.sleep(30)
        _, vectors = np.linalg.eigh(X.T @ X)
        self.components_ = vectors[:, ::-1][:, : self.k].T
        return self
'''


@pytest.fixture
def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    package = tmp_path / "diffprivlib"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "models.py").write_text(textwrap.dedent(STAND_IN))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("STAND_IN_LOG", str(tmp_path / "calls.txt"))
    return sys.executable


def _rows(n: int = 40, d: int = 5) -> np.ndarray:
    X = np.random.default_rng(0).standard_normal((n, d)) * np.array([3.0, 2.0, 1.0, 0.5, 0.2])
    return X / np.linalg.norm(X, axis=1).max()


def test_exact_stand_in_gives_zero_error_and_one_fit_per_seed(stand_in: str, tmp_path: Path) -> None:
    X = _rows()
    points = [
        {"library": "diffprivlib", "k": k, "eps": eps, "seeds": [10, 11, 12]} for k in (1, 2) for eps in (0.5, 5.0)
    ]
    got = peer_fits(stand_in, X, points, point_seconds=60)
    for point, fitted in zip(points, got, strict=True):
        assert fitted.V.shape == (3, 5, point["k"]) and (fitted.status == FINISHED).all()
        task = CommonTask(X, (np.arange(40),), point["k"])
        np.testing.assert_allclose(subspace_error(fitted.V, task.V), 0.0, atol=1e-6)  # √(round-off)
        assert fitted.claimed_eps == point["eps"]  # diffprivlib's ε is the replace-one ε it is given
    calls = (tmp_path / "calls.txt").read_text().split("\n")[:-1]
    assert calls[0] == "1 0.01 0"  # the warm-up fit (imports are not a fit's time), then one call per seed
    assert calls[1:] == [f"{p['k']} {p['eps']} {s}" for p in points for s in p["seeds"]]


def test_time_budget_stops_a_slow_fit_and_starts_no_more(stand_in: str) -> None:
    points = [{"library": "diffprivlib", "k": 1, "eps": 100.0, "seeds": [1, 2, 3]},
              {"library": "diffprivlib", "k": 1, "eps": 1.0, "seeds": [4, 5]}]  # fmt: skip
    slow, fast = peer_fits(stand_in, _rows(), points, point_seconds=0.5)
    assert list(slow.status) == [TIMED_OUT, NOT_STARTED, NOT_STARTED]
    assert np.isnan(slow.V).all() and np.isnan(slow.seconds).all()
    assert (fast.status == FINISHED).all(), "the next point gets a budget of its own"


def test_a_budget_too_small_for_a_timer_starts_no_fit(stand_in: str) -> None:
    """Below a millisecond of budget no fit starts (a sub-microsecond timer would disarm, not fire). No fit timed
    out, but the point ran out of time all the same: the larger ε after it is not tried."""
    points = [{"library": "diffprivlib", "k": 1, "eps": eps, "seeds": [1, 2]} for eps in (100.0, 200.0)]
    fitted, larger = peer_fits(stand_in, _rows(), points, point_seconds=1e-7)
    assert list(fitted.status) == [NOT_STARTED, NOT_STARTED]
    assert list(larger.status) == [SKIPPED, SKIPPED]


def test_a_point_out_of_time_skips_the_larger_eps_of_its_library_and_k(stand_in: str, tmp_path: Path) -> None:
    """Once a point of a (library, k) runs out of time, its later points at a larger ε are skipped without a call to
    the library (the stand-in logs every call); another k, and a smaller ε later in the list, are still tried."""
    points = [
        {"library": "diffprivlib", "k": 1, "eps": 1.0, "seeds": [1, 2]},  # finishes
        {"library": "diffprivlib", "k": 1, "eps": 100.0, "seeds": [3, 4]},  # times out
        {"library": "diffprivlib", "k": 1, "eps": 200.0, "seeds": [5, 6]},  # skipped
        {"library": "diffprivlib", "k": 2, "eps": 200.0, "seeds": [7, 8]},  # another k: tried (and times out)
        {"library": "diffprivlib", "k": 1, "eps": 0.5, "seeds": [9, 10]},  # a smaller ε: tried
        {"library": "diffprivlib", "k": 1, "eps": 300.0, "seeds": [11, 12]},  # skipped
    ]
    got = peer_fits(stand_in, _rows(), points, point_seconds=0.5)
    statuses = [list(point.status) for point in got]
    assert statuses == [[FINISHED] * 2, [TIMED_OUT, NOT_STARTED], [SKIPPED] * 2, [TIMED_OUT, NOT_STARTED],
                        [FINISHED] * 2, [SKIPPED] * 2]  # fmt: skip
    for skipped in (got[2], got[5]):
        assert np.isnan(skipped.V).all() and np.isnan(skipped.seconds).all() and not skipped.finished.any()
    assert [point.claimed_eps for point in got] == [p["eps"] for p in points]  # claimed even when not tried
    calls = (tmp_path / "calls.txt").read_text().split("\n")[1:-1]  # after the warm-up fit
    assert calls == ["1 1.0 1", "1 1.0 2", "1 100.0 3", "2 200.0 7", "1 0.5 9", "1 0.5 10"]  # none at 200, 300 for k=1


def test_a_fit_that_swallows_every_exception_is_still_stopped_at_its_deadline(stand_in: str, tmp_path: Path) -> None:
    """A library that catches every exception in a loop cannot keep its fit alive: the fit runs in a child process
    killed at the deadline (nothing is raised inside the library), the point's other fits are not started, and the
    peers' process finishes normally."""
    (tmp_path / "diffprivlib" / "models.py").write_text(
        "import time\nimport numpy as np\nclass PCA:\n    def __init__(self, **kw):\n"
        "        self.slow, self.k = kw['epsilon'] >= 100, kw['n_components']\n"
        "    def fit(self, X):\n        while self.slow:\n            try:\n                time.sleep(1)\n"
        "            except BaseException:\n                pass\n"
        "        self.components_ = np.eye(X.shape[1])[: self.k]\n        return self\n"
    )
    point = {"library": "diffprivlib", "k": 1, "eps": 100.0, "seeds": [1, 2]}
    start = time.monotonic()
    (fitted,) = peer_fits(stand_in, _rows(), [point], point_seconds=0.3)
    assert list(fitted.status) == [TIMED_OUT, NOT_STARTED]
    assert time.monotonic() - start < 20  # killed at its deadline, not by the watchdog's margin


def test_a_crashing_fit_is_an_error_not_a_timeout(stand_in: str, tmp_path: Path) -> None:
    """A library that kills its own process (as a native abort would) is reported, never taken for a timeout."""
    (tmp_path / "diffprivlib" / "models.py").write_text(
        "import os\nclass PCA:\n    def __init__(self, **kw):\n        self.crash = kw['epsilon'] >= 100\n"
        "    def fit(self, X):\n        if self.crash:\n            os.abort()\n"
        "        self.components_ = X[:1]\n        return self\n"
    )
    point = {"library": "diffprivlib", "k": 1, "eps": 100.0, "seeds": [1]}
    with pytest.raises(DDPPMError, match="died without a result"):
        peer_fits(stand_in, _rows(), [point], point_seconds=30)


def test_peer_runs_are_the_common_task_format_and_summary_counts_unfinished(stand_in: str, tmp_path: Path) -> None:
    X = _rows()
    tasks = [CommonTask(X, (np.arange(20), np.arange(20, 40)), 1)]
    methods = {"diffprivlib_pca": get_method("diffprivlib_pca")}
    runs = peer_runs(tasks, methods, [1.0, 100.0], 1e-5, 3, 7, 0.5, {"adjacency": "replace_one"}, "toy", stand_in)
    assert list(runs["method"].unique()) == ["diffprivlib_pca"] and set(runs["privacy_column"]) == {"claimed"}
    fast, slow = runs[runs["eps"] == 1.0], runs[runs["eps"] == 100.0]
    assert fast["finished"].all() and np.allclose(fast["error"], 0.0, atol=1e-6)
    assert not slow["finished"].any() and slow["error"].isna().all()
    # the paired correct-law draws exist for every run, finished or not, and are those of Amin et al.'s sampler
    assert runs["correct_law_error"].between(0, 1).all()
    summary = summarise(runs).set_index("eps")
    assert summary.loc[1.0, "n_runs"] == 3 and summary.loc[1.0, "n_unfinished"] == 0
    assert summary.loc[100.0, "n_runs"] == 0 and summary.loc[100.0, "n_unfinished"] == 3
    assert np.isnan(summary.loc[100.0, "error_mean"]) and np.isnan(summary.loc[1.0, "delta"])
    # the library got the runs' labelled seeds (a run can be replayed alone): the stand-in logged them
    seeds = library_seeds(7, ("toy", 1, "diffprivlib_pca", 1.0), 3)
    calls = (tmp_path / "calls.txt").read_text().split("\n")[1:4]  # after the warm-up fit
    assert calls == [f"1 1.0 {seed}" for seed in seeds] and len(set(seeds)) == 3


def test_runs_summary_findings_and_log_name_a_skipped_point_not_tried(stand_in: str, tmp_path: Path) -> None:
    """From the runs to the findings: the ε are fitted in increasing order whatever the grid's order, the point
    after the one that ran out of time is skipped (no call), and the findings and the log say "not tried", never
    "0 of 3 fits finished" for it; a point tried and finishing none still reads "0 of 3"."""
    X = _rows()
    tasks = [CommonTask(X, (np.arange(20), np.arange(20, 40)), 1)]
    methods = {"diffprivlib_pca": get_method("diffprivlib_pca")}
    options = {"adjacency": "replace_one"}
    runs = peer_runs(tasks, methods, [200.0, 1.0, 100.0], 1e-5, 3, 7, 0.5, options, "toy", stand_in)
    assert list(runs.drop_duplicates("eps")["eps"]) == [1.0, 100.0, 200.0]
    assert not runs.loc[runs["eps"] == 200.0, "finished"].any()
    assert not any(" 200.0 " in call for call in (tmp_path / "calls.txt").read_text().split("\n"))
    summary = summarise(runs)
    assert list(not_tried(summary)) == [False, False, True]
    assert peer_findings(summary)[1] == (
        "diffprivlib_pca on toy, k = 1: at ε = 1 3 of 3 fits finished; at ε = 100 0 of 3 fits finished; "
        "at ε = 200 not tried (ε = 100 ran out of time)."
    )
    assert point_outcomes(runs) == [
        "diffprivlib_pca k=1 eps=1: 3 of 3 fits finished",
        "diffprivlib_pca k=1 eps=100: 0 of 3 fits finished",
        "diffprivlib_pca k=1 eps=200: not tried (a smaller ε ran out of time)",
    ]


def test_findings_quote_the_last_point_with_fits_and_name_the_eps_that_stopped_the_rest() -> None:
    """Per (library, data set, k): the quoted point, each larger ε tried, then the skipped ε at once, after the
    smallest ε that ran out of time (the quoted point itself when it did)."""
    rows = [  # method, k, eps, n_runs, n_unfinished
        ("opendp_pca", 1, 1.0, 20, 0), ("opendp_pca", 1, 2.0, 3, 17), ("opendp_pca", 1, 5.0, 0, 20),
        ("opendp_pca", 1, 10.0, 0, 20), ("opendp_pca", 3, 2.0, 20, 0), ("opendp_pca", 3, 5.0, 9, 11),
        ("opendp_pca", 3, 10.0, 0, 20), ("diffprivlib_pca", 1, 0.5, 20, 0), ("diffprivlib_pca", 1, 1.0, 0, 20),
    ]  # fmt: skip
    summary = pd.DataFrame(
        [
            {
                "setting": "prepared_rows",
                "privacy_column": "claimed",
                "dataset": "wine",
                "method": m,
                "k": k,
                "eps": e,
                "n_runs": n,
                "n_unfinished": u,
                "error_mean": 0.5,
                "correct_law_error_mean": 0.75,
            }
            for m, k, e, n, u in rows
        ]  # fmt: skip
    )
    assert list(not_tried(summary)) == [False, False, True, True, False, False, True, False, False]
    assert peer_findings(summary)[1:] == [
        "opendp_pca on wine, k = 1: at ε = 1 error 0.500 as installed (20 of 20 fits finished in the time budget), "
        "0.750 with the Bingham law and the same ε split; at ε = 2 3 of 20 fits finished; at ε = 5 and 10 not "
        "tried (ε = 2 ran out of time).",
        "opendp_pca on wine, k = 3: at ε = 5 error 0.500 as installed (9 of 20 fits finished in the time budget), "
        "0.750 with the Bingham law and the same ε split; at ε = 10 not tried (ε = 5 ran out of time).",
        "diffprivlib_pca on wine, k = 1: at ε = 0.5 error 0.500 as installed (20 of 20 fits finished in the time "
        "budget), 0.750 with the Bingham law and the same ε split; at ε = 1 0 of 20 fits finished.",
    ]


def test_library_eps_splits_and_the_correct_law_at_the_same_split() -> None:
    diffprivlib, opendp = get_method("diffprivlib_pca"), get_method("opendp_pca")
    # diffprivlib: ε/(k+1) to the eigenvalues and to each vector; OpenDP: ε/2 to the eigenvalues, ε/(2k) each.
    assert diffprivlib.eps_split(6.0, 2) == {"eps_eigenvalues": 2.0, "eps_per_direction": 2.0}
    assert opendp.eps_split(6.0, 3) == {"eps_eigenvalues": 3.0, "eps_per_direction": 1.0}
    assert diffprivlib.correct_law_eps(6.0, 2) == 4.0 and opendp.correct_law_eps(6.0, 3) == 3.0
    # the correct law at the library's split is amin at correct_law_eps: the same β, the same draws
    X = _rows(200)
    task = CommonTask(X, (np.arange(200),), 2)
    rngs = lambda: [np.random.default_rng(s) for s in range(4)]  # noqa: E731
    amin = get_method("amin")
    calibrated = amin.common_calibrate(task, diffprivlib.correct_law_eps(6.0, 2), 1e-5, {"adjacency": "replace_one"})
    np.testing.assert_allclose(
        diffprivlib.correct_law(task, 6.0, rngs()), amin.common_estimate(task, calibrated, rngs(), {})
    )


def test_a_failing_peer_is_an_error_with_its_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # no diffprivlib there
    point = {"library": "diffprivlib", "k": 1, "eps": 1.0, "seeds": [0]}
    with pytest.raises(DDPPMError, match="diffprivlib"):
        peer_fits(sys.executable, np.eye(3), [point])


def test_a_missing_peer_environment_names_the_command_and_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"requirements/install.sh.*common.peers.libraries: \[\]"):
        check_peer_environment(tmp_path / "no" / "python")


def test_the_configured_interpreter_is_the_one_used(stand_in: str, tmp_path: Path) -> None:
    used = tmp_path / "used.txt"
    python = tmp_path / "elsewhere" / "python"
    python.parent.mkdir()
    python.write_text(f'#!/bin/sh\necho "$@" >> "{used}"\nexec "{stand_in}" "$@"\n')
    python.chmod(0o755)
    config = validate_config({"datasets": ["diabetes"], "epsilons": [1], "delta_limits": {"diabetes": [0.1]}})
    section = config["common"]
    assert peer_python(section["peers"]) == PEER_PYTHON  # unset: the checkout's .venv-peers
    section["peers"] = {**section["peers"], "python": str(python), "libraries": ["diffprivlib"], "ranks": [1],
                        "epsilons": [1.0], "runs": 2}  # fmt: skip
    assert check_peer_python(section["peers"]) == python
    problem = DistributedProblem.from_partition(_rows(24), partition_rows(24, 4, seed=0), paper_ring_w(), 3)
    runs = peer_runs_of_dataset(problem, "mine", section)
    assert "peer_library.py" in used.read_text()  # the configured interpreter ran the peers' side
    assert runs["finished"].all() and len(runs) == 2


def test_a_configured_interpreter_that_does_not_exist_is_an_error_naming_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^common\.peers\.python: .*no-python.* is not an executable file"):
        check_peer_python({"python": str(tmp_path / "no-python"), "libraries": ["diffprivlib"]})
