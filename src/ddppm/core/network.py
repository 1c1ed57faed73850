r"""Agent network: graphs, mixing matrices, consensus (gossip) and row partitions.

The decentralized power method of the paper replaces the global inner product
:math:`\mathbf{X}^\top\mathbf{q} = \sum_{j=1}^m \mathbf{X}_j^\top\mathbf{q}_j` by ``c`` rounds of
average consensus with a mixing matrix :math:`\mathbf{W}\in\mathbb{R}^{m\times m}` (paper, eq. 11):

.. math::

    \mathbf{X}^\top\mathbf{q} + \mathbf{e}
        = m \sum_{j=1}^m (\mathbf{W}^c)_{ij}\, \mathbf{X}_j^\top \mathbf{q}_j,
    \qquad \|\mathbf{e}\| = \mathcal{O}(\lambda_2^c(\mathbf{W})),

and likewise the consensus covariance :math:`\mathbf{\Xi}` satisfies
:math:`\|\mathbf{\Xi} - \mathbf{X}\mathbf{X}^\top\| = \mathcal{O}(\lambda_2^c(\mathbf{W}))` (eq. 14).
Both bounds need :math:`\mathbf{W}` to satisfy the paper's **Assumption 2**:

1. :math:`w_{ij} > 0` if and only if there is an edge between agents ``i`` and ``j``;
2. the underlying graph is undirected (:math:`\mathbf{W} = \mathbf{W}^\top`);
3. :math:`\mathbf{W}` is doubly stochastic
   (:math:`\mathbf{W}\mathbf{1} = \mathbf{W}^\top\mathbf{1} = \mathbf{1}`, :math:`w_{ij} \ge 0`);
4. the agent graph :math:`\mathcal{G}(\{1,\dots,m\}, E)` is connected,

whose consequence is :math:`0 \le \lambda_2(\mathbf{W}) < 1`. :func:`validate_mixing_matrix` checks all of
these (and :math:`\lambda_2 < 1` explicitly, which additionally rules out periodic, e.g. bipartite
zero-diagonal, matrices for which consensus does not converge).

The paper's experiments use the 4-agent ring :func:`paper_ring_w`; other topologies get
Metropolis–Hastings weights (:func:`metropolis_hastings_weights`), which satisfy Assumption 2 for every
connected undirected graph.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ddppm.core.errors import ConfigError, NetworkError
from ddppm.core.partition import assignment_vector, partition_rows, parts_from_assignment  # noqa: F401 (re-exported)
from ddppm.core.partition import check_agent_count as _check_m

if TYPE_CHECKING:  # networkx and scipy.sparse are imported where used: most jobs read W from a file (issue 49)
    import networkx as nx

__all__ = [
    "TOPOLOGIES",
    "assignment_vector",
    "build_graph",
    "consensus_matrix",
    "gossip",
    "metropolis_hastings_weights",
    "mixing_matrix",
    "paper_ring_w",
    "partition_rows",
    "parts_from_assignment",
    "second_eigenvalue",
    "validate_mixing_matrix",
]

TOPOLOGIES: tuple[str, ...] = (
    "paper_ring", "ring", "path", "star", "complete", "grid", "erdos_renyi", "random_regular"
)  # fmt: skip
"""Valid values of the configuration key ``network.topology``."""
RANDOM_REGULAR_DEGREE = 4
"""Every agent's number of neighbours in ``random_regular`` (a sparse expander: λ₂ stays bounded away from 1 as
m grows, unlike the ring's); min(4, m − 1) with fewer than five agents."""

_MH_FIX = "use Metropolis–Hastings weights: ddppm.core.network.metropolis_hastings_weights(graph)"


# ---------------------------------------------------------------------------------------------------------
# Graphs and weights
# ---------------------------------------------------------------------------------------------------------


def paper_ring_w() -> np.ndarray:
    r"""Return the paper's 4-agent ring mixing matrix.

    .. math::

        \mathbf{W} = \begin{bmatrix}
            .5 & .25 & 0 & .25\\ .25 & .5 & .25 & 0\\ 0 & .25 & .5 & .25\\ .25 & 0 & .25 & .5
        \end{bmatrix}

    It is circulant with eigenvalues :math:`1, 0.5, 0.5, 0`, so :math:`\lambda_2(\mathbf{W}) = 0.5`.

    Returns
    -------
    numpy.ndarray
        A fresh ``(4, 4)`` float64 array.
    """
    return np.array(
        [
            [0.50, 0.25, 0.00, 0.25],
            [0.25, 0.50, 0.25, 0.00],
            [0.00, 0.25, 0.50, 0.25],
            [0.25, 0.00, 0.25, 0.50],
        ],
        dtype=np.float64,
    )


