"""Rule workshop_runs: every Monte-Carlo run of every method of experiment workshop."""

import pandas as pd

from ddppm.core.io import read_parquet, write_parquet
from ddppm.experiments.workshop import closed_form_params, run_errors
from ddppm.methods import calibrated_methods
from ddppm.pipeline.steps import problem_from_files, setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
section = cfg["workshop"]
problem = problem_from_files(snakemake.input.data, snakemake.input.partition, snakemake.input.network)
calibrated = [read_parquet(path) for path in snakemake.input.calibrations]
calibrated_names = calibrated_methods()
params = {
    name: closed_form_params(problem, section, name) for name in section["methods"] if name not in calibrated_names
}
for name in calibrated_names:
    tables = [table for table, meta in calibrated if meta["method"] == name]
    if tables:
        params[name] = pd.concat(tables, ignore_index=True)
runs = run_errors(problem, section, params)
all_params = pd.concat([t.assign(method=name) for name, t in params.items()], ignore_index=True)
write_parquet(runs, snakemake.output.runs, {"config_hash": cfg["config_hash"]})
write_parquet(all_params, snakemake.output.params, {"config_hash": cfg["config_hash"]})
log.info("%d runs of %d methods", len(runs), len(params))
