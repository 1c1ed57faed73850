"""The bridge to the peers users already run, IBM's diffprivlib and OpenDP, through their own APIs as installed.

diffprivlib 0.6.6 does not import beside the project's scikit-learn 1.9 (it needs at most 1.8), so both libraries
live in an environment of their own (:data:`PEER_REQUIREMENTS`, ``.venv-peers``, built by
``requirements/install.sh``). This module starts its interpreter (:data:`PEER_PYTHON`) on
:mod:`ddppm.common_task.peer_library`, sends it the rows, and reads back the components; the task, the metric and the
tables stay here, so a library is compared like with like (rows in the unit ball, ``data_norm = 1`` / ``norm = 1``,
the same bound the project's sensitivities use; the target is the top-k eigenvectors of ``XᵀX``).

:func:`peer_runs` gives the common task's runs format (:func:`ddppm.common_task.run.run_rows`) for every (library,
k, ε), with a wall-clock budget per point: a fit that has not finished when it runs out counts as unfinished
(``finished`` False, ``error`` NaN), and the summary reports how many finished; once a point runs out of time, the
larger ε of the same library and k are not tried (their fits unfinished too, taking no time).
:func:`library_eigenvector_draws` calls each library's eigenvector sampler alone (the defect's test; docs/peers.md).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ddppm.common_task import peer_library
from ddppm.common_task.peer_library import FINISHED
from ddppm.core.errors import ConfigError, DDPPMError
from ddppm.core.seeds import run_seed

PEER_REQUIREMENTS = ("diffprivlib==0.6.6", "opendp[scikit-learn]==0.16.0", "scikit-learn<=1.8.0")
"""What the peers' own environment holds (``requirements/peers.in``; installed from its hashed lock,
``requirements/peers.lock``, into ``.venv-peers`` by ``requirements/install.sh``): diffprivlib 0.6.6 imports with
scikit-learn up to 1.8.0, not beside the project's 1.9."""

PEER_PYTHON = Path(__file__).resolve().parents[3] / ".venv-peers" / "bin" / "python"
"""The peers' interpreter in a checkout (``requirements/install.sh`` builds it): the default of
:data:`PYTHON_KEY`."""

PYTHON_KEY = "common.peers.python"
"""The config key naming the peers' interpreter (:func:`peer_python`)."""

BUILD_COMMAND = "requirements/install.sh"
WATCHDOG_SLACK, WATCHDOG_MARGIN = 30.0, 60.0
"""The peers' process is killed past every point's budget plus ``WATCHDOG_SLACK`` seconds per point and
``WATCHDOG_MARGIN`` (start-up, imports): a fit that swallowed its timeouts cannot hang the pipeline."""

_LOCK = Path(__file__).resolve().parents[3] / "requirements" / "peers.lock"
PEERS_LOCK = hashlib.sha256(_LOCK.read_bytes()).hexdigest()[:16] if _LOCK.exists() else "no-lock"
"""A digest of the peers' lock file (``requirements/peers.lock``): a peers' job records it and reruns when it
changes (another library version)."""


def peer_minutes(config: dict[str, Any], full: bool) -> int:
    """A cluster job's runtime (minutes) for one data set's peers: every point's time budget, plus a minute (an
    upper bound: the points skipped after a smaller ε ran out of time take none)."""
    section = config["common"]
    peers = section["peers"]
    grid = section if full else peers
    points = len(peers["libraries"]) * len(grid["ranks"]) * len(grid["epsilons"])
    seconds = peers["full_point_seconds" if full else "point_seconds"]
    return int(math.ceil(points * seconds / 60)) + 1


def peer_python(peers: Mapping[str, Any]) -> Path:
    """The peers' interpreter of the config section ``common.peers``: its ``python`` (:data:`PYTHON_KEY`; a
    relative path from the working directory) when set, else the checkout's :data:`PEER_PYTHON`."""
    configured = peers.get("python")
    return Path(configured) if configured else PEER_PYTHON


def check_peer_environment(python: str | Path = PEER_PYTHON, key: str = "common.peers.libraries") -> None:
    """Raise :class:`ConfigError` (before any job runs) when the peers' interpreter is missing, naming the command
    that builds it and the config key that leaves the peers out."""
    if not os.access(python, os.X_OK):
        raise ConfigError(
            f"{key}: the peers (diffprivlib, OpenDP) run in their own environment and {python} does not exist; "
            f"build it with `{BUILD_COMMAND}` (./run.sh and ./run_tests.sh do), set {PYTHON_KEY} to an interpreter "
            f"that has them, or set {key}: [] to leave them out"
        )


def check_peer_python(peers: Mapping[str, Any]) -> Path:
    """The peers' interpreter of ``common.peers`` (:func:`peer_python`), checked: :class:`ConfigError` naming
    :data:`PYTHON_KEY` when a configured one is not an executable file, else :func:`check_peer_environment`."""
    python = peer_python(peers)
    if peers.get("python") and not (python.is_file() and os.access(python, os.X_OK)):
        raise ConfigError(
            f"{PYTHON_KEY}: {python} (from {Path.cwd()}) is not an executable file; point it at a Python with "
            "diffprivlib and OpenDP (requirements/peers.lock), or set common.peers.libraries: [] to leave them out"
        )
    check_peer_environment(python)
    return python


