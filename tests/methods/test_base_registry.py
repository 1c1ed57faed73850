"""The method registry's lazy lookup (issue 49, "a cheap start"): ``get_method(name)`` imports only the entry that
defines ``name`` (found by its ``name = "<name>"`` line), never every method, and the order of
``available_methods`` does not depend on what was looked up before."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ddppm.core.errors import ConfigError
from ddppm.core.registry import entries_naming
from ddppm.methods import available_methods, get_method, method_module
from ddppm.methods.base import DISCOVERED_PACKAGE


def _run(code: str) -> object:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_every_method_is_found_by_its_name_line() -> None:
    """Each registered method's entry sets ``name = "<name>"`` literally: ``get_method`` finds it without importing
    every method (a miss is not wrong, only slow: its jobs then import every method at start)."""
    missing = []
    for name, method in available_methods(task=None).items():
        if method_module(name) not in entries_naming(DISCOVERED_PACKAGE, name):
            missing.append(
                f"{name!r} ({type(method).__module__}.{type(method).__name__}): write its name as a literal class "
                f'attribute, `name = "{name}"`, in {method_module(name)} (docs/pipeline.md, "Add a method")'
            )
    assert not missing, "get_method finds these methods only by importing every method:\n" + "\n".join(missing)


def test_get_method_imports_no_other_method_in_a_fresh_interpreter() -> None:
    """Every lookup is answered from the entry found, never by full discovery (which is made to fail here)."""
    names = sorted(available_methods(task=None))
    code = (
        "import json, sys\n"
        "import ddppm.methods.base as base\n"
        "def fail(*a, **k): raise AssertionError('full discovery')\n"
        "base._discover = fail\n"
        "found = {n: base.method_module(n) for n in json.loads(sys.argv[1])}\n"
        "entries = sorted(m for m in sys.modules if m.count('.') == 2 and m.startswith('ddppm.methods.'))\n"
        "print(json.dumps({'found': found, 'entries': entries}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, json.dumps(names)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["found"] == {name: method_module(name) for name in names}
    one = _run(
        "import json, sys\nfrom ddppm.methods import get_method\nget_method('oracle')\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('ddppm.methods.') and m.count('.') == 2)))"
    )
    assert one == ["ddppm.methods.base", "ddppm.methods.oracle"]


def test_the_order_of_available_methods_does_not_depend_on_earlier_lookups() -> None:
    """A fresh full discovery registers in ``pkgutil`` order; after lookups in reverse order the list is the same."""
    fresh = _run(
        "import json\nimport ddppm.methods.base as base\nlisted = list(base.available_methods(task=None))\n"
        "assert listed == list(base._REGISTRY), (listed, list(base._REGISTRY))\nprint(json.dumps(listed))"
    )
    assert fresh == list(available_methods(task=None))
    after = _run(
        "import json\nimport ddppm.methods.base as base\n"
        f"for name in {list(reversed(fresh))!r}: base.get_method(name)\n"
        "print(json.dumps([list(base.available_methods(task=None)), list(base.available_methods())]))"
    )
    assert after == [fresh, list(available_methods())]


def test_an_unknown_method_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown method 'no_such_method'"):
        get_method("no_such_method")
