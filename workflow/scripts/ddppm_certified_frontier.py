"""Rule ddppm_certified_frontier: the certified D-DP-PM's best error at each (ε, δ) of its frontier grid."""

from ddppm.core.io import write_parquet
from ddppm.methods.certified.method import CertifiedDDPPM
from ddppm.pipeline.steps import problem_from_files, setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
method = CertifiedDDPPM()
problem = problem_from_files(snakemake.input.data, snakemake.input.partition, snakemake.input.network)
table = method.frontier(problem, cfg["epsilons"], cfg["methods"][method.name])
log.info("%s:\n%s", snakemake.wildcards.dataset, table.to_string())
write_parquet(table, snakemake.output[0], {"config_hash": cfg["config_hash"]})
