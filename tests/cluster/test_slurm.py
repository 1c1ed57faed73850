"""Run the pipeline through Snakemake's Slurm executor on a real single-node Slurm.

The cluster is Debian's ``slurm-wlm`` + ``munge``, started on localhost by
``tests/cluster/slurm.sh`` in a temporary directory (see tests/cluster/README.md).
Jobs are submitted by ``snakemake-executor-plugin-slurm`` with ``profiles/slurm``;
nothing here schedules anything itself.

* ``test_toy_workflow_runs_on_slurm``: a self-contained toy workflow (Parquet and
  CSV outputs, rule-level and profile-level resources) proves the harness and the
  profile, and checks that the resources of ``profiles/slurm`` reach ``sbatch``.
* ``test_pipeline_on_slurm_matches_local``: the real pipeline on
  ``tests/config/tiny.yaml``, whole locally and representative targets through Slurm;
  every Parquet and CSV result of the Slurm run must equal the local one.

Proof that jobs went through Slurm does not need an accounting database (there is
none): for every job Snakemake reports as submitted, the executor's log under
``.snakemake/slurm_logs/``, slurmctld's ``sched: Allocate JobId=...`` (or backfill
``Started JobId=...``) and ``_job_complete: JobId=... WEXITSTATUS 0`` log lines, and the job's record in
``squeue --states=all`` (kept for MinJobAge = 3600 s), state COMPLETED.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from ddppm.core.io import MEASURED_COLUMNS
from ddppm.testing import copy_checkout
from tests.cluster.harness import alive, daemon_pids, running_cluster
from tests.conftest import TINY, TINY_RESULTS

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
SLURM_SH = REPO / "tests" / "cluster" / "slurm.sh"
SLURM_PROFILE = REPO / "profiles" / "slurm"
VENV_BIN = Path(sys.executable).parent  # the interpreter running pytest: the project's venv

INSTALL_TIMEOUT_S = 1200  # apt-get update + install on a slow mirror
# Bounds for one Snakemake run.  The toy workflow needs ~10 s locally and ~45 s on
# Slurm.  The pipeline test's targets (SLURM_TARGETS, ~20 Slurm jobs) need a few minutes
# on Slurm on a 2-CPU machine: every Slurm job pays ~8 s of Snakemake start-up (twice:
# batch step and srun step) and the node runs only nproc jobs at once.  Override with
# DDPPM_CLUSTER_{LOCAL,SLURM}_TIMEOUT (seconds).
LOCAL_RUN_TIMEOUT_S = int(os.environ.get("DDPPM_CLUSTER_LOCAL_TIMEOUT", "300"))
SLURM_RUN_TIMEOUT_S = int(os.environ.get("DDPPM_CLUSTER_SLURM_TIMEOUT", "900"))
# First status query this many seconds after a submission, and then between queries
# (the profile keeps the plugin's 40 s and Snakemake's 10 s, which suit a real cluster
# but would make this test wait up to 50 s per DAG level).  MinJobAge >= 3 * 2, so
# squeue is still trusted.
STATUS_CHECK_DELAY_S = 2

# Columns that legitimately differ between two runs (timestamps of writing).
VOLATILE_COLUMNS = {"written_at"} | MEASURED_COLUMNS  # times measured, not computed
# Both runs execute the same code on the same machine; allow only round-off that
# a different BLAS thread count could cause.
RTOL, ATOL = 1e-9, 1e-12


# --------------------------------------------------------------------- helpers
def _run(cmd, *, cwd=None, env=None, timeout):
    """Run cmd, never raising on a non-zero exit; returns (CompletedProcess, seconds)."""
    t0 = time.monotonic()
    try:
        proc = subprocess.run(
            [str(c) for c in cmd],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr or ""
        proc = subprocess.CompletedProcess(exc.cmd, 124, out, err + f"\n[timed out after {timeout}s]")
    return proc, time.monotonic() - t0


def _tail(proc, n=60):
    text = (proc.stdout or "") + "\n" + (proc.stderr or "")
    return "\n".join(text.splitlines()[-n:])


def _local_env(workdir=None):
    """Environment for Snakemake: the venv first on PATH, no inherited Slurm job variables.

    If workdir has a src/ (a copy of this repository), it goes first on PYTHONPATH:
    the venv's editable install points at the live checkout, which other people may
    be editing while the runs take minutes; each run must use its own snapshot.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_", "SRUN_"))}
    env["PATH"] = os.pathsep.join([str(VENV_BIN), env.get("PATH", "")])
    if workdir is not None and (Path(workdir) / "src").is_dir():
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(workdir) / "src"), env.get("PYTHONPATH")]))
    return env


