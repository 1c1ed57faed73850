"""The private power method family (Nicolas et al.), its recommendation data and its experiment: each formula
against an independent route (numerical optimisation, quadrature, brute force, Monte Carlo, dense algebra)."""

from __future__ import annotations

import hashlib
import itertools
import threading
import zipfile
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy import integrate, stats
from scipy.optimize import minimize_scalar

from ddppm.core.errors import ConfigError, DataError, PrivacyError
from ddppm.data import recsys
from ddppm.experiments import ppm as experiment
from ddppm.methods import available_methods
from ddppm.methods.ppm import PRIVATE_SUBSPACE, DenseOperator, PrivacySpec, initial_blocks
from ddppm.methods.ppm import privacy as pv
from ddppm.methods.ppm.algorithms import noisy_release, private_power_method
from ddppm.methods.ppm.linalg import cholesky_qr, orthonormalize
from ddppm.methods.ppm.sensitivity import (
    first_step_sensitivities,
    interaction_row_l1_budget,
    matrix_release_sensitivity,
    prior_bound,
    ratio_approximation,
    row_norm_bound,
    sensitivity,
)
from ddppm.plotting import ppm as ppm_plots
from ddppm.privacy.mechanisms import analytic_gaussian_delta, symmetric_gaussian

DELTA = 1e-4
A_LOG = np.log(1 / DELTA)


def chi2_ok(sum_sq: float, dof: int, alpha: float = 1e-4) -> bool:
    """Whether a sum of ``dof`` squared standard normals is inside the central 1 − α of its χ² law."""
    return stats.chi2.ppf(alpha / 2, dof) < sum_sq < stats.chi2.ppf(1 - alpha / 2, dof)


# ------------------------------------------------------------------------------------ privacy accounting


@pytest.mark.parametrize("rho", [1e-3, 0.05, 1.0, 30.0])
@pytest.mark.parametrize("delta", [1e-6, 1e-4, 0.05])
def test_zcdp_to_dp_is_the_optimum_over_renyi_orders(rho, delta):
    # Bun & Steinke's proof: ρ-zCDP gives (ρα + ln(1/δ)/(α−1), δ)-DP for every α > 1; minimise numerically
    res = minimize_scalar(
        lambda log_am1: rho * (1 + np.exp(log_am1)) + np.log(1 / delta) / np.exp(log_am1),
        bounds=(-20, 20),
        method="bounded",
        options={"xatol": 1e-12},
    )
    assert pv.zcdp_to_dp_eps(rho, delta) == pytest.approx(res.fun, rel=1e-8)


def test_paper_sigma_accounting_and_the_erratum():
    L = 3
    for eps in (0.5, 1.0, 10.0, 300.0):
        sigma = pv.paper_sigma(eps, DELTA, L)
        rho = pv.zcdp_of_sigma(sigma, L)
        assert rho == pytest.approx(eps**2 / (8 * A_LOG), rel=1e-12)  # their eq. 24
        achieved = pv.zcdp_to_dp_eps(rho, DELTA)
        assert achieved == pytest.approx(pv.paper_sigma_zcdp_eps(eps, DELTA), rel=1e-12)
        assert achieved == pytest.approx(eps**2 / (8 * A_LOG) + eps / np.sqrt(2), rel=1e-12)
        # the printed eq. 27 (+ε/2) understates it
        assert pv.paper_stated_eps(eps, DELTA) < achieved
    # the paper's σ meets its ε by the zCDP bound only up to 8(1 − 1/√2) ln(1/δ), not up to 4 ln(1/δ)
    edge = 8 * (1 - 1 / np.sqrt(2)) * A_LOG
    assert pv.paper_sigma_zcdp_eps(edge * 0.999, DELTA) < edge * 0.999
    assert pv.paper_sigma_zcdp_eps(edge * 1.001, DELTA) > edge * 1.001
    assert pv.paper_sigma_zcdp_eps(3 * A_LOG, DELTA) > 3 * A_LOG  # inside their δ ≤ exp(−ε/4) range


