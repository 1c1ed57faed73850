"""Workshop D-DP-PM: simulation vs. release model (eq. 9–11), the final Gaussian release, Theorem 1 (eq. 12)
against exact tails, the shared accountant on the workshop releases, the budget split and the experiment's
claims logic."""

import numpy as np
import pandas as pd
import pytest

from ddppm.methods.workshop.algorithm import workshop_agentwise, workshop_network
from ddppm.methods.workshop.budget import BudgetSplit
from ddppm.methods.workshop.release import WorkshopReleaseModel
from tests.test_release import make_problem


def _setup(T=3, R=4, seed=1):
    problem = make_problem(24, 3, 4, 2, topology="ring", seed=seed)
    rng = np.random.default_rng(seed)
    alpha, sq = 1 / np.sqrt(problem.mu1 * problem.mu2), 1 / np.sqrt(problem.n)
    sigmas = 0.3 * sq * 0.8 ** np.arange(T)
    q0 = sq * rng.standard_normal((problem.n, R))
    P = sigmas[:, None, None] * rng.standard_normal((T, problem.m * problem.d, R))
    u = rng.standard_normal((problem.n, R))
    return problem, alpha, sq, sigmas, q0, P, u


class _Params:
    def __init__(self, alpha, T):
        self.alpha, self.T = alpha, T


def test_release_model_equals_simulation():
    T = 3
    problem, alpha, sq, sigmas, q0, P, u = _setup(T)
    run = workshop_agentwise(problem, _Params(alpha, T), q0, P, u, noise_factor=2.0)
    bases = [np.eye(int(k)) for k in problem.sizes]
    model = WorkshopReleaseModel(problem, alpha, T, bases)
    sources = np.vstack([q0, P.reshape(T * problem.m * problem.d, -1)])
    z_model = model.A @ sources
    z_sim = run.z_stacked()
    assert np.max(np.abs(z_model - z_sim)) <= 1e-10 * max(1.0, np.max(np.abs(z_sim)))


