"""``ddppm advise``: which method to use, from public parameters only (docs/method_map.md, "The advisor"): the
command line of :mod:`ddppm.studies.advisor`, which never reads a data file."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from ddppm.common_task.run import TRUST_LEVELS
from ddppm.studies.advisor import DEFAULTS, advise, render

__all__ = ["DEFAULTS", "add_command", "advise", "render", "run_command"]


def add_command(commands: Any) -> None:
    """``ddppm advise --n … --d … --m … --eps … --delta … --trust … --k …`` (:func:`ddppm.cli.main`)."""
    ask = commands.add_parser("advise", help="which method, from public parameters only (reads no data)")
    ask.add_argument("--n", type=int, required=True, help="rows (individuals)")
    ask.add_argument("--d", type=int, required=True, help="dimension (features)")
    ask.add_argument("--m", type=int, required=True, help="agents holding the rows")
    ask.add_argument("--eps", type=float, required=True, help="ε of the whole release")
    ask.add_argument("--delta", type=float, required=True, help="δ of the whole release")
    ask.add_argument("--trust", choices=TRUST_LEVELS, required=True, help="whom the users trust")
    ask.add_argument("--k", type=int, default=1, help="rank (principal directions wanted; default 1)")
    ask.add_argument("--spectrum", type=float, default=DEFAULTS["gap"], metavar="GAP",
                     help="assumed spectral gap λ_k/λ_(k+1) (default 2)")  # fmt: skip
    ask.add_argument("--looseness", type=float, default=DEFAULTS["looseness"], metavar="W",
                     help="how many times wider than the data's mean ± 4 sd your declared bounds are likely to be "
                     "(default 2; bounds from units are often 2 to 10 times loose)")  # fmt: skip
    ask.add_argument("--prepared-rows", action="store_true",
                     help="your rows are already in the unit ball (no private standardisation to simulate)")
    ask.add_argument("--runs", type=int, default=DEFAULTS["runs"]["cap"], help="most simulated data sets (default 40)")
    ask.add_argument("--seed", type=int, default=0)
    ask.set_defaults(run=run_command)


def run_command(args: argparse.Namespace) -> int:
    """The advisor's answer for the parsed arguments, printed; 2 on bad input."""
    start = time.perf_counter()
    try:
        members, facts = advise(args.n, args.d, args.m, args.eps, args.delta, args.trust, args.k, args.spectrum,
                                min(DEFAULTS["runs"]["start"], args.runs), args.runs, args.seed,
                                None if args.prepared_rows else args.looseness)  # fmt: skip
    except ValueError as error:
        print(f"ddppm advise: {error}", file=sys.stderr)
        return 2
    print(render(members, facts, args.trust, args.eps, args.delta))
    print(f"  ({time.perf_counter() - start:.1f} s)")
    return 0

