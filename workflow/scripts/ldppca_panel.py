"""Rule ldppca_panel: every run of one panel of a local-DP PCA figure (Wang & Xu)."""

from ddppm.core.io import write_parquet
from ddppm.experiments.ldppca import run_panel
from ddppm.pipeline.steps import setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
runs = run_panel(cfg)
log.info("%s panel %d: %d runs written", cfg["figure"], cfg["panel_index"], len(runs))
meta = {key: cfg[key] for key in ("config_hash", "figure", "panel_index", "panel", "sigma_modes", "delta", "seed")}
write_parquet(runs, snakemake.output[0], {**meta, "data": cfg["data"], "spike": cfg["spike"]})
