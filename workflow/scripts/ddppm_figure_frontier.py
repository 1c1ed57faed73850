"""Rule figure_frontier: D-DP-PM's calibration candidates, error against δ at one ε, one panel per dataset."""

import pandas as pd

from ddppm.core.io import read_parquet
from ddppm.data import LABELS
from ddppm.pipeline.steps import setup_logging
from ddppm.plotting import save_figure
from ddppm.plotting.frontier import frontier_figure

log = setup_logging(snakemake.log[0])
eps = float(snakemake.params.cfg["methods"]["ddppm"]["delta_curve"]["eps"])
panels = []
view = snakemake.params.cfg["threat_models"][snakemake.wildcards.threat_model]["view"]
floor_paths = {path.split("/")[-2]: path for path in snakemake.input.floors}
reference_paths: dict[str, list[str]] = {}
for path in snakemake.input.references:  # <results>/methods/<method>/<dataset>/frontier.parquet
    reference_paths.setdefault(path.split("/")[-2], []).append(path)
for cal_path, cand_path in zip(snakemake.input.calibrations, snakemake.input.candidates, strict=True):
    dataset = cal_path.split("/")[-3]
    chosen, _ = read_parquet(cal_path)
    candidates, _ = read_parquet(cand_path)
    floor, _ = read_parquet(floor_paths[dataset])
    at = floor[(floor["view"] == view) & (abs(floor["eps"] - eps) < 1e-9)]
    floor_at_eps = float(at["floor_hockey"].iloc[0]) if len(at) else None
    references = [read_parquet(path)[0] for path in reference_paths.get(dataset, [])]
    panels.append(
        (LABELS.get(dataset, dataset), candidates, chosen, floor_at_eps, pd.concat(references) if references else None)
    )
    log.info("%s: %d candidates at eps=%g", dataset, int((abs(candidates["eps"] - eps) < 1e-9).sum()), eps)
save_figure(
    frontier_figure(
        panels,
        eps,
        snakemake.wildcards.threat_model,
        snakemake.params.cfg["threat_models"][snakemake.wildcards.threat_model],
    ),
    snakemake.output.png,
    snakemake.output.pdf,
    config_hash=snakemake.params.cfg["config_hash"],
)
