"""`snakemake audit` on the tiny config: every auditable method is consistent with its claim, the noiseless mutant
is caught, the release (PrivatePCA's whole route) is consistent, the journal and workshop D-DP-PM have a row per
point, the methods without a view are listed as not audited, and a second run has nothing to do."""

from __future__ import annotations

import pandas as pd
import pytest

from ddppm.experiments.audit import auditable_methods
from tests.conftest import TINY, TINY_RESULTS, snakemake


@pytest.mark.slow
def test_the_audit_on_the_tiny_config(tiny_run) -> None:
    work = tiny_run["work"]
    done = snakemake(work, "audit", "--configfile", TINY)
    assert done.returncode == 0, done.stderr[-3000:]
    folder = work / TINY_RESULTS / "audit"
    table = pd.read_csv(folder / "summary.csv")
    audited = table[table["verdict"] != "not audited"].set_index("method")
    for name in auditable_methods():
        assert (audited.loc[[name], "verdict"] == "consistent").all()
        assert (audited.loc[[name], "eps_lower"] <= audited.loc[[name], "eps"]).all()
    assert (audited.loc[["analyze_gauss/no_noise"], "verdict"] == "violated").all()
    assert (audited.loc[["analyze_gauss (release)"], "verdict"] == "consistent").all()  # the whole route, raw records
    journal = audited.loc[["ddppm (paper)"]]  # the journal D-DP-PM at its tiny paper point (too few draws to refute)
    assert (journal["eps_lower"] > 0).all() and (journal["trust_model"] == "gossip").all()
    workshop = table[table["method"] == "ddppm_workshop (paper)"]  # every ε of the tiny workshop, each a row
    assert sorted(workshop["eps"]) == [5, 50] and (workshop["view"] == "paper").all()
    assert workshop["verdict"].isin(["consistent", "violated", "infeasible"]).all()
    assert set(table.loc[table["verdict"] == "not audited", "method"]).isdisjoint(auditable_methods())
    assert (folder / "figure.png").stat().st_size > 10_000
    assert "evidence, not proof" in (folder / "findings.txt").read_text()
    again = snakemake(work, "audit", "--configfile", TINY, "-n")
    assert "Nothing to be done" in again.stdout + again.stderr
