"""Rule common_runs: every run of every common-task method at every (k, ε) of one setting on one data set."""

from ddppm.core.io import write_parquet
from ddppm.experiments.common import runs_of_dataset
from ddppm.pipeline.steps import problem_from_files, setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
dataset, setting = snakemake.wildcards.dataset, snakemake.wildcards.setting
problem = problem_from_files(snakemake.input.data, snakemake.input.partition, snakemake.input.network)
loader = snakemake.params.records.get("dataset")  # the standard setting's raw records (empty for the others)
runs = runs_of_dataset(problem, dataset, cfg, setting, loader)
write_parquet(runs, snakemake.output[0], {"config_hash": cfg["config_hash"], "dataset": dataset, "setting": setting})
log.info("%s, setting %s: %d runs of %d methods", dataset, setting, len(runs), runs["method"].nunique())
