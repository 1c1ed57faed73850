"""Rule ddppm_common_bounds: D-DP-PM's δ floors (network view) as the common task's lower-bound table."""

import pandas as pd

from ddppm.core.io import read_parquet, write_parquet
from ddppm.methods.ddppm.common_task import common_lower_bounds
from ddppm.pipeline.steps import setup_logging

log = setup_logging(snakemake.log[0])
floors = pd.concat([read_parquet(path)[0] for path in snakemake.input], ignore_index=True)
table = common_lower_bounds(floors)
log.info("\n%s", table.drop(columns="basis").to_string())
write_parquet(table, snakemake.output[0], {"config_hash": snakemake.params.cfg["config_hash"]})
