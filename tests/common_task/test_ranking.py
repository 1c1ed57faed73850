"""The competitive set from paired intervals (ddppm.common_task.ranking): a known tie, a known winner, chance, and
the interval's coverage by simulation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ddppm.common_task.ranking import mean_interval, rank_methods


def _errors(runs: int, seed: int = 0) -> pd.DataFrame:
    """Three methods on shared draws: ``a`` and ``tie`` have the same law (a tie), ``worse`` is 0.02 above ``a``.
    The draw's own difficulty (shared by every method) is ten times larger than the methods' own noise: only a
    paired comparison sees through it."""
    rng = np.random.default_rng(seed)
    shared = 0.3 + 0.1 * rng.standard_normal(runs)
    return pd.DataFrame({
        "a": shared + 0.01 * rng.standard_normal(runs),
        "tie": shared + 0.01 * rng.standard_normal(runs),
        "worse": shared + 0.02 + 0.01 * rng.standard_normal(runs),
    })  # fmt: skip


def test_a_known_tie_stays_in_and_a_known_loser_drops_out() -> None:
    ranking = rank_methods(_errors(200), chance_mse=0.9)
    assert ranking.best in ("a", "tie")
    assert set(ranking.members) == {"a", "tie"} and not ranking.separated
    worse = ranking.table.set_index("method").loc["worse"]
    assert not worse["competitive"] and worse["diff_lo"] > 0
    # Unpaired intervals of the means overlap (the shared term dominates): pairing is what separates them.
    own = ranking.table.set_index("method")
    assert own.loc["worse", "error_lo"] < own.loc[ranking.best, "error_hi"]


def test_a_known_winner_separates() -> None:
    errors = _errors(200).drop(columns="tie")
    ranking = rank_methods(errors, chance_mse=0.9)
    assert ranking.best == "a" and ranking.members == ("a",) and ranking.separated and ranking.runs == 200


def test_chance_is_judged_on_squared_errors() -> None:
    """A uniformly random direction in R³: its squared error has mean exactly 1 − 1/3, so it beats chance only in
    the interval's one-sided 2.5 % of repeats; its mean error, π/4 (the mean of sqrt(1 − u²) for u uniform on
    [−1, 1]), is below sqrt(2/3), so a rule on mean errors would say it beats chance nearly always."""
    d, runs, repeats = 3, 1000, 400
    rng = np.random.default_rng(1)
    v = rng.standard_normal((repeats, runs, d))
    sin = np.sqrt(1 - (v[..., 0] / np.linalg.norm(v, axis=2)) ** 2)
    assert sin.mean() == pytest.approx(np.pi / 4, abs=0.005)
    squared_rule = np.mean([rank_methods(pd.DataFrame({"random": s}), 1 - 1 / d).beats_chance for s in sin])
    mean_rule = np.mean([mean_interval(s)[2] < np.sqrt(1 - 1 / d) for s in sin])
    assert squared_rule <= 0.05 and mean_rule >= 0.95
    assert rank_methods(pd.DataFrame({"good": 0.5 * sin[0]}), chance_mse=1 - 1 / d).beats_chance


def test_the_interval_covers_the_mean_about_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(2)
    hits = 0
    for _ in range(2000):
        _, lo, hi = mean_interval(1.0 + rng.standard_normal(10))
        hits += lo <= 1.0 <= hi
    assert 0.93 <= hits / 2000 <= 0.97  # Student's t is exact for normal data, even at 10 values


def test_a_method_with_fewer_runs_is_compared_on_the_shared_ones() -> None:
    errors = _errors(50).assign(a=lambda f: f["a"].where(f.index != 3))
    ranking = rank_methods(errors, 0.9)
    table = ranking.table.set_index("method")
    assert table.loc["a", "runs"] == 49 and table.loc["worse", "runs"] == 50 and ranking.runs == 50
    assert table.loc["a", "error_mean"] == pytest.approx(errors["a"].mean())
    with pytest.raises(ValueError, match="no method"):
        rank_methods(pd.DataFrame(), 0.9)
