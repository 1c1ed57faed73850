"""Rule ldppca_figure: one local-DP PCA figure (Wang & Xu Fig. 3 or 4) from its summary and fits."""

from ddppm.core.io import read_parquet
from ddppm.experiments.ldppca import PAPER_POINTS, figure_title
from ddppm.pipeline.steps import setup_logging
from ddppm.plotting import save_figure
from ddppm.plotting.ldppca import ldppca_figure

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
figure = snakemake.wildcards.ldppca_figure
summary, _ = read_parquet(snakemake.input.summary)
fits, _ = read_parquet(snakemake.input.fits)
n, p, eps = PAPER_POINTS[figure]
title = figure_title(figure, cfg)
log.info("%s: %d points; %s", figure, len(summary), title)
save_figure(
    ldppca_figure(summary, fits, title, {"n": n, "p": p, "eps": eps}),
    snakemake.output.png,
    snakemake.output.pdf,
    config_hash=cfg["config_hash"],
)
