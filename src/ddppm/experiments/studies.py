"""Experiment ``studies``: the scale studies (docs/studies.md), built by ``snakemake all_studies``, never by the
default run (its targets are empty). Entry points: :func:`check_config`, :func:`ddppm.studies.run.run_study`,
:func:`ddppm.studies.run.study_summary`, :func:`ddppm.studies.findings.study_findings`.
"""

from __future__ import annotations

from typing import Any

from ddppm.core.errors import ConfigError
from ddppm.core.network import mixing_matrix
from ddppm.experiments.base import Experiment, register_experiment
from ddppm.studies.run import rank_methods
from ddppm.studies.samples import samples_methods


def check_config(section: dict[str, Any], config: dict[str, Any] | None = None) -> None:
    """Cross-key checks of the validated section ``studies``: every method is a common-task method (and every one
    of ``rank.deflation`` has a deflated variant; ``samples.spikes`` fit below every d of ``samples.ds``), and every
    (topology, m) a study asks for can be built (a grid needs a composite m, an Erdős–Rényi draw must connect)."""

    rank_methods(section)  # every method of `methods`, and each of `rank.deflation` has a deflated variant
    asked = [("studies.agents", t, m) for t in section["agents"]["topologies"] for m in section["agents"]["ms"]]
    asked += [("studies.topology", t, section["topology"]["m"]) for t in section["topology"]["topologies"]]
    asked.append(("studies.consensus", section["consensus"]["topology"], section["consensus"]["m"]))
    asked.append(("studies.rank", section["rank"]["topology"], section["rank"]["m"]))
    rank = section["rank"]
    if max(rank["ranks"]) >= section["data"]["d"]:
        raise ConfigError(f"studies.rank.ranks: every k must be below studies.data.d = {section['data']['d']}")
    if len(rank["spikes"]) < max(rank["ranks"]) or list(rank["spikes"]) != sorted(rank["spikes"], reverse=True):
        raise ConfigError(
            f"studies.rank.spikes: give at least max(ranks) = {max(rank['ranks'])} leading eigenvalues, in "
            "decreasing order (each above 1), so that every k has a spectral gap"
        )
    samples = section["samples"]
    samples_methods(section)  # every method of samples.methods is a common-task method
    spikes = list(samples["spikes"])
    if len(spikes) >= min(samples["ds"]) or spikes != sorted(spikes, reverse=True):
        raise ConfigError(
            f"studies.samples.spikes: {spikes} must be decreasing and fewer than min(studies.samples.ds) = "
            f"{min(samples['ds'])}"
        )
    for method, claim in samples["claims"].items():
        named = [method, *claim.get("against", [])]
        if unknown := [name for name in named if name not in samples["methods"]]:
            raise ConfigError(f"studies.samples.claims.{method}: {unknown} not in studies.samples.methods; add them "
                              "there or drop the claim")  # fmt: skip
        if not ({"against", "rate"} & set(claim)):
            raise ConfigError(f"studies.samples.claims.{method}: give `against` (methods to beat) or `rate`")
    for key, topology, m in asked:
        try:
            mixing_matrix(topology, int(m), seed=int(section["seed"]))
        except Exception as error:  # the network's own message, under this section's key
            raise ConfigError(f"{key}: topology {topology!r} with m = {m}: {error}") from None
    if section["agents"]["rows_per_agent"] * max(section["agents"]["ms"]) > 2_000_000:
        raise ConfigError("studies.agents.rows_per_agent: rows_per_agent · max(ms) over 2,000,000 rows; lower one")


@register_experiment
class StudiesExperiment(Experiment):
    """The scale studies: agents, topology, consensus (not in the default run: `snakemake all_studies`)."""

    name = "studies"
    title = "Scale studies"
    targets_relative = ()
    findings_relative = "studies/agents/findings.txt"
    in_default_run = False

    def check_config(self, section: dict[str, Any], config: dict[str, Any] | None = None) -> None:
        check_config(section, config)
