"""Rule method_params: a closed-form method's parameters at every ε and its δ limit."""

import numpy as np

from ddppm.core.io import write_parquet
from ddppm.methods import get_method
from ddppm.pipeline.steps import problem_from_files, setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
name = snakemake.wildcards.method
problem = problem_from_files(snakemake.input.data, snakemake.input.partition, snakemake.input.network)
table = get_method(name).choose_params(
    problem, np.asarray(cfg["epsilons"]), np.asarray(cfg["delta_limits"]), cfg["methods"][name]
)
log.info("%s on %s:\n%s", name, snakemake.wildcards.dataset, table.to_string())
write_parquet(table, snakemake.output[0], {"config_hash": cfg["config_hash"], "method": name})
