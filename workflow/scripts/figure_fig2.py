"""Rules figure_fig2_panel / figure_fig2: error vs ε, one panel per dataset (paper Fig. 2)."""

from ddppm.core.io import read_parquet
from ddppm.pipeline.steps import setup_logging
from ddppm.plotting import fig2_grid, fig2_single, save_figure
from ddppm.plotting.fig2 import floors_by_threat_model

log = setup_logging(snakemake.log[0])


def as_list(paths):
    return [paths] if isinstance(paths, str) else list(paths)


floor_paths = {path.split("/")[-2]: path for path in as_list(snakemake.input.floors)}
panels = []
for errors_path, data_path in zip(as_list(snakemake.input.errors), as_list(snakemake.input.data), strict=True):
    summary, _ = read_parquet(errors_path)
    data, data_meta = read_parquet(data_path)
    dataset = data_meta["dataset"]["name"]
    label = data_meta["dataset"].get("label", dataset)
    floor = read_parquet(floor_paths[dataset])[0] if dataset in floor_paths else None
    floors = floors_by_threat_model(floor, snakemake.params.cfg["threat_models"])
    panels.append((label, summary.assign(label=label), len(data), floors))
    infeasible = summary[~summary["feasible"].astype(bool)]
    log.info("%s: %d curves points, %d infeasible", label, len(summary), len(infeasible))

threat_models = snakemake.params.cfg["threat_models"]  # the heading names each one in words
fig = (
    fig2_single(panels[0][1], panels[0][0], n=panels[0][2], floors=panels[0][3], threat_models=threat_models)
    if snakemake.params.layout == "single"  # not the rule's name: a module may rename its rules
    else fig2_grid(panels, threat_models=threat_models)
)
save_figure(fig, snakemake.output.png, snakemake.output.pdf, config_hash=snakemake.params.cfg["config_hash"])
log.info("wrote %s (%s layout)", snakemake.output.png, snakemake.params.layout)
