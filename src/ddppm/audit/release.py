"""Attack the release as users run it: ``PrivatePCA``'s whole route from the raw records (docs/audit.md, "The
release").

* **The witness pair** (:func:`witness_records`): raw records in the declared box [0, 1]^d, spread around its
  centre, with record 0 at the box's lower corner in one data set and at its upper corner in the other: the
  replacement that moves the sum of the publicly prepared rows by its sensitivity (2) and every feature's histogram
  by one count down and one up (the private box's sensitivity √(2d)).
* **The view**: what a fit releases, ``mean_``, ``scale_`` and the projector ``V̂V̂ᵀ`` (upper triangle: the basis's
  sign is arbitrary), each draw a fresh run of :func:`ddppm.release.route.draw_release` (the estimator's own
  route) with simulation noise: the secure sampler's law is the Gaussian's (``tests/release/test_noise.py``), and
  millions of secure draws would take hours.
* **The test**: the linear likelihood-ratio statistic (Fisher direction from training draws kept apart), its
  threshold chosen on half of the counted draws (:func:`ddppm.audit.bounds.audit_scores`).

The released numbers are post-processing of the releases, so this attack sees less than an observer of every
release: a bound below the claim is evidence that the route is implemented as certified, never proof.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ddppm.audit.bounds import audit_scores, resolvable_delta_gap, verdict
from ddppm.audit.run import LINEAR_TEST, AuditRow, fisher_direction
from ddppm.release.inputs import declared_bounds
from ddppm.release.route import METHOD_OPTIONS, draw_release, parties_records

RELEASE_TEST = f"{LINEAR_TEST}, on the fit's released mean, scale and projector (raw records, simulation noise)"


def witness_records(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two raw data sets in [0, 1]^d that differ in record 0 (module docstring); the others are seeded around the
    centre with one stretched direction."""
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((n, d)) * 0.08
    rows[:, 0] *= 2.0
    X = np.clip(0.5 + rows, 0.0, 1.0)
    lower, upper = X.copy(), X.copy()
    lower[0], upper[0] = 0.0, 1.0
    return lower, upper


def release_views(X: np.ndarray, parts: tuple[np.ndarray, ...], method: object, eps: float, delta: float,
                  seeds: range) -> np.ndarray:  # fmt: skip
    """One flattened view per seed: ``mean_``, ``scale_`` and the upper triangle of ``V̂V̂ᵀ`` of a release."""
    bounds = declared_bounds({"source": "the audit's witness box", "all_features": [0.0, 1.0]}, X.shape[1], True)
    records = parties_records(X, parts, bounds, True, METHOD_OPTIONS)
    upper = np.triu_indices(X.shape[1])
    views = []
    for seed in seeds:
        drawn = draw_release(records, method, 1, eps, delta, METHOD_OPTIONS, True, "simulation", seed)
        projector = drawn["V"] @ drawn["V"].T
        views.append(np.concatenate([drawn["mean"], drawn["scale"], projector[upper]]))
    return np.asarray(views)


def audit_release(name: str, method: object, eps: float, delta: float, draws: int, seed: int, n: int, d: int,
                  m: int, eps_run: float | None = None) -> AuditRow:  # fmt: skip
    """Audit the release with ``method`` at the claim (ε, δ): ``draws`` views per side counted, as many choosing the
    threshold, a quarter as many training the direction. ``eps_run`` (tests only): run the release at another ε
    than claimed, a broken release the attack must catch."""
    parts = tuple(np.array_split(np.arange(n), m))
    run_at = float(eps if eps_run is None else eps_run)
    train = max(draws // 4, 100)
    sides = witness_records(n, d, seed)
    first = 10**6 * (seed + 1)  # the views' seeds: training, then counted, disjoint per side
    trained = [release_views(X, parts, method, run_at, delta, range(first + side * 10**5,
                                                                         first + side * 10**5 + train))
               for side, X in enumerate(sides)]  # fmt: skip
    direction = fisher_direction(trained[0], trained[1])
    start = first + 2 * 10**5
    scores = [release_views(X, parts, method, run_at, delta,
                            range(start + side * 10**5, start + side * 10**5 + 2 * draws)) @ direction
              for side, X in enumerate(sides)]  # fmt: skip
    result = audit_scores(scores[0], scores[1], delta)
    return AuditRow(f"{name} (release)", str(getattr(method, "trust_model", "")), float(eps), float(delta),
                    result.draws, result.eps_lower, verdict(result.eps_lower, eps), RELEASE_TEST,
                    resolvable_delta_gap(eps, result.draws))  # fmt: skip


def release_table(name: str, method: object, eps_grid: list[float], delta: float, draws: int, seed: int,
                  task: dict[str, int]) -> pd.DataFrame:  # fmt: skip
    """The release with ``method`` audited at every claimed ε (columns of :class:`~ddppm.audit.run.AuditRow`)."""
    rows = [audit_release(name, method, float(eps), delta, draws, seed, int(task["n"]), int(task["d"]),
                          int(task["m"])).__dict__ for eps in eps_grid]  # fmt: skip
    return pd.DataFrame(rows)
