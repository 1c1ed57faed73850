"""Rule summary_table_html: one data set's summary rows as an HTML table for the report."""

from ddppm.core.io import read_parquet, write_text_atomic
from ddppm.data import LABELS
from ddppm.pipeline.report import html_table
from ddppm.pipeline.steps import setup_logging
from ddppm.pipeline.tables import summary_table

log = setup_logging(snakemake.log[0])
dataset = snakemake.wildcards.dataset
table = summary_table(read_parquet(snakemake.input[0])[0]).drop(columns="dataset")
note = (
    "Mean error sin(v, q) (eq. 37) with the 2.5–97.5 % band of the runs; delta = the δ the parameters achieve "
    "under threat_model/accounting (— where no parameters met the limit); purple rows are infeasible."
)
write_text_atomic(snakemake.output[0], html_table(table, f"Fig. 2 summary: {LABELS.get(dataset, dataset)}", note))
log.info("%s: %d rows, %d infeasible", dataset, len(table), int((~table["feasible"].astype(bool)).sum()))
