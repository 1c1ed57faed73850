"""A party's rows (ddppm.federation.flower.read_party_rows): parsed once per version of its file and cached on its
own machine, readable by its user only; a changed file is parsed again."""

from __future__ import annotations

import os
import time

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("flwr", reason="the federation extra installs Flower")
from ddppm.federation.flower import read_party_rows  # noqa: E402


def test_the_rows_are_parsed_once_per_version_of_the_file(tmp_path, cache_dir, monkeypatch):
    data = tmp_path / "rows.csv"
    pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.5]}).to_csv(data, index=False)
    first = read_party_rows(data)
    cached = list((cache_dir / "party-rows").glob("*.npy"))
    assert len(cached) == 1 and oct(cached[0].stat().st_mode & 0o777) == "0o600"
    import ddppm.release.cli as release_cli

    monkeypatch.setattr(release_cli, "read_records", lambda *a: pytest.fail("parsed again"))
    np.testing.assert_array_equal(read_party_rows(data), first)
    monkeypatch.undo()
    monkeypatch.setenv("DDPPM_CACHE_DIR", str(cache_dir))
    time.sleep(0.01)
    pd.DataFrame({"a": [1.0, 7.0], "b": [3.0, 4.5]}).to_csv(data, index=False)
    os.utime(data, ns=(time.time_ns(), time.time_ns()))
    np.testing.assert_array_equal(read_party_rows(data), [[1.0, 3.0], [7.0, 4.5]])
