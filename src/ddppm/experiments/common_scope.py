"""What the common task's numbers cover (docs/privacy.md, "What is public"): the public bounds of every data set and
what they clip, before any noise (:mod:`ddppm.data.public_prep`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ddppm.data.public_prep import clipping, public_bounds
from ddppm.pipeline.config import dataset_config
from ddppm.pipeline.steps import load_raw_dataset


def clipping_table(config: dict[str, Any]) -> pd.DataFrame:
    """Per data set of ``common.datasets``: what the analyst does (``normalization``), its public bounds' kind,
    row-norm bound and source, the share of raw values and of records they clip, and the subspace error from
    clipping alone per k of ``common.ranks`` (``bias_k<k>``)."""
    rows = []
    for name in config["common"]["datasets"]:
        options = dataset_config(config, name)["dataset"]
        X = np.asarray(load_raw_dataset(name, options).matrix)
        bounds = public_bounds(name, X.shape[1], options.get("public_bounds"))
        report = clipping(X, bounds, tuple(config["common"]["ranks"]), options["normalization"])
        rows.append({"dataset": name, "n": X.shape[0], "d": X.shape[1], "normalization": options["normalization"],
                     "row_norm": bounds.row_norm, "bounds_kind": bounds.kind,
                     "values_clipped": report.values, "records_clipped": report.rows,
                     **{f"bias_k{k}": v for k, v in report.bias.items()}, "bounds_source": bounds.source})  # fmt: skip
    return pd.DataFrame(rows)
