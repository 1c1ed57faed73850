"""Rule ldppca_table: both local-DP PCA figures' points as one table (Parquet + CSV) and the findings file."""

import pandas as pd

from ddppm.core.io import read_parquet, write_parquet, write_text_atomic
from ddppm.experiments.ldppca import PAPER_POINTS, findings
from ddppm.pipeline.report import write_table_page
from ddppm.pipeline.steps import setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
summary = pd.concat([read_parquet(path)[0] for path in snakemake.input.summaries], ignore_index=True)
fits = pd.concat([read_parquet(path)[0] for path in snakemake.input.fits], ignore_index=True)
write_parquet(summary, snakemake.output.parquet, {"config_hash": cfg["config_hash"]})
write_text_atomic(snakemake.output.csv, summary.to_csv(index=False))
write_table_page(snakemake.output.csv, snakemake.output.page)
write_text_atomic(snakemake.output.fits, fits.to_csv(index=False))
write_table_page(snakemake.output.fits, snakemake.output.fits_page)
lines = findings(summary, fits, PAPER_POINTS)
write_text_atomic(snakemake.output.findings, "\n".join(lines) + "\n")
log.info("%d points, %d fits\n%s", len(summary), len(fits), "\n".join(lines))
