"""Attacks on the privacy ledger (ddppm.release.ledger), each performed and checked to be refused: a symbolic or hard
link that would fork it, a create that races another, permissions wider than the owner's, bools given as numbers,
edits of the file (zeroed spends, removed, reordered or forged records, a raised budget, a cleared fingerprint), a
run charged twice; and the settling of a run killed while pending (``ddppm ledger settle``), the upgrade of a
ledger of the old format, and what a hash chain cannot see."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np
import pytest

from ddppm.cli import main
from ddppm.core.io import write_text_atomic
from ddppm.release import ledger as ledger_module
from ddppm.release.ledger import (
    LEDGER_FORMAT,
    LedgerError,
    PrivacyLedger,
    RunAlreadyCharged,
    header_digest,
    records_fingerprint,
    sealed,
)

X = np.arange(12.0).reshape(6, 2)
EDITED = "edited outside ddppm; restore it from a copy"


def _spend(ledger: PrivacyLedger, eps: float = 1.0, run: str | None = None, records: np.ndarray = X) -> dict:
    """One release that is not Gaussian (basic composition: ε adds up), charged at once."""
    return ledger.spend(records, "amin", eps, 0.0, gaussian=False, run=run)


def _pending(ledger: PrivacyLedger, monkeypatch: pytest.MonkeyPatch, run: str, eps: float = 1.0) -> None:
    """A reservation whose process is killed before it settles: its record stays pending."""
    with monkeypatch.context() as patch:
        patch.setattr(PrivacyLedger, "_settle", lambda *a, **k: None)
        with ledger.reserve(X, "amin", eps, 0.0, gaussian=False, run=run):
            pass


def _rechained(state: dict) -> dict:
    """``state`` with every ``prev`` and ``digest`` recomputed: an editor who rewrites the whole file."""
    prev, chain = header_digest(state), []
    for record in state["releases"]:
        record = sealed({k: v for k, v in record.items() if k not in ("prev", "digest")}, prev)
        chain.append(record)
        prev = record["digest"]
    return {**state, "releases": chain}


def _modes(path: Path) -> int:
    return path.stat().st_mode & 0o777


@pytest.fixture
def umask_zero():
    """No umask: a file's permissions are then exactly what its writer asked for."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


# 1. a symbolic link and its target are one ledger; a hard link is refused


def test_a_symbolic_link_and_its_target_count_one_budget(tmp_path):
    real, alias = tmp_path / "real.json", tmp_path / "alias.json"
    PrivacyLedger.create(real, "x", epsilon=2.0, delta=1e-5)
    alias.symlink_to(real)
    # Before: each name's first write replaced the link by a copy, and the two copies took 4 fits on a 2-fit budget.
    _spend(PrivacyLedger(alias))
    _spend(PrivacyLedger(alias))
    for name in (real, alias):
        with pytest.raises(LedgerError, match="would pass the budget"):
            _spend(PrivacyLedger(name))
    assert alias.is_symlink() and alias.resolve() == real.resolve()
    assert len(PrivacyLedger(real).state()["releases"]) == 2
    assert (tmp_path / ".real.json.lock").exists() and not (tmp_path / ".alias.json.lock").exists()


def test_a_hard_linked_ledger_is_refused_since_a_write_would_fork_it(tmp_path):
    real, other = tmp_path / "real.json", tmp_path / "other.json"
    PrivacyLedger.create(real, "x", epsilon=2.0, delta=1e-5)
    os.link(real, other)
    for name in (real, other):
        with pytest.raises(LedgerError, match=f"{name.name} has 2 hard links.*Remove the other links"):
            _spend(PrivacyLedger(name))
    assert json.loads(real.read_text())["releases"] == []


# 2. create is exclusive, and the file is its owner's only


def test_a_create_that_lost_the_race_past_the_existence_check_still_refuses(tmp_path, monkeypatch):
    path = tmp_path / "l.json"
    PrivacyLedger.create(path, "x", epsilon=1.0, delta=1e-5)
    written = path.read_bytes()
    monkeypatch.setattr(Path, "exists", lambda self: False)  # the other create wrote its file just after the check
    with pytest.raises(LedgerError, match="l.json exists; a ledger is never overwritten"):
        PrivacyLedger.create(path, "x", epsilon=99.0, delta=1e-5)  # before: overwrote, with ε_B = 99
    monkeypatch.undo()
    assert path.read_bytes() == written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.json"]  # no temporary left behind


