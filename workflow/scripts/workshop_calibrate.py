"""Rule workshop_calibrate: one D-DP-PM variant under one threat model on the experiment's ε grid and δ levels."""

from ddppm.core.io import write_parquet
from ddppm.experiments.workshop import calibrate
from ddppm.pipeline.steps import problem_from_files, setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
method, threat_model = snakemake.wildcards.workshop_method, snakemake.wildcards.workshop_tm
section = {**cfg["workshop"], "threat_models": [threat_model]}
problem = problem_from_files(snakemake.input.data, snakemake.input.partition, snakemake.input.network)
definitions = {threat_model: cfg["threat_models"][threat_model]}  # from the one table, or the config's own
params, candidates, meta = calibrate(problem, section, method, threat_model, definitions)
info = {"config_hash": cfg["config_hash"], "method": method, "threat_model": threat_model}
write_parquet(params, snakemake.output.params, {**info, "calibration": meta})
write_parquet(candidates, snakemake.output.candidates, info)
log.info("%s under %s: %d of %d ε feasible", method, threat_model, int(params["feasible"].sum()), len(params))
