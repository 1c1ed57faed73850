"""The exact privacy loss of one eigenvector release of the peers' law in any dimension (docs/peers.md).

diffprivlib 0.6.6 and OpenDP 0.16.0 release u with density ``∝ exp(−uᵀAu)(uᵀΩu)^{−d}`` on the unit sphere
S^{d−1} (the ``"mis_specified"`` law; :func:`ddppm.methods.amin.mis_specified_log_density`), where
``A = ε/4 (λ_max I − C)``, ``Ω = I + 2A/b`` and b solves ``Σ_i 1/(b + 2a_i) = 1`` (a_i the eigenvalues of A). The
mechanism's law is Bingham, ``∝ exp(−uᵀAu)`` (``"bingham"``). Two facts make both exact in any d:

**One variable.** On the sphere ``uᵀΩu = 1 + 2q/b`` with ``q = uᵀAu = ε/4 (λ_max − x)``, ``x = uᵀCu``. So the
unnormalised log-density is ``ψ(x) = −q − d log(1 + 2q/b)`` (without the last term for Bingham), a function of
x alone, increasing and convex in x.

**The normalising constant** ``Z = ∫ exp ψ dσ``. Under the uniform law on the sphere the squared coordinates in the
eigenbasis of A are Dirichlet(½, …, ½); grouping the m distinct eigenvalues c_j (multiplicities n_j) of A, the
group weights ``W_j`` are Dirichlet(n_1/2, …, n_m/2), ``q = Σ_j c_j W_j``, and by stick-breaking
``W_j = B_j Π_{i<j}(1 − B_i)`` with independent ``B_j ~ Beta(n_j/2, Σ_{i>j} n_i/2)``. Hence

    Z = |S^{d−1}| E[g(Σ_j c_j W_j)],   g(q) = e^{−q} (1 + 2q/b)^{−d}   (Bingham: e^{−q}),

an (m − 1)-dimensional integral against a product of Beta weights: the product Gauss–Jacobi rule
(:func:`dirichlet_nodes`, ``nodes`` per factor) integrates it, exactly for polynomials of degree 2·nodes − 1 in each
B_j, and exponentially fast here since g is analytic on a neighbourhood of [0, max c] (its only singularity, a pole
at q = −b/2 ≤ −1/2, stays outside). A data set of at most three rows has m ≤ 4 in every d (A = ε λ_max/4 on
the complement of the rows), so Z is a 3-D sum whatever d is. The error is estimated a posteriori by doubling the
nodes (:func:`log_normaliser` with ``nodes`` and ``2·nodes``) and checked against importance sampling
(:func:`log_normaliser_mc`) and the sphere quadrature of d = 2, 3 (tests/methods/test_peer_law.py).

**The worst u.** Between neighbours C, C′ the log-density ratio is ``h(u) = ψ_C(x) − ψ_{C′}(x′) − log Z_C +
log Z_{C′}``, x = uᵀCu, x′ = uᵀC′u. The pairs (x, x′) fill the joint numerical range W of (C, C′), and h is
increasing in x and decreasing in x′: its gradient never vanishes, so |h| is largest on the boundary of the
convex hull of W, where (x, x′) comes from a top eigenvector of ``cos α C + sin α C′``. :func:`max_log_ratio`
scans α on a grid, refines the best angles and polishes each candidate by a local optimisation over the whole
sphere (which also covers the flat faces of W, at angles with a repeated top eigenvalue).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import gammaln, roots_jacobi

from ddppm.methods.amin import bingham_envelope

LAWS = ("bingham", "mis_specified")
DEFAULT_NODES = 40
"""Gauss–Jacobi nodes per Dirichlet factor; with m ≤ 4 groups a constant is a sum over 40³ = 64,000 nodes."""


def log_sphere_area(d: int) -> float:
    """log |S^{d−1}| = log(2 π^{d/2} / Γ(d/2))."""
    return float(np.log(2.0) + d / 2 * np.log(np.pi) - gammaln(d / 2))


def eigen_groups(values: np.ndarray, tol: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of the sorted-or-not ``values`` (clusters closer than ``tol`` · max(1, |values|) merged,
    represented by their mean) and their multiplicities."""
    v = np.sort(np.asarray(values, dtype=float))
    cut = np.flatnonzero(np.diff(v) > tol * max(1.0, np.abs(v).max())) + 1
    blocks = np.split(v, cut)
    return np.array([b.mean() for b in blocks]), np.array([b.size for b in blocks])


