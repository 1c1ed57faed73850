"""The import graph of src/ddppm against the layer table of docs/pipeline.md ("Layers"): no module imports from a
layer above its own and no import circle, counting imports inside functions too."""

from __future__ import annotations

import ast
import re
from pathlib import Path

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


TEST_ONLY_FOLDERS = {"repository", "workflow", "cluster", "config", "benchmarks"}
"""Folders of ``tests/`` that mirror no package: whole-repository checks, end-to-end Snakemake runs, the real
Slurm, the tiny configuration, the benchmark scripts' own logic (``benchmarks/``)."""

TOPIC_FOLDERS = {"adversary"}
"""Folders inside a package's tests that gather one topic's tests of that package's modules (``tests/federation/
adversary/``: the attacks on a party, each next to the module it attacks): they mirror their parent folder."""


def test_tests_mirror_the_source_tree() -> None:
    """A module's tests are found by its path: ``tests/<package path>/test_<module>[_<topic>].py`` tests
    ``src/ddppm/<package path>/<module>.py`` (``test_<package>.py``: the package as a whole;
    ``tests/test_<module>[_<topic>].py`` a module at the top of ``src/ddppm``)."""
    tests = REPO / "tests"
    source = REPO / "src" / "ddppm"
    files = [p for p in tests.rglob("test_*.py") if p.relative_to(tests).parts[0] not in TEST_ONLY_FOLDERS]
    assert len(files) > 40
    top_level = {m.stem for m in source.glob("*.py")}
    named = {p.name: p.stem.removeprefix("test_") for p in tests.glob("test_*.py")}
    stray = [name for name, stem in named.items() if not any(stem == m or stem.startswith(f"{m}_") for m in top_level)]
    assert not stray, f"test files outside a package folder that name no top-level module of ddppm: {stray}"
    wrong = []
    for path in files:
        package = source.joinpath(*[p for p in path.parent.relative_to(tests).parts if p not in TOPIC_FOLDERS])
        names = {m.stem for m in package.glob("*.py")} | {d.name for d in package.iterdir() if d.is_dir()}
        names.add(package.name)
        stem = path.stem.removeprefix("test_")
        if not package.is_dir() or not any(stem == n or stem.startswith(n + "_") for n in names):
            wrong.append(str(path.relative_to(tests)))
    assert not wrong, f"tests that name no module of the package their folder mirrors: {wrong}"


GOOGLE_OR_REST_FIELD = re.compile(
    r"^\s*(Args|Arguments|Keyword Args|Returns|Raises|Yields):\s*$|^\s*:(param|returns?|rtype|raises)\b"
)
NUMPY_SECTION = re.compile(r"^\s*(Parameters|Returns|Raises|Yields|Notes|Examples|See Also)\n\s*-{3,}\s*$", re.M)


def _docstrings(tree: ast.Module):
    yield "module", tree, ast.get_docstring(tree, clean=False)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name, node, ast.get_docstring(node, clean=False)


def docstring_style_problems(path: Path) -> list[str]:
    """Where a file departs from the docstring style of docs/pipeline.md: Google or reST fields, a NumPy section
    header without its underline, a module docstring over 40 lines."""
    problems = []
    for name, _, doc in _docstrings(ast.parse(path.read_text(encoding="utf-8"))):
        if not doc:
            continue
        lines = doc.splitlines()
        if any(GOOGLE_OR_REST_FIELD.match(line) for line in lines):
            problems.append(f"{path.name}:{name}: Google or reST field")
        headers = [i for i, line in enumerate(lines) if line.strip() in ("Parameters", "Returns", "Raises", "Yields")]
        if any(i + 1 >= len(lines) or not re.fullmatch(r"\s*-{3,}\s*", lines[i + 1]) for i in headers):
            problems.append(f"{path.name}:{name}: NumPy section without its underline")
        if name == "module" and len(lines) > 40:
            problems.append(f"{path.name}: module docstring of {len(lines)} lines (move the essay to docs/)")
    return problems


def test_one_docstring_style() -> None:
    """Every docstring of src/ddppm follows the one style of docs/pipeline.md ("Docstring style"), and the check
    sees each kind of departure."""
    files = sorted((REPO / "src" / "ddppm").rglob("*.py"))
    found = [problem for path in files for problem in docstring_style_problems(path)]
    assert not found, "\n".join(found)
    numpy_sections = sum(len(NUMPY_SECTION.findall(path.read_text(encoding="utf-8"))) for path in files)
    assert numpy_sections >= 40  # the style is in use, not merely unviolated


def test_the_docstring_check_sees_each_departure(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    essay = "\n".join(f"line {i}" for i in range(45))
    probe.write_text(
        f'"""{essay}"""\n\n'
        'def f(x):\n    """Sum.\n\n    Args:\n        x: a number\n    """\n\n'
        'def g(x):\n    """Sum.\n\n    :param x: a number\n    """\n\n'
        'def h(x):\n    """Sum.\n\n    Parameters\n    x : float\n    """\n',
        encoding="utf-8",
    )
    problems = docstring_style_problems(probe)
    assert any("module docstring of 45 lines" in p for p in problems)
    assert any(p.startswith("probe.py:f: Google") for p in problems)
    assert any(p.startswith("probe.py:g: Google or reST") for p in problems)
    assert any(p.startswith("probe.py:h: NumPy section without") for p in problems)
