"""Rule common_clipping: what the public bounds clip on each data set's raw records, and its bias."""

from ddppm.core.io import write_text_atomic
from ddppm.experiments.common_scope import clipping_table
from ddppm.pipeline.report import write_table_page
from ddppm.pipeline.steps import setup_logging

log = setup_logging(snakemake.log[0])
table = clipping_table(snakemake.config)
write_text_atomic(snakemake.output.csv, table.to_csv(index=False))
write_table_page(snakemake.output.csv, snakemake.output.page)
log.info("\n%s", table.drop(columns="bounds_source").to_string(index=False))
