"""The report's findings and tables (ddppm.pipeline.report), on a hand-made summary with known answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
from docutils.core import publish_parts

from ddppm.pipeline.report import comparison_table, html_table, journal_findings, landing_page, rst_table

NAN = np.nan


def _summary() -> pd.DataFrame:
    rows = [
        # dataset, eps, method, threat_model, accounting, error_mean, delta, delta_limit, feasible
        ("wine", 5.0, "ddppm", "paper", "chernoff", 0.5, 0.01, 0.04, True),
        ("wine", 5.0, "ddppm", "sound", "exact", NAN, NAN, 0.04, False),
        ("wine", 5.0, "ldp_analytic", "none", "gaussian_mechanism", 0.9, 0.04, 0.04, True),
        ("wine", 40.0, "ddppm", "paper", "chernoff", 0.45, 1e-3, 6e-3, True),
        ("wine", 40.0, "ddppm", "sound", "exact", 0.8, 5e-3, 6e-3, True),
        ("wine", 40.0, "ldp_analytic", "none", "gaussian_mechanism", 0.3, 6e-3, 6e-3, True),
        ("diabetes", 5.0, "ddppm", "paper", "chernoff", NAN, NAN, 8e-3, False),
        ("diabetes", 5.0, "ddppm", "sound", "exact", NAN, NAN, 8e-3, False),
        ("diabetes", 5.0, "ldp_analytic", "none", "gaussian_mechanism", 0.95, 8e-3, 8e-3, True),
        ("diabetes", 5.0, "ldp", "none", "gaussian_mechanism", 0.96, 0.02, 8e-3, False),
    ]
    cols = ["dataset", "eps", "method", "threat_model", "accounting", "error_mean", "delta", "delta_limit", "feasible"]
    return pd.DataFrame(rows, columns=cols)


def test_findings_count_feasible_points_and_wins():
    lines = journal_findings(_summary())
    paper = next(line for line in lines if "``paper``" in line)
    sound = next(line for line in lines if "``sound``" in line)
    # paper: feasible at wine 5 and wine 40 (2 of 3 points); beats LDP at wine 5 only (0.5 < 0.9; 0.45 > 0.3)
    assert "meets the paper's δ limit at 2 of 3 (dataset, ε) points" in paper
    assert "at 1 of 2 (on Wine)" in paper
    assert "meets no limit at all on Diabetes" in paper
    assert "at 1 of 3" in sound and "at 0 of 1" in sound
    diabetes = next(line for line in lines if line.startswith("Diabetes at ε = 5"))
    assert "D-DP-PM [paper] infeasible" in diabetes and "(δ 0.02 over the limit)" in diabetes


def test_comparison_table_marks_infeasible_and_over_limit():
    table = comparison_table(_summary())
    assert list(table["data set"]) == ["Diabetes", "Wine", "Wine"]
    row = table.iloc[0]
    assert row["ddppm [paper]"] == "infeasible" and row["ldp"] == "0.960 ‡" and row["ldp_analytic"] == "0.950"


def test_rst_and_html_tables_render_every_value():
    table = comparison_table(_summary())
    html = publish_parts(rst_table(table), writer="html")["body"]
    assert html.count("<tr") == len(table) + 1 and "0.960 ‡" in html and "infeasible" in html
    page = html_table(_summary(), "t")
    assert page.count('class="infeasible"') == int((~_summary()["feasible"]).sum())
    assert "—" in page  # NaN shown as a dash, never "nan"
    assert ">nan<" not in page.lower()


def test_landing_page_is_valid_rst_with_the_findings():
    summary = _summary()
    provenance = pd.DataFrame({"git_commit": ["abc123", "abc123"]})
    models = {"paper": {"view": "paper", "accounting": "chernoff", "adjacency": "heuristic"}}
    page = landing_page(journal_findings(summary), comparison_table(summary), provenance, models, "settings")
    parts = publish_parts(page, writer="html", settings_overrides={"report_level": 2, "halt_level": 2})
    assert "meets the paper" in parts["body"] and "abc123" in parts["body"]
