"""Rule table_html: a CSV table of the report as an HTML page the report shows (the CSV stays the download)."""

import pandas as pd

from ddppm.core.io import write_text_atomic
from ddppm.pipeline.report import html_table
from ddppm.pipeline.steps import setup_logging

log = setup_logging(snakemake.log[0])
table = pd.read_csv(snakemake.input[0])
name = snakemake.wildcards.table
note = f"{name}.csv as a table; every column is explained in docs/columns.md."
flag = "feasible" if "feasible" in table.columns else None
write_text_atomic(snakemake.output[0], html_table(table, name, note, infeasible_column=flag))
log.info("%s: %d rows, %d columns", name, len(table), len(table.columns))
