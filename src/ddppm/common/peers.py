"""Peers users already run, through their own libraries, on the common task (benchmarks/bench_diffprivlib.py).

IBM's ``diffprivlib`` (``diffprivlib.models.PCA``, central trust, pure ε-DP for rows of norm at most
``data_norm``) does not import beside the project's scikit-learn (0.6.6 imports ``sklearn.tree._tree.DOUBLE``,
which scikit-learn 1.7 removed). So it runs in an environment of its own (:data:`PEER_REQUIREMENTS`) as a
subprocess: :func:`peer_estimates` sends it the rows and gets its components back; everything else (the task,
the metric, the comparison) stays in this package, so the library is compared like with like:

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

PEER_REQUIREMENTS = ("diffprivlib==0.6.6", "scikit-learn>=1.5,<1.7")
"""What diffprivlib's own environment needs (the last scikit-learn it imports with)."""

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
