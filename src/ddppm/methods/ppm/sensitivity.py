r"""L2 sensitivity of one power iteration ``A X ↦ A' X`` (the query each release of the private power method
answers), and the first-step comparison of the two bounds (their Fig. 2).

Reference: Nicolas et al., "Differentially private and decentralized randomized power method" (arXiv:2411.01931),
§2.2, §3 (Theorem 3.1), Appendix B (Lemma B.1) and Appendix C (Approximation 6.2).

Adjacency. Two PSD matrices are adjacent when ``A' = A + C`` with C symmetric and
``sqrt(Σ_i ‖C_{i:}‖₁²) ≤ b`` (their eq. 7, with budget b):

``matrix`` (b = 1)
    Their eq. 7; it contains the single-entry changes of Hardt & Price (eq. 6).
``interaction`` (b = √2)
    Removing one user–item interaction from the implicit-feedback matrix R changes the user-normalised item–item
    matrix ``Ã = Σ_u d_u⁻¹ R_uᵀ R_u`` by a C with ``Σ_i ‖C_{i:}‖₁² = 4(d−1)/d² + 1 ≤ 2`` (their eq. 54–71, d the
    user's degree before removal: :func:`interaction_row_l1_budget`; **erratum**: their eq. 62–63 print
    ``2(d−1)/d²`` for the first term, but ``(1/d + 1/d)² = 4/d²``; the bound 2 still holds, at d = 2).

Rules for ``Δ_ℓ = sup ‖C X^{ℓ−1}‖_F`` (computed from the public ``X^{ℓ−1}``, the block being multiplied):

``prior``
    ``b · √p ‖X‖_max`` (their eq. 3; Hardt & Price 2014, Balcan et al. 2016).
``theirs``
    ``b · max_i ‖X_{i:}‖₂`` (their eq. 8, Theorem 3.1; Lemma B.1 for b = √2). Tight: ``C = e_i e_iᵀ`` attains it.
``constant``
    ``b · √p``, the non-adaptive bound ``‖X‖_max ≤ 1`` gives (FedPower, synchronous).

References: M. Hardt and E. Price, "The noisy power method: a meta algorithm with applications", NeurIPS 2014
(arXiv:1311.2495); M.-F. Balcan, S. S. Du, Y. Wang and A. W. Yu, "An improved gap-dependency analysis of the
noisy power method", COLT 2016 (arXiv:1602.07046); X. Guo, X. Li, X. Chang, S. Wang and Z. Zhang, "FedPower:
privacy-preserving distributed eigenspace estimation", Machine Learning (2024, arXiv:2103.00704).
"""

from __future__ import annotations

import numpy as np

from ddppm.methods.ppm.linalg import cholesky_qr

ADJACENCY_BUDGET: dict[str, float] = {"matrix": 1.0, "interaction": float(np.sqrt(2.0))}
"""``b`` of each adjacency: the bound on ``sqrt(Σ_i ‖C_{i:}‖₁²)`` of an adjacent change (their eq. 7, eq. 72)."""

RULES: tuple[str, ...] = ("prior", "theirs", "constant")
"""Sensitivity rules (see the module docstring)."""


def prior_bound(X: np.ndarray) -> np.ndarray:
    """``√p ‖X‖_max`` (their eq. 3), for ``X`` of shape ``(n, p)`` or ``(runs, n, p)``."""
    p = X.shape[-1]
    return np.sqrt(p) * np.abs(X).max(axis=(-2, -1))


def row_norm_bound(X: np.ndarray) -> np.ndarray:
    """``max_i ‖X_{i:}‖₂`` (their eq. 8), for ``X`` of shape ``(n, p)`` or ``(runs, n, p)``."""
    return np.sqrt(np.einsum("...ij,...ij->...i", X, X).max(axis=-1))


def constant_bound(X: np.ndarray) -> np.ndarray:
    """``√p`` whatever X is (non-adaptive: ``‖X‖_max ≤ 1`` for orthonormal columns)."""
    return np.full(X.shape[:-2], np.sqrt(X.shape[-1]))


_BOUNDS = {"prior": prior_bound, "theirs": row_norm_bound, "constant": constant_bound}


def sensitivity(rule: str, X: np.ndarray, adjacency: str) -> np.ndarray:
    """``Δ = b · bound(X)``: the sensitivity of ``A X`` under ``adjacency`` by ``rule``, one value per run."""
    if rule not in _BOUNDS:
        raise ValueError(f"unknown sensitivity rule {rule!r}; known: {list(RULES)}")
    if adjacency not in ADJACENCY_BUDGET:
        raise ValueError(f"unknown adjacency {adjacency!r}; known: {list(ADJACENCY_BUDGET)}")
    return ADJACENCY_BUDGET[adjacency] * _BOUNDS[rule](X)


