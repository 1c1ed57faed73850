"""Shared set-up of the workshop D-DP-PM's tests: a small ring problem with seeded iteration draws."""

import numpy as np

from tests.accounting.test_release import make_problem


def workshop_setup(T=3, R=4, seed=1):
    """A 24-row, 4-agent ring problem and R runs of seeded draws: (problem, α, σ_q, σ_p(1..T), q0, P, u)."""
    problem = make_problem(24, 3, 4, 2, topology="ring", seed=seed)
    rng = np.random.default_rng(seed)
    alpha, sq = 1 / np.sqrt(problem.mu1 * problem.mu2), 1 / np.sqrt(problem.n)
    sigmas = 0.3 * sq * 0.8 ** np.arange(T)
    q0 = sq * rng.standard_normal((problem.n, R))
    P = sigmas[:, None, None] * rng.standard_normal((T, problem.m * problem.d, R))
    u = rng.standard_normal((problem.n, R))
    return problem, alpha, sq, sigmas, q0, P, u


class IterationParams:
    """The two parameters the workshop iteration reads: α and T."""

    def __init__(self, alpha, T):
        self.alpha, self.T = alpha, T
