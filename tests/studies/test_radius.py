"""The radius study (ddppm.studies.radius, ddppm.experiments.radius): on a small heavy-tailed set both radii run at
every point from the same seeds (bit for bit equal where the private radius' search does not run), the adaptive runs
are the common task's standard runs, the summary's intervals are Student's over draws, the findings judge the three
targets with their numbers, bad config names its key, and the figure has one panel per (data set, k)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from ddppm.common_task.budget import split_budget
from ddppm.common_task.preprocessing import PreprocessingPlan, preprocessing_noise
from ddppm.common_task.raw_records import RawRecords, raw_records_runs
from ddppm.config import validate_config
from ddppm.core.errors import ConfigError
from ddppm.data.public_prep import PublicBounds
from ddppm.data.synthetic import heavy_tailed
from ddppm.experiments import get_experiment
from ddppm.experiments.radius import radius_datasets
from ddppm.methods import common_task_methods
from ddppm.studies.radius import draw_means, paired_interval, radius_findings, radius_runs, radius_summary
from tests.conftest import REPO

METHODS = ["analyze_gauss", "cape", "conventional"]
COMMON = {"delta": 1e-5, "adjacency": "replace_one", "iterations": 4, "seed": 3, "preprocessing": {}}


def _section(**overrides) -> dict:
    base = {"methods": METHODS, "epsilons": [0.5, 10, 10000], "ranks": [1, 2], "runs": 6, "draws": 3,
            "targets": {"max_error": 0.02, "dataset": "toy", "method": "analyze_gauss", "eps": 10, "k": 2,
                        "ratio": 0.5}}  # fmt: skip
    targets = {**base["targets"], **overrides.pop("targets", {})}
    return get_experiment("radius").default_section(**{**base, **overrides, "targets": targets})


@pytest.fixture(scope="module")
def records() -> RawRecords:
    X = heavy_tailed(n=400, d=5, seed=4)
    parts = tuple(np.array_split(np.arange(X.shape[0]), 3))
    bounds = PublicBounds(np.zeros(5), np.full(5, 500.0), "construction", "test: heavy_tailed's domain")
    return RawRecords(X, parts, np.full((3, 3), 1 / 3), 2, bounds, "standardize")  # complete graph: the gossip methods


@pytest.fixture(scope="module")
def runs(records) -> pd.DataFrame:
    return radius_runs(records, _section(), COMMON, "toy")


def test_both_radii_run_every_point_from_the_same_seeds(runs, records) -> None:
    """Every (radius, method, k, ε) has its runs; where the private radius' search does not run (a public rule in n,
    d, the parties and ε) the two radii are the same computation, bit for bit; where it runs they differ."""
    section = _section()
    grid = runs[["radius", "method", "k", "eps"]].drop_duplicates()
    assert len(grid) == 2 * (len(METHODS) + 2) * 2 * 3  # the methods and the curator's and agents' preprocessing alone
    assert set(runs["radius"]) == {"fixed", "adaptive"} and (runs[["n", "d"]] == [400, 5]).all().all()
    plan = PreprocessingPlan()
    searched = {}
    for eps in section["epsilons"]:
        mu_pre = split_budget(eps, COMMON["delta"], plan.share).mu_pre
        searched[eps] = preprocessing_noise(plan, mu_pre, 5, 1, 400).radius_searched  # the curator's
    assert not all(searched.values()) and any(searched.values())  # both cases occur: the test below is not vacuous
    curator = runs[runs["method"] == "analyze_gauss"]
    for eps, ran in searched.items():
        fixed, adaptive = (curator[(curator["radius"] == r) & (curator["eps"] == eps)].sort_values(["k", "run"])
                           for r in ("fixed", "adaptive"))  # fmt: skip
        same = np.array_equal(fixed["error"].to_numpy(), adaptive["error"].to_numpy())
        assert same != ran, (eps, ran)


def test_the_adaptive_runs_are_the_common_tasks_standard_runs(runs, records) -> None:
    """The study's adaptive radius is the standard setting's default: its runs equal, bit for bit, those of every
    common-task method run as the common task runs them (all methods, the default plan)."""
    section = _section()
    standard = raw_records_runs(records, [float(e) for e in section["epsilons"]], [1e-5] * 3, [1, 2], 6, 3, 3,
                                PreprocessingPlan(), {"adjacency": "replace_one", "iterations": 4},
                                dataset="toy")  # fmt: skip
    assert len(set(standard["method"])) > len(METHODS) + 2  # every method ran there
    mine = runs[runs["radius"] == "adaptive"]
    joined = mine.merge(standard, on=["method", "k", "eps", "run"], suffixes=("", "_standard"))
    assert len(joined) == len(mine) > 0
    np.testing.assert_array_equal(joined["error"], joined["error_standard"])


def test_the_fixed_radius_is_the_plans_fixed_one(records) -> None:
    """``radius: fixed`` is ``common.preprocessing.radius.adaptive: false``: the same runs as the common task's with
    that plan."""
    section = _section(ranks=[1], targets={"k": 1})
    mine = radius_runs(records, section, COMMON, "toy")
    plan = replace(PreprocessingPlan(), radius=replace(PreprocessingPlan().radius, adaptive=False))
    methods = {name: common_task_methods()[name] for name in METHODS}
    fixed = raw_records_runs(records, [0.5, 10.0, 10000.0], [1e-5] * 3, [1], 6, 3, 3, plan,
                             {"adjacency": "replace_one", "iterations": 4}, dataset="toy", methods=methods)  # fmt: skip
    np.testing.assert_array_equal(mine[mine["radius"] == "fixed"]["error"].to_numpy(), fixed["error"].to_numpy())


def test_the_summary_interval_is_students_over_the_draws(runs) -> None:
    summary = radius_summary(runs)
    assert len(summary) == len(runs[["radius", "method", "k", "eps"]].drop_duplicates())
    point = dict(radius="adaptive", method="cape", k=2, eps=10.0)
    row = summary[(summary[list(point)] == pd.Series(point)).all(axis=1)].iloc[0]
    at = runs[(runs[list(point)] == pd.Series(point)).all(axis=1)]
    per_draw = at.groupby("draw")["error"].mean().to_numpy()
    low, high = stats.t.interval(0.95, per_draw.size - 1, loc=per_draw.mean(), scale=stats.sem(per_draw))
    assert row["error_mean"] == pytest.approx(at["error"].mean())
    assert row["error_ci_lo"] == pytest.approx(max(low, 0.0)) and row["error_ci_hi"] == pytest.approx(min(high, 1.0))


def test_the_paired_interval_is_scipys_t_interval() -> None:
    values = np.random.default_rng(0).normal(0.1, 0.2, 12)
    mean, lo, hi = paired_interval(values)
    low, high = stats.t.interval(0.95, 11, loc=values.mean(), scale=stats.sem(values))
    assert (mean, lo, hi) == pytest.approx((values.mean(), low, high))
    assert np.isnan(paired_interval(np.array([0.3]))[1])


def _constructed(error) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs and summary of two data sets from ``error(dataset, radius, method, k, eps, draw)`` (4 draws, 2 runs each,
    equal within a draw) and the summary columns the findings read."""
    rows = []
    for dataset in ("toy", "other"):
        for radius in ("fixed", "adaptive"):
            for method in METHODS:
                for k in (1, 2):
                    for eps in (1.0, 10.0, 10000.0):
                        for draw in range(4):
                            value = error(dataset, radius, method, k, eps, draw)
                            rows += [{"dataset": dataset, "radius": radius, "method": method, "k": k, "eps": eps,
                                      "draw": draw, "run": 2 * draw + r, "error": value} for r in range(2)]  # fmt: skip
    runs = pd.DataFrame(rows)
    summary = runs.groupby(["dataset", "radius", "method", "k", "eps"], as_index=False)["error"].mean()
    summary = summary.rename(columns={"error": "error_mean"}).assign(n=500, d=6, delta_limit=1e-5)
    return runs, summary


