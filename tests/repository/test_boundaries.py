"""The registries' promises, checked on the source: no method name outside its own module, and a journal
pipeline that imports no experiment (issue: "a house a newcomer can carry on")."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ddppm.methods import available_methods, method_module

REPO = Path(__file__).resolve().parents[2]
PACKAGE_NAME = "ddppm"
"""Also the journal method's name: as the distribution's name (logger, metadata, cache directory) it is allowed."""


def _own_paths(name: str) -> set[Path]:
    """A method's own files: its module (or package), its rule file and its scripts (``<name>_*.py``)."""
    module = Path(*method_module(name).split(".")[:3])  # ddppm.methods.<package>
    source = REPO / "src" / module
    own = set(source.rglob("*.py")) if source.is_dir() else {source.with_suffix(".py")}
    own |= {REPO / "workflow" / "rules" / "methods" / f"{name}.smk"}
    own |= set((REPO / "workflow" / "scripts").glob(f"{name}_*.py"))
    return own


def _python_uses(path: Path, names: set[str]) -> list[tuple[int, str]]:
    """String constants of ``path`` equal to a method name (the package's own name only where it is not the
    argument of a call or part of a path expression, i.e. where it is used as a method)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    exempt: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            exempt |= {id(a) for a in node.args}
        if isinstance(node, ast.BinOp):
            exempt |= {id(node.left), id(node.right)}
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "PACKAGE" for t in node.targets):
            exempt.add(id(node.value))
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
            if node.value == PACKAGE_NAME and id(node) in exempt:
                continue
            hits.append((node.lineno, node.value))
    return hits


def _snakemake_uses(path: Path, names: set[str]) -> list[tuple[int, str]]:
    hits = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        code = line.split("#", 1)[0]
        hits += [(lineno, m) for m in re.findall(r"[\"']([a-z0-9_]+)[\"']", code) if m in names]
        hits += [(lineno, m) for m in re.findall(r"/(\w+)/\{", code) if m in names]  # a method's result folder
    return hits


def test_no_method_name_outside_its_module() -> None:
    """Every registered method's name appears (as a string) only in its own module, rule file and scripts;
    config files (YAML) and docs may name methods, code asks the registry or the config."""
    methods = available_methods(task=None)
    names = set(methods)
    files = [
        *(REPO / "src").rglob("*.py"),
        *(REPO / "workflow").rglob("*.py"),
        *(REPO / "workflow").rglob("*.smk"),
        REPO / "Snakefile",
    ]
    assert len(files) > 50
    found = []
    for path in files:
        uses = _snakemake_uses(path, names) if path.suffix in (".smk", "") else _python_uses(path, names)
        for lineno, name in uses:
            if path not in _own_paths(name):
                found.append(f"{path.relative_to(REPO)}:{lineno}: {name}")
    assert not found, "method names outside their modules:\n" + "\n".join(found)


def test_the_check_sees_a_method_name(tmp_path) -> None:
    """The check above is not vacuous: it flags a comparison with a method name and a result-folder path. (The
    probes live outside the repository: other tests copy its files while this one runs.)"""
    names = set(available_methods(task=None))
    probe = tmp_path / "_probe_names.py"
    probe.write_text('x = 1\nif x == "ldp_analytic":\n    pass\nlog = getLogger("ddppm")\ny = {"ddppm": 1}\n')
    assert _python_uses(probe, names) == [(2, "ldp_analytic"), (5, "ddppm")]
    smk = tmp_path / "_probe_names.smk"
    smk.write_text('x = f"{RESULTS}/methods/ddppm/{ds}/floor.parquet"  # "ldp" in a comment is fine\n')
    assert _snakemake_uses(smk, names) == [(1, "ddppm")]


def test_pipeline_config_imports_no_experiment() -> None:
    """``ddppm.pipeline.config`` (the journal pipeline) imports no experiment module; ``ddppm.config`` joins them."""
    code = (
        "import sys, ddppm.pipeline.config, ddppm.pipeline.readme, ddppm.pipeline.report\n"
        "print(sorted(m for m in sys.modules if m.startswith('ddppm.experiments')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, ddppm.config; ddppm.config.config_schema(); "
            "print('ddppm.experiments.workshop' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "True"  # the assembly does see them (the probe above is not vacuous)


def test_every_experiment_is_its_module_schema_and_rule_file() -> None:
    """Each registered experiment has its schema beside its module and its rule file; its registry entry declares its
    targets, provenance and findings (``Experiment.declared``), and its rule file declares only under its own name."""
    from ddppm.experiments import available_experiments

    experiments = available_experiments()
    assert set(experiments) == {"audit", "bounds", "common", "ldppca", "method_map", "ppm", "radius", "studies",
                                "workshop"}
    for name, experiment in experiments.items():
        assert experiment.schema["type"] == "object"
        rules = (REPO / "workflow" / "rules" / "experiments" / f"{name}.smk").read_text(encoding="utf-8")
        assert rules.count("DECLARED.declare(") == rules.count(f'DECLARED.declare("experiments/{name}.smk"') <= 1
        if not experiment.in_default_run:  # built by its own target only, never by the default run
            own_target = any(f"rule {target}:" in rules for target in (f"all_{name}", name, f"{name}_study"))
            assert own_target and not experiment.targets("r") and experiment.declared("r") == {}
            if experiment.reportable:  # `in_report: true` puts it in the default run and the report
                asked = {name: {"in_report": True}}
                declared = experiment.declared("r", asked)
                assert declared["findings"] == [experiment.findings_path("r")]
                assert declared["provenance"] == experiment.provenance("r")
                assert declared["targets"] == [f"r/{path}" for path in experiment.report_targets_relative]
                assert experiment.declared("r", {name: {"in_report": False}}) == {}
            continue
        declared = experiment.declared("r")
        assert declared["findings"] == [experiment.findings_path("r")] and declared["findings"][0].endswith(".txt")
        assert declared["targets"] and all(t.startswith("r/") for t in declared["targets"])
        assert declared["provenance"] and all(p.endswith(".parquet") for p in declared["provenance"])


def _package_imports(package: Path, prefix: str) -> dict[str, dict[str, bool]]:
    """For each module of ``package``: the sibling modules it imports, and whether each import is inside a function."""
    graph: dict[str, dict[str, bool]] = {}
    for path in sorted(package.glob("*.py")):
        name = path.stem
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top_level = {id(node) for node in tree.body}
        found: dict[str, bool] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(prefix + "."):
                sibling = node.module[len(prefix) + 1 :].split(".")[0]
                found[sibling] = found.get(sibling, False) or id(node) not in top_level
        graph[name] = found
    return graph


@pytest.mark.parametrize("package", ["ddppm.accounting", "ddppm.methods.ddppm", "ddppm.methods.workshop"])
def test_the_engine_and_the_variants_have_no_import_cycle(package: str) -> None:
    """The accounting engine and both D-DP-PM variants: the imports between a package's modules form no cycle, and
    none hides in a function."""
    graph = _package_imports(REPO / "src" / Path(*package.split(".")), package)
    assert len(graph) >= 6 and sum(len(v) for v in graph.values()) >= 6
    lazy = [(m, s) for m, deps in graph.items() for s, inside in deps.items() if inside]
    assert not lazy, f"imports inside functions (they dodge cycles): {lazy}"
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in graph.get(node, {}):
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " -> ".join([*path, node, nxt]))
            if nxt in graph and not state.get(nxt):
                visit(nxt, [*path, node])
        state[node] = 2

    for module in graph:
        if not state.get(module):
            visit(module, [])
