"""``ddppm agreement`` and ``ddppm party`` (ddppm.federation.cli): the agreement written from the command line is
the one the API builds; bad arguments and a party's bad rows stop with exit 2 and one message, before anything
connects or is drawn. (A whole run through these commands is docs/federation.md's walk-through; the processes
themselves are tested in test_flower.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ddppm.cli import main
from ddppm.federation.agreement import Agreement
from tests.federation.conftest import SIZES, split


@pytest.fixture
def files(tmp_path: Path, wine) -> Path:
    for j, rows in enumerate(split(wine)):
        pd.DataFrame(rows, columns=[f"x{i}" for i in range(13)]).to_csv(tmp_path / f"party{j}.csv", index=False)
    (tmp_path / "bounds.yaml").write_text("source: test, a wide box\nall_features: [-50, 2000]\n")
    return tmp_path


def _agreement(folder: Path, *extra: str) -> int:
    return main(["agreement", "--out", str(folder / "agreement.json"), "--bounds", str(folder / "bounds.yaml"),
                 "--k", "2", "--eps", "5", "--delta", "1e-6", "--sizes", "60,60,58", *extra])  # fmt: skip


def test_the_agreement_command_writes_the_agreement_the_api_builds(files):
    assert _agreement(files, "--method", "cape", "--trust", "secure_aggregation", "--seed", "3") == 0
    written = Agreement.from_dict(json.loads((files / "agreement.json").read_text()))
    bounds = {"source": "test, a wide box", "all_features": [-50, 2000]}
    assert written == Agreement(2, 5.0, 1e-6, bounds, SIZES, "cape", trust="secure_aggregation", seed=3)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--method", "ldppca_gaussian"], "no federated protocol yet"),
        (["--method", "nope"], "is not a method"),
        (["--method", "cape"], "needs trust 'secure_aggregation'"),
        (["--method", "conventional", "--sizes", "60;60"], "--sizes"),
    ],
)
def test_a_bad_agreement_is_refused_and_nothing_written(files, capsys, extra, message):
    assert _agreement(files, *extra) == 2
    assert message in capsys.readouterr().err and not (files / "agreement.json").exists()


def test_a_party_checks_its_rows_before_it_connects(files, capsys):
    assert _agreement(files, "--method", "conventional") == 0
    rows = pd.read_csv(files / "party1.csv")
    rows.iloc[3, 2] = np.nan
    rows.to_csv(files / "party1.csv", index=False)
    party = ["party", str(files / "party1.csv"), "--agreement", str(files / "agreement.json"), "--index", "1",
             "--coordinator", "127.0.0.1:1", "--insecure"]  # fmt: skip
    assert main(party) == 2
    assert "empty, NaN or infinite" in capsys.readouterr().err
    party[1], party[5] = str(files / "party0.csv"), "2"
    assert main(party) == 2  # party 0's 60 rows are not party 2's 58
    assert "the agreement says 58" in capsys.readouterr().err
    assert main(["party", str(files / "party0.csv"), "--agreement", str(files / "agreement.json"), "--index", "0",
                 "--coordinator", "127.0.0.1:1"]) == 2  # fmt: skip
    assert "--root-certificates and --key" in capsys.readouterr().err


def _party_command(files: Path, *extra: str, coordinator: str = "127.0.0.1:1") -> list[str]:
    return ["party", str(files / "party1.csv"), "--agreement", str(files / "agreement.json"), "--index", "1",
            "--coordinator", coordinator, *extra]  # fmt: skip


@pytest.fixture
def started(monkeypatch) -> list:
    """The SuperNode commands ``ddppm party`` would start (nothing is started)."""
    pytest.importorskip("flwr", reason="the federation extra installs Flower")
    from ddppm.federation import warm

    commands: list = []
    monkeypatch.setattr(warm, "run_node", lambda command, port, env: commands.append(command) or 0)
    return commands


@pytest.mark.parametrize("coordinator", ["192.0.2.7:9092", "coordinator.example.org:9092", "[2001:db8::1]:9092"])
def test_a_party_refuses_insecure_to_a_coordinator_off_this_machine(files, capsys, started, coordinator):
    """Without TLS anyone on the way reads every reply: ``--insecure`` only towards loopback."""
    assert _agreement(files, "--method", "conventional") == 0
    assert main(_party_command(files, "--insecure", coordinator=coordinator)) == 2
    err = capsys.readouterr().err
    assert "--insecure" in err and "--root-certificates" in err and "--key" in err and coordinator in err
    assert started == []


@pytest.mark.parametrize("coordinator", ["127.0.0.1:9092", "localhost:9092", "[::1]:9092"])
def test_a_party_takes_insecure_to_a_coordinator_on_this_machine(files, started, coordinator):
    assert _agreement(files, "--method", "conventional") == 0
    assert main(_party_command(files, "--insecure", coordinator=coordinator)) == 0
    (command,) = started
    assert "--insecure" in command and command[command.index("--superlink") + 1] == coordinator


def test_a_party_prints_what_it_agrees_to_before_it_connects(files, capsys, started):
    assert _agreement(files, "--method", "conventional") == 0
    agreement = Agreement.from_dict(json.loads((files / "agreement.json").read_text()))
    assert main(_party_command(files, "--insecure")) == 0
    out = capsys.readouterr().out
    for text in ("ε = 5", "δ = 1e-06", "k = 2", "method conventional", "trust local", "noise secure",
                 "3 parties of sizes 60, 60, 58", "index 1, 60 rows", agreement.digest()[:12]):  # fmt: skip
        assert text in out, text
    assert out.index(agreement.digest()[:12]) < out.index("connecting to")
    (command,) = started
    assert "testing-simulation-noise" not in command[command.index("--node-config") + 1]


def test_a_party_refuses_simulation_noise_unless_told_it_is_a_test(files, capsys, started):
    """Simulation noise protects nothing: party 0 draws the one-process fit's noise from the public seed."""
    simulation = Agreement(2, 5.0, 1e-6, {"source": "test, a wide box", "all_features": [-50, 2000]}, SIZES,
                           "conventional", noise="simulation")  # fmt: skip
    (files / "agreement.json").write_text(json.dumps(simulation.to_dict()))
    assert main(_party_command(files, "--insecure")) == 2
    err = capsys.readouterr().err
    assert "simulation" in err and "protects nothing" in err and started == []
    assert main(_party_command(files, "--insecure", "--testing-simulation-noise")) == 0
    assert "noise simulation" in capsys.readouterr().out
    (command,) = started
    assert "testing-simulation-noise=true" in command[command.index("--node-config") + 1].split()


