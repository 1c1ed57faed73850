"""The common task's metrics, adjacency sensitivities and certified accountant, each against an independent route:
Monte Carlo (chance level), the journal's own metric (k = 1), brute-force search (sensitivities) and Google's
``dp-accounting`` (composition of Gaussian mechanisms)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from ddppm.common_task.adjacency import ADJACENCIES, release_sensitivity
from ddppm.common_task.base import estimates_rank, top_k
from ddppm.common_task.certified import certified_delta, composed_mu, noise_multiplier
from ddppm.common_task.task import CommonTask, captured_variance, chance_error, subspace_error
from ddppm.core.errors import DataError
from ddppm.core.metrics import sin_error
from ddppm.core.network import mixing_matrix


def _orthonormal(rng: np.random.Generator, d: int, k: int, runs: int | None = None) -> np.ndarray:
    shape = (d, k) if runs is None else (runs, d, k)
    return np.linalg.qr(rng.standard_normal(shape))[0]


def _task(rng: np.random.Generator, n: int = 60, d: int = 6, k: int = 2, m: int = 3) -> CommonTask:
    X = rng.standard_normal((n, d)) * np.linspace(2, 0.5, d)
    X /= np.linalg.norm(X, axis=1).max()
    W = mixing_matrix("ring", m) if m > 1 else np.ones((1, 1))
    return CommonTask(X, tuple(np.array_split(np.arange(n), m)), k, W, consensus=5)


def test_subspace_error_is_the_journal_sine_for_one_direction() -> None:
    rng = np.random.default_rng(0)
    v, q = _orthonormal(rng, 7, 1), _orthonormal(rng, 7, 1, runs=5)
    np.testing.assert_allclose(subspace_error(q, v), sin_error(v[:, 0], q[:, :, 0].T), rtol=1e-12)
    rotation = _orthonormal(rng, 3, 3)
    V, W = _orthonormal(rng, 7, 3), _orthonormal(rng, 7, 3)
    assert subspace_error(W @ rotation, V) == pytest.approx(subspace_error(W, V), rel=1e-12)  # a subspace, not a basis
    assert subspace_error(V, V) == pytest.approx(0.0, abs=1e-7)
    direct = np.linalg.norm(W @ W.T - V @ V.T) / np.sqrt(6)
    assert subspace_error(W, V) == pytest.approx(direct, rel=1e-12)


@pytest.mark.parametrize(("d", "k"), [(5, 1), (13, 3), (64, 3)])
def test_chance_level_by_monte_carlo(d: int, k: int) -> None:
    rng = np.random.default_rng(d)
    V = _orthonormal(rng, d, k)
    errors = subspace_error(_orthonormal(rng, d, k, runs=20000), V)
    assert np.sqrt(np.mean(errors**2)) == pytest.approx(chance_error(d, k), rel=0.01)


def test_captured_variance() -> None:
    rng = np.random.default_rng(1)
    task = _task(rng)
    assert captured_variance(task.V, task) == pytest.approx(1.0, rel=1e-12)
    values, vectors = np.linalg.eigh(task.gram)  # the bottom-k directions capture the bottom eigenvalues
    bottom = vectors[:, : task.k]
    assert captured_variance(bottom, task) == pytest.approx(values[: task.k].sum() / values[-task.k :].sum())
    assert np.all(captured_variance(_orthonormal(rng, task.d, task.k, runs=50), task) < 1)


def test_task_rejects_bad_data() -> None:
    X = np.ones((4, 3))
    with pytest.raises(DataError, match="unit ball"):
        CommonTask(X, (np.arange(4),), 1)
    with pytest.raises(DataError, match="partition"):
        CommonTask(X / 2, (np.arange(3),), 1)
    with pytest.raises(DataError, match="rank k"):
        CommonTask(X / 2, (np.arange(4),), 3)


# ------------------------------------------------------------------------------------------- sensitivities


def _pairs(rng: np.random.Generator, adjacency: str, d: int, count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Random adjacent rows: uniform in the unit ball, unit vectors, and zero rows, under ``adjacency``."""
    out = []
    while len(out) < count:
        x, y = (rng.standard_normal(d) for _ in range(2))
        kind = rng.integers(3)
        x, y = (v / np.linalg.norm(v) * (rng.uniform() ** (1 / d) if kind == 0 else 1.0) for v in (x, y))
        if kind == 2:
            y = np.zeros(d)
        if adjacency == "distance_one" and np.linalg.norm(x - y) > 1:
            y = x + (y - x) / np.linalg.norm(y - x) * rng.uniform()
            if np.linalg.norm(y) > 1:
                continue
        out.append((x, y))
    return out


