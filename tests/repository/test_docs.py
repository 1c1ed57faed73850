"""The docs hold: the README's library example and commands run, and every config key an error message names exists."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import yaml

from ddppm.config import config_schema
from tests.conftest import REPO

TOP_KEYS = ("datasets", "epsilons", "delta_limits", "dataset_options", "partition", "network", "montecarlo")
TOP_KEYS += ("methods", "threat_models", "results_dir")
KEY = re.compile(r"\b((?:{})(?:\.(?:<[a-z]+>|\{{[a-z_]+\}}|[A-Za-z_0-9]+))*)".format("|".join(TOP_KEYS)))


def readme_python_blocks() -> list[str]:
    """The library examples: in the README or the pipeline page it links to (not the example method and experiment
    modules, which are files to add, not scripts: ``tests/workflow/test_workflow.py`` and
    ``tests/workflow/test_experiment_route.py`` run them)."""
    text = "".join((REPO / f).read_text(encoding="utf-8") for f in ("README.md", "docs/pipeline.md"))
    text = re.sub(r"<!-- example-(method|experiment):begin -->.*?<!-- example-\1:end -->", "", text, flags=re.S)
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_library_example_runs(tmp_path):
    blocks = readme_python_blocks()
    assert blocks, "the README must show the library used without Snakemake"
    for block in blocks:
        script = tmp_path / "example.py"
        script.write_text(block)
        env = {**os.environ, "DDPPM_CACHE_DIR": str(tmp_path / "cache")}  # method="auto" caches: not in the home
        out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                             env=env)  # fmt: skip
        assert out.returncode == 0, out.stderr[-3000:]
        assert out.stdout.strip(), "the example prints its results"


def _exists(node: dict, path: list[str]) -> bool:
    """Whether the dotted ``path`` is a key of the schema ``node`` (``<x>``/``{x}``/digits are placeholders)."""
    while "$ref" in node:
        node = _resolve(node["$ref"])
    if not path:
        return True
    part, rest = path[0], path[1:]
    props = node.get("properties", {})
    if part in props:
        return _exists(props[part], rest)
    extra = node.get("additionalProperties")
    if part.startswith(("<", "{")) or part.isdigit():
        subs = [
            *props.values(),
            *([extra] if isinstance(extra, dict) else []),
            *([node["items"]] if "items" in node else []),
        ]
        return any(_exists(sub, rest) for sub in subs)
    return isinstance(extra, dict) and _exists(extra, rest)


def _resolve(ref: str) -> dict:
    node = config_schema()
    for part in ref.lstrip("#/").split("/"):
        node = node[part]
    return node


def error_messages() -> list[tuple[str, str]]:
    """(file, string literal) of every string in a ``raise ...Error(...)`` under src/ddppm."""
    found = []
    for path in (REPO / "src" / "ddppm").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"raise \w*Error\((.*?)\)\n", text, flags=re.S):
            found.append((path.name, match.group(1)))
    return found


def test_error_messages_name_keys_that_exist():
    schema = config_schema()
    checked, missing = 0, []
    for name, message in error_messages():
        for key in KEY.findall(message):
            if key in ("network", "partition") and "." not in key:
                continue
            parts = key.split(".")
            checked += 1
            if not _exists(schema, parts):
                missing.append(f"{name}: {key}")
    assert checked >= 20, "the scan found too few keys to mean anything"
    assert not missing, f"error messages name config keys that do not exist: {missing}"


@pytest.mark.parametrize("bad", ["privacy.candidates.kinds", "network.m", "datasets.wine.source"])
def test_the_key_checker_catches_bad_keys(bad):
    assert not _exists(config_schema(), bad.split("."))


def _schema_keys_without_description(node: dict, path: str, schema: dict) -> list[str]:
    """Dotted keys under ``node`` (a schema) whose entry has no ``description``."""
    missing = []
    for key, sub in (node.get("properties") or {}).items():
        target = sub
        while "$ref" in target:
            target = _resolve(target["$ref"])
        if "description" not in sub and "description" not in target:
            missing.append(f"{path}{key}")
        missing += _schema_keys_without_description(target, f"{path}{key}.", schema)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        while "$ref" in extra:
            extra = _resolve(extra["$ref"])
        missing += _schema_keys_without_description(extra, f"{path}<name>.", schema)
    return missing


def test_every_config_key_has_a_description():
    """`snakemake` users read the schema: every key of every section (methods and experiments included) says
    what it means."""
    schema = config_schema()
    missing = _schema_keys_without_description(schema, "", schema)
    assert len(schema["properties"]) >= 10
    assert not missing, f"config keys without a description: {missing}"


def test_every_rule_has_a_docstring():
    """`snakemake --list-rules` shows what each rule does: no bare names."""
    out = subprocess.run(
        [sys.executable, "-m", "snakemake", "--list-rules"], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    rules = [line for line in lines if line and not line[0].isspace() and not line.startswith("Using")]
    assert len(rules) >= 15
    bare = [r for r in rules if " (" not in r]  # `name (docstring)`: a bare rule prints its name only
    assert not bare, f"rules without a docstring: {bare}"


def test_docs_stand_alone():
    """The repository's docs never point outside it (users have no ../shared) and cite no private spec."""
    texts = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    code = [*sorted((REPO / "src").rglob("*.py")), *sorted((REPO / "workflow").rglob("*.smk"))]
    for path in [*texts, *code]:
        text = path.read_text(encoding="utf-8")
        assert "shared/" not in text and "spec §" not in text, f"{path} points outside the repository"
    for link in re.findall(r"\]\((docs/[^)#]+)", (REPO / "README.md").read_text(encoding="utf-8")):
        assert (REPO / link).exists(), f"README links to a missing {link}"


