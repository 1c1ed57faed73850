"""The workflow's rule graph as a figure of the report, apart from the landing page (which states the verdict).

Snakemake prints the rule graph in Graphviz's DOT language (``snakemake --rulegraph``); Graphviz itself is no
dependency of the project, so :func:`rule_graph_figure` lays the graph out in layers (each rule one column to the
right of every rule it needs) and draws it with matplotlib.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import networkx as nx
import yaml
from matplotlib.figure import Figure

_NODE = re.compile(r'^\s*(\d+)\[label = "([^"]+)"')
_EDGE = re.compile(r"^\s*(\d+)\s*->\s*(\d+)")


def parse_rulegraph(dot: str) -> nx.DiGraph:
    """The rules (nodes, by name) and their dependencies (an edge from a rule to each rule that uses its outputs)
    of ``snakemake --rulegraph``'s DOT text."""
    names: dict[str, str] = {}
    edges: list[tuple[str, str]] = []
    for line in dot.splitlines():
        if node := _NODE.match(line):
            names[node.group(1)] = node.group(2)
        elif edge := _EDGE.match(line):
            edges.append((edge.group(1), edge.group(2)))
    if not names:
        raise ValueError("no rule in the DOT text: is it the output of `snakemake --rulegraph`?")
    graph = nx.DiGraph()
    graph.add_nodes_from(names.values())
    graph.add_edges_from((names[a], names[b]) for a, b in edges)
    return graph


def rulegraph_dot(snakefile: str | Path, config: dict[str, Any], workdir: str | Path, scratch: str | Path) -> str:
    """``snakemake --rulegraph`` of ``snakefile`` under ``config`` (written to ``scratch``), run from ``workdir``
    without taking the working directory's lock (it only reads the workflow)."""
    config_file = Path(scratch) / "rulegraph_config.yaml"
    config_file.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    # --rerun-incomplete: outputs of the jobs running beside this one are marked incomplete, which would stop the
    # DAG (the rule graph only reads the rules; nothing is rerun).
    command = [sys.executable, "-m", "snakemake", "--rulegraph", "--nolock", "--rerun-incomplete", "--quiet", "all"]
    command += ["--snakefile", str(snakefile), "--configfile", str(config_file), "--workflow-profile", "none"]
    proc = subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"snakemake --rulegraph failed:\n{proc.stderr[-3000:]}\n{proc.stdout[-3000:]}")
    return proc.stdout


ROW_WIDTH = 6
"""At most this many rules side by side: a wider layer wraps onto more rows, so the figure keeps about the
window's aspect and its labels stay readable where the report fits it to the window (48 rules in 13 layers were
3,420 px wide, their labels under 5 px at 1280 × 800)."""


def rule_graph_figure(graph: nx.DiGraph, title: str) -> Figure:
    """Every rule as a box, in rows from the data (top) to the final target (bottom), a layer wider than
    :data:`ROW_WIDTH` wrapped onto several rows (stepped sideways by half a box, so no arrow runs through a box
    below it), with an arrow from each rule to each rule that uses its outputs (clipped at the boxes)."""
    position = {}
    row = 0
    for layer in nx.topological_generations(graph):
        names = sorted(layer)
        for start in range(0, len(names), ROW_WIDTH):
            chunk = names[start:start + ROW_WIDTH]
            shift = 0.5 * ((start // ROW_WIDTH) % 2)
            for column, name in enumerate(chunk):
                position[name] = (column - (len(chunk) - 1) / 2 + shift, -row)
            row += 1
    width = max(x for x, _ in position.values()) - min(x for x, _ in position.values()) + 1
    fig = Figure(figsize=(max(8.0, 2.2 * width), max(4.0, 0.62 * row + 1.0)), layout="constrained")
    ax = fig.add_subplot()
    boxes = {
        name: ax.text(x, y, name, ha="center", va="center", fontsize=10, zorder=3,
                      bbox={"boxstyle": "round,pad=0.3", "facecolor": "white", "edgecolor": "tab:blue"})
        for name, (x, y) in position.items()
    }  # fmt: skip
    fig.canvas.draw_idle()
    for source, target in graph.edges:
        clip = {"patchA": boxes[source].get_bbox_patch(), "patchB": boxes[target].get_bbox_patch()}
        arrow = {"arrowstyle": "->", "color": "0.6", "lw": 0.6, "shrinkA": 2, "shrinkB": 2, **clip}
        ax.annotate("", xy=position[target], xytext=position[source], zorder=2, arrowprops=arrow)
    xs = [x for x, _ in position.values()]
    ax.set_xlim(min(xs) - 0.6, max(xs) + 0.6)
    ax.set_ylim(-row + 0.5, 0.5)
    ax.set_axis_off()
    ax.set_title(title, fontsize=11)
    return fig
