"""DP-PCA (Liu, Kong, Jain & Oh, NeurIPS 2022, arXiv:2205.13709): one pass of minibatch Oja updates, each batch's
gradient mean released by a private mean estimator that adapts its noise to the batch's spread.

**The paper's design** (its abstract and Algorithm 1): the rows are read once, in T disjoint minibatches of B rows.
At step t the gradients of the batch are ``g_i = x_i x_iᵀ w_{t−1}``; a private mean estimator releases their mean
ĝ_t with noise scaled to the batch's own spread (not to the worst case ``‖g_i‖ ≤ 1``), and Oja's rule moves
``w_t = (w_{t−1} + η_t ĝ_t) / ‖w_{t−1} + η_t ĝ_t‖``. Each record is in one batch only, so the transcript is as
private as one batch's release: the privacy of one step is the privacy of the whole run.

**Our mean estimator** (the bench holds only the paper's abstract, so the estimator's parts are ours; each is a
Gaussian mechanism, so the accounting is exact GDP):

1. a public centre ``c_t``: the previous step's released mean, projected onto the unit ball (``c_1 = 0``);
2. a private radius: a histogram of the distances ``‖g_i − c_t‖`` over the fixed geometric bins
   ``(2^{−j−1}·2, 2^{−j}·2]`` (:data:`RADIUS_BINS`, the last one down to 0), each count plus ``N(0, σ_h²)``.
   Replacing one row moves one distance from one bin to another: L2 sensitivity √2. The radius τ_t is the
   smallest bin edge above which the noisy counts, summed from the top, stay under
   ``CLIPPED_SHARE · B + 3σ_h`` (:func:`private_radius`: post-processing);
3. the clipped sum: each ``g_i`` projected onto the ball of radius τ_t around ``c_t``, summed, plus
   ``N(0, (2τ_t ν)² I)``. Two clipped gradients differ by at most 2τ_t: sensitivity 2τ_t for every neighbour,
   whatever τ_t the histogram gave, so the step is a Gaussian mechanism of noise multiplier ν.

Per step the two releases compose to μ² = 2/σ_h² + 1/ν² (:data:`RADIUS_SHARE` of μ² to the histogram), and the
steps compose in parallel (disjoint batches; a later step's inputs are earlier releases): the run is μ-GDP with
that μ, calibrated to the (ε, δ) limit exactly (:func:`ddppm.common_task.budget.gdp_mu`). The δ is certified
for every neighbour under ``replace_one`` (and so under the smaller ``distance_one``), no assumption left.

**Our other choices**: T = min(⌈log₂ n⌉, ⌊n / :data:`MIN_BATCH`⌋) batches (at least 1) of a public random
partition of the rows, a uniform random start, and Oja's step ``η_t = STEP / (t ‖ĝ_t‖)`` (the gradient's norm
stands in for the paper's private top-eigenvalue estimate, at no privacy cost). Set on public synthetic data
(tests/methods/test_dp_pca.py), never on the benchmark's sets. DP-PCA estimates the top eigenvector only
(k = 1, :attr:`DPPCA.max_rank`), as the paper does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from ddppm.common_task.base import COMMON_TASK, Calibrated, CommonTaskMethod, GaussianRelease, certified, curator_costs
from ddppm.common_task.budget import gdp_mu
from ddppm.common_task.task import CommonTask
from ddppm.methods.base import RegisteredMethod, register
from ddppm.privacy.mechanisms import gaussian_release

RADIUS_SHARE = 0.1
"""The share of μ² spent on the radius histogram."""
CLIPPED_SHARE = 0.02
"""The share of a batch the radius may leave outside its ball (besides three noise deviations)."""
MIN_BATCH = 100
"""The fewest rows per batch: below that the radius histogram is mostly noise."""
STEP = 8.0
"""Oja's step constant: ``η_t ‖ĝ_t‖ = STEP / t``."""
RADIUS_BINS = 2.0 * 2.0 ** (-np.arange(32) / 2)
"""The upper edges of the radius histogram's bins, from 2 (the largest distance of a gradient, norm ≤ 1, to a
centre in the unit ball) down by factors of √2; the last bin reaches down to 0."""