def test_of_concurrent_creates_exactly_one_succeeds(tmp_path):
    path, start = tmp_path / "l.json", threading.Barrier(8)
    outcomes: list[float | str] = []

    def create(eps: float) -> None:
        start.wait()
        try:
            PrivacyLedger.create(path, "x", epsilon=eps, delta=1e-5)
            outcomes.append(eps)
        except LedgerError as error:
            outcomes.append(str(error))

    threads = [threading.Thread(target=create, args=(float(i + 1),)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    won = [o for o in outcomes if isinstance(o, float)]
    assert len(won) == 1 and all("never overwritten" in o for o in outcomes if isinstance(o, str))
    assert PrivacyLedger(path).state()["budget"]["epsilon"] == won[0]


def test_a_ledger_is_mode_0600_when_created_and_after_every_write(tmp_path, umask_zero, monkeypatch):
    path = tmp_path / "l.json"
    ledger = PrivacyLedger.create(path, "x", epsilon=5.0, delta=1e-5)
    assert _modes(path) == 0o600  # before: 0666 minus the umask (here 0666: anyone could read it)
    _spend(ledger)
    assert _modes(path) == 0o600
    _pending(ledger, monkeypatch, "killed")
    ledger.settle("killed", "withdrawn")
    assert _modes(path) == 0o600
    other = tmp_path / "other.txt"  # every other caller of write_text_atomic keeps 0666 minus the umask
    write_text_atomic(other, "text")
    assert _modes(other) == 0o666


# 3. bools are not numbers


@pytest.mark.parametrize(("epsilon", "delta", "match"), [(True, 1e-5, "epsilon True"), (1.0, True, "delta True")])
def test_create_refuses_a_bool_for_a_number(tmp_path, epsilon, delta, match):
    with pytest.raises(LedgerError, match=f"{match}.*not a bool"):
        PrivacyLedger.create(tmp_path / "l.json", "x", epsilon=epsilon, delta=delta)  # before: ε_B = True = 1
    assert not (tmp_path / "l.json").exists()


def test_a_release_refuses_a_bool_for_a_number(tmp_path):
    ledger = PrivacyLedger.create(tmp_path / "l.json", "x", epsilon=5.0, delta=1e-5)
    with pytest.raises(LedgerError, match="epsilon True must be a number"):
        _spend(ledger, eps=True)
    assert ledger.state()["chain"] == []


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda s: s["budget"].update(epsilon=True), "budget .* numbers \\(not bools\\)"),
        (lambda s: s["releases"][0].update(epsilon=True), "record 0 .*numbers ≥ 0 \\(not bools\\)"),
        (lambda s: s["releases"][0].update(mu=False), "record 0 .*numbers ≥ 0 \\(not bools\\)"),
    ],
)
def test_a_bool_in_the_file_is_refused_even_with_the_digests_recomputed(tmp_path, edit, match):
    path = tmp_path / "l.json"
    ledger = PrivacyLedger.create(path, "x", epsilon=5.0, delta=1e-5)
    ledger.spend(X, "analyze_gauss", 1.0, 1e-6, gaussian=True)
    state = json.loads(path.read_text())
    edit(state)
    path.write_text(json.dumps(_rechained(state)))
    with pytest.raises(LedgerError, match=match):
        ledger.state()


# 4. the file is tamper-evident


def _three_runs(path: Path, monkeypatch: pytest.MonkeyPatch) -> PrivacyLedger:
    """A ledger (ε_B = 4) holding 3 runs of ε = 1: two spent at once, one reserved then released (4 records)."""
    ledger = PrivacyLedger.create(path, "x", epsilon=4.0, delta=1e-5)
    _spend(ledger, run="a")
    _spend(ledger, run="b")
    with ledger.reserve(X, "amin", 1.0, 0.0, gaussian=False, run="c"):
        pass
    assert [(r["run"], r["status"]) for r in ledger.state()["chain"]] == [
        ("a", "released"), ("b", "released"), ("c", "pending"), ("c", "released")]  # fmt: skip
    return ledger


def _other(state: dict) -> None:
    state["fingerprint"] = records_fingerprint(X + 1)


def _forged_withdrawal(state: dict) -> None:
    """A settlement withdrawing run 'a', chained after the last record, with a digest made up (not computed)."""
    state["releases"].append({"run": "a", "date": "2026-12-01T00:00:00+00:00", "status": "withdrawn", "delta": 0.0,
                              "mu": None, "prev": state["releases"][-1]["digest"], "digest": "sha256:" + "0" * 64})


