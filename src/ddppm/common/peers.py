"""Peers users already run, through their own libraries, on the common task (benchmarks/bench_diffprivlib.py).

IBM's ``diffprivlib`` (``diffprivlib.models.PCA``, central trust, pure ε-DP for rows of norm at most ``data_norm``)
does not import beside the project's scikit-learn 1.9 (0.6.6 needs at most 1.8). So it and OpenDP run in an
environment of their own (:data:`PEER_REQUIREMENTS`, ``.venv-peers``) as a subprocess: :func:`peer_estimates` sends
it the rows and gets its components back; everything else (the task, the metric, the comparison) stays in this
package, so the library is compared like with like:

* the rows are the pipeline's (normalised into the unit ball), and ``data_norm = 1``, the same bound the
  project's sensitivities use;
* ``centered=True``: the target is the top-k eigenvectors of ``XᵀX``, as for every common-task method (its other
  mode would spend half of ε on a private mean);
* its ε is pure (δ = 0), under its own notion of a neighbour (one row changed, norm ≤ ``data_norm``).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from ddppm.core.errors import DDPPMError

PEER_REQUIREMENTS = ("diffprivlib==0.6.6", "opendp[scikit-learn]==0.16.0", "scikit-learn<=1.8.0")
"""What the peers' own environment holds (``requirements/peers.in``; installed from its hashed lock,
``requirements/peers.lock``, into ``.venv-peers`` by ``requirements/install.sh``): diffprivlib 0.6.6 imports with
scikit-learn up to 1.8.0, not beside the project's 1.9."""

PEER_PYTHON = Path(__file__).resolve().parents[3] / ".venv-peers" / "bin" / "python"
"""The peers' interpreter in a checkout (``requirements/install.sh`` builds it)."""

_PEER_SCRIPT = """
import json, sys
import numpy as np
from diffprivlib.models import PCA
request = json.loads(open(sys.argv[1]).read())
X = np.load(request["rows"])
out = {}
for k in request["ranks"]:
    for eps in request["epsilons"]:
        V = []
        for run in range(request["runs"]):
            pca = PCA(n_components=k, epsilon=eps, data_norm=1.0, centered=True, random_state=request["seed"] + run)
            V.append(pca.fit(X.copy()).components_.T)
        out[f"{k}|{eps!r}"] = np.stack(V)
np.savez(request["out"], **out)
"""


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
        command = [str(python), "-c", _SAMPLER_SCRIPT, json.dumps(request)]
        proc = subprocess.run(command, capture_output=True, text=True)
        if proc.returncode != 0:
            raise DDPPMError(f"the peers' environment ({python}) failed:\n{proc.stderr[-2000:]}")
        with np.load(out) as got:
            return {key: got[key] for key in got.files}


def peer_estimates(
    python: str | Path, X: np.ndarray, ranks: list[int], epsilons: list[float], runs: int, seed: int = 0
) -> dict[tuple[int, float], np.ndarray]:
    """diffprivlib's PCA components for every (k, ε): ``{(k, ε): array (runs, d, k)}``, orthonormalised.

    Parameters
    ----------
    python : str or Path
        The interpreter of the environment where ``diffprivlib`` imports (see :data:`PEER_REQUIREMENTS`).
    X : numpy.ndarray
        ``(n, d)`` rows in the unit ball.
    ranks, epsilons : list
        The k and ε grids.
    runs : int
        Runs per (k, ε); run r uses ``random_state = seed + r``.

    Raises
    ------
    DDPPMError
        The peer environment failed (its stderr is in the message).
    """
    with tempfile.TemporaryDirectory() as tmp:
        rows, out, request = Path(tmp, "rows.npy"), Path(tmp, "out.npz"), Path(tmp, "request.json")
        np.save(rows, np.asarray(X, float))
        payload = {"rows": str(rows), "out": str(out), "ranks": list(map(int, ranks)), "runs": int(runs),
                   "epsilons": list(map(float, epsilons)), "seed": int(seed)}  # fmt: skip
        request.write_text(json.dumps(payload))
        proc = subprocess.run([str(python), "-c", _PEER_SCRIPT, str(request)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise DDPPMError(f"the diffprivlib environment ({python}) failed:\n{proc.stderr[-2000:]}")
        with np.load(out) as got:
            result = {}
            for key in got.files:
                k, eps = key.split("|")
                result[(int(k), float(eps))] = np.linalg.qr(got[key])[0]
    return result
