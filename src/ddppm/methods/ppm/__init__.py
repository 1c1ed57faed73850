"""The private randomized power method family (task ``private_subspace``).

J. Nicolas, C. Sabater, M. Maouche, S. Ben Mokhtar and M. Coates, "Differentially private and decentralized
randomized power method", arXiv:2411.01931 (2024), and the baselines they compare with: Balcan et al.
(centralised and decentralised), FedPower (synchronous) and AnalyzeGauss.

Modules: :mod:`~ddppm.methods.ppm.privacy` (σ calibrations, zCDP accounting and its erratum),
:mod:`~ddppm.methods.ppm.sensitivity` (sensitivity rules, adjacency, their Fig. 2 ratio),
:mod:`~ddppm.methods.ppm.linalg` (QR), :mod:`~ddppm.methods.ppm.algorithms` (Algorithms 1–2, AnalyzeGauss),
:mod:`~ddppm.methods.ppm.methods` (the task interface and one registered class per method).
"""

from ddppm.methods.ppm.algorithms import (
    NOISE_MODELS,
    DenseOperator,
    PowerTrace,
    PSDOperator,
    analyze_gauss,
    initial_blocks,
    private_power_method,
)
from ddppm.methods.ppm.methods import (
    PRIVATE_SUBSPACE,
    PowerMethod,
    PrivacySpec,
    SubspaceEstimate,
    SubspaceMethod,
)
from ddppm.methods.ppm.privacy import CALIBRATIONS, Calibration, calibrate

__all__ = [
    "CALIBRATIONS",
    "NOISE_MODELS",
    "PRIVATE_SUBSPACE",
    "Calibration",
    "DenseOperator",
    "PSDOperator",
    "PowerMethod",
    "PowerTrace",
    "PrivacySpec",
    "SubspaceEstimate",
    "SubspaceMethod",
    "analyze_gauss",
    "calibrate",
    "initial_blocks",
    "private_power_method",
]
