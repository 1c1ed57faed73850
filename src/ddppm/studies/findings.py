"""What each scale study found, in sentences with numbers, from its summary
(:func:`ddppm.studies.run.study_summary`)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ddppm.common_task.run import reference_eps
from ddppm.studies.run import not_run
from ddppm.studies.samples import samples_findings
from ddppm.studies.views import views_findings

GOSSIP = "gossip"


def agents_findings(summary: pd.DataFrame) -> list[str]:
    """Per sizing at ε = 5 (or the middle ε): each method's error at the smallest and the largest m, per topology
    for a gossip method (the others sum exactly: the topology does not change them)."""
    eps = reference_eps(summary["eps"])
    searched = summary["privacy_column"] == "searched"
    at = summary[(summary["eps"] == eps) & ~searched]
    lo, hi = int(at["m"].min()), int(at["m"].max())
    lines = []
    for sizing, group in at.groupby("sizing", sort=False):
        parts = []
        for method, rows in group.groupby("method", sort=False):
            topologies = rows["topology"].unique() if rows["trust_model"].iloc[0] == GOSSIP else rows["topology"][:1]
            for topology in topologies:
                mine = rows[rows["topology"] == topology].set_index("m")["error_mean"]
                where = f" ({topology})" if rows["trust_model"].iloc[0] == GOSSIP else ""
                parts.append(f"{method}{where} {mine[lo]:.3f} → {mine[hi]:.3f}")
        lines.append(f"Agents, {sizing}, ε = {eps:g}, error at m = {lo} → {hi}: " + "; ".join(parts) + ".")
    lines += searched_findings(summary[searched & (summary["eps"] == eps)], at)
    by_reason: dict[str, list[str]] = {}
    for name, why in not_run().items():
        if name not in set(summary["method"]):
            by_reason.setdefault(why, []).append(name)
    for why, names in by_reason.items():
        lines.append(f"Not run: {', '.join(names)}: {why}.")
    return lines


def searched_findings(searched: pd.DataFrame, others: pd.DataFrame) -> list[str]:
    """Per searched variant (journal or workshop D-DP-PM) at one ε: its error where it was calibrated, beside the
    certified gossip methods' (the certified D-DP-PM) at the same points, the δ found ("at least"), and the m where
    it was not run and why."""
    lines = []
    gossip = others[(others["trust_model"] == GOSSIP) & (others["privacy_column"] == "certified")]
    certified = gossip.set_index(["sizing", "topology", "m", "method"])["error_mean"].sort_index()
    for method, rows in searched.groupby("method", sort=False):
        skipped = rows[rows["note"].str.startswith("not run")]
        ran = rows.drop(index=skipped.index)
        parts = []
        for r in ran.itertuples():
            if not (r.feasible and pd.notna(r.error_mean)):
                parts.append(f"{r.sizing}, {r.topology}, m = {r.m}: no parameters met the limit")
                continue
            at = certified.get((r.sizing, r.topology, r.m), pd.Series(dtype=float))
            beside = ", ".join(f"{name} {err:.3f}" for name, err in at.items())
            parts.append(f"{r.sizing}, {r.topology}, m = {r.m}: {r.error_mean:.3f}" + (f" ({beside})" if beside else "")
                         + f", δ at least {r.delta:.2g}")  # fmt: skip
        reached = sorted(set(ran["m"]))
        how = (ran if len(ran) else rows)["note"].iloc[0]
        line = (f"Searched {method} (δ only searched, at least: Definition 1's hockey stick at the worst neighbour "
                f"found; {how}), "
                f"ε = {float(rows['eps'].iloc[0]):g}: " + ("; ".join(parts) if parts else "calibrated nowhere")
                + f". Largest m reached: {max(reached) if reached else 'none'}")  # fmt: skip
        if len(skipped):
            line += f"; m = {', '.join(str(m) for m in sorted(set(skipped['m'])))}: {skipped['note'].iloc[0]}"
        lines.append(line + ".")
    return lines


def topology_findings(summary: pd.DataFrame) -> list[str]:
    """The gossip methods' error per topology, best first, with λ₂(W) and the consensus term; the exact-sum
    methods' error (what perfect consensus would give)."""
    lines = []
    m, c, eps = int(summary["m"].iloc[0]), int(summary["c"].iloc[0]), float(summary["eps"].iloc[0])
    for method, rows in summary[summary["trust_model"] == GOSSIP].groupby("method", sort=False):
        ranked = rows.sort_values("error_mean")
        parts = [
            f"{r.topology} {r.error_mean:.3f} (λ₂ = {r.lambda2:.3f}, consensus term {r.consensus_term:.2g})"
            for r in ranked.itertuples()
        ]
        lines.append(f"Topology, {method}, m = {m}, c = {c}, ε = {eps:g}, best first: " + "; ".join(parts) + ".")
    exact = summary[summary["trust_model"] != GOSSIP].groupby("method", sort=False)["error_mean"].first()
    lines.append("Exact sums (no topology): " + "; ".join(f"{k} {v:.3f}" for k, v in exact.items()) + ".")
    return lines


