"""The report's own pages and figures, without Snakemake: the table pages and the rule graph."""

from __future__ import annotations

import pandas as pd

from ddppm.pipeline.report import write_table_page
from ddppm.pipeline.rulegraph import parse_rulegraph, rule_graph_figure

DOT = """digraph snakemake_dag {
    graph[bgcolor=white, margin=0];
\t0[label = "all", color = "0.00 0.6 0.85", style="rounded"];
\t1[label = "figure", color = "0.23 0.6 0.85", style="rounded"];
\t2[label = "data", color = "0.56 0.6 0.85", style="rounded"];
\t1 -> 0
\t2 -> 1
\t2 -> 0
}"""


def test_rule_graph_parsed_and_drawn_one_box_per_rule():
    graph = parse_rulegraph(DOT)
    assert set(graph.nodes) == {"all", "figure", "data"}
    assert set(graph.edges) == {("figure", "all"), ("data", "figure"), ("data", "all")}
    fig = rule_graph_figure(graph, "t")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert sorted(t for t in texts if t) == ["all", "data", "figure"]  # one box per rule
    assert texts.count("") == graph.number_of_edges()  # one arrow (an empty annotation) per dependency


def test_table_page_shows_every_row_and_marks_infeasible(tmp_path):
    csv = tmp_path / "common" / "which_method.csv"
    csv.parent.mkdir()
    pd.DataFrame({"method": ["a", "b"], "error": [0.1234567, float("nan")], "feasible": [True, False]}).to_csv(csv)
    page = tmp_path / "page.html"
    write_table_page(csv, page)
    html = page.read_text()
    assert "common/which_method" in html and "0.123" in html and "—" in html
    assert html.count("<tr") == 3


def test_a_finished_run_says_where_to_look():
    from ddppm.pipeline.report import where_to_look

    text = where_to_look("results-tiny", ["tests/config/tiny.yaml"])
    assert "results-tiny/report/landing.rst" in text
    assert "snakemake --configfile tests/config/tiny.yaml --report results-tiny/report.html" in text
    assert "--configfile" not in where_to_look("results")
