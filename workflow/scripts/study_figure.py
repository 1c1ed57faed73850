"""Rule study_figure: one scale study's figure."""

from ddppm.core.io import read_parquet
from ddppm.pipeline.steps import setup_logging
from ddppm.plotting.studies import FIGURES
from ddppm.plotting.style import save_figure
from ddppm.studies.run import study_styles

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
study = snakemake.wildcards.study
summary, _ = read_parquet(snakemake.input[0])
section = cfg["studies"]
styles = study_styles()
if study == "views":  # the journal method's own accountant, not the common task
    views = section["views"]
    title = (f"Study 'views': the journal D-DP-PM's δ at Corollary 1's α, σ_q and η = {views['eta']:g}, "
             f"T = {views['T']}, each view and accountant (worst: a searched lower bound)")  # fmt: skip
elif study == "samples":  # the papers' own setting: population target, one curator
    title = (f"Study 'samples': the later central methods on Gaussian spiked rows (public bound), one curator, "
             f"k = 1,\ncertified δ ≤ {section['delta']:g} (Definition 1, {section['adjacency']}), "
             f"{section['runs']} runs per point")  # fmt: skip
else:
    title = (f"Scale study '{study}': the common task on the spiked set, certified δ ≤ {section['delta']:g} "
             f"(Definition 1, {section['adjacency']}), {section['runs']} runs per point")  # fmt: skip
    if (summary["privacy_column"] == "searched").any():  # the journal D-DP-PM's rows (studies.agents.searched)
        title += (
            "\nhollow markers: the journal D-DP-PM, δ only searched (the worst neighbour found meets the limit; "
            "the true δ may be larger)"
        )
save_figure(FIGURES[study](summary, styles, title), snakemake.output.png, snakemake.output.pdf,
            config_hash=cfg["config_hash"])  # fmt: skip
log.info("%s: %d points", study, len(summary))
