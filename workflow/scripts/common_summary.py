"""Rule common_summary: the summary with costs, the "which method" table, the not-certified list, the findings and
the README's table."""

from pathlib import Path

import pandas as pd

from ddppm.core.io import read_parquet, write_parquet, write_text_atomic
from ddppm.experiments.common import tables
from ddppm.experiments.common_findings import WHICH_COLUMNS, dataset_answers, findings, readme_summary
from ddppm.pipeline.report import write_table_page
from ddppm.pipeline.steps import setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
runs = pd.concat([read_parquet(path)[0] for path in snakemake.input.runs], ignore_index=True)
bounds = [read_parquet(path)[0] for path in snakemake.input.bounds]
out = tables(runs, pd.concat(bounds, ignore_index=True) if bounds else None, cfg)
meta = {"config_hash": cfg["config_hash"]}
write_parquet(out["summary"], snakemake.output.parquet, meta)
write_text_atomic(snakemake.output.summary, out["summary"].to_csv(index=False))
write_text_atomic(snakemake.output.which, out["which_method"].to_csv(index=False))
write_text_atomic(snakemake.output.not_certified, out["not_certified"].to_csv(index=False))
for name in ("summary", "not_certified"):
    write_table_page(snakemake.output[name], snakemake.output[f"{name}_page"])
write_table_page(snakemake.output.which, snakemake.output.which_page, WHICH_COLUMNS)  # readable at 1280 px
lines = findings(out["which_method"], out["summary"], cfg["common"], out["not_certified"], cfg.get("threat_models"))
write_text_atomic(snakemake.output.findings, "\n".join(lines) + "\n")
write_text_atomic(snakemake.output.readme, readme_summary(out["which_method"], out["summary"]) + "\n")
log.info("\n%s", "\n".join(lines))
answers = dataset_answers(out, cfg)
for findings_path, answer_path, which_path, which_page in zip(
    snakemake.output.dataset_findings, snakemake.output.dataset_answers, snakemake.output.dataset_which,
    snakemake.output.dataset_which_pages, strict=True,
):  # fmt: skip
    answer = answers[Path(findings_path).parent.name]  # results/common/datasets/<name>/findings.txt
    write_text_atomic(findings_path, "\n".join(answer["findings"]) + "\n")
    write_text_atomic(answer_path, answer["answer"] + "\n")
    write_text_atomic(which_path, answer["which_method"].to_csv(index=False))
    write_table_page(which_path, which_page, WHICH_COLUMNS)
