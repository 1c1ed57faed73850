"""Tests of ddppm.calibration.calibrate on a small synthetic problem (paper view, tiny grid, for speed)."""

from __future__ import annotations

import numpy as np
import pytest

import ddppm.accounting.calibration as calibration
from ddppm.accounting.accountant import AccountantSettings, evaluate_delta
from ddppm.accounting.calibration import CalibrationGrid, calibrate, params_from_row
from ddppm.core.errors import ConfigError, PrivacyError
from ddppm.testing import synthetic_problem

EPS = np.array([2.0, 5.0, 20.0])
LOOSE = np.array([0.5, 0.1, 0.01])
TIGHT = np.array([0.05, 1e-3, 1e-5])
GRID = CalibrationGrid(kappas=(0.3, 3.0, 30.0, 300.0), runs=20, t_max=30)
SETTINGS = AccountantSettings(view="paper", realisations=3, candidate_rows=1)


@pytest.fixture(scope="module")
def problem():
    return synthetic_problem(48, 4, (3.0, 1.6, 1.0, 0.5), seed=2, c=10)


class RecordingCandidates(calibration.JournalCandidates):
    """The journal's candidate family, recording the parameters of every δ evaluation the calibration asks for
    (injected: the calibration takes its family as an argument)."""

    def __init__(self) -> None:
        self.seen: list[tuple] = []

    def evaluate_delta(self, problem, params, eps, settings, only_pairs=None, neighbours=None):
        self.seen.append(params.canonical_key())
        return super().evaluate_delta(problem, params, eps, settings, only_pairs, neighbours)


def _recording_calibrate(problem, limits):
    """Run calibrate while recording the parameters of every evaluate_delta call it makes."""
    family = RecordingCandidates()
    result = calibrate(problem, EPS, limits, GRID, SETTINGS, seed=0, family=family)
    return result, family.seen


@pytest.fixture(scope="module")
def loose(problem):
    return _recording_calibrate(problem, LOOSE)


@pytest.fixture(scope="module")
def tight(problem):
    return calibrate(problem, EPS, TIGHT, GRID, SETTINGS, seed=0)


@pytest.fixture(scope="module")
def impossible(problem):
    return calibrate(problem, EPS, np.full(3, 1e-300), GRID, SETTINGS, seed=0)


def test_chosen_rows_meet_their_limit_by_the_independent_reference(problem, loose, tight):
    """Each chosen row's δ recomputed by :func:`delta_reference`: the literal M, L of eq. (20)–(21), eigh ranges,
    slogdet/solve and scipy's minimiser, sharing no numerics with ``evaluate_delta`` (only which neighbours and
    own-randomness realisations are evaluated)."""
    from ddppm.accounting.reference import delta_reference

    checked = 0
    for result, limits in ((loose[0], LOOSE), (tight, TIGHT)):
        for _, row in result.chosen[result.chosen["met"]].iterrows():
            e_idx = int(np.flatnonzero(EPS == row["eps"])[0])
            reference = delta_reference(problem, params_from_row(row), EPS, SETTINGS)
            assert reference.delta[e_idx] == pytest.approx(row["delta"], rel=1e-5, abs=1e-300)
            assert reference.delta[e_idx] <= limits[e_idx] * (1 + 1e-5)
            checked += 1
    assert checked >= 4


def test_chosen_rows_reproduce_on_reevaluation(problem, loose, tight):
    """The same δ again from the stored row alone (the row holds every parameter the δ depends on)."""
    for result, limits in ((loose[0], LOOSE), (tight, TIGHT)):
        chosen = result.chosen
        assert len(chosen) == EPS.size
        assert result.t_star_reached and 1 <= result.t_star <= GRID.t_max
        met = chosen[chosen["met"]]
        assert len(met) >= 2  # the test is not vacuous
        for _, row in met.iterrows():
            e_idx = int(np.flatnonzero(EPS == row["eps"])[0])
            params = params_from_row(row)
            assert params.T == row["T"]
            again = evaluate_delta(problem, params, EPS, SETTINGS)
            assert again.delta[e_idx] <= limits[e_idx]
            assert again.delta[e_idx] == pytest.approx(row["delta"], rel=1e-12)
            assert row["delta"] <= row["delta_limit"] == limits[e_idx]
            # the reported error is the Monte-Carlo error of the row's candidate in the table
            cands = result.candidates
            match = cands[
                (cands["eps"] == row["eps"])
                & np.isclose(cands["scale"], row["scale"])
                & (cands["T"] == row["T"])
                & np.isclose(cands["ratio"], row["ratio"])
            ]
            assert row["error_mean"] in match["error_mean"].to_numpy()


