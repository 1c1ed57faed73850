"""The scale studies (config section ``studies``, docs/studies.md): the decentralised setting as m, the topology and
the consensus rounds c grow, on the common task with certified δ.

* :func:`study_agents`: error against m ∈ ``agents.ms`` on each topology of ``agents.topologies``, with the data
  size fixed (``fixed_n``: the n rows split over m) and with each agent's rows fixed (``fixed_rows_per_agent``:
  n = ``agents.rows_per_agent`` · m), at every ε of ``epsilons``.
* :func:`study_topology`: at m = ``topology.m``, every topology of ``topology.topologies``: error against the
  network's λ₂(W), with Theorem 3's consensus term beside it.
* :func:`study_consensus`: on one topology, error against c from 1 to the Theorem 3 choice
  (:func:`ddppm.studies.tasks.theorem3_consensus_rounds`), with δ (unchanged by c for a certified method: the
  gossip only post-processes released messages).
* ``views`` (:mod:`ddppm.studies.views`): the journal D-DP-PM's δ under each observer view, rank mode and
  adjacency at the journal's settings (no Monte Carlo).
* ``samples`` (:mod:`ddppm.studies.samples`): the later central methods' claims (DP-PCA, Cai–Xia–Zha) in their
  papers' setting: error against n and d on Gaussian spiked rows, against the population direction.
* :func:`study_rank`: k principal directions, k ∈ ``rank.ranks``, every method estimating them at once (block
  power iterations, or the top-k of one release), and the methods of ``rank.deflation`` also one component at a
  time (:func:`rank_methods`), with the composition that covers them named per row.

Each runs the methods of ``methods`` through the common task's runner (:func:`ddppm.common_task.run.run_methods`), so
every δ is the method's certified one under one adjacency and Definition 1, and each row says which trust model
it holds under. Only the gossip methods (the certified D-DP-PM) depend on the topology and c; the others sum
exactly (their error depends on m only). The journal and workshop D-DP-PM are no common-task methods (their δ
can only be searched, :func:`not_run`): the agents study calibrates them where their accountant can follow
(:mod:`ddppm.studies.searched`), and says at the other m that it did not and why.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from ddppm.common_task.run import run_methods as run_common
from ddppm.common_task.run import summarise
from ddppm.core.errors import ConfigError
from ddppm.methods import available_methods, common_task_methods, method_styles
from ddppm.studies.samples import samples_summary, study_samples
from ddppm.studies.searched import searched_point
from ddppm.studies.tasks import consensus_term, lambda2_of, scale_task, spiked_rows, theorem3_consensus_rounds
from ddppm.studies.views import study_views

STUDIES = ("agents", "topology", "consensus", "rank", "views", "samples")
SEARCHED_ONLY = (
    "its δ can only be searched (data-dependent covariances), so it is no common-task method: the agents study "
    "calibrates it under a searched threat model at the m of studies.agents.searched (a calibration's cost grows "
    "about as m^2.7, benchmarks/bench_scaling.py); elsewhere the certified D-DP-PM stands in for the design"
)


def not_run() -> dict[str, str]:
    """The gossip methods of the registry the studies cannot run, and why: those that are no common-task method
    (the journal and workshop D-DP-PM: only a searched δ)."""

    common = common_task_methods()
    return {
        name: SEARCHED_ONLY
        for name, method in available_methods(task=None).items()
        if getattr(method, "trust_model", None) == "gossip" and name not in common
    }


def study_methods(section: dict[str, Any]) -> dict[str, Any]:
    """The methods of ``studies.methods``, each a registered common-task method."""
    known = common_task_methods()
    unknown = [name for name in section["methods"] if name not in known]
    if unknown:
        why = {name: reason for name, reason in not_run().items() if name in unknown}
        raise ConfigError(
            f"studies.methods: {unknown} are not common-task methods; use some of {sorted(known)}"
            + "".join(f" ({name}: {reason})" for name, reason in why.items())
        )
    return {name: known[name] for name in section["methods"]}


def rank_methods(section: dict[str, Any]) -> dict[str, Any]:
    """The rank study's methods: those of ``studies.methods``, then the deflated variant (``method.deflated()``,
    e.g. :class:`ddppm.methods.certified.deflation.CertifiedDeflation`) of each common-task method of
    ``rank.deflation`` (listed there or not in ``methods``)."""
    deflatable = {name: m for name, m in common_task_methods().items() if hasattr(m, "deflated")}
    unknown = [name for name in section["rank"]["deflation"] if name not in deflatable]
    if unknown:
        raise ConfigError(
            f"studies.rank.deflation: {unknown} have no deflated variant; use some of {sorted(deflatable)} "
            "(or [] for the block methods only)"
        )
    deflated = [deflatable[name].deflated() for name in section["rank"]["deflation"]]
    return {**study_methods(section), **{m.name: m for m in deflated}}


def study_styles() -> dict[str, dict[str, Any]]:
    """Legend entry and line style of every method a study can run: every registered method (the searched
    D-DP-PM variants included) and each deflated variant of a common-task one."""

    styles = method_styles()
    deflated = (m.deflated() for m in common_task_methods().values() if hasattr(m, "deflated"))
    styles.update({m.name: m.common_style() for m in deflated})
    return styles


def _options(section: dict[str, Any]) -> dict[str, Any]:
    return {"adjacency": section["adjacency"], "iterations": int(section["iterations"])}


def _run(section: dict[str, Any], task: Any, eps: Iterable[float], label: str, methods: dict[str, Any] | None = None,
         **columns: Any) -> pd.DataFrame:  # fmt: skip
    """Every method (default: :func:`study_methods`) at every ε on one task; ``columns`` (the study point)
    prepended to every row."""
    methods = study_methods(section) if methods is None else methods
    runs = run_common(task, [float(e) for e in eps], float(section["delta"]), int(section["runs"]),
                      int(section["seed"]), _options(section), methods, dataset=label)  # fmt: skip
    return _at_point(runs, columns)


def _at_point(frame: pd.DataFrame, columns: dict[str, Any]) -> pd.DataFrame:
    """``frame`` with the study point's ``columns`` first (in place)."""
    for i, (key, value) in enumerate(columns.items()):
        frame.insert(i, key, value)
    return frame


