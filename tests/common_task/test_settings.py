"""The common task's privacy settings (ddppm.common_task.settings): which (ε, δ limit) points and adjacency each runs,
that the runner calibrates every point to its own limit, that a second setting leaves the standard one's numbers
alone, and that the noise follows the adjacency's sensitivity in closed form (σ ∝ Δ at fixed (ε, δ))."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest

from ddppm.common_task.adjacency import release_sensitivity
from ddppm.common_task.bounds import bounds_at_points
from ddppm.common_task.certified import certified_delta, composed_mu
from ddppm.common_task.run import run_methods, summarise, which_method
from ddppm.common_task.settings import PREPARED, STANDARD, common_setting, common_settings
from ddppm.config import validate_config
from ddppm.core.errors import ConfigError
from ddppm.experiments.common_findings import findings, second_setting_findings
from tests.common_task.test_task import _task
from tests.conftest import REPO

OPTIONS = {"adjacency": "replace_one", "iterations": 4}


def _config() -> dict:
    import yaml

    return validate_config(yaml.safe_load((REPO / "config.yaml").read_text()))


def test_settings_pair_the_journal_grid_with_its_limits() -> None:
    config = _config()
    settings = common_settings(config)
    assert list(settings) == [STANDARD, PREPARED, "distance_one", "oracle_bounds", "journal_delta_limits"]
    section = config["common"]
    standard = settings[STANDARD]
    assert standard.adjacency == "replace_one" and standard.datasets == section["datasets"]
    assert all(limit == section["delta"] for pts in standard.points.values() for _, limit in pts)
    # the standard setting covers the raw records; every second one the prepared rows, which the old standard drew
    assert standard.scope == "raw_records" and standard.draws == ""
    assert {s.scope for name, s in settings.items() if name not in (STANDARD, "oracle_bounds")} == {"prepared_rows"}
    # oracle bounds: the standard setting's points and draws, on the data sets whose records' range is published
    oracle = settings["oracle_bounds"]
    assert oracle.scope == "raw_records" and oracle.draws == "" and oracle.adjacency == standard.adjacency
    assert set(oracle.datasets) == {"wine", "breast_cancer"} & set(section["datasets"])
    assert all(oracle.points[ds] == standard.points[ds] for ds in oracle.datasets)
    assert settings[PREPARED].points == standard.points and settings[PREPARED].draws == STANDARD
    assert settings["distance_one"].adjacency == "distance_one"
    assert settings["distance_one"].points == standard.points
    journal = settings["journal_delta_limits"]
    assert set(journal.datasets) == set(config["delta_limits"]) & set(section["datasets"])
    assert "digits" not in journal.datasets  # no journal limits for the common task's own sets
    wine = journal.points["wine"]
    assert [e for e, _ in wine] == [float(e) for e in config["epsilons"]]
    assert [d for _, d in wine] == [float(d) for d in config["delta_limits"]["wine"]]


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda c: c["common"].__setitem__("adjacency", "distance_one"), r"common\.settings: `distance_one` repeats"),
        (lambda c: c["delta_limits"].__setitem__("wine", [0.1]), r"delta_limits\.wine has 1 values but epsilons has 7"),
        (lambda c: c["common"].__setitem__("settings", ["bogus"]), r"unknown setting 'bogus'"),
    ],
)
def test_a_setting_that_cannot_be_built_names_the_key(edit, message) -> None:
    config = copy.deepcopy(_config())
    edit(config)
    with pytest.raises(ConfigError, match=message):
        common_settings(config)


def test_settings_with_no_data_set_are_skipped_and_said_once() -> None:
    """A common task on a set with neither journal limits nor a published range (digits alone): those two settings
    run on nothing, one note each says so, and a searched variant's data set outside common.datasets is noted."""
    from ddppm.experiments.common import common_notes

    config = copy.deepcopy(_config())
    config["common"]["datasets"] = ["digits"]
    settings = common_settings(config)
    assert settings["journal_delta_limits"].datasets == [] and settings["oracle_bounds"].datasets == []
    assert settings[PREPARED].datasets == ["digits"]
    notes = common_notes(config)
    assert sum("`journal_delta_limits` is skipped" in n for n in notes) == 1
    assert sum("`oracle_bounds` is skipped" in n for n in notes) == 1
    assert any(n.startswith("common.searched.methods.ddppm_workshop:") and "skipped" in n for n in notes)
    assert common_notes(_config()) == []  # the default config leaves nothing out