def _release(release: str, x: np.ndarray, y: np.ndarray, Q: np.ndarray) -> float:
    C = np.outer(x, x) - np.outer(y, y)
    if release == "rows":
        return float(np.linalg.norm(x - y))
    if release == "second_moment":
        return float(np.linalg.norm(C))
    if release == "upper_triangle":
        return float(np.linalg.norm(C[np.triu_indices(len(x))]))
    return float(np.linalg.norm(C @ Q))


def _local_max(release: str, adjacency: str, d: int, p: int, rng: np.random.Generator) -> float:
    """A penalised Nelder-Mead climb from a random start (rows and, for a power step, the block's angle)."""
    Q0 = _orthonormal(rng, d, p)

    def loss(z: np.ndarray) -> float:
        x, y = z[:d], z[d : 2 * d]
        over = max(0, x @ x - 1) + max(0, y @ y - 1)
        if adjacency == "distance_one":
            over += max(0, (x - y) @ (x - y) - 1)
        return -_release(release, x, y, Q0) + 1e3 * over

    start = rng.uniform(-0.6, 0.6, 2 * d)
    res = minimize(loss, start, method="Nelder-Mead", options={"xatol": 1e-9, "fatol": 1e-12, "maxiter": 4000})
    x, y = res.x[:d], res.x[d:]
    scale = max(1.0, np.linalg.norm(x), np.linalg.norm(y))  # project back into the ball: a valid pair
    if adjacency == "distance_one":
        scale = max(scale, np.linalg.norm(x - y))
    return _release(release, x / scale, y / scale, Q0)


def _witness(release: str, adjacency: str, p: int) -> float:
    """The pair (and block) the derivation says attains the sup: orthogonal or opposite unit rows
    (``replace_one``), unit rows 60° apart or a unit row and zero (``distance_one``), in C's eigenbasis."""
    d = 3
    if release == "rows":
        x, y = np.eye(d)[0], (-np.eye(d)[0] if adjacency == "replace_one" else np.zeros(d))
    elif release == "power_step" and p == 1:
        x, y = np.eye(d)[0], (np.eye(d)[1] if adjacency == "replace_one" else np.zeros(d))
    else:
        angle = np.pi / 2 if adjacency == "replace_one" else np.pi / 3
        x, y = np.eye(d)[0], np.cos(angle) * np.eye(d)[0] + np.sin(angle) * np.eye(d)[1]
        _, basis = np.linalg.eigh(np.outer(x, x) - np.outer(y, y))
        x, y = basis.T @ x, basis.T @ y  # the same pair in C's eigenbasis: C diagonal
    return _release(release, x, y, np.eye(d)[:, :p])


@pytest.mark.parametrize("adjacency", ADJACENCIES)
@pytest.mark.parametrize(("release", "p"), [("rows", 1), ("second_moment", 1), ("upper_triangle", 1),
                                            ("power_step", 1), ("power_step", 3)])  # fmt: skip
def test_sensitivity_by_brute_force(adjacency: str, release: str, p: int) -> None:
    """No random or locally optimised adjacent pair exceeds the derived sensitivity, and the derivation's
    witness attains it (so it is the sup, not only a bound)."""
    rng = np.random.default_rng(abs(hash((adjacency, release, p))) % 2**32)
    d = 3
    bound = release_sensitivity(release, adjacency, block=p)
    Q = _orthonormal(rng, d, p)
    sampled = max(_release(release, x, y, Q) for x, y in _pairs(rng, adjacency, d, 3000))
    climbed = max(_local_max(release, adjacency, d, p, rng) for _ in range(8))
    assert max(sampled, climbed) <= bound * (1 + 1e-9)
    assert max(sampled, climbed) >= 0.8 * bound  # the search does explore near the sup
    assert _witness(release, adjacency, p) == pytest.approx(bound, rel=1e-12)


# ---------------------------------------------------------------------------------------------- certified δ


@pytest.mark.parametrize(("sigma", "releases", "eps"), [(1.0, 1, 1.0), (2.0, 5, 1.0), (0.5, 3, 4.0), (5.0, 10, 0.5)])
def test_certified_delta_against_dp_accounting(sigma: float, releases: int, eps: float) -> None:
    dp_accounting = pytest.importorskip("dp_accounting", reason="the test extra installs dp-accounting")
    from dp_accounting import pld

    accountant = pld.PLDAccountant()
    accountant.compose(dp_accounting.GaussianDpEvent(sigma), count=releases)
    ours = certified_delta(composed_mu([1.0] * releases, [sigma] * releases), eps)
    assert ours == pytest.approx(accountant.get_delta(eps), rel=1e-9)


