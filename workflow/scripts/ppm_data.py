"""Rule ppm_data: the interaction matrix, the reference eigenvectors and the noise-free error (experiment ppm)."""

from threadpoolctl import threadpool_limits

from ddppm.core.io import write_parquet
from ddppm.experiments.ppm import prepare_data
from ddppm.pipeline.steps import setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
with threadpool_limits(snakemake.threads):
    interactions, reference, meta = prepare_data(cfg["ppm"])
meta = {**meta, "config_hash": cfg["config_hash"], "settings": cfg["ppm"]}
write_parquet(interactions, snakemake.output.interactions, meta)
write_parquet(reference, snakemake.output.reference, meta)
log.info("wrote %s and %s", snakemake.output.interactions, snakemake.output.reference)
