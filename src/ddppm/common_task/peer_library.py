"""The peers' side of the bridge: runs **inside the peers' environment** (``.venv-peers``), not the project's.

:mod:`ddppm.common_task.peers` starts ``.venv-peers/bin/python`` on this file with a request (JSON) and reads back an
``.npz``. So this module imports only the standard library and NumPy at the top, and diffprivlib or OpenDP inside
the functions that call them; it never imports ``ddppm`` (not installed there). Everything else (the task, the
metric, the tables) stays in the project's environment.

Each library runs through its own public API, as a user calls it on rows already in the unit ball and centred
(the common task's ``prepared_rows``; docs/peers.md):

* diffprivlib 0.6.6: ``diffprivlib.models.PCA(n_components=k, epsilon=ε, data_norm=1, centered=True,
  random_state=seed)``; ε is pure, for one row replaced (norm ≤ ``data_norm``); its ``covariance_eig`` gives
  ε/(k+1) to the eigenvalues and ε/(k+1) to each eigenvector;
* OpenDP 0.16.0: ``make_private_pca`` on ``array2_domain(norm=1, p=2, origin=0)`` (its "origin known" mode: no
  private mean; its scikit-learn-style ``PCA`` class always estimates the mean). Its ``unit_epsilon`` is the ε of
  one changed record, a replaced row at symmetric distance 2, so it gets ε and ``measurement.map(2)`` is ε (read
  back for every point, :func:`opendp_replace_one`). (The ``PCA`` class's ``epsilon`` is per unit of symmetric
  distance instead: it passes ``2 · epsilon`` on, so ``PCA(epsilon=ε/2)`` is the replace-one ε.) It splits ε
  evenly between the eigenvalues and the k eigenvectors, and draws from the operating system's generator (no
  seed: its rows cannot be replayed).

Both libraries' eigenvector samplers are defective (docs/peers.md): what they release follows the density
``∝ exp(−uᵀAu)(uᵀΩu)^{−d}``, not the Bingham law their proof is about. A draw costs a geometric number of
proposals, so a fit can take minutes: each (library, k, ε) point gets a wall-clock budget, a fit still running when
it ends is stopped, and the point's remaining fits are not started; once a point has run out of time, the later
points of the same library and k at a larger ε are not tried at all (:data:`SKIPPED`). Each fit runs in a forked
child that is killed (``SIGKILL``) at the deadline: nothing is interrupted inside a library (a timeout raised inside
OpenDP's Python callback could abort the whole process), and no library can swallow its stop. For k = 1 the
proposals are independent of one another, so the fits that finish follow the sampler's law exactly (stopping
selects nothing); for k > 1 a later direction's cost depends on the earlier ones, so the finished fits may lean
towards the faster.
"""

from __future__ import annotations

import json
import os
import pickle
import select
import signal
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from functools import partial

import numpy as np

LIBRARIES = ("diffprivlib", "opendp")
OPENDP_FEATURES = ("contrib", "idealized-numerics", "honest-but-curious")
"""The OpenDP features its PCA needs: ``contrib`` (not yet vetted code), ``idealized-numerics`` (floating-point
arithmetic treated as exact) and ``honest-but-curious`` (a Python callback inside a measurement)."""

FINISHED, TIMED_OUT, NOT_STARTED, SKIPPED = 0, 1, 2, 3
"""A fit's status (:func:`run_points`): finished in the point's budget; stopped at the deadline; not started because
the point's budget ran out; not started because a smaller ε of this library and k ran out of time (the point was
not tried). Only ``FINISHED`` is finished."""


def fit_diffprivlib(X: np.ndarray, k: int, eps: float, seed: int) -> np.ndarray:
    """diffprivlib's ``PCA`` in its centred mode: the top-k components as a (d, k) array."""
    from diffprivlib.models import PCA

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its PrivacyLeakWarning is about bounds we pass
        pca = PCA(n_components=k, epsilon=eps, data_norm=1.0, centered=True, random_state=seed)
        return pca.fit(X.copy()).components_.T


def _opendp_pca(n: int, d: int, k: int, eps: float):
    import opendp.prelude as dp
    from opendp.extras.sklearn.decomposition import make_private_pca

    dp.enable_features(*OPENDP_FEATURES)
    domain = dp.numpy.array2_domain(num_columns=d, size=n, norm=1.0, p=2, origin=np.zeros(d), T=float)
    return make_private_pca(domain, dp.symmetric_distance(), eps, num_components=k)


def opendp_replace_one(n: int, d: int, k: int, eps: float) -> float:
    """OpenDP's own ε for one replaced row (symmetric distance 2) of the measurement :func:`fit_opendp` builds."""
    return float(_opendp_pca(n, d, k, eps).map(2))


def fit_opendp(X: np.ndarray, k: int, eps: float) -> np.ndarray:
    """OpenDP's ``make_private_pca`` with the origin known (rows centred, norm ≤ 1): the top-k right singular
    vectors as a (d, k) array."""
    n, d = X.shape
    return np.asarray(_opendp_pca(n, d, k, eps)(X).Vt)[:k].T


