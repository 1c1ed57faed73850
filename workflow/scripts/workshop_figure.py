"""Rule workshop_figure_fig1: the workshop paper's Fig. 1, error against ε per threat model."""

from ddppm.core.io import read_parquet
from ddppm.pipeline.steps import setup_logging
from ddppm.plotting.style import save_figure
from ddppm.plotting.workshop import fig1

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
summary, _ = read_parquet(snakemake.input.summary)
title = "Workshop D-DP-PM, Fig. 1: SBM graph signals (400 × 3), 4 agents on a ring"
fig = fig1(summary, cfg["workshop"], title)
save_figure(fig, snakemake.output.png, snakemake.output.pdf, config_hash=cfg["config_hash"])
log.info("wrote %s: %d curves", snakemake.output.png, summary.groupby(["method", "threat_model"]).ngroups)
