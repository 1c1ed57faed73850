"""`snakemake method_map` on the tiny config (a small grid): every shape × ε × trust level is a cell whose competitive
set is consistent, the findings and both kinds of figure exist, and a second run has nothing to do."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from ddppm.experiments import get_experiment
from ddppm.experiments.method_map import section_shapes
from tests.conftest import REPO, TINY, TINY_RESULTS, snakemake


@pytest.mark.slow
def test_the_method_map_on_the_tiny_config(tiny_run) -> None:
    work = tiny_run["work"]
    done = snakemake(work, "method_map", "--configfile", TINY)
    assert done.returncode == 0, done.stderr[-3000:]
    folder = work / TINY_RESULTS / "method_map"
    cells = pd.read_csv(folder / "cells.csv")
    section = get_experiment("method_map").default_section(**yaml.safe_load((REPO / TINY).read_text())["method_map"])
    shapes = section_shapes(section)
    assert len(cells) == len(shapes) * len(section["epsilons"]) * 3
    assert (cells["set_size"] == cells["competitive"].str.split(";").str.len()).all()
    assert (cells["separated"] == (cells["set_size"] == 1)).all()
    assert cells.apply(lambda r: r["best"] in r["competitive"].split(";"), axis=1).all()
    assert set(cells["runs"]) <= {section["runs"]["start"] * 2**i for i in range(4)} | {section["runs"]["cap"]}
    assert (folder / "findings.txt").read_text().startswith("The method map:")
    for name in ("n_eps", "d_eps", "factors"):
        assert (folder / "figures" / f"{name}.png").stat().st_size > 10_000
    again = snakemake(work, "method_map", "--configfile", TINY, "-n")
    assert "Nothing to be done" in again.stdout + again.stderr
