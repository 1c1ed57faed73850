"""The experiment registry's lazy lookup (issue 49, "a cheap start"): ``get_experiment(name)`` imports only the
entry that defines ``name`` (found by its ``name = "<name>"`` line), never every experiment."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ddppm.core.errors import ConfigError
from ddppm.core.registry import entries_naming
from ddppm.experiments import available_experiments, get_experiment
from ddppm.experiments.base import DISCOVERED_PACKAGE
from ddppm.pipeline.code import experiment_module


def test_every_experiment_is_found_by_its_name_line() -> None:
    missing = [
        f'{name!r}: write `name = "{name}"` as a literal class attribute in {experiment_module(name)}'
        for name in available_experiments()
        if experiment_module(name) not in entries_naming(DISCOVERED_PACKAGE, name)
    ]
    assert not missing, "get_experiment finds these only by importing every experiment:\n" + "\n".join(missing)


def test_get_experiment_imports_only_its_entry_in_a_fresh_interpreter() -> None:
    """Every lookup is answered from the entry found, never by full discovery (which is made to fail here); one
    lookup imports its own experiment and no other."""
    names = sorted(available_experiments())
    code = (
        "import json, sys\n"
        "import ddppm.experiments.base as base\n"
        "def fail(*a, **k): raise AssertionError('full discovery')\n"
        "base.available_experiments = fail\n"
        "first = base.get_experiment(json.loads(sys.argv[1])[0])\n"
        "alone = sorted(n for n in base._REGISTRY)\n"
        "found = {n: type(base.get_experiment(n)).__module__ for n in json.loads(sys.argv[1])}\n"
        "print(json.dumps({'alone': alone, 'found': found}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, json.dumps(names)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["alone"] == [names[0]]
    assert result["found"] == {name: type(get_experiment(name)).__module__ for name in names}


def test_an_unknown_experiment_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown experiment 'no_such_experiment'"):
        get_experiment("no_such_experiment")
