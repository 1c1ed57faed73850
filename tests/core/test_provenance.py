"""What a job's code hash covers (ddppm.core.provenance, ddppm.pipeline.code), and the locked environment.

The end-to-end check (an edit to a discovered module reruns exactly its rules' jobs and their dependents) is in
tests/workflow/test_workflow.py; these tests check the closure itself, without Snakemake.
"""

from __future__ import annotations

import ast
import re
from importlib.metadata import version
from pathlib import Path

import pytest

from ddppm.core.provenance import (
    PACKAGE_DIR,
    RECORDED_DISTRIBUTIONS,
    code_files,
    discovered_package,
    environment,
    freeze_uses,
    package_entries,
)
from ddppm.methods.base import DISCOVERED_PACKAGE as METHODS
from ddppm.methods.base import method_module
from ddppm.pipeline.code import experiment_module, job_code_version

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "workflow" / "scripts"
LOCK = ROOT / "requirements" / "ddppm.lock"


def _relative(paths) -> set[str]:
    return {str(p.relative_to(PACKAGE_DIR)) for p in paths if p.is_relative_to(PACKAGE_DIR)}


def _calls_discovery(path: Path) -> bool:
    """True when the module imports modules by computed name (``pkgutil.iter_modules``, ``import_module``)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr in {"iter_modules", "walk_packages", "import_module"}:
            return True
    return False


def test_every_module_that_discovers_names_its_package():
    """A registry that imports modules by computed name must declare what it discovers, or the code hash of a job
    that reaches it would miss the modules it imports. ``ddppm/__init__.py`` (lazy re-exports of named modules,
    never followed by the hash) is the one exception."""
    discovering = {p for p in PACKAGE_DIR.rglob("*.py") if _calls_discovery(p)} - {PACKAGE_DIR / "__init__.py"}
    assert discovering, "the registries discover their modules: this test must see them"
    undeclared = sorted(str(p.relative_to(PACKAGE_DIR)) for p in discovering if discovered_package(p) is None)
    assert not undeclared, f"modules that discover without DISCOVERED_PACKAGE: {undeclared}"
    assert {discovered_package(p) for p in discovering} == {"ddppm.methods", "ddppm.experiments"}


def test_entries_are_what_the_registry_imports():
    """The entries are exactly the modules ``pkgutil`` finds under the package, less the registry itself."""
    import pkgutil

    import ddppm.methods

    found = {f"ddppm.methods.{m.name}" for m in pkgutil.iter_modules(ddppm.methods.__path__)} - {"ddppm.methods.base"}
    assert set(package_entries(METHODS)) == found
    assert "ddppm.methods.conventional" in found and "ddppm.methods.ddppm" in found


def test_a_script_that_reaches_the_registry_covers_every_method_unless_told():
    """common_runs.py imports no common-task method by name: it reaches them through the registry. Without
    ``uses`` every method's files are in its code; with ``uses`` only the named ones (and what they import)."""
    script = SCRIPTS / "common_runs.py"
    every = _relative(code_files(script))
    assert {"methods/conventional.py", "methods/cape.py", "methods/certified/algorithm.py"} <= every
    only_cape = _relative(code_files(script, uses=freeze_uses({METHODS: ["ddppm.methods.cape"]})))
    assert "methods/cape.py" in only_cape and "methods/conventional.py" not in only_cape
    assert only_cape < every


def test_statically_imported_code_is_kept_whatever_uses_says():
    """``uses`` narrows only what the registry adds: a module the script imports by name stays in."""
    script = SCRIPTS / "ddppm_calibrate.py"
    nothing = _relative(code_files(script, uses=freeze_uses({METHODS: []})))
    assert "accounting/calibration.py" in nothing and "methods/conventional.py" not in nothing


def test_uses_must_name_real_entries():
    with pytest.raises(ValueError, match="not entries"):
        code_files(SCRIPTS / "common_runs.py", uses=freeze_uses({METHODS: ["ddppm.methods.nonexistent"]}))


def test_method_and_experiment_entries():
    assert method_module("conventional") == "ddppm.methods.conventional"
    assert method_module("ddppm") == "ddppm.methods.ddppm"
    assert method_module("ddppm_workshop") == "ddppm.methods.workshop"
    assert experiment_module("common") == "ddppm.experiments.common"


def test_job_code_version_depends_on_the_methods_named():
    scripts = [SCRIPTS / "common_runs.py"]
    a = job_code_version(scripts, ["cape"])
    assert a == job_code_version(scripts, ["cape", "cape"])
    assert a != job_code_version(scripts, ["conventional"])
    assert job_code_version(scripts, None) != a


def _locked_versions() -> dict[str, str]:
    pins = re.findall(r"^([A-Za-z0-9_.-]+)==([^\s;\\]+)", LOCK.read_text(encoding="utf-8"), flags=re.M)
    return {name.lower().replace("_", "-"): pin for name, pin in pins}


def test_installed_versions_equal_the_lock():
    """The provenance every table records names the locked versions: the environment is the lock's."""
    locked = _locked_versions()
    recorded = environment()
    assert set(RECORDED_DISTRIBUTIONS) <= set(locked), "every recorded distribution is pinned"
    for dist in RECORDED_DISTRIBUTIONS:
        assert recorded[dist] == locked[dist] == version(dist), dist


def test_lock_has_hashes_for_every_pin():
    text = LOCK.read_text(encoding="utf-8")
    blocks = re.split(r"\n(?=[A-Za-z0-9_.-]+==)", text)
    pinned = [b for b in blocks if re.match(r"[A-Za-z0-9_.-]+==", b)]
    entries = [re.match(r"([A-Za-z0-9_.-]+)==[^\s;\\]+( ; [^\\\n]+)?", b).groups() for b in pinned]
    names = [name for name, _ in entries]
    assert len({name.lower() for name in names}) == len(_locked_versions()) > 50
    # A name pinned twice is pinned per Python version (an environment marker on each), never twice for one.
    assert len(set(entries)) == len(entries) and all(marker for name, marker in entries if names.count(name) > 1)
    assert all("--hash=sha256:" in b for b in pinned)
