"""A killed test run leaves no Slurm behind, and a cluster whose owner died is cleaned up by the next start.

Real daemons (Debian's slurm-wlm and munge, tests/cluster/slurm.sh): each test checks that they were really
running before it kills anything, and that they are gone after.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cluster.harness import (
    CHILDREN_GRACE_S,
    STOP_TIMEOUT_S,
    alive,
    cluster_processes,
    daemon_pids,
    slurm_sh,
    stop,
)

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
DEFAULT_CONF_LINK = Path("/run/slurm/conf/slurm.conf")


@pytest.fixture(scope="module", autouse=True)
def slurm_installed():
    if platform.system() != "Linux" or os.geteuid() != 0 or shutil.which("bash") is None:
        pytest.skip("the Slurm teardown tests need Linux, root and bash")
    installed = slurm_sh("install", timeout=1200)
    if installed.returncode != 0:
        pytest.skip(f"cannot install slurm-wlm/munge: {installed.stderr[-800:]}")


def _wait(predicate, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


def _all_running(state_dir: Path) -> bool:
    pids = daemon_pids(state_dir)
    return all(alive(pid) for pid in pids.values())


def _holder(state: Path, ready: Path, *snakefile: Path | str, pause: str = "",
            stop_pause: str = "") -> subprocess.Popen:  # fmt: skip
    """A test run's stand-in (``harness.hold``), in a process group of its own, as ``timeout`` runs a command;
    ``pause``: its cluster's start waits 60 s after starting that daemon (``slurm.sh``'s SLURM_TEST_START_PAUSE);
    ``stop_pause``: its cluster's stop waits 5 s after stopping that one (SLURM_TEST_STOP_PAUSE)."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.cluster.harness", "hold", str(state), str(ready), *map(str, snakefile)],
        cwd=REPO,
        env={**os.environ, "SLURM_TEST_START_PAUSE": pause, "SLURM_TEST_STOP_PAUSE": stop_pause},
        process_group=0,
        # As a terminal's Ctrl-C finds it, however this test run was started (a shell starts background jobs
        # with SIGINT ignored, and the child would inherit that).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.mark.parametrize("sig,twice", [(signal.SIGTERM, False), (signal.SIGINT, False), (signal.SIGTERM, True)],
                         ids=["SIGTERM", "SIGINT", "SIGTERM-as-timeout-sends-it"])  # fmt: skip
def test_a_killed_owner_stops_its_cluster(tmp_path, sig, twice):
    """The fixture's cluster (tests/cluster/harness.running_cluster) held by a subprocess, which gets SIGTERM or
    SIGINT: no daemon is left and the default-configuration link is gone. ``twice``: as ``timeout`` sends it, to
    the process and then to its process group (a second signal that found the default action back in place ended
    the run before its cluster was stopped: issue 63)."""
    state, ready = tmp_path / "cluster", tmp_path / "ready"
    holder = _holder(state, ready)
    try:
        assert _wait(ready.exists, 150), (
            f"the cluster never came up:\n{holder.stdout.read() if holder.poll() is not None else ''}"
        )
        pids = daemon_pids(state)
        assert all(alive(pid) for pid in pids.values()), f"daemons not running before the kill: {pids}"
        assert DEFAULT_CONF_LINK.is_symlink() and os.readlink(DEFAULT_CONF_LINK).startswith(str(state))
        holder.send_signal(sig)
        if twice:  # the second while the handler runs (timeout's two sends can be this far apart on a busy machine)
            time.sleep(0.3)
            os.killpg(holder.pid, sig)
        holder.wait(timeout=CHILDREN_GRACE_S + STOP_TIMEOUT_S + 60)  # one stop (the handler's), however loaded
        left = {name: pid for name, pid in pids.items() if alive(pid)}
        assert not left, f"daemons left after {sig.name}: {left}"
        assert not DEFAULT_CONF_LINK.is_symlink() or not os.readlink(DEFAULT_CONF_LINK).startswith(str(state))
        assert holder.returncode != 0, "the holder ended because of the signal, not by itself"
    finally:
        if holder.poll() is None:
            holder.kill()
        stop(state)


