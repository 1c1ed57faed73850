"""Rule ppm_sensitivity_ratio: their Fig. 2 data, r(k, n) empirical and approximated (experiment ppm)."""

from threadpoolctl import threadpool_limits

from ddppm.core.io import write_parquet, write_text_atomic
from ddppm.experiments.ppm import sensitivity_ratio_table
from ddppm.pipeline.report import write_table_page
from ddppm.pipeline.steps import setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
with threadpool_limits(snakemake.threads):
    table = sensitivity_ratio_table(cfg["ppm"]["sensitivity_ratio"])
write_parquet(table, snakemake.output.table, {"config_hash": cfg["config_hash"]})
write_text_atomic(snakemake.output.csv, table.to_csv(index=False))
write_table_page(snakemake.output.csv, snakemake.output.page)
log.info("wrote %d rows to %s", len(table), snakemake.output.table)
