"""Cai, Xia & Zha's differentially private PCA (arXiv:2401.03820): a Gaussian mechanism on the spectral projector,
made private for every neighbour by a private test of the eigengap (our wrapper; docs/common_task.md).

**The paper's estimator.** With ``Û`` the top-k eigenvectors of the sample second moment, release
``ÛÛᵀ + E`` (E symmetric Gaussian) and return the top-k eigenvectors of that. Its noise is scaled by a sensitivity
that holds when the data's eigengap ``λ_k − λ_{k+1}`` is large, which the paper takes from its spiked model (a
known signal strength, with high probability over the data). The eigenvalues are privatised separately; the
common task needs the directions only, so they are not released here.

**Sensitivity (Davis–Kahan).** For ``A = XᵀX`` and a neighbour ``A′ = A + E`` (``E = ±(xxᵀ − x′x′ᵀ)``: rank ≤ 2,
``‖E‖₂ ≤ 1``, ``‖E‖_F ≤ √2`` under ``replace_one``), Yu, Wang & Samworth (2015, Theorem 2) give
``‖sin Θ‖_F ≤ 2 min(√k ‖E‖₂, ‖E‖_F)/g`` with ``g = λ_k(A) − λ_{k+1}(A)`` the gap of either of the two, and
``‖P − P′‖_F = √2 ‖sin Θ‖_F``; always ``‖P − P′‖_F ≤ √(2 min(k, d − k))``. So

    Δ(g) = min(2√2 · min(√k ‖E‖₂, ‖E‖_F) / g,  √(2 min(k, d − k)))                     (:func:`projector_sensitivity`)

**The wrapper (propose–test–release with a private lower bound).** Each eigenvalue moves by at most ``‖E‖₂``, so
the gap has sensitivity ``2‖E‖₂``. Release ``t = g + s Z₁ − s z_{1−β}`` (a Gaussian mechanism; ``P(t > g) = β``),
then ``P + cΔ(t) Z₂`` (``Z₂`` symmetric, i.i.d. on and above the diagonal). Whenever ``t ≤ g(X)`` the second
release is a Gaussian mechanism of noise multiplier c for every neighbour. The transcript is therefore the
composition of two Gaussian mechanisms (μ² = (2‖E‖₂/s)² + 1/c²) except on the test's failure, of probability at most
β under each neighbour, which adds ``(1 + e^ε) β`` to δ (:func:`ddppm.common_task.base.failure_delta`). Budget: a
share :data:`FAILURE_SHARE` of the δ limit goes to the failure, and :data:`GAP_SHARE` of μ² to the gap.
The δ is certified for every neighbour: no distributional assumption is left.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from ddppm.common_task.adjacency import release_sensitivity
from ddppm.common_task.base import (
    COMMON_TASK,
    Calibrated,
    CommonTaskMethod,
    GaussianRelease,
    certified,
    curator_costs,
    top_k,
    upper_triangle,
)
from ddppm.common_task.budget import gdp_mu
from ddppm.common_task.task import CommonTask
from ddppm.methods.base import RegisteredMethod, register
from ddppm.privacy.mechanisms import gaussian_release, symmetric_release

GAP_SHARE = 0.1
"""The share of μ² spent on the eigengap's lower bound (ours: the paper assumes the gap known)."""
FAILURE_SHARE = 0.01
SQRT2 = float(np.sqrt(2.0))
"""The share of the δ limit spent on the lower bound's failure, ``(1 + e^ε) β``."""


def projector_sensitivity(gap: float, k: int, d: int, spectral: float = 1.0, frobenius: float = SQRT2) -> float:
    """Δ(g): the largest ``‖P(X) − P(X′)‖_F`` over neighbours of a data set whose second moment has top-k eigengap
    ``gap``, when a neighbour moves the second moment by at most ``spectral`` in spectral norm and ``frobenius`` in
    Frobenius norm (``replace_one``: 1 and √2; module docs; the cap holds for every pair)."""
    cap = float(np.sqrt(2 * min(k, d - k)))
    if gap <= 0:
        return cap
    return float(min(2 * np.sqrt(2) * min(np.sqrt(k) * spectral, frobenius) / gap, cap))


def top_gap(gram: np.ndarray, k: int) -> float:
    """``λ_k − λ_{k+1}`` of a symmetric matrix."""
    values = np.linalg.eigvalsh(gram)[::-1]
    return float(values[k - 1] - values[k])


def projector(gram: np.ndarray, k: int) -> np.ndarray:
    """``ÛÛᵀ``, the projector on the top-k eigenvectors."""
    U = top_k(gram[None], k)[0]
    return U @ U.T


