"""The registered methods of the local-DP PCA family (task ``local_dp_pca``): Algorithms 1 and 2 of Wang & Xu.

Both start from the server's noisy average ``S̃`` (:mod:`.mechanism`); they differ in the last step.

* ``ldppca_gaussian`` (Algorithm 1, "Local Gaussian Mechanism", line 5): the top-k eigenvectors of ``S̃``.
* ``ldppca_fantope`` (Algorithm 2, "Local Gaussian Mechanism – High Dimension", lines 5–13): the top-k
  eigenvectors of the solution ``X̂`` of the ℓ1-penalised Fantope problem (5), solved exactly by
  :func:`~ddppm.methods.ldppca.screening.solve_penalised_fantope` (ADMM on the screened block), with λ at the
  noise level (:func:`~ddppm.methods.ldppca.admm.noise_level_lambda`) unless ``penalty`` fixes it.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ddppm.methods.base import register
from ddppm.methods.ldppca.admm import noise_level_lambda
from ddppm.methods.ldppca.common_task import LocalPCAOnCommonTask
from ddppm.methods.ldppca.metrics import top_eigenvectors
from ddppm.methods.ldppca.screening import solve_penalised_fantope
from ddppm.methods.ldppca.task import LocalPCAMethod, RateInputs
from ddppm.methods.ldppca.theory import theorem2_rates, theorem4_rates

__all__ = ["FantopeLocalPCA", "GaussianLocalPCA", "fantope_penalty"]


@register
class GaussianLocalPCA(LocalPCAMethod, LocalPCAOnCommonTask):
    """Algorithm 1: principal k-subspace of the noisy average ``S̃`` (Theorem 2); it also runs the common task
    (:mod:`.common_task`)."""

    name: ClassVar[str] = "ldppca_gaussian"
    label: ClassVar[str] = "Alg. 1: top-k of S̃"
    style: ClassVar[dict[str, Any]] = {"color": "#c49c94", "marker": "o"}
    theorem: ClassVar[str] = "Theorem 2"

    def estimate(
        self, S_tilde: np.ndarray, k: int, n: int, sigma: float, options: dict[str, Any]
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        return top_eigenvectors(np.asarray(S_tilde, dtype=float), k), {}

    def rates(self, point: RateInputs) -> dict[str, np.ndarray]:
        return theorem2_rates(point.n, point.p, point.k, point.sigma, point.top_eigenvalue, point.eigengap, point.trace)


def fantope_penalty(sigma: float, n: int, p: int, options: dict[str, Any]) -> float:
    """λ of problem (5): ``options["penalty"]`` if given, else :func:`noise_level_lambda` with
    ``penalty_alpha`` and ``penalty_scale``."""
    if options.get("penalty") is not None:
        return float(options["penalty"])
    return noise_level_lambda(
        sigma, n, p, alpha=float(options.get("penalty_alpha", 0.05)), scale=float(options.get("penalty_scale", 1.0))
    )


@register
class FantopeLocalPCA(LocalPCAMethod):
    """Algorithm 2: principal k-subspace of the ℓ1-penalised Fantope solution ``X̂`` of problem (5) (Theorem 4)."""

    name: ClassVar[str] = "ldppca_fantope"
    label: ClassVar[str] = "Alg. 2: sparse Fantope ADMM"
    style: ClassVar[dict[str, Any]] = {"color": "#d62728", "marker": "s"}
    theorem: ClassVar[str] = "Theorem 4"

    def estimate(
        self, S_tilde: np.ndarray, k: int, n: int, sigma: float, options: dict[str, Any]
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        S_tilde = np.asarray(S_tilde, dtype=float)
        runs, p = S_tilde.shape[0], S_tilde.shape[-1]
        lam = fantope_penalty(sigma, n, p, options)
        admm = {
            "rho": options.get("rho"),
            "max_iter": int(options.get("max_iter", 2000)),
            "tol_abs": float(options.get("tol_abs", 1e-7)),
            "tol_rel": float(options.get("tol_rel", 1e-4)),
            "adaptive": bool(options.get("adaptive_rho", False)),
        }
        bases = np.empty((runs, p, k))
        facts: dict[str, list] = {"penalty": [], "admm_iterations": [], "converged": [], "closed_form": []}
        facts["block_size"] = []
        for r in range(runs):
            solution = solve_penalised_fantope(S_tilde[r], k, lam, **admm)
            block = solution.block
            sub = top_eigenvectors(solution.Y[np.ix_(block, block)], k)  # zero outside the block
            bases[r] = 0.0
            bases[r][block] = sub
            facts["penalty"].append(lam)
            facts["admm_iterations"].append(solution.iterations)
            facts["converged"].append(solution.converged)
            facts["closed_form"].append(solution.closed_form)
            facts["block_size"].append(block.size)
        return bases, {key: np.asarray(values) for key, values in facts.items()}

    def rates(self, point: RateInputs) -> dict[str, np.ndarray]:
        return theorem4_rates(point.n, point.p, point.sparsity, point.sigma, point.top_eigenvalue, point.eigengap)
