"""Attack a method as implemented: draw the observer's whole view under a witness pair of neighbours and bound ε
from below (docs/audit.md).

* **The witness pair** (:func:`witness_tasks`): two tasks that differ in one row of agent 0, a unit row ``e₁`` in one
  and ``e₂`` in the other: orthogonal unit rows attain the second moment's sensitivity under ``replace_one``
  (:mod:`ddppm.common_task.adjacency`), so the pair is the worst for every release of ``XᵀX`` or ``X_jᵀX_j``.
* **The view** is the method's :meth:`~ddppm.common_task.base.CommonTaskMethod.common_view`, drawn with the same
  code and generators as its estimate.
* **The test** (:func:`audit_method`): the views are Gaussian with a covariance that does not depend on the data, so
  the likelihood-ratio test is linear: project on ``Σ⁻¹(μ′ − μ)`` (:func:`fisher_direction`), estimated from training
  draws kept apart from the draws that choose the threshold and from those counted
  (:func:`ddppm.audit.bounds.audit_scores`).
* **Mutants** (:mod:`ddppm.audit.mutants`) are deliberately broken copies that only the audit and the tests use.

A bound above the claimed ε with 95 % confidence is a **violation**; below it the claim is **consistent** with the
attack: evidence, not proof.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ddppm.audit.bounds import audit_scores, resolvable_delta_gap
from ddppm.common_task.task import CommonTask
from ddppm.core.network import mixing_matrix
from ddppm.core.seeds import run_generators

BATCH = 20_000
"""Views drawn at once (memory: a batch of flattened views)."""


def witness_tasks(n: int, d: int, m: int, seed: int) -> tuple[CommonTask, CommonTask]:
    """Two neighbouring tasks: seeded rows in the unit ball over m agents, the first row of agent 0 set to ``e₁`` in
    one and ``e₂`` in the other (orthogonal unit rows: the sensitivity of every second-moment release)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None] * 1.5
    parts = tuple(np.array_split(np.arange(n), m))
    W = mixing_matrix("complete", m) if m > 1 else np.ones((1, 1))
    first, second = X.copy(), X.copy()
    first[parts[0][0]] = np.eye(d)[0]
    second[parts[0][0]] = np.eye(d)[1]
    return CommonTask(first, parts, 1, W), CommonTask(second, parts, 1, W)


@dataclass(frozen=True)
class AuditRow:
    """One audited (method, ε): the claim, the bound, the verdict and what the test was."""

    method: str
    trust_model: str
    eps: float
    delta: float
    draws: int
    eps_lower: float
    verdict: str
    test: str
    resolvable_delta_gap: float


def _views(method: Any, task: CommonTask, calibrated: Any, seed: int, label: tuple, draws: int) -> Iterable[np.ndarray]:
    """Views in batches; a batch's views draw one after another from one generator (independent draws: the audit
    needs no per-run replay, and creating a generator per view would cost more than drawing it)."""
    for batch, start in enumerate(range(0, draws, BATCH)):
        (rng,) = run_generators(seed, label, [batch])
        yield method.common_view(task, calibrated, [rng] * (min(start + BATCH, draws) - start))


def fisher_direction(first: np.ndarray, second: np.ndarray, ridge: float = 1e-9) -> np.ndarray:
    """``Σ⁻¹(μ′ − μ)`` from training views under each neighbour (pooled covariance, a relative ridge): the
    likelihood-ratio direction of two Gaussians with one covariance, correlated noise (CAPE's) included."""
    diff = second.mean(axis=0) - first.mean(axis=0)
    pooled = (np.cov(first, rowvar=False) + np.cov(second, rowvar=False)) / 2
    pooled = np.atleast_2d(pooled)
    pooled += ridge * np.trace(pooled) / pooled.shape[0] * np.eye(pooled.shape[0])
    return np.linalg.solve(pooled, diff)


def audit_method(name: str, method: Any, eps: float, delta: float, draws: int, seed: int,
                 tasks: tuple[CommonTask, CommonTask], options: dict[str, Any]) -> AuditRow:  # fmt: skip
    """Audit one method at (ε, δ): ``draws`` views per side are counted, as many choose the threshold, and a
    quarter as many train the direction of the linear test."""
    first, second = tasks
    calibrated = method.common_calibrate(first, eps, delta, options)
    train = max(draws // 4, 100)
    trained = [np.concatenate(list(_views(method, task, calibrated, seed, (name, eps, "train", side), train)))
               for side, task in enumerate(tasks)]  # fmt: skip
    direction = fisher_direction(trained[0], trained[1])
    scores = [np.concatenate([view @ direction for view in _views(method, task, calibrated, seed, (name, eps, side),
                                                                   2 * draws)])
              for side, task in enumerate(tasks)]  # fmt: skip
    result = audit_scores(scores[0], scores[1], delta)
    verdict = "violated" if result.eps_lower > eps else "consistent"
    return AuditRow(name, str(method.trust_model), float(eps), float(delta), result.draws, result.eps_lower, verdict,
                    "linear likelihood ratio (Gaussian view; Fisher direction from training draws)",
                    resolvable_delta_gap(eps, result.draws))  # fmt: skip


def audit_table(methods: dict[str, Any], eps_grid: Iterable[float], delta: float, draws: int, seed: int,
                task: dict[str, int], options: dict[str, Any]) -> pd.DataFrame:  # fmt: skip
    """Every method (name → method or mutant) at every ε, as a table (columns of :class:`AuditRow`)."""
    tasks = witness_tasks(int(task["n"]), int(task["d"]), int(task["m"]), seed)
    rows = [audit_method(name, method, float(eps), delta, draws, seed, tasks, options).__dict__
            for name, method in methods.items() for eps in eps_grid]  # fmt: skip
    return pd.DataFrame(rows)
