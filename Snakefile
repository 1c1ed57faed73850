# ddppm: reproduce "Decentralized Differentially Private Power Method" (Campbell, Scaglione, Peisert).
# Default run: `snakemake --cores all` (config.yaml). Tiny run: `snakemake --configfile tests/config/tiny.yaml`.
from snakemake.utils import min_version

min_version("8.0")


configfile: "config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/calibration.smk"
include: "workflow/rules/montecarlo.smk"
include: "workflow/rules/privacy.smk"
include: "workflow/rules/figures.smk"


report: "workflow/report/workflow.rst"


rule all:
    default_target: True
    input:
        all_targets(),
