"""The audit of methods as implemented (ddppm.audit.run): the views are what the estimate draws, certified methods
come out consistent, and every mutant is caught at its stated operating point."""

from __future__ import annotations

import numpy as np
import pytest

from ddppm.audit.mutants import MUTANTS, OPERATING_POINTS, mutant
from ddppm.audit.run import audit_method, witness_tasks
from ddppm.common_task.base import top_k
from ddppm.core.seeds import run_generators
from ddppm.methods import get_method

OPTIONS = {"adjacency": "replace_one"}
TASKS = witness_tasks(60, 4, 3, seed=0)


def test_the_witness_pair_attains_the_second_moment_sensitivity() -> None:
    first, second = TASKS
    assert np.linalg.norm(first.gram - second.gram) == pytest.approx(np.sqrt(2))
    assert np.linalg.norm(first.X, axis=1).max() <= 1 + 1e-12 and (first.X != second.X).sum() == 2


@pytest.mark.parametrize("name", ["analyze_gauss", "conventional", "cape"])
def test_the_view_is_what_the_estimate_draws(name: str) -> None:
    """Simulation identity: the estimate's top direction is the top direction of the matrix the view publishes."""
    method, task = get_method(name), TASKS[0]
    calibrated = method.common_calibrate(task, 5.0, 1e-5, OPTIONS)
    views = method.common_view(task, calibrated, run_generators(1, ("v",), range(5)))
    estimates = method.common_estimate(task, calibrated, run_generators(1, ("v",), range(5)), OPTIONS)
    size, d = views.shape[1], task.d
    blocks = size // (d * (d + 1) // 2)
    rebuilt = []
    for view in views:
        total = np.zeros((d, d))
        for part in np.split(view, blocks):
            upper = np.zeros((d, d))
            upper[np.triu_indices(d)] = part
            total += upper + np.triu(upper, 1).T
        rebuilt.append(total)
    from_views = top_k(np.stack(rebuilt), 1)
    np.testing.assert_allclose(np.abs(from_views[:, :, 0]), np.abs(estimates[:, :, 0]), atol=1e-8)


@pytest.mark.parametrize("name", ["analyze_gauss", "conventional", "cape"])
def test_certified_methods_are_consistent(name: str) -> None:
    row = audit_method(name, get_method(name), 2.0, 1e-5, 4000, 0, TASKS, OPTIONS)
    assert row.verdict == "consistent" and 0 < row.eps_lower <= 2.0


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_every_mutant_is_caught_at_its_operating_point(name: str) -> None:
    """Each mutant of AnalyzeGauss at its stated (ε, δ, draws) (ddppm.audit.mutants.OPERATING_POINTS)."""
    eps, delta, draws = OPERATING_POINTS[name]
    row = audit_method(f"analyze_gauss/{name}", mutant(get_method("analyze_gauss"), name), eps, delta, draws, 0, TASKS,
                       OPTIONS)  # fmt: skip
    assert row.verdict == "violated" and row.eps_lower > eps


def test_cape_accounted_for_one_release_is_beyond_an_affordable_audit() -> None:
    """The limit stated for the one-release mutant of CAPE (m = 4): its true δ at the claimed ε = 5 is 73 times the
    limit (7.3e-4 against 1e-5), a gap no black-box test with 5·10⁴ draws per side resolves, and its true ε at
    δ = 1e-5 (6.6) is beyond what the bound reaches at that N (about 60 % of the true ε): the audit says consistent."""
    from ddppm.audit.bounds import resolvable_delta_gap
    from ddppm.audit.gaussian import gaussian_delta, gaussian_epsilon
    from ddppm.common_task.certified import noise_multiplier
    from ddppm.methods.cape import view_leakage

    mu = view_leakage(4) / noise_multiplier(5.0, 1e-5)
    assert gaussian_delta(5.0, mu) == pytest.approx(7.3e-4, rel=0.01)
    assert resolvable_delta_gap(5.0, 50_000) > 100 * gaussian_delta(5.0, mu)
    assert gaussian_epsilon(1e-5, mu) == pytest.approx(6.6, abs=0.05)
    row = audit_method("cape/one_release", mutant(get_method("cape"), "one_release"), 5.0, 1e-5, 2000, 0,
                       witness_tasks(60, 4, 4, seed=0), OPTIONS)  # fmt: skip
    assert row.verdict == "consistent"
