"""Rule workshop_summary: mean errors, the budget split used, the paper's claims and the findings."""

from ddppm.core.io import read_parquet, write_parquet, write_text_atomic
from ddppm.experiments.workshop import budget_table, summary_table
from ddppm.experiments.workshop_claims import claims_table, findings
from ddppm.pipeline.report import write_table_page
from ddppm.pipeline.steps import setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
section = cfg["workshop"]
runs, _ = read_parquet(snakemake.input.runs)
params, _ = read_parquet(snakemake.input.params)
summary = summary_table(runs, params)
budget = budget_table(params[params["method"] == section["claims"]["method"]])
claims = claims_table(summary, section)
meta = {"config_hash": cfg["config_hash"], "claims": section["claims"], "budget": section["budget"]}
for table, name in ((summary, "summary"), (budget, "budget"), (claims, "claims")):
    write_parquet(table, snakemake.output[name], meta)
    write_text_atomic(snakemake.output[f"{name}_csv"], table.to_csv(index=False))
    write_table_page(snakemake.output[f"{name}_csv"], snakemake.output[f"{name}_page"])
lines = findings(claims, summary, section, budget)
write_text_atomic(snakemake.output.findings, "\n".join(lines) + "\n")
log.info("summary: %d rows\n%s", len(summary), "\n".join(lines))
