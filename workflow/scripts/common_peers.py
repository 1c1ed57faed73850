"""Rule common_peers (and common_peers_full): diffprivlib and OpenDP PCA as installed, on one data set."""

from ddppm.common_task.peers import check_peer_python
from ddppm.core.io import write_parquet
from ddppm.experiments.common_peers import peer_runs_of_dataset, point_outcomes
from ddppm.pipeline.steps import problem_from_files, setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
dataset = snakemake.wildcards.dataset
check_peer_python(cfg["common"]["peers"])  # common.peers.python, or the checkout's .venv-peers
problem = problem_from_files(snakemake.input.data, snakemake.input.partition, snakemake.input.network)
runs = peer_runs_of_dataset(problem, dataset, cfg["common"], full=bool(snakemake.params.full))
write_parquet(runs, snakemake.output[0], {"config_hash": cfg["config_hash"], "dataset": dataset,
                                          "peers_lock": snakemake.params.peers_lock})  # fmt: skip
for line in point_outcomes(runs):
    log.info(line)