def _grid_shape(m: int) -> tuple[int, int]:
    """Most square factorisation ``rows * cols = m`` with ``rows <= cols``."""
    rows = math.isqrt(m)
    while m % rows:
        rows -= 1
    return rows, m // rows


def build_graph(
    topology: str,
    m: int,
    *,
    seed: int | None = None,
    edge_prob: float | None = None,
) -> nx.Graph:
    r"""Build an undirected agent graph on nodes ``0, ..., m-1``.

    Parameters
    ----------
    topology : str
        One of :data:`TOPOLOGIES`:

        * ``"ring"`` / ``"paper_ring"`` – cycle :math:`C_m` (``networkx.cycle_graph``);
        * ``"path"`` – path :math:`P_m`;
        * ``"star"`` – star with ``m`` nodes in total (hub ``0`` and ``m-1`` leaves);
        * ``"complete"`` – complete graph :math:`K_m`;
        * ``"grid"`` – 2-D lattice ``r x s`` with ``r * s = m`` the most square factorisation
          (``r <= s``, largest ``r``), nodes numbered row-major; ``m`` must not be prime (a ``1 x m``
          "grid" is the path — use ``"path"``);
        * ``"erdos_renyi"`` – :math:`G(m, p)` drawn with ``seed``; the default
          :math:`p = \min(1, 2\ln m / m)` is twice the connectivity threshold. The result may still be
          disconnected; :func:`validate_mixing_matrix` then rejects it.
        * ``"random_regular"`` – a uniformly random 4-regular graph (``networkx.random_regular_graph``) drawn
          with ``seed`` (with ``m <= 4``, min(4, m − 1)-regular: the complete graph). Almost surely connected,
          an expander.
    m : int
        Number of agents, ``m >= 1``.
    seed : int or None, optional
        Seed of the Erdős–Rényi and random-regular draws (ignored by the deterministic topologies).
    edge_prob : float or None, optional
        Edge probability of ``"erdos_renyi"`` in ``[0, 1]`` (ignored by the other topologies).

    Returns
    -------
    networkx.Graph
        Simple undirected graph (no self-loops) with nodes ``0..m-1``.

    Raises
    ------
    ConfigError
        Unknown ``topology`` (key ``network.topology``), invalid ``m`` (key ``partition.m``) or invalid
        ``edge_prob`` (key ``network.edge_prob``).
    """
    import networkx as nx

    if topology not in TOPOLOGIES:
        raise ConfigError(f"network.topology: unknown topology {topology!r}; valid values are {', '.join(TOPOLOGIES)}")
    m = _check_m(m)
    if topology in ("ring", "paper_ring"):
        graph = nx.cycle_graph(m)
    elif topology == "path":
        graph = nx.path_graph(m)
    elif topology == "star":
        graph = nx.star_graph(m - 1)  # star_graph(k) has k + 1 nodes
    elif topology == "complete":
        graph = nx.complete_graph(m)
    elif topology == "grid":
        rows, cols = _grid_shape(m)
        if rows == 1 and m > 1:
            raise ConfigError(
                f"partition.m: topology 'grid' needs a composite number of agents (rows x cols with "
                f"rows, cols >= 2), but m = {m} is prime; choose a composite m or use topology 'path'"
            )
        graph = nx.convert_node_labels_to_integers(
            nx.grid_2d_graph(rows, cols), ordering="sorted", label_attribute="pos"
        )
    elif topology == "random_regular":  # with m <= 4 agents the densest regular graph: complete
        graph = nx.random_regular_graph(min(RANDOM_REGULAR_DEGREE, m - 1), m, seed=seed)
    else:  # erdos_renyi
        if edge_prob is None:
            p = 1.0 if m == 1 else min(1.0, 2.0 * math.log(m) / m)
        else:
            p = float(edge_prob)
            if not (0.0 <= p <= 1.0):
                raise ConfigError(f"network.edge_prob must lie in [0, 1], got {edge_prob!r}")
        graph = nx.gnp_random_graph(m, p, seed=seed)
    graph = nx.Graph(graph)
    graph.remove_edges_from(list(nx.selfloop_edges(graph)))  # cycle_graph(1) has a self-loop
    graph.graph["topology"] = topology
    return graph


