"""Rule calibrate: per-ε parameter choice under the δ limits (spec §7)."""

import pandas as pd

from ddppm.io import read_parquet, write_parquet
from ddppm.pipeline import load_problem, run_calibration, setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
problem = load_problem(snakemake.input.data, snakemake.input.partition, snakemake.input.network)
coarse = pd.concat([read_parquet(path)[0] for path in snakemake.input.coarse], ignore_index=True)
chosen, candidates, meta = run_calibration(problem, cfg, coarse)
log.info(
    "T*=%d, mu1=%.4g, mu2=%.4g, %d candidates",
    meta["t_star"],
    meta["mu1"],
    meta["mu2"],
    candidates["candidate"].nunique(),
)
for _, row in chosen.iterrows():
    log.info(
        "eps=%g limit=%.3g met=%s delta=%s error=%s %s",
        row["eps"],
        row["delta_limit"],
        row["met"],
        row.get("delta"),
        row.get("error_mean"),
        row.get("reason", ""),
    )
write_parquet(chosen, snakemake.output.chosen, meta)
write_parquet(candidates, snakemake.output.candidates, meta)
