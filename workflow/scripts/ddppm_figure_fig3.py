"""Rule figure_fig3: error and δ vs the number of iterations T at ε = 5 (paper Fig. 3)."""

import pandas as pd

from ddppm.core.io import read_parquet
from ddppm.data import LABELS
from ddppm.pipeline.steps import setup_logging
from ddppm.plotting import fig3, save_figure

log = setup_logging(snakemake.log[0])
curves = pd.concat([read_parquet(path)[0] for path in snakemake.input.curves], ignore_index=True)
if "label" not in curves:  # tables written before labels were stored
    curves["label"] = curves["dataset"].map(lambda ds: LABELS.get(ds, ds))
definitions = [read_parquet(path)[1].get("threat_model") or {} for path in snakemake.input.curves]
exact = any(definition.get("accounting") == "exact" for definition in definitions)
log.info(
    "Fig. 3 (%s): %d data sets, T = 1..%d, parameters: %s",
    snakemake.wildcards.threat_model,
    curves["dataset"].nunique(),
    int(curves["T"].max()),
    dict(curves.groupby("dataset")["params_source"].first()) if "params_source" in curves else "calibrated",
)
label = "exact upper tail Pr(ℒ > ε)" if exact else "upper-tail δ⁺ of Theorem 2"
save_figure(
    fig3(
        curves,
        upper_label=label,
        threat_model=snakemake.wildcards.threat_model,
        threat_model_definition=definitions[0] or None,  # every data set's table was accounted under the same one
    ),
    snakemake.output.png,
    snakemake.output.pdf,
    config_hash=snakemake.params.cfg["config_hash"],
)
