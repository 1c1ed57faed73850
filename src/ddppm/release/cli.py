"""``ddppm fit``: a private PCA of a CSV or Parquet file, for users who do not program (docs/release.md).

``ddppm fit data.csv --bounds bounds.yaml --k 2 --eps 1 --delta 1e-5 --trust central --out release.json`` reads
the named CSV (a header row, one record per row, numeric columns; ``--parties COLUMN`` names the column saying which
party holds each row) and the bounds file (YAML: ``source``, optional ``kind``, and ``features``, either one
``[lower, upper]`` per column in order or a mapping from column name to ``[lower, upper]``; or ``all_features``;
or ``row_norm`` with ``--no-standardize``). It writes one JSON file, atomically: the components, the private
mean and scale, the columns, and the certificate. Every check runs before any noise is drawn; on bad input
nothing is written and the error names the argument to fix. The count of clipped values goes to the terminal
only (the estimator's :class:`~ddppm.release.estimator.ClippingWarning`): a statistic of the records, not released.
A Parquet file, a folder of Parquet files, or a CSV file with ``--stream`` is read a batch at a time
(:meth:`PrivatePCA.fit_stream <ddppm.release.estimator.PrivatePCA.fit_stream>`): records larger than memory.

``--ledger FILE`` reserves the release's (ε, δ) in the data set's privacy ledger before anything is drawn
(:mod:`ddppm.release.ledger`); ``ddppm ledger create FILE --dataset NAME --eps E --delta D`` starts one,
``ddppm ledger show FILE`` prints its budget, what is spent and every run, ``ddppm ledger settle FILE`` lists the
pending runs and ``--run ID --released`` / ``--withdrawn`` records what became of one killed before it settled, and
``ddppm ledger upgrade FILE`` rewrites a ledger of the old format (no hash chain) as the current one.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import warnings
from pathlib import Path
from typing import Any

from ddppm.common_task.run import TRUST_LEVELS
from ddppm.core.errors import ConfigError, DDPPMError
from ddppm.core.io import atomic_write
from ddppm.release.estimator import ClippingWarning, PrivatePCA
from ddppm.release.ledger import PrivacyLedger
from ddppm.release.user_files import read_bounds, read_records


def add_command(commands: Any) -> None:
    """The ``fit`` subcommand's arguments (:func:`ddppm.cli.main`)."""
    fit = commands.add_parser("fit", help="release a private PCA of a CSV or Parquet file (reads only that file)")
    fit.add_argument("data", type=Path, help="CSV file (a header row, one record per row, numeric columns), or a "
                     "Parquet file or folder of Parquet files (read a batch at a time)")  # fmt: skip
    fit.add_argument("--stream", action="store_true", help="read a CSV file a batch at a time too (records larger "
                     "than memory; Parquet always is)")  # fmt: skip
    fit.add_argument("--bounds", type=Path, required=True, help="YAML file of public per-feature bounds")
    fit.add_argument("--k", type=int, required=True, help="principal directions to release")
    fit.add_argument("--eps", type=float, required=True, help="ε of the whole release")
    fit.add_argument("--delta", type=float, required=True, help="δ of the whole release (below 1/n)")
    fit.add_argument("--trust", choices=TRUST_LEVELS, default="central", help="whom the record holders trust")
    fit.add_argument("--method", default="auto", help="a method name, or auto (chosen from public parameters)")
    fit.add_argument("--parties", metavar="COLUMN", help="the column naming each row's party (omit: one curator)")
    preparation = fit.add_mutually_exclusive_group()
    preparation.add_argument("--center-only", action="store_true", help="centre privately, do not scale")
    preparation.add_argument("--no-standardize", action="store_true", help="neither centre nor scale (second moment)")
    fit.add_argument("--out", type=Path, required=True, help="the JSON file to write")
    fit.add_argument("--ledger", type=Path, help="the data set's privacy ledger (ddppm ledger create): the release "
                     "is refused if it would pass the ledger's budget")  # fmt: skip
    fit.set_defaults(run=run_command)
    ledger = commands.add_parser("ledger", help="a data set's privacy ledger: create one, show what is spent, settle "
                                 "a pending run")  # fmt: skip
    actions = ledger.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="start a ledger with a total budget")
    create.add_argument("file", type=Path, help="the ledger file to create (JSON; never overwritten)")
    create.add_argument("--dataset", required=True, help="the name of the data set it covers")
    create.add_argument("--eps", type=float, required=True, help="the total ε of every release from the data set")
    create.add_argument("--delta", type=float, required=True, help="the total δ")
    create.set_defaults(run=ledger_create)
    show = actions.add_parser("show", help="the budget, what is spent and every run (its latest status)")
    show.add_argument("file", type=Path, help="the ledger file")
    show.set_defaults(run=ledger_show)
    settle = actions.add_parser("settle", help="list the pending runs, or record what became of one whose process "
                                "was killed before it settled")  # fmt: skip
    settle.add_argument("file", type=Path, help="the ledger file")
    settle.add_argument("--run", metavar="ID", dest="run_id", help="the pending run to settle (omit: list the "
                        "pending runs)")  # fmt: skip
    outcome = settle.add_mutually_exclusive_group()
    outcome.add_argument("--released", action="store_const", const="released", dest="outcome", help="its release "
                         "left the process (or may have): it stays counted")  # fmt: skip
    outcome.add_argument("--withdrawn", action="store_const", const="withdrawn", dest="outcome", help="nothing left "
                         "the process (no output was written or sent): it stops counting")  # fmt: skip
    settle.set_defaults(run=ledger_settle)
    upgrade = actions.add_parser("upgrade", help="rewrite a ledger of the old format (ddppm-ledger/1, no hash chain) "
                                 "as the current one; the old file is kept as FILE.v1")  # fmt: skip
    upgrade.add_argument("file", type=Path, help="the ledger file")
    upgrade.set_defaults(run=ledger_upgrade)


