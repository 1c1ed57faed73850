"""The Snakemake workflow catalog's and snakedeploy's files (issue 51): ``workflow/Snakefile`` runs the root
``Snakefile``'s jobs, ``config/config.yaml`` is the root ``config.yaml``, ``config/README.md`` is what its generator
writes from the config schemas, and ``.snakemake-workflow-catalog.yml`` has the catalog's keys and claims only what
was tried."""

from __future__ import annotations

import re

import yaml

from ddppm.config import config_reference
from tests.conftest import REPO, TINY, snakemake


def test_config_yaml_of_the_deployment_is_the_root_config():
    assert (REPO / "config" / "config.yaml").read_bytes() == (REPO / "config.yaml").read_bytes(), (
        "config/config.yaml (what snakedeploy copies) differs from config.yaml: cp config.yaml config/config.yaml"
    )


def test_config_readme_is_what_the_generator_writes():
    assert (REPO / "config" / "README.md").read_text(encoding="utf-8") == config_reference(), (
        "config/README.md is out of date with the config schemas: run `python -m ddppm.config` and commit it"
    )


def _job_counts(*args: str) -> dict[str, int]:
    proc = snakemake(REPO, "-n", "--quiet", "rules", "--configfile", TINY, *args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts = dict(re.findall(r"^([a-z_0-9]+)\s+(\d+)$", proc.stdout + proc.stderr, flags=re.MULTILINE))
    assert counts.get("total"), proc.stdout + proc.stderr
    return {rule: int(n) for rule, n in counts.items()}


def test_the_catalog_entry_point_plans_the_root_snakefiles_jobs():
    assert _job_counts("--snakefile", "workflow/Snakefile") == _job_counts()


def test_the_catalog_file_has_the_catalogs_keys_and_claims_only_what_was_tried():
    catalog = yaml.safe_load((REPO / ".snakemake-workflow-catalog.yml").read_text(encoding="utf-8"))
    usage = catalog["usage"]
    assert set(usage) == {"mandatory-flags", "software-stack-deployment", "report"}
    assert set(usage["mandatory-flags"]) == {"desc", "flags"} and usage["mandatory-flags"]["desc"].strip()
    stacks = usage["software-stack-deployment"]
    assert set(stacks) == {"conda", "apptainer", "apptainer+conda"}
    # nothing here runs `--sdm conda` or apptainer, and no rule names a container
    assert stacks == {"conda": False, "apptainer": False, "apptainer+conda": False}
    rules = "".join(p.read_text(encoding="utf-8") for p in (REPO / "workflow" / "rules").rglob("*.smk"))
    assert "container:" not in rules
    # the report is real: rules mark outputs for it and the Snakefile names its landing page
    assert usage["report"] is True and "report(" in rules
