"""ddppm as a module of another workflow (docs/pipeline.md, "Use ddppm from your workflow").

Two outer workflows in temporary folders, away from the repository, each with its own ``config/config.yaml``: the
repository's ``config/config.yaml`` with the tiny sizes laid over it and two data sets, Wine and a CSV file of the
outer folder.

* A hand-written one: a ``module ddppm`` statement naming the repository's ``workflow/Snakefile`` and ``use rule *
  from ddppm as ddppm_*``. Its dry run plans the common task and the journal figures; its tiny run completes in the
  outer folder, with the code hashes of the module's own files.
* The one snakedeploy writes, ``snakedeploy deploy-workflow <checkout> <folder> --branch main``, from a fresh copy of
  the checkout (what a user's local clone holds): its ``workflow/Snakefile`` as written but for the module's path
  (snakedeploy's local form names a file that does not exist, tested), its copied config with the tiny sizes laid
  over, its copied profile's report stylesheet pointed at the copy. Its dry run (the copied profile gives the cores),
  its tiny run, then nothing to do, and its report.

And the form snakedeploy writes from GitHub (``snakefile: github(...)``), deployed and dry-run offline from a seeded
git cache, stops before any job with a message naming the fix: the workflow needs a local checkout.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from ddppm.core.schema import merge
from ddppm.testing import copy_checkout
from tests.conftest import REPO, SNAKEMAKE, TINY

pytestmark = pytest.mark.slow

SNAKEDEPLOY = Path(sys.executable).with_name("snakedeploy")

OUTER_SNAKEFILE = f"""\
configfile: "config/config.yaml"


module ddppm:
    snakefile:
        "{REPO / "workflow" / "Snakefile"}"
    config:
        config


use rule * from ddppm as ddppm_*
"""

# What `snakedeploy deploy-workflow <folder> <dest> --branch main` writes to <dest>/workflow/Snakefile (its template
# use_module.smk.jinja, snakedeploy 0.17.1 as locked), for a source folder named ddppm: the module takes the folder's
# name. Compared line by line without trailing blanks (the template leaves one after `snakefile:`).
SNAKEDEPLOY_SNAKEFILE = """\
from snakemake.utils import min_version


min_version("6.10.0")


configfile: "config/config.yaml"


# declare {source} as a module
module ddppm:
    snakefile:
        {snakefile}
    config:
        config


# use all rules from {source}
use rule * from ddppm
"""

# snakedeploy's local provider names the module `"workflow/Snakefile"`, the path inside the source folder, but
# Snakemake reads a relative module path from the folder of the Snakefile that names it, <dest>/workflow: the file
# it looks for, <dest>/workflow/workflow/Snakefile, does not exist. What a user writes instead (docs/pipeline.md):
# the clone's own workflow/Snakefile, the file a `github(...)` deployment would fetch.
SNAKEDEPLOY_LOCAL_PATH = '"workflow/Snakefile"'
# The repository's files snakedeploy copies into a deployment (its config/ and profiles/ folders, the licence).
COPIED = ("config/config.yaml", "config/README.md", "profiles/default/config.yaml", "profiles/slurm/config.yaml")
COPIED += ("LICENSE",)


def _write_own_data(folder: Path) -> None:
    """``data/mine.csv`` in ``folder``: 240 rows, 5 features with one strong common factor (the journal methods need
    an eigengap)."""
    (folder / "data").mkdir()
    rng = np.random.default_rng(0)
    rows = rng.normal(size=(240, 1)) * [3, 2, 1, 1, 0.5] + 0.5 * rng.normal(size=(240, 5))
    pd.DataFrame(rows, columns=[f"f{j}" for j in range(5)]).to_csv(folder / "data" / "mine.csv", index=False)


def _tiny_config(shipped: dict) -> dict:
    """``shipped`` (the deployment's config) with the tiny sizes laid over it, Wine and ``data/mine.csv`` as the
    journal's and the common task's data sets, results in ``out/``."""
    config = merge(shipped, yaml.safe_load((REPO / TINY).read_text()))
    config["datasets"] = ["wine", "mine"]
    config["delta_limits"]["mine"] = list(config["delta_limits"]["wine"])
    config.setdefault("dataset_options", {})["mine"] = {
        "source": "file",
        "path": "data/mine.csv",
        "public_bounds": {"kind": "declared", "source": "test: normals scaled by at most 3", "all_features": [-15, 15]},
    }
    config["common"]["datasets"] = ["wine", "mine"]
    config["results_dir"] = "out"
    return config


def _write_config(folder: Path, config: dict) -> None:
    (folder / "config").mkdir(exist_ok=True)
    (folder / "config" / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def _snakemake(
    folder: Path, *args: str, cores: str | None = "2", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Snakemake in ``folder``; ``cores=None`` leaves the cores to the folder's workflow profile."""
    command = [SNAKEMAKE, *(["--cores", cores] if cores else []), *args]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=900, env=env)


