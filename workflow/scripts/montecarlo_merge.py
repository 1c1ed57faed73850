"""Rule montecarlo: gather the chunks of one (dataset, method, ε) in run order."""

import pandas as pd

from ddppm.core.io import read_parquet, write_parquet
from ddppm.pipeline.steps import setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
merged = pd.concat([read_parquet(path)[0] for path in snakemake.input], ignore_index=True)
merged = merged.sort_values(["threat_model", "run"], kind="stable").reset_index(drop=True)
log.info("merged %d chunks: %d rows", len(snakemake.input), len(merged))
write_parquet(
    merged,
    snakemake.output[0],
    {"config_hash": cfg["config_hash"], "seed": cfg["montecarlo"]["seed"], "chunks": len(snakemake.input)},
)
