"""The start-up benchmark: what it times is a job's start, in a job's environment."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import bench_startup  # noqa: E402

BLAS_VARIABLES = bench_startup.BLAS_VARIABLES


@pytest.fixture
def reloaded(monkeypatch):
    """``reloaded()``: the module imported again under the environment the test set (``JOB_ENVIRONMENT`` is read at
    import); the original environment and module are restored afterwards."""
    yield lambda: importlib.reload(bench_startup)
    monkeypatch.undo()
    importlib.reload(bench_startup)


def test_children_start_with_one_blas_thread_as_the_snakefile_sets(monkeypatch, reloaded):
    """With no BLAS variable set, each timed interpreter gets 1 (the Snakefile's default for a job); the child checks
    its own environment and `timed` exits if the check fails."""
    for variable in BLAS_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    module = reloaded()
    assert {v: module.JOB_ENVIRONMENT[v] for v in BLAS_VARIABLES} == dict.fromkeys(BLAS_VARIABLES, "1")
    check = f"import os; assert all(os.environ[v] == '1' for v in {BLAS_VARIABLES!r})"
    wall, cpu = module.timed(check)
    assert wall > 0 and cpu >= 0


def test_a_choice_of_the_caller_is_kept(monkeypatch, reloaded):
    """As the Snakefile's ``setdefault``: a variable the caller set is passed on unchanged."""
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    assert reloaded().JOB_ENVIRONMENT["OPENBLAS_NUM_THREADS"] == "2"


def test_only_top_level_imports_count_as_the_start(tmp_path):
    """Imports in the module body and a top-level ``try`` are the start; those in a function or a branch are work."""
    script = tmp_path / "script.py"
    script.write_text(
        "import os\ntry:\n    import json\nexcept ImportError:\n    import pickle\n"
        "if True:\n    import csv\ndef f():\n    import re\nfrom pathlib import Path\n",
        encoding="utf-8",
    )
    assert bench_startup.top_level_imports(script) == [
        "import os",
        "import json",
        "import pickle",
        "from pathlib import Path",
    ]