def consensus_findings(summary: pd.DataFrame, within: float = 0.10) -> list[str]:
    """The gossip methods' error from c = 1 to the Theorem 3 choice and the least c whose median error is within
    ``within`` (10 %) of the best median over c (the plateau; medians, since a rare run that fails to converge
    moves a mean), with δ (constant in c for a certified method). The c values share their draws (paired)."""
    lines = []
    c_star = int(summary["c_theorem3"].iloc[0])
    for method, rows in summary[summary["trust_model"] == GOSSIP].groupby("method", sort=False):
        rows = rows.sort_values("c")
        first, last = rows.iloc[0], rows.iloc[-1]
        plateau = float(rows["error_median"].min())
        enough = rows[rows["error_median"] <= (1 + within) * plateau]
        deltas = rows["delta"].unique()
        lines.append(
            f"Consensus, {method} ({rows['topology'].iloc[0]}, m = {int(rows['m'].iloc[0])}, "
            f"ε = {float(rows['eps'].iloc[0]):g}): median error {first['error_median']:.3f} at c = {int(first['c'])} "
            f"→ {last['error_median']:.3f} at the Theorem 3 choice c = {c_star} (means {first['error_mean']:.3f} → "
            f"{last['error_mean']:.3f}); c = {int(enough['c'].min())} is the least within {within:.0%} of the best "
            f"median ({plateau:.3f}); δ = "
            + (f"{deltas[0]:.3g} at every c" if len(deltas) == 1 else f"{deltas.min():.3g}–{deltas.max():.3g}")
            + "."
        )
    return lines


def rank_findings(summary: pd.DataFrame) -> list[str]:
    """Each method's error from the smallest to the largest k, with the composition that covers the k
    directions."""
    ks = sorted(set(summary["k"]))
    lo, hi = ks[0], ks[-1]
    parts, compositions = [], {}
    for method, rows in summary.groupby("method", sort=False):
        at = rows.set_index("k")["error_mean"]
        parts.append(f"{method} {at[lo]:.3f} → {at[hi]:.3f}")
        compositions.setdefault(rows["composition"].iloc[0], []).append(method)
    eps, m = float(summary["eps"].iloc[0]), int(summary["m"].iloc[0])
    lines = [f"Rank, m = {m} ({summary['topology'].iloc[0]}), ε = {eps:g}, error at k = {lo} → {hi}: "
             + "; ".join(parts) + "."]  # fmt: skip
    for method in dict.fromkeys(summary["method"]):
        block = method.removesuffix("_deflation")
        if method.endswith("_deflation") and block in set(summary["method"]):
            lines.append(_deflation_sentence(summary, block, method))
    for text, methods in compositions.items():
        lines.append(f"Composition, {', '.join(methods)}: {text}.")
    return lines


def _deflation_sentence(summary: pd.DataFrame, block: str, deflation: str) -> str:
    """Block against deflation for one method at every k ≥ 2: mean errors, the noise σ of one release, and
    which is better where the 95 % intervals do not overlap."""
    at = summary.set_index(["method", "k"])
    parts = []
    for k in sorted(k for k in set(summary["k"]) if k >= 2):
        b, d = at.loc[(block, k)], at.loc[(deflation, k)]
        overlap = b["error_ci_lo"] <= d["error_ci_hi"] and d["error_ci_lo"] <= b["error_ci_hi"]
        verdict = "intervals overlap" if overlap else ("block better" if b["error_mean"] < d["error_mean"] else
                                                       "deflation better")  # fmt: skip
        parts.append(f"k = {k}: {b['error_mean']:.3f} against {d['error_mean']:.3f}, σ {b['sigma']:.3g} against "
                     f"{d['sigma']:.3g} ({verdict})")  # fmt: skip
    return (f"Block ({block}) against deflation ({deflation}, δ composed over the k components), mean error and "
            f"noise per release: " + "; ".join(parts) + ".")  # fmt: skip


FINDINGS = {
    "agents": agents_findings,
    "topology": topology_findings,
    "consensus": consensus_findings,
    "rank": rank_findings,
    "views": views_findings,
}


def study_findings(name: str, summary: pd.DataFrame, section: dict[str, Any] | None = None) -> list[str]:
    """The findings of study ``name``: a title line, then one sentence per line (``section``: the config's
    ``studies``, whose ``samples.claims`` the samples study judges)."""
    if name == "samples":
        claims = (section or {}).get("samples", {}).get("claims", {})
        return [f"Scale study: {name}", *samples_findings(summary, claims)]
    return [f"Scale study: {name}", *FINDINGS[name](summary)]