def _slurm_env(cluster, workdir=None):
    """As _local_env, plus our SLURM_CONF and the Slurm binaries on PATH (sbatch passes it all on)."""
    env = _local_env(workdir)
    env["SLURM_CONF"] = cluster["conf"]
    env["PATH"] = os.pathsep.join([str(VENV_BIN), "/usr/sbin", "/usr/bin", env["PATH"]])
    return env


def _snakemake():
    exe = VENV_BIN / "snakemake"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "snakemake"]


def _slurm_args():
    """The cluster run: exactly profiles/slurm (see profiles/default for why `none`)."""
    return [
        "--profile", str(SLURM_PROFILE),
        "--workflow-profile", "none",
        "--slurm-init-seconds-before-status-checks", str(STATUS_CHECK_DELAY_S),
        "--seconds-between-status-checks", str(STATUS_CHECK_DELAY_S),
        "--max-threads", str(os.cpu_count() or 1),  # the test node has only nproc CPUs
    ]  # fmt: skip


def _run_snakemake_on_slurm(workdir, extra, cluster, capsys, label):
    proc, secs = _run(
        [*_snakemake(), *extra, *_slurm_args()],
        cwd=workdir,
        env=_slurm_env(cluster, workdir),
        timeout=SLURM_RUN_TIMEOUT_S,
    )
    with capsys.disabled():
        print(f"\n[cluster] {label}: Slurm run took {secs:.1f} s (rc={proc.returncode})")
    assert proc.returncode == 0, f"Snakemake on Slurm failed (rc={proc.returncode}):\n{_tail(proc)}"
    return proc, secs


def _run_snakemake_locally(workdir, extra, capsys, label):
    proc, secs = _run(
        [*_snakemake(), *extra, "--cores", "2"],
        cwd=workdir,
        env=_local_env(workdir),
        timeout=LOCAL_RUN_TIMEOUT_S,
    )
    with capsys.disabled():
        print(f"\n[cluster] {label}: local run took {secs:.1f} s (rc={proc.returncode})")
    assert proc.returncode == 0, f"local Snakemake run failed (rc={proc.returncode}):\n{_tail(proc)}"
    return proc, secs


# "Job 3 has been submitted with SLURM jobid 7 (log: /…/.snakemake/slurm_logs/rule_x/…/7.log)."
SUBMITTED = re.compile(r"Job \d+ has been submitted with SLURM jobid (\d+) \(log: (.+?)\)\.$", re.MULTILINE)


