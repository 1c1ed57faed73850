"""Rule ddppm_calibrate: D-DP-PM's per-ε parameter choice under the δ limits, for one threat model."""

import pandas as pd

from ddppm.core.io import read_parquet, read_pickle, write_parquet
from ddppm.methods.ddppm.steps import run_calibration
from ddppm.pipeline.steps import problem_from_files, setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
wc = snakemake.wildcards
problem = problem_from_files(snakemake.input.data, snakemake.input.partition, snakemake.input.network)
model = cfg["threat_models"][wc.threat_model]
options = cfg["methods"]["ddppm"]
eps, limits = cfg["epsilons"], cfg["delta_limits"]
if "prepared" in snakemake.input.keys():  # sharded: the search and the coarse grid ran in their own jobs
    state = read_pickle(snakemake.input.prepared)
    coarse = pd.concat([read_parquet(path)[0] for path in snakemake.input.coarse], ignore_index=True)
    chosen, candidates, meta = run_calibration(problem, eps, limits, options, model, coarse, state)
else:  # unsharded: the neighbour search and the whole coarse grid here, one job (chooses the same, tested)
    log.info("%s, threat model %s %s: neighbour search and the whole coarse grid", wc.dataset, wc.threat_model, model)
    chosen, candidates, meta = run_calibration(problem, eps, limits, options, model)
meta["config_hash"] = cfg["config_hash"]
log.info(
    "%s, threat model %s: T*=%d, mu1=%.4g, mu2=%.4g, %d candidates",
    wc.dataset,
    wc.threat_model,
    meta["t_star"],
    meta["mu1"],
    meta["mu2"],
    candidates["candidate"].nunique(),
)
for _, row in chosen.iterrows():
    if row["met"]:
        log.info(
            "eps=%g: chosen T=%d, delta=%.3g <= limit %.3g, calibration error %.3f",
            row["eps"],
            row["T"],
            row["delta"],
            row["delta_limit"],
            row["error_mean"],
        )
    else:
        log.info("eps=%g: INFEASIBLE, %s (limit %.3g)", row["eps"], row["reason"], row["delta_limit"])
write_parquet(chosen, snakemake.output.chosen, meta)
write_parquet(candidates, snakemake.output.candidates, meta)
