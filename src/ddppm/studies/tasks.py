"""The scale studies' tasks: the spiked synthetic rows split over m agents on a named topology.

Every study of :mod:`ddppm.studies.run` runs the common task (:class:`ddppm.common_task.task.CommonTask`) on the
seeded spiked set (:func:`ddppm.data.synthetic.spiked_synthetic`: n = 20,000, d = 50, known gaps by default),
its rows scaled into the unit ball by the largest row norm (the pipeline's ``scale`` normalisation, which keeps
the spectrum's shape), split over m agents by the pipeline's shuffled partition, and gossiping over the
Metropolis–Hastings weights of a topology (:func:`ddppm.core.network.mixing_matrix`).

Theorem 3's consensus term (:func:`consensus_term`) is the part of the journal's error bound that the network
controls: ``2 n_i m λ₂(W)^c / (λ₁ − λ₂)``, with ``n_i`` the largest agent's rows and ``λ₁ ≥ λ₂`` the top two
eigenvalues of ``XᵀX`` (a bound on sin², eq. 40). :func:`theorem3_consensus_rounds` is the smallest c that brings
it under a target: our reading of "the Theorem 3 choice" of c, which the paper leaves to the reader.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ddppm.common_task.task import CommonTask
from ddppm.core.network import mixing_matrix, second_eigenvalue
from ddppm.core.partition import partition_rows
from ddppm.data.synthetic import spiked_synthetic


@lru_cache(maxsize=8)
def spiked_rows(n: int, d: int, seed: int, spikes: tuple[float, ...] = (20.0, 10.0, 5.0)) -> np.ndarray:
    """The spiked set's rows (population spectrum ``spikes``, then 1s) scaled into the unit ball (largest row
    norm 1). Cached: every study point of one process shares them."""
    X = spiked_synthetic(n=n, d=d, spikes=tuple(float(s) for s in spikes), seed=seed)
    return X / np.linalg.norm(X, axis=1).max()


def scale_task(X: np.ndarray, m: int, topology: str, c: int, k: int, seed: int) -> CommonTask:
    """``X`` split over ``m`` agents (shuffled, seeded) gossiping ``c`` rounds per iteration over ``topology``."""
    parts = tuple(np.asarray(p) for p in partition_rows(X.shape[0], m, seed=seed))
    W = mixing_matrix(topology, m, seed=seed) if m > 1 else np.ones((1, 1))
    return CommonTask(X, parts, int(k), W, int(c))


def lambda2_of(W: np.ndarray) -> float:
    """λ₂(W), with round-off below 1e-12 read as 0 (the complete graph's W = 11ᵀ/m averages exactly)."""
    l2 = second_eigenvalue(W)
    return 0.0 if l2 < 1e-12 else l2


def consensus_term(task: CommonTask, c: int) -> float:
    """Theorem 3's consensus term ``2 n_i m λ₂(W)^c / (λ₁ − λ₂)`` (eq. 40) for the task's network after c rounds;
    ``inf`` when ``λ₁ = λ₂``."""
    lam = np.linalg.eigvalsh(task.gram)[::-1]
    gap = float(lam[0] - lam[1])
    n_i = max(len(p) for p in task.parts)
    l2 = lambda2_of(task.W)
    return 2.0 * n_i * task.m * l2**c / gap if gap > 0 else math.inf


def theorem3_consensus_rounds(task: CommonTask, target: float = 0.01, c_max: int = 100_000) -> int:
    """The smallest c with :func:`consensus_term` at most ``target`` (a share of sin²): ``⌈log(2 n_i m /
    (gap · target)) / log(1/λ₂)⌉``, at least 1; ``c_max`` when λ₂ = 1 or the gap is 0."""
    lam = np.linalg.eigvalsh(task.gram)[::-1]
    gap = float(lam[0] - lam[1])
    l2 = lambda2_of(task.W)
    if gap <= 0 or l2 >= 1:
        return c_max
    if l2 <= 0:
        return 1
    n_i = max(len(p) for p in task.parts)
    needed = math.log(2.0 * n_i * task.m / (gap * target)) / math.log(1.0 / l2)
    return int(min(c_max, max(1, math.ceil(needed - 1e-12))))