def test_noise_multiplier_meets_its_target() -> None:
    for eps, delta, releases in ((1.0, 1e-5, 1), (0.5, 1e-5, 4), (10.0, 1e-5, 20), (50.0, 1e-8, 3)):
        s = noise_multiplier(eps, delta, releases)
        assert certified_delta(composed_mu([2.0] * releases, [2 * s] * releases), eps) == pytest.approx(delta, rel=1e-6)
        assert certified_delta(composed_mu([1.0] * releases, [0.99 * s] * releases), eps) > delta


# ------------------------------------------------------------------------------------ methods and the runner


def _methods():
    from ddppm.methods import common_task_methods

    return common_task_methods()


OPTIONS = {"adjacency": "replace_one", "iterations": 6}


def test_every_method_meets_its_target_delta_and_returns_orthonormal_bases() -> None:
    rng = np.random.default_rng(3)
    task = _task(rng, k=2)
    methods = _methods()
    assert {m.trust_model for m in methods.values()} >= {"central", "secure_aggregation", "local"}
    for name, method in methods.items():
        cal = method.common_calibrate(task, 2.0, 1e-5, OPTIONS)
        if not estimates_rank(method, task.k):  # DP-PCA: the top eigenvector only (its own tests run it)
            assert method.max_rank < task.k, name
            continue
        if name == "amin":  # pure ε-DP: δ = 0 for every neighbour
            assert cal.delta == 0.0 and cal.feasible
        elif name in ("ldp", "fpca"):  # their papers' σ formulas (classic, MOD-SuLQ) are not calibrations
            assert cal.delta <= 1e-5 and cal.feasible, name
        else:
            assert cal.delta == pytest.approx(1e-5, rel=1e-6) and cal.feasible, name
        V = method.common_estimate(task, cal, [np.random.default_rng(i) for i in range(3)], OPTIONS)
        assert V.shape == (3, task.d, task.k)
        np.testing.assert_allclose(np.einsum("rdk,rdl->rkl", V, V), np.broadcast_to(np.eye(2), (3, 2, 2)), atol=1e-9)
        costs = method.common_costs(task, cal)
        assert costs["floats_per_agent"] > 0 and costs["rounds"] >= 1


def test_power_methods_differ_only_by_their_aggregate_noise() -> None:
    """Central and secure aggregation add the same aggregate noise: equal estimates from equal generators; with
    one agent the local method adds it too (the client versions are equal in law to one aggregate draw)."""
    rng = np.random.default_rng(4)
    task = _task(rng, k=2, m=3)
    by_trust = {m.trust_model: m for m in _methods().values() if hasattr(m, "noise_model")}
    cal = by_trust["central"].common_calibrate(task, 5.0, 1e-5, OPTIONS)
    runs = [np.random.default_rng(i) for i in range(4)]
    central = by_trust["central"].common_estimate(task, cal, runs, OPTIONS)
    secure = by_trust["secure_aggregation"].common_estimate(
        task, cal, [np.random.default_rng(i) for i in range(4)], OPTIONS
    )
    np.testing.assert_allclose(secure, central, atol=1e-12)
    single = CommonTask(task.X, (np.arange(task.n),), task.k)
    one = [by_trust[t].common_estimate(single, cal, [np.random.default_rng(9)], OPTIONS) for t in ("central", "local")]
    np.testing.assert_allclose(one[0], one[1], atol=1e-12)


@pytest.mark.parametrize("release", ["rows", "upper_triangle"])
def test_searched_delta_of_one_release_never_exceeds_the_certified(release: str) -> None:
    """The generic accountant (exact hockey stick of two Gaussians) at random neighbours and at the witness is at
    most the certified δ, and equal at the witness: the certified δ is the sup over neighbours."""
    from ddppm.common_task.certified import certified_delta
    from ddppm.privacy.tails import gaussian_tail_delta

    rng = np.random.default_rng(5)
    d, eps, sigma = 3, 1.0, 1.7
    bound = release_sensitivity(release, "replace_one")
    cert = certified_delta(bound / sigma, eps)

    def released(x: np.ndarray) -> np.ndarray:
        return x if release == "rows" else np.outer(x, x)[np.triu_indices(d)]

    pairs = _pairs(rng, "replace_one", d, 40)
    witness = (np.eye(d)[0], -np.eye(d)[0]) if release == "rows" else (np.eye(d)[0], np.eye(d)[1])
    for x, y in [*pairs, witness]:
        a, b = released(x), released(y)
        cov = sigma**2 * np.eye(a.size)
        searched = gaussian_tail_delta(a, cov, b, cov, [eps], kind="hockey_stick")[0]
        assert searched <= cert * (1 + 1e-6)
    assert searched == pytest.approx(cert, rel=1e-6)


