"""The task ``private_subspace`` and its registered methods (one class each).

Task: from a symmetric PSD operator A (:class:`~ddppm.methods.ppm.algorithms.PSDOperator`), estimate an
orthonormal basis of its top-p eigenspace under (ε, δ)-DP, with L power iterations of block size p (or one
noisy release of A for AnalyzeGauss). Every method is called on the same initial blocks ``X⁰`` (the paper
initialises all methods at one ε with the same ``G₀``) and returns ``(runs, n, p)`` bases.

Adding a method of this family is one subclass here with ``@register`` and one line in ``ppm.methods``.

References: Nicolas et al., "Differentially private and decentralized randomized power method"
(arXiv:2411.01931), Algorithms 1–2, eq. 3, eq. 8, Lemma B.1; Hardt & Price (NeurIPS 2014, arXiv:1311.2495);
Balcan, Du, Wang & Yu (COLT 2016, arXiv:1602.07046); Guo, Li, Chang, Wang & Zhang, "FedPower" (Machine
Learning 2024, arXiv:2103.00704); Dwork, Talwar, Thakurta & Zhang, "Analyze Gauss" (STOC 2014).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ddppm.methods.base import RegisteredMethod, register
from ddppm.methods.ppm.algorithms import PSDOperator, analyze_gauss, private_power_method
from ddppm.methods.ppm.common_task import AnalyzeGaussOnCommonTask, PowerMethodOnCommonTask
from ddppm.methods.ppm.privacy import Calibration, calibrate
from ddppm.methods.ppm.sensitivity import matrix_release_sensitivity, sensitivity

PRIVATE_SUBSPACE = "private_subspace"
"""Task name of this family (``available_methods(task=PRIVATE_SUBSPACE)``)."""


@dataclass(frozen=True)
class PrivacySpec:
    """Target (ε, δ) and how σ is calibrated (``paper``, ``zcdp`` or ``gdp``; :mod:`~ddppm.methods.ppm.privacy`)."""

    eps: float
    delta: float
    calibration: str = "paper"


@dataclass(frozen=True)
class SubspaceEstimate:
    """Bases of every run with the calibration and the per-iteration sensitivities and noise levels."""

    basis: np.ndarray
    calibration: Calibration
    sensitivities: np.ndarray
    noise_std: np.ndarray


class SubspaceMethod(RegisteredMethod):
    """Interface of the ``private_subspace`` task.

    Class attributes: ``adjacency`` (``matrix`` or ``interaction``, :data:`~ddppm.methods.ppm.sensitivity.
    ADJACENCY_BUDGET`), ``privacy_model`` (one-line statement for legends and tables) and ``needs_dense``
    (True when the method must materialise A).
    """

    task: ClassVar[str] = PRIVATE_SUBSPACE
    adjacency: ClassVar[str] = "interaction"
    privacy_model: ClassVar[str]
    needs_dense: ClassVar[bool] = False

    def releases(self, iterations: int) -> int:
        """Number of composed Gaussian releases (L for the power methods)."""
        return int(iterations)

    def calibration(self, privacy: PrivacySpec, iterations: int) -> Calibration:
        """σ for this method at ``privacy`` and the ε it achieves."""
        return calibrate(privacy.eps, privacy.delta, self.releases(iterations), privacy.calibration)

    @abstractmethod
    def estimate(
        self,
        operator: PSDOperator,
        X0: np.ndarray,
        privacy: PrivacySpec,
        iterations: int,
        noise_rngs: Sequence[np.random.Generator],
        *,
        first_product: np.ndarray | None = None,
        literal_clients: bool = False,
    ) -> SubspaceEstimate:
        """Private bases for every run: ``X0`` has shape ``(runs, n, p)``, one noise generator per run;
        ``first_product`` is ``A X0`` when known."""


class PowerMethod(SubspaceMethod, PowerMethodOnCommonTask):
    """A private power method: a sensitivity rule (``prior``, ``theirs`` or ``constant``) and a noise model
    (``central``, ``secure_aggregation`` or ``local``)."""

    rule: ClassVar[str]
    noise_model: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "noise_model" in vars(cls):  # where the noise is added says whom the method must trust
            cls.trust_model = cls.noise_model

    def estimate(
        self,
        operator: PSDOperator,
        X0: np.ndarray,
        privacy: PrivacySpec,
        iterations: int,
        noise_rngs: Sequence[np.random.Generator],
        *,
        first_product: np.ndarray | None = None,
        literal_clients: bool = False,
    ) -> SubspaceEstimate:
        cal = self.calibration(privacy, iterations)
        trace = private_power_method(
            operator,
            X0,
            iterations,
            cal.sigma,
            lambda X: sensitivity(self.rule, X, self.adjacency),
            noise_rngs,
            noise_model=self.noise_model,
            first_product=first_product,
            literal_clients=literal_clients,
        )
        return SubspaceEstimate(trace.basis, cal, trace.sensitivities, trace.noise_std)


@register
class PPMPrior(PowerMethod):
    """Algorithm 1 with the prior rule ``√p‖X‖_max`` (eq. 3) under the matrix adjacency (eq. 6–7)."""

    name = "ppm_prior"
    label = "PPM, prior Δ (matrix adjacency)"
    style: ClassVar[dict[str, Any]] = {"color": "#8c564b", "marker": "v", "linestyle": ":"}
    rule, noise_model, adjacency = "prior", "central", "matrix"
    privacy_model = "central DP, trusted curator; A' = A + C, C one entry of Frobenius norm ≤ 1"


@register
class PPMTheirs(PowerMethod):
    """Algorithm 1 with their rule ``max_i ‖X_{i:}‖₂`` (Theorem 3.1) under the matrix adjacency (eq. 7)."""

    name = "ppm_theirs"
    label = "PPM, Δ = max‖X_i:‖ (matrix adjacency)"
    style: ClassVar[dict[str, Any]] = {"color": "#17becf", "marker": "^", "linestyle": ":"}
    rule, noise_model, adjacency = "theirs", "central", "matrix"
    privacy_model = "central DP, trusted curator; A' = A + C, sqrt(Σ‖C_i:‖₁²) ≤ 1"


@register
class PPMTheirsSqrt2(PowerMethod):
    """Algorithm 1 with ``√2 max_i ‖X_{i:}‖₂`` (Lemma B.1): one interaction of R removed. "Ours, centralised"."""

    name = "ppm_theirs_sqrt2"
    label = "Nicolas et al., centralised (Alg. 1)"
    style: ClassVar[dict[str, Any]] = {"color": "#6b6ecf", "marker": "o", "linestyle": "-"}
    rule, noise_model, adjacency = "theirs", "central", "interaction"
    runs_common_task = True  # the central representative on the common task (Balcan et al.'s coincides there)
    privacy_model = "central DP, trusted curator; one user–item interaction removed"


@register
class PPMDecentralised(PowerMethod):
    """Algorithm 2: every user is a client adding ``N(0, Δ²σ²/s)`` behind secure aggregation, Δ as Lemma B.1."""

    name = "ppm_decentralised"
    label = "Nicolas et al., decentralised (Alg. 2, SecAgg)"
    style: ClassVar[dict[str, Any]] = {"color": "#2ca02c", "marker": "s", "linestyle": "--"}
    rule, noise_model, adjacency = "theirs", "secure_aggregation", "interaction"
    runs_common_task = True
    privacy_model = "distributed DP (secure aggregation, honest-but-curious); one interaction removed"


@register
class BalcanCentralised(PowerMethod):
    """Balcan et al. (2016) centralised: Algorithm 1 with the prior rule, under the interaction adjacency."""

    name = "balcan_centralised"
    label = "Balcan et al., centralised"
    style: ClassVar[dict[str, Any]] = {"color": "#ff7f0e", "marker": "D", "linestyle": "-"}
    rule, noise_model, adjacency = "prior", "central", "interaction"
    privacy_model = "central DP, trusted curator; one interaction removed"


@register
class BalcanDecentralised(PowerMethod):
    """Balcan et al. (2016) decentralised: every client adds ``N(0, Δ²σ²)`` in public (local DP), prior rule."""

    name = "balcan_decentralised"
    label = "Balcan et al., decentralised (local DP)"
    style: ClassVar[dict[str, Any]] = {"color": "#843c39", "marker": "X", "linestyle": "--"}
    rule, noise_model, adjacency = "prior", "local", "interaction"
    runs_common_task = True  # the local-DP representative on the common task (FedPower coincides there)
    privacy_model = "local DP per client (public channel); one interaction removed"


@register
class FedPower(PowerMethod):
    """FedPower (Guo et al.), synchronous (aggregation every iteration): local DP with the non-adaptive ``√p``."""

    name = "fedpower"
    label = "FedPower, synchronous (local DP)"
    style: ClassVar[dict[str, Any]] = {"color": "#9467bd", "marker": "P", "linestyle": "-."}
    rule, noise_model, adjacency = "constant", "local", "interaction"
    privacy_model = "local DP per client (public channel); one interaction removed"


@register
class AnalyzeGauss(SubspaceMethod, AnalyzeGaussOnCommonTask):
    """AnalyzeGauss: one symmetric Gaussian release of A (upper triangle, Δ = 1), exact eigendecomposition."""

    name = "analyze_gauss"
    label = "AnalyzeGauss (centralised)"
    style: ClassVar[dict[str, Any]] = {"color": "#7f7f7f", "marker": "*", "linestyle": "-"}
    adjacency = "interaction"
    needs_dense = True
    privacy_model = "central DP, trusted curator (dense A); one interaction removed"

    def releases(self, iterations: int) -> int:
        return 1

    def estimate(
        self,
        operator: PSDOperator,
        X0: np.ndarray,
        privacy: PrivacySpec,
        iterations: int,
        noise_rngs: Sequence[np.random.Generator],
        *,
        first_product: np.ndarray | None = None,
        literal_clients: bool = False,
    ) -> SubspaceEstimate:
        cal = self.calibration(privacy, iterations)
        delta = matrix_release_sensitivity(self.adjacency)
        basis = analyze_gauss(operator.dense(), X0.shape[2], cal.sigma, delta, noise_rngs)
        runs = X0.shape[0]
        return SubspaceEstimate(basis, cal, np.full((runs, 1), delta), np.full((runs, 1), delta * cal.sigma))
