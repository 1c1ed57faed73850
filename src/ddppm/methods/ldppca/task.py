"""The interface of the local-DP covariance PCA task (Wang & Xu): what a method of this family must provide.

Every method of the task sees what the server of Algorithms 1–2 sees: the noisy average ``S̃`` of the users'
releases (stacked over independent runs), the subspace dimension k, the number of users n and the per-user
noise σ (public), and returns an orthonormal basis of its k-dimensional estimate per run. It also states the
error rate its paper proves, so the figures can overlay it. Adding a method of the family is one subclass
decorated with :func:`ddppm.methods.register` plus its name in ``ldppca.<figure>.methods``.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ddppm.methods.base import RegisteredMethod

__all__ = ["LOCAL_DP_PCA", "LocalPCAMethod", "RateInputs"]

LOCAL_DP_PCA = "local_dp_pca"
"""Task name: k-dimensional principal subspace of a covariance from users' local-DP releases of ``x xᵀ``."""


@dataclass(frozen=True)
class RateInputs:
    """What the error rates of the theorems depend on, at one point of an experiment (arrays broadcast).

    Attributes
    ----------
    n, p, k : array_like
        Users, dimension, subspace dimension.
    sparsity : array_like
        Row sparsity s of the true subspace (p for a dense one).
    sigma : array_like
        Per-user noise σ (it carries ε, δ and the σ calibration).
    top_eigenvalue, eigengap, trace : array_like
        ``λ_1``, ``λ_k − λ_{k+1}`` and ``tr Σ`` of the population covariance.
    """

    n: Any
    p: Any
    k: Any
    sparsity: Any
    sigma: Any
    top_eigenvalue: Any
    eigengap: Any
    trace: Any


class LocalPCAMethod(RegisteredMethod):
    """A method of the ``local_dp_pca`` task (interface; see the module docs)."""

    task: ClassVar[str] = LOCAL_DP_PCA
    trust_model: ClassVar[str] = "local"
    theorem: ClassVar[str]
    """The paper's utility theorem for the method (names the rate in the figures)."""

    @abstractmethod
    def estimate(
        self, S_tilde: np.ndarray, k: int, n: int, sigma: float, options: dict[str, Any]
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Estimate the principal k-subspace from each run's noisy average covariance.

        Parameters
        ----------
        S_tilde : ndarray, shape (R, p, p)
            The server's ``S̃`` of R independent runs.
        k : int
            Subspace dimension.
        n : int
            Number of users (public).
        sigma : float
            Per-user noise standard deviation σ (public).
        options : dict
            The method's validated config section ``ldppca.methods.<name>``.

        Returns
        -------
        bases : ndarray, shape (R, p, k)
            Orthonormal basis of each run's estimate.
        diagnostics : dict of str to ndarray of shape (R,)
            Per-run solver facts (may be empty), stored as table columns.
        """

    @abstractmethod
    def rates(self, point: RateInputs) -> dict[str, np.ndarray]:
        """The error shapes the paper's theorem gives, up to a constant: ``{"stated": …, "proof": …}`` for the
        bound as printed and the bound its proof actually gives, both on the scale of
        ``||V̂V̂ᵀ − VVᵀ||_F`` (square roots of the squared-distance rates)."""