def _assert_went_through_slurm(workdir, proc, cluster):
    """sacct-free proof that every job of this run went through Slurm.

    Returns {slurm jobid: (rule, state, min_memory, time_limit)} from squeue.
    """
    out = proc.stdout + "\n" + proc.stderr
    submitted = {jobid: Path(log) for jobid, log in SUBMITTED.findall(out)}
    assert submitted, "Snakemake submitted no job to Slurm: was the slurm executor used at all?"

    # 1. The executor's log of each job (profiles/slurm sets slurm-keep-successful-logs),
    #    .snakemake/slurm_logs/rule_<rule>/<wildcards>/<jobid>.log, written by the job.
    logdir = (Path(workdir) / ".snakemake" / "slurm_logs").resolve()
    rule_of = {}
    for jobid, log in submitted.items():
        assert log.is_file() and log.stat().st_size > 0, f"Slurm job {jobid}: no log {log}"
        parts = log.resolve().relative_to(logdir).parts
        assert parts[0].startswith("rule_"), f"unexpected log path {log}"
        rule_of[jobid] = parts[0].removeprefix("rule_")

    # 2. slurmctld started each job on the node and saw it exit with status 0.
    ctld_log = Path(cluster["dir"], "log", "slurmctld.log").read_text()
    # main scheduler: "sched: Allocate JobId=N ..."; backfill: "sched/backfill: _start_job: Started JobId=N ..."
    allocated = set(re.findall(r"(?:sched: Allocate|_start_job: Started) JobId=(\d+) ", ctld_log))
    exited_ok = set(re.findall(r"_job_complete: JobId=(\d+) WEXITSTATUS 0\b", ctld_log))
    assert set(submitted) <= allocated, f"slurmctld never allocated {sorted(set(submitted) - allocated)}"
    assert set(submitted) <= exited_ok, f"no clean exit in slurmctld.log for {sorted(set(submitted) - exited_ok)}"

    # 3. squeue still knows every job (MinJobAge=3600 in slurm.sh), named after the
    #    executor's run ID, COMPLETED, with the rule in the comment.
    m = re.search(r"SLURM run ID: (\S+)", out)
    assert m, "no 'SLURM run ID' in Snakemake's output"
    q, _ = _run(
        ["squeue", "--states=all", "--noheader", "--name", m.group(1), "--format=%i|%k|%T|%m|%l"],
        env=_slurm_env(cluster),
        timeout=30,
    )
    assert q.returncode == 0, f"squeue failed: {_tail(q)}"
    jobs = {}
    for line in q.stdout.splitlines():
        jobid, comment, state, mem, limit = line.strip().split("|")
        jobs[jobid] = (comment.removeprefix("rule_").split("_wildcards_")[0], state, mem, limit)
    assert set(jobs) == set(submitted), f"squeue jobs {sorted(jobs)} != submitted {sorted(submitted)}"
    not_done = {j: v for j, v in jobs.items() if v[1] != "COMPLETED"}
    assert not not_done, f"Slurm jobs not COMPLETED: {not_done}"
    wrong_rule = {j: (v[0], rule_of[j]) for j, v in jobs.items() if v[0] != rule_of[j]}
    assert not wrong_rule, f"squeue comment and log directory disagree: {wrong_rule}"
    return jobs


def _comparable(df: pd.DataFrame) -> pd.DataFrame:
    df = df.drop(columns=[c for c in df.columns if c in VOLATILE_COLUMNS])
    df.attrs = {}  # Parquet key-value metadata restored by pandas (e.g. written_at)
    return df


def _assert_same_results(
    local_dir: Path, slurm_dir: Path, results_dir: str = "results", subset: bool = False
) -> list[Path]:
    """Every <results_dir>/**/*.parquet|csv of the local run exists, with equal data, in the Slurm run; with
    ``subset`` (the Slurm run built some targets only), every such file of the Slurm run exists, equal, locally."""
    first, second = (slurm_dir, local_dir) if subset else (local_dir, slurm_dir)
    listed = Path(first) / results_dir
    files = sorted(
        p.relative_to(first) for pattern in ("*.parquet", "*.csv") for p in listed.rglob(pattern) if p.is_file()
    )
    assert files, f"the run produced no Parquet/CSV file under {listed}"
    for rel in files:
        other = Path(second) / rel
        assert other.is_file(), f"{rel} exists after one run but not after the other"
        read = pd.read_parquet if rel.suffix == ".parquet" else pd.read_csv
        a, b = _comparable(read(Path(local_dir) / rel)), _comparable(read(other))
        try:
            pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=RTOL, atol=ATOL)
        except AssertionError as exc:
            raise AssertionError(f"{rel} differs between the local and the Slurm run:\n{exc}") from None
    return files


def _copy_repo(dest: Path) -> None:
    """Copy tracked + untracked-but-not-ignored files of the repository to dest (and link the peers' environment)."""
    copy_checkout(REPO, dest)


