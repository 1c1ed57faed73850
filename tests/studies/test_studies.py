"""The scale studies (ddppm.studies): Theorem 3's consensus term against the journal method's own implementation,
the Theorem 3 choice of c against its definition, the random regular topology, a simulation identity (on the
complete graph gossip averages exactly, so the certified D-DP-PM has the law of the local noisy power method),
the studies' tables and findings, and `snakemake all_studies` on the tiny config."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from scipy.stats import ks_2samp

from ddppm.core.errors import ConfigError
from ddppm.core.network import build_graph, mixing_matrix, second_eigenvalue
from ddppm.core.problem import DistributedProblem
from ddppm.experiments import get_experiment
from ddppm.studies.findings import study_findings
from ddppm.studies.run import consensus_grid, rank_methods, run_study, study_summary
from ddppm.studies.tasks import consensus_term, scale_task, spiked_rows, theorem3_consensus_rounds
from tests.conftest import TINY, TINY_RESULTS, snakemake

SMALL = {"data": {"n": 1200, "d": 10}, "runs": 3, "iterations": 3, "epsilons": [5],
         "methods": ["ddppm_certified", "balcan_decentralised", "conventional"]}  # fmt: skip


def _section(**overrides):
    return get_experiment("studies").default_section(**{**SMALL, **overrides})


def test_consensus_term_is_the_journal_theorem3_term() -> None:
    from ddppm.methods.ddppm.theory import theorem3_bound
    from ddppm.testing import corollary_params

    task = scale_task(spiked_rows(600, 8, 1), 6, "ring", 3, 1, 0)
    problem = DistributedProblem.from_partition(task.X, list(task.parts), task.W, 3)
    journal = theorem3_bound(problem, corollary_params(problem, 4))
    assert consensus_term(task, 3) == pytest.approx(journal["consensus_term"], rel=1e-9)


def test_theorem3_choice_is_the_least_c_under_the_target() -> None:
    task = scale_task(spiked_rows(600, 8, 1), 10, "ring", 1, 1, 0)
    for target in (1.0, 0.01, 1e-4):
        c = theorem3_consensus_rounds(task, target)
        assert consensus_term(task, c) <= target * (1 + 1e-12)
        assert c == 1 or consensus_term(task, c - 1) > target
    complete = scale_task(spiked_rows(600, 8, 1), 10, "complete", 1, 1, 0)
    assert theorem3_consensus_rounds(complete) == 1  # λ₂ = 0: one round averages exactly
    assert consensus_grid(39, 3) == [1, 6, 39] and consensus_grid(1, 8) == [1]


@pytest.mark.parametrize("m", [3, 4, 5, 16, 33])
def test_random_regular_graph(m: int) -> None:
    graph = build_graph("random_regular", m, seed=2)
    degree = min(4, m - 1)
    assert {d for _, d in graph.degree()} == {degree} and nx.is_connected(graph)
    W = mixing_matrix("random_regular", m, seed=2)  # validated against Assumption 2 inside
    assert second_eigenvalue(W) < 1
    np.testing.assert_array_equal(W, mixing_matrix("random_regular", m, seed=2))  # seeded


def test_on_the_complete_graph_the_certified_ddppm_is_the_local_noisy_power_method() -> None:
    """With W = 11ᵀ/m one gossip round is the exact average, so the certified D-DP-PM is Balcan et al.'s local
    noisy power method with the same σ: their errors have one law (two-sample KS over 400 runs each)."""
    from ddppm.common_task.run import run_methods
    from ddppm.methods import common_task_methods

    methods = {k: v for k, v in common_task_methods().items() if k in ("ddppm_certified", "balcan_decentralised")}
    task = scale_task(spiked_rows(2000, 12, 0), 8, "complete", 1, 1, 0)
    runs = run_methods(task, [5.0], 1e-5, 400, 0, {"adjacency": "replace_one", "iterations": 4}, methods,
                       dataset="identity")  # fmt: skip
    certified, local = (runs[runs["method"] == m]["error"].to_numpy() for m in methods)
    assert runs.groupby("method")["noise_multiplier"].first().nunique() == 1
    assert ks_2samp(certified, local).pvalue > 1e-3
    ring = scale_task(spiked_rows(2000, 12, 0), 8, "ring", 1, 1, 0)  # one round on a ring is far from the average
    on_ring = run_methods(ring, [5.0], 1e-5, 400, 0, {"adjacency": "replace_one", "iterations": 4},
                          {"ddppm_certified": methods["ddppm_certified"]}, dataset="identity")["error"]  # fmt: skip
    assert on_ring.mean() > certified.mean() + 0.05


def test_agents_study_rows_and_findings() -> None:
    section = _section(agents={"ms": [4, 8], "topologies": ["ring", "random_regular"], "rows_per_agent": 100,
                               "searched": {"methods": []}})  # fmt: skip
    runs = run_study("agents", section)
    summary = study_summary("agents", runs)
    per_point = summary.groupby(["sizing", "topology", "m"])["n"].first()
    assert per_point[("fixed_n", "ring", 8)] == 1200 and per_point[("fixed_rows_per_agent", "ring", 8)] == 800
    assert set(summary["n_runs"]) == {3} and (summary["delta"] <= 1e-5 * (1 + 1e-9)).all()
    # The exact-sum methods do not see the topology: same seeds, same numbers.
    exact = summary[summary["method"] == "conventional"].set_index(["sizing", "m", "topology"])["error_mean"]
    assert exact.xs("ring", level="topology").equals(exact.xs("random_regular", level="topology"))
    lines = study_findings("agents", summary)
    fixed = summary[(summary["sizing"] == "fixed_n") & (summary["method"] == "conventional")]
    fixed = fixed[fixed["topology"] == "ring"].set_index("m")
    assert f"conventional {fixed.loc[4, 'error_mean']:.3f} → {fixed.loc[8, 'error_mean']:.3f}" in lines[1]
    assert lines[-1].startswith("Not run: ddppm")


def test_agents_study_calibrates_the_journal_where_its_accountant_follows_and_says_where_not() -> None:
    """agents.searched: the journal D-DP-PM calibrated (sound, δ at least) at m = 4, and at m = 8 a row per ε with
    no error that says it was not run, why, and the largest m reached."""
    from ddppm.experiments import get_experiment as experiment

    section = _section(data={"n": 400, "d": 6}, epsilons=[5], methods=["ddppm_certified"], delta=0.05,
                       agents={"ms": [4, 8], "topologies": ["ring"], "sizings": ["fixed_n"],
                               "searched": {"methods": ["ddppm"], "ms": [4]}})  # fmt: skip
    cheap = {"calibration": {"kappas": [1.0, 100.0], "t_coarse": [1, 3], "runs": 10, "max_verifications": 2}}
    context = {"workshop": experiment("workshop").default_section(method_options={"ddppm": cheap})}
    summary = study_summary("agents", run_study("agents", section, context))
    journal = summary[summary["method"] == "ddppm"].set_index("m")
    assert journal.loc[4, "privacy_column"] == "searched" and journal.loc[4, "n_runs"] == 3
    assert np.isfinite(journal.loc[4, "error_mean"]) and journal.loc[4, "label"].startswith("D-DP-PM")
    assert journal.loc[4, "feasible"] and journal.loc[4, "delta"] <= 0.05  # a loose limit, so something meets it
    assert np.isnan(journal.loc[8, "error_mean"]) and not journal.loc[8, "feasible"]
    assert journal.loc[8, "note"].startswith("not run") and "largest m reached: 4" in journal.loc[8, "note"]
    assert journal.loc[4, "note"] == "threat model sound: network view, exact tail, worst neighbour"
    lines = study_findings("agents", summary)
    searched = [line for line in lines if line.startswith("Searched ddppm")]
    assert len(searched) == 1 and "Largest m reached: 4" in searched[0] and "m = 8: not run" in searched[0]
    assert not any(line.startswith("Not run: ddppm,") or line.startswith("Not run: ddppm:") for line in lines)


def test_topology_and_consensus_studies() -> None:
    section = _section(topology={"m": 6, "topologies": ["ring", "complete", "star"], "c": 2},
                       consensus={"m": 6, "points": 3})  # fmt: skip
    topology = study_summary("topology", run_study("topology", section))
    terms = topology.groupby("topology")["consensus_term"].first()
    assert terms["complete"] == 0 and terms["ring"] > 0
    runs = run_study("consensus", section)
    consensus = study_summary("consensus", runs)
    certified = consensus[consensus["method"] == "ddppm_certified"]
    assert certified["c"].min() == 1 and certified["c"].max() == certified["c_theorem3"].iloc[0]
    # Paired over c: every c draws the same noise, so a method that sums exactly gives the same runs at every c.
    exact = runs[runs["method"] == "conventional"].pivot(index="run", columns="c", values="error")
    assert exact.nunique(axis=1).eq(1).all()
    line = study_findings("consensus", consensus)[1]
    plateau = certified["error_median"].min()
    least = certified[certified["error_median"] <= 1.1 * plateau]["c"].min()
    assert f"c = {least} is the least within 10% of the best median ({plateau:.3f})" in line


def test_rank_study_names_the_composition_of_each_method() -> None:
    section = _section(rank={"m": 6, "ranks": [1, 3], "spikes": [20, 10, 5]},
                       methods=["ddppm_certified", "conventional", "cape"])  # fmt: skip
    summary = study_summary("rank", run_study("rank", section))
    assert sorted(set(summary["k"])) == [1, 3] and (summary["delta"] <= 1e-5 * (1 + 1e-9)).all()
    composition = summary.groupby("method")["composition"].first()
    assert composition["ddppm_certified"].startswith("one Gaussian mechanism per iteration")
    assert composition["conventional"].startswith("one release") and composition["cape"].startswith("one release")
    assert composition["ddppm_certified_deflation"].startswith("k runs of T iterations")  # rank.deflation's default
    chance = summary.groupby("k")["chance_error"].first()
    assert chance[3] == pytest.approx(np.sqrt(1 - 3 / 10))
    # Deflation composes over the k runs: at k = 1 it is the block algorithm's σ, at k = 3 more (√3 against √2).
    sigma = summary.set_index(["method", "k"])["noise_multiplier"]
    assert sigma[("ddppm_certified_deflation", 1)] == pytest.approx(sigma[("ddppm_certified", 1)])
    assert sigma[("ddppm_certified_deflation", 3)] > sigma[("ddppm_certified", 3)]
    assert summary.set_index(["method", "k"])["label"][("ddppm_certified_deflation", 3)].startswith("D-DP-PM")
    lines = study_findings("rank", summary)
    assert lines[1].startswith("Rank, m = 6 (ring), ε = 5, error at k = 1 → 3") and len(lines) == 6
    assert lines[2].startswith("Block (ddppm_certified) against deflation (ddppm_certified_deflation")
    assert "k = 3: " in lines[2]
    with pytest.raises(ConfigError, match="studies.rank.deflation"):
        rank_methods({**section, "rank": {**section["rank"], "deflation": ["conventional"]}})


def test_views_study_reads_each_accountant_and_orders_them() -> None:
    """The views study on Wine at T = 1 (cheap accountants only): under one view, Chernoff's bound is never below
    the exact tail at the same neighbour (Theorem 2 is an upper bound), the network view never below the paper
    view under the exact tail (it sees every release the paper view sees, and more: post-processing for the
    hockey stick), and each row says how its δ reads."""
    accountants = [
        {"accounting": "chernoff", "adjacency": "heuristic", "rank_mode": "paper"},
        {"accounting": "chernoff", "adjacency": "heuristic", "rank_mode": "support"},
        {"accounting": "exact", "adjacency": "heuristic", "rank_mode": "support"},
    ]
    section = _section(views={"datasets": ["wine"], "epsilons": [1, 5, 20], "T": 1, "realisations": 2,
                              "accountants": accountants})  # fmt: skip
    table = study_summary("views", run_study("views", section))
    assert len(table) == 2 * 3 * 3
    at = table.set_index(["view", "accounting", "rank_mode", "eps"])
    for view in ("paper", "network"):
        for eps in (1.0, 5.0, 20.0):
            assert (
                at.loc[(view, "chernoff", "support", eps), "delta"]
                >= at.loc[(view, "exact", "support", eps), "delta"] - 1e-12
            )
    exact = table[table["accounting"] == "exact"].set_index(["view", "eps"])["delta_hockey"]
    for eps in (1.0, 5.0, 20.0):
        assert exact[("network", eps)] >= exact[("paper", eps)] - 1e-9
    reads = dict(zip(table["rank_mode"] + table["accounting"], table["delta_is"], strict=True))
    assert reads["paperchernoff"].endswith("projected (may understate)")
    assert reads["supportexact"] == "exact for the guessed neighbour"
    line = study_findings("views", table)[1]
    assert line.startswith("Views, wine, T = 1, ε = 5") and "paper: chernoff, heuristic, paper" in line


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"methods": ["ddppm"]}, r"studies\.methods: \['ddppm'\].*\(ddppm: its δ can only be searched"),
        ({"topology": {"m": 7, "topologies": ["grid"]}}, r"studies\.topology: topology 'grid' with m = 7"),
        ({"rank": {"ranks": [1, 4], "spikes": [20, 10, 5]}}, r"studies\.rank\.spikes: give at least max\(ranks\) = 4"),
        ({"rank": {"ranks": [12]}}, r"studies\.rank\.ranks: every k must be below studies\.data\.d = 10"),
    ],
)
def test_bad_study_config_names_the_key(overrides, message) -> None:
    with pytest.raises(ConfigError, match=message):
        _section(**overrides)


@pytest.mark.slow
def test_all_studies_on_the_tiny_config(tiny_run) -> None:
    work = tiny_run["work"]
    done = snakemake(work, "all_studies", "--configfile", TINY)
    assert done.returncode == 0, done.stderr[-3000:]
    for study in ("agents", "topology", "consensus", "rank", "views"):
        folder = work / TINY_RESULTS / "studies" / study
        summary = pd.read_csv(folder / "summary.csv")
        assert len(summary) and (folder / "figure.png").stat().st_size > 10_000
        assert (folder / "findings.txt").read_text().splitlines()[0] == f"Scale study: {study}"
    again = snakemake(work, "all_studies", "--configfile", TINY, "-n")
    assert "Nothing to be done" in again.stdout + again.stderr
