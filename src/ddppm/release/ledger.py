"""A privacy ledger per data set: what its holder has released, and a budget no release may pass (docs/release.md,
"A ledger per data set").

A ledger is one JSON file kept by whoever holds the records (a curator, or each party for its own rows): the data
set's name, a fingerprint of its records (SHA-256 of the float64 matrix, kept with the holder, never released),
the declared total budget (ε_B, δ_B), and an append-only chain of records. Before anything is drawn, a fit asks
the ledger to **reserve** its (ε, δ); the ledger refuses if the releases so far composed with it would pass the
budget (:func:`composed_delta`):

* every release Gaussian (μ_i-GDP): exactly, ``μ = √Σ μ_i²`` and δ_B must hold at ε_B for that μ (the
  certificate's own composition: Dong, Roth & Su 2022, Corollary 3.3);
* otherwise the basic sum: ``Σ ε_i ≤ ε_B`` and ``Σ δ_i ≤ δ_B`` (Dwork & Roth 2014, Theorem 3.16).

A release's μ is its target's, :func:`~ddppm.common_task.budget.gdp_mu` (ε, δ): a certified release has δ ≤ the
target at ε, so its own μ is at most that (a conservative record).

**Records are never changed or removed.** A reservation appends a record (run identifier, date, method, ε, δ, μ
— null for a release that is not Gaussian —, the records' fingerprint) with status ``pending``; when the fit
returns, a settlement record ``released`` (with the certificate's δ and μ) is appended for the same run, and when
the fit stops before releasing anything, ``withdrawn`` (nothing left the process). A run is counted by its latest
record: a withdrawn run counts nothing, a released one never less than its reservation said. A run killed in
between stays pending, and a pending run counts: the ledger never under-counts (``ddppm ledger settle`` records,
by hand, what became of it). :meth:`PrivacyLedger.spend` (a party of a federation) appends one ``released``
record at once. Every write is atomic, under an exclusive lock on the file, and leaves it readable by its owner
only (mode 0600); the path is resolved first, so a symbolic link and its target are one ledger.

**Tamper evidence.** Each record carries ``prev``, the digest of the record before it (for the first, the digest
of the header: format, data set, budget), and ``digest``, the SHA-256 of its own canonical JSON (sorted keys, no
spaces) without ``digest``. Every record opening a run names the fingerprint of the records it was charged for,
which must be the header's. Every read checks the whole chain, so a lowered or zeroed ε, δ or μ, a removed,
inserted or reordered record, a changed status, a raised budget, a renamed data set and a cleared or changed
fingerprint are each refused (:class:`LedgerError` naming the record that no longer matches) before anything is drawn.

What a hash chain cannot stop, since nothing in it is secret: someone who rewrites the whole file and recomputes
every digest (including dropping the newest records, whose removal leaves a valid, shorter chain), or who deletes
the file. Detecting those needs something kept elsewhere: a keyed MAC whose key the file's editors do not hold,
or an external append-only log of the chain's head (``ddppm ledger show`` prints the head digest, to be noted
down). Corrupt files, another data set's ledger and a spent budget stop with :class:`LedgerError` before any
noise is drawn.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import math
import numbers
import os
import secrets
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ddppm.common_task.budget import gdp_mu
from ddppm.common_task.certified import certified_delta
from ddppm.core.errors import ConfigError
from ddppm.core.io import exclusive_lock, write_text_atomic

__all__ = [
    "LEDGER_FORMAT",
    "LedgerError",
    "PrivacyLedger",
    "RunAlreadyCharged",
    "composed_delta",
    "ledger_of",
    "records_fingerprint",
    "within_budget",
]

LEDGER_FORMAT = "ddppm-ledger/2"
OLD_FORMATS = ("ddppm-ledger/1",)
FILE_MODE = 0o600
"""The ledger says what was released from whose records and when: its owner's only."""
ROUND_TRIP = 1e-9
"""Relative slack of the exact route: a release of exactly the budget, μ = gdp_mu(ε_B, δ_B), comes back as δ_B to
about 1e-12 (root finding), and must fit."""
ENTRY_KEYS = ("run", "date", "method", "epsilon", "delta", "mu", "status")
"""One run as :meth:`PrivacyLedger.state` and :meth:`PrivacyLedger.summary` show it (its latest status)."""
RESERVATION_KEYS = (*ENTRY_KEYS, "fingerprint", "prev", "digest")
"""A record opening a run: ``pending`` (a fit's reservation) or ``released`` (:meth:`PrivacyLedger.spend`)."""
SETTLEMENT_KEYS = ("run", "date", "status", "delta", "mu", "prev", "digest")
"""A record saying what became of a pending run: ``released`` or ``withdrawn``."""
OPENING, SETTLING = ("pending", "released"), ("released", "withdrawn")
SETTLES_FROM = {"released": ("pending", "withdrawn"), "withdrawn": ("pending",)}
"""The latest status a settlement may follow. A released record may follow a withdrawal: a run withdrawn by hand
(``ddppm ledger settle``) while it was still alive, which then released, is counted again (never under-count)."""
STATUSES = ("pending", "released", "withdrawn")
EDITED = "the file was edited outside ddppm; restore it from a copy (a ledger is never rebuilt: the releases it " \
         "recorded would be forgotten)"  # fmt: skip


