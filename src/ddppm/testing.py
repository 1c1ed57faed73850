"""Problems and parameters shared by the tests and the benchmarks (one definition, so both measure the same).

* :func:`synthetic_problem`: a small seeded low-rank-ish matrix on the paper's 4-agent ring;
* :func:`paper_problem`: a real dataset as the workflow builds it (:func:`ddppm.pipeline.load.load_problem`),
  exactly the problem the default workflow runs;
* :func:`corollary_params`: Corollary 1's α and σ_q with ``σ_p(t) = κ σ_q r^t``;
* :func:`copy_checkout`: a fresh working copy of a checkout (the workflow tests' and the run-time benchmark's).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ddppm.accounting.iteration import DDPPMParams, NoiseSchedule
from ddppm.core.network import paper_ring_w
from ddppm.core.partition import partition_rows
from ddppm.core.problem import DistributedProblem
from ddppm.pipeline.load import load_problem


def synthetic_problem(
    n: int = 48, d: int = 4, spectrum: Sequence[float] = (3.0, 1.5, 1.0, 0.5), seed: int = 4, c: int = 10
) -> DistributedProblem:
    """``X = G diag(spectrum)`` with Gaussian ``G`` (seeded), rows scaled into the unit ball, 4 agents."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) @ np.diag(np.asarray(spectrum, float)[:d])
    X /= np.linalg.norm(X, axis=1).max()
    return DistributedProblem.from_partition(X, partition_rows(n, 4, seed=0), paper_ring_w(), c)


def paper_problem(dataset: str = "diabetes", c: int = 20) -> DistributedProblem:
    """A dataset of the journal paper as the default workflow builds it (seeded shuffle, paper ring)."""

    return load_problem(dataset, network={"c": c})


def corollary_params(
    problem: DistributedProblem, T: int, kappa: float = 1.0, schedule: str = "geometric"
) -> DDPPMParams:
    """α = 1/sqrt(μ₁μ₂), σ_q = 1/√n and ``σ_p(t) = κ σ_q (μ₂/μ₁)^t`` (geometric) or ``κ σ_q`` (constant)."""
    sigma_q = 1 / np.sqrt(problem.n)
    alpha = 1 / np.sqrt(problem.mu1 * problem.mu2)
    ratio = problem.mu2 / problem.mu1 if schedule == "geometric" else 1.0
    return DDPPMParams(alpha, sigma_q, NoiseSchedule(schedule, kappa * sigma_q, ratio), T)


def copy_checkout(root: Path, dest: Path, link_peers: bool = True) -> Path:
    """The tracked and untracked (not ignored) files of the checkout ``root``, copied to ``dest``: a fresh working
    copy with no results.

    Parameters
    ----------
    root, dest
        The checkout and the folder to copy it into (created if missing).
    link_peers
        Link the peers' environment (``.venv-peers``, built by ``requirements/install.sh``, ignored by git) into
        the copy, so the copy's peer rules find it where a checkout has it. ``False`` for a copy that another tool
        copies again: snakedeploy's local "clone" follows links and would copy the whole environment.

    Returns
    -------
    Path
        ``dest``.
    """
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=root, check=True, capture_output=True, text=True
    ).stdout.split()
    for rel in files:
        if (root / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / rel, dest / rel)
    if link_peers:
        link_peers_environment(root, dest)
    return dest


def link_peers_environment(root: Path, dest: Path) -> None:
    """Link the peers' environment of the checkout ``root`` (``.venv-peers``, ignored by git) into ``dest``, where
    a checkout has it, if ``root`` has one."""
    peers = root / ".venv-peers"
    if peers.exists():
        (dest / ".venv-peers").symlink_to(peers.resolve(), target_is_directory=True)


def three_agent_problem() -> DistributedProblem:
    """A small seeded problem for the audit's tests: 30 rows in the unit ball (d = 3, decreasing scales) over three
    agents on the complete network (``W = J/3``), one consensus step."""
    from ddppm.core.partition import parts_from_assignment

    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 3)) * np.array([1.0, 0.5, 0.2])
    X /= np.linalg.norm(X, axis=1).max()
    W = np.full((3, 3), 1 / 3)
    return DistributedProblem.from_partition(X, parts_from_assignment(np.arange(30) % 3, 3), W, 1)
