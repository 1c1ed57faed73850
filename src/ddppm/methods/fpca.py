"""Federated PCA (FPCA) of Grammenos, Mendoza-Smith, Crowcroft & Mascolo (NeurIPS 2020), on the common task.

Implemented from the paper (its code is GPLv3 MATLAB and is not used): every edge node perturbs its own covariance
with **MOD-SuLQ** (Chaudhuri, Sarwate & Sinha, JMLR 14, 2013, Algorithm 2), keeps its rank-r SVD, and a **merge
tree** of aggregators combines the nodes' subspaces two by two (their Algorithm 3 with forgetting factor 1):
``merge(U₁Σ₁, U₂Σ₂) = rank-r SVD of [U₁Σ₁ | U₂Σ₂]``. The root's U is the estimate. Here r = k (the paper's
experiments keep the target rank at every node) and the whole local data set is one block (the streaming updates
of a node then reduce to one SVD).

**Noise (MOD-SuLQ).** Node j with ``n_j`` rows releases ``Â_j = X_jᵀX_j / n_j + N_j`` with ``N_j`` symmetric, its
entries on and above the diagonal i.i.d. ``N(0, β_j²)``,

    β_j = (d + 1)/(n_j ε) · sqrt(2 ln((d² + d)/(2√(2π) δ))) + 1/(n_j √ε)          (MOD-SuLQ, Algorithm 2),

so on ``X_jᵀX_j`` the noise is ``n_j β_j``, which does not depend on ``n_j``, and is about ``d + 1`` times the
Gaussian mechanism's ``√2 · sqrt(2 ln(1.25/δ))/ε`` that AnalyzeGauss and the conventional method pay.

**Privacy, certified here** (not taken from the paper's proof). A neighbour (``replace_one``) changes one node's
``X_jᵀX_j`` by ``xxᵀ − x′x′ᵀ``, whose upper triangle has L2 norm at most √2
(:func:`ddppm.common_task.adjacency.release_sensitivity`); everything after ``Â_j`` (its SVD, the merges) is
post-processing. The transcript is therefore one Gaussian mechanism of sensitivity √2 and noise ``n_j β_j``,
μ-GDP with ``μ = √2/(n_j β_j)``, and its δ at ε is certified exactly for every neighbour
(:func:`ddppm.common_task.base.certified`): far below the paper's δ, the price of its per-entry analysis.
**Trust model**: ``local``, the one the tree assumes: an aggregator sees every node's subspace, and no party is
trusted with another's data.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from ddppm.common_task.adjacency import release_sensitivity
from ddppm.common_task.base import COMMON_TASK, Calibrated, CommonTaskMethod, GaussianRelease, certified, upper_triangle
from ddppm.common_task.task import CommonTask
from ddppm.methods.base import RegisteredMethod, register
from ddppm.privacy.mechanisms import symmetric_gaussian, symmetric_release


def mod_sulq_beta(eps: float, delta: float, d: int, n: int) -> float:
    """MOD-SuLQ's per-entry noise standard deviation β on the covariance ``XᵀX / n`` (Chaudhuri et al. 2013,
    Algorithm 2; FPCA's local perturbation)."""
    if not (eps > 0 and 0 < delta < 1 and d >= 1 and n >= 1):
        raise ValueError(f"MOD-SuLQ needs ε > 0, 0 < δ < 1, d ≥ 1 and n ≥ 1; got ε={eps}, δ={delta}, d={d}, n={n}")
    log_term = np.log((d * d + d) / (2.0 * np.sqrt(2.0 * np.pi) * delta))
    return float((d + 1) / (n * eps) * np.sqrt(2.0 * log_term) + 1.0 / (n * np.sqrt(eps)))


def rank_r(matrix: np.ndarray, r: int) -> np.ndarray:
    """``U_r Σ_r`` of the rank-r SVD of ``matrix`` (columns by descending singular value); a stack of matrices
    (leading axes) gives a stack."""
    U, S, _ = np.linalg.svd(matrix, full_matrices=False)
    return U[..., :r] * S[..., None, :r]


def symmetric_rank_r(matrix: np.ndarray, r: int) -> np.ndarray:
    """:func:`rank_r` of a symmetric matrix (or stack) by its eigendecomposition: its singular values are the
    eigenvalues' magnitudes, its singular vectors the eigenvectors (several times faster than an SVD)."""
    values, vectors = np.linalg.eigh(matrix)
    order = np.argsort(-np.abs(values), axis=-1)[..., :r]
    top = np.take_along_axis(vectors, order[..., None, :], axis=-1)
    return top * np.abs(np.take_along_axis(values, order, axis=-1))[..., None, :]