def _sensitivity(gap: float, task: CommonTask, params: dict[str, Any]) -> float:
    return projector_sensitivity(gap, task.k, task.d, float(params["spectral"]), float(params["frobenius"]))


def private_projector(task: CommonTask, params: dict[str, Any], rng: np.random.Generator) -> tuple[float, np.ndarray]:
    """One run: the gap's private lower bound t and the noisy projector (module docs), from one generator."""
    gap = float(gaussian_release(top_gap(task.gram, task.k), float(params["gap_sigma"]), rng))
    lower = gap - float(params["gap_sigma"]) * float(params["gap_quantile"])
    scale = float(params["multiplier"]) * _sensitivity(lower, task, params)
    return lower, symmetric_release(projector(task.gram, task.k), scale, rng)


@register
class CaiXiaZhaPCA(RegisteredMethod, CommonTaskMethod):
    name = "cai_xia_zha"
    label = "Cai–Xia–Zha (noisy projector; private gap test)"
    style: ClassVar[dict[str, Any]] = {"color": "#e7ba52", "marker": "*", "linestyle": "-"}
    task = COMMON_TASK
    failure_test = True
    trust_model = "central"
    secure_noise = True
    source = "Cai, Xia & Zha 2024 (arXiv:2401.03820); gap test ours"

    def common_calibrate(self, task: CommonTask, eps: float, delta_limit: float, options: dict[str, Any]) -> Calibrated:
        from scipy.stats import norm

        # β = share·δ/(1 + e^ε), in logs (e^ε overflows from ε ≈ 709). Where β is below the smallest normal double
        # its rounding would raise the certified (1 + e^ε)·β above the share: the test is skipped instead (β = 0,
        # an infinite quantile: the cap, which holds for every pair, always applies), which costs no δ
        failure = float(np.exp(np.log(FAILURE_SHARE * delta_limit) - np.logaddexp(0.0, eps)))
        if failure < np.finfo(float).tiny:
            failure = 0.0
        mu = gdp_mu(eps, (1.0 - FAILURE_SHARE) * delta_limit)
        spectral = release_sensitivity("power_step", options["adjacency"], block=1)
        gap_sensitivity = 2.0 * spectral
        gap_sigma = gap_sensitivity / (np.sqrt(GAP_SHARE) * mu)
        multiplier = 1.0 / (np.sqrt(1.0 - GAP_SHARE) * mu)
        frobenius = release_sensitivity("second_moment", options["adjacency"])
        params = {"gap_sigma": gap_sigma, "gap_quantile": float(norm.isf(failure)), "multiplier": multiplier,
                  "spectral": spectral, "frobenius": frobenius}  # fmt: skip
        releases = [GaussianRelease(gap_sensitivity, gap_sigma), GaussianRelease(1.0, multiplier)]
        return certified(eps, delta_limit, params, releases, test_failure=failure)

    def common_estimate(
        self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator], options: dict[str, Any]
    ) -> np.ndarray:
        p = calibrated.params
        return top_k(np.stack([private_projector(task, p, rng)[1] for rng in rngs]), task.k)

    def common_view(self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """The curator's two releases: the gap's lower bound and the noisy projector's upper triangle."""
        p = calibrated.params
        views = []
        for rng in rngs:
            lower, noisy = private_projector(task, p, rng)
            views.append(np.concatenate([[lower], upper_triangle(noisy)]))
        return np.stack(views)

    def common_view_scores(self, first: CommonTask, second: CommonTask, calibrated: Calibrated,
                           views: np.ndarray) -> np.ndarray:  # fmt: skip
        """The log-likelihood ratio (gap term plus projector term) and its two terms: t is ``N(g − s z, s²)``,
        and given t the projector's entries are ``N(P, (cΔ(t))²)`` under either neighbour."""
        p = calibrated.params
        s, shift = float(p["gap_sigma"]), float(p["gap_sigma"]) * float(p["gap_quantile"])
        lower, entries = views[:, 0], views[:, 1:]
        gaps = [top_gap(task.gram, task.k) - shift for task in (first, second)]
        gap_term = ((lower - gaps[0]) ** 2 - (lower - gaps[1]) ** 2) / (2 * s**2)
        scales = float(p["multiplier"]) * np.array([_sensitivity(t, first, p) for t in lower])
        means = [upper_triangle(projector(task.gram, task.k)) for task in (first, second)]
        distance = [np.sum((entries - mean) ** 2, axis=1) for mean in means]
        projector_term = (distance[0] - distance[1]) / (2 * scales**2)
        return np.column_stack([gap_term + projector_term, gap_term, projector_term])

    def common_costs(self, task: CommonTask, calibrated: Calibrated) -> dict[str, Any]:
        return curator_costs(task)
