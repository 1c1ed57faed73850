"""Provenance: which code made a result, and in which environment.

:func:`code_version` hashes the source of a module and of every ``ddppm`` module it imports, transitively
(found by reading the import statements, not by importing). Rules put it in their ``params``, so editing a
library module reruns exactly the jobs whose code imports it, and nothing else. The package's top-level
``ddppm/__init__.py`` only re-exports the public API lazily and is not followed. Methods found by the
registry at run time are added by the rules (:func:`ddppm.methods.method_module`).

:func:`environment` records the git commit (when there is one) and the versions of Python, numpy, scipy,
pandas and snakemake; :func:`ddppm.core.io.write_parquet` stores it with every table.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import platform
import subprocess
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

PACKAGE = "ddppm"
PACKAGE_DIR = Path(__file__).resolve().parents[1]  # src/ddppm


def module_file(module: str) -> Path | None:
    """Source file of a ``ddppm`` module or package (``None`` if it does not exist)."""
    rel = Path(*module.split(".")[1:])
    for candidate in (PACKAGE_DIR / rel / "__init__.py", (PACKAGE_DIR / rel).with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE_DIR).with_suffix("")
    parts = [PACKAGE, *rel.parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """``ddppm`` modules imported by the file at ``path`` (absolute and relative imports)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = _module_name(path) if path.is_relative_to(PACKAGE_DIR) else ""
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base]) if base else ".".join(anchor)
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)  # `from pkg import module`
    return {m for m in found if m == PACKAGE or m.startswith(PACKAGE + ".")}


def _parents(module: str) -> list[str]:
    """Importing ``a.b.c`` runs ``a.b/__init__`` too (but the top-level ``ddppm/__init__`` is not followed)."""
    parts = module.split(".")
    return [".".join(parts[:k]) for k in range(2, len(parts))]


def code_files(*roots: str | Path) -> list[Path]:
    """Source files of the given modules (dotted names) or scripts (paths) and of every ``ddppm`` module
    they import, transitively."""
    todo: list[Path] = []
    for root in roots:
        path = module_file(root) if isinstance(root, str) and not root.endswith(".py") else Path(root)
        if path is None or not path.is_file():
            raise FileNotFoundError(f"no source for {root!r}")
        todo.append(path.resolve())
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for module in _imports(path):
            for name in [*_parents(module), module]:
                if name == PACKAGE:
                    continue
                found = module_file(name)
                if found is not None and found.resolve() not in seen:
                    todo.append(found.resolve())
    return sorted(seen)


@cache
def code_version(*roots: str | Path) -> str:
    """sha256 (16 hex digits) of the contents of :func:`code_files`, independent of file times.

    Cached per process: a Snakemake run asks for the same few versions once per job."""
    digest = hashlib.sha256()
    for path in code_files(*roots):
        name = path.relative_to(PACKAGE_DIR) if path.is_relative_to(PACKAGE_DIR) else path.name
        digest.update(str(name).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _version(distribution: str) -> str | None:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


@cache
def git_commit(directory: str | None = None) -> str | None:
    """``HEAD`` of the git checkout holding the package (``+dirty`` with uncommitted changes), or ``None``."""
    where = directory or str(PACKAGE_DIR)
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "") if head else None


@cache
def environment() -> dict[str, str | None]:
    """Git commit and the versions of Python, ddppm, numpy, scipy, pandas and snakemake."""
    out: dict[str, str | None] = {"git_commit": git_commit(), "python": platform.python_version()}
    for dist in (PACKAGE, "numpy", "scipy", "pandas", "snakemake"):
        out[dist] = _version(dist) if importlib.util.find_spec(dist.replace("-", "_")) else None
    return out


def provenance_note(config_hash: str) -> str:
    """One line naming what made an output: ``config <hash> · git <commit> · ddppm <version>``."""
    env = environment()
    commit = (env.get("git_commit") or "unknown")[:10]
    return f"config {config_hash} · git {commit} · ddppm {env.get('ddppm') or 'unknown'}"