def merge_tree(leaves: Sequence[np.ndarray], r: int) -> np.ndarray:
    """The root of FPCA's binary merge tree over ``leaves`` (each ``U Σ``, d × r, or a stack of them): adjacent
    pairs are merged level by level, ``merge(a, b) = rank_r([a | b])``; an odd node out moves up unmerged."""
    level = list(leaves)
    while len(level) > 1:
        pairs = range(0, len(level) - 1, 2)
        merged = [rank_r(np.concatenate([level[i], level[i + 1]], axis=-1), r) for i in pairs]
        level = merged + ([level[-1]] if len(level) % 2 else [])
    return level[0]


def node_releases(task: CommonTask, beta_sums: Sequence[float], rng: np.random.Generator) -> list[np.ndarray]:
    """Every node's MOD-SuLQ release ``Â_j = X_jᵀX_j/n_j + N_j``, node by node from one generator (``beta_sums``:
    ``n_j β_j``, the noise on ``X_jᵀX_j``)."""
    return [symmetric_release(task.local_gram(j), float(beta_sums[j]), rng) / len(task.parts[j])
            for j in range(task.m)]  # fmt: skip


@register
class FederatedPCA(RegisteredMethod, CommonTaskMethod):
    name = "fpca"
    label = "FPCA (Grammenos et al.; MOD-SuLQ per node, merge tree)"
    style: ClassVar[dict[str, Any]] = {"color": "#637939", "marker": "P", "linestyle": "-"}
    task = COMMON_TASK
    trust_model = "local"
    secure_noise = True
    source = "Grammenos et al. 2020 (NeurIPS), MOD-SuLQ of Chaudhuri et al. 2013"

    federated = True
    streams = True

    def party_release(self, party: Any, step: str, public: dict[str, Any]) -> np.ndarray:
        """Node j's rank-k factor ``U_jΣ_j`` of its MOD-SuLQ release (what an FPCA node sends; a function of its
        public release); with simulation noise its release is the one-process draw, the nodes before it skipped."""
        beta_sums = party.public.calibration[0].params["beta_sums"]
        rng = party.method_noise()
        if party.agreement.noise == "simulation":
            for _ in range(party.index):
                symmetric_gaussian(party.public.d, 1.0, rng)  # a node's draw: d × d normals, whatever its scale
        gram = party.gram()
        return symmetric_rank_r(symmetric_release(gram, float(beta_sums[party.index]), rng) / party.size,
                                party.public.k)  # fmt: skip

    def federated_noise(self, public: Any) -> float:
        return float(max(public.calibration[0].params["beta_sums"]))

    def federated_estimate(self, transport: Any, public: Any, message: dict[str, Any]) -> np.ndarray:
        """The merge tree over the nodes' factors, in the nodes' order (each factor is public under ``local``)."""
        U = merge_tree(transport.each("method", message), public.k)
        return U / np.linalg.norm(U, axis=-2, keepdims=True)

    def common_calibrate(self, task: CommonTask, eps: float, delta_limit: float, options: dict[str, Any]) -> Calibrated:
        """The paper's noise at (ε, δ limit), and the δ it certifies under the task's adjacency (module docs)."""
        sensitivity = release_sensitivity("upper_triangle", options["adjacency"])
        beta_sums = [len(part) * mod_sulq_beta(eps, delta_limit, task.d, len(part)) for part in task.parts]
        # Each node's release is one Gaussian mechanism; a neighbour changes one node: the least noise is the worst.
        release = GaussianRelease(sensitivity, min(beta_sums))
        return certified(eps, delta_limit, {"beta_sums": beta_sums, "sensitivity": sensitivity}, [release])

    def common_estimate(
        self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator], options: dict[str, Any]
    ) -> np.ndarray:
        # Every run's releases from its own generator, then the SVDs and merges of all runs at once.
        releases = np.stack([node_releases(task, calibrated.params["beta_sums"], rng) for rng in rngs])  # R, m, d, d
        leaves = symmetric_rank_r(releases, task.k)  # R, m, d, k
        U = merge_tree([leaves[:, j] for j in range(task.m)], task.k)
        return U / np.linalg.norm(U, axis=-2, keepdims=True)

    def common_view(self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """Every node's MOD-SuLQ release (upper triangles), drawn as the estimate draws them. A node sends only its
        rank-r SVD, a function of this: attacking the release itself can only see more."""
        return np.stack([np.concatenate([upper_triangle(A) for A in node_releases(task, calibrated.params["beta_sums"],
                                                                                  rng)])
                         for rng in rngs])  # fmt: skip

    def common_costs(self, task: CommonTask, calibrated: Calibrated) -> dict[str, Any]:
        rounds = int(np.ceil(np.log2(task.m))) if task.m > 1 else 1  # the merge tree's depth
        return {"floats_per_agent": task.d * task.k + task.k, "rounds": rounds, "memory": "d²"}
