"""The samples study (ddppm.studies.samples): the public-bound rows and their population direction, the rate fit
against exact power laws, the claims' verdicts on constructed summaries, its config checks, and a small run."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ddppm.core.errors import ConfigError
from ddppm.core.schema import section_with_defaults
from ddppm.experiments import get_experiment
from ddppm.studies.findings import study_findings
from ddppm.studies.run import run_study, study_summary
from ddppm.studies.samples import NONTRIVIAL, beats_findings, public_bound_rows, rate_findings, rate_fits


def _section(**samples):
    return get_experiment("studies").default_section(runs=4, samples={"ns": [400, 1600], "ds": [4, 8],
                                                                      "epsilons": [5], **samples})  # fmt: skip


def test_the_rows_lie_in_the_unit_ball_and_their_spike_is_the_population_direction() -> None:
    """Rows within the unit ball, under 1 % clipped; the sample's top eigenvector of many rows meets the returned
    population direction (|cos| > 0.99), and the mean squared norm is tr Σ / (4 tr Σ) = 1/4 up to clipping."""
    X, v = public_bound_rows(40_000, 10, (8.0, 4.0), seed=3)
    norms = np.linalg.norm(X, axis=1)
    assert norms.max() <= 1 + 1e-12 and np.mean(norms >= 1 - 1e-12) < 0.01
    assert np.mean(norms**2) == pytest.approx(0.25, rel=0.02)
    top = np.linalg.eigh(X.T @ X)[1][:, -1]
    assert abs(float(top @ v[:, 0])) > 0.99


def _power_law_summary(a: float, b: float, scale: float = 0.05, method: str = "m") -> pd.DataFrame:
    rows = []
    for d in (10, 30, 100):
        for n in (1000, 10_000, 100_000):
            error = scale * (n / 1000) ** a * (d / 10) ** b
            rows.append({"d": d, "n": n, "method": method, "eps": 1.0, "population_error_mean": error,
                         "population_error_ci_lo": 0.95 * error, "population_error_ci_hi": 1.05 * error})  # fmt: skip
    return pd.DataFrame(rows)


def test_the_rate_fit_recovers_an_exact_power_law_on_its_nontrivial_points() -> None:
    summary = _power_law_summary(-0.75, 1.25)
    fit = rate_fits(summary).iloc[0]
    used = (summary["population_error_mean"] <= NONTRIVIAL).sum()
    assert fit["points"] == used < len(summary)  # the saturated corner is left out
    assert fit["a"] == pytest.approx(-0.75, abs=1e-9) and fit["b"] == pytest.approx(1.25, abs=1e-9)
    assert fit["a_half"] < 1e-6 and fit["b_half"] < 1e-6


def test_the_claims_verdicts_follow_the_intervals() -> None:
    """A method better at every largest n holds; one worse everywhere does not; a d-exponent of 1.5 is outside
    the rate's [0.5, 1] and one of 0.8 inside."""
    good = pd.concat([_power_law_summary(-1.0, 1.0, 0.01, "new"), _power_law_summary(-1.0, 1.5, 0.05, "old")])
    claim = {"claim": "beats old", "against": ["old"]}
    fits = rate_fits(good)
    assert "beats old: holds here" in beats_findings(good, fits, "new", claim)[0]
    bad = pd.concat([_power_law_summary(-1.0, 1.0, 0.2, "new"), _power_law_summary(-1.0, 1.0, 0.01, "old")])
    assert "does not hold here" in beats_findings(bad, rate_fits(bad), "new", claim)[0]
    rate = {"claim": "a rate", "rate": {"n": [-1.0, -0.5], "d": [0.5, 1.0]}}
    steep = _power_law_summary(-1.0, 1.5, 0.002)
    steep["population_error_ci_lo"] *= 0.999  # an interval around the fit: exact data have none
    out = rate_findings(steep, rate_fits(steep), "m", rate)[0]
    assert "does not hold here" in out and "d-exponent" in out
    fine = _power_law_summary(-0.8, 0.8, 0.01)
    assert "consistent with it" in rate_findings(fine, rate_fits(fine), "m", rate)[0]


def test_a_claim_naming_a_method_the_study_does_not_run_is_refused() -> None:
    experiment = get_experiment("studies")

    def unchecked(**samples):
        return section_with_defaults(experiment.schema, "studies", {"samples": samples})

    with pytest.raises(ConfigError, match=r"studies\.samples\.claims\.\w+: .* not in studies\.samples\.methods"):
        experiment.check_config(unchecked(methods=["analyze_gauss"]))
    with pytest.raises(ConfigError, match=r"studies\.samples\.spikes"):
        experiment.check_config(unchecked(ds=[4, 8], spikes=[8, 4, 2, 1.5]))


def test_a_small_samples_study_runs_and_judges_both_claims() -> None:
    section = _section()
    runs = run_study("samples", section)
    assert set(runs["method"]) == set(section["samples"]["methods"])
    assert runs["population_error"].between(0, 1).all() and len(runs) == 2 * 2 * 3 * 4
    summary = study_summary("samples", runs)
    assert {"population_error_mean", "population_error_ci_lo", "label"} <= set(summary.columns)
    lines = study_findings("samples", summary, section)
    assert sum(line.startswith("Claim, ") for line in lines) == len(section["samples"]["claims"])