# --------------------------------------------------------------------- fixture
@pytest.fixture(scope="module")
def slurm_cluster(tmp_path_factory):
    """A running single-node Slurm (munged, slurmctld, slurmd); always stopped afterwards."""
    if platform.system() != "Linux":
        pytest.skip("the Slurm cluster test needs Linux")
    if os.geteuid() != 0:
        pytest.skip("the Slurm cluster test needs root (apt-get, slurmd runs jobs as root)")
    if shutil.which("bash") is None:
        pytest.skip("bash not found")

    proc, secs = _run(["bash", SLURM_SH, "install"], timeout=INSTALL_TIMEOUT_S)
    if proc.returncode != 0:
        pytest.skip(f"cannot install slurm-wlm/munge ({secs:.0f} s): {_tail(proc, 15)}")

    state_dir = tmp_path_factory.mktemp("slurm-cluster")
    daemons: dict = {}
    try:
        # stopped on exit, on a failure and on SIGTERM/SIGINT too (tests/cluster/harness.py); a SIGKILLed run's
        # cluster is stopped by the next start, which finds its owner gone
        with running_cluster(state_dir) as proc:
            daemons = daemon_pids(state_dir)
            m = re.search(r"^export SLURM_CONF=(\S+)$", proc.stdout, re.MULTILINE)
            assert m, f"slurm.sh start printed no SLURM_CONF line:\n{_tail(proc)}"
            yield {"dir": str(state_dir), "conf": m.group(1)}
    except RuntimeError as exc:
        pytest.fail(str(exc))
    left = {n: pid for n, pid in daemons.items() if alive(pid)}
    if left:  # stop is designed never to fail
        pytest.fail(f"slurm.sh stop left daemons running: {left}")


# ----------------------------------------------------------------------- tests
TOY_SNAKEFILE = r"""
import pandas as pd

SEEDS = [1, 2]

rule all:
    input:
        "results/toy/delta_curve.csv",
        "results/toy/summary.csv",
        "results/toy/calibration.parquet",

# Light rule with its own resources (they beat default-resources of the profile).
rule simulate:
    output:
        "results/toy/sim_{seed}.parquet",
    resources:
        mem_mb=300,
        runtime=5,
    run:
        import numpy as np
        rng = np.random.default_rng(int(wildcards.seed))
        pd.DataFrame({"seed": int(wildcards.seed), "x": rng.normal(size=1000)}).to_parquet(output[0])

# Named like a heavy rule of the pipeline: gets set-resources of profiles/slurm.
rule ddppm_calibrate:
    input:
        expand("results/toy/sim_{seed}.parquet", seed=SEEDS),
    output:
        "results/toy/calibration.parquet",
    run:
        df = pd.concat([pd.read_parquet(f) for f in input])
        df.groupby("seed")["x"].agg(["mean", "std"]).reset_index().to_parquet(output[0])

# No resources at all: gets default-resources of profiles/slurm.
rule summary:
    input:
        expand("results/toy/sim_{seed}.parquet", seed=SEEDS),
    output:
        "results/toy/summary.csv",
    run:
        df = pd.concat([pd.read_parquet(f) for f in input])
        df.describe().reset_index().to_csv(output[0], index=False)

# A shell rule running on the node; heavy per profiles/slurm.  It reads the first level's outputs, as the two
# rules above do: two DAG levels, each of which costs the executor's status-check backoff (2 s, then 12 s).
rule ddppm_delta_curve:
    input:
        expand("results/toy/sim_{seed}.parquet", seed=SEEDS),
    output:
        "results/toy/delta_curve.csv",
    shell:
        "python -c \"import sys, pandas as pd; pd.concat(map(pd.read_parquet, sys.argv[1:]))"
        ".to_csv('{output}', index=False)\" {input}"
"""


