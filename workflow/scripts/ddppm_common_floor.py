"""Rule ddppm_common_floor: D-DP-PM's parameter-free δ floor under the network view, on the common task's ε grid,
for a data set only the common task runs."""

from ddppm.core.io import write_parquet
from ddppm.methods.ddppm.steps import floor_table
from ddppm.pipeline.steps import problem_from_files, setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
dataset = snakemake.wildcards.dataset
problem = problem_from_files(snakemake.input.data, snakemake.input.partition, snakemake.input.network)
eps = cfg["common"]["epsilons"]
limits = [cfg["common"]["delta"]] * len(eps)
table = floor_table(problem, eps, limits, cfg["methods"]["ddppm"], dataset, views=("network",))
log.info("%s\n%s", dataset, table.drop(columns="new_row").to_string())
write_parquet(table, snakemake.output[0], {"config_hash": cfg["config_hash"]})