def _coordinate(folder: Path, *extra: str) -> list[str]:
    return ["coordinate", "--agreement", str(folder / "agreement.json"), "--out", str(folder / "release.json"),
            *extra]  # fmt: skip


@pytest.fixture
def no_superlink(monkeypatch) -> list:
    """``ddppm coordinate``'s settings when it would start the SuperLink (it is not started: the run stops there)."""
    from ddppm.core.errors import ConfigError
    from ddppm.federation import cli

    seen: list = []

    def instead(settings, home, started):
        seen.append((settings, home))
        raise ConfigError("no SuperLink in this test")

    monkeypatch.setattr(cli, "_start_superlink", instead)
    return seen


def test_the_coordinator_checks_its_certificates_before_it_starts_anything(files, capsys, monkeypatch, no_superlink):
    """A relative or wrong ``--certificates`` fails at once, naming it, before any process or folder exists."""
    import tempfile

    assert _agreement(files, "--method", "conventional") == 0
    monkeypatch.chdir(files)
    monkeypatch.setattr(tempfile, "tempdir", str(files / "temporary"))
    (files / "temporary").mkdir()
    (files / "key.pub").write_text("ecdsa-sha2-nistp384 AAAA test\n")
    keys = ["--party-keys", "key.pub", "key.pub", "key.pub"]
    assert main(_coordinate(files, "--certificates", "certs", *keys)) == 2
    err = capsys.readouterr().err
    assert "--certificates" in err and str(files / "certs") in err and "ca.crt" in err
    assert no_superlink == [] and list((files / "temporary").iterdir()) == []
    assert main(_coordinate(files, "--certificates", "certs", "--party-keys", "key.pub", "nope.pub", "key.pub")) == 2
    assert "--party-keys" in capsys.readouterr().err and no_superlink == []
    (files / "certs").mkdir()
    for name in ("ca.crt", "server.pem", "server.key"):
        (files / "certs" / name).write_text("test\n")
    assert main(_coordinate(files, "--certificates", "certs", *keys)) == 2
    ((settings, home),) = no_superlink
    assert settings.certificates == files / "certs" and settings.certificates.is_absolute()
    assert all(key.is_absolute() for key in settings.party_keys) and settings.out.is_absolute()
    assert settings.host == "0.0.0.0" and not home.exists()  # the temporary folder is removed on the way out


def test_an_insecure_coordinator_listens_on_loopback_unless_told_and_then_warns(files, capsys, no_superlink):
    assert _agreement(files, "--method", "conventional") == 0
    assert main(_coordinate(files, "--insecure")) == 2
    assert no_superlink[-1][0].host == "127.0.0.1" and "WARNING" not in capsys.readouterr().err
    assert main(_coordinate(files, "--insecure", "--host", "0.0.0.0")) == 2
    err = capsys.readouterr().err
    assert no_superlink[-1][0].host == "0.0.0.0"
    assert "WARNING" in err and "ANYONE WHO REACHES PORT" in err and "READ EVERY MESSAGE" in err
