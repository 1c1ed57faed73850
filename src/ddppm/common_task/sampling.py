"""Draws of the Gram matrix of noisy rows in law, for the common task's local-DP baselines (O(d³) per run)."""

from __future__ import annotations

import numpy as np


def noisy_gram(R: np.ndarray, n: int, std: float, rng: np.random.Generator) -> np.ndarray:
    r"""A draw of the Gram matrix :math:`(X + E)^\top(X + E)` of noisy rows, :math:`E` with iid ``N(0, std²)``
    entries, in :math:`O(d^3)` instead of :math:`O(nd^2)`: exact in law, not an approximation.

    With the thin QR :math:`X = UR` (``R``: d × d, :math:`R^\top R = X^\top X`; ``n`` rows) split
    :math:`E = UA + U_\perp B`: ``A`` (d × d) and ``B`` ((n − d) × d) have iid ``N(0, std²)`` entries and are
    independent (rotation invariance), and :math:`U^\top U_\perp = 0`, so

    .. math::

        (X + E)^\top(X + E) = (R + A)^\top(R + A) + B^\top B,
        \qquad B^\top B \sim \mathrm{Wishart}_d(n - d, \mathrm{std}^2 I),

    drawn by Bartlett's decomposition :math:`B^\top B = \mathrm{std}^2 LL^\top`, ``L`` lower triangular with
    :math:`L_{ii}^2 \sim \chi^2_{n-d-i+1}` and standard normal entries below the diagonal. Needs ``n ≥ 2d``
    (then ``n − d ≥ d`` degrees of freedom). ``tests/common_task/test_task.py`` checks its law against the direct route.
    """
    d = R.shape[0]
    if n < 2 * d:
        raise ValueError(f"noisy_gram needs n >= 2d rows (got n = {n}, d = {d}); draw the noisy rows instead")
    A = R + std * rng.standard_normal((d, d))
    L = np.tril(rng.standard_normal((d, d)), -1)
    L[np.diag_indices(d)] = np.sqrt(rng.chisquare(n - d - np.arange(d)))
    return A.T @ A + std**2 * (L @ L.T)
