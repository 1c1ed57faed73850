"""``worst_case`` (numpy) against the pandas groupby it replaced, on frames with ties, NaNs and ε out of order."""

import numpy as np
import pandas as pd
import pytest

from ddppm.accounting.accountant import worst_case


def _pandas_worst_case(pairs: pd.DataFrame) -> dict:
    by_eps = pairs.groupby("eps", sort=False)
    worst = pairs.loc[by_eps["delta_mean"].idxmax().to_numpy()].reset_index(drop=True)
    return {
        "delta": worst["delta_mean"].to_numpy(),
        "delta_se": worst["delta_se"].to_numpy(),
        "delta_max": by_eps["delta_max"].max().to_numpy(),
        "delta_upper": by_eps["delta_upper_mean"].max().to_numpy(),
        "delta_hockey": by_eps["delta_hockey_mean"].max().to_numpy(),
        "worst": worst[["observer", "agent", "row", "kind"]].to_dict("records"),
    }


@pytest.mark.parametrize("seed", range(20))
def test_worst_case_equals_the_pandas_groupby(seed: int) -> None:
    rng = np.random.default_rng(seed)
    eps = rng.permutation([0.5, 1.0, 2.0, 5.0])
    pairs_count = int(rng.integers(1, 12))
    rows = []
    for p in range(pairs_count):
        for e in eps:
            rows.append(
                {
                    "observer": int(rng.integers(3)),
                    "agent": int(rng.integers(3)),
                    "row": p,
                    "kind": f"k{p % 3}",
                    "eps": e,
                    # a coarse grid makes ties (the first pair must win, as idxmax), NaN where a tail failed
                    "delta_mean": float(rng.integers(4)) / 4,
                    "delta_se": float(rng.random()),
                    "delta_max": np.nan if rng.random() < 0.2 else float(rng.random()),
                    "delta_upper_mean": float(rng.random()),
                    "delta_hockey_mean": np.nan if rng.random() < 0.3 else float(rng.random()),
                }
            )
    pairs = pd.DataFrame.from_records(rows)
    if seed % 2:  # a frame whose index is not 0..N-1 (positions, not labels, pick the worst rows)
        pairs.index = pairs.index[::-1] * 7 + 3
    got, want = worst_case(pairs), _pandas_worst_case(pairs)
    assert got.keys() == want.keys()
    for key in ("delta", "delta_se", "delta_max", "delta_upper", "delta_hockey"):
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)
        assert got[key].dtype == want[key].dtype
    assert got["worst"] == want["worst"]
