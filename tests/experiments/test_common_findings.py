"""A paper's claim that its method beats others, judged on a summary (ddppm.experiments.common_findings)."""

from __future__ import annotations

import pandas as pd

from ddppm.experiments.common_findings import claim_findings, claim_table


def _row(method: str, eps: float, mean: float, half: float, feasible: bool = True) -> dict:
    return {"setting": "standard", "dataset": "toy", "k": 1, "method": method, "eps": eps, "feasible": feasible,
            "error_mean": mean, "error_ci_lo": mean - half, "error_ci_hi": mean + half}  # fmt: skip


def test_better_tied_and_worse_by_the_intervals() -> None:
    summary = pd.DataFrame([
        _row("new", 1.0, 0.2, 0.01), _row("old", 1.0, 0.5, 0.01),    # better
        _row("new", 2.0, 0.30, 0.05), _row("old", 2.0, 0.32, 0.05),  # tied
        _row("new", 5.0, 0.1, 0.01), _row("old", 5.0, 0.3, 0.01, feasible=False),  # not compared
        _row("new", 1.0, 0.9, 0.01) | {"setting": "other"},           # another setting: ignored
        _row("rival", 1.0, 0.1, 0.01), _row("rival", 2.0, 0.1, 0.01),  # worse than the rival twice
    ])  # fmt: skip
    claims = {"new": {"claim": "beats all", "against": ["old", "rival"]}}
    table = claim_table(summary, claims)
    assert table.set_index(["against", "eps"])["outcome"].to_dict() == {
        ("old", 1.0): "better", ("old", 2.0): "tied", ("rival", 1.0): "worse", ("rival", 2.0): "worse"}
    (line,) = claim_findings(summary, claims)
    assert "against old: holds (better at 1, tied at 1, worse at 0 of 2" in line
    assert "against rival: does not hold (better at 0, tied at 0, worse at 2 of 2" in line
    assert claim_findings(summary, {}) == []
