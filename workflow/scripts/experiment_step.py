"""Any step of a registered experiment (rule param ``step``: ``<experiment>.<step>``), so that an experiment needs
no script of its own (docs/pipeline.md, "Add an experiment").

The step gets this job and returns what to write, by output name; this script writes each value atomically:

* a DataFrame to a ``.parquet`` output (the job's config hash and provenance in its metadata) or a ``.csv`` one,
  and then also the CSV's report page (``html_twin``) when the job has that output;
* a Matplotlib figure to a ``.png`` output, and to the ``.pdf`` beside it when the job has one (footer and
  metadata carry the config hash);
* a string, or a list of lines, to a text output (a findings file: a title line, then one finding per line).
"""

import sys
from pathlib import Path

import pandas as pd

from ddppm.core.io import write_parquet, write_text_atomic
from ddppm.experiments import get_experiment
from ddppm.pipeline.report import write_table_page
from ddppm.pipeline.steps import setup_logging


def is_figure(value: object) -> bool:
    """A Matplotlib figure: only a step that made one has imported Matplotlib (a table's step never pays for it)."""
    figure = sys.modules.get("matplotlib.figure")
    return figure is not None and isinstance(value, figure.Figure)


log = setup_logging(snakemake.log[0])
experiment, step = snakemake.params.step.split(".")
config_hash = snakemake.params.cfg["config_hash"] if "cfg" in snakemake.params.keys() else None
outputs = {name: str(path) for name, path in snakemake.output.items()}
written = get_experiment(experiment).step(step)(snakemake) or {}
unknown = sorted(set(written) - set(outputs))
if unknown:
    raise ValueError(f"step {snakemake.params.step} returned {unknown}, which are not outputs of its rule: {outputs}")
for name, value in written.items():
    path = outputs[name]
    if isinstance(value, pd.DataFrame) and path.endswith(".parquet"):
        write_parquet(value, path, {"config_hash": config_hash})
    elif isinstance(value, pd.DataFrame) and path.endswith(".csv"):
        write_text_atomic(path, value.to_csv(index=False))
        page = path[: -len(".csv")] + ".table.html"
        if page in outputs.values():
            write_table_page(path, page)
    elif is_figure(value) and path.endswith(".png"):
        from ddppm.plotting.style import save_figure

        pdf = str(Path(path).with_suffix(".pdf"))
        if pdf not in outputs.values():
            raise ValueError(f"step {snakemake.params.step}: the figure {name} needs the output {pdf} beside {path}")
        save_figure(value, path, pdf, config_hash=config_hash)
    elif isinstance(value, str | list):
        lines = [value] if isinstance(value, str) else value
        write_text_atomic(path, "\n".join(line.rstrip("\n") for line in lines) + "\n")
    else:
        raise TypeError(f"step {snakemake.params.step}: cannot write a {type(value).__name__} to {path}")
log.info("%s: wrote %s", snakemake.params.step, sorted(written))
