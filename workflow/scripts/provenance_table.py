"""Rule provenance_table: config hash, git commit and versions of every table the report rests on."""

from ddppm.core.io import write_text_atomic
from ddppm.pipeline.report import html_table, provenance_table
from ddppm.pipeline.steps import setup_logging

log = setup_logging(snakemake.log[0])
table = provenance_table(snakemake.input)
write_text_atomic(snakemake.output.csv, table.to_csv(index=False))
note = "config_hash: hash of exactly the configuration keys the job that wrote the file read (see README, What reruns)."
write_text_atomic(snakemake.output.html, html_table(table, "Provenance of every table", note, infeasible_column=None))
log.info("%d files, git commits %s", len(table), sorted(table["git_commit"].dropna().unique()))
