"""Attack a method as implemented: draw the observer's whole view under a witness pair of neighbours and bound ε
from below (docs/audit.md).

* **The witness pair** (:func:`witness_tasks`): two tasks that differ in record 0 (agent 0's first row), chosen per
  method (``audit_witness``) so that their difference attains the sensitivity of the method's release: orthogonal
  unit rows for every release of ``XᵀX``, ``X_jᵀX_j``, ``x xᵀ`` or a power step near ``e₁``; a row and its negative
  for released rows; orthogonal rows alone for a sampler the other rows would pin.
* **The view** is the method's :meth:`~ddppm.common_task.base.CommonTaskMethod.common_view`, drawn with the same
  code and generators as its estimate.
* **The test** (:func:`audit_method`): where the method gives the log-likelihood ratio of its view as specified
  (:meth:`~ddppm.common_task.base.CommonTaskMethod.common_view_scores`: the power-method family and the certified
  D-DP-PM, whose releases are Gaussian given the earlier ones), that ratio and its per-release terms are the
  candidate statistics. Otherwise the view is Gaussian with a covariance that does not depend on the data, so the
  likelihood-ratio test is linear: project on ``Σ⁻¹(μ′ − μ)`` (:func:`fisher_direction`), estimated from training
  draws kept apart. The statistic and its threshold are chosen on draws kept apart from those counted
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

from ddppm.audit.bounds import audit_scores, resolvable_delta_gap, verdict
from ddppm.audit.mutants import has_exact_scores
from ddppm.common_task.task import CommonTask
from ddppm.core.network import mixing_matrix
from ddppm.core.seeds import run_generators

BATCH = 20_000
"""Views drawn at once (memory: a batch of flattened views)."""


WITNESSES = ("second_moment", "rows", "lone_record")


def witness_tasks(n: int, d: int, m: int, seed: int, witness: str = "second_moment") -> tuple[CommonTask, CommonTask]:
    """Two neighbouring tasks: seeded rows in the unit ball over m agents, stretched along ``e₁`` (so that a power
    method's block turns towards the changed direction, where its release's sensitivity is attained), and record 0
    (agent 0's first row) replaced: ``e₁`` in one and ``e₂`` in the other for ``second_moment`` (orthogonal unit
    rows attain the sensitivity of every release of ``XᵀX``, ``X_jᵀX_j`` or ``x xᵀ``, and of a power step whose
    block is ``e₁``), ``e₁`` and ``−e₁`` for ``rows`` (the rows' sensitivity, 2); ``lone_record`` is
    ``second_moment`` with every other row zero (an exponential mechanism's draw is then spread over the sphere
    instead of held by the other rows' spike, and its score's change is seen whole)."""
    if witness not in WITNESSES:
        raise ValueError(f"unknown witness {witness!r}; known: {WITNESSES}")
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X[:, 0] *= 3.0
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None] * 1.5
    X *= 0.0 if witness == "lone_record" else 1.0
    parts = tuple(np.array_split(np.arange(n), m))
    W = mixing_matrix("complete", m) if m > 1 else np.ones((1, 1))
    first, second = X.copy(), X.copy()
    first[parts[0][0]] = np.eye(d)[0]
    second[parts[0][0]] = -np.eye(d)[0] if witness == "rows" else np.eye(d)[1]
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


LINEAR_TEST = "linear likelihood ratio (Gaussian view; Fisher direction from training draws)"
EXACT_TEST = ("likelihood ratio of the mechanism as specified, and its per-release terms where it makes several "
              "releases (the best chosen on held-out draws)")


def _statistics(name: str, method: Any, tasks: tuple[CommonTask, CommonTask], calibrated: Any, seed: int, eps: float,
                draws: int) -> tuple[list[np.ndarray], str]:  # fmt: skip
    """Each side's candidate statistics over ``2 · draws`` views, and the test's name: the method's own likelihood
    ratio where it gives one, else the linear test trained on a quarter as many draws kept apart."""
    exact = has_exact_scores(method)
    if not exact:
        train = max(draws // 4, 100)
        trained = [np.concatenate(list(_views(method, task, calibrated, seed, (name, eps, "train", side), train)))
                   for side, task in enumerate(tasks)]  # fmt: skip
        direction = fisher_direction(trained[0], trained[1])

    def statistic(views: np.ndarray) -> np.ndarray:
        return method.common_view_scores(*tasks, calibrated, views) if exact else views @ direction

    scores = [np.concatenate([statistic(view) for view in _views(method, task, calibrated, seed, (name, eps, side),
                                                                 2 * draws)])
              for side, task in enumerate(tasks)]  # fmt: skip
    return scores, EXACT_TEST if exact else LINEAR_TEST


def audit_method(name: str, method: Any, eps: float, delta: float, draws: int, seed: int,
                 tasks: tuple[CommonTask, CommonTask], options: dict[str, Any]) -> AuditRow:  # fmt: skip
    """Audit one method at (ε, δ): ``draws`` views per side are counted and as many choose the test's statistic and
    threshold (:func:`_statistics`)."""
    calibrated = method.common_calibrate(tasks[0], eps, delta, options)
    scores, test = _statistics(name, method, tasks, calibrated, seed, eps, draws)
    result = audit_scores(scores[0], scores[1], delta)
    return AuditRow(name, str(method.trust_model), float(eps), float(delta), result.draws, result.eps_lower,
                    verdict(result.eps_lower, eps), test, resolvable_delta_gap(eps, result.draws))  # fmt: skip


def audit_table(methods: dict[str, Any], eps_grid: Iterable[float], delta: float, draws: int, seed: int,
                task: dict[str, int], options: dict[str, Any]) -> pd.DataFrame:  # fmt: skip
    """Every method (name → method or mutant) at every ε, each on its witness pair, as a table (columns of
    :class:`AuditRow`)."""
    pairs = {witness: witness_tasks(int(task["n"]), int(task["d"]), int(task["m"]), seed, witness)
             for witness in WITNESSES}  # fmt: skip
    rows = [audit_method(name, method, float(eps), delta, draws, seed, pairs[method.audit_witness], options).__dict__
            for name, method in methods.items() for eps in eps_grid]  # fmt: skip
    return pd.DataFrame(rows)