def test_a_data_set_that_cannot_run_from_its_records_stops_before_any_job(monkeypatch) -> None:
    """No declared bounds, a normalisation with no end-to-end route, or draws that do not divide the runs: the
    config's validation (before any job) names the key to fix."""
    import yaml

    import ddppm.data.public_prep as public_prep

    raw = yaml.safe_load((REPO / "config.yaml").read_text())
    declared = {k: v for k, v in public_prep._declared().items() if k != "wine"}
    monkeypatch.setattr(public_prep, "_declared", lambda: declared)
    with pytest.raises(ConfigError, match=r"dataset_options\.wine\.public_bounds: 'wine' has no public bounds"):
        validate_config(copy.deepcopy(raw))
    given = copy.deepcopy(raw)
    given["dataset_options"]["wine"]["public_bounds"] = {"kind": "declared", "source": "a test",
                                                         "all_features": [0, 2000]}  # fmt: skip
    assert validate_config(given)["dataset_options"]["wine"]["public_bounds"]["all_features"] == [0, 2000]
    monkeypatch.undo()
    sphere = copy.deepcopy(raw)
    sphere["dataset_options"]["wine"]["normalization"] = "sphere"
    with pytest.raises(ConfigError, match=r"dataset_options\.wine\.normalization: 'sphere' has no end-to-end"):
        validate_config(sphere)
    draws = copy.deepcopy(raw)
    draws["common"] = {"runs": 25, "preprocessing": {"draws": 10}}
    with pytest.raises(ConfigError, match=r"common\.preprocessing\.draws = 10 must divide common\.runs = 25"):
        validate_config(draws)


def test_validation_refuses_a_setting_the_schema_does_not_know() -> None:
    import yaml

    raw = yaml.safe_load((REPO / "config.yaml").read_text())
    raw["common"] = {"settings": ["journal"]}
    with pytest.raises(ConfigError, match=r"common\.settings"):
        validate_config(raw)
    raw["common"] = {"adjacency": "distance_one"}  # the default second settings include distance_one
    with pytest.raises(ConfigError, match=r"common\.settings: `distance_one` repeats"):
        validate_config(raw)
    raw["common"] = {"adjacency": "distance_one", "settings": ["journal_delta_limits"]}
    assert common_setting("journal_delta_limits", validate_config(raw)).adjacency == "distance_one"


def test_each_point_is_calibrated_to_its_own_limit_and_settings_do_not_disturb_each_other() -> None:
    task = _task(np.random.default_rng(6), n=200, d=5, k=1, m=4)
    limits = [0.3, 1e-4]
    runs = run_methods(task, [1.0, 5.0], limits, 4, 0, OPTIONS, dataset="toy", setting="journal_delta_limits")
    summary = summarise(runs)
    assert set(summary["setting"]) == {"journal_delta_limits"}
    for (_, eps), row in summary.set_index(["method", "eps"]).iterrows():
        limit = limits[[1.0, 5.0].index(eps)]
        assert row["delta_limit"] == limit
        if row.name[0] == "amin":  # pure ε-DP: δ = 0 whatever the limit
            assert row["delta"] == 0.0
        elif row.name[0] in ("ldp", "fpca"):  # their papers' σ formulas (classic, MOD-SuLQ): within, not at, the limit
            assert row["delta"] <= limit
        elif row["privacy_column"] == "certified":
            assert row["delta"] == pytest.approx(limit, rel=1e-6)
    # The standard setting's generators are unchanged by another setting's existence; a second setting draws anew
    # unless it reuses the standard's draws (distance_one: then a method whose σ does not change gives the same
    # runs: the one-direction power step has Δ = 1 under both adjacencies).
    standard = run_methods(task, [1.0], 1e-5, 4, 0, OPTIONS, dataset="toy")
    again = run_methods(task, [1.0], [1e-5], 4, 0, OPTIONS, dataset="toy")
    other = run_methods(task, [1.0], 1e-5, 4, 0, OPTIONS, dataset="toy", setting="journal_delta_limits")
    paired = run_methods(task, [1.0], 1e-5, 4, 0, {**OPTIONS, "adjacency": "distance_one"}, dataset="toy",
                         setting="distance_one", draws=STANDARD)  # fmt: skip
    np.testing.assert_array_equal(standard["error"], again["error"])
    assert not np.array_equal(standard["error"], other["error"])
    same_sigma = standard["method"] == "ddppm_certified"
    np.testing.assert_array_equal(standard["error"][same_sigma], paired["error"][same_sigma])
    assert not np.array_equal(standard["error"][standard["method"] == "conventional"],
                              paired["error"][paired["method"] == "conventional"])  # fmt: skip
    assert common_setting("distance_one", _config()).draws == STANDARD


