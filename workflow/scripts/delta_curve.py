"""Rule delta_curve: δ and error as functions of T at fixed ε (paper Fig. 3)."""

from ddppm.io import read_parquet, write_parquet
from ddppm.pipeline import delta_curve, load_problem, setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
problem = load_problem(snakemake.input.data, snakemake.input.partition, snakemake.input.network)
calibration, _ = read_parquet(snakemake.input.calibration)
candidates, _ = read_parquet(snakemake.input.candidates)
curve, meta = delta_curve(problem, calibration, candidates, cfg, snakemake.wildcards.dataset)
log.info("\n%s", curve.to_string())
write_parquet(curve, snakemake.output[0], meta)
