"""Rule montecarlo_chunk: one chunk of the Monte-Carlo runs of one (dataset, method, ε)."""

import numpy as np

from ddppm.io import read_parquet, write_parquet
from ddppm.pipeline import chunk_indices, load_problem, montecarlo_runs, setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
wc = snakemake.wildcards
eps = float(wc.eps)
delta = float(np.array(cfg["delta_limits"])[np.isclose(cfg["epsilons"], eps)][0])
mc = cfg["montecarlo"]
indices = chunk_indices(int(mc["runs"]), int(mc["chunks"]), int(wc.chunk))
problem = load_problem(snakemake.input.data, snakemake.input.partition, snakemake.input.network)
calibration, cal_meta = read_parquet(snakemake.input.calibration)
runs = montecarlo_runs(
    problem, wc.method, eps, delta, calibration, cal_meta["t_star"], indices, int(mc["seed"]), wc.dataset
)
log.info(
    "%s %s eps=%s chunk %s: %d runs, mean error %.4g",
    wc.dataset,
    wc.method,
    wc.eps,
    wc.chunk,
    len(runs),
    runs["error"].mean(),
)
write_parquet(
    runs, snakemake.output[0], {"config_hash": cfg["config_hash"], "seed": int(mc["seed"]), "runs": indices.tolist()}
)
