"""Rule calibrate_chunk: assess one slice of the coarse calibration grid (spec §7)."""

from ddppm.io import write_parquet
from ddppm.pipeline import load_problem, run_calibration_chunk, setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
problem = load_problem(snakemake.input.data, snakemake.input.partition, snakemake.input.network)
rows = run_calibration_chunk(problem, cfg, int(snakemake.wildcards.chunk))
log.info("chunk %s: %d candidates assessed", snakemake.wildcards.chunk, rows["candidate"].nunique())
write_parquet(rows, snakemake.output[0], {"config_hash": cfg["config_hash"], "chunk": int(snakemake.wildcards.chunk)})