class LedgerError(ConfigError):
    """A ledger that cannot be used (unreadable, edited, another data set's) or a release it refuses (budget spent)."""


class RunAlreadyCharged(LedgerError):
    """A reservation for a run identifier the ledger already holds: one run is charged once."""


def records_fingerprint(X: np.ndarray) -> str:
    """``sha256:…`` of the records (their shape and float64 bytes, C order): which data set a ledger covers."""
    array = np.ascontiguousarray(X, dtype=np.float64)
    digest = hashlib.sha256(f"{array.shape}".encode())
    digest.update(array.tobytes())
    return f"sha256:{digest.hexdigest()}"


def composed_delta(releases: Sequence[dict[str, Any]], budget_eps: float) -> tuple[str, float, float]:
    """What ``releases`` spend, composed (module docstring): ``("exact", ε_B, δ at ε_B of √Σμ²)`` when every one is
    Gaussian, else ``("basic", Σ ε, Σ δ)``. A ``withdrawn`` run counts nothing."""
    releases = [r for r in releases if r.get("status") != "withdrawn"]
    if releases and all(r["mu"] is not None for r in releases):
        mu = math.sqrt(sum(float(r["mu"]) ** 2 for r in releases))
        return "exact", float(budget_eps), certified_delta(mu, budget_eps)
    return "basic", float(sum(r["epsilon"] for r in releases)), float(sum(r["delta"] for r in releases))


def within_budget(releases: Sequence[dict[str, Any]], budget: dict[str, float]) -> tuple[bool, str]:
    """Whether ``releases`` composed stay within ``budget`` (``epsilon``, ``delta``), and the words saying so."""
    route, eps, delta = composed_delta(releases, budget["epsilon"])
    if route == "exact":
        ok = delta <= budget["delta"] * (1 + ROUND_TRIP)
        return ok, f"exact Gaussian composition: δ = {delta:.3g} at ε_B = {eps:g} (budget δ_B = {budget['delta']:g})"
    ok = eps <= budget["epsilon"] * (1 + 1e-12) and delta <= budget["delta"] * (1 + 1e-12)
    return ok, f"basic composition: Σε = {eps:g}, Σδ = {delta:.3g} (budget ε_B = {budget['epsilon']:g}, " \
               f"δ_B = {budget['delta']:g})"  # fmt: skip


def is_number(value: Any) -> bool:
    """A finite real number, and not a bool (``True`` is an ``int`` to Python, never a privacy parameter)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_) and math.isfinite(value)


def canonical_digest(obj: Any) -> str:
    """``sha256:…`` of ``obj``'s canonical JSON (sorted keys, no spaces, UTF-8): the chain's digests."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return f"sha256:{hashlib.sha256(text.encode('utf-8')).hexdigest()}"


def header_digest(state: dict[str, Any]) -> str:
    """The digest the first record's ``prev`` holds: of the format, the data set's name and the budget."""
    return canonical_digest({key: state[key] for key in ("format", "dataset", "budget")})