def _call(python: str | Path, argv: list[str], what: str, timeout: float | None = None) -> None:
    try:
        proc = subprocess.run([str(python), *argv], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise DDPPMError(
            f"{what}: the peers' process ran past its whole budget ({timeout:.0f} s) and was stopped"
        ) from None
    if proc.returncode != 0:
        raise DDPPMError(f"{what}: the peers' environment ({python}) failed:\n{proc.stderr[-3000:]}")


@dataclass(frozen=True)
class PeerPoint:
    """One (library, k, ε) point's fits: ``V`` (runs, d, k; NaN where unfinished), ``seconds`` per fit (NaN
    where unfinished), ``status`` per run (:data:`ddppm.common_task.peer_library.FINISHED`, ``TIMED_OUT``,
    ``NOT_STARTED``, ``SKIPPED``: not tried, a smaller ε of the library and k ran out of time) and the library's
    own replace-one ε (``claimed_eps``)."""

    V: np.ndarray
    seconds: np.ndarray
    status: np.ndarray
    claimed_eps: float

    @property
    def finished(self) -> np.ndarray:
        return self.status == FINISHED


def peer_fits(
    python: str | Path, X: np.ndarray, points: Sequence[Mapping[str, Any]], point_seconds: float = math.inf
) -> list[PeerPoint]:
    """Fit each library at each point ``{"library", "k", "eps", "seeds"}`` (one fit per seed) in the peers'
    environment, with ``point_seconds`` of wall clock per point (:func:`ddppm.common_task.peer_library.run_points`:
    in the order given, and a point after a smaller ε of its library and k that ran out of time is not tried).

    Raises
    ------
    DDPPMError
        The peers' environment failed (its stderr is in the message).
    """
    with tempfile.TemporaryDirectory() as tmp:
        rows, out, request = Path(tmp, "rows.npy"), Path(tmp, "out.npz"), Path(tmp, "request.json")
        np.save(rows, np.asarray(X, float))
        clean = [{"library": p["library"], "k": int(p["k"]), "eps": float(p["eps"]),
                  "seeds": [int(s) for s in p["seeds"]]} for p in points]  # fmt: skip
        budget = point_seconds if math.isfinite(point_seconds) else 1e9
        request.write_text(json.dumps({"rows": str(rows), "out": str(out), "points": clean, "point_seconds": budget}))
        # A watchdog past every point's budget: whatever hangs outside a fit (an import, a read) cannot hang the run.
        watchdog = len(clean) * (budget + WATCHDOG_SLACK) + WATCHDOG_MARGIN if math.isfinite(point_seconds) else None
        _call(python, [peer_library.__file__, str(request)], "peer_fits", watchdog)
        with np.load(out) as got:
            return [
                PeerPoint(got[f"V_{i}"], got[f"seconds_{i}"], got[f"status_{i}"], float(got[f"claimed_eps_{i}"]))
                for i in range(len(clean))
            ]


def library_seeds(seed: int, labels: tuple[object, ...], runs: int) -> list[int]:
    """One ``random_state`` per run for a library that takes one (diffprivlib's NumPy ``RandomState``: 32 bits),
    derived from the run's labels as every common-task run's generator is (:mod:`ddppm.core.seeds`)."""
    return [run_seed(seed, labels, run) % 2**32 for run in range(runs)]


def library_eigenvector_draws(
    python: str | Path, C: np.ndarray, epsilon: float, draws: int, seed: int = 0
) -> dict[str, np.ndarray]:
    """``draws`` top-eigenvector releases of the covariance ``C`` (rows of norm ≤ 1) from each library's own
    sampler, as installed: diffprivlib's ``mechanisms.Bingham(epsilon, sensitivity=1)`` and OpenDP's
    ``make_private_eigenvector`` (``unit_epsilon = epsilon``; OpenDP's features ``contrib``, ``idealized-numerics``
    and ``honest-but-curious`` enabled). Both target the Bingham law ``∝ exp(−uᵀAu)`` with
    ``A = ε/4 (λ_max I − C)`` (:mod:`ddppm.methods.amin`). Returns ``{"diffprivlib": (draws, d),
    "opendp": (draws, d), "opendp_map2": OpenDP's ε for a replaced row (symmetric distance 2)}``.
    OpenDP draws from the operating system's generator (no seed)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp, "draws.npz")
        request = {"C": np.asarray(C, float).tolist(), "draws": int(draws), "epsilon": float(epsilon),
                   "seed": int(seed), "out": str(out)}  # fmt: skip
        _call(python, ["-c", _SAMPLER_SCRIPT, json.dumps(request)], "library_eigenvector_draws")
        with np.load(out) as got:
            return {key: got[key] for key in got.files}


_SAMPLER_SCRIPT = """
import json, sys
import numpy as np
request = json.loads(sys.argv[1])
C, draws, eps = np.array(request["C"], float), int(request["draws"]), float(request["epsilon"])
from diffprivlib.mechanisms import Bingham
mechanism = Bingham(epsilon=eps, sensitivity=1.0, random_state=request["seed"])
out = {"diffprivlib": np.array([mechanism.randomise(C) for _ in range(draws)])}
import opendp.prelude as dp
dp.enable_features("contrib", "idealized-numerics", "honest-but-curious")
from opendp.extras.numpy import _sscp_domain
from opendp.extras.sklearn._make_eigenvector import make_private_eigenvector
domain = _sscp_domain(norm=1.0, p=2, num_features=C.shape[0])
measurement = make_private_eigenvector(domain, dp.symmetric_distance(), eps)
out["opendp"] = np.array([measurement(C) for _ in range(draws)])
out["opendp_map2"] = np.array(measurement.map(2))
np.savez(request["out"], **out)
"""
