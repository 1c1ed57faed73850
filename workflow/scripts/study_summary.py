"""Rule study_summary: one scale study's summary and findings."""

from ddppm.core.io import read_parquet, write_parquet, write_text_atomic
from ddppm.pipeline.report import write_table_page
from ddppm.pipeline.steps import setup_logging
from ddppm.studies.findings import study_findings
from ddppm.studies.run import study_summary

log = setup_logging(snakemake.log[0])
study = snakemake.wildcards.study
runs, meta = read_parquet(snakemake.input[0])
summary = study_summary(study, runs)
write_parquet(summary, snakemake.output.parquet, {"config_hash": meta.get("config_hash", "")})
write_text_atomic(snakemake.output.csv, summary.to_csv(index=False))
write_table_page(snakemake.output.csv, snakemake.output.page)
lines = study_findings(study, summary, snakemake.params.cfg["studies"])
write_text_atomic(snakemake.output.findings, "\n".join(lines) + "\n")
log.info("\n%s", "\n".join(lines))
