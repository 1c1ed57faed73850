"""The release across real processes (ddppm.federation on Flower 1.42's deployment engine, on loopback): through the
commands, ``ddppm coordinate`` with TLS and the parties' keys and three ``ddppm party``, each reading its own CSV
file and keeping its own ledger; the result equals the one-process fit; a party whose key is not registered is
refused; no party opens another party's file; no process is left. And a SuperNode killed mid-run (the tests'
harness, tests/federation/loopback.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ddppm import PrivacyLedger, PrivatePCA
from ddppm.federation.agreement import Agreement
from tests.federation.conftest import BOUNDS, SIZES, labels, split

pytest.importorskip("flwr", reason="the federation extra installs Flower")
from ddppm.federation.flower import OPEN_LOG  # noqa: E402
from tests.federation.loopback import descendants, federation, free_port, make_node_key, make_tls  # noqa: E402

pytestmark = pytest.mark.slow
COLUMNS = [f"x{i}" for i in range(13)]


def _party_files(folder: Path, rows: np.ndarray, agreement: Agreement, j: int) -> dict[str, object]:
    """Party j's own folder: its rows, its copy of the agreement, its ledger; its SuperNode's node config."""
    folder.mkdir()
    pd.DataFrame(rows, columns=COLUMNS).to_csv(folder / "rows.csv", index=False)
    (folder / "agreement.json").write_text(json.dumps(agreement.to_dict()))
    PrivacyLedger.create(folder / "ledger.json", f"party {j}'s records", 10.0, 1e-5)
    config: dict[str, object] = {"data-path": str(folder / "rows.csv"), "party-index": j,
                                 "agreement-path": str(folder / "agreement.json"),
                                 "ledger-path": str(folder / "ledger.json")}  # fmt: skip
    if agreement.noise == "simulation":  # what `ddppm party --testing-simulation-noise` sets: the party refuses it else
        config["testing-simulation-noise"] = True
    return config


def _warm_parties(running, wine, tmp_path: Path, agreement: Agreement) -> list:
    """Three parties as ``ddppm party`` runs them (warm), each with its own files, connected."""
    nodes = [running.supernode(f"party{j}", _party_files(tmp_path / f"party{j}", rows, agreement, j), warm=True)
             for j, rows in enumerate(split(wine))]  # fmt: skip
    for node in nodes:
        node.wait_for("SuperNode ID", 60)
    return nodes


def test_the_commands_release_across_processes_with_tls_and_node_keys_as_one_process_would(wine, tmp_path: Path):
    """``ddppm coordinate`` (a SuperLink with TLS and the parties' keys) and three ``ddppm party`` (SuperNodes), as a
    user runs them: Flower's own polling, no test shim."""
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "conventional", noise="simulation", seed=11)
    certificates = make_tls(tmp_path / "certs")
    (tmp_path / "coordinator").mkdir()
    (tmp_path / "coordinator" / "agreement.json").write_text(json.dumps(agreement.to_dict()))
    out = tmp_path / "coordinator" / "release.json"
    keys = [make_node_key(tmp_path / "keys", f"party{j}") for j in range(3)]
    port = free_port()
    ddppm = [sys.executable, "-m", "ddppm"]
    started: list[subprocess.Popen] = []

    def start(arguments: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
        process = subprocess.Popen([*ddppm, *arguments], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   start_new_session=True, env={**os.environ, **(env or {})})  # fmt: skip
        started.append(process)
        return process

    try:
        coordinator = start(["coordinate", "--agreement", str(tmp_path / "coordinator" / "agreement.json"),
                             "--out", str(out), "--certificates", str(tmp_path / "certs"), "--host", "127.0.0.1",
                             "--port", str(port), "--timeout", "120",
                             "--party-keys", *[str(public) for _, public in keys]])  # fmt: skip
        assert "waiting for 3 parties" in coordinator.stdout.readline()
        for j, rows in enumerate(split(wine)):
            config = _party_files(tmp_path / f"party{j}", rows, agreement, j)
            watch = {OPEN_LOG: str(tmp_path / f"opened{j}.log"),  # and each party's cache on its own "machine"
                     "DDPPM_CACHE_DIR": str(tmp_path / f"party{j}" / "cache")}  # fmt: skip
            start(["party", config["data-path"], "--agreement", config["agreement-path"], "--index", str(j),
                   "--ledger", config["ledger-path"], "--coordinator", f"127.0.0.1:{port}",
                   "--root-certificates", str(certificates["ca"]), "--key", str(keys[j][0]),
                   "--testing-simulation-noise"], watch)  # fmt: skip
        intruder, _ = make_node_key(tmp_path / "keys", "intruder")
        refused = start(["party", str(tmp_path / "party0" / "rows.csv"), "--agreement",
                         str(tmp_path / "party0" / "agreement.json"), "--index", "0", "--coordinator",
                         f"127.0.0.1:{port}", "--root-certificates", str(certificates["ca"]), "--key", str(intruder),
                         "--testing-simulation-noise"])  # fmt: skip
        assert refused.wait(timeout=60) != 0
        assert "Failed to activate SuperNode" in refused.stdout.read()
        assert coordinator.wait(timeout=300) == 0, coordinator.stdout.read()
    finally:
        for process in started:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in started:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
    release = json.loads(out.read_text())
    one = PrivatePCA(2, 5.0, 1e-6, BOUNDS, trust="local", method="conventional", noise="simulation",
                     random_state=11).fit(wine, parties=labels())  # fmt: skip
    np.testing.assert_allclose(np.array(release["components"]), one.components_, atol=1e-12)
    np.testing.assert_allclose(np.array(release["mean"]), one.mean_, rtol=1e-12)
    assert release["privacy"] == json.loads(json.dumps(one.privacy_.to_dict()))
    for j in range(3):
        ledger = json.loads((tmp_path / f"party{j}" / "ledger.json").read_text())
        assert [r["status"] for r in ledger["releases"]] == ["released"]
        opened = (tmp_path / f"opened{j}.log").read_text().splitlines()
        parties = [str(tmp_path / f"party{i}") for i in range(3)]
        # its rows: parsed by `ddppm party` before it connects and kept in its memory, no copy on disk; the watch
        # saw the files it opened while answering (its ledger)
        assert not (tmp_path / f"party{j}" / "cache").exists()
        assert str(tmp_path / f"party{j}" / "ledger.json") in opened
        others = [path for path in opened if path.startswith(tuple(parties)) and not path.startswith(parties[j])]
        assert others == [], f"party {j} opened {others}"
    time.sleep(1)
    table = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout.splitlines()
    assert [line for line in table if str(tmp_path) in line and "ps -eo" not in line] == []


@pytest.mark.parametrize("killed", ["supernode", "party"])
def test_a_supernode_killed_mid_run_is_named_and_nothing_is_released(wine, tmp_path: Path, killed: str):
    """Parties as ``ddppm party`` runs them. ``supernode``: party 2's SuperNode gets SIGKILL (it cannot unregister;
    the party's process sees it end and ends too); ``party``: party 2's own process gets SIGKILL, and its SuperNode
    must die with it. No process is left either way. (Flower's process per message is not killed here: under the
    suite's load its other parties' slow starts, not the dead one, hit the timeout; the same apps are tested in
    process, and ``benchmarks/bench_federation.py --per-message`` runs them on real processes.)"""
    options = {"iterations": 40, "topology": "ring", "consensus": 10}
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "balcan_decentralised", noise="simulation",
                          method_options=options)  # fmt: skip
    with federation(tmp_path / "flower", tls=False) as running:
        nodes = _warm_parties(running, wine, tmp_path, agreement)
        (tmp_path / "agreement.json").write_text(json.dumps(agreement.to_dict()))
        out = tmp_path / "release.json"
        # 30 s: under the full suite's load a live party's first noisy reply (its ledger charged) once took over 10 s,
        # so the slow live party, not the dead one, was named
        running.submit({"agreement-path": str(tmp_path / "agreement.json"), "out-path": str(out), "timeout": 30.0})
        ledger = tmp_path / "party2" / "ledger.json"
        deadline = time.monotonic() + 240  # generous: the whole suite shares two cores
        while not json.loads(ledger.read_text())["releases"] and time.monotonic() < deadline:
            time.sleep(0.05)  # party 2 has sent its first noisy reply
        assert json.loads(ledger.read_text())["releases"], "party 2 never replied"
        if killed == "party":
            os.kill(nodes[2].popen.pid, signal.SIGKILL)
        else:
            (supernode,) = descendants([nodes[2].popen.pid])
            os.kill(supernode, signal.SIGKILL)
        deadline = time.monotonic() + 240
        while not out.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert out.exists(), {p.name: p.lines[-10:] for p in running.processes}
        result = json.loads(out.read_text())
    assert set(result) == {"error"} and "party 2" in result["error"] and "nothing is released" in result["error"]
    # our timeout; Flower's heartbeat check; the SuperLink, once the dead node was removed (a warm party's SuperNode
    # ends gracefully and unregisters); or, killed mid-upload, the reply's parts given up after the timeout
    reasons = ("did not answer within 30 s", "Node Unavailable", "Message Unavailable",
               "Reply message objects are unavailable")  # fmt: skip
    assert any(reason in result["error"] for reason in reasons), result["error"]
    assert running.leftovers() == []
    for j in range(3):  # every party had sent its first reply: each ledger keeps it
        assert len(json.loads((tmp_path / f"party{j}" / "ledger.json").read_text())["releases"]) == 1


