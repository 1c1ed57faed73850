"""Bad calls to the library's public functions: each raises an exception that says what is wrong."""

from __future__ import annotations

import numpy as np
import pytest

from ddppm.accounting.accountant import AccountantSettings, evaluate_delta
from ddppm.core.errors import ConfigError, NetworkError, PrivacyError
from ddppm.core.network import paper_ring_w
from ddppm.core.partition import partition_rows
from ddppm.core.problem import DistributedProblem
from ddppm.privacy.gaussian import renyi_divergence
from ddppm.testing import corollary_params

X = np.random.default_rng(0).standard_normal((24, 3)) / 4


def _problem(W=None, c=3):
    return DistributedProblem.from_partition(X, partition_rows(24, 4, seed=0), paper_ring_w() if W is None else W, c)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: _problem(W=2 * paper_ring_w()), NetworkError, "stochastic"),
        (lambda: _problem(c=2.5), ConfigError, "network.c must be a non-negative integer"),
        (lambda: AccountantSettings(rank_rtol=-1), ConfigError, "rank_rtol must lie in"),
        (lambda: AccountantSettings(view="everyone"), ConfigError, "view"),
        (lambda: AccountantSettings(accounting="imhof"), ConfigError, "accounting"),
        (lambda: AccountantSettings(adjacency="any"), ConfigError, "adjacency"),
        (
            lambda: evaluate_delta(
                _problem(), corollary_params(_problem(), 2), [1.0], AccountantSettings(observers=(10,))
            ),
            ConfigError,
            "observers: agents \\[10\\] do not exist",
        ),
        (lambda: renyi_divergence(np.zeros(2), np.eye(3), np.zeros(2), np.eye(2), 2.0), PrivacyError, "shape"),
        (lambda: renyi_divergence(np.array([np.nan]), np.eye(1), np.zeros(1), np.eye(1), 2.0), PrivacyError, "finite"),
        (lambda: renyi_divergence(np.zeros(1), np.eye(1), np.zeros(1), np.eye(1), np.inf), PrivacyError, "order"),
        (
            lambda: renyi_divergence(np.zeros(2), np.array([[1.0, 0.3], [0.0, 1.0]]), np.zeros(2), np.eye(2), 2.0),
            PrivacyError,
            "symmetric",
        ),
    ],
)
def test_bad_call_raises_a_clear_error(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_a_bad_cell_names_file_line_and_column(tmp_path):
    from ddppm.core.errors import DataError
    from ddppm.data import read_numeric_table

    p = tmp_path / "table.csv"
    p.write_text("a,b,c\n1,2,3\n4,?,6\n7,8,9\n")
    with pytest.raises(DataError, match=r"line 3, column 1 \('b'\): '\?' is not a number.*drop_columns"):
        read_numeric_table(p)
    np.testing.assert_array_equal(read_numeric_table(p, drop_columns=[1]), [[1, 3], [4, 6], [7, 9]])


def test_stale_temporary_files_are_removed_by_the_next_write(tmp_path):
    from ddppm.core.io import write_text_atomic

    target = tmp_path / "out.csv"
    stale = tmp_path / ".out.csv.tmp-deadbeef0000"
    stale.write_text("half written")
    other = tmp_path / ".other.csv.tmp-deadbeef0000"
    other.write_text("not ours")
    write_text_atomic(target, "done")
    assert target.read_text() == "done" and not stale.exists() and other.exists()


def test_no_eigengap_stops_with_an_explanation():
    from ddppm.core.errors import DataError
    from ddppm.methods import get_method

    # Two orthogonal directions of equal energy: μ₁ = μ₂, the top eigenvector is not unique.
    X = np.zeros((24, 2))
    X[:12, 0], X[12:, 1] = 0.5, 0.5
    problem = DistributedProblem.from_partition(X, partition_rows(24, 4, seed=0, shuffle=False), paper_ring_w(), 3)
    options = {"t_star_tol": 1e-3, "t_max": 30, "runs": 10, "seed": 0}
    with pytest.raises(DataError, match="Assumption 1"):
        get_method("dpm").choose_params(problem, np.array([1.0]), np.array([0.1]), options)