def _error(dataset, radius, method, k, eps, draw) -> float:
    """A clipping floor under the fixed radius (0.2 from ε = 10 on), the adaptive one falling as 0.5/ε; small noise."""
    noise = 0.002 * (1 if draw % 2 else -1)  # mean 0 over the 4 draws
    fixed = max(0.5 / eps, 0.2)
    return (fixed if radius == "fixed" else 0.5 / eps) + noise + 0.01


def test_the_findings_judge_the_targets_with_their_numbers() -> None:
    runs, summary = _constructed(_error)
    lines = radius_findings(summary, runs, _section(), {"spiked": "normalization scale: no radius"})
    assert lines[0].startswith("The clipping radius, fixed (c√d) against private")
    toy = next(line for line in lines if line.startswith("toy (n = 500, d = 6), k = 2"))
    assert "analyze_gauss fixed 0.510, 0.210, 0.210, adaptive 0.510, 0.060, 0.010" in toy
    assert "better at 12 of 18 (method, k, ε) points, worse at 0." in toy  # ε = 10 and 10⁴, every method and k
    target_a = next(line for line in lines if line.startswith("Target (a)"))
    assert ": met (largest 0.01" in target_a
    target_b = next(line for line in lines if line.startswith("Target (b)"))
    assert "met (adaptive 0.060, fixed 0.210, ratio 0.29" in target_b and "not met" not in target_b
    assert next(line for line in lines if line.startswith("Target (c)")).endswith(": met (24 steps).")
    assert lines[-1] == "spiked: not run (normalization scale: no radius)."