def test_agentwise_equals_network():
    T = 3
    problem, alpha, sq, sigmas, q0, P, u = _setup(T)
    run = workshop_agentwise(problem, _Params(alpha, T), q0, P, u, noise_factor=2.0)
    q, a = workshop_network(problem, _Params(alpha, T), q0, P)
    np.testing.assert_allclose(q, run.q, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a, run.a, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("eps1,delta1", [(0.5, 1e-5), (1.0, 1e-6)])
def test_final_noise_is_classic_gaussian_mechanism(eps1, delta1):
    b = BudgetSplit(delta_q=2.0, final_mechanism="classic")
    expected = 2.0 * np.sqrt(2 * np.log(1.25 / delta1)) / eps1
    assert b.delta_q * b.unit_sigma(eps1, delta1, "chernoff") == pytest.approx(expected, rel=1e-12)


def test_final_release_adds_sigma_u_times_unit_noise():
    T = 3
    problem, alpha, sq, sigmas, q0, P, u = _setup(T)
    f = 2.0
    run = workshop_agentwise(problem, _Params(alpha, T), q0, P, u, noise_factor=f)
    sd = f * alpha * np.linalg.norm(run.a, axis=1)  # (m, R)
    expected = run.q + np.repeat(sd, problem.sizes, axis=0) * u
    np.testing.assert_allclose(run.released, expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("w", [0.3, 1.0, 2.0])
def test_theorem1_bounds_exact_upper_tail_equal_covariances(w):
    """Γ = I (equal covariances): ℒ ~ N(w²/2, w²), so Pr_P(ℒ > ε) = Φ̄((ε − w²/2)/w); eq. (12) minimised over s
    is a Chernoff bound on that one tail and must not fall below it. (Not yet covered: Γ ≠ I, and the
    comparison with the two-sided exact δ on real workshop releases.)"""
    from scipy.stats import norm

    from ddppm.methods.workshop.theorem1 import theorem1_log_delta
    from ddppm.privacy.exact import exact_tails

    eps = np.array([0.5, 1.0, 2.0])
    w2 = np.array([[w * w / 2], [w * w / 2]])
    bound = np.exp(theorem1_log_delta(np.ones(2), w2, eps))[:, 0]
    exact = exact_tails(np.zeros(2), w2, eps).upper[:, 0]
    np.testing.assert_allclose(exact, norm.sf((eps - w * w / 2) / w), rtol=1e-8)
    assert np.all(bound >= exact * (1 - 1e-9))


# ---------------------------------------------------------------- release model: conditional law (eq. 10–11)


def test_reduced_model_gives_the_full_conditional_law():
    """Reduced source coordinates (bases of col(X_k)) give the same covariance C_i and the same mean B_i as the
    literal M and L of eq. (60)–(62), for both views (the projection is exact)."""
    from ddppm.accounting.release import reduction_basis
    from ddppm.methods.workshop.release import conditional_law_full

    T = 3
    problem, alpha, sq, sigmas, q0, P, u = _setup(T)
    model = WorkshopReleaseModel(problem, alpha, T, reduction_basis(problem))
    assert model.A.shape[1] < problem.n + T * problem.m * problem.d  # really reduced
    rng = np.random.default_rng(5)
    for observer in range(problem.m):
        omega = rng.standard_normal((int(problem.sizes[observer]) + T * problem.d, 3))
        for view in ("paper", "network"):
            full = conditional_law_full(problem, alpha, sq, sigmas, observer, view)
            reduced = model.conditional_law(sq, sigmas, observer, view)
            np.testing.assert_allclose(reduced.cov, full.cov, rtol=1e-9, atol=1e-12 * np.abs(full.cov).max())
            np.testing.assert_allclose(
                reduced.mean_map @ model.project_own(observer, omega), full.mean_map @ omega, rtol=1e-9, atol=1e-12
            )


def test_conditional_law_matches_simulated_releases():
    """Monte Carlo: fix observer 1's randomness ω_1, redraw everyone else's, run the algorithm; the empirical
    mean and covariance of Z^(T) equal B_1 and C_1 of eq. (10)–(11) (network view)."""
    from ddppm.methods.workshop.release import conditional_law_full

    T, R, observer = 2, 40_000, 1
    problem, alpha, sq, sigmas, _, _, _ = _setup(T)
    rng = np.random.default_rng(11)
    q0 = sq * rng.standard_normal((problem.n, R))
    P = sigmas[:, None, None] * rng.standard_normal((T, problem.m * problem.d, R))
    own_q = problem.agent_slice(observer)
    own_p = slice(observer * problem.d, (observer + 1) * problem.d)
    q0[own_q] = q0[own_q][:, :1]
    P[:, own_p] = P[:, own_p][:, :, :1]
    run = workshop_agentwise(problem, _Params(alpha, T), q0, P, np.zeros_like(q0), noise_factor=0.0)
    Z = run.z_stacked()
    law = conditional_law_full(problem, alpha, sq, sigmas, observer, "network")
    omega = np.concatenate([q0[own_q, 0], P[:, own_p, 0].reshape(-1) / 1.0])
    mean = law.mean_map @ omega
    cov = law.cov
    sd = np.sqrt(np.diag(cov))
    se_mean = sd / np.sqrt(R)
    live = sd > 1e-9 * sd.max()
    assert np.all(np.abs(Z.mean(axis=1) - mean)[live] <= 5 * se_mean[live])
    assert np.allclose(Z[~live], mean[~live, None], atol=1e-9 * max(1.0, np.abs(mean).max()))
    emp = np.cov(Z)
    corr_err = np.abs(emp - cov)[np.ix_(live, live)] / np.outer(sd[live], sd[live])
    assert corr_err.max() < 6 / np.sqrt(R) * 3  # entries of a sample covariance: se ≲ sqrt(2/R) in correlation units


# ---------------------------------------------------------------- Theorem 1 (eq. 12) against the exact tail


@pytest.mark.parametrize("c1,c2,mu", [(2.0, 1.0, 0.0), (1.5, 1.0, 0.5), (1.0, 0.5, 0.3), (0.7, 1.0, 1.0)])
def test_theorem1_bounds_its_tail_unequal_covariances(c1, c2, mu):
    """Γ ≠ I in 1-D: eq. (12) minimised over s bounds Pr_P(ℒ > ε), ℒ = ln p/p', computed here by numerical
    integration of P's density over {ℒ > ε} (an independent route)."""
    from scipy import integrate, stats

    from ddppm.methods.workshop.theorem1 import theorem1_from_moments

    def loss(y):
        return stats.norm.logpdf(y, mu, np.sqrt(c1)) - stats.norm.logpdf(y, 0.0, np.sqrt(c2))

    for eps in (0.1, 0.5, 1.0, 2.0):
        span = 14 * np.sqrt(max(c1, c2))
        tail = integrate.quad(
            lambda y, e=eps: stats.norm.pdf(y, mu, np.sqrt(c1)) * (loss(y) > e), -span, span, limit=500, points=[0, mu]
        )[0]
        bound = theorem1_from_moments([mu], [[c1]], [0.0], [[c2]], [eps])[0]
        assert bound >= tail - 1e-6, (eps, bound, tail)


def test_theorem1_can_be_below_the_exact_delta():
    """Documented case: Theorem 1 bounds one tail of one order, so it can give a smaller δ than the exact
    two-sided, both-order δ on the same pair. P = N(0, I₁₀), P' = N(0, 1.1 I₁₀): ℒ = ln p/p' ≤ 5 ln 1.1 = 0.477,
    so Pr_P(ℒ > 0.5) = 0 and eq. (12) → 0; but under P' the loss ln p'/p has an unbounded tail and the exact δ is
    ≈ 0.034 (checked here by Monte Carlo). The workshop paper's δ, taken from eq. (12) only, misses it."""
    from ddppm.methods.workshop.theorem1 import theorem1_from_moments
    from ddppm.privacy.tails import gaussian_tail_delta

    N, ratio, eps = 10, 1.1, 0.5
    I = np.eye(N)
    theorem1 = theorem1_from_moments(np.zeros(N), I, np.zeros(N), ratio * I, [eps])[0]
    exact = gaussian_tail_delta(np.zeros(N), I, np.zeros(N), ratio * I, [eps], method="exact")[0]
    rng = np.random.default_rng(0)
    R = 400_000
    y = np.sqrt(ratio) * rng.standard_normal((R, N))  # under P'
    loss_rev = N / 2 * np.log(1 / ratio) + 0.5 * (y**2).sum(axis=1) * (1 - 1 / ratio)  # ln p'(y)/p(y)
    mc = np.mean(loss_rev > eps) + np.mean(loss_rev < -eps)
    assert theorem1 < 1e-12
    assert exact > 0.03
    assert abs(exact - mc) < 5 * np.sqrt(mc * (1 - mc) / R)


# ---------------------------------------------------------------- accountant on the workshop releases


def test_accountant_on_workshop_releases_equals_direct_gaussian_delta():
    """The shared accountant (exact, network view, one realisation of ω_i) on the workshop releases equals the
    exact δ of the two Gaussians built directly from the literal M and L for X and for X' (apply_neighbour)."""
    from ddppm.accounting.accountant import AccountantSettings
    from ddppm.accounting.iteration import NoiseSchedule
    from ddppm.accounting.neighbours import apply_neighbour, heuristic_neighbours
    from ddppm.methods.workshop.accounting import iterations_delta, workshop_own_randomness
    from ddppm.methods.workshop.algorithm import WorkshopParams
    from ddppm.methods.workshop.release import conditional_law_full
    from ddppm.privacy.tails import gaussian_tail_delta

    T = 2
    problem, alpha, sq, _, _, _, _ = _setup(T)
    params = WorkshopParams(alpha, sq, NoiseSchedule("constant", 0.5 * sq, 1.0), T)
    neighbour = heuristic_neighbours(problem, 2, 1, ("zero",))[0]
    settings = AccountantSettings(view="network", accounting="exact", observers=(0,), realisations=1)
    eps = np.array([0.5, 2.0])
    got = iterations_delta(problem, params, eps, settings, "two_sided", neighbours=[neighbour]).delta
    omega = workshop_own_randomness(problem, params, 0, settings)[:, 0]
    adjacent = apply_neighbour(problem, neighbour)
    laws = [conditional_law_full(p, alpha, sq, params.sigmas, 0, "network") for p in (problem, adjacent)]
    expected = gaussian_tail_delta(laws[0].mean_map @ omega, laws[0].cov, laws[1].mean_map @ omega, laws[1].cov, eps)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-12)


# ---------------------------------------------------------------- experiment: config, δ levels, claims


def test_delta_levels_follow_section_4():
    from ddppm.experiments.workshop import default_section, delta_limits

    levels = default_section()["delta_levels"]
    eps = [0.5, 5.0, 5.01, 10.0, 10.5, 50.0, 200.0]
    np.testing.assert_allclose(delta_limits(eps, levels), [0.26, 0.26, 0.1, 0.1, 0.011, 0.011, 0.011])


@pytest.mark.parametrize(
    "overrides,key",
    [
        ({"delta_levels": {"breaks": [5], "levels": [0.26, 0.1, 0.011]}}, "workshop.delta_levels"),
        ({"threat_models": ["mine"]}, "workshop.threat_models"),
        ({"claims": {"drop_range": [50, 10]}}, "workshop.claims.drop_range"),
        ({"budget": {"eps_final_share": 1.5}}, "workshop.budget.eps_final_share"),
        ({"budget": {"delta_q": 0.5}}, "workshop.budget.delta_q"),
        ({"method_options": {"ddppm": {"calibration": {"runs": 0}}}}, "workshop.method_options.ddppm"),
    ],
)
def test_bad_workshop_config_names_the_key(overrides, key):
    from ddppm.core.errors import ConfigError
    from ddppm.experiments.workshop import default_section

    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        default_section(**overrides)


def test_one_method_option_keeps_the_experiments_other_defaults():
    from ddppm.experiments.workshop import default_section, method_options

    section = default_section(method_options={"ddppm": {"calibration": {"runs": 7}}})
    options = method_options(section, "ddppm")
    assert options["calibration"]["runs"] == 7
    assert options["calibration"]["t_star_tol"] == 0.35  # the experiment's default, not the method's
    assert options["privacy"]["realisations"] == 3


def _hand_made_summary():
    """Errors with known answers: ws reaches error ≤ .2 at ε = 50, LDP at 200; ws drop vs LDP in [10, 50] is .2."""
    eps = [10.0, 50.0, 100.0, 200.0]
    rows = []
    for method, tm, errors, feasible in [
        ("ddppm_workshop", "paper", [0.5, 0.15, 0.1, 0.05], [True] * 4),
        ("ddppm_workshop", "sound", [0.7, 0.3, 0.19, 0.1], [True, True, False, True]),
        ("ldp", "none", [0.7, 0.35, 0.3, 0.2], [False] * 4),
        ("ldp_analytic", "none", [0.8, 0.5, 0.4, 0.3], [True] * 4),
    ]:
        for e, err, ok in zip(eps, errors, feasible, strict=True):
            rows.append({"method": method, "threat_model": tm, "eps": e, "error_mean": err, "feasible": ok})
    return pd.DataFrame(rows)


def test_claims_on_a_hand_made_summary():
    from ddppm.experiments.workshop import default_section
    from ddppm.experiments.workshop_claims import claims_table, verdicts

    section = default_section()
    claims = claims_table(_hand_made_summary(), section)
    v = verdicts(claims, section).set_index(["threat_model", "reading"])
    paper, sound = v.loc[("paper", "one_minus_error")], v.loc[("sound", "one_minus_error")]
    assert paper["eps_reached"] == 50 and paper["eps_reached_ldp"] == 200  # LDP counts even where δ is over
    assert paper["accuracy_claim_holds"] and paper["mean_drop_vs_ldp"] == pytest.approx(0.2)
    assert paper["drop_claim_holds"]
    assert sound["eps_reached"] == 200  # ε = 100 is below .2 but infeasible: it does not count
    assert not sound["accuracy_claim_holds"] and sound["mean_drop_vs_ldp"] == pytest.approx(0.025)
    cos = v.loc[("paper", "cosine")]
    assert cos["eps_reached"] == 10 and cos["eps_reached_ldp"] == 50  # error ≤ sqrt(1 − .64) = .6


def test_workshop_method_options_are_not_under_methods():
    """The workshop D-DP-PM is configured in its experiment's section; `methods.ddppm_workshop` would do nothing,
    so it is an error that says where the options go."""
    from ddppm.config import validate_config
    from ddppm.core.errors import ConfigError

    config = {"datasets": ["wine"], "epsilons": [1.0], "delta_limits": {"wine": [0.5]}}
    config["methods"] = {"ddppm_workshop": {"budget": {"eps_final_share": 0.5}}}
    with pytest.raises(ConfigError, match=r"workshop\.method_options\.ddppm_workshop"):
        validate_config(config)


def test_experiment_calibrates_the_journal_method_on_its_data():
    """The experiment's journal D-DP-PM branch (the tiny config leaves it out): parameters meeting the §4 δ levels
    on a small SBM problem, under the paper's threat model, and the experiment's key in a data error."""
    from ddppm.core.errors import DataError
    from ddppm.core.partition import parts_from_assignment
    from ddppm.core.problem import DistributedProblem
    from ddppm.experiments.workshop import calibrate, default_section, prepare_data
    from ddppm.pipeline.steps import matrix_of

    options = {
        "privacy": {"realisations": 2},
        "calibration": {"kappas": [1.0, 10.0], "ratios": ["growth"], "t_coarse": [3], "fine_steps": [], "runs": 10},
    }
    section = default_section(
        data={"n_nodes": 80}, epsilons=[5, 50], threat_models=["paper"], method_options={"ddppm": options}
    )
    frame, part, net, meta = prepare_data(section)
    W = net[[c for c in net.columns if c.startswith("w")]].to_numpy(float)
    parts = parts_from_assignment(part.sort_values("row_id")["agent"].to_numpy(), W.shape[0])
    problem = DistributedProblem.from_partition(matrix_of(frame), parts, W, int(meta["network"]["c"]))
    rows, _, _ = calibrate(problem, section, "ddppm", "paper")
    assert list(rows["eps"]) == [5.0, 50.0] and rows["feasible"].all()
    assert (rows["delta"] <= rows["delta_limit"]).all() and list(rows["delta_limit"]) == [0.26, 0.011]
    strict = default_section(**{**section, "method_options": {"ddppm": {**options, "calibration": {"t_max": 2}}}})
    with pytest.raises(DataError, match=r"workshop\.method_options\.ddppm\.calibration"):
        calibrate(problem, strict, "ddppm", "paper")


def test_the_experiment_asks_the_registry_which_methods_are_calibrated():
    """No list of method names in the experiment: the registry's ``calibrated`` flag decides."""
    import inspect

    import ddppm.experiments.workshop as workshop
    import ddppm.experiments.workshop_claims as claims
    from ddppm.methods import available_methods, calibrated_methods

    assert set(calibrated_methods()) == {n for n, m in available_methods().items() if m.calibrated}
    assert {"ddppm", "ddppm_workshop"} <= set(calibrated_methods()) and "ldp" not in calibrated_methods()
    for module in (workshop, claims):
        assert '("ddppm", "ddppm_workshop")' not in inspect.getsource(module)
