"""The decentralised problem: row blocks held by agents, the mixing matrix and the consensus depth.

Everything downstream (algorithms, release model, privacy) works on a :class:`DistributedProblem`.
Rows are stored agent by agent, so the global iterate ``q`` of the paper's eq. (4) is the stack
``[q_1; …; q_m]`` in that order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ddppm.core.errors import ConfigError, DataError
from ddppm.core.network import validate_mixing_matrix

DENSE_XI_MAX_N = 2000
"""Up to this many rows Ξ (n × n) is formed and used densely; above it, only applied through the agents' blocks."""


_CHECKED_NETWORKS: set[tuple] = set()
"""Mixing matrices (dtype, shape, bytes) that passed :func:`validate_mixing_matrix` in this process."""


@dataclass(frozen=True)
class DistributedProblem:
    """Row-partitioned data ``X = [X_1; …; X_m]`` (eq. 1) on a network with mixing matrix ``W``.

    Parameters
    ----------
    blocks
        ``X_i ∈ R^{n_i×d}`` for each agent ``i``.
    W
        Mixing matrix (Assumption 2); validated by :func:`ddppm.core.network.validate_mixing_matrix`
        where the problem is built from configuration.
    c
        Consensus (gossip) steps per power iteration; the algorithm uses ``W^c``.
    """

    blocks: tuple[np.ndarray, ...]
    W: np.ndarray
    c: int
    row_ids: tuple[np.ndarray, ...] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if len(self.blocks) != self.W.shape[0]:
            raise ConfigError(
                f"network: W is {self.W.shape[0]}×{self.W.shape[0]} but there are {len(self.blocks)} "
                "agents; set partition.m to the number of partition parts"
            )
        dims = {b.shape[1] for b in self.blocks}
        if len(dims) != 1:
            raise DataError(f"agents' blocks have different column counts {sorted(dims)}; all need d columns")
        if any(b.shape[0] == 0 for b in self.blocks):
            raise ConfigError("partition: an agent holds no rows; use fewer agents (partition.m)")
        if int(self.c) != self.c or self.c < 0:
            raise ConfigError(f"network.c must be a non-negative integer, got {self.c!r}")
        checked = (str(self.W.dtype), self.W.shape, self.W.tobytes())
        if checked not in _CHECKED_NETWORKS:  # a calibration builds thousands of neighbours on one network
            validate_mixing_matrix(self.W, key="network")
            _CHECKED_NETWORKS.add(checked)

    @classmethod
    def from_partition(cls, X: np.ndarray, parts: list[np.ndarray], W: np.ndarray, c: int) -> DistributedProblem:
        """Build the problem from the global matrix and each agent's row indices."""
        blocks = tuple(np.ascontiguousarray(X[np.asarray(p)], dtype=float) for p in parts)
        return cls(blocks=blocks, W=np.asarray(W, dtype=float), c=c, row_ids=tuple(np.asarray(p) for p in parts))

    @property
    def m(self) -> int:
        return len(self.blocks)

    @property
    def d(self) -> int:
        return self.blocks[0].shape[1]

    @cached_property
    def sizes(self) -> np.ndarray:
        return np.array([b.shape[0] for b in self.blocks])

    @property
    def n(self) -> int:
        return int(self.sizes.sum())

    @cached_property
    def offsets(self) -> np.ndarray:
        """Start index of each agent's block in the stacked n-vector; ``offsets[m] = n``."""
        return np.concatenate([[0], np.cumsum(self.sizes)])

    def agent_slice(self, i: int) -> slice:
        return slice(int(self.offsets[i]), int(self.offsets[i + 1]))

    @cached_property
    def X(self) -> np.ndarray:
        """The stacked global matrix ``X`` (agent-major row order)."""
        return np.vstack(self.blocks)

    @cached_property
    def Wc(self) -> np.ndarray:
        """``W^c``: the effective one-iteration consensus matrix."""
        return np.linalg.matrix_power(self.W, self.c)

    @cached_property
    def Xi(self) -> np.ndarray:
        """``Ξ = D(X) (m (W^c ⊗ I_d)) Dᵀ(X)`` (eq. 13): block ``(i, j)`` is ``m (W^c)_ij X_i X_jᵀ``."""
        X = self.X
        agent_of_row = np.repeat(np.arange(self.m), self.sizes)
        weights = self.m * self.Wc[np.ix_(agent_of_row, agent_of_row)]
        return weights * (X @ X.T)

    @property
    def dense_xi(self) -> bool:
        """Whether Ξ is formed (n ≤ :data:`DENSE_XI_MAX_N`, milliseconds) or only applied (:meth:`xi_apply`)."""
        return self.n <= DENSE_XI_MAX_N

    def xi_apply(self, Q: np.ndarray) -> np.ndarray:
        """``Ξ Q`` without forming the n × n Ξ (eq. 13): ``(ΞQ)_i = m Σ_j (W^c)_ij X_i X_jᵀ Q_j``, O(n d) per
        column instead of O(n²)."""
        Y = np.stack([Xj.T @ Q[self.agent_slice(j)] for j, Xj in enumerate(self.blocks)])
        Z = self.m * np.einsum("ij,j...->i...", self.Wc, Y)
        return np.concatenate([Xi @ Z[i] for i, Xi in enumerate(self.blocks)])

    def xi_matmul(self, Q: np.ndarray, scale: float = 1.0) -> np.ndarray:
        """``(scale · Ξ) Q``, as ``scale · (Ξ Q)``: with the dense Ξ where it is small, else by :meth:`xi_apply`
        (equal to round-off). Scaling the n × R product rather than the n × n matrix saves a pass over Ξ and its copy
        at every step of every Monte-Carlo batch (the values move in their last bits only)."""
        return scale * (self.Xi @ Q if self.dense_xi else self.xi_apply(Q))

    @cached_property
    def xi_eigenvalues(self) -> np.ndarray:
        """Eigenvalues ``μ_1 ≥ μ_2 ≥ …`` of the symmetric matrix Ξ (all n of them).

        Dense where Ξ is small. Else through the md × md matrix ``G^{1/2} M G^{1/2}`` with ``Ξ = D M Dᵀ``,
        ``D = blockdiag(X_j)``, ``M = m (W^c ⊗ I_d)`` and ``G = DᵀD = blockdiag(X_jᵀX_j)``: the nonzero
        eigenvalues of ``D M Dᵀ`` are those of ``M DᵀD``, hence of ``G^{1/2} M G^{1/2}``; the other n − md are 0.
        """
        if self.dense_xi or self.n <= self.m * self.d:
            return np.linalg.eigvalsh(self.Xi)[::-1]
        from scipy.linalg import block_diag

        roots = []
        for Xj in self.blocks:
            _, s, vt = np.linalg.svd(Xj, full_matrices=False)
            roots.append(vt.T @ (s[:, None] * vt))  # (X_jᵀX_j)^{1/2} = V S Vᵀ
        G_half = block_diag(*roots)
        S = G_half @ (self.m * np.kron(self.Wc, np.eye(self.d))) @ G_half
        reduced = np.linalg.eigvalsh((S + S.T) / 2)
        return np.sort(np.concatenate([reduced, np.zeros(self.n - reduced.size)]))[::-1]

    @property
    def mu1(self) -> float:
        return float(self.xi_eigenvalues[0])

    @property
    def mu2(self) -> float:
        return float(self.xi_eigenvalues[1])

    @cached_property
    def top_eigenvector(self) -> np.ndarray:
        """``v``: the principal eigenvector of ``X Xᵀ`` (left singular vector of X), unit norm."""
        u, _, _ = np.linalg.svd(self.X, full_matrices=False)
        return u[:, 0]

    @cached_property
    def top_right_singular_vector(self) -> np.ndarray:
        """The top right singular vector of X (a direction in feature space, length d)."""
        return np.linalg.svd(self.X, full_matrices=False)[2][0]

    @cached_property
    def singular_values(self) -> np.ndarray:
        return np.linalg.svd(self.X, compute_uv=False)

    def with_blocks(self, blocks: tuple[np.ndarray, ...]) -> DistributedProblem:
        """A copy with other data blocks (same sizes, network and c): adjacent data sets."""
        return DistributedProblem(blocks=blocks, W=self.W, c=self.c, row_ids=self.row_ids)

    def with_c(self, c: int) -> DistributedProblem:
        return DistributedProblem(blocks=self.blocks, W=self.W, c=c, row_ids=self.row_ids)
