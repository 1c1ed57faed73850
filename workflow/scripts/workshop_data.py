"""Rule workshop_data: the SBM graph signals, the row → agent table and the mixing matrix (experiment workshop)."""

from ddppm.core.io import write_parquet
from ddppm.experiments.workshop import prepare_data
from ddppm.pipeline.steps import setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
frame, part, net, meta = prepare_data(cfg["workshop"])
common = {"config_hash": cfg["config_hash"]}
write_parquet(frame, snakemake.output.data, {**meta["data"], **common})
write_parquet(part, snakemake.output.partition, {**meta["network"], **common})
write_parquet(net, snakemake.output.network, {**meta["network"], **common})
log.info("SBM graph signals: %d rows × %d columns, sizes %s", len(frame), frame.shape[1] - 1, meta["network"]["sizes"])
