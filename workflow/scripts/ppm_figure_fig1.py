"""Rule ppm_figure_fig1: their Fig. 1, relative filter error against ε for every method (experiment ppm)."""

import numpy as np

from ddppm.core.io import read_parquet
from ddppm.experiments.ppm import settings_title
from ddppm.pipeline.steps import setup_logging
from ddppm.plotting.ppm import fig1
from ddppm.plotting.style import save_figure

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
summary, meta = read_parquet(snakemake.input.errors)
noiseless = float(np.mean(meta["noiseless_errors"]))
what = ("Nicolas et al. (arXiv:2411.01931), Fig. 1: relative error of the private low-pass filter against ε "
        "(each method's trust model in its label)")
title = what + "\n" + settings_title(cfg["ppm"], meta["data"], sep="\n")
fig = fig1(summary, noiseless, title, cfg["ppm"]["bootstrap"]["level"])
save_figure(fig, snakemake.output.png, snakemake.output.pdf, config_hash=cfg["config_hash"])
log.info(
    "wrote %s: %d curves, %d points over target",
    snakemake.output.png,
    summary["method"].nunique(),
    int((~summary["meets_target"]).sum()),
)
