"""The import graph of src/ddppm against the layer table of docs/pipeline.md ("Layers"): no module imports from a
layer above its own and no import circle, counting imports inside functions too."""

from __future__ import annotations

import ast
import re

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from tests.conftest import REPO

SRC = REPO / "src"


def _layers() -> list[tuple[str, list[str]]]:
    text = (REPO / "docs" / "pipeline.md").read_text(encoding="utf-8")
    table = text.split("<!-- layers:begin -->")[1].split("<!-- layers:end -->")[0]
    rows = [line for line in table.strip().splitlines()[2:] if line.startswith("|")]
    return [(cells[0], re.findall(r"`([\w.]+)`", cells[1]))
            for cells in ([c.strip() for c in row.strip("|").split("|")] for row in rows)]  # fmt: skip


def _modules() -> dict[str, object]:
    modules = {}
    for path in (SRC / "ddppm").rglob("*.py"):
        name = ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
        modules[name] = path
    return modules


def _edges(modules: dict[str, object]) -> set[tuple[str, str]]:
    """(importer, imported) for every ddppm import anywhere in a module; ``from pkg import sub`` names ``pkg.sub``."""
    edges = set()
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "ddppm":
                subs = [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in modules]
                targets = subs + ([node.module] if len(subs) < len(node.names) else [])
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.split(".")[0] == "ddppm"]
            else:
                continue
            edges.update((name, t) for t in targets if t in modules and t != name)
    return edges


def _layer_of(module: str, layers: list[tuple[str, list[str]]]) -> int:
    matches = [(len(p), i) for i, (_, prefixes) in enumerate(layers) for p in prefixes
               if module == p or module.startswith(p + ".")]  # fmt: skip
    assert matches, f"{module} is on no layer of docs/pipeline.md's table: add it to a row"
    return max(matches)[1]


def test_the_layer_table_is_read_and_covers_every_module():
    layers = _layers()
    assert [name for name, _ in layers][:3] == ["core", "privacy", "data"] and len(layers) >= 8
    for module in _modules():
        _layer_of(module, layers)


def test_no_module_imports_from_a_layer_above_its_own():
    layers, modules = _layers(), _modules()
    upward = sorted(f"{a} ({layers[_layer_of(a, layers)][0]}) imports {b} ({layers[_layer_of(b, layers)][0]})"
                    for a, b in _edges(modules) if _layer_of(a, layers) < _layer_of(b, layers))  # fmt: skip
    assert upward == []


def _circles(edges: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one module: each is an import circle."""
    names = sorted({m for edge in edges for m in edge})
    index = {m: i for i, m in enumerate(names)}
    graph = csr_matrix((np.ones(len(edges)), ([index[a] for a, _ in edges], [index[b] for _, b in edges])),
                       shape=(len(names), len(names)))  # fmt: skip
    _, labels = connected_components(graph, directed=True, connection="strong")
    groups = [sorted(names[i] for i in np.flatnonzero(labels == c)) for c in np.unique(labels)]
    return [g for g in groups if len(g) > 1]


def test_no_import_circle():
    assert _circles(_edges(_modules())) == []


def test_the_checks_see_function_local_imports_and_circles():
    """The graph includes an import made inside a function, and a planted circle is found (the checks can fail)."""
    edges = _edges(_modules())
    assert ("ddppm.methods.peers", "ddppm.common_task.peers") in edges  # imported inside PeerLibrary.common_estimate
    planted = edges | {("ddppm.core.errors", "ddppm.core.io")}
    assert any({"ddppm.core.errors", "ddppm.core.io"} <= set(c) for c in _circles(planted))
