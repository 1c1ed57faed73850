"""Bad calls to the library's public functions: each raises an exception that says what is wrong."""

from __future__ import annotations

import numpy as np
import pytest

from ddppm.core.errors import ConfigError, NetworkError, PrivacyError
from ddppm.core.network import paper_ring_w
from ddppm.core.partition import partition_rows
from ddppm.core.problem import DistributedProblem
from ddppm.methods.ddppm.accountant import AccountantSettings, evaluate_delta
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
