"""Rule summary_table: one row per (dataset, ε, method, threat model): error, δ achieved, δ limit."""

import pandas as pd

from ddppm.core.io import read_parquet, write_text_atomic
from ddppm.pipeline.report import write_table_page
from ddppm.pipeline.steps import setup_logging
from ddppm.pipeline.tables import summary_table

log = setup_logging(snakemake.log[0])
errors = pd.concat([read_parquet(p)[0] for p in snakemake.input.errors], ignore_index=True)
table = summary_table(errors)
infeasible = int(table["feasible"].eq(False).sum())
log.info("summary: %d rows, %d infeasible", len(table), infeasible)
write_text_atomic(snakemake.output.csv, table.to_csv(index=False))
write_table_page(snakemake.output.csv, snakemake.output.page)