def metropolis_hastings_weights(graph: nx.Graph) -> np.ndarray:
    r"""Metropolis–Hastings mixing matrix of an undirected graph.

    .. math::

        w_{ij} = \frac{1}{1 + \max(d_i, d_j)} \ \text{for } \{i,j\}\in E,\qquad
        w_{ii} = 1 - \sum_{j \ne i} w_{ij},\qquad w_{ij} = 0 \ \text{otherwise},

    with :math:`d_i` the degree of node ``i`` (self-loops ignored). The result is symmetric, doubly
    stochastic, has :math:`w_{ii} \ge 1/(1+d_i) > 0`, and its positive off-diagonal pattern is exactly
    the edge set, so it satisfies Assumption 2 whenever the graph is connected.

    Parameters
    ----------
    graph : networkx.Graph
        Undirected graph; row/column ``k`` of the result corresponds to the ``k``-th node of
        ``graph.nodes`` (``0..m-1`` for graphs from :func:`build_graph`).

    Returns
    -------
    numpy.ndarray
        ``(m, m)`` float64 mixing matrix.
    """
    if graph.is_directed():
        raise NetworkError("network: Metropolis–Hastings weights need an undirected graph (Assumption 2)")
    nodes = list(graph.nodes)
    index = {v: k for k, v in enumerate(nodes)}
    m = len(nodes)
    deg = {v: sum(1 for u in graph.neighbors(v) if u != v) for v in nodes}
    W = np.zeros((m, m), dtype=np.float64)
    for u, v in graph.edges:
        if u == v:
            continue
        w = 1.0 / (1.0 + max(deg[u], deg[v]))
        W[index[u], index[v]] = w
        W[index[v], index[u]] = w
    W[np.diag_indices(m)] = 1.0 - W.sum(axis=1)
    return W


def mixing_matrix(
    topology: str = "paper_ring",
    m: int = 4,
    *,
    seed: int | None = None,
    edge_prob: float | None = None,
) -> np.ndarray:
    """Mixing matrix for a named topology, validated against Assumption 2.

    Parameters
    ----------
    topology : str, default ``"paper_ring"``
        One of :data:`TOPOLOGIES`. ``"paper_ring"`` is the paper's fixed 4-ring :func:`paper_ring_w`
        and requires ``m == 4``; all others use :func:`metropolis_hastings_weights` of
        :func:`build_graph` (so ``"ring"`` with ``m = 4`` has weights 1/3, not the paper's 1/4).
    m : int, default 4
        Number of agents.
    seed, edge_prob
        Passed to :func:`build_graph` (Erdős–Rényi only).

    Returns
    -------
    numpy.ndarray
        ``(m, m)`` mixing matrix satisfying Assumption 2.

    Raises
    ------
    ConfigError
        Bad ``topology``/``m``/``edge_prob``.
    NetworkError
        The resulting matrix violates Assumption 2 (e.g. a disconnected Erdős–Rényi draw).
    """
    if topology not in TOPOLOGIES:
        raise ConfigError(f"network.topology: unknown topology {topology!r}; valid values are {', '.join(TOPOLOGIES)}")
    if topology == "paper_ring":
        if isinstance(m, bool) or not isinstance(m, int | np.integer) or int(m) != 4:
            raise ConfigError(
                f"partition.m: topology 'paper_ring' is the paper's fixed 4-agent ring and needs m = 4, "
                f"got m = {m!r}; use topology 'ring' (Metropolis–Hastings weights) for other m"
            )
        W = paper_ring_w()
    else:
        W = metropolis_hastings_weights(build_graph(topology, m, seed=seed, edge_prob=edge_prob))
    key = "network" if topology == "paper_ring" else f"network (topology={topology!r}, m={m}, seed={seed})"
    validate_mixing_matrix(W, key=key)
    return W


# ---------------------------------------------------------------------------------------------------------
# Validation and spectrum
# ---------------------------------------------------------------------------------------------------------


def _as_square(W: object, key: str, exc: type[Exception] = NetworkError) -> np.ndarray:
    try:
        A = np.asarray(W, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise exc(f"{key}: mixing matrix W must be a numeric array ({err})") from err
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] < 1:
        raise exc(f"{key}: mixing matrix W must be a square 2-D array (m x m, m >= 1), got shape {A.shape}")
    return A