def test_an_ignored_signal_stays_ignored(tmp_path):
    """A process that ignores SIGINT (a background job) keeps ignoring it inside ``stop_on_signals``: no handler
    that would stop the cluster and then leave the process running; SIGTERM is still watched."""
    from tests.cluster.harness import stop_on_signals

    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with stop_on_signals(tmp_path / "none"):
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            assert callable(signal.getsignal(signal.SIGTERM))
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)


def test_a_stale_cluster_is_stopped_by_the_next_start_and_a_live_ones_is_not(tmp_path):
    """A cluster whose recorded owner is dead (a SIGKILLed run) is stopped by the next start, which goes on; a
    cluster whose owner is alive makes the next start fail with the clear error, and keeps running."""
    gone = subprocess.Popen(["true"])
    gone.wait()  # a PID that no longer runs
    stale, fresh, other = tmp_path / "stale", tmp_path / "fresh", tmp_path / "other"
    try:
        started = slurm_sh("start", stale, timeout=150, owner=gone.pid)
        assert started.returncode == 0, started.stderr[-2000:]
        stale_pids = daemon_pids(stale)
        assert all(alive(pid) for pid in stale_pids.values()), stale_pids

        again = slurm_sh("start", fresh, timeout=150)  # owner: this process, alive
        assert again.returncode == 0, again.stderr[-2000:]
        assert "stopping that cluster" in again.stderr
        assert not any(alive(pid) for pid in stale_pids.values()), "the stale cluster's daemons are gone"
        assert _all_running(fresh)

        refused = slurm_sh("start", other, timeout=150)
        assert refused.returncode != 0 and "still running" in refused.stderr, refused.stderr[-2000:]
        assert _all_running(fresh), "a cluster whose owner is alive is left alone"
        assert not any(alive(pid) for pid in daemon_pids(other).values())
    finally:
        for state in (stale, fresh, other):
            stop(state)
    assert not any(alive(pid) for state in (stale, fresh) for pid in daemon_pids(state).values())


def _ended(holder: subprocess.Popen, sig: signal.Signals, group: bool = False) -> None:
    """``sig`` to the holder alone (its handler must end its children), or to its whole process group, as
    ``timeout`` and a terminal's Ctrl-C send it (the children get it at the same moment as the holder)."""
    if group:
        os.killpg(holder.pid, sig)
    else:
        holder.send_signal(sig)
    holder.wait(timeout=CHILDREN_GRACE_S + STOP_TIMEOUT_S + 60)
    assert holder.returncode != 0, "the holder ended because of the signal, not by itself"


@pytest.mark.parametrize("moment", ["munged", "slurmctld"])
def test_a_signal_during_the_clusters_start_leaves_no_daemon_and_the_next_start_passes(tmp_path, moment):
    """SIGINT while ``slurm.sh start`` is bringing the daemons up (paused after munged, or after slurmctld): the
    start's trap and the holder's stop leave no daemon of that cluster (found in /proc, not from pid files); the
    next start succeeds."""
    state, ready, after = tmp_path / "cluster", tmp_path / "ready", tmp_path / "after"
    holder = _holder(state, ready, pause=moment)
    try:
        assert _wait(lambda: (state / f"{moment}.pid").exists() or holder.poll() is not None, 120)
        time.sleep(0.5)  # in the pause
        assert not ready.exists() and holder.poll() is None, "the start had finished: no signal during it"
        assert cluster_processes(state), f"{moment} was running"
        _ended(holder, signal.SIGINT)
        assert _wait(lambda: not cluster_processes(state), 10), f"daemons left: {cluster_processes(state)}"
        again = slurm_sh("start", after, timeout=150)
        assert again.returncode == 0, again.stderr[-2000:]
        assert _all_running(after)
    finally:
        if holder.poll() is None:
            holder.kill()
        stop(state)
        stop(after)
    assert not cluster_processes(after)


SLEEPER = """
rule all:
    input:
        "done.txt",

rule sleeper:
    output:
        "done.txt",
    resources:
        runtime=5,
    shell:
        "sleep 97; touch {output}"
"""


