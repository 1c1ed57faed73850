"""A user's data file in the pipeline (``source: file``, ddppm.data.local_file) on generated malformed CSV files
(issue 63, Hypothesis): ragged rows, byte-order marks, ``;`` separators, quoted numbers, thousands separators, huge
and tiny floats, ``inf``, empty columns, duplicated headers, with generated loader options. Every case ends in the
records (whose shape is the one the config's validation reads first, ``file_shape``) or in a ``DataError`` or
``ConfigError`` that names the config key: never another exception. The count of cases is asserted and printed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddppm.core.errors import ConfigError, DataError
from ddppm.data.local_file import file_shape, read_local_file
from tests.release.test_cli_fuzz import csv_texts

KEY = "dataset_options.mine"
CASES = int(os.environ.get("DDPPM_FUZZ_CASES", 200))
options = st.fixed_dictionaries({}, optional={
    "columns": st.sampled_from([["alcohol", "hue"], [0, 2], [5], ["nope"], [True], "alcohol", []]),
    "drop_columns": st.sampled_from([["ash"], [1], ["alcohol", "ash", "hue"], [-1]]),
    "header": st.sampled_from([True, False, "yes"]),
    "delimiter": st.sampled_from([",", ";", "\t", "", "ab"]),
})  # fmt: skip


def test_malformed_user_files_load_or_name_the_key(tmp_path: Path) -> None:
    outcomes: list[str] = []

    @settings(max_examples=CASES, deadline=None, database=None, derandomize="DDPPM_FUZZ_CASES" not in os.environ,
              suppress_health_check=[HealthCheck.too_slow])
    @given(text=csv_texts(), chosen=options)
    def case(text: str, chosen: dict[str, Any]) -> None:
        path = tmp_path / "mine.csv"
        path.write_text(text, encoding="utf-8")
        try:
            shape = file_shape(path, chosen, KEY)
            records = read_local_file(path, chosen, KEY)
        except (DataError, ConfigError) as error:
            assert KEY in str(error), str(error)
            outcomes.append("refused")
            return
        assert records.shape == shape and records.dtype == np.float64 and np.all(np.isfinite(records))
        outcomes.append("loaded")

    case()
    print(f"source: file: {len(outcomes)} generated files, {outcomes.count('loaded')} loaded, "
          f"{outcomes.count('refused')} refused")  # fmt: skip
    assert len(outcomes) >= CASES and "refused" in outcomes