def validate_mixing_matrix(W: np.ndarray, *, key: str = "network", atol: float = 1e-10) -> None:
    r"""Check that ``W`` satisfies Assumption 2 of the paper; raise :class:`NetworkError` otherwise.

    Checks, in order: square 2-D finite array; :math:`w_{ij} \ge -\text{atol}`; symmetric
    (:math:`|w_{ij} - w_{ji}| \le \text{atol}`, undirected graph); every row **and** column sums to
    ``1`` within ``atol`` (doubly stochastic); the graph whose edges are the positive off-diagonal entries
    (:math:`w_{ij} > \text{atol}`) is connected; and :math:`\lambda_2(\mathbf{W}) < 1 - \text{atol}`
    (:func:`second_eigenvalue`), which is what makes the consensus error of eq. (11)/(14) vanish as
    :math:`\lambda_2^c \to 0`.

    Parameters
    ----------
    W : array_like
        Candidate ``(m, m)`` mixing matrix.
    key : str, default ``"network"``
        Configuration key named in error messages.
    atol : float, default 1e-10
        Absolute tolerance of the equality/sign checks.

    Raises
    ------
    NetworkError
        With a message naming ``key``, the violated condition with the offending numbers, and a fix.
    """
    A = _as_square(W, key)
    m = A.shape[0]
    if not np.all(np.isfinite(A)):
        bad = np.argwhere(~np.isfinite(A))[0]
        raise NetworkError(
            f"{key}: mixing matrix W has a non-finite entry W[{bad[0]},{bad[1]}] = {A[tuple(bad)]}; "
            f"all entries must be finite. Fix: {_MH_FIX}"
        )
    if np.any(A < -atol):
        i, j = np.unravel_index(np.argmin(A), A.shape)
        raise NetworkError(
            f"{key}: mixing matrix W has a negative entry W[{i},{j}] = {A[i, j]:.6g}; Assumption 2 needs "
            f"w_ij >= 0 (w_ij > 0 exactly on edges). Fix: {_MH_FIX}"
        )
    asym = np.abs(A - A.T)
    if np.any(asym > atol):
        i, j = np.unravel_index(np.argmax(asym), A.shape)
        raise NetworkError(
            f"{key}: mixing matrix W is not symmetric (the graph must be undirected, Assumption 2): "
            f"W[{i},{j}] = {A[i, j]:.6g} but W[{j},{i}] = {A[j, i]:.6g}. Fix: {_MH_FIX}"
        )
    for axis, what in ((1, "row"), (0, "column")):
        sums = A.sum(axis=axis)
        dev = np.abs(sums - 1.0)
        if np.any(dev > atol):
            k = int(np.argmax(dev))
            raise NetworkError(
                f"{key}: mixing matrix W is not doubly stochastic (Assumption 2): {what} {k} sums to "
                f"{sums[k]:.12g}, not 1 ({int(np.sum(dev > atol))} of {m} {what}s off). Fix: {_MH_FIX}"
            )
    adj = (A > atol) & ~np.eye(m, dtype=bool)
    from scipy.sparse.csgraph import connected_components

    n_comp, labels = connected_components(adj.astype(np.int8), directed=False)
    if n_comp > 1:
        comps = [np.flatnonzero(labels == c).tolist() for c in range(n_comp)]
        shown = "; ".join(str(c) for c in comps[:5]) + ("; ..." if n_comp > 5 else "")
        raise NetworkError(
            f"{key}: the agent graph of W (edges = positive off-diagonal entries) is not connected "
            f"(Assumption 2): it has {n_comp} connected components: {shown}. Fix: add edges so the graph "
            f"is connected (e.g. a larger network.edge_prob or another seed for erdos_renyi)"
        )
    lam2 = second_eigenvalue(A)
    if not lam2 < 1.0 - atol:
        raise NetworkError(
            f"{key}: lambda_2(W) = {lam2:.12g} is not < 1, so consensus does not converge (W is periodic, "
            f"e.g. a bipartite graph with zero diagonal). Fix: give every agent a positive self-weight "
            f"w_ii > 0, e.g. {_MH_FIX}"
        )


def second_eigenvalue(W: np.ndarray) -> float:
    r""":math:`\lambda_2(\mathbf{W})`, the rate of consensus.

    Defined as the spectral radius of :math:`\mathbf{W}` with the consensus direction removed,

    .. math::

        \lambda_2(\mathbf{W}) := \rho\!\left(\mathbf{W} - \tfrac{1}{m}\mathbf{1}\mathbf{1}^\top\right)
            = \max_{k \ge 2} |\mu_k(\mathbf{W})|,

    where :math:`1 = \mu_1 \ge \mu_2 \ge \dots \ge \mu_m` are the eigenvalues of a symmetric doubly
    stochastic :math:`\mathbf{W}`. This is the quantity in the paper's bounds (Appendix A1, eq. 47):
    :math:`\|(\mathbf{W}^c - \tfrac{1}{m}\mathbf{1}\mathbf{1}^\top) \mathbf{v}\|
    \le \lambda_2^c \|\mathbf{v}\|`,
    so it is the largest eigenvalue *modulus* (not the second-largest signed eigenvalue — they differ
    when :math:`\mu_m < -\mu_2`). Under Assumption 2 (plus aperiodicity) :math:`0 \le \lambda_2 < 1`.
    For ``m = 1`` the result is ``0``.

    Parameters
    ----------
    W : array_like
        ``(m, m)`` mixing matrix.

    Returns
    -------
    float
        :math:`\lambda_2(\mathbf{W})`.
    """
    A = _as_square(W, "network")
    m = A.shape[0]
    B = A - np.full((m, m), 1.0 / m)
    if np.allclose(A, A.T, rtol=0.0, atol=1e-12):
        eig = np.linalg.eigvalsh(0.5 * (B + B.T))
    else:
        eig = np.linalg.eigvals(B)
    return float(np.max(np.abs(eig)))