def sealed(record: dict[str, Any], prev: str) -> dict[str, Any]:
    """``record`` chained after ``prev``: with ``prev`` and its own ``digest``."""
    record = {**record, "prev": prev}
    return {**record, "digest": canonical_digest(record)}


class PrivacyLedger:
    """The ledger file at ``path`` (module docstring), resolved: a symbolic link and its target are one ledger.
    :meth:`create` starts one; ``PrivatePCA(..., budget=ledger)`` and ``ddppm fit --ledger FILE`` reserve and
    record through :meth:`reserve`, a federation's party through :meth:`spend`."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).resolve()  # reads, the lock and the atomic rename all reach the real file

    @classmethod
    def create(cls, path: str | Path, dataset: str, epsilon: float, delta: float) -> PrivacyLedger:
        """A new, empty ledger for data set ``dataset`` with total budget (``epsilon``, ``delta``), mode 0600;
        refuses to overwrite a ledger (its releases would be forgotten), also when two create it at once."""
        path = Path(path).resolve()
        exists = (f"ledger: {path} exists; a ledger is never overwritten (its releases would be lost). Open it with "
                  "PrivacyLedger(path), or choose a new file for a new data set")  # fmt: skip
        if path.exists():
            raise LedgerError(exists)
        if not isinstance(dataset, str) or not dataset.strip():
            raise LedgerError(f"ledger {path}: name the data set it covers (dataset='...')")
        if not (is_number(epsilon) and epsilon > 0):
            raise LedgerError(f"ledger {path}: the budget's epsilon {epsilon!r} must be a finite number > 0 (not a "
                              "bool)")  # fmt: skip
        if not (is_number(delta) and 0 < delta < 1):
            raise LedgerError(f"ledger {path}: the budget's delta {delta!r} must be a number in (0, 1) (not a bool)")
        state = {"format": LEDGER_FORMAT, "dataset": dataset, "fingerprint": None,
                 "budget": {"epsilon": float(epsilon), "delta": float(delta)}, "releases": []}  # fmt: skip
        # Written whole under a temporary name, then hard-linked into place: os.link fails if the name exists, so
        # of two concurrent creates exactly one wins (the existence check above only gives the early message), and
        # no reader ever sees a half-written ledger.
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.create-{secrets.token_hex(6)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                os.fchmod(handle.fileno(), FILE_MODE)  # exactly 0600, whatever the umask
                handle.write(json.dumps(state, indent=2, ensure_ascii=False) + "\n")
            os.link(tmp, path)
        except FileExistsError:
            raise LedgerError(exists) from None
        finally:
            tmp.unlink(missing_ok=True)
        return cls(path)

    def state(self) -> dict[str, Any]:
        """The ledger's contents, checked (:class:`LedgerError` naming what is wrong): ``dataset``, ``fingerprint``,
        ``budget``, ``releases`` (one per run, as its latest record says, withdrawn runs included) and ``chain``
        (the records as the file holds them)."""
        chain = self._read()
        return {"format": chain["format"], "dataset": chain["dataset"], "fingerprint": chain["fingerprint"],
                "budget": chain["budget"], "releases": runs(chain["releases"]), "chain": chain["releases"]}  # fmt: skip

    def summary(self) -> dict[str, Any]:
        """The budget, what is spent (composed), the runs and the chain's head: for ``ddppm ledger show``."""
        state = self.state()
        route, eps, delta = composed_delta(state["releases"], state["budget"]["epsilon"])
        head = state["chain"][-1]["digest"] if state["chain"] else None
        return {"dataset": state["dataset"], "budget": state["budget"], "releases": state["releases"],
                "spent": {"composition": route, "epsilon": eps, "delta": delta}, "head": head,
                "records": len(state["chain"])}  # fmt: skip

    @contextlib.contextmanager
    def reserve(self, records: np.ndarray, method: str, epsilon: float, delta: float, gaussian: bool,
                run: str | None = None) -> Iterator[dict[str, Any]]:  # fmt: skip
        """Reserve (ε, δ) for one release of ``records`` (module docstring); yields the run's entry. The body draws
        and releases, and may raise the entry's ``delta`` and ``mu`` to the certificate's (a calibration meets its
        target to 1e-9 relative); if it raises, the run is recorded as withdrawn (nothing was released). ``run``:
        the run's identifier (:class:`RunAlreadyCharged` if the ledger holds it already); None, a new one."""
        entry = self._charge(records, method, epsilon, delta, gaussian, run, "pending")
        reserved = dict(entry)
        try:
            yield entry
        except BaseException as error:
            try:
                self._settle(reserved["run"], "withdrawn", reserved["delta"], reserved["mu"])
            except LedgerError as unsettled:  # the run stays pending, so it counts: safe, and said
                error.add_note(f"the ledger's run {reserved['run']} stays pending: {unsettled}")
            raise
        mu = None if reserved["mu"] is None else max(float(entry["mu"]), reserved["mu"])
        self._settle(reserved["run"], "released", max(float(entry["delta"]), reserved["delta"]), mu)

    def spend(self, records: np.ndarray, method: str, epsilon: float, delta: float, gaussian: bool,
              run: str | None = None) -> dict[str, Any]:  # fmt: skip
        """Reserve and record at once, as ``released`` (one record): for a party of a federation, whose first noisy
        reply is already out of its hands (nothing it sends later can be taken back). ``run`` as :meth:`reserve`."""
        return self._charge(records, method, epsilon, delta, gaussian, run, "released")

    def settle(self, run: str, status: str) -> dict[str, Any]:
        """Record what became of a pending run (``ddppm ledger settle``): ``released`` (it left the process; it stays
        counted) or ``withdrawn`` (nothing left it; it stops counting). Only a pending run, else
        :class:`LedgerError`. Returns the run as it now counts."""
        if status not in SETTLING:
            raise LedgerError(f"ledger {self.path}: settle a run as one of {list(SETTLING)}, not {status!r}")
        with self._locked():
            current = {entry["run"]: entry for entry in runs(self._read()["releases"])}
            if run not in current:
                raise LedgerError(f"ledger {self.path}: no run {run!r}; `ddppm ledger settle {self.path}` lists the "
                                  "pending runs")  # fmt: skip
            if current[run]["status"] != "pending":
                raise LedgerError(f"ledger {self.path}: run {run!r} is {current[run]['status']}, not pending; only "
                                  "a pending run is settled (what is recorded is never changed)")  # fmt: skip
            self._settle(run, status, current[run]["delta"], current[run]["mu"], locked=True)
        return next(entry for entry in self.state()["releases"] if entry["run"] == run)

    def upgrade(self) -> Path:
        """Rewrite a ledger of format ``ddppm-ledger/1`` (no chain) as this format, chaining its entries as they
        stand (they cannot be checked: /1 had no digests); the old file is kept beside it as ``FILE.v1``, which
        is returned."""
        with self._locked():
            old = self._json()
            if not isinstance(old, dict) or old.get("format") not in OLD_FORMATS:
                raise LedgerError(f"ledger {self.path}: only a ledger of format {list(OLD_FORMATS)} is upgraded; "
                                  f"this one is {old.get('format') if isinstance(old, dict) else None!r}")  # fmt: skip
            checked_header(old, f"ledger {self.path}", old["format"])
            entries = old.get("releases")
            if not isinstance(entries, list) or (entries and not str(old["fingerprint"]).startswith("sha256:")):
                raise LedgerError(f"ledger {self.path} (format {old['format']}) is corrupt: it needs a list of "
                                  "`releases` and, with any, the records' fingerprint; restore it from a copy")
            state = {"format": LEDGER_FORMAT, "dataset": old["dataset"], "fingerprint": old["fingerprint"],
                     "budget": {key: float(value) for key, value in old["budget"].items()}, "releases": []}  # fmt: skip
            prev = header_digest(state)
            for index, entry in enumerate(entries):
                if not (isinstance(entry, dict) and set(entry) == set(ENTRY_KEYS) and entry["status"] in OPENING):
                    raise LedgerError(f"ledger {self.path} (format {old['format']}) is corrupt: release {index} must "
                                      f"have exactly {list(ENTRY_KEYS)}; restore it from a copy")  # fmt: skip
                record = sealed({**entry, "fingerprint": old["fingerprint"]}, prev)
                state["releases"].append(record)
                prev = record["digest"]
            checked_chain(state, f"ledger {self.path}")  # the numbers, run identifiers, ...: as any read checks
            kept = self.path.with_name(f"{self.path.name}.v1")
            try:
                os.link(self.path, kept)  # the /1 file as it was, under a name never overwritten
            except FileExistsError:
                raise LedgerError(f"ledger {self.path}: {kept} exists (an earlier upgrade?); move it away first, "
                                  "nothing was changed") from None  # fmt: skip
            self._write(state)
        return kept

    def _charge(self, records: Any, method: str, epsilon: float, delta: float, gaussian: bool, run: str | None,
                status: str) -> dict[str, Any]:  # fmt: skip
        """Append the record opening ``run`` (``pending`` or ``released``) if the budget allows it; the run's entry."""
        if not (is_number(epsilon) and epsilon > 0 and is_number(delta) and 0 <= delta < 1):
            raise LedgerError(f"ledger {self.path}: a release's epsilon {epsilon!r} must be a number > 0 and its delta "
                              f"{delta!r} one in [0, 1) (not bools)")  # fmt: skip
        if run is None:
            run = uuid.uuid4().hex
        elif not (isinstance(run, str) and run.strip() and run.isprintable()):
            raise LedgerError(f"ledger {self.path}: a run identifier must be a non-empty printable string, not "
                              f"{run!r} (e.g. 'flower:17:ab12cd34'; or None for a new one)")  # fmt: skip
        if hasattr(records, "fingerprint"):  # rows read a block at a time (ddppm.release.stream): a pass
            fingerprint, shape = records.fingerprint(), records.shape()
        else:
            fingerprint, shape = records_fingerprint(records), records.shape
        entry = {"run": run, "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "method": str(method),
                 "epsilon": float(epsilon), "delta": float(delta),
                 "mu": float(gdp_mu(epsilon, delta)) if gaussian else None, "status": status}  # fmt: skip
        with self._locked():
            state = self._read()
            charged = [r["status"] for r in state["releases"] if r["run"] == run]
            if charged:
                raise RunAlreadyCharged(f"ledger {self.path}: run {run!r} is already charged ({charged[-1]}); a run "
                                        "is charged once, and nothing was written. Give each new run its own "
                                        "identifier (or none: one is made)")  # fmt: skip
            if state["fingerprint"] not in (None, fingerprint):
                raise LedgerError(f"ledger {self.path} covers data set {state['dataset']!r}, whose records differ "
                                  f"from these ({shape[0]} × {shape[1]}): a ledger counts one data "
                                  "set's releases; use that data set's own ledger, or create one for this")  # fmt: skip
            so_far = runs(state["releases"])
            ok, words = within_budget([*so_far, entry], state["budget"])
            if not ok:
                counted = [r for r in so_far if r["status"] != "withdrawn"]
                spent = within_budget(counted, state["budget"])[1] if counted else "nothing"
                raise LedgerError(f"ledger {self.path}: this release (ε = {epsilon:g}, δ = {delta:g}) would pass the "
                                  f"budget of {state['dataset']!r}: with it, {words}; so far spent: {spent}. "
                                  "Nothing was drawn. Ask for less, or stop releasing from this data set")  # fmt: skip
            state["fingerprint"] = fingerprint
            self._append(state, {**entry, "fingerprint": fingerprint})
        return entry

    def _settle(self, run: str, status: str, delta: float, mu: float | None, locked: bool = False) -> None:
        """Append ``run``'s settlement record (``released`` with the certificate's δ and μ, or ``withdrawn``)."""
        if not (is_number(delta) and (mu is None or is_number(mu))):  # refused: the run stays pending, counted
            raise LedgerError(f"ledger {self.path}: run {run!r} cannot be settled with δ = {delta!r}, μ = {mu!r} (not "
                              "finite numbers); it stays pending and counts")  # fmt: skip
        with contextlib.nullcontext() if locked else self._locked():
            state = self._read()
            latest = runs(state["releases"])
            current = next((entry for entry in latest if entry["run"] == run), None)
            if current is None or current["status"] not in SETTLES_FROM[status]:
                raise LedgerError(f"ledger {self.path}: run {run!r} is "
                                  f"{'absent' if current is None else current['status']}, so it cannot become "
                                  f"{status}; {EDITED}")  # fmt: skip
            self._append(state, {"run": run, "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                                 "status": status, "delta": float(delta),
                                 "mu": None if mu is None else float(mu)})  # fmt: skip

    def _append(self, state: dict[str, Any], record: dict[str, Any]) -> None:
        """Chain ``record`` after the last one and write the ledger (under the lock)."""
        prev = state["releases"][-1]["digest"] if state["releases"] else header_digest(state)
        state["releases"].append(sealed(record, prev))
        self._write(state)

    def _json(self) -> Any:
        """The file's JSON, unchecked."""
        where = f"ledger {self.path}"
        if not self.path.is_file():
            raise LedgerError(f"{where}: no such file; create one first (PrivacyLedger.create(path, dataset, "
                              "epsilon, delta) or `ddppm ledger create`)")  # fmt: skip
        links = self.path.stat().st_nlink
        if links > 1:  # an atomic rename would give this name a new file and leave the others behind: a fork
            raise LedgerError(f"{where} has {links} hard links; a ledger must have one name (writes replace the file "
                              "and would fork it). Remove the other links, or use a symbolic link")  # fmt: skip
        try:
            return json.loads(self.path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise LedgerError(f"{where} is corrupt (not JSON: {error}); restore it from a copy. It is never "
                              "rebuilt: the releases it recorded would be forgotten") from None  # fmt: skip

    def _read(self) -> dict[str, Any]:
        """The file's contents, its chain verified (:func:`checked_chain`)."""
        return checked_chain(self._json(), f"ledger {self.path}")

    def _locked(self) -> contextlib.AbstractContextManager[None]:
        """An exclusive lock (a ``.lock`` file beside the ledger) across reading, checking and writing."""
        return exclusive_lock(self.path.with_name(f".{self.path.name}.lock"))

    def _write(self, state: dict[str, Any]) -> None:
        write_text_atomic(self.path, json.dumps(state, indent=2, ensure_ascii=False) + "\n", mode=FILE_MODE)


def runs(chain: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per run (:data:`ENTRY_KEYS`), in the order they were opened, as its latest record says: a
    settlement sets the status, and never lowers the δ and μ the run was opened with (nor makes a run that is not
    Gaussian one)."""
    latest: dict[str, dict[str, Any]] = {}
    for record in chain:
        if "method" in record:
            latest[record["run"]] = {key: record[key] for key in ENTRY_KEYS}
            continue
        entry = latest[record["run"]]
        entry["status"] = record["status"]
        if record["status"] == "released":
            entry["delta"] = max(entry["delta"], record["delta"])
            if entry["mu"] is not None and record["mu"] is not None:
                entry["mu"] = max(entry["mu"], record["mu"])
    return list(latest.values())


def checked_header(state: Any, where: str, expected: str = LEDGER_FORMAT) -> dict[str, Any]:
    """``state`` if its format is ``expected`` and its data set, budget and fingerprint are well formed."""
    if isinstance(state, dict) and state.get("format") in OLD_FORMATS and expected == LEDGER_FORMAT:
        raise LedgerError(f"{where} has the old format {state['format']!r}, without the hash chain that shows it "
                          f"was not edited; run `ddppm ledger upgrade {where.removeprefix('ledger ')}` to rewrite it "
                          f"as {LEDGER_FORMAT!r} (the old file is kept beside it)")  # fmt: skip
    if not isinstance(state, dict) or state.get("format") != expected:
        raise LedgerError(f"{where} is not a ddppm ledger (format {expected!r} expected); it may be another "
                          "file given by mistake")  # fmt: skip
    budget = state.get("budget")
    if not (isinstance(budget, dict) and set(budget) == {"epsilon", "delta"} and all(map(is_number, budget.values()))
            and budget["epsilon"] > 0 and 0 < budget["delta"] < 1):  # fmt: skip
        raise LedgerError(f"{where} is corrupt: its budget {budget!r} needs epsilon > 0 and delta in (0, 1), numbers "
                          "(not bools); restore it from a copy")  # fmt: skip
    if not isinstance(state.get("dataset"), str) or not isinstance(state.get("releases"), list):
        raise LedgerError(f"{where} is corrupt: it needs a `dataset` name and a list of `releases`; restore it from "
                          "a copy")  # fmt: skip
    if state.get("fingerprint") is not None and not str(state["fingerprint"]).startswith("sha256:"):
        raise LedgerError(f"{where} is corrupt: its fingerprint {state['fingerprint']!r} is not a sha256 digest; "
                          "restore it from a copy")  # fmt: skip
    return state


def checked_chain(state: Any, where: str) -> dict[str, Any]:
    """``state`` if it is a ledger of this format whose chain holds (module docstring), else :class:`LedgerError`
    naming the first record that no longer matches."""
    checked_header(state, where)
    prev, statuses = header_digest(state), {}
    for index, record in enumerate(state["releases"]):
        opening = isinstance(record, dict) and "method" in record
        keys, allowed = (RESERVATION_KEYS, OPENING) if opening else (SETTLEMENT_KEYS, SETTLING)
        if not isinstance(record, dict) or set(record) != set(keys) or record["status"] not in allowed:
            raise LedgerError(f"{where} is corrupt: release {index} must have exactly {list(RESERVATION_KEYS)} with "
                              f"status in {list(OPENING)}, or {list(SETTLEMENT_KEYS)} with status in {list(SETTLING)}; "
                              f"{EDITED}")  # fmt: skip
        name = f"record {index} (run {record['run']!r}, {record['status']})"
        if record["prev"] != prev:
            what = ("the header (format, data set, budget) differs from the one it was made for: the budget or the "
                    "data set's name was changed, or the records before it were removed" if index == 0 else
                    "the record before it is not the one it followed: a record was removed, inserted or reordered")
            raise LedgerError(f"{where}: {name} no longer matches: {what}; {EDITED}")  # fmt: skip
        try:
            digest = canonical_digest({key: value for key, value in record.items() if key != "digest"})
        except ValueError:  # NaN or infinity: no record ddppm writes holds one
            digest = None
        if digest != record["digest"]:
            raise LedgerError(f"{where}: {name} no longer matches its digest: its run, date, method, ε, δ, μ, status "
                              f"or fingerprint was changed; {EDITED}")  # fmt: skip
        prev = record["digest"]
        numbers_ = [record["delta"]] + ([] if record["mu"] is None else [record["mu"]])
        if opening:
            numbers_.append(record["epsilon"])
        if not (isinstance(record["run"], str) and isinstance(record["date"], str)
                and all(is_number(value) and value >= 0 for value in numbers_)):  # fmt: skip
            raise LedgerError(f"{where} is corrupt: {name}'s epsilon, delta and mu must be numbers ≥ 0 (not bools), "
                              f"its run and date strings; {EDITED}")  # fmt: skip
        if opening:
            if record["run"] in statuses:
                raise LedgerError(f"{where} is corrupt: {name} opens a run already opened (a run is charged once); "
                                  f"{EDITED}")  # fmt: skip
            if record["fingerprint"] != state["fingerprint"]:
                what = "cleared" if state["fingerprint"] is None else "changed"
                raise LedgerError(f"{where}: its fingerprint was {what}: {name} was made for the records "
                                  f"{record['fingerprint']!r}, the header now says {state['fingerprint']!r}; "
                                  f"{EDITED}")  # fmt: skip
        elif statuses.get(record["run"]) not in SETTLES_FROM[record["status"]]:
            raise LedgerError(f"{where} is corrupt: {name} settles a run that is "
                              f"{statuses.get(record['run'], 'not opened before it')}; {EDITED}")  # fmt: skip
        statuses[record["run"]] = record["status"]
    return state


def ledger_of(budget: Any) -> PrivacyLedger | None:
    """``PrivatePCA``'s ``budget``: None, a :class:`PrivacyLedger`, or the path of one (checked when reserving)."""
    if budget is None or isinstance(budget, PrivacyLedger):
        return budget
    if isinstance(budget, str | Path):
        return PrivacyLedger(budget)
    raise LedgerError(f"budget: {type(budget).__name__} is not a ledger; give a PrivacyLedger or its file's path "
                      "(PrivacyLedger.create(path, dataset, epsilon, delta) starts one)")  # fmt: skip
