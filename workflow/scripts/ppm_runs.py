"""Rule ppm_runs: every (ε, run) of one method of the private power method family (experiment ppm)."""

from threadpoolctl import threadpool_limits

from ddppm.core.io import read_parquet, write_parquet
from ddppm.experiments.ppm import load_problem, run_method
from ddppm.pipeline.steps import setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
R, U = load_problem(read_parquet(snakemake.input.interactions)[0], read_parquet(snakemake.input.reference)[0])
with threadpool_limits(snakemake.threads):
    runs = run_method(snakemake.wildcards.ppm_method, R, U, cfg["ppm"])
write_parquet(runs, snakemake.output[0], {"config_hash": cfg["config_hash"], "method": snakemake.wildcards.ppm_method})
log.info("wrote %d runs to %s", len(runs), snakemake.output[0])
