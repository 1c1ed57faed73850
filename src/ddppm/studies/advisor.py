"""The advisor: which method to use, from public parameters only (docs/method_map.md, "The advisor").

The advisor never reads a data file. It takes what a user may safely say about their problem without looking at
the data (n, d, m, ε, δ, the trust level, k, and an assumed spectral gap), simulates seeded spiked-covariance data
of that shape (:mod:`ddppm.studies.method_map`), runs every certified method of the common task on it, and gives
the competitive set at the user's trust level, from the raw records by default: the user says how loose their
declared bounds are likely to be (``looseness``, a public assumption like the spectral gap), and the simulated
route includes the private standardisation at that looseness (None: rows already in the unit ball). For each
member: its expected error with its 95 % interval (over the simulated data sets, not the user's), its costs, and
whether any method beats chance. Choosing a method by its results on the private data would make the choice itself
a function of the data, covered by no δ; choosing it here spends no privacy, because nothing private is touched.
``ddppm advise`` (:mod:`ddppm.advise`) prints it; ``ddppm.PrivatePCA(method="auto")`` follows it.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import pandas as pd

from ddppm.common_task.run import TRUST_LEVELS, TRUST_ORDER
from ddppm.methods import common_task_methods, method_styles
from ddppm.studies.method_map import Shape, run_shape, spiked_spectrum

DEFAULTS: dict[str, Any] = {
    "gap": 2.0,
    "looseness": 2.0,
    "adjacency": "replace_one",
    "iterations": 10,
    "topology": "ring",
    "consensus": 10,
    "seed": 0,
    "runs": {"start": 10, "cap": 40},
}
"""The advisor's defaults (the method map's, with fewer runs so that it answers within a minute)."""


def advise(n: int, d: int, m: int, eps: float, delta: float, trust: str, k: int = 1, gap: float = 2.0,
           runs_start: int = 10, runs_cap: int = 40, seed: int = 0,
           looseness: float | None = 2.0,
           methods: Collection[str] | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:  # fmt: skip
    """The competitive set for a public problem shape, by simulation.

    Parameters
    ----------
    n, d, m, k
        Rows, dimension, agents and the rank wanted.
    eps, delta
        The privacy budget of the whole release (every method is calibrated to it; certified δ only).
    trust
        What the user trusts: ``central`` (a curator), ``secure_aggregation`` or ``local`` (no one).
    gap
        The assumed spectral gap λ_k/λ_{k+1} of the population covariance (top-k eigenvalues ``gap·(k, …, 1)``).
    looseness
        How many times wider than the data's mean ± 4 standard deviations the user's declared bounds are likely to
        be (≥ 1): the simulated route runs from raw records with the private standardisation
        (:func:`ddppm.studies.method_map.raw_shape_records`); None: rows already in the unit ball (prepared rows).
    methods
        The methods to choose from (default: every method of the common task); a release with secure noise passes
        those that can draw it (:class:`ddppm.PrivatePCA`).

    Returns
    -------
    tuple
        One row per member of the competitive set (method, label, error mean and interval, floats per agent,
        rounds), and the answer's facts: best method, whether it separated, whether any method beats chance,
        runs, every simulated method's mean error (``mean_errors``, members or not), and the assumption made.
    """
    if trust not in TRUST_LEVELS:
        raise ValueError(f"--trust must be one of {TRUST_LEVELS}, got {trust!r}")
    if looseness is not None and not looseness >= 1:
        raise ValueError(f"--looseness must be at least 1 (a factor of the data's mean ± 4 sd), got {looseness!r}")
    shape = Shape(int(n), int(d), float(gap), int(m), int(k))
    section = {**DEFAULTS, "epsilons": [float(eps)], "delta": float(delta), "seed": int(seed),
               "runs": {"start": int(runs_start), "cap": int(runs_cap)}, "looseness": looseness}  # fmt: skip
    usable = {name: method for name, method in common_task_methods().items()
              if TRUST_ORDER.get(method.trust_model, -1) >= TRUST_ORDER[trust]
              and (methods is None or name in methods)}  # fmt: skip
    runs, cells = run_shape(shape, section, usable)
    cell = cells[cells["trust"] == trust].iloc[0]
    finished = runs[runs["feasible"].astype(bool) & runs["error"].notna()]
    mean_errors = finished.groupby("method")["error"].mean()
    labels = {name: style["label"] for name, style in method_styles().items()}
    members = []
    for entry in str(cell["members"]).split(";"):
        method, mean, lo, hi, floats, rounds = entry.split(":")
        members.append({"method": method, "label": labels.get(method, method), "error_mean": float(mean),
                        "error_lo": float(lo), "error_hi": float(hi), "floats_per_agent": int(floats),
                        "rounds": int(rounds)})  # fmt: skip
    spectrum = spiked_spectrum(shape.d, shape.k, shape.gap)
    if looseness is None:
        rows = "in a random basis, scaled into the unit ball by a bound computed from that spectrum (prepared rows)"
    else:
        rows = (f"in a random basis, with seeded feature means: raw records whose declared bounds are {looseness:g} "
                "times wider than each feature's mean ± 4 sd, standardised privately with a quarter of the budget")
    facts = {
        "scope": "prepared_rows" if looseness is None else "raw_records",
        "best": cell["best"],
        "separated": bool(cell["separated"]),
        "beats_chance": bool(cell["beats_chance"]),
        "chance_error": float(cell["chance_error"]),
        "runs": int(cell["runs"]),
        "mean_errors": {str(name): float(value) for name, value in mean_errors.items()},
        "assumption": (
            f"Gaussian rows with population eigenvalues {', '.join(f'{v:g}' for v in spectrum[:k])} then 1 "
            f"(gap λ_k/λ_(k+1) = {gap:g}), {rows}; rows split evenly over {m} agents ({DEFAULTS['topology']} "
            f"network, {DEFAULTS['consensus']} gossip rounds per iteration); adjacency {DEFAULTS['adjacency']}"
        ),
    }
    return pd.DataFrame(members), facts


def render(members: pd.DataFrame, facts: dict[str, Any], trust: str, eps: float, delta: float) -> str:
    """The answer as a user reads it."""
    lines = [f"Which method, for users who trust {trust.replace('_', ' ')} at ε = {eps:g}, δ = {delta:g} "
             f"(certified δ; simulated, {facts['runs']} data sets):"]  # fmt: skip
    if not facts["beats_chance"]:
        lines.append(f"  No method beats chance here (a random direction has error {facts['chance_error']:.3f}).")
    verdict = "one method is significantly better" if facts["separated"] else (
        "these are tied within noise (95 % paired intervals)")
    lines.append(f"  Competitive set ({verdict}):")
    for row in members.itertuples():
        lines.append(f"    {row.label:58s} error {row.error_mean:.3f} [{row.error_lo:.3f}, {row.error_hi:.3f}]"
                     f"  floats/agent {row.floats_per_agent:,}  rounds {row.rounds}")  # fmt: skip
    if not facts["separated"]:
        lines.append("  PrivatePCA(method='auto') breaks such a tie by a stated public rule (docs/method_map.md, "
                     "\"The advisor\").")  # fmt: skip
    lines.append(f"  Assumed: {facts['assumption']}.")
    if facts.get("scope") == "raw_records":
        lines.append("  Scope: from the raw records: the δ covers everything from the records on, the private "
                     "standardisation included (docs/privacy.md); errors against the PCA of the truly standardised "
                     "records.")
    else:
        lines.append("  Scope: the δ covers rows already in the unit ball (prepared rows); records that need private "
                     "standardisation first spend part of the budget on it (leave out --prepared-rows for that).")
    lines.append("  Intervals are over simulated data of your shape, not your data; no data file was read.")
    return "\n".join(lines)
