"""The audit experiment's D-DP-PM points (ddppm.experiments.audit, audit_points): by default every journal data set
at every ε of Fig. 2 and the workshop method at every ε of its Fig. 1; a row for every configured (data set, threat
model, ε), infeasible points named as such; the bounds' ceiling; the figure shows every attacked point."""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pandas as pd
import pytest
import yaml

from ddppm.accounting.iteration import DDPPMParams, NoiseSchedule
from ddppm.accounting.neighbours import Neighbour, neighbour_table
from ddppm.accounting.rows import params_to_row
from ddppm.config import validate_config
from ddppm.experiments.audit import audit_findings, bound_ceiling, journal_datasets, journal_epsilons, workshop_epsilons
from ddppm.experiments.audit_points import INFEASIBLE, journal_rows, workshop_rows
from ddppm.experiments.workshop import default_section
from ddppm.pipeline.method_options import method_options
from ddppm.testing import three_agent_problem
from tests.conftest import REPO


@pytest.fixture(scope="module")
def config() -> dict:
    return validate_config(yaml.safe_load((REPO / "config.yaml").read_text()))


def test_the_journal_audit_covers_every_data_set_and_every_eps_of_fig2_by_default(config: dict) -> None:
    datasets, epsilons = journal_datasets(config), journal_epsilons(config)
    assert datasets == config["datasets"] == ["diabetes", "breast_cancer", "wine", "ami_synthetic"]
    assert epsilons == [float(e) for e in config["epsilons"]] == [1, 2, 5, 10, 20, 40, 100]
    assert workshop_epsilons(config) == [float(e) for e in config["workshop"]["epsilons"]]
    narrow = copy.deepcopy(config)
    narrow["audit"]["journal"].update(datasets=["wine"], epsilons=[5])
    narrow["audit"]["workshop"]["epsilons"] = [2]
    assert (journal_datasets(narrow), journal_epsilons(narrow), workshop_epsilons(narrow)) == (["wine"], [5.0], [2.0])
    job = {"audit": config["audit"], "epsilons": config["epsilons"]}  # a journal job's part of the config
    assert journal_epsilons(job) == epsilons


MODELS = {"paper": ("paper", "chernoff", "heuristic"), "paper_worst": ("paper", "exact", "worst")}


def _params_table(feasible: dict[tuple[str, float], bool]) -> pd.DataFrame:
    params = params_to_row(DDPPMParams(1.0, 0.2, NoiseSchedule("constant", 0.05), 2))
    rows = []
    for (model, eps), ok in feasible.items():
        view, accounting, adjacency = MODELS[model]
        rows.append({"threat_model": model, "eps": eps, "delta_limit": 0.1, "delta": 0.05 if ok else np.nan,
                     "feasible": ok, "view": view, "accounting": accounting, "adjacency": adjacency,
                     **(params if ok else {})})  # fmt: skip
    return pd.DataFrame(rows)


def test_the_journal_rows_cover_every_configured_point_and_name_their_threat_model() -> None:
    problem = three_agent_problem()
    feasible = {("paper", 1.0): True, ("paper", 5.0): False, ("paper_worst", 1.0): False, ("paper_worst", 5.0): True}
    row = problem.blocks[0][0]
    moved = json.dumps((-row / np.linalg.norm(row)).tolist())
    floor = pd.DataFrame([{"view": "paper", "eps": eps, "observer": 1, "agent": 0, "row": 0, "new_row": moved}
                          for eps in (1.0, 5.0)])  # fmt: skip
    section = {"threat_models": ["paper", "paper_worst"], "draws": 300}
    table = journal_rows(problem, _params_table(feasible), floor, section, [1.0, 5.0], "journal", "toy", 0)
    assert len(table) == 4 and set(zip(table["threat_model"], table["eps"], strict=True)) == set(feasible)
    for (model, eps), ok in feasible.items():
        got = table[(table["threat_model"] == model) & (table["eps"] == eps)].iloc[0]
        assert (got["verdict"] in ("consistent", "violated")) == ok and (got["verdict"] == INFEASIBLE) == (not ok)
        assert (got["view"], got["accounting"], got["adjacency"]) == MODELS[model]
        assert got["method"] == f"journal ({model})" and got["dataset"] == "toy"
    attacked = table[table["verdict"] != INFEASIBLE]
    assert (attacked["observer"] == 1).all() and attacked["eps_lower"].notna().all()
    assert (attacked["verdict"] == np.where(attacked["eps_lower"] > attacked["eps"], "violated", "consistent")).all()


