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


def test_where_to_look_names_only_what_the_run_wrote(tmp_path):
    """An own-data run (`snakemake common_task` on iris): no landing page was built, so none is named; the common
    task's findings and iris's own answer are, and an older data set's answer (written before the run) is not."""
    import os
    import time

    from ddppm.pipeline.report import where_to_look

    results = tmp_path / "results"
    old = results / "common" / "datasets" / "wine"
    old.mkdir(parents=True)
    for name in ("answer.md", "findings.txt"):
        (old / name).write_text("wine\n")
        os.utime(old / name, (time.time() - 100, time.time() - 100))
    start = time.time() - 1
    iris = results / "common" / "datasets" / "iris"
    iris.mkdir(parents=True)
    for path in (iris / "answer.md", iris / "findings.txt", results / "common" / "findings.txt"):
        path.write_text("x\n")
    text = where_to_look(str(results), since=start)
    assert "landing.rst" not in text and "findings.html" not in text
    assert f"{results}/common/findings.txt" in text and f"{iris}/answer.md" in text
    assert "wine" not in text and "--report" in text


def test_a_wide_table_page_shows_the_answers_columns_and_names_the_full_csv(tmp_path):
    """which_method.csv has 22+ columns: its report page shows the answer's (WHICH_COLUMNS) and names the CSV."""
    import pandas as pd

    from ddppm.experiments.common_findings import WHICH_COLUMNS
    from ddppm.pipeline.report import write_table_page

    columns = [*WHICH_COLUMNS, *(f"extra_{i}" for i in range(15))]
    csv = tmp_path / "which_method.csv"
    pd.DataFrame([[1] * len(columns)], columns=columns).to_csv(csv, index=False)
    page = tmp_path / "which_method.table.html"
    write_table_page(csv, page, WHICH_COLUMNS)
    text = page.read_text()
    assert "<th>best</th>" in text.replace(' class="', ">").replace('">', ">") or ">best<" in text
    assert "extra_0" not in text and f"{len(WHICH_COLUMNS)} of the {len(columns)} columns" in text
    assert str(csv.as_posix()) in text


def test_a_wide_rule_graph_wraps_to_about_the_windows_aspect():
    """Sixty rules feeding one target: the layer wraps onto rows of ROW_WIDTH, so the figure is no wider than about
    twice its height (one row of 60 boxes would be 114 inches wide, its labels unreadable in the report)."""
    import networkx as nx

    from ddppm.pipeline.rulegraph import ROW_WIDTH

    graph = nx.DiGraph([(f"rule_{i:02d}", "all") for i in range(60)])
    fig = rule_graph_figure(graph, "t")
    width, height = fig.get_size_inches()
    assert width <= 2 * height and width < 2.2 * (ROW_WIDTH + 1) + 0.1
    texts = sorted(t.get_text() for t in fig.axes[0].texts if t.get_text())
    assert texts == sorted([*(f"rule_{i:02d}" for i in range(60)), "all"])
