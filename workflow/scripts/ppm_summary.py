"""Rule ppm_summary: errors per (method, ε) with bootstrap intervals, ε ratios at equal error, findings."""

import pandas as pd

from ddppm.core.io import read_parquet, write_parquet, write_text_atomic
from ddppm.experiments.ppm import eps_ratio_table, findings, settings_title, summarise
from ddppm.pipeline.report import write_table_page
from ddppm.pipeline.steps import setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
section = cfg["ppm"]
runs = pd.concat([read_parquet(path)[0] for path in snakemake.input.runs], ignore_index=True)
data_meta = read_parquet(snakemake.input.reference)[1]
summary = summarise(runs, section["bootstrap"])
ratios = eps_ratio_table(summary, section["eps_ratio_reference"])
meta = {"config_hash": cfg["config_hash"], "data": data_meta["data"], "noiseless_errors": data_meta["noiseless_errors"]}
write_parquet(summary, snakemake.output.errors, meta)
write_text_atomic(snakemake.output.errors_csv, summary.to_csv(index=False))
write_parquet(ratios, snakemake.output.eps_ratio, meta)
write_text_atomic(snakemake.output.eps_ratio_csv, ratios.to_csv(index=False))
write_table_page(snakemake.output.errors_csv, snakemake.output.errors_page)
write_table_page(snakemake.output.eps_ratio_csv, snakemake.output.eps_ratio_page)
lines = findings(summary, ratios, settings_title(section, data_meta["data"]), section["claims"])
write_text_atomic(snakemake.output.findings, "\n".join(lines) + "\n")
log.info("summary: %d rows, %d ε-ratio levels\n%s", len(summary), len(ratios), "\n".join(lines))
