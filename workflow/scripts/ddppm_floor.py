"""Rule ddppm_floor: the parameter-free floor of D-DP-PM's δ for one data set, under every observer view."""

from ddppm.core.io import write_parquet
from ddppm.methods.ddppm.steps import floor_table
from ddppm.pipeline.steps import problem_from_files, setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
problem = problem_from_files(snakemake.input.data, snakemake.input.partition, snakemake.input.network)
table = floor_table(problem, cfg["epsilons"], cfg["delta_limits"], cfg["methods"]["ddppm"], snakemake.wildcards.dataset)
log.info("%s\n%s", snakemake.wildcards.dataset, table.drop(columns="new_row").to_string())
write_parquet(table, snakemake.output[0], {"config_hash": cfg["config_hash"]})
