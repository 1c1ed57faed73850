"""Rule rule_graph: the workflow's rule graph (`snakemake --rulegraph`) as a figure of the report."""

import tempfile
from pathlib import Path

from ddppm.pipeline.rulegraph import parse_rulegraph, rule_graph_figure, rulegraph_dot
from ddppm.pipeline.steps import setup_logging
from ddppm.plotting import save_figure

log = setup_logging(snakemake.log[0])
with tempfile.TemporaryDirectory() as scratch:
    dot = rulegraph_dot(snakemake.params.snakefile, dict(snakemake.config), Path.cwd(), scratch)
graph = parse_rulegraph(dot)
title = (
    f"The workflow's {graph.number_of_nodes()} rules: an arrow from a rule to each rule that uses its outputs "
    "(from the data, top, to the default target `all`, bottom)"
)
save_figure(rule_graph_figure(graph, title), snakemake.output.png, snakemake.output.pdf)
log.info("%d rules, %d dependencies", graph.number_of_nodes(), graph.number_of_edges())
