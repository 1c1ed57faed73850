"""``ddppm coordinate``'s lifecycle, attacked (ddppm.federation.cli): SIGTERM or SIGINT ends every process it
started (the SuperLink, its SuperExec, the run's ServerApp) and removes its temporary folder (the SuperLink's
state, the run's secrets); a ServerApp that dies is noticed at once, not waited for forever; a failed run leaves
the previous release file as it was; the whole wait is bounded. Real processes on loopback (``--insecure``)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("flwr", reason="the federation extra installs Flower")
from ddppm.core.errors import ConfigError  # noqa: E402
from ddppm.federation import cli  # noqa: E402
from ddppm.federation.agreement import Agreement  # noqa: E402
from tests.federation.conftest import BOUNDS, SIZES  # noqa: E402
from tests.federation.loopback import QUIET, Process, free_port  # noqa: E402
from tests.processes import alive, descendants  # noqa: E402

pytestmark = pytest.mark.slow


def _until(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.1)
    raise TimeoutError(f"no {what} within {timeout} s")


def _coordinator(folder: Path, *extra: str) -> tuple[Process, Path, Path]:
    """``ddppm coordinate --insecure`` on a free port, its temporary folder under ``folder / "tmp"``; returns the
    process, that folder and the release file's path. It has started once its ServerApp runs."""
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "conventional")
    (folder / "agreement.json").write_text(json.dumps(agreement.to_dict()))
    (folder / "tmp").mkdir()
    out = folder / "release.json"
    env = {**os.environ, **QUIET, "TMPDIR": str(folder / "tmp")}
    command = [sys.executable, "-m", "ddppm", "coordinate", "--agreement", str(folder / "agreement.json"),
               "--out", str(out), "--insecure", "--port", str(free_port()), *extra]  # fmt: skip
    process = Process("coordinator", command, env, folder / "coordinator.log")
    process.wait_for("waiting for 3 parties", 60)
    _until(lambda: cli.serverapps(process.popen.pid), 60, "ServerApp")
    return process, folder / "tmp", out


def _stopped(process: Process, timeout: float = 40) -> int:
    try:
        return process.popen.wait(timeout=timeout)
    finally:
        if process.popen.poll() is None:
            os.killpg(process.popen.pid, signal.SIGKILL)


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_every_process_the_coordinator_started_and_removes_its_folder(tmp_path: Path, number):
    """Before: SIGTERM left the SuperLink (its Control API open), its SuperExec and the ServerApp running, and the
    FLWR_HOME folder on disk."""
    process, temporary, _ = _coordinator(tmp_path, "--timeout", "120")
    tree = descendants([process.popen.pid])
    (home,) = temporary.iterdir()
    assert len(tree) >= 3 and (home / "superlink.log").exists()  # the SuperLink, its SuperExec, the ServerApp
    ports = [int(line) for line in (home / "control-port").read_text().split()]
    os.kill(process.popen.pid, number)
    assert _stopped(process) == 128 + number
    _until(lambda: not any(alive(pid) for pid in tree), 10, "end of every descendant")
    assert list(temporary.iterdir()) == []
    assert any(f"stopped by {signal.Signals(number).name}" in line for line in process.lines), process.lines
    with pytest.raises(OSError):  # nothing listens on the Control API's port any more
        socket.create_connection(("127.0.0.1", ports[0]), timeout=1).close()


def test_a_serverapp_that_dies_is_named_at_once_and_the_previous_release_is_kept(tmp_path: Path):
    """Before: after the ServerApp died the coordinator waited forever (whatever --timeout), and the previous release
    had been deleted before the run started."""
    (tmp_path / "release.json").write_text("the previous release\n")
    process, temporary, out = _coordinator(tmp_path, "--timeout", "20")
    tree = descendants([process.popen.pid])
    assert out.read_text() == "the previous release\n"  # kept while the run runs
    time.sleep(3)  # mid-run: the ServerApp has taken its run (killed before, Flower's SuperExec starts another)
    (serverapp,) = cli.serverapps(process.popen.pid)
    killed = time.monotonic()
    os.kill(serverapp, signal.SIGKILL)
    assert _stopped(process) == 2
    assert time.monotonic() - killed < 15  # not --timeout × steps, not forever
    assert any("ServerApp ended without a release" in line for line in process.lines), process.lines
    assert out.read_text() == "the previous release\n"
    _until(lambda: not any(alive(pid) for pid in tree), 10, "end of every descendant")
    assert list(temporary.iterdir()) == []


