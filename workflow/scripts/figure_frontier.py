"""Rule figure_frontier: D-DP-PM's calibration candidates, error against δ at one ε, one panel per dataset."""

from ddppm.core.io import read_parquet
from ddppm.data import LABELS
from ddppm.pipeline.steps import setup_logging
from ddppm.plotting import save_figure
from ddppm.plotting.frontier import frontier_figure

log = setup_logging(snakemake.log[0])
eps = float(snakemake.params.cfg["methods"]["ddppm"]["delta_curve"]["eps"])
panels = []
for cal_path, cand_path in zip(snakemake.input.calibrations, snakemake.input.candidates, strict=True):
    dataset = cal_path.split("/")[-3]
    chosen, _ = read_parquet(cal_path)
    candidates, _ = read_parquet(cand_path)
    panels.append((LABELS.get(dataset, dataset), candidates, chosen))
    log.info("%s: %d candidates at eps=%g", dataset, int((abs(candidates["eps"] - eps) < 1e-9).sum()), eps)
save_figure(
    frontier_figure(panels, eps, snakemake.wildcards.threat_model),
    snakemake.output.png,
    snakemake.output.pdf,
    config_hash=snakemake.params.cfg["config_hash"],
)
