"""Rule partition: row → agent table and the mixing matrix (docs/method.md §3)."""

from ddppm.core.io import read_parquet, write_parquet
from ddppm.pipeline.steps import partition_and_network, setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
data, _ = read_parquet(snakemake.input[0])
part, net, meta = partition_and_network(len(data), cfg["partition"], cfg["network"])
log.info(
    "partition sizes %s, topology %s, c=%d, lambda2=%.4f", meta["sizes"], meta["topology"], meta["c"], meta["lambda2"]
)
common = {"config_hash": cfg["config_hash"], "partition": cfg["partition"], "network": cfg["network"]}
write_parquet(part, snakemake.output.partition, {**common, **meta})
write_parquet(net, snakemake.output.network, {**common, **meta})
