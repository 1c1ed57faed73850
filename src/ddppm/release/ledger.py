"""A privacy ledger per data set: what its holder has released, and a budget no release may pass (docs/release.md,
"A ledger per data set").

A ledger is one JSON file kept by whoever holds the records (a curator, or each party for its own rows): the data
set's name, a fingerprint of its records (SHA-256 of the float64 matrix, kept with the holder, never released),
the declared total budget (ε_B, δ_B), and one entry per release: date, run identifier, method, ε, δ and μ (null
for a release that is not Gaussian). Before anything is drawn, a fit asks the ledger to **reserve** its (ε, δ);
the ledger refuses if the releases so far composed with it would pass the budget (:func:`composed_delta`):

* every release Gaussian (μ_i-GDP): exactly, ``μ = √Σ μ_i²`` and δ_B must hold at ε_B for that μ (the
  certificate's own composition: Dong, Roth & Su 2022, Corollary 3.3);
* otherwise the basic sum: ``Σ ε_i ≤ ε_B`` and ``Σ δ_i ≤ δ_B`` (Dwork & Roth 2014, Theorem 3.16).

A release's μ is its target's, :func:`~ddppm.common_task.budget.gdp_mu` (ε, δ): a certified release has δ ≤ the
target at ε, so its own μ is at most that (a conservative record). The reservation is written (atomically, under
an exclusive lock on the file) with status ``pending``; it becomes ``released`` when the fit returns, and is
removed when the fit stops before releasing anything (nothing left the process). A run killed in between leaves
its entry pending, and a pending entry counts: the ledger never under-counts. Corrupt files, another data set's
ledger and a spent budget stop with :class:`LedgerError` before any noise is drawn.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import hashlib
import json
import math
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ddppm.common_task.budget import gdp_mu
from ddppm.common_task.certified import certified_delta
from ddppm.core.errors import ConfigError
from ddppm.core.io import write_text_atomic

LEDGER_FORMAT = "ddppm-ledger/1"
STATUSES = ("pending", "released")
ROUND_TRIP = 1e-9
"""Relative slack of the exact route: a release of exactly the budget, μ = gdp_mu(ε_B, δ_B), comes back as δ_B to
about 1e-12 (root finding), and must fit."""
ENTRY_KEYS = ("run", "date", "method", "epsilon", "delta", "mu", "status")


class LedgerError(ConfigError):
    """A ledger that cannot be used (unreadable, another data set's) or a release it refuses (budget spent)."""


def records_fingerprint(X: np.ndarray) -> str:
    """``sha256:…`` of the records (their shape and float64 bytes, C order): which data set a ledger covers."""
    array = np.ascontiguousarray(X, dtype=np.float64)
    digest = hashlib.sha256(f"{array.shape}".encode())
    digest.update(array.tobytes())
    return f"sha256:{digest.hexdigest()}"


def composed_delta(releases: Sequence[dict[str, Any]], budget_eps: float) -> tuple[str, float, float]:
    """What ``releases`` spend, composed (module docstring): ``("exact", ε_B, δ at ε_B of √Σμ²)`` when every one is
    Gaussian, else ``("basic", Σ ε, Σ δ)``."""
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


class PrivacyLedger:
    """The ledger file at ``path`` (module docstring). :meth:`create` starts one; ``PrivatePCA(..., budget=ledger)``
    and ``ddppm fit --ledger FILE`` reserve and record through :meth:`reserve`."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @classmethod
    def create(cls, path: str | Path, dataset: str, epsilon: float, delta: float) -> PrivacyLedger:
        """A new, empty ledger for data set ``dataset`` with total budget (``epsilon``, ``delta``); refuses to
        overwrite a ledger (its releases would be forgotten)."""
        path = Path(path)
        if path.exists():
            raise LedgerError(f"ledger: {path} exists; a ledger is never overwritten (its releases would be lost). "
                              "Open it with PrivacyLedger(path), or choose a new file for a new data set")  # fmt: skip
        if not isinstance(dataset, str) or not dataset.strip():
            raise LedgerError("ledger: name the data set it covers (dataset='...')")
        if not (isinstance(epsilon, int | float) and math.isfinite(epsilon) and epsilon > 0):
            raise LedgerError(f"ledger: the budget's epsilon {epsilon!r} must be a finite number > 0")
        if not (isinstance(delta, int | float) and 0 < delta < 1):
            raise LedgerError(f"ledger: the budget's delta {delta!r} must lie in (0, 1)")
        state = {"format": LEDGER_FORMAT, "dataset": dataset, "fingerprint": None,
                 "budget": {"epsilon": float(epsilon), "delta": float(delta)}, "releases": []}  # fmt: skip
        write_text_atomic(path, json.dumps(state, indent=2, ensure_ascii=False) + "\n")
        return cls(path)

    def state(self) -> dict[str, Any]:
        """The ledger's contents, checked (:class:`LedgerError` naming what is wrong)."""
        where = f"ledger {self.path}"
        if not self.path.is_file():
            raise LedgerError(f"{where}: no such file; create one first (PrivacyLedger.create(path, dataset, "
                              "epsilon, delta) or `ddppm ledger create`)")  # fmt: skip
        try:
            state = json.loads(self.path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise LedgerError(f"{where} is corrupt (not JSON: {error}); restore it from a copy. It is never "
                              "rebuilt: the releases it recorded would be forgotten") from None  # fmt: skip
        return _checked_state(state, where)

    def summary(self) -> dict[str, Any]:
        """The budget, what is spent (composed) and the releases: for ``ddppm ledger show``."""
        state = self.state()
        route, eps, delta = composed_delta(state["releases"], state["budget"]["epsilon"])
        return {"dataset": state["dataset"], "budget": state["budget"], "releases": state["releases"],
                "spent": {"composition": route, "epsilon": eps, "delta": delta}}  # fmt: skip

    @contextlib.contextmanager
    def reserve(self, records: np.ndarray, method: str, epsilon: float, delta: float,
                gaussian: bool) -> Iterator[dict[str, Any]]:  # fmt: skip
        """Reserve (ε, δ) for one release of ``records`` (module docstring); yields the entry. The body draws and
        releases, and may raise the entry's ``delta`` and ``mu`` to the certificate's (a calibration meets its target
        to 1e-9 relative); if it raises, the reservation is removed (nothing was released)."""
        if hasattr(records, "fingerprint"):  # rows read a block at a time (ddppm.release.stream): a pass
            fingerprint, shape = records.fingerprint(), records.shape()
        else:
            fingerprint, shape = records_fingerprint(records), records.shape
        entry = {"run": uuid.uuid4().hex, "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                 "method": method, "epsilon": float(epsilon), "delta": float(delta),
                 "mu": float(gdp_mu(epsilon, delta)) if gaussian else None, "status": "pending"}  # fmt: skip
        with self._locked():
            state = self.state()
            if state["fingerprint"] not in (None, fingerprint):
                raise LedgerError(f"ledger {self.path} covers data set {state['dataset']!r}, whose records differ "
                                  f"from these ({shape[0]} × {shape[1]}): a ledger counts one data "
                                  "set's releases; use that data set's own ledger, or create one for this")  # fmt: skip
            ok, words = within_budget([*state["releases"], entry], state["budget"])
            if not ok:
                spent = within_budget(state["releases"], state["budget"])[1] if state["releases"] else "nothing"
                raise LedgerError(f"ledger {self.path}: this release (ε = {epsilon:g}, δ = {delta:g}) would pass the "
                                  f"budget of {state['dataset']!r}: with it, {words}; so far spent: {spent}. "
                                  "Nothing was drawn. Ask for less, or stop releasing from this data set")  # fmt: skip
            state["fingerprint"] = fingerprint
            state["releases"].append(entry)
            self._write(state)
        reserved = dict(entry)
        try:
            yield entry
        except BaseException:
            self._settle(reserved, None)
            raise
        mu = None if reserved["mu"] is None else max(entry["mu"], reserved["mu"])
        self._settle(reserved, {"status": "released", "delta": max(entry["delta"], reserved["delta"]), "mu": mu})

    def spend(self, records: np.ndarray, method: str, epsilon: float, delta: float, gaussian: bool) -> dict[str, Any]:
        """Reserve and record at once, as ``released``: for a party of a federation, whose first noisy reply is
        already out of its hands (nothing it sends later can be taken back)."""
        with self.reserve(records, method, epsilon, delta, gaussian) as entry:
            return dict(entry)

    def _settle(self, reserved: dict[str, Any], update: dict[str, Any] | None) -> None:
        """Update the reserved entry (never below what was reserved), or remove it (``None``: nothing released)."""
        with self._locked():
            state = self.state()
            kept = []
            for entry in state["releases"]:
                if entry["run"] == reserved["run"]:
                    if update is None:
                        continue
                    entry = {**entry, **update}
                kept.append(entry)
            state["releases"] = kept
            self._write(state)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """An exclusive lock (a ``.lock`` file beside the ledger) across reading, checking and writing."""
        lock = self.path.with_name(f".{self.path.name}.lock")
        with open(lock, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _write(self, state: dict[str, Any]) -> None:
        write_text_atomic(self.path, json.dumps(state, indent=2, ensure_ascii=False) + "\n")


def _checked_state(state: Any, where: str) -> dict[str, Any]:
    """``state`` if it is a ledger of this format, else :class:`LedgerError` naming the first defect."""
    if not isinstance(state, dict) or state.get("format") != LEDGER_FORMAT:
        raise LedgerError(f"{where} is not a ddppm ledger (format {LEDGER_FORMAT!r} expected); it may be another "
                          "file given by mistake")  # fmt: skip
    budget = state.get("budget")
    if not (isinstance(budget, dict) and all(isinstance(budget.get(k), int | float) for k in ("epsilon", "delta"))
            and budget["epsilon"] > 0 and 0 < budget["delta"] < 1):  # fmt: skip
        raise LedgerError(f"{where} is corrupt: its budget {budget!r} needs epsilon > 0 and delta in (0, 1)")
    if not isinstance(state.get("dataset"), str) or not isinstance(state.get("releases"), list):
        raise LedgerError(f"{where} is corrupt: it needs a `dataset` name and a list of `releases`")
    if state.get("fingerprint") is not None and not str(state["fingerprint"]).startswith("sha256:"):
        raise LedgerError(f"{where} is corrupt: its fingerprint {state['fingerprint']!r} is not a sha256 digest")
    for index, entry in enumerate(state["releases"]):
        if not isinstance(entry, dict) or set(entry) != set(ENTRY_KEYS) or entry["status"] not in STATUSES:
            raise LedgerError(f"{where} is corrupt: release {index} must have exactly {list(ENTRY_KEYS)} with "
                              f"status in {list(STATUSES)}")  # fmt: skip
        numbers = [entry["epsilon"], entry["delta"]] + ([] if entry["mu"] is None else [entry["mu"]])
        if not all(isinstance(v, int | float) and math.isfinite(v) and v >= 0 for v in numbers):
            raise LedgerError(f"{where} is corrupt: release {index}'s epsilon, delta and mu must be numbers ≥ 0")
    return state


def ledger_of(budget: Any) -> PrivacyLedger | None:
    """``PrivatePCA``'s ``budget``: None, a :class:`PrivacyLedger`, or the path of one (checked when reserving)."""
    if budget is None or isinstance(budget, PrivacyLedger):
        return budget
    if isinstance(budget, str | Path):
        return PrivacyLedger(budget)
    raise LedgerError(f"budget: {type(budget).__name__} is not a ledger; give a PrivacyLedger or its file's path "
                      "(PrivacyLedger.create(path, dataset, epsilon, delta) starts one)")  # fmt: skip