TAMPERING = {
    "zeroed first spend": (lambda s: s["releases"][0].update(epsilon=0.0), "record 0 \\(run 'a'.*its digest"),
    "zeroed middle spend": (lambda s: s["releases"][1].update(epsilon=0.0), "record 1 \\(run 'b'.*its digest"),
    "withdrawn instead of released": (lambda s: s["releases"][3].update(status="withdrawn"), "record 3 .*its digest"),
    "first record removed": (lambda s: s["releases"].pop(0), "record 0 \\(run 'b'.*header.*records before it"),
    "middle record removed": (lambda s: s["releases"].pop(1), "record 1 \\(run 'c'.*removed, inserted or reordered"),
    "reordered": (lambda s: s["releases"].insert(0, s["releases"].pop(1)), "record 0 \\(run 'b'.*no longer matches"),
    "budget raised": (lambda s: s["budget"].update(epsilon=40.0), "record 0 .*the budget or the data set's name"),
    "data set renamed": (lambda s: s.update(dataset="y"), "record 0 .*the budget or the data set's name"),
    "fingerprint cleared": (lambda s: s.update(fingerprint=None), "fingerprint was cleared"),
    "fingerprint changed": (_other, "fingerprint was changed"),
    "forged withdrawal": (_forged_withdrawal, "record 4 \\(run 'a', withdrawn\\) no longer matches its digest"),
    "old format claimed": (lambda s: s.update(format="ddppm-ledger/1"), "old format.*ddppm ledger upgrade"),
}


@pytest.mark.parametrize("attack", list(TAMPERING))
def test_an_edit_of_the_file_is_refused_and_nothing_is_charged(tmp_path, monkeypatch, attack):
    path = tmp_path / "l.json"
    ledger = _three_runs(path, monkeypatch)
    state = json.loads(path.read_text())
    edit, match = TAMPERING[attack]
    edit(state)
    path.write_text(json.dumps(state, indent=2))
    edited = path.read_bytes()
    # Before: each edit was read as it stands (zeroed, removed and withdrawn spends freed budget for more fits).
    with pytest.raises(LedgerError, match=match) as refused:
        _spend(ledger, eps=0.5)
    assert str(path) in str(refused.value)
    if attack != "old format claimed":
        assert EDITED in str(refused.value)
    with pytest.raises(LedgerError):
        ledger.summary()
    assert path.read_bytes() == edited


def test_what_a_hash_chain_cannot_see_a_whole_rewrite_or_dropped_newest_records(tmp_path, monkeypatch):
    """Documented limits (module docstring): nothing in the chain is secret. The head digest that ``ddppm ledger
    show`` prints is what a copy kept elsewhere compares."""
    path = tmp_path / "l.json"
    ledger = _three_runs(path, monkeypatch)
    honest = ledger.summary()["head"]
    state = json.loads(path.read_text())
    state["releases"][0]["epsilon"] = 0.0
    path.write_text(json.dumps(_rechained(state)))  # every digest recomputed
    assert ledger.summary()["spent"]["epsilon"] == 2.0 and ledger.summary()["head"] != honest
    del state["releases"][2:]
    path.write_text(json.dumps(_rechained(state)))  # the newest records dropped
    assert ledger.summary()["records"] == 2 and ledger.summary()["head"] != honest


def test_an_old_ledger_is_refused_then_upgraded_keeping_its_releases(tmp_path, capsys):
    path = tmp_path / "old.json"
    entry = {"run": "f" * 32, "date": "2026-11-29T00:00:00+00:00", "method": "amin", "epsilon": 1.5, "delta": 0.0,
             "mu": None, "status": "released"}  # fmt: skip
    old = {"format": "ddppm-ledger/1", "dataset": "x", "fingerprint": records_fingerprint(X),
           "budget": {"epsilon": 2, "delta": 1e-5}, "releases": [entry]}  # fmt: skip
    path.write_text(json.dumps(old))
    with pytest.raises(LedgerError, match="old format 'ddppm-ledger/1'.*`ddppm ledger upgrade .*old.json`"):
        _spend(PrivacyLedger(path))
    assert main(["ledger", "upgrade", str(path)]) == 0
    assert "old.json.v1" in capsys.readouterr().out
    assert json.loads((tmp_path / "old.json.v1").read_text()) == old
    state = PrivacyLedger(path).state()
    assert state["format"] == LEDGER_FORMAT and state["releases"] == [entry]
    with pytest.raises(LedgerError, match="would pass the budget"):  # the old release still counts
        _spend(PrivacyLedger(path))
    _spend(PrivacyLedger(path), eps=0.5)
    assert main(["ledger", "upgrade", str(path)]) == 2
    assert "only a ledger of format ['ddppm-ledger/1'] is upgraded" in capsys.readouterr().err


# 5. one run is charged once