@pytest.mark.parametrize("eps", [0.3, 1.0, 7.0, 100.0, 1e4])
def test_zcdp_calibration_inverts_the_bound_and_is_conservative(eps):
    L = 3
    sigma = pv.zcdp_sigma(eps, DELTA, L)
    assert pv.zcdp_to_dp_eps(pv.zcdp_of_sigma(sigma, L), DELTA) == pytest.approx(eps, rel=1e-10)
    # L composed releases of multiplier σ are one Gaussian mechanism of multiplier σ/√L (exact, Balle & Wang)
    assert analytic_gaussian_delta(sigma / np.sqrt(L), eps) <= DELTA * (1 + 1e-9)


def _gdp_delta_by_quadrature(mu: float, eps: float) -> float:
    """δ(ε) = E[(1 − e^{ε−Z})₊], Z ~ N(μ²/2, μ²) the privacy loss of a μ-GDP mechanism (sum of L losses)."""
    f = lambda z: (1 - np.exp(eps - z)) * stats.norm.pdf(z, mu**2 / 2, mu)  # noqa: E731
    return integrate.quad(f, eps, np.inf, epsabs=1e-15, epsrel=1e-10, limit=200)[0]


@pytest.mark.parametrize(("sigma", "L"), [(0.5, 3), (2.0, 3), (0.9, 1), (4.0, 10)])
def test_exact_composition_epsilon_by_quadrature(sigma, L):
    mu = np.sqrt(L) / sigma
    for eps in (0.1, 1.0, 3.0):
        assert np.exp(pv.log_gaussian_delta(mu, eps)) == pytest.approx(_gdp_delta_by_quadrature(mu, eps), rel=1e-6)
    eps_exact = pv.gaussian_composition_eps(sigma, DELTA, L)
    assert _gdp_delta_by_quadrature(mu, eps_exact) == pytest.approx(DELTA, rel=1e-6)
    huge = 1e9  # μ = 1e9: δ(ε) → Φ(μ/2 − ε/μ), so ε → μ²/2 + μ Φ⁻¹(1 − δ)
    assert pv.gaussian_composition_eps(1 / huge, DELTA, 1) == pytest.approx(
        huge**2 / 2 + huge * stats.norm.isf(DELTA), rel=1e-12
    )
    # the exact ε is never above the zCDP bound of the same σ
    assert eps_exact <= pv.zcdp_to_dp_eps(pv.zcdp_of_sigma(sigma, L), DELTA)


def test_calibrate_modes_and_recorded_epsilons():
    for eps in (1.0, 10.0, 1e3):
        gdp = pv.calibrate(eps, DELTA, 3, "gdp")
        assert gdp.eps_exact == pytest.approx(eps, rel=1e-8) and gdp.meets_target
        zc = pv.calibrate(eps, DELTA, 3, "zcdp")
        assert zc.eps_zcdp == pytest.approx(eps, rel=1e-10) and zc.meets_target and zc.sigma > gdp.sigma
    assert pv.calibrate(10.0, DELTA, 3, "paper").meets_target
    far = pv.calibrate(1e3, DELTA, 3, "paper")
    assert not far.meets_target and far.eps_exact > 1e3 and far.eps_zcdp > far.eps_exact
    with pytest.raises(PrivacyError, match="ppm.sigma_calibration"):
        pv.calibrate(1.0, DELTA, 3, "nope")
    with pytest.raises(PrivacyError, match="ppm.delta"):
        pv.calibrate(1.0, 1.5, 3, "paper")


# ----------------------------------------------------------------------------------------- sensitivity


def _random_basis(n: int, p: int, seed: int) -> np.ndarray:
    return orthonormalize(np.random.default_rng(seed).standard_normal((n, p)))


def _unit(n: int, i: int) -> np.ndarray:
    return np.eye(n)[i]