def batch_count(n: int) -> int:
    """T, the number of minibatches for n rows: ``min(⌈log₂ n⌉, ⌊n / MIN_BATCH⌋)``, at least 1 (public: n only)."""
    return int(max(1, min(int(np.ceil(np.log2(max(n, 2)))), n // MIN_BATCH)))


def distance_histogram(distances: np.ndarray) -> np.ndarray:
    """Counts of ``distances`` (..., B) per bin of :data:`RADIUS_BINS`: bin j holds ``(edge_{j+1}, edge_j]``, the
    last bin ``[0, edge_last]``; shape (..., bins). (A distance above 2 cannot occur; it would count in bin 0.)"""
    bins = len(RADIUS_BINS)
    rising = np.searchsorted(RADIUS_BINS[::-1], distances, side="left")
    index = bins - 1 - np.minimum(rising, bins - 1)
    flat = index.reshape(-1, distances.shape[-1]) + bins * np.arange(index.size // distances.shape[-1])[:, None]
    counts = np.bincount(flat.ravel(), minlength=flat.shape[0] * bins).astype(float)
    return counts.reshape(*distances.shape[:-1], bins)


def radius_allowance(batch: int, histogram_sigma: float) -> float:
    """How many of a batch's distances the radius may leave above it: ``CLIPPED_SHARE · B + 3σ_h`` (public)."""
    return CLIPPED_SHARE * batch + 3.0 * histogram_sigma


def private_radius(noisy_counts: np.ndarray, allowed: float | np.ndarray) -> np.ndarray:
    """τ per run from noisy bin counts (..., bins), largest distances first: the upper edge of the first bin
    whose noisy count, added to those above it, exceeds ``allowed`` (the last bin's edge if none does)."""
    above = np.cumsum(noisy_counts, axis=-1) > np.asarray(allowed)[..., None]
    first = np.where(above.any(axis=-1), above.argmax(axis=-1), len(RADIUS_BINS) - 1)
    return RADIUS_BINS[first]


def clip_to_ball(points: np.ndarray, centre: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """Each point (runs, B, d) projected onto the ball of ``radius`` (runs,) around ``centre`` (runs, d)."""
    offsets = points - centre[:, None, :]
    norms = np.linalg.norm(offsets, axis=-1)
    return centre[:, None, :] + offsets * _shrink(norms, radius)[..., None]


def _shrink(norms: np.ndarray, radius: np.ndarray) -> np.ndarray:
    return np.minimum(1.0, radius[:, None] / np.maximum(norms, 1e-300))


def batch_distances(rows: np.ndarray, w: np.ndarray, centre: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For a batch (runs, B, d): the projections ``p_i = x_iᵀw`` and the distances ``‖g_i − c‖`` of the gradients
    ``g_i = p_i x_i`` to the centre, from ``‖g_i − c‖² = p_i²‖x_i‖² − 2p_i x_iᵀc + ‖c‖²`` (no (runs, B, d) array
    is formed beyond the rows: three passes over them instead of six)."""
    both = np.matmul(rows, np.stack([w, centre], axis=2))  # (runs, B, 2): x_iᵀw and x_iᵀc
    p, towards = both[..., 0], both[..., 1]
    squared = p**2 * np.einsum("rbd,rbd->rb", rows, rows) - 2 * p * towards + np.sum(centre**2, axis=1)[:, None]
    return p, np.sqrt(np.maximum(squared, 0.0))


def clipped_sum(rows: np.ndarray, p: np.ndarray, distances: np.ndarray, centre: np.ndarray,
                radius: np.ndarray) -> np.ndarray:  # fmt: skip
    """``Σ_i clip(g_i) = Σ_i c + s_i (g_i − c)``, ``s_i = min(1, τ/‖g_i − c‖)``: ``(B − Σ s_i) c + Σ_i s_i p_i x_i``
    (equal to :func:`clip_to_ball` summed; tested)."""
    shrink = _shrink(distances, radius)
    weighted = np.matmul((shrink * p)[:, None, :], rows)[:, 0, :]
    return (rows.shape[1] - shrink.sum(axis=1))[:, None] * centre + weighted


def project_to_unit_ball(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.maximum(norms, 1.0)


def dp_pca_transcript(X: np.ndarray, params: dict[str, Any], rngs: Sequence[np.random.Generator]) -> dict[str, Any]:
    """Every run of DP-PCA on rows ``X``, vectorised over the generators: the batches (``order``, T × B), and per
    step t the iterate before it ``w`` (runs, T, d), the centre ``centre`` (runs, T, d), the noisy histogram
    ``counts`` (runs, T, bins), the radius ``radius`` (runs, T) and the noisy clipped sum ``sums`` (runs, T, d), then
    the estimate ``estimate`` (runs, d). Each generator draws, in order, its batch order, its start, then per step
    its histogram's and its sum's noise: the same generator gives the same run whatever the others."""
    n, d = X.shape
    T = batch_count(n)
    B = n // T
    sigma_h, nu = float(params["histogram_sigma"]), float(params["multiplier"])
    runs = len(rngs)
    orders = np.stack([rng.permutation(n)[: T * B].reshape(T, B) for rng in rngs])
    w = np.stack([rng.standard_normal(d) for rng in rngs])
    w /= np.linalg.norm(w, axis=1, keepdims=True)
    centre = np.zeros((runs, d))
    out = {key: [] for key in ("w", "centre", "counts", "radius", "sums")}
    allowed = radius_allowance(B, sigma_h)
    for t in range(T):
        rows = X[orders[:, t]]
        p, distances = batch_distances(rows, w, centre)
        counts = distance_histogram(distances)
        counts = np.stack([gaussian_release(counts[r], sigma_h, rng) for r, rng in enumerate(rngs)])
        radius = private_radius(counts, allowed)
        sums = clipped_sum(rows, p, distances, centre, radius)
        stds = 2.0 * radius * nu
        sums = np.stack([gaussian_release(sums[r], stds[r], rng) for r, rng in enumerate(rngs)])
        for key, value in zip(out, (w, centre, counts, radius, sums), strict=True):
            out[key].append(value)
        w = oja_step(w, sums / B, t + 1)
        centre = project_to_unit_ball(sums / B)
    transcript = {key: np.stack(values, axis=1) for key, values in out.items()}
    return {**transcript, "order": orders, "estimate": w, "batch": B}


def oja_step(w: np.ndarray, mean: np.ndarray, t: int) -> np.ndarray:
    """Oja's rule with ``η_t = STEP / (t ‖ĝ_t‖)``: ``w + η_t ĝ_t``, normalised (per run)."""
    norms = np.linalg.norm(mean, axis=1, keepdims=True)
    moved = w + STEP / t * mean / np.maximum(norms, 1e-300)
    return moved / np.linalg.norm(moved, axis=1, keepdims=True)


@register
class DPPCA(RegisteredMethod, CommonTaskMethod):
    name = "dp_pca"
    label = "DP-PCA (one-pass private Oja)"
    style: ClassVar[dict[str, Any]] = {"color": "#9467bd", "marker": "h", "linestyle": "-"}
    task = COMMON_TASK
    trust_model = "central"
    secure_noise = True
    source = "Liu, Kong, Jain & Oh 2022 (arXiv:2205.13709); mean estimator ours"
    max_rank: ClassVar[int | None] = 1

    def common_calibrate(self, task: CommonTask, eps: float, delta_limit: float, options: dict[str, Any]) -> Calibrated:
        mu = gdp_mu(eps, delta_limit)
        histogram_sigma = np.sqrt(2.0) / (np.sqrt(RADIUS_SHARE) * mu)
        multiplier = 1.0 / (np.sqrt(1.0 - RADIUS_SHARE) * mu)
        params = {"histogram_sigma": float(histogram_sigma), "multiplier": float(multiplier),
                  "batches": batch_count(task.n)}  # fmt: skip
        # Parallel composition over the batches: one step's two releases are the whole run's privacy.
        releases = [GaussianRelease(np.sqrt(2.0), histogram_sigma), GaussianRelease(1.0, multiplier)]
        return certified(eps, delta_limit, params, releases)

    def common_estimate(
        self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator], options: dict[str, Any]
    ) -> np.ndarray:
        return dp_pca_transcript(task.X, calibrated.params, rngs)["estimate"][:, :, None]

    def common_view(self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """The step whose batch holds record 0, with the public batch order: ``[t, its rows' indices (B), w, centre,
        noisy counts, noisy sum]``. Every other step's releases have, given the ones before them, the same law
        under both neighbours (record 0 is in no other batch): a test gains nothing from them. The order is
        published: the guarantee does not rest on its secrecy (no amplification is claimed)."""
        tr = dp_pca_transcript(task.X, calibrated.params, rngs)
        runs = np.arange(len(rngs))
        step = np.argmax((tr["order"] == 0).any(axis=2), axis=1)
        parts = [step[:, None], tr["order"][runs, step], tr["w"][runs, step], tr["centre"][runs, step],
                 tr["counts"][runs, step], tr["sums"][runs, step]]  # fmt: skip
        return np.concatenate([np.asarray(part, float) for part in parts], axis=1)

    def common_view_scores(self, first: CommonTask, second: CommonTask, calibrated: Calibrated,
                           views: np.ndarray) -> np.ndarray:  # fmt: skip
        """The log-likelihood ratio of the step holding record 0 given what came before (the histogram's
        Gaussian term plus the clipped sum's, whose scale 2τν the released counts fix) and its two terms."""
        p = calibrated.params
        d, B, bins = first.d, (views.shape[1] - 1 - 3 * first.d - len(RADIUS_BINS)), len(RADIUS_BINS)
        members = views[:, 1 : 1 + B].astype(int)
        w, centre, counts, sums = np.split(views[:, 1 + B :], np.cumsum([d, d, bins]), axis=1)
        radius = private_radius(counts, radius_allowance(B, float(p["histogram_sigma"])))
        histogram_terms, sum_terms = [], []
        for task in (first, second):
            rows = task.X[members]
            projections, distances = batch_distances(rows, w, centre)
            exact = distance_histogram(distances)
            histogram_terms.append(np.sum((counts - exact) ** 2, axis=1) / (2 * float(p["histogram_sigma"]) ** 2))
            clipped = clipped_sum(rows, projections, distances, centre, radius)
            sum_terms.append(np.sum((sums - clipped) ** 2, axis=1) / (2 * (2 * radius * float(p["multiplier"])) ** 2))
        histogram_term = histogram_terms[0] - histogram_terms[1]
        sum_term = sum_terms[0] - sum_terms[1]
        return np.column_stack([histogram_term + sum_term, histogram_term, sum_term])

    def common_costs(self, task: CommonTask, calibrated: Calibrated) -> dict[str, Any]:
        return curator_costs(task)
