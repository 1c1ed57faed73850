"""``method="auto"`` (ddppm.release.auto): the stated rule breaks the advisor's ties step by step, from public
quantities only; the choice is cached by its public parameters in this process and on disk (atomically; a corrupt
or foreign entry is recomputed, never trusted); the certificate says how the choice was made. The cache lives in
``tmp_path`` (tests/release/conftest.py). The bench comparison is tests/release/test_auto_bench.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ddppm import PrivatePCA
from ddppm.core.errors import ConfigError
from ddppm.methods import common_task_methods
from ddppm.release import auto, auto_cache
from ddppm.release.auto import GAPS, STEPS, Candidate, Choice, Problem, choose_method, decide, release_problem

X = np.random.default_rng(5).normal(5.0, 1.0, (300, 4))
BOUNDS = {"source": "test: the instrument reads 0 to 10", "features": [[0, 10]] * 4}
PROBLEM = release_problem(300, 4, 1, 5.0, 1e-5, "central", 1, standardize=True, noise="simulation")


# --- the rule ---------------------------------------------------------------------------------------------------

BETTER_WORSE = {"gaps": ("gaps_competitive", 3, 2), "trust fit": ("trust_distance", 0, 1),
                "noisy releases": ("releases", 1, 2), "floats per agent": ("floats_per_agent", 10, 20),
                "rounds": ("rounds", 1, 2), "mean error": ("mean_error", 0.2, 0.3)}  # fmt: skip


def _candidate(name: str, **changes) -> Candidate:
    fields = {"gaps_competitive": 3, "trust_distance": 0, "releases": 1, "floats_per_agent": 10, "rounds": 1,
              "mean_error": 0.5, **changes}  # fmt: skip
    return Candidate(method=name, **fields)


@pytest.mark.parametrize("step", STEPS[1:])
def test_each_step_decides_only_where_the_earlier_ones_tie(step: str) -> None:
    """``b`` is better at ``step`` and worse at every later one (``a`` also wins by name): ``step`` decides for
    ``b``, because every earlier step ties."""
    a, b = {}, {}
    later = STEPS[STEPS.index(step) + 1 :]
    for name, (attribute, better, worse) in BETTER_WORSE.items():
        if name == step:
            a[attribute], b[attribute] = worse, better
        elif name in later:
            a[attribute], b[attribute] = better, worse
    winner = "a" if step == "name" else "b"
    assert decide([_candidate("b", **b), _candidate("a", **a)]) == (winner, step)


def test_a_single_member_is_the_simulations_answer_and_an_empty_set_is_refused() -> None:
    assert decide([_candidate("cape", gaps_competitive=0, releases=9)]) == ("cape", "simulation")
    with pytest.raises(ConfigError, match="methods"):
        decide([])


def fake_advisor(tables: dict[float, dict], calls: list[dict]):
    """An advisor that answers from ``tables``: per gap, ``members`` (method, mean error, floats, rounds) in order
    and ``beats_chance``; it records every call and answers only among the methods it is asked about."""

    def advise(n, d, m, eps, delta, trust, k, *, gap, runs_start, runs_cap, seed, looseness, methods):
        calls.append({"gap": gap, "methods": list(methods), "n": n, "m": m, "looseness": looseness})
        rows = [row for row in tables[gap]["members"] if row[0] in methods]
        members = pd.DataFrame([{"method": name, "error_mean": e, "error_lo": e - 0.01, "error_hi": e + 0.01,
                                 "floats_per_agent": f, "rounds": r} for name, e, f, r in rows])  # fmt: skip
        errors = {name: 0.9 for name in methods} | {name: e for name, e, _, _ in rows}
        return members, {"beats_chance": tables[gap]["beats_chance"], "runs": runs_start, "mean_errors": errors}

    return advise


def _table(members, beats_chance=True) -> dict:
    return {"members": members, "beats_chance": beats_chance}


AG, CAPE, CONV = ("analyze_gauss", 0.30, 1200, 1), ("cape", 0.31, 20, 2), ("conventional", 0.32, 10, 1)


def test_a_tie_is_simulated_again_at_the_other_gaps_among_the_tied_members_only() -> None:
    calls: list[dict] = []
    tables = {2.0: _table([CAPE, AG]), 1.5: _table([AG]), 4.0: _table([AG, CAPE]), 16.0: _table([AG]),
              64.0: _table([AG, CAPE])}  # fmt: skip
    choice = auto.simulate_choice(PROBLEM, fake_advisor(tables, calls))
    assert (choice.method, choice.decided_by) == ("analyze_gauss", "gaps")  # competitive at 5 gaps, cape at 3
    assert [c["gap"] for c in calls] == [2.0, 1.5, 4.0, 16.0, 64.0] and sorted(GAPS) == [1.5, 2.0, 4.0, 16.0, 64.0]
    assert calls[0]["methods"] == list(PROBLEM.methods) and len(PROBLEM.methods) > 2
    assert all(c["methods"] == ["cape", "analyze_gauss"] for c in calls[1:])
    assert [a["members"] for a in choice.gap_answers] == [["cape", "analyze_gauss"], ["analyze_gauss"],
                                                          ["analyze_gauss", "cape"], ["analyze_gauss"],
                                                          ["analyze_gauss", "cape"]]  # fmt: skip


def test_a_separated_answer_needs_no_other_gap() -> None:
    calls: list[dict] = []
    choice = auto.simulate_choice(PROBLEM, fake_advisor({2.0: _table([CONV])}, calls))
    assert (choice.method, choice.decided_by, len(calls)) == ("conventional", "simulation", 1)


def test_a_gap_where_no_member_beats_chance_counts_for_every_member_and_trust_fit_decides() -> None:
    """Cape is left out at gap 1.5, where no member beats chance: that gap tells nothing, so both are competitive
    at every gap, and at a curator's trust the method built for it wins (the issue's defect: not cape)."""
    tables = {2.0: _table([CAPE, AG, CONV]), 1.5: _table([AG, CONV], beats_chance=False), 4.0: _table([CONV, CAPE, AG]),
              16.0: _table([AG, CAPE, CONV]), 64.0: _table([CONV, AG, CAPE])}  # fmt: skip
    choice = auto.simulate_choice(PROBLEM, fake_advisor(tables, []))
    assert (choice.method, choice.decided_by) == ("analyze_gauss", "trust fit")


def test_the_noisy_releases_are_counted_by_each_methods_own_calibration() -> None:
    """dp_pca composes two releases (its radius, then its sums) in one round, AnalyzeGauss one; at secure
    aggregation CAPE releases once in two rounds (the zero-sum shares, then the release), the decentralised power
    method once per iteration; FPCA and the conventional method release once, in two rounds (FPCA's merge tree over
    4 parties) and one: the rounds decide."""
    dp_pca, ppm = ("dp_pca", 0.29, 1200, 1), ("ppm_decentralised", 0.29, 40, 10)
    choice = auto.simulate_choice(PROBLEM, fake_advisor({g: _table([dp_pca, AG]) for g in GAPS}, []))
    assert (choice.method, choice.decided_by) == ("analyze_gauss", "noisy releases")
    aggregated = replace(PROBLEM, trust="secure_aggregation")
    choice = auto.simulate_choice(aggregated, fake_advisor({g: _table([ppm, CAPE]) for g in GAPS}, []))
    assert (choice.method, choice.decided_by) == ("cape", "noisy releases")
    local = replace(PROBLEM, trust="local", parties=4)
    fpca = ("fpca", 0.30, 5, 2)
    choice = auto.simulate_choice(local, fake_advisor({g: _table([fpca, CONV]) for g in GAPS}, []))
    assert (choice.method, choice.decided_by) == ("conventional", "rounds")


def test_the_stand_in_caps_the_rows_and_keeps_the_parties_below_half_of_them() -> None:
    calls: list[dict] = []
    big = release_problem(10**6, 4, 16, 5.0, 1e-7, "central", 1, standardize=True, noise="simulation")
    auto.simulate_choice(big, fake_advisor({2.0: _table([AG])}, calls))
    assert (calls[0]["n"], calls[0]["m"]) == (auto.SIMULATED_ROWS, 16)
    crowded = replace(big, n=auto.SIMULATED_ROWS * 2, parties=auto.SIMULATED_ROWS)
    assert crowded.stand_in() == (auto.SIMULATED_ROWS, auto.SIMULATED_ROWS // 2)
    assert PROBLEM.stand_in() == (300, 1)


@pytest.mark.parametrize(
    ("change", "match"),
    [({"n": 0}, "n:"), ({"n": 3, "parties": 4}, "n:"), ({"k": 4}, "k:"), ({"d": 2.5}, "d:"), ({"eps": -1.0}, "eps:"),
     ({"eps": "5"}, "eps:"), ({"delta": 1.0}, "delta:"), ({"trust": "curator"}, "trust:"),
     ({"looseness": 0.5}, "looseness:"), ({"methods": ()}, "methods:"), ({"methods": "cape"}, "methods:")],
)  # fmt: skip
def test_bad_public_parameters_are_refused_naming_the_argument(change: dict, match: str) -> None:
    fields = {"n": 300, "d": 4, "parties": 1, "eps": 5.0, "delta": 1e-5, "trust": "central", "k": 1, "looseness": 2.0,
              "methods": ("analyze_gauss",), **change}  # fmt: skip
    with pytest.raises(ConfigError, match=match):
        Problem(**fields)


def test_a_release_problem_names_the_allowed_methods_and_refuses_unknown_noise() -> None:
    secure = release_problem(300, 4, 1, 5.0, 1e-5, "central", 1, standardize=False, noise="secure")
    methods = common_task_methods()
    assert all(methods[name].secure_noise for name in secure.methods) and secure.looseness is None
    assert {"cape", "analyze_gauss"} <= set(secure.methods)  # CAPE draws secure noise since 2026-11-29
    assert "cape" in PROBLEM.methods and PROBLEM.looseness == auto.ASSUMED_LOOSENESS
    with pytest.raises(ConfigError, match="noise"):
        release_problem(300, 4, 1, 5.0, 1e-5, "central", 1, standardize=True, noise="numpy")


# --- the cache --------------------------------------------------------------------------------------------------


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[Problem]:
    """Replaces the simulation by one that records its problem and answers AnalyzeGauss (decided by the gaps)."""
    seen: list[Problem] = []

    def simulate(problem: Problem, advise=None) -> Choice:
        seen.append(problem)
        rows, parties = problem.stand_in()
        competitive = ({"method": "analyze_gauss", "error_mean": 0.2, "error_lo": 0.1, "error_hi": 0.3},
                       {"method": "cape", "error_mean": 0.25, "error_lo": 0.15, "error_hi": 0.35})  # fmt: skip
        answers = tuple({"gap": g, "members": ["analyze_gauss"], "beats_chance": True, "runs": 10} for g in GAPS)
        return Choice("analyze_gauss", "gaps", competitive, answers, {"rows": rows, "parties": parties})

    monkeypatch.setattr(auto, "simulate_choice", simulate)
    return seen


def _entries(directory: Path) -> list[Path]:
    return sorted((directory / auto_cache.SUBDIRECTORY).glob("*"))


def test_a_second_fit_of_the_same_shape_simulates_nothing(counted: list, auto_cache_dir: Path) -> None:
    def fit() -> str:
        model = PrivatePCA(1, 5.0, 1e-5, BOUNDS, method="auto", noise="simulation", random_state=0).fit(X)
        assert model.privacy_.method == "analyze_gauss"
        return model.privacy_.method_choice

    first, second = fit(), fit()
    assert len(counted) == 1 and first.endswith("answer computed by this fit (now cached)")
    assert second.endswith("answer from the cache (this process)")
    auto_cache.forget_in_process()
    assert fit().endswith("answer from the cache (disk)") and len(counted) == 1
    [entry] = _entries(auto_cache_dir)
    assert json.loads(entry.read_text())["key"] == entry.stem


def test_another_process_reads_the_disk_cache(counted: list, auto_cache_dir: Path) -> None:
    choose_method(PROBLEM)
    code = ("from ddppm.release import auto\n"
            "def refuse(*args, **kwargs):\n    raise SystemExit('the simulation ran again')\n"
            "auto.simulate_choice = refuse\n"
            "choice = auto.choose_method(auto.release_problem(300, 4, 1, 5.0, 1e-5, 'central', 1, standardize=True, "
            "noise='simulation'))\nprint(choice.method, '|', choice.source)\n")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ, check=True)
    assert out.stdout.strip() == "analyze_gauss | disk cache"


@pytest.mark.parametrize("corrupt", [
    "{not json", "", "[]", json.dumps({"key": "another key"}),
])  # fmt: skip
def test_a_corrupt_or_foreign_entry_is_recomputed(counted: list, auto_cache_dir: Path, corrupt: str) -> None:
    choose_method(PROBLEM)
    [entry] = _entries(auto_cache_dir)
    entry.write_text(corrupt)
    auto_cache.forget_in_process()
    assert choose_method(PROBLEM).source == "simulation" and len(counted) == 2
    assert json.loads(entry.read_text())["method"] == "analyze_gauss"  # stored afresh


@pytest.mark.parametrize("tamper", [
    {"method": "amin_unknown"}, {"method": "cape", "competitive": []}, {"decided_by": "a coin"}, {"rule": "auto/0"},
    {"competitive": [{"method": "analyze_gauss", "error_mean": 7.0, "error_lo": 0.1, "error_hi": 0.3}]},
    {"competitive": [{"method": "analyze_gauss", "error_mean": 0.2, "error_lo": 0.3, "error_hi": 0.4}]},
    {"simulated": {"rows": 1, "parties": 1}}, {"gap_answers": [{"gap": 3.0, "runs": 10}]}, {"competitive": None},
    {"gap_answers": [{"gap": 2.0, "runs": 10, "members": [1], "beats_chance": True}]}, {"gap_answers": []},
])  # fmt: skip
def test_an_entry_that_fails_its_check_is_not_trusted(counted: list, auto_cache_dir: Path, tamper: dict) -> None:
    choose_method(PROBLEM)
    [entry] = _entries(auto_cache_dir)
    entry.write_text(json.dumps({**json.loads(entry.read_text()), **tamper}))
    auto_cache.forget_in_process()
    assert choose_method(PROBLEM).source == "simulation" and len(counted) == 2


def test_every_public_parameter_and_the_code_enter_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    def key(problem: Problem) -> str:
        return auto_cache.cache_key(problem.key_fields())

    changes = [{"n": 299}, {"d": 5}, {"parties": 2}, {"eps": 4.0}, {"delta": 1e-6}, {"trust": "local"}, {"k": 2},
               {"looseness": None}, {"looseness": 3.0}, {"methods": PROBLEM.methods[:-1]}]  # fmt: skip
    keys = [key(PROBLEM)] + [key(replace(PROBLEM, **change)) for change in changes]
    assert len(set(keys)) == len(keys)
    assert key(replace(PROBLEM, methods=PROBLEM.methods[::-1])) == keys[0]  # the set of methods, not their order
    above = auto.SIMULATED_ROWS + 1
    assert key(replace(PROBLEM, n=above)) == key(replace(PROBLEM, n=10 * above))  # the same stand-in is simulated
    monkeypatch.setattr(auto_cache, "code_digest", lambda: "another version of the code")
    assert key(PROBLEM) != keys[0]


def test_the_cache_directory_comes_from_the_environment(counted: list, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    chosen = tmp_path / "chosen"
    monkeypatch.setenv("DDPPM_CACHE_DIR", str(chosen))
    choose_method(PROBLEM)
    assert len(_entries(chosen)) == 1
    monkeypatch.delenv("DDPPM_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert auto_cache.cache_dir() == tmp_path / "home" / ".cache" / "ddppm" / auto_cache.SUBDIRECTORY


def test_entries_are_written_atomically_and_an_unwritable_directory_only_costs_time(
    auto_cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    replaced: list[tuple[str, str]] = []
    real_replace = os.replace

    def recording_replace(source, target):
        replaced.append((str(source), str(target)))
        real_replace(source, target)

    monkeypatch.setattr(auto_cache.os, "replace", recording_replace)
    auto_cache.remember("k1", {"key": "k1", "value": 1})
    [(source, target)] = replaced
    assert Path(source).parent == Path(target).parent == auto_cache_dir / auto_cache.SUBDIRECTORY
    assert source.endswith(".tmp") and target.endswith("k1.json")
    assert [p.name for p in _entries(auto_cache_dir)] == ["k1.json"]  # no temporary file left
    blocked = auto_cache_dir.parent / "a-file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("DDPPM_CACHE_DIR", str(blocked))
    auto_cache.remember("k2", {"key": "k2"})  # no error: kept in this process only
    assert auto_cache.remembered("k2", lambda record: True) == ({"key": "k2"}, "memory")
    with pytest.raises(ValueError, match="key"):
        auto_cache.remember("k3", {"key": "k4"})


# --- the certificate --------------------------------------------------------------------------------------------


def test_the_certificate_states_the_rule_the_gaps_the_set_the_deciding_step_and_the_source(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tables = {2.0: _table([CAPE, AG, CONV]), 1.5: _table([AG, CONV]), 4.0: _table([AG]), 16.0: _table([AG]),
              64.0: _table([AG, CONV])}  # fmt: skip
    monkeypatch.setattr("ddppm.studies.advisor.advise", fake_advisor(tables, []))
    model = PrivatePCA(1, 5.0, 1e-5, BOUNDS, trust="central", noise="simulation", random_state=0).fit(X)
    words = model.privacy_.method_choice
    assert model.privacy_.method == "analyze_gauss"
    assert words.startswith("auto: ddppm advise's simulation at the public parameters (n=300, d=4, parties=1")
    assert "no data read" in words and f"rule {auto.RULE}" in words and "{1.5, 2, 4, 16, 64}" in words
    assert "gap 2: cape, analyze_gauss, conventional (10 data sets); gap 1.5: analyze_gauss, conventional" in words
    assert "competitive set at gap 2: cape 0.310 [0.300, 0.320], analyze_gauss 0.300" in words
    assert "chose analyze_gauss, decided by: gaps" in words and words.endswith("computed by this fit (now cached)")
    assert model.privacy_.to_dict()["method_choice"] == words
    again = PrivatePCA(1, 5.0, 1e-5, BOUNDS, trust="central", noise="simulation", random_state=1).fit(X)
    assert again.privacy_.method_choice.endswith("answer from the cache (this process)")


def test_ddppm_fit_in_another_process_takes_the_choice_from_the_disk(tmp_path: Path, auto_cache_dir: Path) -> None:
    """The command line, twice, each in its own process: the first simulates (a real, small advisor run), the
    second reads the first's choice from ``$DDPPM_CACHE_DIR`` and says so in its certificate."""
    pd.DataFrame(X, columns=["a", "b", "c", "d"]).to_csv(tmp_path / "rows.csv", index=False)
    (tmp_path / "bounds.yaml").write_text("source: 'test: the instrument reads 0 to 10'\nfeatures: [[0, 10], [0, 10], "
                                          "[0, 10], [0, 10]]\n")  # fmt: skip
    choices = []
    for out in ("first.json", "second.json"):
        subprocess.run([sys.executable, "-m", "ddppm", "fit", "rows.csv", "--bounds", "bounds.yaml", "--k", "1",
                        "--eps", "5", "--delta", "1e-5", "--trust", "local", "--out", out],
                       cwd=tmp_path, env=os.environ, check=True, capture_output=True)  # fmt: skip
        choices.append(json.loads((tmp_path / out).read_text())["privacy"])
    assert choices[0]["method"] == choices[1]["method"]
    assert choices[0]["method_choice"].endswith("answer computed by this fit (now cached)")
    assert choices[1]["method_choice"].endswith("answer from the cache (disk)")
    assert len(_entries(auto_cache_dir)) == 1
