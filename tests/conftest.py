"""Shared fixtures: one tiny end-to-end pipeline run per test session (used by the workflow and Slurm tests)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from threadpoolctl import threadpool_limits

from ddppm.testing import copy_checkout

# One BLAS thread per test process and per process it starts (as the Snakefile does for jobs): the suite runs on
# every core (pytest-xdist) beside Snakemake's jobs, and OpenBLAS threads competing for the same cores made small
# eigendecompositions hundreds of times slower (a 0.2 s test took 145 s).
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")
threadpool_limits(int(os.environ["OPENBLAS_NUM_THREADS"]))

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
TINY = "tests/config/tiny.yaml"
TINY_RESULTS = yaml.safe_load((REPO / TINY).read_text())["results_dir"]


FLOWER_PROCESSES = {REPO / "tests" / "federation" / name for name in
                    ("test_flower.py", "adversary/test_cli_port.py", "adversary/test_cli_lifecycle.py")}  # fmt: skip
"""The test modules that start Flower's deployment engine as real processes."""


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the marks into the node ids
def pytest_collection_modifyitems(config, items) -> None:
    """Groups for pytest-xdist's ``--dist loadgroup`` (``run_tests.sh`` runs the suite on every core): every test that
    uses the session's tiny run, and the real-Slurm tests (which use it too, and start one cluster at a time), on one
    worker, so the run is made once; every other module's tests on one worker, so its module fixtures are built
    once; the tests that start Flower's real processes (a SuperLink, SuperNodes, ``ddppm party``) on one worker
    too, one federation at a time: two at once on two cores made a live party miss its step's timeout. pytest 9.2
    drops xdist's group suffix from node ids (pytest-dev/pytest-xdist#1386): the lock keeps pytest below 9.2.
    Without xdist the marks do nothing."""
    cluster = REPO / "tests" / "cluster"
    for item in items:
        if "tiny_run" in item.fixturenames or item.path.is_relative_to(cluster):
            group = "tiny-run"
        elif item.path in FLOWER_PROCESSES:
            group = "flower-processes"
        else:
            group = item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(group))


def copy_repo(dest: Path) -> Path:
    return copy_checkout(REPO, dest)


def work_env(cwd: Path) -> dict[str, str]:
    """Environment of a Snakemake run in a copy: its own ``src`` comes first, so edits to the copy count."""
    return {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
        "PYTHONPATH": f"{cwd / 'src'}:{os.environ.get('PYTHONPATH', '')}",
    }


def snakemake(cwd: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = work_env(cwd)
    return subprocess.run(
        [SNAKEMAKE, "--cores", "2", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )


def _incomplete_outputs(work: Path) -> set[Path]:
    """Outputs of jobs that were running when Snakemake died (its own ``.snakemake/incomplete`` markers)."""
    import base64

    marker_dir = work / ".snakemake" / "incomplete"
    paths = set()
    for marker in marker_dir.rglob("*") if marker_dir.exists() else []:
        if not marker.is_file():
            continue
        # Long ids are split into directories whose names carry a leading "@" (snakemake.persistence.file).
        encoded = "".join(part.removeprefix("@") for part in marker.relative_to(marker_dir).parts)
        try:
            name = base64.urlsafe_b64decode(encoded.encode()).decode()
        except ValueError:
            continue
        paths.add((work / name).resolve())
    return paths


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory):
    """Run the tiny config, kill it after the first calibration finishes, resume, and record mtimes."""
    work = copy_repo(tmp_path_factory.mktemp("tiny"))
    env = work_env(work)
    started = time.time()
    proc = subprocess.Popen(
        [SNAKEMAKE, "--cores", "2", "--configfile", TINY],
        cwd=work,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    runs = work / TINY_RESULTS / "runs"
    deadline = time.time() + 300
    # Wait until some Monte-Carlo results are merged: then data, partition and at least one calibration have
    # finished while other jobs are still running.
    while time.time() < deadline and proc.poll() is None and not list(runs.glob("*/*.parquet")):
        time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    in_progress = _incomplete_outputs(work)
    finished_before = {
        p: p.stat().st_mtime_ns for p in (work / TINY_RESULTS).rglob("*.parquet") if p.resolve() not in in_progress
    }
    snakemake(work, "--configfile", TINY, "--unlock")  # a hard kill leaves the working-directory lock behind
    resumed = snakemake(work, "--configfile", TINY, "--rerun-incomplete")
    # Part-way: some tables were finished, and the resumed run still had a good share of them to write.
    written_after = len(list((work / TINY_RESULTS).rglob("*.parquet")))
    killed_early = bool(finished_before) and written_after - len(finished_before) >= max(10, written_after // 4)
    return {
        "work": work,
        "finished_before": finished_before,
        "killed_early": killed_early,
        "resumed": resumed,
        "seconds": time.time() - started,
    }


@pytest.fixture(scope="session")
def toy_problem():
    """The shared small problem (48 × 4, 4 agents, paper ring, c = 10): :func:`ddppm.testing.synthetic_problem`."""
    from ddppm.testing import synthetic_problem

    return synthetic_problem()