def _rows(section: dict[str, Any], n: int) -> np.ndarray:
    data = section["data"]
    return spiked_rows(int(n), int(data["d"]), int(data["seed"]))


def study_agents(section: dict[str, Any], context: dict[str, Any] | None = None) -> pd.DataFrame:
    """Every run at every (sizing, topology, m, method, ε), with the journal and workshop D-DP-PM where
    ``agents.searched`` asks for them (:func:`ddppm.studies.searched.searched_point`; ``context``: the config's
    ``workshop`` and ``threat_models``, their options)."""

    cfg = section["agents"]
    frames = []
    for sizing in cfg["sizings"]:
        for topology in cfg["topologies"]:
            for m in cfg["ms"]:
                n = section["data"]["n"] if sizing == "fixed_n" else int(cfg["rows_per_agent"]) * int(m)
                task = scale_task(_rows(section, n), int(m), topology, int(cfg["c"]), int(section["k"]),
                                  int(section["seed"]))  # fmt: skip
                point = {"sizing": sizing, "topology": topology, "m": int(m), "n": int(n), "c": int(cfg["c"]),
                         "lambda2": lambda2_of(task.W)}  # fmt: skip
                frames.append(_run(section, task, section["epsilons"], f"agents/{sizing}/{m}", **point))
                searched = searched_point(section, task, f"agents/{sizing}/{m}", int(m), context)
                if len(searched):
                    frames.append(_at_point(searched, point))
    runs = pd.concat(frames, ignore_index=True)
    runs["note"] = runs["note"].fillna("") if "note" in runs else ""
    return runs


def study_topology(section: dict[str, Any]) -> pd.DataFrame:
    """Every run at every topology of ``topology`` (m and c fixed), with λ₂(W) and Theorem 3's consensus term."""
    cfg = section["topology"]
    X = _rows(section, section["data"]["n"])
    frames = []
    for topology in cfg["topologies"]:
        task = scale_task(X, int(cfg["m"]), topology, int(cfg["c"]), int(section["k"]), int(section["seed"]))
        frames.append(
            _run(section, task, [cfg["eps"]], f"topology/{topology}", topology=topology, m=int(cfg["m"]),
                 c=int(cfg["c"]), lambda2=lambda2_of(task.W),
                 consensus_term=consensus_term(task, int(cfg["c"])))
        )  # fmt: skip
    return pd.concat(frames, ignore_index=True)


def consensus_grid(c_star: int, points: int) -> list[int]:
    """About ``points`` values of c from 1 to ``c_star``, geometrically spaced (distinct integers, both ends)."""
    grid = np.unique(np.round(np.geomspace(1, max(1, c_star), max(2, points))).astype(int))
    return [int(c) for c in grid]


def study_consensus(section: dict[str, Any]) -> pd.DataFrame:
    """Every run at every c from 1 to the Theorem 3 choice (``consensus.target`` share of sin²), one topology.
    Every c draws the same noise and starts (one generator label for the study), so the curve over c is paired."""
    cfg = section["consensus"]
    X = _rows(section, section["data"]["n"])
    base = scale_task(X, int(cfg["m"]), cfg["topology"], 1, int(section["k"]), int(section["seed"]))
    c_star = theorem3_consensus_rounds(base, float(cfg["target"]))
    frames = []
    for c in consensus_grid(c_star, int(cfg["points"])):
        task = scale_task(X, int(cfg["m"]), cfg["topology"], c, int(section["k"]), int(section["seed"]))
        frames.append(
            _run(section, task, [cfg["eps"]], "consensus", topology=cfg["topology"], m=int(cfg["m"]), c=c,
                 c_theorem3=c_star, lambda2=lambda2_of(task.W), consensus_term=consensus_term(task, c))
        )  # fmt: skip
    return pd.concat(frames, ignore_index=True)


