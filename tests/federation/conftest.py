"""Wine's records split over three parties, and the agreement they share."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_wine

BOUNDS = {"source": "test: a wide box around every wine feature", "all_features": [-50.0, 2000.0]}
SIZES = (60, 60, 58)


@pytest.fixture(scope="session")
def wine() -> np.ndarray:
    return load_wine(return_X_y=True)[0]


def split(X: np.ndarray, sizes=SIZES) -> list[np.ndarray]:
    return np.split(X, np.cumsum(sizes)[:-1])


def labels(sizes=SIZES) -> np.ndarray:
    return np.repeat(np.arange(len(sizes)), sizes)


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch: pytest.MonkeyPatch):
    """``$DDPPM_CACHE_DIR`` in the test's folder (a party caches its parsed rows there; Flower's processes inherit
    it): never the user's home."""
    monkeypatch.setenv("DDPPM_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def carried(monkeypatch: pytest.MonkeyPatch) -> list:
    """Every reply an in-process Grid (tests/federation/inprocess_grid.py) carried to the coordinator."""
    pytest.importorskip("flwr", reason="the federation extra installs Flower")
    from tests.federation.inprocess_grid import InProcessGrid

    seen: list = []
    pull = InProcessGrid.pull_messages

    def spy(self, ids):
        replies = list(pull(self, ids))
        seen.extend(replies)
        return replies

    monkeypatch.setattr(InProcessGrid, "pull_messages", spy)
    return seen