# ---------------------------------------------------------------------------------------------------------
# Consensus
# ---------------------------------------------------------------------------------------------------------


def _check_c(c: object) -> int:
    if isinstance(c, bool) or not isinstance(c, int | np.integer) or int(c) < 0:
        raise ConfigError(f"network.c (consensus steps) must be an integer >= 0, got {c!r}")
    return int(c)


def consensus_matrix(W: np.ndarray, c: int) -> np.ndarray:
    r"""The ``c``-step consensus matrix :math:`\mathbf{W}^c` (``c = 0`` gives the identity).

    Parameters
    ----------
    W : array_like
        ``(m, m)`` mixing matrix.
    c : int
        Number of consensus (gossip) rounds, ``c >= 0``.

    Returns
    -------
    numpy.ndarray
        ``(m, m)`` float64 array ``np.linalg.matrix_power(W, c)``.

    Raises
    ------
    ConfigError
        ``c`` is not a non-negative integer (key ``network.c``).
    """
    c = _check_c(c)
    A = _as_square(W, "network")
    return np.linalg.matrix_power(A, c)


def gossip(W: np.ndarray, Z: np.ndarray, c: int) -> np.ndarray:
    r"""Run ``c`` rounds of neighbour averaging on per-agent values.

    With :math:`\mathbf{Z}` stacking agent ``i``'s value :math:`\mathbf{z}_i` (any shape) along the first
    axis, one round is :math:`\mathbf{z}_i \leftarrow \sum_j w_{ij} \mathbf{z}_j`, i.e.
    :math:`\mathbf{Z} \leftarrow (\mathbf{W} \otimes \mathbf{I})\mathbf{Z}`; agent ``i`` only combines the
    values of its neighbours (:math:`w_{ij} > 0`). After ``c`` rounds the result equals
    :math:`(\mathbf{W}^c \otimes \mathbf{I})\mathbf{Z}` (paper eq. 45), and ``m`` times it approximates
    :math:`\sum_j \mathbf{z}_j` at every agent with error at most
    :math:`m\lambda_2^c\|\mathbf{Z}-\bar{\mathbf{Z}}\|` (eq. 11/47).

    Parameters
    ----------
    W : array_like
        ``(m, m)`` mixing matrix.
    Z : array_like
        Per-agent values, shape ``(m, ...)``.
    c : int
        Number of rounds, ``c >= 0``.

    Returns
    -------
    numpy.ndarray
        Float array of the same shape as ``Z`` (a copy when ``c = 0``).

    Raises
    ------
    ConfigError
        ``c`` invalid (key ``network.c``).
    NetworkError
        ``Z``'s first axis does not have length ``m``.
    """
    c = _check_c(c)
    A = _as_square(W, "network")
    out = np.array(Z, dtype=np.result_type(A.dtype, np.asarray(Z).dtype, np.float64), copy=True)
    if out.ndim < 1 or out.shape[0] != A.shape[0]:
        raise NetworkError(
            f"network: gossip needs per-agent values stacked along the first axis, i.e. Z.shape[0] == m "
            f"= {A.shape[0]}, got Z.shape = {out.shape}"
        )
    for _ in range(c):
        out = np.tensordot(A, out, axes=1)
    return out


# Partitions live in ddppm.core.partition; re-exported here for convenience.


def parties_mixing_matrix(m: int, topology: str = "ring", *, seed: int | None = None) -> np.ndarray:
    """The gossip network of m parties: :func:`mixing_matrix` of ``topology``, the complete graph for two parties
    (a ring of two is not one), and the 1 × 1 identity for one."""
    if m == 1:
        return np.ones((1, 1))
    return mixing_matrix(topology if m > 2 else "complete", m, seed=seed)
