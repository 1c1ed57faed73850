"""Amin, Dick, Kulesza, Muñoz Medina & Vassilvitskii, *Differentially Private Covariance Estimation* (NeurIPS 2019):
the top-k principal directions by iterative eigenvector sampling, with the Bingham law sampled correctly.

Their Algorithm 1 draws the first direction from the density ``∝ exp(β uᵀCu)`` on the unit sphere (a Bingham law;
C = XᵀX of the rows), then restricts C to the complement of the directions drawn so far and draws the next one,
k times. Each draw is an exponential mechanism with score ``uᵀCu``: one replaced row of the unit ball moves the
score by at most ``‖xxᵀ − yyᵀ‖₂ ≤ 1`` (both adjacencies of the common task), so a draw with ``β = ε_i/2`` is
ε_i-DP (the standard exponential-mechanism bound, 2βΔ), and the k draws compose to ``Σ ε_i`` (pure ε, δ = 0
for every neighbour). The paper writes ``β = ε_i/4``, a factor 2 more conservative than that bound; we follow
the paper (``scale: paper``) unless told ``scale: tight`` (docs/common_task.md). The eigenvalues are not
released: the common task asks for directions only, so the whole ε goes to them, ``ε_i = ε/k``.

:func:`sample_bingham` draws the Bingham law exactly by Kent, Ganeiber & Mardia's rejection scheme (*A new unified
approach for the simulation of a wide class of directional distributions*, JCGS 27(2), 2018): an angular central
Gaussian proposal ``ACG(Ω)``, ``Ω = I + 2A/b``, whose density on the sphere is ``∝ (uᵀΩu)^{−d/2}``, and the
envelope ``exp(−uᵀAu) ≤ M (uᵀΩu)^{−d/2}`` with ``M = e^{−(d−b)/2} (d/b)^{d/2}``. A proposal u is accepted with
probability ``exp(−uᵀAu) (uᵀΩu)^{d/2} / M``. IBM's diffprivlib 0.6.6 and OpenDP 0.16.0 divide by
``(uᵀΩu)^{d/2}`` instead of multiplying, which samples the density ``∝ exp(−uᵀAu) (uᵀΩu)^{−d}``, not the Bingham
law their proof is about (:func:`mis_specified_log_density`; docs/peers.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ddppm.common_task.adjacency import release_sensitivity
from ddppm.common_task.base import COMMON_TASK, Calibrated, CommonTaskMethod, curator_costs
from ddppm.common_task.task import CommonTask
from ddppm.methods.base import RegisteredMethod, register


@dataclass(frozen=True)
class BinghamEnvelope:
    """Kent et al.'s ACG envelope of the Bingham law ``∝ exp(−uᵀAu)``, in the eigenbasis of A.

    ``basis``: eigenvectors of A (columns); ``lam``: its eigenvalues shifted so that the smallest is 0 (the
    shift changes only the normalising constant); ``b``: the root of ``Σ_i 1/(b + 2λ_i) = 1`` in [1, d];
    ``log_M``: the log of the envelope constant."""

    basis: np.ndarray
    lam: np.ndarray
    b: float
    log_M: float

    @property
    def omega(self) -> np.ndarray:
        """The diagonal of Ω = I + 2Λ/b in the eigenbasis."""
        return 1.0 + 2.0 * self.lam / self.b


def bingham_envelope(A: np.ndarray) -> BinghamEnvelope:
    """The envelope of :func:`sample_bingham` for the symmetric matrix A (Kent, Ganeiber & Mardia 2018, §4.2)."""
    from scipy.optimize import brentq

    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or not np.allclose(A, A.T, atol=1e-10 * max(1.0, np.abs(A).max())):
        raise ValueError(f"sample_bingham: A must be a symmetric d × d matrix, got shape {A.shape}")
    values, basis = np.linalg.eigh((A + A.T) / 2)
    lam = values - values[0]
    d = lam.size
    if d == 1 or lam[-1] == 0.0:  # the uniform law: b = d, Ω = I, every proposal accepted
        return BinghamEnvelope(basis, lam, float(d), 0.0)
    b = brentq(lambda x: np.sum(1.0 / (x + 2.0 * lam)) - 1.0, 1.0, float(d), xtol=1e-14, rtol=1e-14)
    log_M = -(d - b) / 2.0 + (d / 2.0) * np.log(d / b)
    return BinghamEnvelope(basis, lam, float(b), float(log_M))


def sample_bingham(A: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` independent unit vectors (rows) with density ``∝ exp(−uᵀAu)`` w.r.t. the uniform measure on the
    sphere: exact rejection from an angular central Gaussian proposal (module docstring), in batches.

    Parameters
    ----------
    A : (d, d) symmetric matrix (any eigenvalues: only differences matter).
    size : number of draws.
    rng : the random generator (the only source of randomness).

    Returns
    -------
    (size, d) array of unit rows.
    """
    env = bingham_envelope(A)
    d = env.lam.size
    scale = 1.0 / np.sqrt(env.omega)  # z ~ N(0, Ω⁻¹) in the eigenbasis
    out = np.empty((0, d))
    batch = max(16, 2 * size)
    while out.shape[0] < size:
        z = rng.standard_normal((batch, d)) * scale
        u = z / np.linalg.norm(z, axis=1, keepdims=True)
        quadratic_A = (u**2) @ env.lam
        quadratic_omega = (u**2) @ env.omega
        log_accept = -quadratic_A + (d / 2.0) * np.log(quadratic_omega) - env.log_M
        accepted = u[np.log(rng.random(batch)) < np.minimum(log_accept, 0.0)]
        out = np.vstack([out, accepted])
        rate = max(accepted.shape[0], 1) / batch
        batch = int(min(max(16, 1.2 * (size - out.shape[0]) / rate), 1_000_000))
    return out[:size] @ env.basis.T