COMPOSITION = {
    "block": "one Gaussian mechanism per iteration on the whole d × k block (Δ of a block step: √2 for k ≥ 2), "
    "composed over the L iterations (exact GDP composition): no composition over components",
    "one_release": "one release whatever k (the top-k of one noisy second moment): no composition over components",
}
"""How each method's δ covers k components (column ``composition`` of the rank study)."""


def study_rank(section: dict[str, Any]) -> pd.DataFrame:
    """Every run at every k of ``rank.ranks`` on rows with ``rank.spikes`` (so every k has a gap), one network.
    The methods of ``methods`` estimate the k directions at once (block power iterations, or the top-k of one
    release), so their δ is calibrated per k with no composition over components (:data:`COMPOSITION`); a
    deflated variant (``rank.deflation``) runs k single-direction runs and composes over them (its own
    ``composition``)."""
    cfg = section["rank"]
    data = section["data"]
    X = spiked_rows(int(data["n"]), int(data["d"]), int(data["seed"]), tuple(float(s) for s in cfg["spikes"]))
    methods = rank_methods(section)
    frames = []
    for k in cfg["ranks"]:
        task = scale_task(X, int(cfg["m"]), cfg["topology"], int(cfg["c"]), int(k), int(section["seed"]))
        runs = _run(section, task, [cfg["eps"]], f"rank/{k}", methods, topology=cfg["topology"], m=int(cfg["m"]),
                    c=int(cfg["c"]))  # fmt: skip
        power = runs["rounds"] >= int(section["iterations"])  # a power method talks once per iteration at least
        runs["composition"] = np.where(power, COMPOSITION["block"], COMPOSITION["one_release"])
        for name, method in methods.items():
            if hasattr(method, "composition"):
                runs.loc[runs["method"] == name, "composition"] = method.composition
        frames.append(runs)
    return pd.concat(frames, ignore_index=True)


def _views(section: dict[str, Any]) -> pd.DataFrame:

    return study_views(section)


RUNNERS = {
    "agents": study_agents,
    "topology": study_topology,
    "consensus": study_consensus,
    "rank": study_rank,
    "views": _views,
    "samples": study_samples,
}
POINT_KEYS = {
    "agents": ["sizing", "topology", "m", "n", "c", "lambda2"],
    "topology": ["topology", "m", "c", "lambda2", "consensus_term"],
    "consensus": ["topology", "m", "c", "c_theorem3", "lambda2", "consensus_term"],
    "rank": ["topology", "m", "c", "composition"],
}


def run_study(name: str, section: dict[str, Any], context: dict[str, Any] | None = None) -> pd.DataFrame:
    """Every run of study ``name`` (:data:`STUDIES`); ``context`` (the config's ``workshop`` and
    ``threat_models``) gives the agents study's searched variants their options."""
    if name not in RUNNERS:
        raise ConfigError(f"studies: unknown study {name!r}; use one of {list(RUNNERS)}")
    return study_agents(section, context) if name == "agents" else RUNNERS[name](section)


def study_summary(name: str, runs: pd.DataFrame) -> pd.DataFrame:
    """Per study point, method and ε: the common task's summary (mean error, 95 % interval, δ, costs), with the
    study point's columns first. The ``views`` study has no runs to summarise: its rows are its summary."""
    if name == "views":
        return runs.copy()
    if name == "samples":
        return _labelled(samples_summary(runs))
    keys = POINT_KEYS[name]
    frames = []
    for point, group in runs.groupby(keys, sort=False):
        summary = summarise(group.drop(columns=keys))
        if "note" in group:  # why a searched variant was not run at this point (one per method and ε)
            notes = group.groupby(["method", "eps"], sort=False)["note"].first()
            summary["note"] = [notes.get((m, e), "") for m, e in zip(summary["method"], summary["eps"], strict=True)]
        frames.append(_at_point(summary, dict(zip(keys, point, strict=True))))
    return _labelled(pd.concat(frames, ignore_index=True).drop(columns=["setting", "dataset"]))


def _labelled(out: pd.DataFrame) -> pd.DataFrame:
    """``out`` with each method's legend label after its name."""
    labels = {name: style["label"] for name, style in study_styles().items()}
    out.insert(out.columns.get_loc("method") + 1, "label", out["method"].map(labels))
    return out
