"""Rule report_landing: the report's landing page, findings computed from this run's tables."""

from pathlib import Path

import pandas as pd

from ddppm.core.io import write_text_atomic
from ddppm.pipeline.report import comparison_table, journal_findings, landing_page, method_legend
from ddppm.pipeline.steps import setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
summary = pd.read_csv(snakemake.input.summary)
provenance = pd.read_csv(snakemake.input.provenance)
findings = journal_findings(summary)
extra = []
for path in snakemake.input.findings:  # one file per experiment: a title line, then one finding per line
    title, *lines = Path(path).read_text(encoding="utf-8").strip().splitlines()
    extra.append((title, lines))
settings = (
    f"Data sets: {', '.join(cfg['datasets'])}; {cfg['montecarlo']['runs']} Monte-Carlo runs per point "
    f"(config hash of this page ``{cfg['config_hash']}``)."
)
legend = method_legend(summary["method"])
page = landing_page(findings, comparison_table(summary), provenance, cfg["threat_models"], settings, legend, extra)
write_text_atomic(snakemake.output[0], page)
log.info("landing page: %d findings, %d experiment sections\n%s", len(findings), len(extra), "\n".join(findings))
