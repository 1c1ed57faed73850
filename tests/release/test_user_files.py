"""A user's CSV (ddppm.release.user_files.read_records, for ``ddppm fit`` and ``ddppm party``): a spreadsheet's
export with a byte-order mark or ``;`` or tab separators reads as the plain CSV; text in a numeric column is named
with its line; a ragged row is named."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ddppm.core.errors import DataError
from ddppm.release.user_files import read_records, separator

PLAIN = "alcohol,ash,hue\n12,2,1\n13,2.5,1.2\n11,1.8,0.9\n"


@pytest.mark.parametrize("text", [PLAIN, "\ufeff" + PLAIN, PLAIN.replace(",", ";"), PLAIN.replace(",", "\t")])
def test_exports_of_the_same_table_read_alike(tmp_path: Path, text: str) -> None:
    path = tmp_path / "data.csv"
    path.write_text(text, encoding="utf-8")
    frame, parties = read_records(path, None)
    assert list(frame.columns) == ["alcohol", "ash", "hue"] and parties is None
    np.testing.assert_array_equal(frame.to_numpy(), [[12, 2, 1], [13, 2.5, 1.2], [11, 1.8, 0.9]])


def test_the_separator_is_a_comma_unless_the_header_says_otherwise(tmp_path: Path) -> None:
    for text, expected in [("a,b;c\n", ","), ("a;b\n", ";"), ("a\tb\n", "\t"), ("a\n", ",")]:
        (tmp_path / "x.csv").write_text(text)
        assert separator(tmp_path / "x.csv") == expected


@pytest.mark.parametrize(("text", "words"), [
    ('alcohol,ash,hue\n12,2,1\n"1,234.5",2.5,1.2\n', "'alcohol' holds text such as '1,234.5' \\(line 3\\)"),
    ("alcohol,ash,hue\n12,2,1\n13,2.5,1.2,4\n", "one value per header column .*Expected 3 fields in line 3, saw 4"),
    ("", "is not a table"),
    ("alcohol,ash,hue\n", "has no records"),
    ("alcohol,ash,hue\n12,,1\n13,2,inf\n", "hold empty, NaN or infinite values"),
])  # fmt: skip
def test_a_malformed_table_is_named_with_the_fix(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "data.csv"
    path.write_text(text)
    with pytest.raises(DataError, match=words):
        read_records(path, None)