def test_the_workshop_rows_cover_every_configured_point() -> None:
    problem = three_agent_problem()
    params = params_to_row(DDPPMParams(1.0, 1.0, NoiseSchedule("constant", 0.5), 2))
    rows = [{"threat_model": "paper", "eps": eps, "delta_limit": 0.26, "delta": 0.1 if ok else np.nan,
             "feasible": ok, "view": "paper", "accounting": "theorem1", "adjacency": "heuristic",
             "eps_iterations": 0.1 * eps, "final_noise_factor": 1.0, **(params if ok else {})}
            for eps, ok in ((2.0, True), (5.0, False))]  # fmt: skip
    neighbours = [Neighbour(k, 0, "zero", np.zeros(3)) for k in range(3)]
    calibration = {"threat_model": {"view": "paper", "accounting": "chernoff", "adjacency": "heuristic"},
                   "neighbours": neighbour_table(neighbours).to_dict("list")}  # fmt: skip
    privacy = method_options(default_section(), default_section()["claims"]["method"])["privacy"]
    table = workshop_rows(problem, pd.DataFrame(rows), calibration, {"draws": 300}, [2.0, 5.0, 10.0], privacy,
                          "workshop", "toy", 0)  # fmt: skip
    assert list(table["eps"]) == [2.0, 5.0]  # 10 is not calibrated: no row
    assert list(table["verdict"].isin(["consistent", "violated"])) == [True, False]
    assert table["verdict"].iloc[1] == INFEASIBLE
    assert table["accounting"].iloc[0] == "theorem1" and "final release" in table["test"].iloc[0]


def test_the_bound_ceiling_is_the_bound_of_a_perfect_test() -> None:
    """All true positives, no false one: Clopper–Pearson gives TPR ≥ b and FPR ≤ 1 − b with b = 0.025^(1/N), so
    the bound is ln((b − δ)/(1 − b)) ≈ ln(N/3.7)."""
    for draws, delta in ((2000, 1e-5), (20_000, 0.05)):
        b = 0.025 ** (1 / draws)
        expected = math.log((b - delta) / (1 - b))
        assert bound_ceiling(delta, draws) == pytest.approx(expected, rel=1e-6)
        assert bound_ceiling(delta, draws) == pytest.approx(math.log(draws / 3.689), abs=0.06)
    assert np.isnan(bound_ceiling(np.nan, np.nan))


def _table() -> pd.DataFrame:
    rows = [{"method": "m", "trust_model": "local", "eps": e, "delta": 1e-5, "draws": 1000, "eps_lower": 0.3 * e,
             "verdict": "consistent"} for e in (1.0, 5.0)]  # fmt: skip
    rows += [{"method": "j (paper)", "trust_model": "gossip", "eps": e, "delta": 0.01, "draws": 1000,
              "eps_lower": b, "verdict": "violated" if b > e else "consistent", "dataset": ds, "threat_model": "paper",
              "view": "paper", "accounting": "chernoff", "adjacency": "heuristic"}
             for ds, e, b in (("a", 1.0, 3.0), ("a", 20.0, 5.0), ("b", 2.0, 0.1))]  # fmt: skip
    rows += [{"method": "j (paper)", "trust_model": "gossip", "eps": 5.0, "delta": np.nan, "verdict": INFEASIBLE,
              "dataset": "b", "threat_model": "paper"}, {"method": "x", "verdict": "not audited"}]  # fmt: skip
    table = pd.DataFrame(rows)
    table["bound_ceiling"] = [bound_ceiling(r.delta, r.draws) for r in table.itertuples()]
    return table


def test_the_findings_state_verdicts_infeasible_points_and_the_ceiling() -> None:
    lines = audit_findings(_table())
    text = "\n".join(lines)
    assert "j (paper) on a (gossip view; threat model paper: view paper, accounting chernoff" in text
    assert "claimed ε = 1: ε ≥ 3.00 (violated)" in text and "claimed ε = 20: ε ≥ 5.00 (consistent)" in text
    assert "j (paper) on b: no parameters met the δ limit at ε = 5" in text
    assert "1 of 5 audited claims lie above their ceiling" in text
    assert lines[-1] == "Not audited yet (no observer view exposed): x."


def test_the_figure_shows_every_attacked_point() -> None:
    from matplotlib.collections import PathCollection

    from ddppm.plotting.audit import audit_figure

    fig = audit_figure(_table(), 1e-5)
    points = [c for sub in fig.subfigs for ax in sub.axes for c in ax.collections if isinstance(c, PathCollection)]
    assert sum(len(c.get_offsets()) for c in points) == 3  # the three attacked points, none of the infeasible one
    bars = [p for ax in fig.subfigs[0].axes for p in ax.patches]
    assert len(bars) == 2  # the method at each of its two claims


def test_points_the_config_leaves_unaudited_are_noted(config: dict) -> None:
    from ddppm.experiments import get_experiment

    audit = get_experiment("audit")
    assert audit.notes(config["audit"], config) == []
    other = copy.deepcopy(config)
    other["audit"]["journal"]["datasets"] = ["wine", "digits"]
    other["audit"]["workshop"]["threat_models"] = ["paper_worst"]
    notes = audit.notes(other["audit"], other)
    assert any("'digits' is not in `datasets`" in n for n in notes)
    assert any("'paper_worst' is not in workshop.threat_models" in n for n in notes)
