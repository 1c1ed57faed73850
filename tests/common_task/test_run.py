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