@lru_cache(maxsize=256)
def dirichlet_nodes(multiplicities: tuple[int, ...], nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Product Gauss–Jacobi nodes for W ~ Dirichlet(n_1/2, …, n_m/2) by stick-breaking (module docstring).

    Returns ``(W, weights)``: ``W`` (points, m) on the simplex, ``weights`` summing to 1, so that
    ``E[f(W)] ≈ Σ weights · f(W)``."""
    m = len(multiplicities)
    W = np.ones((1, m))
    weights = np.ones(1)
    rest = np.ones(1)  # Π_{i<j} (1 − B_i) at each node
    for j in range(m - 1):
        p, q = multiplicities[j] / 2, sum(multiplicities[j + 1 :]) / 2
        t, w = roots_jacobi(nodes, q - 1.0, p - 1.0)  # weight (1 − t)^{q−1} (1 + t)^{p−1} on [−1, 1]
        B, w = (1.0 + t) / 2, w / w.sum()
        W = np.repeat(W, nodes, axis=0)
        rest_new = np.repeat(rest, nodes) * np.tile(1.0 - B, rest.size)
        W[:, j] = np.repeat(rest, nodes) * np.tile(B, rest.size)
        weights = np.repeat(weights, nodes) * np.tile(w, weights.size)
        rest = rest_new
    W[:, m - 1] = rest
    return W, weights


def _law_parts(C: np.ndarray, eps: float) -> tuple[float, float, np.ndarray, np.ndarray]:
    """λ_max of C, Kent's b, and the grouped eigenvalues of A = ε/4 (λ_max I − C) with their multiplicities."""
    C = np.asarray(C, dtype=float)
    lam = np.linalg.eigvalsh((C + C.T) / 2)
    A = eps / 4 * (lam[-1] * np.eye(C.shape[0]) - C)
    b = bingham_envelope(A).b
    c, n = eigen_groups(eps / 4 * (lam[-1] - lam))
    return float(lam[-1]), float(b), c, n


def log_g(q: np.ndarray, b: float, d: int, law: str) -> np.ndarray:
    """log g(q): ``−q − d log(1 + 2q/b)`` (mis_specified) or ``−q`` (bingham)."""
    if law == "bingham":
        return -q
    if law == "mis_specified":
        return -q - d * np.log1p(2.0 * q / b)
    raise ValueError(f"law must be one of {LAWS}, got {law!r}")


def _expectations(C: np.ndarray, eps: float, law: str, nodes: int) -> tuple[float, float]:
    """(log E_unif[g(q)], E_law[(u·v)²]) with v the top eigenvector of C (a simple λ_max assumed for the second)."""
    _, b, c, n = _law_parts(C, eps)
    if nodes ** (len(c) - 1) > 4_000_000:
        raise ValueError(f"log_normaliser: A has {len(c)} distinct eigenvalues; the product rule would need "
                         f"{nodes}^{len(c) - 1} nodes (use log_normaliser_mc)")  # fmt: skip
    W, w = dirichlet_nodes(tuple(int(k) for k in n), nodes)
    lg = log_g(W @ c, b, int(n.sum()), law)
    top = lg.max()
    mass = w * np.exp(lg - top)
    total = mass.sum()
    return float(top + np.log(total)), float((mass @ W[:, 0]) / total / n[0])


def log_normaliser(C: np.ndarray, eps: float, law: str, nodes: int = DEFAULT_NODES) -> float:
    """log Z = log ∫_{S^{d−1}} exp ψ(uᵀCu) dσ(u) (surface measure) of one release of the covariance C at ε under
    ``law`` (module docstring: the Dirichlet stick-breaking route, product Gauss–Jacobi with ``nodes`` per factor).

    Parameters
    ----------
    C : (d, d) covariance (symmetric, positive semi-definite).
    eps : the release's ε (A = ε/4 (λ_max I − C), the libraries' scale at sensitivity 1).
    law : ``"bingham"`` or ``"mis_specified"``.
    nodes : Gauss–Jacobi nodes per factor.
    """
    return log_sphere_area(np.asarray(C).shape[0]) + _expectations(C, eps, law, nodes)[0]


def top_alignment(C: np.ndarray, eps: float, law: str, nodes: int = DEFAULT_NODES) -> float:
    """E[(u·v)²] under the release law of C at ε, v the top eigenvector of C (simple top eigenvalue): by symmetry
    ``E[W_1]/n_1`` over the group of the eigenvalue 0 of A, with the quadrature of :func:`log_normaliser`."""
    return _expectations(C, eps, law, nodes)[1]


def log_normaliser_mc(C: np.ndarray, eps: float, law: str, draws: int, rng: np.random.Generator) -> tuple[float, float]:
    """log Z by importance sampling from the libraries' own envelope ACG(Ω), density
    ``(uᵀΩu)^{−d/2}/(|S| det Ω^{−1/2})``: ``Z = |S| det(Ω)^{−1/2} E_ACG[exp ψ(u) (uᵀΩu)^{d/2}]``. The weight is
    ``g(q)(1 + 2q/b)^{d/2}``, in [0, 1] for the mis-specified law and in [0, M] for Bingham (Kent's envelope), so
    the estimate has a finite variance. Returns (log Z, its standard error by the delta method)."""
    C = np.asarray(C, dtype=float)
    d = C.shape[0]
    lam_max, b, _, _ = _law_parts(C, eps)
    env = bingham_envelope(eps / 4 * (lam_max * np.eye(d) - C))
    z = rng.standard_normal((draws, d)) / np.sqrt(env.omega)
    u2 = z**2 / np.sum(z**2, axis=1, keepdims=True)
    q = u2 @ env.lam
    weight = np.exp(log_g(q, b, d, law) + d / 2 * np.log1p(2.0 * q / b))
    mean = weight.mean()
    log_z = log_sphere_area(d) - 0.5 * np.sum(np.log(env.omega)) + np.log(mean)
    return float(log_z), float(weight.std() / np.sqrt(draws) / mean)


def psi(x: np.ndarray, lam_max: float, b: float, d: int, eps: float, law: str) -> np.ndarray:
    """The unnormalised log-density ψ(x), x = uᵀCu (module docstring)."""
    return log_g(eps / 4 * (lam_max - x), b, d, law)


def _dpsi(x: np.ndarray, lam_max: float, b: float, d: int, eps: float, law: str) -> np.ndarray:
    if law == "bingham":
        return np.full_like(x, eps / 4)
    q = eps / 4 * (lam_max - x)
    return eps / 4 * (1.0 + (2.0 * d / b) / (1.0 + 2.0 * q / b))


def max_log_ratio(C: np.ndarray, C2: np.ndarray, eps: float, law: str, nodes: int = DEFAULT_NODES,
                  angles: int = 720, polish: int = 4) -> tuple[float, np.ndarray]:  # fmt: skip
    """The privacy loss of one release between the covariances C and C2: ``max_u |log p_C(u) − log p_C2(u)|`` over
    the sphere, normalising constants by :func:`log_normaliser`. Returns (loss, the worst u).

    The worst u lies on the top-eigenvector curve of ``cos α C + sin α C2`` (module docstring): ``angles`` angles,
    then each of the ``polish`` best local maxima of the curve is refined in α and polished by L-BFGS over the
    sphere."""
    from scipy.optimize import minimize, minimize_scalar

    C, C2 = np.asarray(C, float), np.asarray(C2, float)
    d = C.shape[0]
    (lm1, b1, _, _), (lm2, b2, _, _) = _law_parts(C, eps), _law_parts(C2, eps)
    offset = log_normaliser(C2, eps, law, nodes) - log_normaliser(C, eps, law, nodes)

    def h(x1, x2):
        return psi(x1, lm1, b1, d, eps, law) - psi(x2, lm2, b2, d, eps, law) + offset

    def curve(alpha):
        alpha = np.atleast_1d(alpha)
        M = np.cos(alpha)[:, None, None] * C + np.sin(alpha)[:, None, None] * C2
        v = np.linalg.eigh(M)[1][:, :, -1]
        return v, np.abs(h(np.einsum("ai,ij,aj->a", v, C, v), np.einsum("ai,ij,aj->a", v, C2, v)))

    grid = np.linspace(0.0, 2 * np.pi, angles, endpoint=False)
    _, values = curve(grid)
    peaks = np.flatnonzero((values >= np.roll(values, 1)) & (values >= np.roll(values, -1)))
    peaks = peaks[np.argsort(values[peaks])[::-1][:polish]]
    step = 2 * np.pi / angles
    best, best_u = -np.inf, None
    for i in peaks:
        res = minimize_scalar(lambda a: -curve(a)[1][0], bounds=(grid[i] - step, grid[i] + step), method="bounded",
                              options={"xatol": 1e-10})  # fmt: skip
        v = curve(res.x)[0][0]
        sign = np.sign(h(v @ C @ v, v @ C2 @ v)) or 1.0

        def objective(z, sign=sign):
            norm = np.linalg.norm(z)
            u = z / norm
            x1, x2 = u @ C @ u, u @ C2 @ u
            grad_u = 2 * _dpsi(np.array(x1), lm1, b1, d, eps, law) * (C @ u)
            grad_u -= 2 * _dpsi(np.array(x2), lm2, b2, d, eps, law) * (C2 @ u)
            grad_z = (grad_u - (u @ grad_u) * u) / norm
            return -sign * float(h(x1, x2)), -sign * grad_z

        res_u = minimize(objective, v, jac=True, method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 1e-15})
        u = res_u.x / np.linalg.norm(res_u.x)
        for cand in (u, v):
            value = abs(float(h(cand @ C @ cand, cand @ C2 @ cand)))
            if value > best:
                best, best_u = value, cand
    return best, best_u


def neighbour_covariances(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """C = XᵀX and C′ with the first row of X replaced by y (rows in the unit ball)."""
    C = X.T @ X
    return C, C - np.outer(X[0], X[0]) + np.outer(y, y)


def pair_loss(X: np.ndarray, y: np.ndarray, eps: float, law: str, nodes: int = DEFAULT_NODES, **search) -> float:
    """The privacy loss of one release between X and X with its first row replaced by y (:func:`max_log_ratio`;
    ``search``: its ``angles`` and ``polish``)."""
    return max_log_ratio(*neighbour_covariances(X, y), eps, law, nodes, **search)[0]
