"""The release across real processes (ddppm.federation.flower on Flower 1.42's deployment engine, on loopback): a
SuperLink with TLS and SuperNode authentication, three SuperNodes each reading its own CSV file and keeping its
own ledger, ``flwr run`` of ddppm's app; the result equals the one-process fit; a SuperNode whose key is not
registered is refused; no party opens another party's file; no process is left."""

from __future__ import annotations

import json
import os
import signal
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
from tests.federation.loopback import APP, federation, make_node_key  # noqa: E402

pytestmark = pytest.mark.slow
COLUMNS = [f"x{i}" for i in range(13)]


def _party_files(folder: Path, rows: np.ndarray, agreement: Agreement, j: int) -> dict[str, object]:
    """Party j's own folder: its rows, its copy of the agreement, its ledger; its SuperNode's node config."""
    folder.mkdir()
    pd.DataFrame(rows, columns=COLUMNS).to_csv(folder / "rows.csv", index=False)
    (folder / "agreement.json").write_text(json.dumps(agreement.to_dict()))
    PrivacyLedger.create(folder / "ledger.json", f"party {j}'s records", 10.0, 1e-5)
    return {"data-path": str(folder / "rows.csv"), "agreement-path": str(folder / "agreement.json"),
            "party-index": j, "ledger-path": str(folder / "ledger.json")}  # fmt: skip


def test_a_release_across_processes_with_tls_and_node_keys_is_the_one_process_fit(wine, tmp_path: Path):
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "conventional", noise="simulation", seed=11)
    with federation(tmp_path / "flower", tls=True) as running:
        nodes = []
        for j, rows in enumerate(split(wine)):
            node_config = _party_files(tmp_path / f"party{j}", rows, agreement, j)
            private, public = make_node_key(tmp_path / "keys", f"party{j}")
            running.register(public)
            watch = {OPEN_LOG: str(tmp_path / f"opened{j}.log"),  # and each party's cache on its own "machine"
                     "DDPPM_CACHE_DIR": str(tmp_path / f"party{j}" / "cache")}  # fmt: skip
            nodes.append(running.supernode(f"party{j}", node_config, key=private, env=watch))
        for node in nodes:
            node.wait_for("SuperNode ID", 60)
        intruder, _ = make_node_key(tmp_path / "keys", "intruder")
        refused = running.supernode("intruder", {"data-path": "none"}, key=intruder, retries=0)
        refused.popen.wait(timeout=60)
        (tmp_path / "coordinator").mkdir()
        (tmp_path / "coordinator" / "agreement.json").write_text(json.dumps(agreement.to_dict()))
        out = tmp_path / "coordinator" / "release.json"
        release = running.run({"agreement-path": str(tmp_path / "coordinator" / "agreement.json"),
                               "out-path": str(out)}, out)  # fmt: skip
    assert "error" not in release, release
    one = PrivatePCA(2, 5.0, 1e-6, BOUNDS, trust="local", method="conventional", noise="simulation",
                     random_state=11).fit(wine, parties=labels())  # fmt: skip
    np.testing.assert_allclose(np.array(release["components"]), one.components_, atol=1e-12)
    np.testing.assert_allclose(np.array(release["mean"]), one.mean_, rtol=1e-12)
    assert release["privacy"] == json.loads(json.dumps(one.privacy_.to_dict()))
    assert refused.popen.returncode != 0
    for j in range(3):
        ledger = json.loads((tmp_path / f"party{j}" / "ledger.json").read_text())
        assert [r["status"] for r in ledger["releases"]] == ["released"]
    assert running.killed == [] and running.leftovers() == []  # every process stopped on SIGTERM
    for j in range(3):
        opened = (tmp_path / f"opened{j}.log").read_text().splitlines()
        assert str(tmp_path / f"party{j}" / "rows.csv") in opened
        parties = [str(tmp_path / f"party{i}") for i in range(3)]
        others = [path for path in opened if path.startswith(tuple(parties)) and not path.startswith(parties[j])]
        assert others == [], f"party {j} opened {others}"


def test_a_supernode_killed_mid_run_is_named_and_nothing_is_released(wine, tmp_path: Path):
    options = {"iterations": 40, "topology": "ring", "consensus": 10}
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "balcan_decentralised", noise="simulation",
                          method_options=options)  # fmt: skip
    with federation(tmp_path / "flower", tls=False) as running:
        nodes = [running.supernode(f"party{j}", _party_files(tmp_path / f"party{j}", rows, agreement, j))
                 for j, rows in enumerate(split(wine))]  # fmt: skip
        for node in nodes:
            node.wait_for("SuperNode ID", 60)
        (tmp_path / "agreement.json").write_text(json.dumps(agreement.to_dict()))
        out = tmp_path / "release.json"
        config = {"agreement-path": str(tmp_path / "agreement.json"), "out-path": str(out), "timeout": 8.0}
        done = running.flwr("run", str(APP), "local", "--format", "json", "--run-config",
                            " ".join(f"{k}={json.dumps(v)}" for k, v in config.items()))  # fmt: skip
        assert done.returncode == 0, done.stderr
        ledger = tmp_path / "party2" / "ledger.json"
        deadline = time.monotonic() + 120
        while not json.loads(ledger.read_text())["releases"] and time.monotonic() < deadline:
            time.sleep(0.05)  # party 2 has sent its first noisy reply
        os.killpg(nodes[2].popen.pid, signal.SIGKILL)
        while not out.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        result = json.loads(out.read_text())
    assert set(result) == {"error"} and "party 2" in result["error"] and "nothing is released" in result["error"]
    assert "did not answer within 8 s" in result["error"]
    assert running.leftovers() == []
    for j in range(3):  # every party had sent its first reply: each ledger keeps it
        assert len(json.loads((tmp_path / f"party{j}" / "ledger.json").read_text())["releases"]) == 1
