"""Provenance: which code made a result, and in which environment.

:func:`code_version` hashes the source of a module and of every ``ddppm`` module it imports, transitively
(found by reading the import statements, not by importing). Rules put it in their ``params``, so editing a
library module reruns exactly the jobs whose code can reach it, and nothing else. The package's top-level
``ddppm/__init__.py`` only re-exports the public API lazily and is not followed.

A registry reaches code that no import statement names: it imports every module of a package at run time
(``pkgutil``) and hands out what registered there. Such a registry module says so with a module-level constant
``DISCOVERED_PACKAGE = "ddppm.<package>"``; when the closure reaches it, every entry of that package (each module
or sub-package directly under it, with all its files) is part of the code, unless the caller names the entries
its job really uses (``uses``: the methods a job runs, say). A forgotten ``uses`` therefore reruns too much,
never too little; ``tests/core/test_provenance.py`` checks that every module that discovers declares the constant.

:func:`environment` records the git commit (when there is one) and the versions of Python, numpy, scipy,
pandas, pyarrow, matplotlib, scikit-learn, networkx, threadpoolctl and snakemake (each pinned with hashes in
``requirements/ddppm.lock``); :func:`ddppm.core.io.write_parquet` stores it with every table.
"""

from __future__ import annotations

import hashlib
import platform
import subprocess
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from ddppm.core.source_facts import SourceFacts, source_facts

PACKAGE = "ddppm"
PACKAGE_DIR = Path(__file__).resolve().parents[1]  # src/ddppm


@cache
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


@cache
def _facts(path: Path) -> SourceFacts:
    """What the file at ``path`` imports, names and discovers (:mod:`ddppm.core.source_facts`: parsed once per
    content and remembered on disk; a dry run asks for hundreds of job hashes over the same ~190 files)."""
    inside = path.is_relative_to(PACKAGE_DIR)
    return source_facts(_source(path), _module_name(path) if inside else "", inside and path.name == "__init__.py")


@cache
def _imports(path: Path) -> frozenset[str]:
    """``ddppm`` modules imported by the file at ``path`` (absolute and relative imports)."""
    return frozenset(m for m in _facts(path).imports if m == PACKAGE or m.startswith(PACKAGE + "."))


@cache
def _data_files(path: Path) -> frozenset[Path]:
    """Data files beside the module at ``path`` that its source names by a literal file name (e.g. ``ddppm.data.
    specs`` reads ``datasets.yaml``): what the module computes depends on them as on code, so they count. Schemas
    (``*.schema.yaml``) do not: their defaults reach a job through the validated config, its ``params``."""
    names = _facts(path).data_names
    return frozenset((path.parent / name).resolve() for name in names if (path.parent / name).is_file())


def _parents(module: str) -> list[str]:
    """Importing ``a.b.c`` runs ``a.b/__init__`` too (but the top-level ``ddppm/__init__`` is not followed)."""
    parts = module.split(".")
    return [".".join(parts[:k]) for k in range(2, len(parts))]


Uses = tuple[tuple[str, tuple[str, ...]], ...]
"""Which entries of each discovered package a job uses: ``((package, (entry, ...)), ...)``, hashable."""


@cache
def discovered_package(path: Path) -> str | None:
    """The package the module at ``path`` discovers at run time (its ``DISCOVERED_PACKAGE``), or ``None``."""
    return _facts(path).discovered


@cache
def package_entries(package: str) -> tuple[str, ...]:
    """The entries a registry of ``package`` imports: every module or sub-package directly under it, except the
    registry modules themselves (those with ``DISCOVERED_PACKAGE``)."""
    directory = PACKAGE_DIR / Path(*package.split(".")[1:])
    if not (directory / "__init__.py").is_file():
        raise FileNotFoundError(f"no package {package!r}")
    entries = []
    for child in sorted(directory.iterdir()):
        if child.suffix == ".py" and child.name != "__init__.py":
            if discovered_package(child) is None:
                entries.append(f"{package}.{child.stem}")
        elif child.is_dir() and (child / "__init__.py").is_file():
            entries.append(f"{package}.{child.name}")
    return tuple(entries)


