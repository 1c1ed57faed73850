"""ddppm as a module of another workflow, as snakedeploy writes a deployment (docs/pipeline.md, "Use ddppm from your
workflow").

An outer workflow in a temporary folder, away from the repository, holds a ``module ddppm`` statement pointing at
the repository's ``workflow/Snakefile``, ``use rule * from ddppm as ddppm_*`` and its own ``config/config.yaml``: the
repository's ``config/config.yaml`` (what snakedeploy copies) with the tiny sizes laid over it and two data sets,
Wine and a CSV file of the outer folder. Its dry run plans the common task and the journal figures (and so does
snakedeploy's own form, ``use rule * from ddppm``); its tiny run completes in the outer folder, with the code hashes
of the module's own files.
"""

from __future__ import annotations

import subprocess

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from ddppm.core.schema import merge
from tests.conftest import REPO, SNAKEMAKE, TINY

pytestmark = pytest.mark.slow

OUTER_SNAKEFILE = f"""\
configfile: "config/config.yaml"


module ddppm:
    snakefile:
        "{REPO / "workflow" / "Snakefile"}"
    config:
        config


use rule * from ddppm as ddppm_*
"""


@pytest.fixture(scope="module")
def outer(tmp_path_factory):
    folder = tmp_path_factory.mktemp("outer-workflow")
    (folder / "Snakefile").write_text(OUTER_SNAKEFILE)
    (folder / "data").mkdir()
    rng = np.random.default_rng(0)  # one strong common factor: the journal methods need an eigengap
    rows = rng.normal(size=(240, 1)) * [3, 2, 1, 1, 0.5] + 0.5 * rng.normal(size=(240, 5))
    pd.DataFrame(rows, columns=[f"f{j}" for j in range(5)]).to_csv(folder / "data" / "mine.csv", index=False)
    shipped, tiny = (yaml.safe_load(path.read_text()) for path in (REPO / "config" / "config.yaml", REPO / TINY))
    config = merge(shipped, tiny)
    config["datasets"] = ["wine", "mine"]
    config["delta_limits"]["mine"] = list(config["delta_limits"]["wine"])
    config.setdefault("dataset_options", {})["mine"] = {
        "source": "file",
        "path": "data/mine.csv",
        "public_bounds": {"kind": "declared", "source": "test: normals scaled by at most 3", "all_features": [-15, 15]},
    }
    config["common"]["datasets"] = ["wine", "mine"]
    config["results_dir"] = "out"
    (folder / "config").mkdir()
    (folder / "config" / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return folder


def _snakemake(folder, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SNAKEMAKE, "--cores", "2", *args], cwd=folder, capture_output=True, text=True, timeout=900)


def test_the_outer_workflow_plans_both_data_sets_from_its_own_folder(outer) -> None:
    out = _snakemake(outer, "-n", "--quiet", "rules")
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    planned = out.stdout + out.stderr
    for rule in ("ddppm_all", "ddppm_prepare_dataset", "ddppm_common_runs", "ddppm_montecarlo", "ddppm_partition"):
        assert rule in planned, f"{rule} not planned:\n{planned[-2000:]}"
    # snakedeploy's own form, `use rule * from ddppm` (no new names): the module's `all` is the default target
    deployed = outer.parent / "deployed"
    deployed.mkdir()
    (deployed / "config").mkdir()
    (deployed / "config" / "config.yaml").write_text((outer / "config" / "config.yaml").read_text())
    (deployed / "data").mkdir()
    (deployed / "data" / "mine.csv").write_text((outer / "data" / "mine.csv").read_text())
    (deployed / "Snakefile").write_text(OUTER_SNAKEFILE.replace(" as ddppm_*", ""))
    plain = _snakemake(deployed, "-n", "--quiet", "rules")
    assert plain.returncode == 0, plain.stdout[-2000:] + plain.stderr[-3000:]
    assert "\nall " in plain.stdout + plain.stderr and "common_runs" in plain.stdout + plain.stderr


def test_the_tiny_run_completes_in_the_outer_folder_with_the_module_s_code(outer) -> None:
    """The whole default target (``ddppm_all``) at the tiny sizes, as a deployment runs it: every file lands in the
    outer folder, none in the repository, and a second dry run has nothing to do."""
    out = _snakemake(outer)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    targets = ["out/common/runs/standard/mine.parquet", "out/runs/mine/ldp.parquet", "out/common/summary.csv"]
    for target in targets:
        assert (outer / target).is_file(), target
    assert not (REPO / "out").exists(), "the module wrote into the repository"
    runs = pq.read_table(outer / targets[1]).to_pandas()
    configured = yaml.safe_load((outer / "config" / "config.yaml").read_text())
    assert sorted(set(runs["eps"])) == sorted(configured["epsilons"])
    again = _snakemake(outer, "-n")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr, again.stdout[-1500:]