def test_the_findings_name_what_misses_a_target() -> None:
    def error(dataset, radius, method, k, eps, draw):
        rise = 0.29995 if (dataset, method, k, eps) == ("other", "cape", 1, 10000.0) and radius == "adaptive" else 0.0
        return _error(dataset, radius, method, k, eps, draw) + rise

    runs, summary = _constructed(error)
    lines = radius_findings(summary, runs, _section())
    assert "not met at other cape k = 1 (0.3100)" in next(line for line in lines if line.startswith("Target (a)"))
    target_c = next(line for line in lines if line.startswith("Target (c)"))
    assert "not met at 1: other cape k = 1 ε 10 → 10^4 +0.250" in target_c
    other = next(line for line in lines if line.startswith("other"))
    assert "worse at 1 (largest: cape k = 1 ε = 10^4 +0.1000" in other


def test_bad_config_names_the_key() -> None:
    cases = [({"runs": 5, "draws": 2}, "radius.draws"), ({"epsilons": [10, 1]}, "radius.epsilons"),
             ({"targets": {"eps": 3}}, "radius.targets.eps"), ({"targets": {"k": 3}}, "radius.targets.k"),
             ({"methods": ["analyze_gauss", "nope"]}, "radius.methods"),
             ({"targets": {"method": "cape"}, "methods": ["analyze_gauss"]}, "radius.targets.method")]  # fmt: skip
    for overrides, key in cases:
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            get_experiment("radius").default_section(**overrides)
    raw = yaml.safe_load((REPO / "config.yaml").read_text())
    raw["radius"] = {"datasets": ["spiked_synthetic"]}
    with pytest.raises(ConfigError, match=r"radius\.datasets: 'spiked_synthetic' has normalization scale"):
        validate_config(raw)
    raw["radius"] = {"datasets": ["diabetes"]}  # the target (b)'s default data set, heavy_tailed, is not studied
    with pytest.raises(ConfigError, match=r"radius\.targets\.dataset: 'heavy_tailed' is not one of"):
        validate_config(raw)


def test_the_default_data_sets_are_the_standardised_common_sets() -> None:
    config = validate_config(yaml.safe_load((REPO / "config.yaml").read_text()))
    run, skipped = radius_datasets(config)
    assert "heavy_tailed" in run and "diabetes" in run
    assert set(skipped) == {"sbm_graph_signal", "spiked_synthetic"}
    assert "normalization scale" in skipped["sbm_graph_signal"]
    assert run == [ds for ds in config["common"]["datasets"] if ds not in skipped]


def test_the_figure_has_a_panel_per_data_set_and_k(runs) -> None:
    from ddppm.methods import method_styles
    from ddppm.plotting.radius import radius_figure

    summary = radius_summary(pd.concat([runs, runs.assign(dataset="again")], ignore_index=True))
    fig = radius_figure(summary, {"toy": "Toy", "again": "Again"}, METHODS, method_styles())
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 4 and all(ax.get_xscale() == "log" and ax.get_yscale() == "log" for ax in axes)
    labels = [text.get_text() for text in fig.legends[0].get_texts()]
    assert any("fixed radius" in label for label in labels) and any("private radius" in label for label in labels)
    assert "replace-one" in fig._suptitle.get_text() and "δ = 1e-05" in fig._suptitle.get_text()
    low, high = axes[0].get_ylim()
    shown = summary[(summary["dataset"] == "toy") & (summary["k"] == 1) & summary["method"].isin(METHODS)]
    assert low < shown["error_mean"].min() and shown["error_mean"].max() < high
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["0.5", "10", "10⁴"]
    draws = draw_means(runs)
    assert draws.index.names == ["dataset", "radius", "method", "k", "eps", "draw"]