def test_a_run_of_another_agreement_is_refused_on_the_deployment_engine_with_one_word(wine, tmp_path: Path):
    """A coordinator that runs ddppm's app with another agreement than the parties accepted (here ε = 50 for 5):
    every ``ddppm party`` (warm) refuses the run before its app runs, the coordinator's error carries only the
    refusal's word, and no ledger is charged."""
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "conventional", seed=11)
    other = Agreement(2, 50.0, 1e-6, BOUNDS, SIZES, "conventional", seed=11)
    with federation(tmp_path / "flower", tls=False) as running:
        _warm_parties(running, wine, tmp_path, agreement)
        (tmp_path / "other.json").write_text(json.dumps(other.to_dict()))
        out = tmp_path / "release.json"
        running.submit({"agreement-path": str(tmp_path / "other.json"), "out-path": str(out), "timeout": 30.0})
        deadline = time.monotonic() + 240
        while not out.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert out.exists(), {p.name: p.lines[-10:] for p in running.processes}
        result = json.loads(out.read_text())
    assert set(result) == {"error"} and "refused: protocol" in result["error"], result
    assert "nothing is released" in result["error"] and str(tmp_path) not in result["error"]
    for j in range(3):
        assert json.loads((tmp_path / f"party{j}" / "ledger.json").read_text())["releases"] == []
