"""The common task's adjacency and the L2 sensitivity of every kind of release the methods make under it.

Adjacency (one for all methods): ``X ~ X′`` when X′ replaces one row ``x`` of X by any ``x′`` with ``‖x′‖ ≤ 1``
(``replace_one``; every row lies in the unit ball). The journal's ``‖x − x′‖ ≤ 1`` (``distance_one``) is kept
beside it because the journal's and the workshop's papers use it; it is the smaller relation.

The releases and their sensitivities ``sup ‖f(X) − f(X′)‖₂`` (``C = xxᵀ − x′x′ᵀ``; proofs below, each checked
by a brute-force search in ``tests/common_task/test_task.py``):

``rows`` (an agent publishes its rows, the journal's LDP baseline)
    ``‖x − x′‖``: 2 under ``replace_one``, 1 under ``distance_one``.
``second_moment`` (``XᵀX`` or an agent's ``X_jᵀX_j``, all d² entries) and ``upper_triangle`` (its d(d+1)/2 entries
on and above the diagonal, AnalyzeGauss)
    ``‖C‖²_F = ‖x‖⁴ + ‖x′‖⁴ − 2(xᵀx′)² ≤ 2`` under ``replace_one`` (equality: orthogonal unit rows). Under
    ``distance_one`` the sup is 3/2, at unit rows 60° apart (``‖C‖²_F = 2 sin²θ`` for unit rows at angle θ and
    ``‖x − x′‖ = 2 sin(θ/2) ≤ 1``). The upper triangle has ``(‖C‖²_F + Σ C_ii²)/2 ≤ ‖C‖²_F``, with equality in C's
    eigenbasis: the same sup.
``power_step`` (``XᵀX Q`` for an orthonormal d × p block Q, one release of a noisy power method)
    ``‖CQ‖²_F ≤`` the sum of C's p largest squared singular values. C has rank ≤ 2 and spectral norm ≤ 1 (its
    eigenvalues lie between ``−‖x′‖²`` and ``‖x‖²``), so the sup is 1 for p = 1 and ``sup ‖C‖²_F`` for p ≥ 2.
"""

from __future__ import annotations

import numpy as np

from ddppm.core.errors import ConfigError

ADJACENCIES = ("replace_one", "distance_one")
RELEASES = ("rows", "second_moment", "upper_triangle", "power_step")

_ROW = {"replace_one": 2.0, "distance_one": 1.0}
_FROBENIUS_SQUARED = {"replace_one": 2.0, "distance_one": 1.5}
_SPECTRAL = {"replace_one": 1.0, "distance_one": 1.0}


def release_sensitivity(release: str, adjacency: str = "replace_one", block: int = 1) -> float:
    """L2 sensitivity of one ``release`` (:data:`RELEASES`) under ``adjacency`` (:data:`ADJACENCIES`);
    ``block`` is p, the number of columns of a power step's block."""
    if adjacency not in ADJACENCIES:
        raise ConfigError(f"common_task.adjacency: {adjacency!r} is not one of {ADJACENCIES}")
    if release == "rows":
        return _ROW[adjacency]
    if release in ("second_moment", "upper_triangle"):
        return float(np.sqrt(_FROBENIUS_SQUARED[adjacency]))
    if release == "power_step":
        if block < 1:
            raise ConfigError(f"common_task: a power step needs a block of p >= 1 columns, got {block}")
        squared = _SPECTRAL[adjacency] ** 2 if block == 1 else _FROBENIUS_SQUARED[adjacency]
        return float(np.sqrt(squared))
    raise ConfigError(f"common_task: unknown release {release!r}; known: {RELEASES}")
