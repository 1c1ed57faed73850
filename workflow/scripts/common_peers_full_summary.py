"""Rule common_peers_full_summary: the peers on every point of the common task, beside the correct law."""

import pandas as pd

from ddppm.core.io import read_parquet, write_text_atomic
from ddppm.experiments.common_peers import peers_beside_correct_law
from ddppm.pipeline.report import write_table_page
from ddppm.pipeline.steps import setup_logging

log = setup_logging(snakemake.log[0])
runs = pd.concat([read_parquet(path)[0] for path in snakemake.input.runs], ignore_index=True)
table = peers_beside_correct_law(runs, read_parquet(snakemake.input.summary)[0])
write_text_atomic(snakemake.output.summary, table.to_csv(index=False))
write_table_page(snakemake.output.summary, snakemake.output.summary_page)
log.info("%d points, %d fits unfinished", len(table), int(table["n_unfinished"].sum()))
