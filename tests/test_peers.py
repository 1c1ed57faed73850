"""The bridge to a peer library's own environment (ddppm.common.peers), checked with a stand-in ``diffprivlib``
whose PCA is exact (no noise): the components come back per (k, ε), in the right shape, spanning the true top-k
directions, and each run gets its own random state. A failing peer is an error that shows its stderr."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from ddppm.common.peers import peer_estimates
from ddppm.common.task import CommonTask, subspace_error
from ddppm.core.errors import DDPPMError

STAND_IN = r'''
import os
import numpy as np

class PCA:
    """Exact top-k of XᵀX; records its arguments, as diffprivlib's PCA takes them."""
    def __init__(self, n_components, *, epsilon, data_norm, centered, random_state):
        assert data_norm == 1.0 and centered is True and epsilon > 0
        self.k = n_components
        with open(os.environ["STAND_IN_LOG"], "a") as log:
            log.write(f"{n_components} {epsilon} {random_state}\n")

    def fit(self, X):
        _, vectors = np.linalg.eigh(X.T @ X)
        self.components_ = vectors[:, ::-1][:, : self.k].T
        return self
'''


@pytest.fixture
def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    package = tmp_path / "diffprivlib"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "models.py").write_text(textwrap.dedent(STAND_IN))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("STAND_IN_LOG", str(tmp_path / "calls.txt"))
    return sys.executable


def test_exact_stand_in_gives_zero_error_for_every_k_and_eps(stand_in: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 5)) * np.array([3.0, 2.0, 1.0, 0.5, 0.2])
    X /= np.linalg.norm(X, axis=1).max()
    got = peer_estimates(stand_in, X, [1, 2], [0.5, 5.0], runs=3, seed=10)
    assert set(got) == {(1, 0.5), (1, 5.0), (2, 0.5), (2, 5.0)}
    for (k, _), V in got.items():
        assert V.shape == (3, 5, k)
        task = CommonTask(X, (np.arange(40),), k)
        np.testing.assert_allclose(subspace_error(V, task.V), 0.0, atol=1e-6)  # √(round-off)
    calls = (tmp_path / "calls.txt").read_text().split("\n")[:-1]
    expected = [f"{k} {eps} {10 + run}" for k in (1, 2) for eps in (0.5, 5.0) for run in range(3)]
    assert calls == expected  # every (k, ε, run) reached the library once, with random_state = seed + run


def test_a_failing_peer_is_an_error_with_its_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # no diffprivlib there
    with pytest.raises(DDPPMError, match="diffprivlib"):
        peer_estimates(sys.executable, np.eye(3), [1], [1.0], runs=1)
