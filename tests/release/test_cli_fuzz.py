"""``ddppm fit`` on generated malformed inputs (issue 63, Hypothesis): CSV files with ragged rows, byte-order marks,
``;`` separators, quoted numbers, thousands separators, huge and tiny floats, ``inf``, empty columns and duplicated
headers, and bounds YAML with wrong types, missing keys and unknown keys. Every case ends in exit 0 with a valid
release, or exit 2 with one line naming the problem: never a traceback, never an output file after a refusal, and
never a noise draw before it. The count of cases tried is asserted and printed.

The suite draws a fixed set of cases (derandomised: the same every run, so CI is repeatable); by hand,
``DDPPM_FUZZ_CASES=1000 pytest -s tests -k fuzz`` explores at random, here and in the other ``*_fuzz.py`` tests."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddppm.cli import main

COLUMNS = ["alcohol", "ash", "hue"]
BOUNDS = {"alcohol": [8.0, 16.0], "ash": [0.0, 5.0], "hue": [0.0, 3.0]}
CASES = int(os.environ.get("DDPPM_FUZZ_CASES", 120))
"""Examples per test (Hypothesis draws them; the suite's budget allows a few seconds per test)."""

ordinary = st.floats(0, 3, allow_nan=False).map(lambda v: f"{v:.3f}")
junk = st.sampled_from(["", " ", "inf", "-inf", "nan", "NaN", "1e308", "-1e308", "1e-320", "5e-324", "abc", "1,234",
                        "1.234,5", '"3.5"', "'2'", "0x1A", "1_000", "+4", " 7 ", "TRUE", "--1", "1e", ".", "∞"])
MUTATIONS = ("bom", "semicolon", "tab", "ragged", "quoted", "thousands", "huge", "tiny", "inf", "empty_column",
             "duplicate_header", "short_header", "blank_lines", "junk_cell", "no_rows", "one_row")  # fmt: skip


@st.composite
def csv_texts(draw: Any) -> str:
    """A clean numeric CSV of the three columns, then none to three of :data:`MUTATIONS` applied (each defect alone
    and in pairs, so that every kind is met often)."""
    rows = [[draw(ordinary) for _ in COLUMNS] for _ in range(draw(st.integers(3, 12)))]
    header = list(COLUMNS)
    separator, prefix, suffix = ",", "", "\n"
    for mutation in draw(st.lists(st.sampled_from(MUTATIONS), max_size=3, unique=True)):
        row, column = draw(st.integers(0, max(len(rows) - 1, 0))), draw(st.integers(0, len(COLUMNS) - 1))
        has_cell = row < len(rows) and column < len(rows[row])  # earlier mutations may have cut rows or cells
        if mutation == "bom":
            prefix = "\ufeff"
        elif mutation in ("semicolon", "tab"):
            separator = ";" if mutation == "semicolon" else "\t"
        elif mutation == "ragged" and has_cell:
            rows[row] = [*rows[row], draw(ordinary)] if draw(st.booleans()) else rows[row][:-1]
        elif mutation == "quoted" and has_cell:
            rows[row][column] = f'"{rows[row][column]}"'
        elif mutation == "thousands" and has_cell:
            rows[row][column] = "1,234.5"
        elif mutation in ("huge", "tiny", "inf") and has_cell:
            rows[row][column] = {"huge": draw(st.sampled_from(["1e308", "-1.7e308", "1e309"])),
                                 "tiny": draw(st.sampled_from(["1e-320", "5e-324", "-0.0"])),
                                 "inf": draw(st.sampled_from(["inf", "-inf", "Infinity"]))}[mutation]  # fmt: skip
        elif mutation == "empty_column":
            for values in rows:
                values[column : column + 1] = [""] * min(1, len(values) - column)
        elif mutation == "duplicate_header":
            header[column] = header[(column + 1) % len(header)]
        elif mutation == "short_header":
            header = header[:-1]
        elif mutation == "blank_lines":
            suffix = "\n\n\n"
        elif mutation == "junk_cell" and has_cell:
            rows[row][column] = draw(junk)
        elif mutation == "no_rows":
            rows = []
        elif mutation == "one_row":
            rows = rows[:1]
    return prefix + "\n".join(separator.join(line) for line in [header, *rows]) + suffix


bounds_entries = st.one_of(
    st.just({"source": "units", "features": BOUNDS}),
    st.just({"source": "units", "features": list(BOUNDS.values())}),
    st.fixed_dictionaries({"source": st.sampled_from(["units", 3, None, ""])},
                          optional={"features": st.sampled_from([BOUNDS, [[8, 16]], {"alcohol": [8, 16]}, "8-16",
                                                                 [[16, 8], [0, 5], [0, 3]], [["a", "b"]] * 3, 7]),
                                    "all_features": st.sampled_from([[0, 20], [20, 0], "0..20", [0], None]),
                                    "kind": st.sampled_from(["declared", "guessed", 1]),
                                    "row_norm": st.sampled_from([10.0, -1.0, "big"]),
                                    "feature": st.just(BOUNDS)}),  # a misspelt key
    st.sampled_from(["- a list", "just text", "{unclosed: [", "", "42", "features: !!python/object:os.system ls"]),
)  # fmt: skip


def _fit(folder: Path, csv: str, bounds: Any, capsys: pytest.CaptureFixture, drawn: list[str]) -> tuple[int, str]:
    data, spec, out = folder / "data.csv", folder / "bounds.yaml", folder / "release.json"
    for path in (data, spec, out):
        path.unlink(missing_ok=True)
    data.write_text(csv, encoding="utf-8")
    spec.write_text(bounds if isinstance(bounds, str) else yaml.safe_dump(bounds), encoding="utf-8")
    drawn.clear()
    capsys.readouterr()
    code = main(["fit", str(data), "--bounds", str(spec), "--k", "1", "--eps", "4", "--delta", "1e-3",
                 "--method", "analyze_gauss", "--out", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if code == 0:
        release = json.loads(out.read_text())
        assert np.all(np.isfinite(release["components"])) and release["privacy"]["delta"] <= 1e-3
        assert abs(np.linalg.norm(release["components"]) - 1) < 1e-9
    else:
        assert code == 2 and err.startswith("ddppm fit: ") and not out.exists()
        assert drawn == [], f"noise drawn before the refusal: {err}"
    return code, err


def test_malformed_csv_files_end_in_a_release_or_one_clear_message(tmp_path: Path, capsys, drawn) -> None:
    outcomes: list[int] = []

    @settings(max_examples=CASES, deadline=None, database=None, derandomize="DDPPM_FUZZ_CASES" not in os.environ,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])  # fmt: skip
    @given(csv=csv_texts())
    def case(csv: str) -> None:
        outcomes.append(_fit(tmp_path, csv, {"source": "units", "features": BOUNDS}, capsys, drawn)[0])

    case()
    print(f"ddppm fit: {len(outcomes)} generated CSV files, {outcomes.count(0)} released, {outcomes.count(2)} refused")
    assert len(outcomes) >= CASES and outcomes.count(2) > 0


def test_malformed_bounds_files_end_in_a_release_or_one_clear_message(tmp_path: Path, capsys, drawn) -> None:
    outcomes: list[int] = []
    good = "\n".join(",".join(f"{v:.2f}" for v in row) for row in [[12, 2, 1], [13, 2.5, 1.2], [11, 1.8, 0.9]] * 4)
    csv = ",".join(COLUMNS) + "\n" + good + "\n"

    @settings(max_examples=CASES, deadline=None, database=None, derandomize="DDPPM_FUZZ_CASES" not in os.environ,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])  # fmt: skip
    @given(bounds=bounds_entries)
    def case(bounds: Any) -> None:
        code, err = _fit(tmp_path, csv, bounds, capsys, drawn)
        if isinstance(bounds, dict) and "feature" in bounds:
            assert code == 2 and "feature" in err  # an unknown key is named, never ignored
        outcomes.append(code)

    case()
    print(f"ddppm fit: {len(outcomes)} generated bounds files, {outcomes.count(0)} released, {outcomes.count(2)} "
          "refused")  # fmt: skip
    assert len(outcomes) >= 20 and outcomes.count(0) > 0 and outcomes.count(2) > 0
