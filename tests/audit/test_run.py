"""The audit of methods as implemented (ddppm.audit.run): the views are what the estimate draws, the exact likelihood
ratios are likelihood ratios, certified methods come out consistent, and every mutant is caught at its stated
operating point."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from ddppm.audit.mutants import OPERATING_POINTS, has_exact_scores, mutant
from ddppm.audit.run import audit_method, witness_tasks
from ddppm.common_task.base import top_k
from ddppm.core.seeds import run_generators
from ddppm.experiments.audit import auditable_methods
from ddppm.methods import common_task_methods, get_method
from ddppm.methods.ppm.algorithms import DenseOperator, initial_blocks, private_power_method
from ddppm.methods.ppm.linalg import orthonormalize

OPTIONS = {"adjacency": "replace_one", "iterations": 4}
TASKS = witness_tasks(60, 4, 3, seed=0)
POWER = ["ppm_theirs_sqrt2", "ppm_decentralised", "balcan_decentralised"]
EXACT = [*POWER, "ddppm_certified", "amin", "cai_xia_zha", "dp_pca"]


def _rngs(count: int = 5) -> list[np.random.Generator]:
    return run_generators(1, ("v",), range(count))


def test_the_witness_pairs_attain_their_sensitivities() -> None:
    first, second = TASKS
    assert np.linalg.norm(first.gram - second.gram) == pytest.approx(np.sqrt(2))
    assert np.linalg.norm(first.X, axis=1).max() <= 1 + 1e-12 and (first.X != second.X).sum() == 2
    first, second = witness_tasks(60, 4, 3, seed=0, witness="rows")
    assert np.linalg.norm(first.X - second.X) == pytest.approx(2.0)


def test_every_certified_method_is_audited() -> None:
    assert set(auditable_methods()) == set(common_task_methods())


def test_amins_view_is_its_estimate() -> None:
    method, task = get_method("amin"), TASKS[0]
    calibrated = method.common_calibrate(task, 5.0, 1e-5, OPTIONS)
    views = method.common_view(task, calibrated, _rngs())
    np.testing.assert_array_equal(views[:, :, None], method.common_estimate(task, calibrated, _rngs(), OPTIONS))


@pytest.mark.parametrize("name", ["analyze_gauss", "conventional", "cape"])
def test_the_view_is_what_the_estimate_draws(name: str) -> None:
    """Simulation identity: the estimate's top direction is the top direction of the matrix the view publishes."""
    method, task = get_method(name), TASKS[0]
    calibrated = method.common_calibrate(task, 5.0, 1e-5, OPTIONS)
    views = method.common_view(task, calibrated, _rngs())
    estimates = method.common_estimate(task, calibrated, _rngs(), OPTIONS)
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


@pytest.mark.parametrize("name", POWER)
def test_a_power_methods_view_ends_in_its_estimate(name: str) -> None:
    """The block of the view's last aggregate is the estimate (the literal-clients run for ``local``, whose every
    client draws its own noise, as the view does)."""
    method, task = get_method(name), TASKS[0]
    calibrated = method.common_calibrate(task, 5.0, 1e-5, OPTIONS)
    views = method.common_view(task, calibrated, _rngs())
    last = orthonormalize(views[:, -task.d * task.k :].reshape(-1, task.d, task.k))
    if method.noise_model == "local":
        children = [rng.spawn(2) for rng in _rngs()]
        operator = DenseOperator(task.gram, [task.local_gram(j) for j in range(task.m)])
        p = calibrated.params
        start = initial_blocks([c[0] for c in children], task.d, task.k)
        sensitivity = lambda X: np.full(X.shape[0], p["sensitivity"])  # noqa: E731
        noise = [c[1] for c in children]
        trace = private_power_method(operator, start, p["iterations"], p["sigma"], sensitivity, noise,
                                     noise_model="local", literal_clients=True)  # fmt: skip
        estimate = trace.basis
    else:
        estimate = method.common_estimate(task, calibrated, _rngs(), OPTIONS)
    np.testing.assert_allclose(last, estimate, atol=1e-10)


def test_the_certified_views_releases_give_its_estimate() -> None:
    """Agent 0's basis from the view's last round of releases (``orth(m Σ_i (W^c)_0i z_i)``) is the estimate."""
    method, task = get_method("ddppm_certified"), TASKS[0]
    calibrated = method.common_calibrate(task, 5.0, 1e-5, OPTIONS)
    views = method.common_view(task, calibrated, _rngs())
    T, m, d = int(calibrated.params["T"]), task.m, task.d
    last = views[:, d:].reshape(-1, T, m, d, 1)[:, -1]
    mixed = m * np.einsum("j,rjdk->rdk", task.Wc[0], last)
    np.testing.assert_allclose(orthonormalize(mixed), method.common_estimate(task, calibrated, _rngs(), OPTIONS),
                               atol=1e-10)  # fmt: skip


