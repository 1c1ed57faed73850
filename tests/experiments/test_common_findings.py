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


def _runs(dataset: str, errors: dict[str, list[float]], chance: float) -> pd.DataFrame:
    trust = {"analyze_gauss": "central", "cape": "secure_aggregation", "conventional": "local"}
    rows = []
    for method, values in errors.items():
        for run, error in enumerate(values):
            rows.append({"setting": "standard", "scope": "raw_records", "dataset": dataset, "k": 1, "method": method,
                         "trust_model": trust[method], "privacy_column": "certified", "eps": 5.0,
                         "delta_limit": 1e-5, "delta": 1e-5, "feasible": True, "sigma": 1.0, "noise_multiplier": 1.0,
                         "floats_per_agent": 1, "rounds": 1, "memory": "", "chance_error": chance, "run": run,
                         "error": error, "captured_variance": 0.5, "seconds_per_run": 0.0})  # fmt: skip
    return pd.DataFrame(rows)


def test_the_findings_never_contradict_the_table() -> None:
    """A data set where no method beats chance, one with a tie and one with a clear winner: the findings' sentence
    and the README's table give the same answer per trust level, and no method is recommended at chance or in a
    tie; an ε outside the prepared setting's grid gives no sentence about it."""
    import numpy as np

    from ddppm.common_task.run import summarise, which_method
    from ddppm.experiments.common_findings import findings, ranking_changes, which_method_markdown

    rng = np.random.default_rng(0)
    chance = float(np.sqrt(1 - 1 / 3))

    def noisy(mean: float) -> list[float]:
        return list(np.clip(mean + rng.normal(0, 0.03, 20), 0, 1))

    runs = pd.concat([
        _runs("at_chance", {m: noisy(0.83) for m in ("analyze_gauss", "cape", "conventional")}, chance),
        _runs("tied", {"analyze_gauss": noisy(0.30), "cape": noisy(0.30), "conventional": noisy(0.6)}, chance),
        _runs("clear", {"analyze_gauss": noisy(0.1), "cape": noisy(0.3), "conventional": noisy(0.5)}, chance),
    ], ignore_index=True)  # fmt: skip
    summary = summarise(runs)
    which = which_method(summary, runs)
    section = {"delta": 1e-5, "adjacency": "replace_one", "runs": 20, "iterations": 10,
               "preprocessing": {"share": 0.25}}  # fmt: skip
    lines = {line.split(",")[0]: line for line in findings(which, summary, section)[2:]}
    table = {row.split("|")[1].strip(): row for row in which_method_markdown(which, summary).splitlines()[2:5]}
    assert "no method beats chance" in table["at_chance"] and "use " not in lines["at_chance"]
    assert lines["at_chance"].count("no method beats chance") == 3
    tied = table["tied"].replace("`cape`, `analyze_gauss`", "`analyze_gauss`, `cape`")
    assert "tie: `analyze_gauss`, `cape`" in tied and "with a trusted curator analyze_gauss or cape" in (
        lines["tied"].replace("cape or analyze_gauss", "analyze_gauss or cape"))
    assert "tied within noise" in lines["tied"] and "with a trusted curator use" not in lines["tied"]
    assert "`analyze_gauss` 0.1" in table["clear"] and "with a trusted curator use analyze_gauss" in lines["clear"]
    assert (summary["error_ci_lo"] >= 0).all() and (summary["error_ci_hi"] <= 1).all()
    # No grid point shared with the prepared rows (another ε): no sentence, never "0 of 0".
    prepared = which.assign(setting="prepared_rows", eps=2.0)
    assert ranking_changes(pd.concat([which, prepared], ignore_index=True)) == []