def test_which_method_respects_trust_and_certification() -> None:
    import pandas as pd

    from ddppm.common_task.run import which_method

    rows = [  # (method, trust, column, feasible, error)
        ("a", "central", "certified", True, 0.1),
        ("b", "local", "certified", True, 0.3),
        ("c", "secure_aggregation", "certified", True, 0.2),
        ("d", "local", "certified", False, 0.05),  # over its δ limit
        ("e", "gossip", "searched", True, 0.01),  # only a lower bound on δ
    ]
    summary = pd.DataFrame(
        [
            {"dataset": "s", "k": 1, "eps": 1.0, "method": m, "trust_model": t, "privacy_column": c, "feasible": f,
             "error_mean": e, "error_ci_lo": e - 0.01, "error_ci_hi": e + 0.01, "captured_variance_mean": 1 - e}
            for m, t, c, f, e in rows
        ]
    )  # fmt: skip
    table = which_method(summary).set_index("trust_model")
    assert table.loc["central", "best"] == "a" and table.loc["central", "runner_up"] == "c"
    assert table.loc["secure_aggregation", "best"] == "c" and table.loc["secure_aggregation", "runner_up"] == "b"
    assert table.loc["local", "best"] == "b" and table.loc["local", "runner_up"] == ""
    assert bool(table.loc["central", "clear_winner"])


def test_which_method_lists_the_standard_setting_first() -> None:
    """The README's answer is the standard setting: it comes first, whatever the names of the others."""
    import pandas as pd

    from ddppm.common_task.run import which_method

    summary = pd.DataFrame(
        [
            {"setting": setting, "dataset": ds, "k": 1, "eps": 1.0, "method": "a", "trust_model": "central",
             "privacy_column": "certified", "feasible": True, "error_mean": 0.1, "error_ci_lo": 0.09,
             "error_ci_hi": 0.11, "captured_variance_mean": 0.9}
            for setting in ("distance_one", "standard", "journal_delta_limits") for ds in ("wine", "digits")
        ]
    )  # fmt: skip
    table = which_method(summary)
    assert list(dict.fromkeys(table["setting"])) == ["standard", "distance_one", "journal_delta_limits"]
    assert list(table[table["setting"] == "standard"]["dataset"]) == ["digits", "wine"]  # sorted within a setting


def test_runner_on_a_small_task() -> None:
    from ddppm.common_task.run import run_methods, summarise, which_method

    task = _task(np.random.default_rng(6), n=200, d=5, k=1, m=4)
    runs = run_methods(task, [1.0, 50.0], 1e-5, 8, 0, OPTIONS, dataset="toy")
    summary = summarise(runs)
    assert len(runs) == 8 * 2 * len(_methods()) and set(summary["n_runs"]) == {8}
    assert (summary["error_ci_lo"] <= summary["error_mean"]).all()
    at = summary.set_index(["method", "eps"])["error_mean"]
    for name in _methods():
        assert at[(name, 50.0)] < at[(name, 1.0)]  # more privacy budget, less error
    again = summarise(run_methods(task, [1.0, 50.0], 1e-5, 8, 0, OPTIONS, dataset="toy"))
    np.testing.assert_array_equal(again["error_mean"], summary["error_mean"])  # seeded
    assert set(which_method(summary)["trust_model"]) == {"central", "secure_aggregation", "local"}


def test_noisy_gram_has_the_law_of_the_gram_of_noisy_rows() -> None:
    """The O(d³) draw against the direct route (noisy rows, then their Gram), by Monte Carlo: the exact mean
    XᵀX + nσ²I, the covariance of the entries, and the top eigenvalue's distribution (two-sample KS)."""
    from scipy.stats import ks_2samp

    from ddppm.common_task.sampling import noisy_gram

    rng = np.random.default_rng(11)
    n, d, sigma, draws = 9, 3, 0.7, 20000
    X = rng.standard_normal((n, d)) * np.array([1.0, 0.6, 0.3])
    R = np.linalg.qr(X, mode="r")
    fast = np.stack([noisy_gram(R, n, sigma, rng) for _ in range(draws)])
    noisy = X + sigma * rng.standard_normal((draws, n, d))
    direct = np.einsum("rnd,rne->rde", noisy, noisy)
    iu = np.triu_indices(d)
    mean = X.T @ X + n * sigma**2 * np.eye(d)
    np.testing.assert_allclose(fast.mean(axis=0), mean, atol=0.05)
    np.testing.assert_allclose(direct.mean(axis=0), mean, atol=0.05)
    cov_fast, cov_direct = (np.cov(g[:, iu[0], iu[1]], rowvar=False) for g in (fast, direct))
    np.testing.assert_allclose(cov_fast, cov_direct, atol=0.06 * np.abs(cov_direct).max())
    top = [np.linalg.eigvalsh(g)[:, -1] for g in (fast, direct)]
    assert ks_2samp(*top).pvalue > 1e-3
    with pytest.raises(ValueError, match="n >= 2d"):
        noisy_gram(R, 5, sigma, rng)