def _processes_with(text: str) -> list[str]:
    """The live processes whose command line holds ``text`` (read whole from /proc: ``ps`` cuts long lines)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if entry.name.isdigit() and text in line and int(entry.name) != os.getpid() and alive(int(entry.name)):
            found.append(f"{entry.name} {line}")
    return found


def _signalled_while_snakemake_runs(tmp_path: Path, job: str, *where: str, start_within: float) -> None:
    """A holder runs the :data:`SLEEPER` workflow (its job ``job``) through Slurm, or with ``where=("local",)`` on
    this machine in a session of its own; once the job runs, SIGTERM to the holder's group (as ``timeout`` sends
    it): no daemon, no Snakemake and no job's process is left."""
    state, ready, work = tmp_path / "cluster", tmp_path / "ready", tmp_path / "work"
    work.mkdir()
    (work / "Snakefile").write_text(SLEEPER.replace("sleep 97", job))
    holder = _holder(state, ready, work / "Snakefile", *where)
    try:
        assert _wait(ready.exists, 150), holder.stdout.read() if holder.poll() is not None else "no cluster"
        assert _wait(lambda: _processes_with(job), start_within), (work / "snakemake.log").read_text()[-3000:]
        _ended(holder, signal.SIGTERM, group=True)
        assert _wait(lambda: not cluster_processes(state), 10), f"daemons left: {cluster_processes(state)}"
        assert _wait(lambda: not _processes_with(str(work)) and not _processes_with(job), 10), (
            _processes_with(str(work)) + _processes_with(job)
        )
    finally:
        if holder.poll() is None:
            holder.kill()
        stop(state)


def test_a_signal_while_snakemake_runs_jobs_on_slurm_leaves_no_daemon_no_snakemake_and_no_job(tmp_path):
    """SIGTERM to a test run's process group (as ``timeout`` sends it) while its Snakemake driver has a job running
    on the cluster: the driver, which got the signal too, is waited for first (it cancels its job while slurmctld
    still answers), then the cluster is stopped; no daemon, no Snakemake and no job's process is left."""
    _signalled_while_snakemake_runs(tmp_path, "sleep 97", start_within=120)


def test_a_signal_during_a_local_snakemake_run_leaves_no_daemon_no_snakemake_and_no_job(tmp_path):
    """SIGTERM to the group while the holder runs Snakemake locally in a session of its own, as the tests' shared
    tiny run does (tests/conftest.py: the group signal does not reach it): the handler ends it (SIGINT: Snakemake
    kills its job), then stops the cluster; no daemon, no Snakemake and no job is left."""
    _signalled_while_snakemake_runs(tmp_path, "sleep 96", "local", start_within=60)


def test_a_signal_during_the_teardown_leaves_no_daemon_and_the_next_start_passes(tmp_path):
    """SIGTERM to the group while the test run's own teardown stops the cluster (paused 5 s after slurmd is
    stopped, slurmctld and munged still up): the handler ends the interrupted stop and stops the cluster again;
    no daemon is left, the default-configuration link is gone, and the next start passes."""
    state, ready = tmp_path / "cluster", tmp_path / "ready"
    holder = _holder(state, ready, stop_pause="slurmd")
    try:
        assert _wait(ready.exists, 150), holder.stdout.read() if holder.poll() is not None else "no cluster"
        pids = daemon_pids(state)
        Path(f"{ready}.release").write_text("")  # the holder's teardown: slurm.sh stop
        assert _wait(lambda: not alive(pids["slurmd"]) and alive(pids["slurmctld"]), 60), "the stop never paused"
        _ended(holder, signal.SIGTERM, group=True)
        assert _wait(lambda: not cluster_processes(state), 10), f"daemons left: {cluster_processes(state)}"
        assert not DEFAULT_CONF_LINK.is_symlink() or not os.readlink(DEFAULT_CONF_LINK).startswith(str(state))
        log = Path(f"{state}.teardown.log").read_text()
        assert re.search(r"signal 15: ending [1-9]\d* child processes", log), log  # it found the stop running
    finally:
        if holder.poll() is None:
            holder.kill()
        stop(state)
    again = tmp_path / "again"
    try:
        assert slurm_sh("start", again, timeout=150).returncode == 0
    finally:
        stop(again)
