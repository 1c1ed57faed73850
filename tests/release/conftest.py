"""Every release test keeps ``method="auto"``'s cache in its own temporary directory (never the user's home) and
starts with an empty in-process cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddppm.release import auto_cache


@pytest.fixture(autouse=True)
def auto_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``$DDPPM_CACHE_DIR`` set to a fresh directory under ``tmp_path`` (subprocesses inherit it)."""
    directory = tmp_path / "ddppm-cache"
    monkeypatch.setenv(auto_cache.ENVIRONMENT_VARIABLE, str(directory))
    auto_cache.forget_in_process()
    yield directory
    auto_cache.forget_in_process()