def test_distance_one_scales_noise_by_the_sensitivity_ratio() -> None:
    """At fixed (ε, δ) a Gaussian mechanism's σ is proportional to Δ (σ/Δ depends on (ε, δ) only), so switching
    the adjacency multiplies each method's noise by its release's Δ ratio: 1/2 for rows, √3/2 for a second-moment
    release, 1 for a one-direction power step; and the observer's σ/Δ is unchanged."""
    task = _task(np.random.default_rng(2), n=120, d=4, k=1, m=4)
    one = summarise(run_methods(task, [2.0], 1e-5, 2, 0, OPTIONS, dataset="toy")).set_index("method")
    dist = summarise(
        run_methods(task, [2.0], 1e-5, 2, 0, {**OPTIONS, "adjacency": "distance_one"}, dataset="toy",
                    setting="distance_one")
    ).set_index("method")  # fmt: skip
    ratio = {
        "ldp_analytic": release_sensitivity("rows", "distance_one") / release_sensitivity("rows", "replace_one"),
        "conventional": np.sqrt(3 / 4),
        "cape": np.sqrt(3 / 4),
        "ldppca_gaussian": np.sqrt(3 / 4),
        "ddppm_certified": 1.0,
    }
    assert ratio["ldp_analytic"] == pytest.approx(0.5)
    for name, expected in ratio.items():
        assert dist.loc[name, "sigma"] / one.loc[name, "sigma"] == pytest.approx(expected, rel=1e-9), name
    calibrated = dist.index[np.isclose(dist["delta"], 1e-5, rtol=1e-6)]  # not a paper's own σ formula (FPCA's)
    np.testing.assert_allclose(dist.loc[calibrated, "noise_multiplier"], one.loc[calibrated, "noise_multiplier"],
                               rtol=1e-9)  # fmt: skip
    # The observer's σ/Δ and the number of releases give back the certified δ (an independent composition).
    releases = {"ldp_analytic": 1, "conventional": 1, "cape": 1, "ddppm_certified": OPTIONS["iterations"]}
    for name, count in releases.items():
        mu = composed_mu([1.0] * count, [one.loc[name, "noise_multiplier"]] * count)
        assert certified_delta(mu, 2.0) == pytest.approx(1e-5, rel=1e-6), name


def test_bounds_take_each_points_own_limit() -> None:
    bounds = pd.DataFrame(
        {"dataset": "a", "method": "m", "label": "M", "trust_model": "gossip", "eps": [1.0, 5.0],
         "delta_at_least": [0.5, 0.01], "basis": "floor"}
    )  # fmt: skip
    got = bounds_at_points(bounds, {"a": [(1.0, 0.38), (5.0, 0.008), (5.0, 0.02)], "b": [(1.0, 0.1)]}, "journal")
    assert list(got["no_parameters_meet_limit"]) == [True, True, False]
    assert set(got["setting"]) == {"journal"} and set(got["dataset"]) == {"a"}


def test_findings_state_each_second_setting_with_numbers() -> None:
    task = _task(np.random.default_rng(6), n=200, d=5, k=1, m=4)
    frames = [
        run_methods(task, [1.0, 5.0], 1e-5, 4, 0, OPTIONS, dataset="toy"),
        run_methods(task, [1.0, 5.0], [0.38, 0.008], 4, 0, OPTIONS, dataset="toy", setting="journal_delta_limits"),
    ]
    summary = summarise(pd.concat(frames, ignore_index=True))
    which = which_method(summary)
    assert set(which["setting"]) == {STANDARD, "journal_delta_limits"}
    lines = second_setting_findings(which, summary)
    assert len(lines) == 1 and lines[0].startswith("Setting journal_delta_limits, toy, k = 1: at ε = 5 (δ ≤ 0.008)")
    journal = which[which["setting"] == "journal_delta_limits"]
    local = journal[(journal["eps"] == 5.0) & (journal["trust_model"] == "local")]
    assert f"error {local['error_mean'].iloc[0]:.3f}" in lines[0] and "[standard setting:" in lines[0]
    section = {"delta": 1e-5, "adjacency": "replace_one", "runs": 4, "iterations": 4}
    standard_lines = findings(which, summary, section)
    assert standard_lines[-1] == lines[0] and sum("toy, k = 1, ε = 5" in line for line in standard_lines) == 1


def test_the_readme_says_where_the_ranking_changes_against_the_prepared_rows() -> None:
    from ddppm.experiments.common_findings import ranking_changes

    rows = []
    for setting, best in ((STANDARD, ("a", "b")), (PREPARED, ("a", "c"))):
        for trust, name in zip(("central", "local"), best, strict=True):
            rows.append({"setting": setting, "dataset": "toy", "k": 1, "eps": 5.0, "trust_model": trust,
                         "best": name, "error_mean": 0.1 if name == "a" else 0.4})  # fmt: skip
    (line,) = ranking_changes(pd.DataFrame(rows))
    assert "the same at 1 of 2" in line
    assert "toy k = 1 (no trusted party): b 0.400 from the raw records, c 0.400 on the prepared rows" in line
    assert ranking_changes(pd.DataFrame(rows[:2])) == []  # no prepared_rows setting: nothing to compare
