"""Rule report_landing: the report's short landing page (the verdict) and the page of every finding in full."""

from pathlib import Path

import pandas as pd

from ddppm.core.io import write_text_atomic
from ddppm.pipeline.readme import claim_rows, floor_sentence
from ddppm.pipeline.report import (
    comparison_table,
    findings_page,
    journal_findings,
    landing_page,
    method_legend,
    short_landing,
)
from ddppm.pipeline.steps import setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
results = Path(snakemake.input.summary).parents[1]
summary = pd.read_csv(snakemake.input.summary)
provenance = pd.read_csv(snakemake.input.provenance)
findings = journal_findings(summary, cfg["verdict"])
extra = []
for path in snakemake.input.findings:  # one file per experiment: a title line, then one finding per line
    title, *lines = Path(path).read_text(encoding="utf-8").strip().splitlines()
    extra.append((title, lines))
settings = (
    f"Data sets: {', '.join(cfg['datasets'])}; {cfg['montecarlo']['runs']} Monte-Carlo runs per point "
    f"(config hash of this page ``{cfg['config_hash']}``)."
)
legend = method_legend(summary["method"])
full = landing_page(findings, comparison_table(summary), provenance, cfg["threat_models"], settings, legend, extra)
write_text_atomic(snakemake.output.findings, findings_page(full))
rows = claim_rows(results, cfg["verdict"]) if snakemake.input.verdict else []
verdict = pd.DataFrame([{"claim": claim, **cells} for claim, cells in rows])
write_text_atomic(snakemake.output.landing, short_landing(verdict, floor_sentence(results) if rows else "", settings))
log.info(
    "landing page: %d claims; findings page: %d findings, %d experiment sections", len(rows), len(findings), len(extra)
)
