"""Rule ddppm_calibrate_chunk: assess one slice of D-DP-PM's coarse calibration grid under one threat model."""

from ddppm.core.io import read_pickle, write_parquet
from ddppm.methods.ddppm.steps import run_calibration_chunk
from ddppm.pipeline.steps import problem_from_files, setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
wc = snakemake.wildcards
problem = problem_from_files(snakemake.input.data, snakemake.input.partition, snakemake.input.network)
model = cfg["threat_models"][wc.threat_model]
log.info("%s, threat model %s %s: coarse chunk %s", wc.dataset, wc.threat_model, model, wc.chunk)
options = cfg["methods"]["ddppm"]
rows = run_calibration_chunk(
    problem, cfg["epsilons"], cfg["delta_limits"], options, model, int(wc.chunk), int(wc.chunks),
    read_pickle(snakemake.input.prepared),
)  # fmt: skip
log.info("chunk %s: %d candidates assessed", wc.chunk, rows["candidate"].nunique())
write_parquet(rows, snakemake.output[0], {"config_hash": cfg["config_hash"], "chunk": int(wc.chunk)})
