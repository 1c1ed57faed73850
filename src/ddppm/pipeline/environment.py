"""The rules' conda environment, ``workflow/envs/ddppm.yaml``, written from the hashed lock ``requirements/ddppm.lock``.

Every rule names this environment (``conda:``), used with ``snakemake --sdm conda``; a run without it uses the
project's ``.venv``, installed from the same lock. :func:`conda_environment` pins Python 3.11 (the version the lock
is resolved for) and every package of the lock at its exact version, with its environment marker, then installs
this checkout (``-e ../..``, relative to ``workflow/envs``). The lock's hashes are not carried over: pip checks
hashes only when every requirement has one, and the editable checkout cannot. ``python -m ddppm.pipeline.environment``
rewrites the file (``requirements/update.sh`` does after a new lock); a test compares the two.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

LOCK_PATH = "requirements/ddppm.lock"
ENVIRONMENT_PATH = "workflow/envs/ddppm.yaml"
PYTHON = "3.11"
"""The Python the lock is resolved for (``--python-version 3.11`` in ``requirements/update.sh``)."""

_PIN = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._\-\[\],]*)==(?P<version>[^\s;\\]+)\s*(?:;\s*(?P<marker>.*?))?\s*\\?$"
)


def lock_pins(lock_text: str) -> list[str]:
    """Every requirement of a ``uv pip compile --generate-hashes`` lock as ``name==version`` (``; marker`` where the
    lock has one), in the lock's order, without its hashes and comments."""
    pins = []
    for line in lock_text.splitlines():
        match = _PIN.match(line)
        if match:
            marker = match["marker"]
            pins.append(f"{match['name']}=={match['version']}" + (f" ; {marker}" if marker else ""))
    return pins


def conda_environment(lock_text: str) -> str:
    """The text of ``workflow/envs/ddppm.yaml`` for ``lock_text`` (the content of ``requirements/ddppm.lock``)."""
    lines = [
        f"# Written by `python -m ddppm.pipeline.environment` from {LOCK_PATH}: do not edit by hand.",
        "# The software of every rule under `snakemake --sdm conda`: Python 3.11 and every package of the lock at",
        "# its version (the lock's hashes are not checked here: pip cannot beside the editable install of the",
        "# checkout), then this checkout. Without --sdm conda the rules run in .venv, installed from the same lock.",
        "channels:",
        "  - conda-forge",
        "  - nodefaults",
        "dependencies:",
        f"  - python ={PYTHON}",
        "  - pip",
        "  - pip:",
        *(f'      - "{pin}"' for pin in lock_pins(lock_text)),
        "      - -e ../..",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m ddppm.pipeline.environment [--lock PATH] [--out PATH]``: write :func:`conda_environment`."""
    parser = argparse.ArgumentParser(prog="python -m ddppm.pipeline.environment", description=main.__doc__)
    parser.add_argument("--lock", default=LOCK_PATH, help=f"the hashed lock (default {LOCK_PATH})")
    parser.add_argument("--out", default=ENVIRONMENT_PATH, help=f"the conda environment (default {ENVIRONMENT_PATH})")
    args = parser.parse_args(argv)
    Path(args.out).write_text(conda_environment(Path(args.lock).read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote {args.out} from {args.lock}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
