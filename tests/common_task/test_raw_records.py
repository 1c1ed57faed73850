"""The common task from the raw records (ddppm.common_task.raw_records): one replaced record moves each one-release
method's noise-free release by at most its stated sensitivity (measured on the two outputs, end to end from raw
records), every row's δ composes the preprocessing with the method, the rows the methods run on are the
simulated preprocessing's, intervals count draws, and a data set that cannot run end to end stops before any job."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t as student_t

from ddppm.common_task.base import top_k
from ddppm.common_task.preprocessing import (
    PreprocessingPlan,
    preprocessing_noise,
    private_standardise,
    release_statistics,
    standardise_rows,
)
from ddppm.common_task.range_finding import private_intervals, to_box
from ddppm.common_task.raw_records import STREAM, RawRecords, raw_records_runs, reference_task
from ddppm.common_task.run import summarise
from ddppm.common_task.task import CommonTask, subspace_error
from ddppm.core.errors import ConfigError
from ddppm.core.seeds import run_generators
from ddppm.data import load_dataset
from ddppm.data.public_prep import PublicBounds, prepare_public, public_bounds
from ddppm.methods import get_method

OPTIONS = {"adjacency": "replace_one", "iterations": 3}


def _upper(matrix: np.ndarray) -> np.ndarray:
    return matrix[np.triu_indices(matrix.shape[0])]


def _agents_upper(rows: np.ndarray, parts) -> np.ndarray:
    return np.concatenate([_upper(rows[p].T @ rows[p]) for p in parts])


# What each one-release Gaussian method releases before its noise, as a function of the rows it runs on.
RELEASES = {
    "analyze_gauss": lambda rows, parts: _upper(rows.T @ rows),  # the curator's second moment
    "ldppca_gaussian": lambda rows, parts: np.concatenate([_upper(np.outer(x, x)) for x in rows]),  # each x xᵀ
    "ldp": lambda rows, parts: rows.ravel(),  # every row
    "ldp_analytic": lambda rows, parts: rows.ravel(),
    "conventional": _agents_upper,  # every agent's second moment
    "cape": _agents_upper,  # the aggregator's view moves with one agent's second moment
}


@pytest.mark.parametrize("estimator", ["range_shrinking", "one_shot"])
@pytest.mark.parametrize("name", sorted(RELEASES))
def test_one_record_moves_each_release_by_at_most_its_stated_sensitivity(name, estimator):
    """Raw Wine records, one replaced by extreme records or by another record: end to end (public bounds, the
    private box where the estimator finds one, then the private standardisation at fixed releases, which the
    composition accounts for), the noise-free release of the two data sets moves by at most the sensitivity the
    method states, and the extremes come close to it."""
    X = np.array(load_dataset("wine", source="default").matrix)
    bounds = public_bounds("wine", X.shape[1])
    plan = PreprocessingPlan(estimator=estimator)
    Z = prepare_public(X, bounds)
    noise = preprocessing_noise(plan, 5.0, X.shape[1], 1, len(X))
    box = private_intervals(Z, plan.range, noise.sigma_range, 1, noise.range_rounds, np.random.default_rng(0))
    assert (noise.range_rounds > 0) == (estimator == "range_shrinking")

    def prepared(records: np.ndarray) -> np.ndarray:
        return to_box(prepare_public(records, bounds), *box)

    released = release_statistics(prepared(X), noise, plan, np.random.default_rng(0))
    parts = tuple(np.array_split(np.arange(len(X)), 4))
    rows = standardise_rows(prepared(X), released, plan)
    method = get_method(name)
    stated = method.common_calibrate(CommonTask(rows, parts, 1), 1.0, 1e-5, OPTIONS).releases[0].sensitivity
    base = RELEASES[name](rows, parts)
    rng, moves = np.random.default_rng(1), []
    for trial in range(150):
        other = X.copy()
        i = int(rng.integers(len(X)))
        direction = rng.standard_normal(X.shape[1])
        other[i] = X[int(rng.integers(len(X)))] if trial % 5 == 0 else X.mean(axis=0) + 1e4 * direction
        moved = standardise_rows(prepared(other), released, plan)
        moves.append(np.linalg.norm(RELEASES[name](moved, parts) - base))
    assert max(moves) <= stated * (1 + 1e-12)
    assert max(moves) >= 0.5 * stated  # measured, and the statement is not loose by much on these pairs


def _records(normalization: str = "standardize") -> RawRecords:
    X = np.array(load_dataset("wine", source="default").matrix)
    parts = tuple(np.array_split(np.random.default_rng(0).permutation(len(X)), 4))
    W = np.full((4, 4), 0.25)
    return RawRecords(X, parts, W, 1, public_bounds("wine", X.shape[1]), normalization)


def _methods():
    return {name: get_method(name) for name in ("analyze_gauss", "amin", "conventional", "ldppca_gaussian")}


def test_every_row_composes_the_preprocessing_with_its_method():
    runs = raw_records_runs(_records(), [1.0, 5.0], [1e-5, 1e-5], [1, 2], 6, 3, 0, PreprocessingPlan(), OPTIONS,
                            dataset="wine", methods=_methods())  # fmt: skip
    assert set(runs["scope"]) == {"raw_records"}
    methods = runs[~runs["method"].str.startswith("preprocessing_only")]
    assert methods["feasible"].all()
    assert (methods["delta"] <= 1e-5 * (1 + 1e-9)).all()
    # Gaussian methods and the pure one spend the whole budget together with the preprocessing
    np.testing.assert_allclose(methods["delta"], 1e-5, rtol=1e-6)
    amin = methods[methods["method"] == "amin"]
    assert (amin["trust_model"] == "central").all() and (amin["preprocessing"] == "curator").all()
    assert set(methods[methods["method"] == "ldppca_gaussian"]["preprocessing"]) == {"individuals"}
    assert set(runs["method"]) >= {"preprocessing_only_curator", "preprocessing_only_agents",
                                   "preprocessing_only_individuals"}  # fmt: skip
    assert runs["error"].between(0, 1).all()
    assert (runs.groupby(["method", "k", "eps"])["draw"].nunique() == 3).all()


def test_the_methods_run_on_the_simulated_preprocessings_rows():
    """The preprocessing-only rows are the exact PCA of the rows each draw produced: rebuilt here from the same
    generators, they give the same errors against the same target."""
    records, plan = _records(), PreprocessingPlan()
    runs = raw_records_runs(records, [2.0], [1e-5], [1], 4, 2, 7, plan, OPTIONS, dataset="wine",
                            methods={"analyze_gauss": get_method("analyze_gauss")})  # fmt: skip
    from ddppm.common_task.budget import split_budget

    Z = prepare_public(records.X, records.bounds)
    noise = preprocessing_noise(plan, split_budget(2.0, 1e-5, plan.share).mu_pre, Z.shape[1], 1, Z.shape[0])
    target = reference_task(records, 1)
    expected = []
    for rng in run_generators(7, ("wine", "preprocessing", "curator", 2.0, STREAM), range(2)):
        rows = private_standardise(Z, noise, plan, rng)
        expected.append(float(subspace_error(top_k((rows.T @ rows)[None], 1)[0], target.V)))
    alone = runs[runs["method"] == "preprocessing_only_curator"].sort_values("run")
    np.testing.assert_allclose(alone["error"], np.repeat(expected, 2), rtol=1e-12)


def test_without_standardisation_there_is_no_preprocessing_to_pay():
    """normalization: scale (the analyst does not centre): the public map only, the method gets the whole budget."""
    X = np.random.default_rng(2).standard_normal((300, 4)) * [3.0, 1.0, 0.5, 0.2]
    bounds = PublicBounds(np.full(4, -8.0), np.full(4, 8.0), "construction", "a test", row_norm=10.0)
    records = RawRecords(X, tuple(np.array_split(np.arange(300), 3)), None, 1, bounds, "scale")
    runs = raw_records_runs(records, [5.0], [1e-5], [1], 4, 2, 0, PreprocessingPlan(), OPTIONS,
                            methods={"analyze_gauss": get_method("analyze_gauss")})  # fmt: skip
    assert set(runs["method"]) == {"analyze_gauss"} and set(runs["preprocessing"]) == {"none"}
    direct = get_method("analyze_gauss").common_calibrate(CommonTask(X / 10, records.parts, 1), 5.0, 1e-5, OPTIONS)
    assert runs["delta"].iloc[0] == pytest.approx(direct.delta)
    assert runs["sigma"].iloc[0] == pytest.approx(direct.params["sigma"])


def test_draws_must_divide_runs():
    with pytest.raises(ConfigError, match="draws"):
        raw_records_runs(_records(), [1.0], [1e-5], [1], 5, 2, 0, PreprocessingPlan(), OPTIONS, methods=_methods())


def test_the_interval_counts_draws_not_runs():
    rng = np.random.default_rng(5)
    draw = np.repeat(np.arange(5), 4)
    errors = rng.uniform(0.2, 0.4, 5)[draw] + rng.normal(0, 0.01, 20)
    runs = pd.DataFrame({"setting": "standard", "scope": "raw_records", "dataset": "x", "k": 1, "method": "m",
                         "trust_model": "central", "privacy_column": "certified", "eps": 1.0, "delta_limit": 1e-5,
                         "delta": 1e-5, "feasible": True, "sigma": 1.0, "noise_multiplier": 1.0, "run": range(20),
                         "error": errors, "captured_variance": 0.5, "seconds_per_run": 0.0, "floats_per_agent": 1,
                         "rounds": 1, "memory": "", "chance_error": 0.9, "draw": draw})  # fmt: skip
    row = summarise(runs).iloc[0]
    means = pd.Series(errors).groupby(draw).mean()
    half = student_t.ppf(0.975, 4) * means.std(ddof=1) / np.sqrt(5)
    assert row["error_ci_hi"] - row["error_mean"] == pytest.approx(half)
    assert half > 1.96 * errors.std(ddof=1) / np.sqrt(20)  # correlated runs: wider than the runs' interval


def test_added_draws_are_the_draws_a_longer_run_would_have_made(monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulation identity: draws added at a point (raw_records.add_draws_until_separated) are exactly draws 2..3 of a
    run with four draws from the start, for the methods of an open competitive set, and nothing else is added."""
    import ddppm.common_task.raw_records as raw_records

    records, plan = _records(), PreprocessingPlan()
    first = raw_records_runs(records, [5.0], [1e-5], [1], 4, 2, 0, plan, OPTIONS, dataset="wine", methods=_methods())
    calls = iter([["analyze_gauss", "conventional"], []])
    monkeypatch.setattr(raw_records, "open_sets", lambda point: next(calls))
    extended = raw_records.add_draws_until_separated(records, first, 5.0, 1e-5, 1, 8, 0, plan, OPTIONS, "wine")
    added = extended[extended["adaptive"]]
    assert set(added["method"]) == {"analyze_gauss", "conventional"} and set(added["draw"]) == {2, 3}
    pair = {name: get_method(name) for name in ("analyze_gauss", "conventional")}
    longer = raw_records_runs(records, [5.0], [1e-5], [1], 8, 4, 0, plan, OPTIONS, dataset="wine", methods=pair)
    longer = longer[(longer["draw"] >= 2) & longer["method"].isin(["analyze_gauss", "conventional"])]
    longer = longer.set_index(["method", "run"])["error"].sort_index()
    assert len(longer) == 8
    added = added.set_index(["method", "run"])["error"].sort_index()
    np.testing.assert_array_equal(added.to_numpy(), longer.to_numpy())


def test_added_draws_stop_at_the_cap() -> None:
    """With every set open (two methods of the same law cannot separate), draws double up to the cap and no further."""
    import ddppm.common_task.raw_records as raw_records

    records, plan = _records(), PreprocessingPlan()
    first = raw_records_runs(records, [5.0], [1e-5], [1], 4, 2, 0, plan, OPTIONS, dataset="wine", methods=_methods())
    original = raw_records.open_sets
    try:
        raw_records.open_sets = lambda point: ["conventional"]
        extended = raw_records.add_draws_until_separated(records, first, 5.0, 1e-5, 1, 5, 0, plan, OPTIONS, "wine")
    finally:
        raw_records.open_sets = original
    assert sorted(set(extended["draw"])) == [0, 1, 2, 3, 4]  # 2, then 2 more, then 1 to reach the cap of 5