def fit_in_child(fit: Callable[[], np.ndarray], timeout: float) -> tuple[int, np.ndarray | None, float]:
    """Run ``fit`` in a forked child and wait at most ``timeout`` seconds: ``(FINISHED, V, seconds)`` (the child's
    own fit time), or ``(TIMED_OUT, None, nan)`` after killing it. A child that fails raises its traceback here."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: fit, send the result, leave without running the parent's cleanup
        os.close(read_end)
        try:
            start = time.perf_counter()
            payload = pickle.dumps(("ok", np.asarray(fit()), time.perf_counter() - start))
        except BaseException:  # noqa: BLE001 - anything the library raises goes back to the parent
            payload = pickle.dumps(("error", traceback.format_exc(), 0.0))
        with os.fdopen(write_end, "wb") as out:
            out.write(payload)
        os._exit(0)
    os.close(write_end)
    deadline, chunks = time.monotonic() + timeout, []
    with os.fdopen(read_end, "rb") as pipe:
        while True:
            ready, _, _ = select.select([pipe], [], [], max(deadline - time.monotonic(), 0.0))
            if not ready:  # the budget ran out: stop the fit
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return TIMED_OUT, None, float("nan")
            chunk = pipe.read1(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    os.waitpid(pid, 0)
    if not chunks:
        raise RuntimeError("a fit's child process died without a result (the library crashed)")
    kind, value, seconds = pickle.loads(b"".join(chunks))
    if kind == "error":
        raise RuntimeError(f"the library failed in a fit:\n{value}")
    return FINISHED, value, float(seconds)


def run_points(X: np.ndarray, points: list[dict], budget: float) -> dict[str, np.ndarray]:
    """Fit every point, one fit per seed (:func:`fit_in_child`), until the point's budget runs out.

    The points are processed in the order given. Once a point of a (library, k) has run out of time (one of its
    fits timed out, or the budget ended before all of them started), the later points of the same (library, k)
    with a larger ε are not tried: their fits are all :data:`SKIPPED` and take no time. A later point with a
    smaller ε, or of another library or k, is tried as usual.

    Parameters
    ----------
    X : numpy.ndarray
        The rows (n, d), in the unit ball and centred.
    points : list of dict
        ``{"library", "k", "eps", "seeds"}`` per point; the experiment gives each (library, k)'s points in
        increasing ε, so the skipped points are exactly those above the first ε that ran out of time.
    budget : float
        Wall-clock seconds per point.

    Returns
    -------
    dict of str to numpy.ndarray
        Per point i: ``V_i`` (runs, d, k; NaN where unfinished), ``seconds_i`` (per fit; NaN where unfinished),
        ``status_i`` (:data:`FINISHED`, :data:`TIMED_OUT`, :data:`NOT_STARTED`, :data:`SKIPPED`) and
        ``claimed_eps_i`` (the library's own replace-one ε; read for a skipped point too: OpenDP's map costs
        milliseconds, no fit).
    """
    n, d = X.shape
    for library in {point["library"] for point in points}:  # imports are not a fit's time (the children inherit them)
        opendp_replace_one(n, d, 1, 1.0) if library == "opendp" else fit_diffprivlib(X, 1, 0.01, 0)
    # A fit's cost is a geometric number of proposals whose mean grows fast with ε: when a point runs out of time,
    # a larger ε of the same library and k runs out sooner still (in the default run, k = 1 at ε = 5 spent its
    # whole budget to finish 0 fits), so its budget would be spent to learn nothing.
    ran_out: dict[tuple[str, int], float] = {}  # (library, k) -> the smallest ε tried so far that ran out of time
    out = {}
    for i, point in enumerate(points):
        library, k, eps, seeds = point["library"], int(point["k"]), float(point["eps"]), point["seeds"]
        V = np.full((len(seeds), d, k), np.nan)
        seconds = np.full(len(seeds), np.nan)
        status = np.full(len(seeds), NOT_STARTED)
        claimed = opendp_replace_one(n, d, k, eps) if library == "opendp" else eps
        if eps > ran_out.get((library, k), float("inf")):
            status[:] = SKIPPED
            out.update({f"V_{i}": V, f"seconds_{i}": seconds, f"status_{i}": status, f"claimed_eps_{i}": claimed})
            continue
        deadline = time.monotonic() + budget
        for run, seed in enumerate(seeds):
            left = deadline - time.monotonic()
            if left <= 1e-3:
                break
            fit = partial(fit_diffprivlib, X, k, eps, int(seed)) if library == "diffprivlib" else \
                partial(fit_opendp, X, k, eps)  # fmt: skip
            status[run], fitted, took = fit_in_child(fit, left)
            if status[run] == TIMED_OUT:
                break
            V[run], seconds[run] = fitted, took
        # "Ran out of time" is any unfinished fit, not only a timed-out one: a budget that ends between two fits
        # leaves the rest NOT_STARTED with none timed out. So a point is skipped exactly when a smaller ε tried
        # before it has n_unfinished > 0, which the summary shows (ddppm.experiments.common_peers.not_tried).
        if (status != FINISHED).any():
            ran_out[library, k] = min(eps, ran_out.get((library, k), float("inf")))
        out.update({f"V_{i}": V, f"seconds_{i}": seconds, f"status_{i}": status, f"claimed_eps_{i}": claimed})
    return out


def main(argv: list[str]) -> None:
    request = json.loads(open(argv[1]).read())
    X = np.load(request["rows"])
    np.savez(request["out"], **run_points(X, request["points"], float(request["point_seconds"])))


if __name__ == "__main__":
    main(sys.argv)
