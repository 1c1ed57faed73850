"""The common task and its metrics: the top-k principal directions of row-partitioned data.

Data: ``X`` (n × d), one individual per row, every row in the unit ball, rows split over m agents. Target: the
top-k eigenvectors ``V`` (d × k) of ``XᵀX``, what a user of PCA projects with and what every source paper
estimates (the journal's left singular vector ``u = Xv/‖Xv‖`` is a function of the same ``v``).

Metrics, for an estimate ``V̂`` with orthonormal columns:

* subspace error ``‖V̂V̂ᵀ − VVᵀ‖_F / √(2k)`` in [0, 1] (:func:`subspace_error`; for k = 1 it is ``sin∠(v, v̂)``);
* captured variance ``tr(V̂ᵀXᵀXV̂) / tr(VᵀXᵀXV)`` in [0, 1] (:func:`captured_variance`);
* chance level: the root-mean-square subspace error of a uniformly random k-subspace, ``sqrt(1 − k/d)``
  (:func:`chance_error`; ``E tr(PP̂) = k²/d`` for P̂ uniform, so ``E‖P̂ − P‖²_F = 2k(1 − k/d)``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ddppm.core.arrays import row_norms
from ddppm.core.errors import DataError


@dataclass(frozen=True)
class CommonTask:
    """Rows ``X`` (n × d) in the unit ball, split over agents (``parts``: row indices per agent), and the rank k.

    ``W`` is the network's mixing matrix when the agents gossip (None when no method needs it) and ``consensus``
    the gossip rounds per iteration (the pipeline's c)."""

    X: np.ndarray
    parts: tuple[np.ndarray, ...]
    k: int
    W: np.ndarray | None = field(default=None, repr=False)
    consensus: int = 1

    def __post_init__(self) -> None:
        n, d = self.X.shape
        if not 1 <= self.k < d:
            raise DataError(f"common task: rank k = {self.k} must satisfy 1 <= k < d = {d}")
        norms = row_norms(self.X)
        if norms.max() > 1 + 1e-9:
            raise DataError(f"common task: a row has norm {norms.max():.6g} > 1; rows must lie in the unit ball")
        rows = np.sort(np.concatenate(self.parts))
        if rows.size != n or not np.array_equal(rows, np.arange(n)):
            raise DataError("common task: the agents' row sets must partition the rows 0..n-1")

    @classmethod
    def shape_only(cls, sizes: Any, d: int, k: int, W: np.ndarray | None = None, consensus: int = 1) -> CommonTask:
        """A task of the agents' row counts ``sizes`` and d features without rows (a zero-memory array of zeros,
        each agent's rows a ``range``): what a calibration reads (n, d, k, m, each agent's count), never the rows.
        Unchecked but for k: at 10⁸ rows the checks alone would allocate gigabytes."""
        if not 1 <= k < d:
            raise DataError(f"common task: rank k = {k} must satisfy 1 <= k < d = {d}")
        starts = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        task = object.__new__(cls)
        rows = np.broadcast_to(np.zeros(1), (int(starts[-1]), int(d)))
        parts = tuple(range(int(a), int(b)) for a, b in zip(starts[:-1], starts[1:], strict=True))
        for name, value in (("X", rows), ("parts", parts), ("k", int(k)), ("W", W), ("consensus", int(consensus))):
            object.__setattr__(task, name, value)
        return task

    @classmethod
    def from_problem(cls, problem: Any, k: int) -> CommonTask:
        """The task on a :class:`~ddppm.core.problem.DistributedProblem` (the pipeline's data, partition and
        network): its stacked rows, each agent's rows, its mixing matrix."""
        parts = tuple(np.arange(problem.n)[problem.agent_slice(i)] for i in range(problem.m))
        return cls(problem.X, parts, int(k), problem.W, int(problem.c))

    @cached_property
    def Wc(self) -> np.ndarray:
        """``W^c``: one iteration's consensus (the identity's average over agents when there is no network)."""
        if self.W is None:
            raise DataError("common task: a gossip method needs the agents' mixing matrix W")
        return np.linalg.matrix_power(self.W, self.consensus)

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])

    @property
    def m(self) -> int:
        return len(self.parts)

    @cached_property
    def gram(self) -> np.ndarray:
        """``XᵀX`` (d × d)."""
        return self.X.T @ self.X

    def local_gram(self, agent: int) -> np.ndarray:
        """``X_jᵀX_j`` of agent ``j`` (the local second-moment matrix, unnormalised)."""
        return self.local_grams[agent]

    @cached_property
    def local_grams(self) -> np.ndarray:
        """Every agent's ``X_jᵀX_j`` (m × d × d), computed once per task."""
        return np.stack([self.X[part].T @ self.X[part] for part in self.parts])

    @cached_property
    def row_factor(self) -> np.ndarray:
        """``R`` of the thin QR ``X = UR`` (d × d, ``RᵀR = XᵀX``): computed once, reused by every run and ε."""
        return np.linalg.qr(self.X, mode="r")

    @cached_property
    def spectrum(self) -> tuple[np.ndarray, np.ndarray]:
        """Eigenvalues (descending) and eigenvectors of ``XᵀX``."""
        values, vectors = np.linalg.eigh(self.gram)
        return values[::-1], vectors[:, ::-1]

    @property
    def V(self) -> np.ndarray:
        """The target: the top-k eigenvectors of ``XᵀX`` (d × k)."""
        return self.spectrum[1][:, : self.k]

    @property
    def eigengap(self) -> float:
        """``λ_k − λ_{k+1}`` of ``XᵀX`` (the target is well defined only if it is > 0)."""
        values = self.spectrum[0]
        return float(values[self.k - 1] - values[self.k])


def subspace_error(V_hat: np.ndarray, V: np.ndarray) -> np.ndarray:
    """``‖V̂V̂ᵀ − VVᵀ‖_F / √(2k)`` for each estimate: ``V_hat`` has shape (d, k) or (runs, d, k), orthonormal columns.

    With orthonormal bases, ``‖V̂V̂ᵀ − VVᵀ‖²_F = 2k − 2‖VᵀV̂‖²_F``: computed that way (no d × d products), clipped
    at 0 against round-off."""
    V_hat = np.asarray(V_hat, float)
    k = V.shape[1]
    overlap = np.einsum("dk,...dl->...kl", V, V_hat)
    squared = 2 * k - 2 * np.einsum("...kl,...kl->...", overlap, overlap)
    return np.sqrt(np.clip(squared, 0.0, None) / (2 * k))


def captured_variance(V_hat: np.ndarray, task: CommonTask) -> np.ndarray:
    """``tr(V̂ᵀXᵀXV̂) / tr(VᵀXᵀXV)``: the share of the best rank-k variance the estimate captures."""
    V_hat = np.asarray(V_hat, float)
    captured = np.einsum("...dk,de,...ek->...", V_hat, task.gram, V_hat)
    best = float(task.spectrum[0][: task.k].sum())
    return captured / best


def chance_error(d: int, k: int) -> float:
    """Root-mean-square :func:`subspace_error` of a uniformly random k-subspace of R^d: ``sqrt(1 − k/d)``."""
    return float(np.sqrt(1 - k / d))