def test_a_run_identifier_is_charged_once(tmp_path, monkeypatch):
    path = tmp_path / "l.json"
    ledger = PrivacyLedger.create(path, "x", epsilon=5.0, delta=1e-5)
    assert _spend(ledger, run="flower:17:ab12cd34")["run"] == "flower:17:ab12cd34"
    written = path.read_bytes()
    with pytest.raises(RunAlreadyCharged, match="run 'flower:17:ab12cd34' is already charged \\(released\\)"):
        _spend(ledger, run="flower:17:ab12cd34")  # before: no run keyword; a retried party charged again
    body = []
    with pytest.raises(RunAlreadyCharged), ledger.reserve(X, "amin", 1.0, 0.0, False, run="flower:17:ab12cd34"):
        body.append("drawn")
    assert body == [] and path.read_bytes() == written
    _pending(ledger, monkeypatch, "killed")
    ledger.settle("killed", "withdrawn")
    with pytest.raises(RunAlreadyCharged, match="already charged \\(withdrawn\\)"):  # a withdrawn id stays used
        _spend(ledger, run="killed")
    assert issubclass(RunAlreadyCharged, LedgerError) and "RunAlreadyCharged" in ledger_module.__all__
    with pytest.raises(LedgerError, match="run identifier must be a non-empty printable string"):
        _spend(ledger, run=17)
    untagged = [_spend(ledger)["run"] for _ in range(2)]  # no run given: a new identifier each time
    assert len(set(untagged)) == 2 and all(len(run) == 32 for run in untagged)


def test_the_positional_spend_of_callers_still_records_one_released_run(tmp_path):
    ledger = PrivacyLedger.create(tmp_path / "l.json", "x", epsilon=5.0, delta=1e-5)
    entry = ledger.spend(X, "analyze_gauss", 1.0, 1e-6, True)
    assert entry["status"] == "released" and entry["mu"] > 0
    assert [(r["run"], r["status"]) for r in ledger.state()["chain"]] == [(entry["run"], "released")]


# 6. settling a pending run


def test_a_run_withdrawn_by_hand_that_then_releases_is_counted_again(tmp_path):
    ledger = PrivacyLedger.create(tmp_path / "l.json", "x", epsilon=1.0, delta=1e-5)
    with ledger.reserve(X, "amin", 1.0, 0.0, gaussian=False, run="alive"):
        ledger.settle("alive", "withdrawn")  # an operator took the live run for a dead one
    assert [r["status"] for r in ledger.state()["chain"]] == ["pending", "withdrawn", "released"]
    assert ledger.summary()["spent"]["epsilon"] == 1.0


def test_settle_lists_and_settles_pending_runs_and_only_those(tmp_path, monkeypatch, capsys):
    path = tmp_path / "l.json"
    ledger = PrivacyLedger.create(path, "x", epsilon=2.0, delta=1e-5)
    _pending(ledger, monkeypatch, "killed:1", eps=1.5)
    assert main(["ledger", "show", str(path)]) == 0
    shown = capsys.readouterr().out
    assert "killed:1  amin" in shown and "[pending]  (pending: counted until settled)" in shown
    assert f"ddppm ledger settle {path} --run ID" in shown and "chain head after 1 record(s): sha256:" in shown
    assert main(["ledger", "settle", str(path)]) == 0
    assert "killed:1" in (listed := capsys.readouterr().out) and "1 pending run(s)" in listed
    with pytest.raises(LedgerError, match="would pass the budget"):  # a pending run counts
        _spend(ledger)
    for wrong, message in [(["--run", "killed:1"], "say what became of it, --released"),
                           (["--withdrawn"], "--withdrawn: name the pending run with --run ID"),
                           (["--run", "nope", "--withdrawn"], "no run 'nope'")]:  # fmt: skip
        assert main(["ledger", "settle", str(path), *wrong]) == 2
        assert message in capsys.readouterr().err
    assert main(["ledger", "settle", str(path), "--run", "killed:1", "--withdrawn"]) == 0
    assert "is withdrawn; it counts nothing" in capsys.readouterr().out
    assert main(["ledger", "settle", str(path), "--run", "killed:1", "--released"]) == 2
    assert "run 'killed:1' is withdrawn, not pending" in capsys.readouterr().err
    _spend(ledger, run="next")  # the budget it held is free again
    _pending(PrivacyLedger(path), monkeypatch, "killed:2", eps=0.5)
    assert main(["ledger", "settle", str(path), "--run", "killed:2", "--released"]) == 0
    assert "it stays counted" in capsys.readouterr().out
    assert main(["ledger", "settle", str(path), "--run", "next", "--withdrawn"]) == 2
    assert "run 'next' is released, not pending" in capsys.readouterr().err
    assert main(["ledger", "show", str(path)]) == 0
    shown = capsys.readouterr().out
    assert "[withdrawn]  (counts nothing)" in shown and shown.count("[released]") == 2 and "[pending]" not in shown
    assert [(r["run"], r["status"]) for r in ledger.state()["chain"]] == [
        ("killed:1", "pending"), ("killed:1", "withdrawn"), ("next", "released"), ("killed:2", "pending"),
        ("killed:2", "released")]  # fmt: skip