def _expected_sbatch_resources():
    """{rule: (mem, time limit)} as squeue prints them, from profiles/slurm itself."""
    profile = yaml.safe_load((SLURM_PROFILE / "config.yaml").read_text())

    def fmt(mem_mb, minutes):
        h, m = divmod(int(minutes), 60)
        return f"{int(mem_mb)}M", (f"{h}:{m:02d}:00" if h else f"{m}:00")

    default = profile["default-resources"]
    heavy = profile["set-resources"]
    return {
        "simulate": fmt(300, 5),
        "summary": fmt(default["mem_mb"], default["runtime"]),
        "ddppm_calibrate": fmt(heavy["ddppm_calibrate"]["mem_mb"], heavy["ddppm_calibrate"]["runtime"]),
        "ddppm_delta_curve": fmt(heavy["ddppm_delta_curve"]["mem_mb"], heavy["ddppm_delta_curve"]["runtime"]),
    }


def _skip_if_node_too_small(cluster):
    conf = Path(cluster["conf"]).read_text()
    real_mem = int(re.search(r"RealMemory=(\d+)", conf).group(1))
    profile = yaml.safe_load((SLURM_PROFILE / "config.yaml").read_text())
    wanted = max(
        [int(profile["default-resources"]["mem_mb"])]
        + [int(r["mem_mb"]) for r in profile["set-resources"].values() if "mem_mb" in r]
    )
    if wanted > real_mem:
        pytest.skip(f"profiles/slurm asks for up to {wanted} MB per job; this node offers {real_mem} MB")


def test_toy_workflow_runs_on_slurm(slurm_cluster, tmp_path, capsys):
    _skip_if_node_too_small(slurm_cluster)
    local_dir, slurm_dir = tmp_path / "local", tmp_path / "slurm"
    for d in (local_dir, slurm_dir):
        d.mkdir()
        (d / "Snakefile").write_text(TOY_SNAKEFILE)

    _run_snakemake_locally(local_dir, [], capsys, "toy")
    proc, _ = _run_snakemake_on_slurm(slurm_dir, [], slurm_cluster, capsys, "toy")

    jobs = _assert_went_through_slurm(slurm_dir, proc, slurm_cluster)
    by_rule = {}
    for rule, _state, mem, limit in jobs.values():
        by_rule.setdefault(rule, set()).add((mem, limit))
    # 2 x simulate, ddppm_calibrate, summary, ddppm_delta_curve; `all` has no action and runs locally.
    assert sorted(by_rule) == ["ddppm_calibrate", "ddppm_delta_curve", "simulate", "summary"], by_rule
    assert len(jobs) == 5, jobs
    for rule, expected in _expected_sbatch_resources().items():
        assert by_rule[rule] == {expected}, f"rule {rule}: sbatch got {by_rule[rule]}, expected {expected}"

    files = _assert_same_results(local_dir, slurm_dir)
    assert len(files) == 5, files  # sim_1, sim_2, calibration (Parquet); summary, delta_curve (CSV)


SLURM_TARGETS = (
    f"{TINY_RESULTS}/methods/ddppm/diabetes/paper/calibration.parquet",
    f"{TINY_RESULTS}/runs/diabetes/ddppm_certified.parquet",
    f"{TINY_RESULTS}/common/runs/standard/wine.parquet",
)
"""What the pipeline test builds through Slurm, with :data:`SHARDS`: the journal method's calibration on a data set
whose calibration and Monte Carlo are split into chunks (data preparation, partition, the calibration's preparation,
its shards and their gathering), a method with a closed-form calibration whose Monte Carlo is sharded and gathered,
and an experiment's job: every kind of rule the pipeline runs, in five DAG levels and 12 Slurm jobs. The whole tiny
run would be ~120 Slurm jobs; every one pays Snakemake's start-up twice and every DAG level the executor's
status-check backoff (2 s, then 12 s: the plugin adds 10 s after every check that finds nothing finished)."""
SHARDS = "tests/config/shards.yaml"  # over the tiny config: Diabetes's calibration and Monte Carlo in two shards each


