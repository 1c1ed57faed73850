"""Rule ldppca_summary: a local-DP PCA figure's points (mean, band, chance level) and fitted theory rates."""

import pandas as pd

from ddppm.core.io import read_parquet, write_parquet
from ddppm.experiments.ldppca import summarise
from ddppm.pipeline.steps import setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
runs = pd.concat([read_parquet(path)[0] for path in snakemake.input], ignore_index=True)
summary, fits = summarise(runs, float(cfg["spike"]), float(cfg["fit"]["below_chance_fraction"]))
log.info(
    "%d runs -> %d points, %d fits (%d with points)", len(runs), len(summary), len(fits), (fits["points"] > 0).sum()
)
meta = {"config_hash": cfg["config_hash"], "spike": cfg["spike"], "fit": cfg["fit"]}
write_parquet(summary, snakemake.output.summary, meta)
write_parquet(fits, snakemake.output.fits, meta)