def readme_shell_commands() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    lines = [
        line.split("  #")[0].strip()
        for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S)
        for line in block.splitlines()
    ]
    return [line for line in lines if line and not line.startswith(("./", "source "))]


@pytest.mark.slow
def test_readme_commands_run(tmp_path):
    """Every snakemake command of the README's code blocks, as written, dry-run (`-n`) in a copy of the repository;
    other commands (writing a config file) run as they are. `./run.sh` and `./run_tests.sh` are what CI runs."""
    from tests.conftest import copy_repo, work_env

    work = copy_repo(tmp_path / "repo")
    commands = readme_shell_commands()
    assert sum(c.startswith("snakemake") for c in commands) >= 6, commands
    for command in commands:
        if command.startswith("snakemake") and "--profile profiles/slurm" in command:
            command += " --executor local"  # the dry run needs no cluster; the profile itself is tested on Slurm
        if command.startswith("snakemake"):
            command += " -n --quiet rules"
        out = subprocess.run(
            command, shell=True, cwd=work, env=work_env(work), capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, f"{command}:\n{out.stdout[-1500:]}\n{out.stderr[-1500:]}"
        if "--list-target-rules" in command:
            assert "fig2" in out.stdout and "floor" in out.stdout


JSON_SCHEMA_KEYWORDS = {
    "type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "default", "description", "properties",
    "additionalProperties", "items", "enum", "required", "minItems", "maxItems", "uniqueItems", "oneOf", "anyOf",
    "allOf", "not", "pattern", "minLength", "maxLength", "$schema", "title", "const", "patternProperties",
    "propertyNames", "minProperties", "$ref", "definitions", "$defs", "examples", "format", "multipleOf",
}  # fmt: skip


def test_schema_descriptions_are_whole():
    """A comma inside an unquoted flow-YAML description splits it into stray keys ("runs per (dataset" + "method"
    + "ε)"): every schema node holds JSON-schema keywords only, and every description reads as a whole."""
    stray: list[tuple[str, list[str]]] = []
    descriptions = 0

    def walk(node, where: str) -> None:
        nonlocal descriptions
        if isinstance(node, dict):
            if "type" in node or "description" in node:
                extra = sorted(str(k) for k in set(node) - JSON_SCHEMA_KEYWORDS)
                if extra:
                    stray.append((where, extra))
                descriptions += "description" in node
            for key, value in node.items():
                if key in ("properties", "patternProperties", "$defs", "definitions"):
                    for name, sub in value.items():
                        walk(sub, f"{where}.{name}")
                elif isinstance(value, dict | list):
                    walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for i, sub in enumerate(node):
                walk(sub, f"{where}[{i}]")

    files = sorted((REPO / "src").rglob("*.schema.yaml"))
    assert len(files) >= 6
    for path in files:
        walk(yaml.safe_load(path.read_text()), path.name)
    assert descriptions > 50 and stray == []


def test_run_times_come_from_the_one_record(tmp_path):
    """README.md and docs/pipeline.md quote the run times of benchmarks/timings.yaml (written by
    benchmarks/bench_pipeline.py), through the generated ``timings`` block; an edited time fails the check."""
    from ddppm.pipeline.readme import render

    timings = REPO / "benchmarks" / "timings.yaml"
    record = yaml.safe_load(timings.read_text(encoding="utf-8"))
    assert {"tiny"} <= set(record) and all(r["wall_seconds"] > 0 and r["jobs"] > 0 for r in record.values())
    for name in ("README.md", "docs/pipeline.md"):
        text = (REPO / name).read_text(encoding="utf-8")
        assert "<!-- timings:begin -->" in text
        rendered = render(text, tmp_path / "no-results", timings=timings)
        assert rendered == text, f"{name}: run python -m ddppm.pipeline.readme"
        block = text.split("<!-- timings:begin -->")[1].split("<!-- timings:end -->")[0]
        assert "min" in block and "benchmarks/timings.yaml" in block
    tiny = (REPO / "tests" / "config" / "tiny.yaml").read_text(encoding="utf-8")
    assert not re.search(r"\d+\s*min", tiny), "the tiny config quotes no time of its own"


def test_the_readme_stays_short():
    """The README answers and points; explanations live in docs/ (at most 150 lines)."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines: move detail to docs/"