@pytest.mark.parametrize("name", ["ldp", "ldp_analytic", "ldppca_gaussian"])
def test_a_per_record_view_is_record_zeros_release(name: str) -> None:
    """Record 0's release is the first of the per-record releases drawn from the same generator."""
    from ddppm.methods.ldppca.mechanism import symmetric_noise, upper_triangle

    method, task = get_method(name), TASKS[0]
    calibrated = method.common_calibrate(task, 5.0, 1e-5, OPTIONS)
    sigma = float(calibrated.params["sigma"])
    views = method.common_view(task, calibrated, _rngs())
    if name == "ldppca_gaussian":
        every = [np.outer(task.X[0], task.X[0]) + sigma * symmetric_noise(rng, task.d, (task.n,))[0] for rng in _rngs()]
        expected = np.stack([upper_triangle(release) for release in every])
    else:
        expected = np.stack([(task.X + sigma * rng.standard_normal(task.X.shape))[0] for rng in _rngs()])
    np.testing.assert_allclose(views, expected, atol=1e-12)


@pytest.mark.parametrize("name", EXACT)
def test_the_exact_statistic_is_a_likelihood_ratio(name: str) -> None:
    """Monte Carlo identity of a likelihood ratio L = log p′/p: ``E_p[e^L] = 1`` and ``E_p′[e^{−L}] = 1``; its parts
    sum to it. (Amin's statistic omits the ratio of the Bingham normalisers, equal on its witness pair by symmetry.)"""
    method = get_method(name)
    first, second = witness_tasks(60, 4, 3, seed=0, witness=method.audit_witness)
    calibrated = method.common_calibrate(first, 1.0, 1e-5, OPTIONS)
    rngs = run_generators(3, ("lr",), range(20_000))
    for task, sign in ((first, 1.0), (second, -1.0)):
        scores = method.common_view_scores(first, second, calibrated, method.common_view(task, calibrated, rngs))
        if scores.shape[1] > 1:
            np.testing.assert_allclose(scores[:, 0], scores[:, 1:].sum(axis=1), atol=1e-9)
        assert np.mean(np.exp(sign * scores[:, 0])) == pytest.approx(1.0, abs=0.03)


def test_one_power_release_against_the_gaussian_density() -> None:
    """L = 1, central: given the public start, the release is N(A X⁰, s² I); the ratio equals scipy's densities'."""
    method, (first, second) = get_method("ppm_theirs_sqrt2"), TASKS
    options = {**OPTIONS, "iterations": 1}
    calibrated = method.common_calibrate(first, 1.0, 1e-5, options)
    views = method.common_view(first, calibrated, _rngs(3))
    s = calibrated.params["sigma"] * calibrated.params["sensitivity"]
    d = first.d
    for view, score in zip(views, method.common_view_scores(first, second, calibrated, views)[:, 0], strict=True):
        start, release = view[:d], view[d:]
        direct = [multivariate_normal(task.gram @ start, s**2 * np.eye(d)).logpdf(release) for task in TASKS]
        assert score == pytest.approx(direct[1] - direct[0], rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("name", sorted(auditable_methods()))
def test_certified_methods_are_consistent(name: str) -> None:
    """At 4,000 draws the bound of a claim that holds stays below it (its value varies with the seed: the test and
    its threshold are chosen in the tails, on half the draws)."""
    method = get_method(name)
    tasks = witness_tasks(4000, 4, 3, seed=0, witness=method.audit_witness)
    row = audit_method(name, method, 2.0, 1e-5, 4000, 0, tasks, OPTIONS)
    assert row.verdict == "consistent" and 0 <= row.eps_lower <= 2.0
    assert ("likelihood ratio of the mechanism as specified" in row.test) == has_exact_scores(method)


@pytest.mark.parametrize("entry", sorted(OPERATING_POINTS))
def test_every_mutant_is_caught_at_its_operating_point(entry: str) -> None:
    """Each mutant at its stated (ε, δ, draws) (ddppm.audit.mutants.OPERATING_POINTS)."""
    eps, delta, draws = OPERATING_POINTS[entry]
    of, name = entry.split("/")
    broken = mutant(get_method(of), name)
    row = audit_method(entry, broken, eps, delta, draws, 0, witness_tasks(4000, 4, 3, 0, broken.audit_witness),
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
