"""Lower bounds for every parameter choice on the common task's grid (ddppm.common_task.bounds) and D-DP-PM's floor as
one (ddppm.methods.ddppm.common_task): the monotonicity they rest on, checked by quadrature, and the placement."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

from ddppm.common_task.bounds import BOUND_COLUMNS, bounds_on_grid
from ddppm.methods.ddppm.common_task import common_lower_bounds


def _hockey_by_quadrature(s1: float, s2: float, eps: float) -> float:
    """max over both orders of ∫ (p − e^ε q)₊ for N(0, s1²), N(0, s2²): the floor's kind of pair (variances differ)."""

    def one(a: float, b: float) -> float:
        f = lambda x: max(stats.norm.pdf(x, scale=a) - np.exp(eps) * stats.norm.pdf(x, scale=b), 0.0)  # noqa: E731
        return integrate.quad(f, -40, 40, points=[0.0], limit=400)[0]

    return max(one(s1, s2), one(s2, s1))


def test_a_pairs_hockey_stick_delta_does_not_increase_with_eps() -> None:
    """What carries a bound from ε_b down to every ε ≤ ε_b, on zero-mean pairs with different variances."""
    for s1, s2 in [(1.0, 1.3), (1.0, 3.0), (0.5, 0.52)]:
        deltas = [_hockey_by_quadrature(s1, s2, eps) for eps in (0.0, 0.1, 0.5, 1.0, 2.0)]
        assert all(a >= b - 1e-12 for a, b in zip(deltas, deltas[1:], strict=False)), (s1, s2, deltas)
        assert deltas[0] > deltas[-1]


def _bounds() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "dataset": ["a"] * 3 + ["b"],
            "method": "m",
            "label": "M",
            "trust_model": "gossip",
            "eps": [1.0, 5.0, 40.0, 2.0],
            "delta_at_least": [0.5, 0.2, 1e-6, 0.3],
            "basis": "a floor",
        }
    )[list(BOUND_COLUMNS)]


def test_each_grid_point_takes_the_largest_bound_proven_at_or_above_it() -> None:
    got = bounds_on_grid(_bounds(), [0.5, 1.0, 2.0, 10.0, 50.0], 1e-5).set_index(["dataset", "eps"])
    assert got.loc[("a", 0.5), "delta"] == 0.5 and got.loc[("a", 0.5), "from_eps"] == 1.0
    assert got.loc[("a", 2.0), "delta"] == 0.2 and got.loc[("a", 2.0), "from_eps"] == 5.0
    assert got.loc[("a", 10.0), "delta"] == 1e-6 and not got.loc[("a", 10.0), "no_parameters_meet_limit"]
    assert got.loc[("a", 2.0), "no_parameters_meet_limit"]
    assert ("a", 50.0) not in got.index  # nothing proven at or above ε = 50: no bound, not a zero
    assert got.loc[("b", 2.0), "delta"] == 0.3 and ("b", 10.0) not in got.index
    assert set(got["delta_is"]) == {"at least"}


def test_a_table_without_the_columns_is_refused() -> None:
    with pytest.raises(ValueError, match="delta_at_least"):
        bounds_on_grid(_bounds().drop(columns="delta_at_least"), [1.0], 1e-5)


def test_ddppm_bounds_are_its_network_floors() -> None:
    floor = pd.DataFrame(
        {
            "dataset": "wine",
            "view": ["network", "network", "paper"],
            "eps": [1.0, 5.0, 1.0],
            "floor_hockey": [0.4, 0.1, 0.3],
        }
    )
    got = common_lower_bounds(floor)
    assert list(got.columns) == list(BOUND_COLUMNS)
    assert got["delta_at_least"].tolist() == [0.4, 0.1] and set(got["trust_model"]) == {"gossip"}