def test_tighter_limits_never_give_smaller_error_on_the_same_coarse_grid(loose, tight):
    """The fine stage refines around each limit's own best point, so only the coarse frontier is shared:
    on it, a tighter limit can only leave fewer candidates, never a smaller least error."""

    def best_coarse(result, limits):
        cands = result.candidates[result.candidates["stage"] == "coarse"]
        out = []
        for e, lim in zip(EPS, limits, strict=True):
            ok = cands[np.isclose(cands["eps"], e) & (cands["delta_screen"] <= lim)]
            out.append(ok["error_mean"].min() if len(ok) else np.inf)
        return np.array(out)

    assert np.all(best_coarse(tight, TIGHT) >= best_coarse(loose[0], LOOSE))
    assert loose[0].chosen["met"].sum() >= tight.chosen["met"].sum()
    # and the choice is the least-error candidate that passed its confirmation
    for result in (loose[0], tight):
        for _, row in result.chosen[result.chosen["met"]].iterrows():
            confirmed = result.candidates[np.isclose(result.candidates["eps"], row["eps"])]
            confirmed = confirmed[confirmed["delta_full"] <= row["delta_limit"]]
            assert row["error_mean"] == confirmed["error_mean"].min()


def test_impossible_limit_is_reported_not_picked(impossible):
    chosen = impossible.chosen
    assert not chosen["met"].any()
    assert chosen["reason"].str.len().gt(0).all()
    assert "alpha" not in chosen.columns or chosen["alpha"].isna().all()
    # every candidate's screened δ is above the limit, so none could have been picked
    assert (impossible.candidates["delta_screen"] > 1e-300).all()


def test_candidates_table_records_every_evaluated_candidate(loose):
    result, seen = loose
    cands = result.candidates
    assert set(cands["stage"]) == {"coarse", "fine"}
    # one row per (candidate, ε)
    assert cands.groupby("candidate")["eps"].apply(lambda s: sorted(s.tolist()) == sorted(EPS.tolist())).all()
    assert len(cands) == cands["candidate"].nunique() * EPS.size
    # every coarse grid point is represented (no two default families coincide)
    coarse = cands[cands["stage"] == "coarse"]
    t_star = result.t_star
    assert set(coarse["T"]) == {t_star, *(T for T in GRID.t_coarse if T <= t_star + 2)}, "the frontier from T = 1"
    assert min(coarse["T"]) == 1
    assert coarse["candidate"].nunique() == coarse["T"].nunique() * len(calibration._families(GRID)) * len(GRID.kappas)
    keys = {params_from_row(r).canonical_key() for _, r in cands.iterrows()}
    assert len(keys) == cands["candidate"].nunique()
    # every parameter set for which the accountant was run is in the table
    assert set(seen) <= keys
    # confirmed (full) δ is recorded for the verified candidates
    assert cands["delta_full"].notna().sum() == result.chosen["n_verified"].sum()
    for _, row in result.chosen[result.chosen["met"]].iterrows():
        verified = cands[(cands["eps"] == row["eps"]) & cands["delta_full"].notna()]
        assert (verified["delta_full"] <= row["delta_limit"]).sum() == 1  # the pick, and only it, passed
    assert np.all(cands["delta_screen"].between(0, 1))


@pytest.mark.parametrize("limits", [[0.0, 0.1, 0.01], [0.5, 1.0, 0.01], [0.5, 0.1, -1e-3], [0.5, 0.1, 2.0]])
def test_limits_outside_unit_interval_raise(problem, limits):
    with pytest.raises(PrivacyError, match="delta_limits"):
        calibrate(problem, EPS, np.array(limits), GRID, SETTINGS)


def test_regression_nan_limit_is_accepted():
    """Regression (fixed) in calibration.check_limits): ``np.any(limits <= 0) or np.any(limits >= 1)`` is False for
    NaN, so a
    NaN δ limit passes validation and calibrate runs the whole search and reports met=False for that ε.
    Fix: ``if not np.all((limits > 0) & (limits < 1)): raise PrivacyError(...)``."""
    with pytest.raises(PrivacyError, match="delta_limits"):
        calibration.check_limits(EPS, np.array([0.5, 0.1, np.nan]))


@pytest.mark.parametrize("limits", [[0.5, 0.1], [0.5, 0.1, 0.01, 0.001], []])
def test_limits_of_wrong_length_raise(problem, limits):
    with pytest.raises(ConfigError, match="delta_limits"):
        calibrate(problem, EPS, np.array(limits), GRID, SETTINGS)


def test_grid_validation():
    with pytest.raises(ConfigError, match="calibration.kappas"):
        CalibrationGrid(kappas=(0.0, 1.0))
    with pytest.raises(ConfigError, match="calibration.ratios"):
        CalibrationGrid(ratios=("golden",))
    with pytest.raises(ConfigError, match="calibration.runs"):
        CalibrationGrid(runs=1)
