"""Rule ppm_figure_fig2: their Fig. 2, r(k, n) empirical against Approximation 6.2 (experiment ppm)."""

from ddppm.core.io import read_parquet
from ddppm.pipeline.steps import setup_logging
from ddppm.plotting.ppm import fig2
from ddppm.plotting.style import save_figure

log = setup_logging(snakemake.log[0])
table, _ = read_parquet(snakemake.input[0])
save_figure(fig2(table), snakemake.output.png, snakemake.output.pdf, config_hash=snakemake.params.cfg["config_hash"])
log.info("wrote %s (%d values of n)", snakemake.output.png, table["n"].nunique())
