"""The public stand-in on which ``ddppm_certified`` chooses its number of iterations T (docs/certified.md, section 4).

Choosing T by the error of pilot runs on the private rows makes T a function of those rows, and no δ covers that
choice. Here the pilot runs see only a **stand-in**: synthetic rows of the data set's public shape
(:class:`PublicShape`: the agents' row counts ``n_j``, the dimension d, the mixing matrix W and the consensus depth
c, all public in this project's threat model, docs/privacy.md, "Where each parameter comes from") and an assumed
spectral gap, a public assumption like the advisor's (:data:`ddppm.studies.advisor.DEFAULTS`). Its rows are

    x_r = Q diag(√gap, 1, …, 1) g_r / max_s ‖Q diag(√gap, 1, …, 1) g_s‖,    g_r ~ N(0, I_d),

with Q a seeded Haar rotation (:func:`ddppm.data.synthetic.spiked_synthetic`), divided by their own largest row
norm as the prepared rows are (every row in the unit ball, the largest on its sphere), and given to the agents in
order, ``n_j`` rows each. Nothing computed from the private rows enters: not their eigenvalues, not their norms
(the unit ball is the declared bound of the rows the journal figures' δ covers).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ddppm.core.problem import DistributedProblem
from ddppm.data.synthetic import spiked_synthetic


@dataclass(frozen=True)
class PublicShape:
    """What may shape a choice made before any release: the agents' row counts, d, W and c."""

    sizes: tuple[int, ...]
    d: int
    W: np.ndarray
    c: int

    @classmethod
    def of(cls, problem: DistributedProblem) -> PublicShape:
        """The public shape of ``problem``: its blocks' sizes and width, its network; never its rows."""
        return cls(tuple(int(s) for s in problem.sizes), int(problem.d), np.array(problem.W, dtype=float),
                   int(problem.c))  # fmt: skip

    @property
    def n(self) -> int:
        return int(sum(self.sizes))


def public_stand_in(shape: PublicShape, gap: float, seed: int) -> DistributedProblem:
    """The stand-in problem of ``shape`` (module docstring): spiked rows with population spectrum ``(gap, 1, …, 1)``,
    scaled so that the largest has norm 1, split over the agents in order by the public sizes."""
    X = spiked_synthetic(n=shape.n, d=shape.d, spikes=(float(gap),), seed=int(seed))
    X /= np.linalg.norm(X, axis=1).max()
    bounds = np.cumsum((0, *shape.sizes))
    parts = [np.arange(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
    return DistributedProblem.from_partition(X, parts, shape.W, shape.c)
