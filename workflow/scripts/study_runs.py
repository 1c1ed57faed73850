"""Rule study_runs: every run of one scale study."""

from ddppm.core.io import write_parquet
from ddppm.pipeline.steps import setup_logging
from ddppm.studies.run import run_study

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
study = snakemake.wildcards.study
context = {key: cfg[key] for key in ("workshop", "threat_models") if key in cfg}  # the searched variants' options
runs = run_study(study, cfg["studies"], context)
write_parquet(runs, snakemake.output[0], {"config_hash": cfg["config_hash"], "study": study})
log.info("%s: %d rows", study, len(runs))
