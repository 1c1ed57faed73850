"""Rule ddppm_floor_table: the floors of every data set as CSV (download) and HTML (the report)."""

import pandas as pd

from ddppm.core.io import read_parquet, write_text_atomic
from ddppm.methods.ddppm.steps import floor_summary
from ddppm.pipeline.report import html_table
from ddppm.pipeline.steps import setup_logging

log = setup_logging(snakemake.log[0])
table = pd.concat([read_parquet(p)[0] for p in snakemake.input], ignore_index=True)
write_text_atomic(snakemake.output.csv, table.to_csv(index=False))
shown = floor_summary(table)
note = (
    "floor_hockey: hockey-stick δ (Definition 1, worse of both orders) of the releases without added noise, at "
    "the worst neighbour found. A proven lower bound on D-DP-PM's δ under that view, by either definition, for "
    "every parameter choice: where it exceeds the δ limit no parameters meet the limit. pdp_noise_free: the "
    "two-sided δ (Definition 2) of the same releases, for comparison only (not a bound)."
)
title = "D-DP-PM: δ floors no parameters get under"
write_text_atomic(snakemake.output.html, html_table(shown, title, note, infeasible_column="meets_limit_possible"))
log.info("%d rows, %d infeasible for every parameter choice", len(table), int(table["infeasible_every_choice"].sum()))
