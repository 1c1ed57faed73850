"""Rule prepare_dataset: load and normalise one dataset (docs/method.md §2)."""

from ddppm.core.io import write_parquet
from ddppm.pipeline.steps import prepare_dataset, setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
frame, meta = prepare_dataset(snakemake.wildcards.dataset, cfg["dataset"])
log.info("loaded %s: %d rows × %d columns", snakemake.wildcards.dataset, len(frame), frame.shape[1] - 1)
write_parquet(frame, snakemake.output[0], {**meta, "config_hash": cfg["config_hash"]})
