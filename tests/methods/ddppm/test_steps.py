"""Which neighbours Fig. 3's δ-vs-T curve uses under the worst-case adjacency (ddppm.methods.ddppm.steps)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ddppm.accounting.neighbours import Neighbour, neighbour_table
from ddppm.methods.ddppm.steps import _worst_of_calibration

POOL = [
    Neighbour(a, r, k, np.full(3, a + r / 10))
    for a, r, k in [(0, 1, "zero"), (1, 2, "plus"), (2, 0, "s-ab"), (3, 4, "s-cd")]
]
TABLE = neighbour_table(POOL).to_dict("list")


def _keys(neighbours):
    return sorted((n.agent, n.row, n.kind) for n in neighbours)


def test_met_rows_name_their_worst_neighbours():
    calibration = pd.DataFrame(
        {"met": [True, False], "worst_agent": [1, 3], "worst_row": [2, 4], "worst_kind": ["plus", "s-cd"]}
    )
    chosen = _worst_of_calibration(calibration, TABLE, screen=[[0, 0, 1, "zero"]])
    # the met ε's worst neighbour and the screen's (every recorded δ was computed with these)
    assert _keys(chosen) == [(0, 1, "zero"), (1, 2, "plus")]
    np.testing.assert_array_equal(chosen[1].new_row, POOL[1].new_row)


def test_nothing_met_uses_the_screen_not_the_whole_pool():
    calibration = pd.DataFrame(
        {"met": [False, False], "worst_agent": [-1, -1], "worst_row": [-1, -1], "worst_kind": ["", ""]}
    )
    screen = [[1, 0, 1, "zero"], [0, 3, 4, "s-cd"]]  # (observer, agent, row, kind)
    assert _keys(_worst_of_calibration(calibration, TABLE, screen)) == [(0, 1, "zero"), (3, 4, "s-cd")]
    assert _keys(_worst_of_calibration(calibration, TABLE, None)) == _keys(POOL)
