"""Rule summary_table: per dataset and ε, D-DP-PM vs LDP error and δ achieved against the δ limit."""

import pandas as pd

from ddppm.io import read_parquet, write_text_atomic
from ddppm.pipeline import setup_logging, summary_table

setup_logging(snakemake.log[0])
errors = pd.concat([read_parquet(p)[0] for p in snakemake.input.errors], ignore_index=True)
calibrations = []
for path in snakemake.input.calibration:
    frame, _ = read_parquet(path)
    calibrations.append(frame.assign(dataset=path.split("/")[-1].removesuffix(".parquet")))
table = summary_table(errors, pd.concat(calibrations, ignore_index=True))
write_text_atomic(snakemake.output[0], table.to_csv(index=False))
