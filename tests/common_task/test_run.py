"""The units the "which method" ranking pairs over (ddppm.common_task.run.unit_errors): preprocessing draws where the
runs share a private standardisation, runs where there is none."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ddppm.common_task.run import unit_errors


def _runs(preprocessing: str) -> pd.DataFrame:
    rows = [{"method": m, "run": r, "draw": r // 5, "preprocessing": preprocessing, "error": 0.1 * r + i}
            for i, m in enumerate(("a", "b")) for r in range(20)]  # fmt: skip
    return pd.DataFrame(rows)


def test_shared_draws_are_the_units() -> None:
    units = unit_errors(_runs("curator"))
    assert units.shape == (4, 2)  # four draws of five runs each
    np.testing.assert_allclose(units["a"].to_numpy(), [0.2, 0.7, 1.2, 1.7])


def test_without_preprocessing_noise_every_run_is_a_unit() -> None:
    units = unit_errors(_runs("none"))
    assert units.shape == (20, 2) and units.loc[7, "b"] == pytest.approx(1.7)


def test_the_summary_interval_counts_runs_where_no_draw_is_shared() -> None:
    """Without preprocessing noise (every run on draw 0) the interval is over the runs, not NaN over one draw."""
    from ddppm.common_task.run import summarise

    runs = _runs("none").assign(setting="standard", dataset="s", k=1, trust_model="local", privacy_column="certified",
                                eps=1.0, delta_limit=1e-5, delta=1e-5, feasible=True, sigma=1.0, noise_multiplier=1.0,
                                floats_per_agent=1, rounds=1, memory="d", chance_error=0.9, captured_variance=0.5,
                                seconds_per_run=0.0)  # fmt: skip
    summary = summarise(runs).set_index("method")
    a = summary.loc["a"]
    assert np.isfinite(a["error_ci_lo"]) and a["error_ci_lo"] < a["error_mean"]
    shared = summarise(runs.assign(preprocessing="curator")).set_index("method")
    assert shared.loc["a", "error_ci_hi"] - shared.loc["a", "error_ci_lo"] > 0  # over the four draws' means


def _point(seed: int) -> pd.DataFrame:
    """One point's runs: methods of three trust models, some runs unfinished, one method with fewer runs, errors
    on scales that make summation order matter."""
    rng = np.random.default_rng(seed)
    rows = []
    for i, (method, trust) in enumerate((("c1", "central"), ("c2", "central"), ("s1", "secure_aggregation"),
                                         ("g1", "gossip"), ("l1", "local"))):  # fmt: skip
        for r in range(37 if method != "s1" else 23):
            rows.append({"setting": "standard", "dataset": "x", "k": 2, "eps": 1.0, "method": method,
                         "trust_model": trust, "privacy_column": "certified", "feasible": True, "run": r,
                         "chance_error": 0.9, "finished": not (method == "g1" and r % 7 == 3),
                         "error": float(rng.uniform(0, 1) * 10.0 ** rng.integers(-8, 1)) + 0.1 * i})  # fmt: skip
    return pd.DataFrame(rows)


def test_rankings_equal_a_ranking_of_each_trust_levels_own_runs() -> None:
    """:func:`rankings` pivots every usable method once and takes each trust level's columns; a ranking of each
    level's own pivot (:func:`unit_errors` of its runs) must give the same tables, bit for bit."""
    from ddppm.common_task.ranking import rank_methods
    from ddppm.common_task.run import TRUST_LEVELS, TRUST_ORDER, rankings

    for seed in range(3):
        runs = _point(seed)
        got = rankings(runs)
        assert set(got) == set(TRUST_LEVELS)
        for trust in TRUST_LEVELS:
            allowed = runs[runs["trust_model"].map(TRUST_ORDER) >= TRUST_ORDER[trust]]
            expected = rank_methods(unit_errors(allowed), 0.9**2)
            pd.testing.assert_frame_equal(got[trust].table, expected.table, check_exact=True)
            assert (got[trust].members, got[trust].beats_chance, got[trust].runs) == (
                expected.members, expected.beats_chance, expected.runs)  # fmt: skip


def test_the_summary_equals_each_groups_statistics() -> None:
    """:func:`summarise` (one pass over row positions) against each group's statistics computed on its own."""
    from ddppm.common_task.run import summarise

    runs = pd.concat([_point(0), _point(1).assign(eps=2.0)], ignore_index=True)
    runs = runs.assign(delta_limit=1e-5, delta=1e-6, sigma=1.0, noise_multiplier=1.0, floats_per_agent=1, rounds=1,
                       memory="d", captured_variance=runs["error"] / 2, seconds_per_run=0.01)  # fmt: skip
    summary = summarise(runs)
    assert len(summary) == 10 and summary["n_unfinished"].sum() == 2 * 5
    for row in summary.itertuples():
        group = runs[(runs["method"] == row.method) & (runs["eps"] == row.eps)]
        errors = group.loc[group["finished"], "error"].to_numpy()
        half = 1.96 * errors.std(ddof=1) / np.sqrt(errors.size)
        assert row.n_runs == errors.size and row.error_mean == errors.mean()
        assert row.error_ci_hi == min(errors.mean() + half, 1.0) and row.error_ci_lo == max(errors.mean() - half, 0)
        assert row.error_median == np.median(errors) and row.scope == "prepared_rows"
