"""Rule montecarlo: the Monte-Carlo runs of one (dataset, method) at every ε, computed here when the runs are not
sharded (`montecarlo.chunks: 1`), else gathered from the shards (bit-identical either way)."""

import numpy as np
import pandas as pd

from ddppm.core.io import read_parquet, write_parquet
from ddppm.pipeline.montecarlo import log_runs, montecarlo_table, run_order
from ddppm.pipeline.steps import problem_from_files, setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
wc = snakemake.wildcards
mc = cfg["montecarlo"]
shards = list(snakemake.input.shards)
if shards:
    runs = run_order(pd.concat([read_parquet(path)[0] for path in shards], ignore_index=True))
    log.info("%s %s: merged %d chunks, %d rows", wc.dataset, wc.method, len(shards), len(runs))
else:
    problem = problem_from_files(snakemake.input.data, snakemake.input.partition, snakemake.input.network)
    params, _ = read_parquet(snakemake.input.params)
    indices = np.arange(int(mc["runs"]))
    log.info("%s %s: %d runs at every ε of its parameter table", wc.dataset, wc.method, len(indices))
    runs = montecarlo_table(
        problem, wc.method, params, indices, int(mc["seed"]), wc.dataset, cfg["methods"][wc.method], log_runs(log)
    )
write_parquet(
    runs,
    snakemake.output[0],
    {"config_hash": cfg["config_hash"], "seed": int(mc["seed"]), "chunks": max(len(shards), 1)},
)
