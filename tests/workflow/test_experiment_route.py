"""The route for a new experiment (docs/pipeline.md, "Add an experiment"): the page's example, three files and no
script, added to a copy of a finished tiny run, reaches the default target and the report."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.conftest import REPO, TINY, TINY_RESULTS, snakemake

EXAMPLE = "noisy_mean"
FILES = {  # where each of the example's code blocks goes, by its language
    "python": f"src/ddppm/experiments/{EXAMPLE}.py",
    "yaml": f"src/ddppm/experiments/{EXAMPLE}.schema.yaml",
    "snakemake": f"workflow/rules/experiments/{EXAMPLE}.smk",
}


def docs_example_experiment() -> dict[str, str]:
    """The example experiment's files (path → text), as a user copies them from docs/pipeline.md."""
    text = (REPO / "docs" / "pipeline.md").read_text(encoding="utf-8")
    block = text.split("<!-- example-experiment:begin -->")[1].split("<!-- example-experiment:end -->")[0]
    blocks = dict(re.findall(r"```(\w+)\n(.*?)```", block, flags=re.S))
    assert set(blocks) == set(FILES), f"the example is a module, its schema and its rule file: {sorted(blocks)}"
    return {FILES[language]: code for language, code in blocks.items()}


def _planned_rules(work: Path, configfile: str) -> set[str]:
    out = snakemake(work, "--configfile", configfile, "-n")
    assert out.returncode == 0, out.stderr[-2000:]
    return {line.split()[1].rstrip(":") for line in out.stdout.splitlines() if re.match(r"^(local)?rule \S+:$", line)}


def test_a_step_is_a_marked_method_of_the_experiment():
    """``Experiment.step`` hands out the methods marked ``@experiment_step`` and nothing else, by name."""
    from types import SimpleNamespace

    from ddppm.experiments import Experiment, experiment_step

    class Probe(Experiment):  # not registered: no schema file, no registry entry
        name = "probe"

        @experiment_step
        def double(self, job):
            return {"out": 2 * job.params.x}

        def helper(self, job):
            return {}

    probe = Probe()
    assert probe.step("double")(SimpleNamespace(params=SimpleNamespace(x=21))) == {"out": 42}
    for name in ("helper", "missing", "check_config"):
        with pytest.raises(ValueError, match=r"no step .*its steps are \['double'\]"):
            probe.step(name)


@pytest.mark.slow
def test_an_experiment_is_at_most_four_files_and_reaches_the_default_target_and_the_report(tiny_run, tmp_path):
    work = tmp_path / "work"
    shutil.copytree(tiny_run["work"], work, symlinks=True)
    files = docs_example_experiment()
    assert len(files) <= 4 and not any(path.startswith("workflow/scripts/") for path in files)
    for path, code in files.items():
        (work / path).write_text(code, encoding="utf-8")
    config = yaml.safe_load((work / TINY).read_text(encoding="utf-8"))
    config["experiments"] = [*yaml.safe_load((work / "config.yaml").read_text())["experiments"], EXAMPLE]
    (work / "with_example.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    # Only its own jobs, and the report's pages that gather every experiment, are new: no finished job reruns.
    planned = _planned_rules(work, "with_example.yaml")
    ours = {f"{EXAMPLE}_runs", f"{EXAMPLE}_summary", f"{EXAMPLE}_figure"}
    assert ours <= planned <= ours | {"all", "provenance_table", "report_landing", "rule_graph"}, sorted(planned)
    lint = snakemake(work, "--lint", "--configfile", "with_example.yaml")
    assert lint.returncode == 0 and "good condition" in lint.stdout + lint.stderr, (lint.stdout + lint.stderr)[-2000:]
    out = snakemake(work, "--configfile", "with_example.yaml")  # the default target
    assert out.returncode == 0, out.stderr[-3000:]
    results = work / TINY_RESULTS
    for name in ("summary.csv", "summary.table.html", "figure.png", "figure.pdf", "findings.txt", "runs.parquet"):
        assert (results / EXAMPLE / name).stat().st_size > 0, name
    summary = pd.read_csv(results / EXAMPLE / "summary.csv")
    assert set(summary["calibration"]) == {"exact", "classic"} and summary["error"].between(0, 1).all()
    findings = (results / "report" / "findings.html").read_text(encoding="utf-8")
    assert "Noisy mean (example)" in findings and "exact calibration" in findings
    provenance = pd.read_csv(results / "report" / "provenance.csv")
    assert provenance["file"].str.endswith(f"{EXAMPLE}/runs.parquet").any()
    assert _planned_rules(work, "with_example.yaml") == set(), "the finished run plans nothing more"
    report = snakemake(work, "--configfile", "with_example.yaml", "--report", str(tmp_path / "report.html"))
    assert report.returncode == 0, report.stderr[-2000:]
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Noisy mean (example)" in html and "Mean relative error of the noisy mean" in html