def _snakedeploy(source: Path | str, dest: Path, *ref: str) -> str:
    """Run ``snakedeploy deploy-workflow source dest *ref`` (offline: a local folder, or a local git repository for
    its GitHub provider); return the Snakefile it wrote."""
    if not SNAKEDEPLOY.exists():  # the lock installs it for Python < 3.13 only (pyproject.toml)
        pytest.skip("snakedeploy is not installed in this environment")
    out = subprocess.run(
        [str(SNAKEDEPLOY), "deploy-workflow", str(source), str(dest), *ref], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    return (dest / "workflow" / "Snakefile").read_text()


@pytest.fixture(scope="module")
def outer(tmp_path_factory):
    folder = tmp_path_factory.mktemp("outer-workflow")
    (folder / "Snakefile").write_text(OUTER_SNAKEFILE)
    _write_own_data(folder)
    _write_config(folder, _tiny_config(yaml.safe_load((REPO / "config" / "config.yaml").read_text())))
    return folder


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    """snakedeploy's deployment of a fresh copy of the checkout, as written, then as a user completes it.

    The source is a copy of the working tree (tracked and untracked files), not a ``git clone`` of HEAD:
    snakedeploy's local provider copies the folder and checks nothing out (``--branch`` is required but unused), and
    the jobs import ``ddppm`` from this checkout's install, so a copy of the same files keeps scripts, code hashes
    and library one version. It is made without the peers' link, which snakedeploy would copy in full; the peer
    rules find the environment from the installed ``ddppm``.
    """
    root = tmp_path_factory.mktemp("snakedeploy")
    source = copy_checkout(REPO, root / "ddppm", link_peers=False)
    dest = root / "analysis"
    written = _snakedeploy(source, dest, "--branch", "main")
    as_written = _snakemake(dest, "-n", "--quiet", "rules")
    copied = {name: (dest / name).read_bytes() for name in COPIED}  # before the edits below
    # What a user then does: names the module's Snakefile by its path, sizes the copied config, adds a data set,
    # and points the copied profile's report stylesheet (a path from the repository's root) at the clone.
    (dest / "workflow" / "Snakefile").write_text(
        written.replace(SNAKEDEPLOY_LOCAL_PATH, f'"{source / "workflow" / "Snakefile"}"')
    )
    profile = dest / "profiles" / "default" / "config.yaml"
    stylesheet = "report-stylesheet: workflow/report/style.css\n"
    assert stylesheet in profile.read_text(), "the profile's report-stylesheet moved: update docs/pipeline.md"
    profile.write_text(
        profile.read_text().replace(stylesheet, f"report-stylesheet: {source / 'workflow/report/style.css'}\n")
    )
    _write_own_data(dest)
    _write_config(dest, _tiny_config(yaml.safe_load(copied["config/config.yaml"])))
    return {"source": source, "dest": dest, "written": written, "as_written": as_written, "copied": copied}


def test_the_outer_workflow_plans_both_data_sets_from_its_own_folder(outer) -> None:
    out = _snakemake(outer, "-n", "--quiet", "rules")
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    planned = out.stdout + out.stderr
    for rule in ("ddppm_all", "ddppm_prepare_dataset", "ddppm_common_runs", "ddppm_montecarlo", "ddppm_partition"):
        assert rule in planned, f"{rule} not planned:\n{planned[-2000:]}"


# The renamed form's run: one target per kind of rule that reads its own files or names (the CSV's preparation and
# partition, a Monte-Carlo method, the common task, a figure whose layout once came from its rule's name), for the
# CSV data set. The whole default target runs through snakedeploy's form below (the same module, no new names).
RENAMED_TARGETS = ("out/runs/mine/ldp.parquet", "out/common/runs/standard/mine.parquet", "out/figures/fig2_mine.png")


def test_the_tiny_run_completes_in_the_outer_folder_with_the_module_s_code(outer) -> None:
    """The renamed rules (``ddppm_*``) run at the tiny sizes from the outer folder: their files land there, none in
    the module's checkout, the journal runs have the configured ε, the one-data-set figure is the one-panel layout,
    and a second dry run of the same targets has nothing to do."""
    out = _snakemake(outer, *RENAMED_TARGETS)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    for target in RENAMED_TARGETS:
        assert (outer / target).is_file(), target
    assert not (REPO / "out").exists(), "the module wrote into its checkout"
    runs = pq.read_table(outer / RENAMED_TARGETS[0]).to_pandas()
    configured = yaml.safe_load((outer / "config" / "config.yaml").read_text())
    assert sorted(set(runs["eps"])) == sorted(configured["epsilons"])
    log = (outer / "out" / "logs" / "figures" / "fig2_mine.log").read_text()
    assert "(single layout)" in log, log
    again = _snakemake(outer, "-n", *RENAMED_TARGETS)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr, again.stdout[-1500:]


def test_snakedeploy_writes_its_module_statement_and_copies_the_config(deployed) -> None:
    source, dest = deployed["source"], deployed["dest"]
    expected = SNAKEDEPLOY_SNAKEFILE.format(source=source, snakefile=SNAKEDEPLOY_LOCAL_PATH)
    assert [line.rstrip() for line in deployed["written"].splitlines()] == expected.splitlines()
    for name, copied in deployed["copied"].items():
        assert copied == (REPO / name).read_bytes(), name
    # As written, the module's file is looked for beside the deployment's own Snakefile. When a snakedeploy release
    # writes a path that works, this fails: drop SNAKEDEPLOY_LOCAL_PATH's replacement and the step in the docs.
    as_written = deployed["as_written"]
    assert as_written.returncode != 0
    assert str(dest / "workflow" / "workflow" / "Snakefile") in as_written.stdout + as_written.stderr


DEPLOYED_TARGETS = ("out/runs/mine/ldp.parquet", "out/common/runs/standard/mine.parquet", "out/figures/fig2_mine.png")
"""What the deployed workflow builds (a journal method's runs, the common task's, a figure; the whole tiny default
target runs in the session's tiny run, and here it is planned)."""


def test_snakedeploy_s_deployment_plans_the_tiny_default_target_and_runs_its_jobs(deployed) -> None:
    """snakedeploy's form, ``use rule * from ddppm`` (no new names): the module's ``all`` is the default target and
    plans every rule; the copied workflow profile gives the cores (no flag); its jobs run from the deployment's
    folder (files there, none in the module's checkout), a second dry run has nothing to do, and the report builds
    from the finished jobs."""
    dest = deployed["dest"]
    plan = _snakemake(dest, "-n", "--quiet", "rules", cores=None)
    assert plan.returncode == 0, plan.stdout[-2000:] + plan.stderr[-3000:]
    planned = plan.stdout + plan.stderr
    assert "\nall " in planned and "common_runs" in planned and "prepare_dataset" in planned, planned[-2000:]
    out = _snakemake(dest, *DEPLOYED_TARGETS, cores=None)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    for target in DEPLOYED_TARGETS:
        assert (dest / target).is_file(), target
    for checkout in {deployed["source"], REPO}:
        assert not (checkout / "out").exists(), f"the module wrote into {checkout}"
    runs = pq.read_table(dest / DEPLOYED_TARGETS[0]).to_pandas()
    configured = yaml.safe_load((dest / "config" / "config.yaml").read_text())
    assert sorted(set(runs["eps"])) == sorted(configured["epsilons"])
    again = _snakemake(dest, "-n", *DEPLOYED_TARGETS)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr, again.stdout[-1500:]
    report = _snakemake(dest, *DEPLOYED_TARGETS, "--report", "report.html")
    assert report.returncode == 0 and (dest / "report.html").stat().st_size > 0, report.stderr[-3000:]


def test_snakedeploy_s_github_deployment_stops_with_a_message_naming_the_fix(tmp_path) -> None:
    """``snakedeploy deploy-workflow https://github.com/<owner>/ddppm ... --tag ...`` writes ``snakefile:
    github("<owner>/ddppm", path="workflow/Snakefile", tag=...)``; Snakemake then reads the module from its own git
    cache. Both are served offline by one bare repository (a snapshot of the checkout) at the cache's place for
    github.com/example/ddppm: snakedeploy takes its GitHub provider for a source whose path holds "github", and
    Snakemake does not fetch a tag it already has."""
    snapshot = copy_checkout(REPO, tmp_path / "snapshot", link_peers=False)
    git = ["git", "-C", str(snapshot), "-c", "user.name=test", "-c", "user.email=test@example.org"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "snapshot"], ["tag", "v0-test"]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    cache = tmp_path / "cache"  # XDG_CACHE_HOME: Snakemake's source cache is <it>/snakemake/snakemake/source-cache
    hosted = cache / "snakemake" / "snakemake" / "source-cache" / "snakemake-git-cache" / "github.com" / "example"
    subprocess.run(["git", "clone", "-q", "--bare", str(snapshot), str(hosted / "ddppm")], check=True)
    dest = tmp_path / "analysis"
    written = _snakedeploy(hosted / "ddppm", dest, "--tag", "v0-test")
    declared = 'github("example/ddppm", path="workflow/Snakefile", tag="v0-test")'
    assert [line.rstrip() for line in written.splitlines()] == SNAKEDEPLOY_SNAKEFILE.format(
        source=hosted / "ddppm", snakefile=declared
    ).splitlines()
    out = _snakemake(dest, "-n", env={**os.environ, "XDG_CACHE_HOME": str(cache)})
    assert out.returncode != 0
    said = out.stdout + out.stderr
    assert "ddppm runs only from a local checkout" in said and "raw.githubusercontent.com/example/ddppm" in said, said
