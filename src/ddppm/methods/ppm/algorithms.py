r"""The private randomized power method (their Algorithms 1 and 2) and AnalyzeGauss, batched over runs.

Reference: Nicolas et al., "Differentially private and decentralized randomized power method" (arXiv:2411.01931).

Every algorithm reads the PSD matrix ``A`` only through a :class:`PSDOperator`: products ``A X`` (and, for the
literal Algorithm 2, each client's ``A^{(c)} X``). A dense ``A`` is needed by AnalyzeGauss only.

Algorithm 1 (centralised): ``X⁰ = QR(G₀)``; for ℓ = 1..L, ``Y_ℓ = A X^{ℓ−1} + G_ℓ`` with
``G_ℓ ~ N(0, Δ_ℓ² σ²)^{n×p}`` and ``X^ℓ = QR(Y_ℓ)``. Δ_ℓ is computed from the public ``X^{ℓ−1}``.

Algorithm 2 (decentralised, secure aggregation): ``A = Σ_{c=1}^s A^{(c)}``; client c releases
``A^{(c)} X^{ℓ−1} + G_ℓ^{(c)}`` with ``G_ℓ^{(c)} ~ N(0, Δ_ℓ² ν²)``, ``ν = σ/√s``, and only the sum is revealed.
The sum is ``A X^{ℓ−1} + N(0, Δ_ℓ² s ν²) = A X^{ℓ−1} + N(0, Δ_ℓ² σ²)``: Algorithm 1 in law (their Theorem 5.2).

Local DP (Balcan et al. decentralised, FedPower): every client's own release must be private, so each adds
``N(0, Δ_ℓ² σ²)`` and the sum carries ``N(0, s Δ_ℓ² σ²)``.

The noise of the aggregated releases is drawn as one Gaussian of the aggregate variance (exact in law); with
``literal_clients=True`` every client's product and noise are computed one by one, as the protocol does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ddppm.methods.ppm.linalg import orthonormalize
from ddppm.privacy.mechanisms import gaussian_release, symmetric_release

NOISE_MODELS: tuple[str, ...] = ("central", "secure_aggregation", "local")
"""Who adds the noise of one power iteration: the curator (Alg. 1), every client with ν = σ/√s behind secure
aggregation (Alg. 2), or every client at full scale (local DP)."""


class PSDOperator(Protocol):
    """A symmetric PSD ``n × n`` matrix known through products, optionally split into ``clients`` summands."""

    n: int
    clients: int

    def matmul(self, X: np.ndarray) -> np.ndarray:
        """``A X`` for ``X`` of shape ``(n, K)``."""

    def client_matmul(self, client: int, X: np.ndarray) -> np.ndarray:
        """``A^{(c)} X`` of client ``c`` (``Σ_c A^{(c)} = A``)."""

    def dense(self) -> np.ndarray:
        """``A`` as a dense array (only for methods that need it)."""


class DenseOperator:
    """A dense PSD matrix, optionally as the sum of client matrices ``parts`` (tests, small problems)."""

    def __init__(self, A: np.ndarray, parts: Sequence[np.ndarray] | None = None) -> None:
        self.A = np.asarray(A, dtype=float)
        self.n = self.A.shape[0]
        self.parts = [np.asarray(P, dtype=float) for P in parts] if parts is not None else [self.A]
        self.clients = len(self.parts)

    def matmul(self, X: np.ndarray) -> np.ndarray:
        return self.A @ X

    def client_matmul(self, client: int, X: np.ndarray) -> np.ndarray:
        return self.parts[client] @ X

    def dense(self) -> np.ndarray:
        return self.A


def apply(operator: PSDOperator, X: np.ndarray) -> np.ndarray:
    """``A X_r`` for every run of a stack ``X`` of shape ``(runs, n, p)``, as one product with ``runs·p``
    columns."""
    runs, n, p = X.shape
    flat = np.ascontiguousarray(X.transpose(1, 0, 2).reshape(n, runs * p))
    return operator.matmul(flat).reshape(n, runs, p).transpose(1, 0, 2)


def apply_client(operator: PSDOperator, client: int, X: np.ndarray) -> np.ndarray:
    """``A^{(c)} X_r`` for every run (see :func:`apply`)."""
    runs, n, p = X.shape
    flat = np.ascontiguousarray(X.transpose(1, 0, 2).reshape(n, runs * p))
    return operator.client_matmul(client, flat).reshape(n, runs, p).transpose(1, 0, 2)


def initial_blocks(rngs: Sequence[np.random.Generator], n: int, p: int) -> np.ndarray:
    """``X⁰ = QR(G₀)``, ``G₀ ~ N(0, 1)^{n×p}``, one per generator (Alg. 1 and 2, line 3): shape ``(runs, n, p)``."""
    return orthonormalize(np.stack([rng.standard_normal((n, p)) for rng in rngs]))


@dataclass(frozen=True)
class PowerTrace:
    """Output of a private power method run on a stack of runs.

    Attributes
    ----------
    basis : numpy.ndarray
        ``X^L``, shape ``(runs, n, p)``, orthonormal columns.
    sensitivities : numpy.ndarray
        Δ_ℓ of every run and iteration, shape ``(runs, L)``.
    noise_std : numpy.ndarray
        Standard deviation of the aggregate noise per entry of ``Y_ℓ``, shape ``(runs, L)``.
    """

    basis: np.ndarray
    sensitivities: np.ndarray
    noise_std: np.ndarray


def aggregate_noise_factor(noise_model: str, clients: int) -> tuple[float, float]:
    """(per-client, aggregate) noise standard deviation in units of ``Δ_ℓ σ`` for ``s = clients``.

    ``central``: (1, 1) with one party; ``secure_aggregation``: ``(1/√s, 1)``; ``local``: ``(1, √s)``.
    """
    s = int(clients)
    if noise_model == "central":
        return 1.0, 1.0
    if noise_model == "secure_aggregation":
        return 1.0 / np.sqrt(s), 1.0
    if noise_model == "local":
        return 1.0, float(np.sqrt(s))
    raise ValueError(f"unknown noise model {noise_model!r}; known: {list(NOISE_MODELS)}")


def noisy_release(
    operator: PSDOperator,
    X: np.ndarray,
    scale: np.ndarray,
    noise_rngs: Sequence[np.random.Generator],
    *,
    noise_model: str = "central",
    product: np.ndarray | None = None,
    literal_clients: bool = False,
) -> np.ndarray:
    """One release ``Y = A X + G`` per run (Alg. 1 line 6; Alg. 2 lines 7–8 summed over the clients).

    ``scale`` is ``Δ_ℓ σ`` per run. ``central``: ``G ~ N(0, scale²)``. ``secure_aggregation``: client c adds
    ``N(0, scale²/s)`` to ``A^{(c)} X`` and the sum is revealed. ``local``: client c adds ``N(0, scale²)``.
    With ``literal_clients`` every client's term is computed; otherwise ``A X`` (or ``product``) plus one draw of
    the aggregate noise ``N(0, scale² · {1, 1, s})``, equal in law.
    """
    runs, n, p = X.shape
    scale = np.asarray(scale, dtype=float)
    per_client, aggregate = aggregate_noise_factor(noise_model, operator.clients)
    if literal_clients and noise_model != "central":
        Y = np.zeros((runs, n, p))
        for c in range(operator.clients):
            Y += apply_client(operator, c, X)
            for r, rng in enumerate(noise_rngs):
                Y[r] = gaussian_release(Y[r], scale[r] * per_client, rng)
        return Y
    Y = product if product is not None else apply(operator, X)
    stds = scale * aggregate
    return np.stack([gaussian_release(Y[r], stds[r], rng) for r, rng in enumerate(noise_rngs)])


def private_power_method(
    operator: PSDOperator,
    X0: np.ndarray,
    iterations: int,
    sigma: float,
    sensitivity: Callable[[np.ndarray], np.ndarray],
    noise_rngs: Sequence[np.random.Generator],
    *,
    noise_model: str = "central",
    first_product: np.ndarray | None = None,
    literal_clients: bool = False,
) -> PowerTrace:
    """Algorithm 1 (``noise_model="central"``) or its client versions (Algorithm 2, local DP), batched over runs.

    Parameters
    ----------
    operator : PSDOperator
        A, with ``operator.clients`` summands for the client versions.
    X0 : numpy.ndarray
        Initial orthonormal blocks, shape ``(runs, n, p)`` (:func:`initial_blocks`).
    iterations : int
        L.
    sigma : float
        Noise multiplier σ (:mod:`ddppm.methods.ppm.privacy`).
    sensitivity : callable
        ``X (runs, n, p) ↦ Δ (runs,)``, evaluated on the public ``X^{ℓ−1}``.
    noise_rngs : sequence of numpy.random.Generator
        One generator per run for the noise ``G_ℓ``.
    noise_model : str
        One of :data:`NOISE_MODELS`.
    first_product : numpy.ndarray, optional
        ``A X⁰`` if already computed (it does not depend on the method or ε).
    literal_clients : bool
        Compute every client's product and draw every client's noise (cost grows with s); otherwise one draw of
        the aggregate noise, equal in law (:func:`noisy_release`).
    """
    runs = X0.shape[0]
    if len(noise_rngs) != runs:
        raise ValueError(f"{len(noise_rngs)} noise generators for {runs} runs")
    aggregate = aggregate_noise_factor(noise_model, operator.clients)[1]
    X = X0
    deltas = np.empty((runs, iterations))
    stds = np.empty((runs, iterations))
    for ell in range(iterations):
        deltas[:, ell] = np.asarray(sensitivity(X), dtype=float)
        stds[:, ell] = deltas[:, ell] * sigma * aggregate
        Y = noisy_release(
            operator,
            X,
            deltas[:, ell] * sigma,
            noise_rngs,
            noise_model=noise_model,
            product=first_product if ell == 0 else None,
            literal_clients=literal_clients,
        )
        X = orthonormalize(Y)
    return PowerTrace(basis=X, sensitivities=deltas, noise_std=stds)


def analyze_gauss(
    A: np.ndarray, rank: int, sigma: float, sensitivity: float, noise_rngs: Sequence[np.random.Generator]
) -> np.ndarray:
    """AnalyzeGauss: top-``rank`` eigenvectors of ``A + E`` per run, E symmetric with entries ``N(0, (Δσ)²)``
    (:func:`~ddppm.privacy.mechanisms.symmetric_release`); shape ``(runs, n, rank)``, eigenvalues descending.

    C. Dwork, K. Talwar, A. Thakurta and L. Zhang, "Analyze Gauss: optimal bounds for privacy-preserving
    principal component analysis", STOC 2014. One release of the upper triangle of A (sensitivity Δ).
    """
    out = np.empty((len(noise_rngs), A.shape[0], rank))
    for r, rng in enumerate(noise_rngs):
        out[r] = top_eigenvectors(symmetric_release(A, sensitivity * sigma, rng), rank)
    return out


def top_eigenvectors(M: np.ndarray, rank: int) -> np.ndarray:
    """The ``rank`` leading eigenvectors of the symmetric ``M`` (n × rank), eigenvalues descending: LAPACK's
    subset solver, as :func:`analyze_gauss` takes them from its release."""
    from scipy.linalg import eigh

    n = M.shape[0]
    return eigh(M, subset_by_index=[n - rank, n - 1])[1][:, ::-1]
