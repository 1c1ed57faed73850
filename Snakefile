# ddppm: differentially private PCA over many parties (D-DP-PM and its baselines), reproduced.
# Default run: `snakemake` (config.yaml). Tiny run: `snakemake --configfile tests/config/tiny.yaml`.
import os
import time
from pathlib import Path

from snakemake.utils import min_version

from ddppm.pipeline.report import where_to_look

min_version("8.0")
# A job's BLAS gets one thread unless its rule asks for more (threadpoolctl in the script): Snakemake limits it for
# `shell:` jobs only, and a `script:` job otherwise starts a thread per core, so two jobs on two cores fight, and a
# small eigendecomposition runs 12 times slower (0.42 ms against 5 ms for d = 50, measured). Results do not change.
for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "1")
RUN_STARTED = time.time()  # "where to look" names only what this run wrote


configfile: "config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/montecarlo.smk"
include: "workflow/rules/figures.smk"


# One rule file per calibrated method (its calibration, and figures of its own paper). What the rule files add to
# the default target and the report is declared (DECLARED, ddppm.pipeline.declared): the include order is free.
for method in METHOD_RULE_FILES:

    include: f"workflow/rules/methods/{method}.smk"


# One rule file per other paper's experiment listed in `experiments` (its data, runs, figures and tables).
for experiment in config["experiments"]:

    include: f"workflow/rules/experiments/{experiment}.smk"


include: "workflow/rules/report.smk"


# The landing page states this run's findings once rule report_landing has written it; before that, a static page.
report: str(Path(REPORT_LANDING).resolve()) if Path(REPORT_LANDING).exists() else "workflow/report/workflow.rst"


rule all:
    """Every figure and table of the default reproduction."""
    default_target: True
    input:
        all_targets,


localrules:
    all,


onsuccess:
    print(where_to_look(RESULTS, workflow.overwrite_configfiles, since=RUN_STARTED))
