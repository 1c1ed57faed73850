"""Rule ddppm_common_searched: the journal and workshop D-DP-PM calibrated to the common δ under a searched threat
model on one data set, and their runs in the common task's format."""

from ddppm.core.io import write_parquet
from ddppm.experiments.common import searched_runs_of_dataset
from ddppm.pipeline.steps import problem_from_files, setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
dataset = snakemake.wildcards.dataset
problem = problem_from_files(snakemake.input.data, snakemake.input.partition, snakemake.input.network)
runs, params = searched_runs_of_dataset(problem, dataset, cfg)
meta = {"config_hash": cfg["config_hash"], "dataset": dataset}
write_parquet(params, snakemake.output.params, meta)
write_parquet(runs, snakemake.output.runs, meta)
feasible = runs.groupby(["method", "eps"])["feasible"].first()
log.info("%s: feasible (method, ε) under %s:\n%s", dataset, cfg["common"]["searched"]["threat_model"], feasible)
