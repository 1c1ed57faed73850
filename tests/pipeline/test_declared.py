"""The contributions registry (ddppm.pipeline.declared): what the rule files add to the shared inputs does not
depend on the order in which they are included or declare."""

from __future__ import annotations

import itertools
import re

import pytest

from ddppm.pipeline.declared import KINDS, LIST_KINDS, Declared
from tests.conftest import TINY, copy_repo, snakemake

OWNERS = ["journal", "methods/a.smk", "experiment x", "experiments/x.smk"]
DECLARATIONS = {
    "journal": {"targets": ["fig2.png"], "provenance": ["errors.parquet"]},
    "methods/a.smk": {
        "targets": ["fig3.png"],
        "verdict": ["floor.csv"],
        "fig2_floors": {"wine": ["a/wine/floor.parquet"], "iris": ["a/iris/floor.parquet"]},
        "common_lower_bounds": ["a/bounds.parquet"],
        "common_searched_runs": ["a/wine/searched.parquet"],
        "frontier_references": ["a/wine/frontier.parquet"],
    },
    "experiment x": {"targets": ["x/summary.csv"], "provenance": ["x/summary.parquet"], "findings": ["x/f.txt"]},
    "experiments/x.smk": {"targets": ["x/figure.png"], "fig2_floors": {"wine": ["x/wine/floor.parquet"]},
                          "all_studies": ["x/study.png"]},
}


def _everything(declared: Declared) -> dict[str, list[str]]:
    out = {kind: declared.collect(kind) for kind in LIST_KINDS}
    out |= {f"fig2_floors[{ds}]": declared.fig2_floors(ds) for ds in ("wine", "iris", "none")}
    return out


def test_the_order_of_the_declarations_does_not_matter() -> None:
    """Every order of the same declarations gives the same lists, in the owners' order."""
    results = []
    for order in itertools.permutations(OWNERS):
        declared = Declared(OWNERS)
        for owner in order:
            declared.declare(owner, **DECLARATIONS[owner])
        results.append(_everything(declared))
    assert all(result == results[0] for result in results)
    assert results[0]["targets"] == ["fig2.png", "fig3.png", "x/summary.csv", "x/figure.png"]
    assert results[0]["fig2_floors[wine]"] == ["a/wine/floor.parquet", "x/wine/floor.parquet"]
    assert results[0]["fig2_floors[none]"] == [] and results[0]["findings"] == ["x/f.txt"]
    assert set(KINDS) == {kind for decl in DECLARATIONS.values() for kind in decl}, "every kind is exercised"


def test_an_owner_declares_once_under_a_known_name_with_lists_of_paths() -> None:
    declared = Declared(OWNERS)
    declared.declare("journal", targets=["a"])
    with pytest.raises(ValueError, match="declared its contributions twice"):
        declared.declare("journal", provenance=["b"])
    with pytest.raises(ValueError, match="not an owner"):
        declared.declare("methods/b.smk", targets=["c"])
    with pytest.raises(TypeError, match="unknown kinds"):
        declared.declare("methods/a.smk", target=["c"])
    with pytest.raises(TypeError, match="must be a list of paths"):
        declared.declare("experiment x", findings="x/f.txt")
    with pytest.raises(KeyError):
        declared.collect("fig2_floors")  # per data set: Declared.fig2_floors
    with pytest.raises(ValueError, match="listed twice"):
        Declared(["journal", "journal"])


def _dry_run_jobs(work) -> list[str]:
    """Every job of a dry run of the tiny config: rule, inputs (in order), outputs and wildcards, sorted."""
    out = snakemake(work, "--configfile", TINY, "-n")
    assert out.returncode == 0, out.stderr[-2000:]
    jobs, job = [], None
    for line in out.stdout.splitlines():
        if re.match(r"^(local)?rule \S+:$", line):
            job = [line.split()[1]]
            jobs.append(job)
        elif job is not None and re.match(r"^    (input|output|wildcards): ", line):
            job.append(line.strip())
        elif not line.strip():
            job = None
    return sorted(" | ".join(job) for job in jobs)


@pytest.mark.slow
def test_the_include_order_does_not_change_the_jobs(tmp_path) -> None:
    """The Snakefile with its rule files included in another order (experiments first, each list reversed) plans
    the same jobs, with the same inputs in the same order, as the checkout's."""
    work = copy_repo(tmp_path)
    planned = _dry_run_jobs(work)
    snakefile = work / "Snakefile"
    text = snakefile.read_text(encoding="utf-8")
    methods = 'for method in METHOD_RULE_FILES:\n\n    include: f"workflow/rules/methods/{method}.smk"\n'
    experiments = (
        'for experiment in config["experiments"]:\n\n    include: f"workflow/rules/experiments/{experiment}.smk"\n'
    )
    assert methods in text and experiments in text
    text = text.replace(methods, "").replace(
        experiments,
        experiments.replace('config["experiments"]', 'reversed(config["experiments"])')
        + "\n\n"
        + methods.replace("METHOD_RULE_FILES", "reversed(METHOD_RULE_FILES)"),
    )
    snakefile.write_text(text, encoding="utf-8")
    assert len(planned) > 100 and _dry_run_jobs(work) == planned
