"""The workshop experiment (ddppm.experiments.workshop, ddppm.experiments.workshop_claims): its config section's
checks, its method options, the claims logic on a hand-made summary, and its calibration of the journal method."""

import numpy as np
import pandas as pd
import pytest


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
