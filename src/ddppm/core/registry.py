"""Where a registry entry is, found by reading source text, so that a registry imports one entry, not all.

The registries (:mod:`ddppm.methods.base`, :mod:`ddppm.experiments.base`) import every module of their package to
list what registered there. A job that needs one method (or experiment) by name should not pay for importing all of
them: every Snakemake job is a fresh interpreter. :func:`entries_naming` answers which entries of the package (the
modules and sub-packages directly under it) define a registered class called ``name``, by looking for the class
attribute line ``name = "<name>"`` (or ``name: ClassVar[str] = "<name>"``) in their source files: reading the text
of the package's files takes a few milliseconds, importing them most of a second.

It is a shortcut, never the authority: the registry imports the entries found, then checks that ``name`` did
register, and imports every entry if it did not (a name built at run time, say). So it cannot change what a lookup
returns, only how much is imported to find it; nothing here is an index that needs updating when an entry is added.
Each registry's tests check that every registered name is found this way (a miss means a slower start).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # src/ddppm

NAME_LINE = re.compile(r"""^[ \t]+name[ \t]*(?::[^=\n]*)?=[ \t]*["']([A-Za-z0-9_.\-]+)["'][ \t]*(?:#.*)?$""", re.M)
"""An indented class attribute ``name = "<literal>"``, with or without an annotation."""


@cache
def _names_by_entry(package: str) -> dict[str, frozenset[str]]:
    """For each entry of ``package`` (``ddppm.<...>``; entries in sorted order): the literal ``name`` attributes
    its source files set. Read once per process."""
    directory = PACKAGE_DIR.joinpath(*package.split(".")[1:])
    out: dict[str, frozenset[str]] = {}
    for child in sorted(directory.iterdir()):
        if child.suffix == ".py" and child.name != "__init__.py":
            files = [child]
        elif child.is_dir() and (child / "__init__.py").is_file():
            files = sorted(child.rglob("*.py"))
        else:
            continue
        names: set[str] = set()
        for path in files:
            try:
                names.update(NAME_LINE.findall(path.read_text(encoding="utf-8")))
            except OSError:  # an unreadable file: the registry's full discovery still finds what it holds
                continue
        out[f"{package}.{child.stem if child.suffix == '.py' else child.name}"] = frozenset(names)
    return out


def entries_naming(package: str, name: str) -> tuple[str, ...]:
    """The entries of ``package`` whose source sets a class attribute ``name = "<name>"``, in sorted order (none
    when the package's source cannot be read)."""
    try:
        by_entry = _names_by_entry(package)
    except OSError:
        return ()
    return tuple(entry for entry, names in by_entry.items() if name in names)
