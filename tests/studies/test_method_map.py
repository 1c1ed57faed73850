"""The method map's library (ddppm.studies.method_map): the spiked data of a public shape, its public row bound, the
shapes of a map, paired and replayable runs, adaptive draws, and cells ranked per trust level."""

from __future__ import annotations

import numpy as np
import pytest

from ddppm.common_task.run import TRUST_ORDER
from ddppm.methods import common_task_methods
from ddppm.studies.method_map import (
    Shape,
    map_shapes,
    rank_cells,
    row_norm_bound,
    run_shape,
    spiked_rows,
    spiked_spectrum,
    spiked_task,
)

SECTION = {"epsilons": [1.0, 10.0], "delta": 1e-5, "adjacency": "replace_one", "iterations": 5, "seed": 3,
           "topology": "ring", "consensus": 5, "runs": {"start": 4, "cap": 8}}  # fmt: skip
FAST = ("analyze_gauss", "cape", "conventional", "ldp_analytic")


def _methods():
    return {name: method for name, method in common_task_methods().items() if name in FAST}


def test_the_spectrum_has_the_stated_gap() -> None:
    spectrum = spiked_spectrum(10, 3, 2.5)
    assert list(spectrum[:4]) == [7.5, 5.0, 2.5, 1.0] and spectrum[2] / spectrum[3] == 2.5 and spectrum.size == 10


def test_the_row_bound_is_five_standard_deviations_of_the_squared_norm() -> None:
    """Monte Carlo: ‖x‖² of Gaussian rows has mean Σλ and variance 2Σλ²; rows beyond the bound are rare."""
    spectrum = spiked_spectrum(20, 2, 3.0)
    rng = np.random.default_rng(0)
    squared = ((rng.standard_normal((200_000, 20)) * np.sqrt(spectrum)) ** 2).sum(axis=1)
    assert squared.mean() == pytest.approx(spectrum.sum(), rel=0.01)
    assert squared.var() == pytest.approx(2 * np.sum(spectrum**2), rel=0.03)
    bound = row_norm_bound(spectrum)
    assert bound**2 == pytest.approx(squared.mean() + 5 * squared.std(), rel=0.01)
    assert np.mean(squared > bound**2) < 5e-3  # ‖x‖² is skewed: five sd leave about 0.2 % here, not 3e-7


def test_rows_lie_in_the_unit_ball_with_the_shape_s_covariance() -> None:
    shape = Shape(n=40_000, d=6, gap=4.0, m=4, k=1)
    X = spiked_rows(shape, seed=1, draw=0)
    assert X.shape == (40_000, 6) and np.linalg.norm(X, axis=1).max() <= 1 + 1e-12
    eigenvalues = np.linalg.eigvalsh(X.T @ X / X.shape[0])[::-1]
    expected = spiked_spectrum(6, 1, 4.0) / row_norm_bound(spiked_spectrum(6, 1, 4.0)) ** 2
    np.testing.assert_allclose(eigenvalues, expected, rtol=0.06)
    assert not np.array_equal(X, spiked_rows(shape, seed=1, draw=1))  # each draw is a fresh data set


def test_the_task_s_factor_gives_its_gram() -> None:
    task = spiked_task(Shape(n=500, d=5, gap=2.0, m=4, k=1), seed=0, draw=0)
    np.testing.assert_allclose(task.row_factor.T @ task.row_factor, task.X.T @ task.X, rtol=1e-9, atol=1e-12)
    assert task.m == 4 and task.W.shape == (4, 4)


def test_the_shapes_of_a_map() -> None:
    section = {
        "base": {"n": 1000, "d": 10, "gap": 2, "m": 4, "k": 1},
        "axes": {"n": [100, 1000, 10000], "d": [10, 20], "eps": [1, 5]},
        "grids": [["n", "eps"], ["n", "d"]],
    }
    shapes = map_shapes(section)
    assert shapes[0] == Shape(1000, 10, 2.0, 4, 1) and len(shapes) == len(set(shapes))
    assert {(s.n, s.d) for s in shapes} == {(n, d) for n in (100, 1000, 10000) for d in (10, 20)}


def test_runs_are_paired_replayable_and_adaptive() -> None:
    shape = Shape(n=300, d=5, gap=3.0, m=4, k=1)
    runs, cells = run_shape(shape, SECTION, _methods())
    total = int(runs["run"].max()) + 1
    assert total in (4, 8)  # the start, or doubled once up to the cap
    assert set(cells["stopped"]) <= {"separated", "cap"}
    if total == 4:
        assert cells["separated"].all()
    # Run r of every method is on draw r: replaying draw 2 alone gives the same errors.
    one = run_shape(shape, {**SECTION, "runs": {"start": 8, "cap": 8}}, _methods())[0]
    at_two = one[one["run"] == 2].set_index(["method", "eps"])["error"]
    again = runs[runs["run"] == 2].set_index(["method", "eps"])["error"]
    np.testing.assert_array_equal(at_two.sort_index().to_numpy(), again.sort_index().to_numpy())


def test_each_trust_level_ranks_only_the_methods_it_may_use() -> None:
    shape = Shape(n=300, d=5, gap=3.0, m=4, k=1)
    runs, _ = run_shape(shape, {**SECTION, "runs": {"start": 6, "cap": 6}}, _methods())
    cells = rank_cells(runs, shape)
    trust_of = {name: method.trust_model for name, method in _methods().items()}
    for row in cells.itertuples():
        for member in row.competitive.split(";"):
            assert TRUST_ORDER[trust_of[member]] >= TRUST_ORDER[row.trust]
        assert row.set_size == len(row.competitive.split(";")) and row.runs == 6
    assert set(cells["trust"]) == {"central", "secure_aggregation", "local"}
    assert cells.loc[cells["trust"] == "central", "best"].isin(list(FAST)).all()