def test_theirs_rule_is_the_supremum_over_the_matrix_adjacency():
    n, p = 7, 3
    X = _random_basis(n, p, 1)
    X[0] *= 3  # a coherent row, so the rules differ
    X = orthonormalize(X)
    rng = np.random.default_rng(2)
    changes = [np.outer(_unit(n, i), _unit(n, i)) for i in range(n)]
    changes += [
        (np.outer(_unit(n, i), _unit(n, j)) + np.outer(_unit(n, j), _unit(n, i))) / np.sqrt(2)
        for i, j in itertools.combinations(range(n), 2)
    ]
    for _ in range(3000):  # random symmetric C on the boundary sqrt(Σ‖C_i:‖₁²) = 1 (eq. 7)
        C = rng.standard_normal((n, n)) * (rng.random((n, n)) < 0.4)
        C = C + C.T
        changes.append(C / np.sqrt((np.abs(C).sum(axis=1) ** 2).sum() or 1.0))
    worst = max(np.linalg.norm(C @ X) for C in changes)
    assert worst <= row_norm_bound(X) * (1 + 1e-12)
    assert worst == pytest.approx(row_norm_bound(X), rel=1e-12)  # attained by e_i e_iᵀ
    # the prior rule bounds every single-entry change (eq. 6) and is looser than theirs
    single = [C for C in changes[: n + n * (n - 1) // 2]]
    assert max(np.linalg.norm(C @ X) for C in single) <= prior_bound(X)
    assert prior_bound(X) > row_norm_bound(X)


def _item_item(R: np.ndarray) -> np.ndarray:
    """Ã = Σ_u d_u⁻¹ R_uᵀ R_u by its definition (users without interactions contribute nothing)."""
    A = np.zeros((R.shape[1], R.shape[1]))
    for row in R:
        if row.sum() > 0:
            A += np.outer(row, row) / row.sum()
    return A


def test_interaction_rules_against_every_removal():
    rng = np.random.default_rng(3)
    R = (rng.random((7, 6)) < 0.5).astype(float)
    R[0] = 0
    R[0, 2] = 1  # a user of degree 1
    R[1] = 0
    R[1, [0, 4]] = 1  # a user of degree 2 (the worst case of eq. 70)
    A = _item_item(R)
    X = _random_basis(6, 3, 4)
    budgets, releases, products = [], [], []
    for u, i in zip(*np.nonzero(R), strict=True):
        R2 = R.copy()
        R2[u, i] = 0
        C = A - _item_item(R2)
        budgets.append(((np.abs(C).sum(axis=1) ** 2).sum(), R[u].sum()))
        releases.append(np.linalg.norm(C[np.triu_indices(6)]))
        products.append(np.linalg.norm(C @ X))
    for value, degree in budgets:
        assert value == pytest.approx(interaction_row_l1_budget(degree), rel=1e-12)  # eq. 70, corrected
        assert value <= 2 + 1e-12
    assert max(v for v, d in budgets if d == 2) == pytest.approx(2.0)
    assert max(products) <= sensitivity("theirs", X, "interaction") + 1e-12  # Lemma B.1
    assert max(products) <= sensitivity("prior", X, "interaction") <= sensitivity("constant", X, "interaction")
    assert max(releases) == pytest.approx(matrix_release_sensitivity("interaction"))  # the degree-1 user


def test_first_step_ratio_nested_qr_and_approximation():
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    k = np.array([4, 16, 40])
    prior, theirs = first_step_sensitivities(300, k, 2, rng_a)
    for r in range(2):
        Y = rng_b.standard_normal((40, 300), dtype=np.float32).T.astype(float)  # the same draw, in float64
        Q = orthonormalize(Y)
        np.testing.assert_allclose(cholesky_qr(Y), Q, atol=1e-12)  # nested Cholesky QR = Householder QR
        for j, kk in enumerate(k):
            np.testing.assert_allclose(prior[r, j], prior_bound(Q[:, :kk]), rtol=1e-5)  # float32 QR
            np.testing.assert_allclose(theirs[r, j], row_norm_bound(Q[:, :kk]), rtol=1e-5)
    # Approximation 6.2 uses the mean and variance of an F(1, n) variable
    n, kk = 8000, np.array([64.0, 640.0])
    f = stats.f(1, n)
    expected = np.sqrt(
        (np.sqrt(2 * f.var() * np.log(kk * n) * kk**2 / n**2) + kk * f.mean() / n)
        / (np.sqrt(2 * f.var() * np.log(n) * kk / n**2) + kk * f.mean() / n)
    )
    np.testing.assert_allclose(ratio_approximation(kk, n), expected, rtol=1e-10)


def test_orthonormalize_is_gram_schmidt():
    Y = np.random.default_rng(6).standard_normal((9, 4))
    Q = np.zeros_like(Y)
    for j in range(4):  # classical Gram–Schmidt (the paper's QR)
        v = Y[:, j] - Q[:, :j] @ (Q[:, :j].T @ Y[:, j])
        Q[:, j] = v / np.linalg.norm(v)
    np.testing.assert_allclose(orthonormalize(Y), Q, atol=1e-12)
    np.testing.assert_allclose(orthonormalize(np.stack([Y, 2 * Y]))[1], Q, atol=1e-12)


# ------------------------------------------------------------------------------------------- algorithms


def _client_problem(n: int = 8, s: int = 5, seed: int = 7) -> DenseOperator:
    rng = np.random.default_rng(seed)
    parts = [(lambda B: B.T @ B)(rng.standard_normal((3, n))) for _ in range(s)]
    return DenseOperator(sum(parts), parts)


@pytest.mark.parametrize(("model", "factor"), [("central", 1.0), ("secure_aggregation", 1.0), ("local", 5.0)])
@pytest.mark.parametrize("literal", [True, False])
def test_release_noise_has_the_stated_aggregate_variance(model, factor, literal):
    op = _client_problem()
    X = initial_blocks([np.random.default_rng(i) for i in range(60)], op.n, 3)
    scale = np.linspace(0.5, 2.0, 60)
    rngs = [np.random.default_rng(100 + i) for i in range(60)]
    noise = noisy_release(op, X, scale, rngs, noise_model=model, literal_clients=literal) - np.einsum(
        "ij,rjk->rik", op.A, X
    )
    z = noise / (scale * np.sqrt(factor))[:, None, None]  # aggregate variance scale² · {1, 1, s}
    assert chi2_ok(float((z**2).sum()), z.size)
    assert abs(z.mean()) < 4 / np.sqrt(z.size)


def test_algorithm_2_equals_algorithm_1_in_law():
    op = _client_problem()
    runs, p, L = 400, 2, 4
    X0 = initial_blocks([np.random.default_rng(i) for i in range(runs)], op.n, p)
    np.testing.assert_array_equal(X0, initial_blocks([np.random.default_rng(i) for i in range(runs)], op.n, p))
    rule = row_norm_bound

    def run(model, literal, sigma, seed):
        rngs = [np.random.default_rng([seed, i]) for i in range(runs)]
        return private_power_method(op, X0, L, sigma, rule, rngs, noise_model=model, literal_clients=literal)

    # noiseless: the clients' products sum to A X, so both algorithms give the same bases from the same G₀
    np.testing.assert_allclose(run("secure_aggregation", True, 0.0, 1).basis, run("central", False, 0.0, 2).basis)
    # with noise: the distribution of the top direction's alignment is the same (two-sample KS test)
    top = np.linalg.eigh(op.A)[1][:, -1]

    def stat(trace):
        return np.abs(np.einsum("rn,n->r", trace.basis[:, :, 0], top))

    sigma = 2.0
    central, decentral = run("central", False, sigma, 3), run("secure_aggregation", True, sigma, 4)
    assert stats.ks_2samp(stat(central), stat(decentral)).pvalue > 1e-3
    np.testing.assert_allclose(central.noise_std[:, 0], decentral.noise_std[:, 0])  # same X⁰, same aggregate
    local = run("local", True, sigma, 5)  # the test has power: √s times more noise is detected
    assert stats.ks_2samp(stat(central), stat(local)).pvalue < 1e-6


def test_analyze_gauss_noise_is_symmetric_with_the_stated_variance():
    n, std = 30, 0.7
    E = np.stack([symmetric_gaussian(n, std, np.random.default_rng(i)) for i in range(40)])
    np.testing.assert_array_equal(E, E.transpose(0, 2, 1))
    upper = E[:, *np.triu_indices(n, 1)]
    diag = E[:, *np.diag_indices(n)]
    assert chi2_ok(float((upper**2).sum() / std**2), upper.size)
    assert chi2_ok(float((diag**2).sum() / std**2), diag.size)
    corr = np.corrcoef(upper[:, :50].T)[np.triu_indices(50, 1)]  # distinct upper entries are independent
    assert np.abs(corr).max() < 0.75 and abs(corr.mean()) < 0.05


def test_every_registered_method_returns_private_orthonormal_bases():
    methods = available_methods(task=PRIVATE_SUBSPACE)
    assert set(methods) == {
        "ppm_prior",
        "ppm_theirs",
        "ppm_theirs_sqrt2",
        "ppm_decentralised",
        "balcan_centralised",
        "balcan_decentralised",
        "fedpower",
        "analyze_gauss",
    }
    assert len({m.label for m in methods.values()}) == len({m.style["color"] for m in methods.values()}) == 8
    rng = np.random.default_rng(8)
    U = orthonormalize(rng.standard_normal((12, 12)))
    A = U @ np.diag([50.0, 5, 4, 3, 2, 1, 1, 1, 0.5, 0.5, 0.1, 0]) @ U.T
    op = DenseOperator(A, [w * A for w in (0.2, 0.3, 0.5)])  # three clients
    eigvals, eigvecs = np.linalg.eigh(op.A)
    X0 = initial_blocks([np.random.default_rng(i) for i in range(4)], op.n, 3)
    first = op.A @ X0
    for name, method in methods.items():
        rngs = lambda: [np.random.default_rng([9, i]) for i in range(4)]  # noqa: E731
        est = method.estimate(op, X0, PrivacySpec(1e9, DELTA, "gdp"), 3, rngs())
        assert est.basis.shape == (4, 12, 3), name
        np.testing.assert_allclose(
            est.basis.transpose(0, 2, 1) @ est.basis, np.broadcast_to(np.eye(3), (4, 3, 3)), atol=1e-12
        )
        # at ε → ∞ every method finds the top eigenvector (A has a clear gap at the top)
        assert np.abs(est.basis[:, :, 0] @ eigvecs[:, -1]).min() > 0.99, name
        again = method.estimate(op, X0, PrivacySpec(5.0, DELTA), 3, rngs(), first_product=first)
        np.testing.assert_allclose(again.basis, method.estimate(op, X0, PrivacySpec(5.0, DELTA), 3, rngs()).basis)
    assert eigvals[-1] > 1.2 * eigvals[-2]


# ------------------------------------------------------------------------------------------------ data


def test_synthetic_interactions_shape_density_and_seed():
    R = recsys.synthetic_interactions(800, 150, 0.05, rank=5, seed=3)
    assert R.shape == (800, 150) and set(np.unique(R.data)) == {1.0}
    assert np.diff(R.indptr).min() >= 1 and np.asarray(R.sum(axis=0)).min() >= 1  # no empty user or item
    target = 0.05 * 800 * 150
    assert abs(R.nnz - target) < 5 * np.sqrt(target) + 10  # Bernoulli sum around its mean (+ a few fill-ins)
    again = recsys.synthetic_interactions(800, 150, 0.05, rank=5, seed=3)
    assert (R != again).nnz == 0
    assert (R != recsys.synthetic_interactions(800, 150, 0.05, rank=5, seed=4)).nnz > 0


def _small_interactions(seed: int = 11, users: int = 40, items: int = 12) -> sp.csr_matrix:
    R, _ = recsys.clean_interactions(sp.csr_matrix(np.random.default_rng(seed).random((users, items)) < 0.3))
    return R


def test_item_item_operator_is_the_normalised_gram_matrix():
    R = _small_interactions()
    A = _item_item(R.toarray())
    X = np.random.default_rng(1).standard_normal((R.shape[1], 37))
    for clients in (None, 3):
        op = recsys.ItemItemOperator(R, clients=clients, block=5)
        np.testing.assert_allclose(op.matmul(X), A @ X, atol=1e-12)
        np.testing.assert_allclose(op.dense(), A, atol=1e-12)
        np.testing.assert_allclose(sum(op.client_matmul(c, X) for c in range(op.clients)), A @ X, atol=1e-12)
    assert recsys.ItemItemOperator(R).clients == R.shape[0]  # one client per user by default
    single = recsys.ItemItemOperator(R, dtype=np.float32)
    np.testing.assert_allclose(single.matmul(X), A @ X, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(single.dense(), A, atol=1e-12)
    with pytest.raises(DataError, match="ppm.clients"):
        recsys.ItemItemOperator(R, clients=10_000)


def test_top_eigenvectors_by_lanczos_match_dense():
    R = recsys.synthetic_interactions(3000, 450, 0.03, rank=4, seed=1)
    op = recsys.ItemItemOperator(R)
    values, vectors = recsys.top_eigenvectors(op, 6)
    dense_values, dense_vectors = np.linalg.eigh(op.dense())
    np.testing.assert_allclose(values, dense_values[::-1][:6], rtol=1e-9)
    np.testing.assert_allclose(np.abs(vectors.T @ dense_vectors[:, ::-1][:, :6]), np.eye(6), atol=1e-6)


def test_filter_error_matches_the_dense_definition():
    R = _small_interactions(users=60, items=15)
    op = recsys.ItemItemOperator(R)
    _, U = recsys.top_eigenvectors(op, 4)
    rng = np.random.default_rng(2)
    estimates = np.stack([orthonormalize(U + s * rng.standard_normal(U.shape)) for s in (0.05, 0.3, 2.0)])
    Rd, deg = R.toarray(), op.item_degrees

    def low_pass(V):  # their eq. 75–76
        return Rd @ np.diag(deg**-0.5) @ V @ V.T @ np.diag(deg**0.5)

    dense = [np.linalg.norm(low_pass(V) - low_pass(U)) / np.linalg.norm(low_pass(U)) for V in estimates]
    np.testing.assert_allclose(recsys.filter_errors(R, deg, U, estimates), dense, rtol=1e-9)
    rotation = orthonormalize(rng.standard_normal((4, 4)))
    assert recsys.filter_errors(R, deg, U, (U @ rotation)[None])[0] < 1e-6  # a basis of the same subspace


def test_clean_and_train_split():
    R = sp.csr_matrix(np.array([[1, 1, 0, 0], [0, 0, 0, 0], [1, 1, 1, 0], [1, 0, 0, 0]]))
    clean, info = recsys.clean_interactions(R)
    assert clean.shape == (3, 3) and info["dropped_users"] == 1 and info["dropped_items"] == 1
    big = recsys.synthetic_interactions(200, 60, 0.2, seed=2)
    train = recsys.train_split(big, 0.8, seed=0)
    d, d_train = np.diff(big.indptr), np.diff(train.indptr)
    np.testing.assert_array_equal(d_train, np.minimum(np.floor(0.8 * d), d - 1))
    assert (train - train.multiply(big)).nnz == 0  # a subset of the interactions


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_movielens_url_source_against_a_local_server(tmp_path):
    served = tmp_path / "served"
    served.mkdir()
    pairs = [(1, 10), (1, 20), (2, 10), (5, 30), (5, 10), (5, 10)]
    lines = "".join(f"{u}::{i}::4::97830{k}\n" for k, (u, i) in enumerate(pairs))
    with zipfile.ZipFile(served / "ml-tiny.zip", "w") as archive:
        archive.writestr("ml-tiny/ratings.dat", lines)
    (served / "ratings.csv").write_text("userId,movieId,rating\n" + "".join(f"{u},{i},3\n" for u, i in pairs))
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(served)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        good = hashlib.sha256((served / "ml-tiny.zip").read_bytes()).hexdigest()
        with pytest.raises(DataError, match="checksum mismatch"):
            recsys.load_movielens(f"{base}/ml-tiny.zip", "0" * 64, member="ml-tiny/ratings.dat", cache_dir=tmp_path)
        assert not list(tmp_path.glob("*ppm-*"))  # nothing, not even a temporary file
        R, meta = recsys.load_movielens(f"{base}/ml-tiny.zip", good, member="ml-tiny/ratings.dat", cache_dir=tmp_path)
        np.testing.assert_array_equal(R.toarray(), [[1, 1, 0], [1, 0, 0], [1, 0, 1]])  # users 1, 2, 5; items 10, 20, 30
        assert meta["ratings"] == 6
        csv_sha = hashlib.sha256((served / "ratings.csv").read_bytes()).hexdigest()
        R2, _ = recsys.load_movielens(f"{base}/ratings.csv", csv_sha, member=None, cache_dir=tmp_path)
        assert (R2 != R).nnz == 0
        with pytest.raises(DataError, match="ppm.data.member"):
            recsys.load_movielens(f"{base}/ml-tiny.zip", good, member="nope.dat", cache_dir=tmp_path)
    finally:
        server.shutdown()
        server.server_close()


# ------------------------------------------------------------------------------------------ experiment


def test_bootstrap_interval_matches_the_normal_theory_of_the_mean():
    values = np.random.default_rng(4).exponential(size=60)
    lo, hi = experiment.bootstrap_mean_interval(values, 0.99, 40_000, np.random.default_rng(5))
    half = stats.norm.ppf(0.995) * values.std() / np.sqrt(values.size)  # bootstrap mean: variance σ̂²/n
    assert (hi - lo) / 2 == pytest.approx(half, rel=0.1)
    assert lo < values.mean() < hi


def test_eps_ratio_of_power_law_curves_is_exact():
    eps = np.logspace(0, 4, 14)
    rows = [("ours", e, 0.9 / e**0.5) for e in eps] + [("ref", e, 1.8 / e**0.5) for e in eps]
    summary = pd.DataFrame(rows, columns=["method", "eps", "error_mean"])
    table = experiment.eps_ratio_table(summary, "ref")
    np.testing.assert_allclose(table["eps_ratio"], 4.0, rtol=1e-9)  # the reference needs 4× the ε everywhere
    assert table["error_level"].max() == pytest.approx(0.81) and table["error_level"].min() == pytest.approx(0.036)
    np.testing.assert_allclose(experiment.eps_at_error(eps, 3 / eps, np.array([0.3, 5.0])), [10.0, np.nan])


def test_config_checks_name_the_key():
    section = experiment.default_section()
    assert section["data"]["source"] == "synthetic" and len(section["epsilons"]) == 14
    bad = [
        ({"methods": ["ppm_theirs_sqrt2", "nope"]}, "ppm.methods"),
        ({"rank": 64}, "ppm.rank"),
        ({"methods": ["ppm_theirs_sqrt2"]}, "ppm.eps_ratio_reference"),
        ({"data": {"items": 5000}}, "ppm.methods"),
        ({"sensitivity_ratio": {"k_max": 5000}}, "ppm.sensitivity_ratio"),
        ({"clients": 10**6}, "ppm.clients"),
        ({"delta": 2.0}, "ppm.delta"),
        ({"claims": {"prior": "nope"}}, "ppm.claims.prior"),
    ]
    for override, key in bad:
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            experiment.default_section(**override)


def _tiny_section(**extra):
    data = {"users": 300, "items": 60, "density": 0.1, "rank": 4}
    return experiment.default_section(data=data, block_size=4, rank=4, iterations=2, seeds=3, **extra)


def test_run_method_records_every_run_and_reaches_the_noise_free_floor():
    section = _tiny_section(epsilons=[1.0, 1e12])
    interactions, reference, meta = experiment.prepare_data(section)
    R, U = experiment.load_problem(interactions, reference)
    assert R.shape == (300, 60) and meta["data"]["interactions"] == R.nnz
    runs = experiment.run_method("ppm_decentralised", R, U, section)
    assert len(runs) == 6 and runs["run"].tolist() == [0, 1, 2, 0, 1, 2]
    assert runs.groupby("run")["init_seed"].nunique().eq(1).all() and runs["noise_seed"].nunique() == 6
    assert runs["meets_target"].tolist() == [True] * 3 + [False] * 3  # the paper's σ at ε = 1e12: ε ≈ 1.4e22
    np.testing.assert_allclose(runs["error"].iloc[3:], meta["noiseless_errors"], rtol=1e-6)  # ε → ∞
    summary = experiment.summarise(runs, section["bootstrap"])
    assert summary["runs"].tolist() == [3, 3] and (summary["error_lo"] <= summary["error_hi"]).all()
    lines = experiment.findings(summary, pd.DataFrame(columns=["method"]), "title", section["claims"])
    assert lines[0].startswith("Private randomized power methods") and lines[1] == "Setting: title."
    assert lines[-1].startswith("The σ used does not give the target ε")


def test_sensitivity_ratio_table_and_figures():
    table = experiment.sensitivity_ratio_table(
        {"sizes": [120], "k_min": 4, "k_max": 40, "k_step": 4, "runs": 2, "seed": 0}
    )
    assert len(table) == 10 and (table["ratio_empirical"] > table["ratio_approximation"]).all()
    figure = ppm_plots.fig2(table)
    assert len(figure.axes) == 1 and figure.axes[0].get_xlabel() == "block size k"
    eps = [1.0, 30.0, 1000.0]
    summary = pd.DataFrame(
        [
            {
                "method": m,
                "eps": e,
                "error_mean": v / e**0.5,
                "error_lo": 0.8 * v / e**0.5,
                "error_hi": 1.2 * v / e**0.5,
                "meets_target": e < 100,
                "eps_exact": e if e < 100 else 10 * e,
            }  # fmt: skip
            for m, v in (("ppm_theirs_sqrt2", 0.5), ("fedpower", 1.0))
            for e in eps
        ]
    )
    figure = ppm_plots.fig1(summary, noiseless=0.01, title="t")
    labels = [t.get_text() for t in figure.legends[0].get_texts()]
    assert labels[:2] == ["Nicolas et al., centralised (Alg. 1)", "FedPower, synchronous (local DP)"]
    assert ppm_plots.OVER_TARGET_LABEL in labels and any(label.startswith("no noise") for label in labels)


@pytest.mark.parametrize("n", [1, 2, 7, 13, 50])
def test_symmetric_gaussian_is_numpy_triu_bit_for_bit(n: int) -> None:
    """The cached-mask noise equals ``np.triu(Z·σ) + np.triu(np.triu(Z·σ), 1).T`` of the same draw, sign bits
    included (σ = 0 gives signed zeros)."""
    for std in (0.3, 0.0):
        got = symmetric_gaussian(n, std, np.random.default_rng(n))
        upper = np.triu(np.random.default_rng(n).standard_normal((n, n)) * std)
        want = upper + np.triu(upper, 1).T
        assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want))
        assert np.array_equal(got, got.T)