def mis_specified_log_density(A: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Log of the (unnormalised) density that diffprivlib 0.6.6's and OpenDP 0.16.0's sampler draws from: their
    acceptance ``exp(−uᵀAu) / (M (uᵀΩu)^{d/2})`` times the ACG proposal ``(uᵀΩu)^{−d/2}``, i.e.
    ``−uᵀAu − d log(uᵀΩu)`` (rows of ``u``), with Ω of :func:`bingham_envelope`."""
    env = bingham_envelope(A)
    coords = np.atleast_2d(u) @ env.basis
    quadratic_A = (coords**2) @ env.lam
    quadratic_omega = (coords**2) @ env.omega
    return -quadratic_A - env.lam.size * np.log(quadratic_omega)


def iterative_eigenvector_sampling(C: np.ndarray, k: int, betas: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Amin et al.'s Algorithm 1 for the directions only: k orthonormal columns, the i-th drawn from
    ``∝ exp(β_i uᵀ C_i u)`` on the sphere of the complement of the first i − 1 (``C_i = P_iᵀ C P_i``)."""
    from scipy.linalg import null_space

    d = C.shape[0]
    chosen = np.empty((d, 0))
    basis = np.eye(d)  # P_i: an orthonormal basis of the complement of the directions drawn so far
    for i in range(k):
        reduced = basis.T @ C @ basis
        u = sample_bingham(-float(betas[i]) * reduced, 1, rng)[0]
        v = basis @ u
        chosen = np.column_stack([chosen, v / np.linalg.norm(v)])
        basis = null_space(chosen.T) if i + 1 < k else basis
    return chosen


PAPER_SCALE = 4.0
"""The paper's β = ε_i/(4Δ): twice as conservative as the exponential mechanism's β = ε_i/(2Δ) (module docstring)."""


@register
class AminCovariance(RegisteredMethod, CommonTaskMethod):
    """Amin et al.'s iterative eigenvector sampling on the common task: a trusted curator holds C = XᵀX and
    publishes k directions, each drawn from its Bingham law; pure ε-DP, so δ = 0 for every neighbour."""

    name = "amin"
    label = "Amin et al. (Bingham sampling, pure ε; correct law)"
    style: ClassVar[dict[str, Any]] = {"color": "#393b79", "marker": "h", "linestyle": "-."}
    task = COMMON_TASK
    trust_model = "central"
    source = "Amin et al. 2019 (NeurIPS), Algorithm 1, directions only"
    pure_dp = True
    audit_witness = "lone_record"

    def common_calibrate(self, task: CommonTask, eps: float, delta_limit: float, options: dict[str, Any]) -> Calibrated:
        # The score uᵀCu moves by at most ‖xxᵀ − yyᵀ‖₂ when one row is replaced: the spectral sensitivity of the
        # second moment, that of a one-column power step.
        sensitivity = release_sensitivity("power_step", options["adjacency"], block=1)
        eps_each = eps / task.k
        beta = eps_each / (PAPER_SCALE * sensitivity)
        params = {"eps_per_direction": eps_each, "beta": beta, "sensitivity": sensitivity}
        return Calibrated(float(eps), float(delta_limit), params, (), 0.0)

    def common_estimate(
        self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator], options: dict[str, Any]
    ) -> np.ndarray:
        betas = np.full(task.k, float(calibrated.params["beta"]))
        return np.stack([iterative_eigenvector_sampling(task.gram, task.k, betas, rng) for rng in rngs])

    def common_view(self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """The curator's release: the k directions, drawn as :meth:`common_estimate` draws them."""
        betas = np.full(task.k, float(calibrated.params["beta"]))
        return np.stack([iterative_eigenvector_sampling(task.gram, task.k, betas, rng).ravel() for rng in rngs])

    def common_view_scores(self, first: CommonTask, second: CommonTask, calibrated: Calibrated,
                           views: np.ndarray) -> np.ndarray:  # fmt: skip
        """For k = 1, ``β uᵀ(C′ − C)u``: the log-likelihood ratio of the two Bingham laws up to the constant
        ``ln Z(βC) − ln Z(βC′)`` (their normalisers), so the same test (a constant shift moves no threshold's
        counts)."""
        if first.k != 1:
            raise ValueError("amin: the audit's statistic is written for k = 1 (later directions' laws depend on the "
                             "earlier draws)")  # fmt: skip
        difference = second.gram - first.gram
        ratio = float(calibrated.params["beta"]) * np.einsum("rd,de,re->r", views, difference, views)
        return ratio[:, None]

    def common_costs(self, task: CommonTask, calibrated: Calibrated) -> dict[str, Any]:
        return curator_costs(task)


def sphere_nodes(d: int, points: int) -> tuple[np.ndarray, np.ndarray]:
    """Quadrature nodes on the unit sphere of R^d (d = 2 or 3) and their weights (summing to its area): the
    periodic trapezoid rule on ``points`` angles of the circle; on S², Gauss–Legendre in z = cos θ (``points``
    nodes) times the trapezoid rule in φ (2 · ``points`` angles). Both converge exponentially for smooth
    integrands such as these densities."""
    if d == 2:
        theta = np.linspace(0.0, 2 * np.pi, points, endpoint=False)
        return np.column_stack([np.cos(theta), np.sin(theta)]), np.full(points, 2 * np.pi / points)
    if d == 3:
        z, wz = np.polynomial.legendre.leggauss(points)
        Z, PHI = np.meshgrid(z, np.linspace(0.0, 2 * np.pi, 2 * points, endpoint=False), indexing="ij")
        R = np.sqrt(1 - Z**2)
        nodes = np.stack([R * np.cos(PHI), R * np.sin(PHI), Z], axis=-1).reshape(-1, 3)
        weights = np.repeat(wz * np.pi / points, 2 * points)
        return nodes, weights
    raise ValueError(f"sphere_nodes: d must be 2 or 3, got {d}")


DEFAULT_NODES = {2: 4000, 3: 96}
"""Quadrature nodes per angle of :func:`sphere_nodes` by dimension (96 × 192 on S²)."""


def release_log_densities(C: np.ndarray, eps: float, law: str, points: int | None = None) -> np.ndarray:
    """The normalised log-density, on the nodes of :func:`sphere_nodes` (d = 2 or 3, from C), of one eigenvector
    release of the covariance C at ε with the libraries' A = ε/4 (λ_max I − C): ``law`` ``"bingham"`` (the
    mechanism's law) or ``"mis_specified"`` (what diffprivlib 0.6.6 and OpenDP 0.16.0 draw). The normalising
    constant is the quadrature of :func:`sphere_nodes`."""
    d = C.shape[0]
    u, weights = sphere_nodes(d, points or DEFAULT_NODES[d])
    A = eps / 4 * (np.linalg.eigvalsh(C).max() * np.eye(d) - C)
    if law == "bingham":
        log_f = -np.einsum("ij,jk,ik->i", u, A, u)
    elif law == "mis_specified":
        log_f = mis_specified_log_density(A, u)
    else:
        raise ValueError(f"law must be 'bingham' or 'mis_specified', got {law!r}")
    top = log_f.max()
    return log_f - (top + np.log(np.sum(weights * np.exp(log_f - top))))


def worst_release_loss(
    eps: float, law: str, trials: int, rng: np.random.Generator, d: int = 2, rows: int = 4, points: int | None = None
) -> float:
    """The largest privacy loss max_u |log p_C(u) − log p_C'(u)| found over ``trials`` random neighbouring pairs
    of d-dimensional data sets (d = 2 or 3; up to ``rows`` rows in the unit ball; one row replaced by another of
    the ball, half the time on the unit sphere): a **lower bound** on the ε the law satisfies, exact per pair up
    to quadrature (``points`` nodes per angle, :func:`sphere_nodes`)."""
    worst = 0.0
    for _ in range(trials):
        n = int(rng.integers(1, rows + 1))
        X = rng.standard_normal((n, d))
        X *= (rng.uniform(0, 1, (n, 1)) ** (1 / d)) / np.linalg.norm(X, axis=1, keepdims=True)
        y = rng.standard_normal(d)
        y *= (1.0 if rng.random() < 0.5 else rng.uniform(0, 1)) / np.linalg.norm(y)
        X[0] = X[0] / np.linalg.norm(X[0]) if rng.random() < 0.5 else X[0]
        C, C2 = X.T @ X, X.T @ X - np.outer(X[0], X[0]) + np.outer(y, y)
        loss = np.abs(release_log_densities(C, eps, law, points) - release_log_densities(C2, eps, law, points)).max()
        worst = max(worst, float(loss))
    return worst
