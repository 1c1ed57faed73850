"""Rule common_figure: the common task's figure for one data set."""

from ddppm.common_task.settings import SETTING_TITLES
from ddppm.core.io import read_parquet
from ddppm.data import LABELS
from ddppm.methods import method_styles
from ddppm.pipeline.steps import setup_logging
from ddppm.plotting.common_task import common_figure
from ddppm.plotting.style import save_figure

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
dataset = snakemake.wildcards.dataset
summary, _ = read_parquet(snakemake.input[0])
setting = snakemake.params.setting
summary = summary[(summary["dataset"] == dataset) & (summary["setting"] == setting)]
styles = method_styles()
section = cfg["common"]
where = SETTING_TITLES[setting].format(delta=section["delta"], adjacency=section["adjacency"])
title = (
    f"The common task on {LABELS.get(dataset, dataset)}: subspace error against ε of every method, each under its "
    f"trust model (columns; who sees what); {where}"
)
save_figure(
    common_figure(summary, styles, title), snakemake.output.png, snakemake.output.pdf, config_hash=cfg["config_hash"]
)
log.info("%s, setting %s: %d points", dataset, setting, len(summary))
