"""Rule ddppm_calibrate_prepare: D-DP-PM's calibration neighbour search, once per (data set, threat model)."""

from ddppm.core.io import write_pickle_atomic
from ddppm.methods.ddppm.steps import prepare_calibration
from ddppm.pipeline.steps import problem_from_files, setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
wc = snakemake.wildcards
problem = problem_from_files(snakemake.input.data, snakemake.input.partition, snakemake.input.network)
model = cfg["threat_models"][wc.threat_model]
log.info("%s, threat model %s %s: neighbour search", wc.dataset, wc.threat_model, model)
state = prepare_calibration(problem, cfg["epsilons"], cfg["delta_limits"], cfg["methods"]["ddppm"], model)
log.info("%d neighbours pooled, %d pairs in the initial screen", len(state["pool"]), len(state["initial_screen"]))
write_pickle_atomic(snakemake.output[0], state)
