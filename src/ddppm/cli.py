"""The console script ``ddppm`` (and ``python -m ddppm``): ``ddppm advise`` (which method, from public parameters
only: :mod:`ddppm.advise`), ``ddppm fit`` (a private PCA of a CSV file) and ``ddppm ledger`` (a data set's
privacy ledger), both :mod:`ddppm.release.cli`; ``ddppm agreement``, ``ddppm party`` and ``ddppm coordinate``
(a release across parties that never pool their records: :mod:`ddppm.federation.cli`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from ddppm import advise
from ddppm.federation import cli as federation_cli
from ddppm.release import cli as release_cli


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the named command; its exit code (2 on bad input)."""
    program = __name__.split(".")[0]  # the console script's name, the package's
    parser = argparse.ArgumentParser(prog=program, description="Differentially private PCA over many parties.")
    commands = parser.add_subparsers(dest="command", required=True)
    advise.add_command(commands)
    release_cli.add_command(commands)
    federation_cli.add_commands(commands)
    args = parser.parse_args(argv)
    return int(args.run(args))