def test_a_failed_run_leaves_the_previous_release_as_it_was(tmp_path: Path):
    """Before: the ServerApp wrote its error document over ``--out``. Now it writes inside the temporary folder, and
    only a complete release replaces ``--out`` (os.replace)."""
    (tmp_path / "release.json").write_text("the previous release\n")
    process, temporary, out = _coordinator(tmp_path, "--timeout", "2")  # no party comes
    assert _stopped(process) == 2
    assert any("0 of 3 parties connected within 2 s" in line for line in process.lines), process.lines
    assert out.read_text() == "the previous release\n" and list(temporary.iterdir()) == []


class _Link:
    pid = os.getpid()

    def poll(self) -> None:
        return None


@pytest.fixture
def waiting(tmp_path, monkeypatch):
    """:func:`ddppm.federation.cli._run_release` against a SuperLink that never releases: no ServerApp process is
    seen, ``flwr run`` answers run 7, and ``flwr ls`` answers ``status``; no Flower process is started."""
    monkeypatch.setattr(cli, "LAUNCH_SECONDS", 0.0)
    monkeypatch.setattr(cli, "serverapps", lambda pid: [])
    monkeypatch.setattr(cli, "_flwr", lambda home, *a: subprocess.CompletedProcess(a, 0, '{"run-id": "7"}', ""))
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "conventional")

    def run(status: str, timeout: float) -> tuple[float, str, list[int]]:
        args = argparse.Namespace(agreement=tmp_path / "agreement.json", out=tmp_path / "release.json",
                                  timeout=timeout)  # fmt: skip
        asked: list[int] = []
        monkeypatch.setattr(cli, "_run_status", lambda home, run_id: asked.append(run_id) or status)
        started = time.monotonic()
        with pytest.raises(ConfigError) as error:
            cli._run_release(args, agreement, tmp_path, _Link())
        return time.monotonic() - started, str(error.value), asked

    return run


def test_the_wait_for_a_release_is_bounded_by_the_timeout_and_the_plan(waiting):
    seconds, message, _ = waiting("running", 0.02)
    steps = cli._planned_steps(Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "conventional"))
    assert 3 <= steps < cli.STEPS_FALLBACK  # the public plan's count, not the constant
    assert "no release within" in message and f"up to {steps + 2} steps" in message
    assert seconds < 0.02 * (steps + 2) + 2.0


def test_the_wait_ends_when_the_superlink_reports_the_run_finished(waiting):
    seconds, message, asked = waiting("finished:failed", 10.0)  # the bound: minutes; the status ends it in seconds
    assert "reports the run finished:failed without a release" in message and asked == [7]
    assert seconds < 10


def test_the_serverapp_refuses_a_run_whose_digest_is_not_its_agreement_files(tmp_path: Path):
    """``ddppm coordinate`` puts the agreement's digest in the run config; an agreement file changed since (another
    ε, the same path) is refused before any party is asked anything."""
    from flwr.app import Context, RecordDict

    from ddppm.federation import flower

    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "conventional")
    (tmp_path / "agreement.json").write_text(json.dumps(Agreement(2, 50.0, 1e-6, BOUNDS, SIZES,
                                                                  "conventional").to_dict()))  # fmt: skip

    class NoGrid:
        def get_node_ids(self):
            raise AssertionError("the grid was asked")

    config = {"agreement-path": str(tmp_path / "agreement.json"), "out-path": str(tmp_path / "release.json"),
              "timeout": 1.0, "agreement-digest": agreement.digest()}  # fmt: skip
    with pytest.raises(ConfigError, match="the run is for agreement"):
        flower._release(NoGrid(), Context(1, 0, {}, RecordDict(), config))
