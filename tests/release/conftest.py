"""Every release test keeps ``method="auto"``'s cache in its own temporary directory (never the user's home) and
starts with an empty in-process cache; ``drawn`` counts the noise draws of a test (the fuzz tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ddppm.release import auto_cache, noise


@pytest.fixture(autouse=True)
def auto_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``$DDPPM_CACHE_DIR`` set to a fresh directory under ``tmp_path`` (subprocesses inherit it)."""
    directory = tmp_path / "ddppm-cache"
    monkeypatch.setenv(auto_cache.ENVIRONMENT_VARIABLE, str(directory))
    auto_cache.forget_in_process()
    yield directory
    auto_cache.forget_in_process()


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every noise draw of OpenDP's sampler (``SecureNoise.gaussian_release``, the only one ``ddppm fit`` uses)."""
    draws: list[str] = []
    real = noise.SecureNoise.gaussian_release

    def counted(self: Any, value: Any, std: float) -> np.ndarray:
        draws.append("draw")
        return real(self, value, std)

    monkeypatch.setattr(noise.SecureNoise, "gaussian_release", counted)
    return draws
