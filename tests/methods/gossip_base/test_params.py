"""A calibrated D-DP-PM's parameter row says how its parameters were chosen: on the data, by the paper's practice,
not covered by δ (issue 50)."""

from __future__ import annotations

import pandas as pd

from ddppm.methods.gossip_base.params import CHOSEN_ON_THE_DATA, chosen_row, chosen_table


def test_every_calibrated_row_is_labelled_as_chosen_on_the_data() -> None:
    settings = {"accounting": "exact", "view": "network", "adjacency": "worst"}
    met = pd.Series({"eps": 5.0, "delta_limit": 1e-3, "met": True, "delta": 5e-4, "t_star": 7, "reason": ""})
    missed = pd.Series({"eps": 1.0, "delta_limit": 1e-3, "met": False, "t_star": 7, "reason": "no candidate"})
    table = chosen_table([chosen_row(met, "sound", settings), chosen_row(missed, "sound", settings)])
    assert table["chosen_by"].eq(CHOSEN_ON_THE_DATA).all()
    assert "paper's own practice" in CHOSEN_ON_THE_DATA and "not covered by δ" in CHOSEN_ON_THE_DATA
