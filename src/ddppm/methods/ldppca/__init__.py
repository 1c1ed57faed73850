"""Local-DP PCA: D. Wang and J. Xu, "Principal Component Analysis in the local differential privacy model",
Theoretical Computer Science 809 (2020) 296–312 (preliminary version: IJCAI 2019, pp. 4795–4801).

Each user holds ``x ∈ R^p`` with ``||x||₂ ≤ 1`` and releases ``x xᵀ`` plus symmetric Gaussian noise once
(non-interactive local DP); the server averages the releases and estimates the principal k-subspace.

Modules (one concern each; the paper's equations are found in the named function):

* :mod:`.mechanism` — Algorithms 1–2 lines 1–4 (per-user and aggregated release, equal in law), σ
  calibrations (the paper's, the corrected-sensitivity one, the analytic one) and the δ a σ achieves;
* :mod:`.fantope` — projection onto the Fantope (Algorithm 2 line 8) and soft thresholding (line 9);
* :mod:`.admm` — ADMM for problem (5) (lines 6–11) with residual stopping, the noise-level λ, the duality gap;
* :mod:`.screening` — problem (5) solved exactly: closed form or ADMM on a screened block, with a certificate;
* :mod:`.metrics` — ``||V̂V̂ᵀ − VVᵀ||_F``, its chance level ``sqrt(2k − 2k²/p)``, top-k eigenvectors;
* :mod:`.models` — covariance (7), dense and sparse subspaces (§6), rows in the unit ball, Wishart scatters;
* :mod:`.theory` — the rates of Theorems 2 and 4 (as printed and as proved) and their fitted constant;
* :mod:`.task` and :mod:`.methods` — the task interface and the registered methods ``ldppca_gaussian``
  (Algorithm 1) and ``ldppca_fantope`` (Algorithm 2).
"""

from ddppm.methods.ldppca.methods import FantopeLocalPCA, GaussianLocalPCA
from ddppm.methods.ldppca.task import LOCAL_DP_PCA, LocalPCAMethod, RateInputs

__all__ = ["LOCAL_DP_PCA", "FantopeLocalPCA", "GaussianLocalPCA", "LocalPCAMethod", "RateInputs"]
