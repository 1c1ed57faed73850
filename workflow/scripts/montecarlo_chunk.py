"""Rule montecarlo_chunk: one chunk of the Monte-Carlo runs of one (dataset, method), at every ε."""

from ddppm.core.io import read_parquet, write_parquet
from ddppm.pipeline.montecarlo import chunk_indices, log_runs, montecarlo_table
from ddppm.pipeline.steps import problem_from_files, setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
wc = snakemake.wildcards
mc = cfg["montecarlo"]
indices = chunk_indices(int(mc["runs"]), int(wc.chunks), int(wc.chunk))
problem = problem_from_files(snakemake.input.data, snakemake.input.partition, snakemake.input.network)
params, _ = read_parquet(snakemake.input.params)
log.info(
    "%s %s chunk %s of %s: %d runs (%d..%d)",
    wc.dataset,
    wc.method,
    wc.chunk,
    wc.chunks,
    len(indices),
    indices.min(),
    indices.max(),
)
runs = montecarlo_table(
    problem, wc.method, params, indices, int(mc["seed"]), wc.dataset, cfg["methods"][wc.method], report=log_runs(log)
)
write_parquet(
    runs, snakemake.output[0], {"config_hash": cfg["config_hash"], "seed": int(mc["seed"]), "runs": indices.tolist()}
)