def interaction_row_l1_budget(degree: int | np.ndarray) -> np.ndarray:
    """``Σ_i ‖C_{i:}‖₁²`` when a user of degree ``d`` loses one interaction (their eq. 54–70).

    The d − 1 rows of the user's other items each have ``‖C_{i:}‖₁ = (d−1)·1/(d(d−1)) + 1/d = 2/d`` and the row of
    the removed item has ``d · 1/d = 1``, so the sum is ``4(d−1)/d² + 1`` (**erratum**: their eq. 63 has
    ``2(d−1)/d²``). It is at most 2, reached at d = 2 (``4(d−1) ≤ d²``), and 1 for d = 1: their eq. 71–72 hold.
    """
    d = np.asarray(degree, dtype=float)
    return 4 * (d - 1) / d**2 + 1


def matrix_release_sensitivity(adjacency: str) -> float:
    """L2 sensitivity of the upper triangle (diagonal included) of Ã, the vector AnalyzeGauss perturbs.

    ``matrix``: ``‖C‖_F² = Σ_i ‖C_{i:}‖₂² ≤ Σ_i ‖C_{i:}‖₁² ≤ 1``, and the upper triangle has at most that norm.
    ``interaction``: when a user of degree d ≥ 2 loses item k, C has ``1/d`` on row and column k and
    ``−1/(d(d−1))`` on the rest of the user's block, so the upper triangle has squared norm
    ``1/d + 1/(2d(d−1)) ≤ 3/4``; for ``d = 1``, ``C = e_k e_kᵀ`` and the norm is 1. Both are therefore 1.
    """
    if adjacency not in ADJACENCY_BUDGET:
        raise ValueError(f"unknown adjacency {adjacency!r}; known: {list(ADJACENCY_BUDGET)}")
    return 1.0


# ------------------------------------------------------------------------------- first step (their Fig. 2)


def first_step_sensitivities(
    n: int, k_values: np.ndarray, runs: int, rng: np.random.Generator, dtype: type = np.float32
) -> tuple[np.ndarray, np.ndarray]:
    """Both bounds at the first step, ``X⁰ = QR(Ω)`` with ``Ω ~ N(0, 1)^{n×k}``, for every k in ``k_values``.

    One ``n × max(k)`` Gaussian matrix per run; its Q (:func:`~ddppm.methods.ppm.linalg.cholesky_qr`) is nested,
    so its leading k columns are ``X⁰`` for block size k (the k values of one run share their draw). Returns
    ``prior`` and ``theirs``, each of shape ``(runs, len(k_values))``: ``√k max|X⁰|`` and ``max_i ‖X⁰_{i:}‖₂``
    (matrix adjacency). The QR runs in ``dtype`` (float32 by default: twice as fast, and its relative error,
    about 1e-6, is far below the spread between draws); row norms are accumulated in float64.
    """
    k_values = np.sort(np.asarray(k_values, dtype=int))
    k_max = int(k_values[-1])
    prior = np.empty((runs, k_values.size))
    theirs = np.empty((runs, k_values.size))
    for r in range(runs):
        Q = cholesky_qr(rng.standard_normal((k_max, n), dtype=dtype).T)
        row_sq = np.zeros(n)
        largest = 0.0
        start = 0
        for j, k in enumerate(k_values):
            block = Q[:, start:k]
            row_sq += np.einsum("ij,ij->i", block, block, dtype=np.float64)
            largest = max(largest, float(np.abs(block).max())) if k > start else largest
            prior[r, j] = np.sqrt(k) * largest
            theirs[r, j] = np.sqrt(row_sq.max())
            start = k
    return prior, theirs


def ratio_approximation(k: np.ndarray, n: int) -> np.ndarray:
    r"""Their Approximation 6.2 (eq. 13, Appendix C, eq. 80–82) of ``r(k, n) = E[Δ₀^prior] / E[Δ̂₀]``:

    .. math::
        E[Δ^{prior}]^2 ≈ \sqrt{2σ^2 \log(kn) k^2/n^2} + kμ/n, \qquad
        E[\hat Δ]^2 ≈ \sqrt{2σ^2 \log(n) k/n^2} + kμ/n,

    with ``μ = n/(n−2)`` and ``σ² = 2n²(n−1)/((n−2)²(n−4))`` (mean and variance of an F(1, n) variable, the law
    they approximate ``n X_{ij}²`` by).
    """
    k = np.asarray(k, dtype=float)
    mu = n / (n - 2)
    var = 2 * n**2 * (n - 1) / ((n - 2) ** 2 * (n - 4))
    prior_sq = np.sqrt(2 * var * np.log(k * n) * k**2 / n**2) + k * mu / n
    theirs_sq = np.sqrt(2 * var * np.log(n) * k / n**2) + k * mu / n
    return np.sqrt(prior_sq / theirs_sq)
