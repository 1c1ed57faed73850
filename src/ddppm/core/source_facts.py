"""What a source file imports, which data files it names and which package it discovers: read from its syntax tree
once, and remembered on disk by the file's content.

:mod:`ddppm.core.provenance` needs these facts for every module a job's code reaches. Parsing the ~190 modules of
the package takes about 1.5 s, paid by every Snakemake process (a dry run, the scheduler, each Slurm job) before it
can compute one code hash. The facts depend only on the file's bytes, its module name and the code that reads them
(this module's own source), so they are stored under a hash of those three, in ``$DDPPM_CACHE_DIR`` (default:
``$XDG_CACHE_HOME/ddppm/source-facts`` or ``~/.cache/ddppm/source-facts``). A missing, unreadable or corrupt entry
is parsed again; an unwritable directory only costs the time. Nothing computed depends on the cache: a hit returns
exactly what parsing would (``tests/core/test_source_facts.py``).
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import sys
import tempfile
from contextlib import suppress
from dataclasses import dataclass
from functools import cache
from pathlib import Path

DATA_SUFFIXES = (".yaml", ".yml", ".json")
DISCOVERY_MARKER = "DISCOVERED_PACKAGE"
"""The module-level constant by which a registry module names the package it discovers at run time."""


@dataclass(frozen=True)
class SourceFacts:
    """``imports``: every module an import statement names, anywhere in the file (relative imports resolved;
    ``from pkg import name`` gives ``pkg`` and ``pkg.name``); ``data_names``: string literals that are bare data
    file names (``*.yaml``, ``*.yml``, ``*.json``, not ``*.schema.yaml``); ``discovered``: the value of a
    module-level ``DISCOVERED_PACKAGE = "..."``, or ``None``."""

    imports: frozenset[str]
    data_names: frozenset[str]
    discovered: str | None


def parse_facts(source: bytes, module: str, is_package: bool) -> SourceFacts:
    """The facts of ``source``, the text of module ``module`` (``is_package``: it is an ``__init__.py``)."""
    tree = ast.parse(source)
    package = module if is_package else module.rpartition(".")[0]
    imports: set[str] = set()
    data_names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base]) if base else ".".join(anchor)
            imports.add(base)
            imports.update(f"{base}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Constant) and _is_data_name(node.value):
            data_names.add(node.value)
    return SourceFacts(frozenset(imports), frozenset(data_names), _discovered(tree))


def _is_data_name(value: object) -> bool:
    return (
        isinstance(value, str)
        and value.endswith(DATA_SUFFIXES)
        and "/" not in value
        and not value.endswith(".schema.yaml")
    )


def _discovered(tree: ast.Module) -> str | None:
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        if (
            any(isinstance(t, ast.Name) and t.id == DISCOVERY_MARKER for t in targets)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    return None


def cache_dir() -> Path:
    """Where facts are remembered: ``$DDPPM_CACHE_DIR``, else the user's cache directory."""
    if os.environ.get("DDPPM_CACHE_DIR"):
        return Path(os.environ["DDPPM_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ddppm" / "source-facts"


@cache
def _reader_version() -> bytes:
    """This module's source and the Python version: a change to either forgets every remembered fact."""
    return Path(__file__).read_bytes() + f"{sys.version_info[0]}.{sys.version_info[1]}".encode()


def source_facts(source: bytes, module: str, is_package: bool) -> SourceFacts:
    """:func:`parse_facts`, remembered on disk under a hash of the source, the module name and the reader."""
    key = hashlib.sha256(_reader_version() + b"\0" + f"{module}:{is_package}".encode() + b"\0" + source).hexdigest()
    entry = cache_dir() / f"{key}.json"
    try:
        stored = json.loads(entry.read_text(encoding="utf-8"))
        return SourceFacts(frozenset(stored["imports"]), frozenset(stored["data_names"]), stored["discovered"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    facts = parse_facts(source, module, is_package)
    _remember(entry, facts)
    return facts


def _remember(entry: Path, facts: SourceFacts) -> None:
    """Write one entry atomically (a temporary file renamed into place); give up silently if the disk says no.
    (Not :func:`ddppm.core.io.write_json_atomic`: that module imports pandas and this one's caller, provenance.)"""
    record = {"imports": sorted(facts.imports), "data_names": sorted(facts.data_names), "discovered": facts.discovered}
    temporary = None
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=entry.parent, suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as f:
            json.dump(record, f)
        os.replace(temporary, entry)
    except OSError:
        if temporary is not None:
            with suppress(OSError):
                os.unlink(temporary)
