"""Rule summarize_runs: per (method, threat model, ε) mean error with its bands, for one dataset."""

import pandas as pd

from ddppm.core.io import read_parquet, write_parquet
from ddppm.pipeline.montecarlo import summarize_runs
from ddppm.pipeline.steps import setup_logging

log = setup_logging(snakemake.log[0])
runs = pd.concat([read_parquet(path)[0] for path in snakemake.input], ignore_index=True)
summary = summarize_runs(runs)
log.info("\n%s", summary.to_string())
write_parquet(summary, snakemake.output[0], {"config_hash": snakemake.params.cfg["config_hash"]})
