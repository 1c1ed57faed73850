"""The README's numbers come from a run: ddppm.pipeline.readme writes them from the tiny run's tables, its check
passes on what it wrote and fails on any number changed by hand."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from ddppm.pipeline.readme import check, claim_rows, main, render
from tests.conftest import REPO, TINY_RESULTS

pytestmark = pytest.mark.slow


def test_generated_blocks_match_the_run_and_a_changed_number_fails(tiny_run, tmp_path):
    results = tiny_run["work"] / TINY_RESULTS
    for name in ("README.md", "docs/results.md"):
        copy = tmp_path / name.replace("/", "_")
        copy.write_text(render((REPO / name).read_text(), results))
        assert check(copy, results) == []
        assert main(["--check", "--results", str(results), str(copy)]) == 0
        text = copy.read_text()
        if name == "README.md":  # the common task's answer, as a table from the run's which_method.csv
            table = (results / "common" / "readme_summary.md").read_text().strip()
            assert f"<!-- summary-common:begin -->\n{table}\n<!-- summary-common:end -->" in text
            assert table.startswith("| data set") and "`" in table
        block = text[text.index("<!-- results:begin -->") : text.index("<!-- results:end -->")]
        number = re.search(r"met at (\d+) of", block)
        assert number, "the verdict names how many points met their limit"
        changed = text.replace(number.group(0), f"met at {int(number.group(1)) + 1} of", 1)
        copy.write_text(changed)
        assert check(copy, results), "a hand-edited number must fail the check"
        assert main(["--check", "--results", str(results), str(copy)]) == 1


def test_verdict_counts_are_the_summarys(tiny_run):
    results = tiny_run["work"] / TINY_RESULTS
    summary = pd.read_csv(results / "tables" / "summary.csv")
    rows = dict(claim_rows(results))
    met = rows["(d) the δ limits can be met"]
    for model, text in met.items():
        own = summary[(summary["method"] == "ddppm") & (summary["threat_model"] == model)]
        assert text.startswith(f"met at {int(own['feasible'].sum())} of {len(own)} points")