def test_wang_xu_on_the_common_task_has_the_law_of_every_row_releasing() -> None:
    """Algorithm 1 as written (every row releases ``ut(x xᵀ) + Z``; the server averages) against the adapter's
    one draw of the average: the subspace errors of the two routes have one law (two-sample KS), and σ is the
    calibration of one ``upper_triangle`` release (δ at the limit for every neighbour)."""
    from scipy.stats import ks_2samp

    from ddppm.methods import get_method
    from ddppm.methods.ldppca.mechanism import per_user_release

    task = _task(np.random.default_rng(11), n=30, d=3, k=1, m=3)
    method = get_method("ldppca_gaussian")
    cal = method.common_calibrate(task, 20.0, 1e-5, OPTIONS)
    assert cal.delta == pytest.approx(1e-5, rel=1e-6)
    assert cal.params["sensitivity"] == pytest.approx(np.sqrt(2))
    adapter = method.common_estimate(task, cal, [np.random.default_rng(i) for i in range(3000)], OPTIONS)
    direct = np.stack(
        [top_k(per_user_release(task.X, cal.params["sigma"], np.random.default_rng(10_000 + i))[None], 1)[0]
         for i in range(3000)]
    )  # fmt: skip
    a, b = subspace_error(adapter, task.V), subspace_error(direct, task.V)
    assert 0.05 < np.median(a) < 0.95  # neither noise-free nor chance: the test can tell the routes apart
    assert ks_2samp(a, b).pvalue > 1e-3  # (σ 20 % off gives p ≈ 1e-7 at this size)


def test_which_method_markdown_names_the_best_per_trust_level() -> None:
    """Each cell: the best with its interval, a tie with its members, or "no method beats chance"; a line says how
    many draws the answer rests on and where draws were added."""
    import pandas as pd

    from ddppm.experiments.common_findings import which_method_markdown

    def row(eps, trust, best, error, k=1, **extra):
        return {"dataset": "s", "k": k, "eps": eps, "trust_model": trust, "best": best, "error_mean": error,
                "error_ci_lo": error - 0.01, "error_ci_hi": error + 0.01, "competitive": best, "tie": False,
                "beats_chance": True, "units": 10, **extra}  # fmt: skip

    which = pd.DataFrame([
        row(5.0, "central", "a", 0.1),
        row(5.0, "secure_aggregation", "e", 0.2, competitive="e;f", tie=True, units=40),
        row(5.0, "local", "b", 0.3, beats_chance=False),
        row(1.0, "local", "c", 0.9),
        row(5.0, "local", "d", 0.5, k=2),
    ])  # fmt: skip
    summary = pd.DataFrame({"dataset": ["s", "s"], "k": [1, 2], "chance_error": [0.95, 0.9]})
    lines = which_method_markdown(which, summary).splitlines()
    assert lines[0].startswith("| data set (k = 1, ε = 5)")
    assert lines[2] == ("| s | no method beats chance (best `b` 0.300 [0.290, 0.310]) | tie: `e`, `f` (0.200 [0.190, "
                        "0.210]) | `a` 0.100 [0.090, 0.110] | 0.95 |")  # fmt: skip
    assert "over at least 10 independent units" in lines[4]
    assert "s (secure_aggregation): 40 draws, a tie at the cap" in lines[4]
    assert "`d` 0.500 [0.490, 0.510]" in which_method_markdown(which, summary, k=2)


def test_a_shape_only_task_has_the_counts_and_no_rows():
    """10⁹ rows cost nothing: the calibrations read n, d, k, m and each agent's count (the federation's and the
    streamed release's certificates equal the one-process fit's, tests/federation and tests/release/test_stream)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    task = CommonTask.shape_only([10**9, 5, 7], 100, 3, None, 4)
    assert (task.n, task.d, task.k, task.m, task.consensus) == (10**9 + 12, 100, 3, 3, 4)
    assert [len(p) for p in task.parts] == [10**9, 5, 7] and task.parts[2][0] == 10**9 + 5
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # kB
    with pytest.raises(DataError, match="rank k = 100"):
        CommonTask.shape_only([10], 100, 100)