@cache
def entry_files(entry: str) -> tuple[Path, ...]:
    """Every source file of an entry: the module, or every module of the sub-package (a registry imports the
    package, and what the package reaches is its own business: all of it counts)."""
    path = module_file(entry)
    if path is None:
        raise FileNotFoundError(f"no source for {entry!r}")
    if path.name == "__init__.py":
        return tuple(sorted(p.resolve() for p in path.parent.rglob("*.py")))
    return (path.resolve(),)


def freeze_uses(uses: dict[str, list[str] | tuple[str, ...] | set[str]] | None) -> Uses:
    """``uses`` as the hashable form :func:`code_version` caches on (sorted, duplicates dropped)."""
    return tuple(sorted((package, tuple(sorted(set(entries)))) for package, entries in (uses or {}).items()))


def code_files(*roots: str | Path, uses: Uses = ()) -> list[Path]:
    """Source files of the given modules (dotted names) or scripts (paths) and of every ``ddppm`` module
    they import, transitively, with the entries of every registry they reach: those ``uses`` names for its
    package, or all of them (:func:`package_entries`), and the data files those modules read by name
    (:func:`_data_files`)."""
    chosen = dict(uses)
    for package, entries in chosen.items():
        unknown = sorted(set(entries) - set(package_entries(package)))
        if unknown:
            raise ValueError(f"uses: {unknown} are not entries of {package!r}")
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
        if path.suffix != ".py":
            continue
        seen.update(_data_files(path))
        package = discovered_package(path)
        if package is not None:
            for entry in chosen.get(package, package_entries(package)):
                todo.extend(f for f in entry_files(entry) if f not in seen)
        todo.extend(f for f in _imported_files(path) if f not in seen)
    return sorted(seen)


@cache
def _imported_files(path: Path) -> tuple[Path, ...]:
    """The resolved source files of the ``ddppm`` modules the file at ``path`` imports, with the packages each
    import runs (:func:`_parents`), once per process: a dry run asks for dozens of closures over the same files."""
    found: dict[Path, None] = {}
    for module in sorted(_imports(path)):
        for name in [*_parents(module), module]:
            if name != PACKAGE and (file := module_file(name)) is not None:
                found[file.resolve()] = None
    return tuple(found)


@cache
def code_version(*roots: str | Path, uses: Uses = ()) -> str:
    """sha256 (16 hex digits) of the contents of :func:`code_files`, independent of file times.

    Cached per process: a Snakemake run asks for the same few versions once per job."""
    digest = hashlib.sha256()
    for path in code_files(*roots, uses=uses):
        name = path.relative_to(PACKAGE_DIR) if path.is_relative_to(PACKAGE_DIR) else path.name
        digest.update(str(name).encode() + b"\0" + _source(path) + b"\0")
    return digest.hexdigest()[:16]


@cache
def _source(path: Path) -> bytes:
    """A source file's bytes, read once per process (dozens of job hashes share most files)."""
    return path.read_bytes()


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


RECORDED_DISTRIBUTIONS = (
    "numpy",
    "scipy",
    "pandas",
    "pyarrow",
    "matplotlib",
    "scikit-learn",
    "networkx",
    "threadpoolctl",
    "snakemake",
)
"""The installed distributions every table records: the project's direct dependencies, each pinned in
``requirements/ddppm.lock`` (``tests/core/test_provenance.py`` checks the installed versions equal the lock)."""


@cache
def environment() -> dict[str, str | None]:
    """Git commit, Python, and the versions of ddppm and of :data:`RECORDED_DISTRIBUTIONS`."""
    out: dict[str, str | None] = {"git_commit": git_commit(), "python": platform.python_version()}
    for dist in (PACKAGE, *RECORDED_DISTRIBUTIONS):
        out[dist] = _version(dist)
    return out


def provenance_note(config_hash: str) -> str:
    """One line naming what made an output: ``config <hash> · git <commit> · ddppm <version>``."""
    env = environment()
    commit = (env.get("git_commit") or "unknown")[:10]
    return f"config {config_hash} · git {commit} · ddppm {env.get('ddppm') or 'unknown'}"