def _ledger_errors(command: Any) -> Any:
    """A ``ddppm ledger`` command that exits 2 with one message (``ddppm ledger: …``) on a ledger's error."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except DDPPMError as error:
            print(f"ddppm ledger: {error}", file=sys.stderr)
            return 2

    return run


@_ledger_errors
def ledger_create(args: argparse.Namespace) -> int:
    """``ddppm ledger create``; 2 with a message where the ledger exists or the budget is not one."""
    PrivacyLedger.create(args.file, args.dataset, args.eps, args.delta)
    print(f"ledger for {args.dataset!r} with budget ε = {args.eps:g}, δ = {args.delta:g} → {args.file}")
    return 0


@_ledger_errors
def ledger_show(args: argparse.Namespace) -> int:
    """``ddppm ledger show``; 2 with a message for a missing or corrupt ledger."""
    summary = PrivacyLedger(args.file).summary()
    budget, spent = summary["budget"], summary["spent"]
    print(f"data set {summary['dataset']!r}: budget ε = {budget['epsilon']:g}, δ = {budget['delta']:g}")
    print(f"spent ({spent['composition']} composition): ε = {spent['epsilon']:g}, δ = {spent['delta']:.3g}")
    for entry in summary["releases"]:
        mu = "not Gaussian" if entry["mu"] is None else f"μ = {entry['mu']:.4g}"
        counted = {"pending": "  (pending: counted until settled)", "withdrawn": "  (counts nothing)"}
        print(f"  {entry['date']}  {entry['run']}  {entry['method']}  ε = {entry['epsilon']:g}, "
              f"δ = {entry['delta']:g}, {mu}  [{entry['status']}]{counted.get(entry['status'], '')}")
    if any(entry["status"] == "pending" for entry in summary["releases"]):
        print(f"a pending run whose process is gone: ddppm ledger settle {args.file} --run ID --released|--withdrawn")
    if summary["head"] is not None:  # a hash chain cannot see its newest records dropped: compare with a copy
        print(f"chain head after {summary['records']} record(s): {summary['head']}")
    return 0


@_ledger_errors
def ledger_settle(args: argparse.Namespace) -> int:
    """``ddppm ledger settle``: the pending runs, or settle ``--run``; 2 with a message where that cannot be done."""
    ledger = PrivacyLedger(args.file)
    if args.run_id is None:
        if args.outcome is not None:
            raise ConfigError(f"--{args.outcome}: name the pending run with --run ID (`ddppm ledger settle "
                              f"{args.file}` lists them)")  # fmt: skip
        pending = [entry for entry in ledger.state()["releases"] if entry["status"] == "pending"]
        for entry in pending:
            print(f"{entry['run']}  {entry['date']}  {entry['method']}  ε = {entry['epsilon']:g}, "
                  f"δ = {entry['delta']:g}  [pending]")
        print(f"{len(pending)} pending run(s) in {args.file}" + (
            "; settle one whose process is gone with --run ID --released (its output left, or may have) or "
            "--withdrawn (nothing left)" if pending else ""))  # fmt: skip
        return 0
    if args.outcome is None:
        raise ConfigError(f"--run {args.run_id}: say what became of it, --released (its output left the process, "
                          "or may have: it stays counted) or --withdrawn (nothing left: it stops counting)")
    entry = ledger.settle(args.run_id, args.outcome)
    print(f"run {entry['run']} of {args.file} is {entry['status']}"
          + ("; it counts nothing" if entry["status"] == "withdrawn" else "; it stays counted"))  # fmt: skip
    return 0


@_ledger_errors
def ledger_upgrade(args: argparse.Namespace) -> int:
    """``ddppm ledger upgrade``; 2 with a message where the file is not an old ledger."""
    kept = PrivacyLedger(args.file).upgrade()
    print(f"{args.file} now has the hash chain ({PrivacyLedger(args.file).state()['format']}); the old file is "
          f"kept as {kept}")
    return 0


def run_command(args: argparse.Namespace) -> int:
    """Fit, write the release; 2 with a message on bad input (nothing written)."""
    from ddppm.release.files import PARQUET, file_blocks  # pyarrow: imported when a file is read

    try:
        standardize: bool | str = False if args.no_standardize else ("center" if args.center_only else True)
        streamed = args.stream or args.data.is_dir() or args.data.suffix in PARQUET
        if streamed:
            if args.parties is not None:
                raise ConfigError("--parties: a streamed data set (Parquet, or --stream) is read by one holder of "
                                  "every row; parties that keep their rows run `ddppm party` (docs/federation.md)")
            records = file_blocks(args.data)
            columns = list(records.columns)
        else:
            frame, parties = read_records(args.data, args.parties)
            columns = [str(c) for c in frame.columns]
        model = PrivatePCA(args.k, args.eps, args.delta, read_bounds(args.bounds, columns), trust=args.trust,
                           method=args.method, standardize=standardize, budget=args.ledger)  # fmt: skip
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ClippingWarning)
            if streamed:
                model.fit_stream(records)
            else:
                model.fit(frame.to_numpy(dtype=float), parties=parties)
    except DDPPMError as error:
        print(f"ddppm fit: {error}", file=sys.stderr)
        return 2
    except (ValueError, TypeError) as error:  # a check that has no message of ours yet: still no traceback
        print(f"ddppm fit: bad input ({type(error).__name__}: {error}); check the data file and --bounds",
              file=sys.stderr)
        return 2
    release = {
        "columns": columns,
        "components": model.components_.tolist(),
        "mean": model.mean_.tolist(),
        "scale": model.scale_.tolist(),
        "privacy": model.privacy_.to_dict(),
    }
    with atomic_write(args.out) as tmp:
        tmp.write_text(json.dumps(release, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    certificate = model.privacy_
    print(f"released {certificate.k} direction(s) of {certificate.d} features by {certificate.method} "
          f"({certificate.trust} trust) at ε = {certificate.epsilon:g}, δ = {certificate.delta:.3g} → {args.out}")
    for warning in caught:
        if issubclass(warning.category, ClippingWarning):
            print(f"note: {warning.message}", file=sys.stderr)
    return 0
