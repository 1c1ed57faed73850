"""Rule ddppm_params: D-DP-PM's parameter table, one row per (ε, threat model), from its calibrations."""

import pandas as pd

from ddppm.core.io import read_parquet, write_parquet
from ddppm.methods.ddppm.params import param_rows
from ddppm.pipeline.steps import setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
names = cfg["methods"]["ddppm"]["threat_models"]
frames = []
for name, path in zip(names, snakemake.input, strict=True):
    chosen, _ = read_parquet(path)
    frames.append(param_rows(chosen, name, cfg["threat_models"][name]))
table = pd.concat(frames, ignore_index=True)
for _, row in table.iterrows():
    state = f"delta={row['delta']:.3g}" if row["feasible"] else "infeasible (no parameters met the limit)"
    log.info("eps=%g threat model %s: %s, limit %.3g", row["eps"], row["threat_model"], state, row["delta_limit"])
write_parquet(table, snakemake.output[0], {"config_hash": cfg["config_hash"]})