def test_pipeline_on_slurm_matches_local(slurm_cluster, tiny_run, tmp_path, capsys):
    """Representative targets of the tiny config (:data:`SLURM_TARGETS`), sharded (:data:`SHARDS`) and built
    through Slurm, give the same results as the session's local, unsharded tiny run."""
    if shutil.which("git") is None:
        pytest.skip("git is needed to list the repository's files")
    _skip_if_node_too_small(slurm_cluster)
    assert tiny_run["resumed"].returncode == 0, "the local reference run failed"
    local_dir, slurm_dir = tiny_run["work"], tmp_path / "slurm"
    slurm_dir.mkdir()
    _copy_repo(slurm_dir)

    proc, slurm_s = _run_snakemake_on_slurm(
        slurm_dir, [*SLURM_TARGETS, "--configfile", TINY, SHARDS], slurm_cluster, capsys, "pipeline"
    )
    jobs = _assert_went_through_slurm(slurm_dir, proc, slurm_cluster)
    files = _assert_same_results(local_dir, slurm_dir, TINY_RESULTS, subset=True)
    assert {Path(t) for t in SLURM_TARGETS} <= set(files)
    assert {r for r, *_ in jobs.values()} == {
        "prepare_dataset", "partition", "ddppm_calibrate_prepare", "ddppm_calibrate_chunk", "ddppm_calibrate",
        "montecarlo_chunk", "montecarlo", "common_runs",
    }  # fmt: skip
    with capsys.disabled():
        rules = sorted({rule for rule, *_ in jobs.values()})
        print(
            f"[cluster] pipeline: {len(jobs)} Slurm jobs ({', '.join(rules)}); "
            f"{len(files)} Parquet/CSV results equal; wall time local {tiny_run['seconds']:.1f} s "
            f"(killed and resumed), Slurm {slurm_s:.1f} s"
        )


@pytest.mark.skipif(os.environ.get("DDPPM_SLURM_CHAOS") != "1",
                    reason="by hand (about 10 min): DDPPM_SLURM_CHAOS=1 pytest tests/cluster -k killed_driver -s")
def test_a_killed_driver_on_slurm_resumes_to_the_local_tables(slurm_cluster, tiny_run, tmp_path, capsys):
    """Issue 63, once on Slurm: the Snakemake driver of the sharded Slurm run gets SIGKILL (its process group: the
    jobs already submitted keep running on the cluster) once some of its jobs have finished; ``--unlock``, then the
    resume with ``--rerun-incomplete`` finishes, and every table equals the session's local run."""
    import signal

    _skip_if_node_too_small(slurm_cluster)
    assert tiny_run["resumed"].returncode == 0, "the local reference run failed"
    slurm_dir = tmp_path / "slurm"
    slurm_dir.mkdir()
    _copy_repo(slurm_dir)
    command = [*_snakemake(), *SLURM_TARGETS, "--configfile", TINY, SHARDS, *_slurm_args()]
    env = _slurm_env(slurm_cluster, slurm_dir)
    started = time.monotonic()
    driver = subprocess.Popen(command, cwd=slurm_dir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)  # fmt: skip
    finished = slurm_dir / TINY_RESULTS / "data"
    while driver.poll() is None and not list(finished.rglob("*.parquet")) and time.monotonic() - started < 600:
        time.sleep(1)  # the data sets are made: Slurm jobs have finished, others are queued or running
    time.sleep(20)
    assert driver.poll() is None, "the run ended before the kill"
    os.killpg(driver.pid, signal.SIGKILL)
    driver.wait()
    killed_at = time.monotonic() - started
    done_before = len(list((slurm_dir / TINY_RESULTS).rglob("*.parquet")))
    subprocess.run([*_snakemake(), "--configfile", TINY, "--unlock"], cwd=slurm_dir, env=env, check=True,
                   capture_output=True)  # fmt: skip
    resume = [*SLURM_TARGETS, "--configfile", TINY, SHARDS, "--rerun-incomplete"]
    _, slurm_s = _run_snakemake_on_slurm(slurm_dir, resume, slurm_cluster, capsys, "resumed")
    files = _assert_same_results(tiny_run["work"], slurm_dir, TINY_RESULTS, subset=True)
    with capsys.disabled():
        print(f"[cluster] driver killed at {killed_at:.0f} s with {done_before} Parquet tables written; resumed in "
              f"{slurm_s:.0f} s; {len(files)} Parquet/CSV results equal the local run's")
