"""Study ``samples``: the later central methods' claims in their papers' own setting (docs/studies.md).

DP-PCA (Liu, Kong, Jain & Oh 2022) claims near-optimal error for sub-Gaussian data at n = Õ(d), where earlier
methods such as AnalyzeGauss need n = Ω(d^{3/2}); Cai, Xia & Zha (2024) claim the minimax rate, up to logs and
the signal strength, ``√(d/n) + d/(nε)`` for the top direction in the spiked model. Both bound the error against
the *population* direction, on Gaussian rows. So this study draws such rows (:func:`public_bound_rows`: the
spiked model of :func:`ddppm.data.synthetic.spiked_synthetic`, divided by the public bound ``2√tr Σ`` that the
model's declared spectrum fixes, the few longer rows clipped into the unit ball), one curator (k = 1), and records
each estimate's error against the population direction (``population_error``) beside the common task's error
against the sample's (``error``).

* :func:`study_samples`: every run at every (d, n, method, ε) of the section ``samples``;
* :func:`samples_summary`: the common task's summary plus the population error's mean and 95 % interval;
* :func:`rate_fits`: per (method, ε), the least-squares exponents ``a`` (of n) and ``b`` (of d) in
  ``log error = c + a log n + b log d`` over the points where the error is non-trivial (population error ≤
  :data:`NONTRIVIAL`), with 95 % intervals;
* :func:`samples_findings`: the verdict on each claim of ``samples.claims`` (config: the papers' words and what they
  are judged against), with numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ddppm.common_task.run import interval_outcome, mean_half_width, run_rows, summarise
from ddppm.common_task.task import CommonTask, subspace_error
from ddppm.core.errors import ConfigError
from ddppm.core.seeds import run_generators
from ddppm.data.synthetic import spiked_population_directions, spiked_synthetic
from ddppm.methods import common_task_methods

NONTRIVIAL = 0.5
"""The population error under which a point counts in the rate fits (first-order perturbation holds there)."""
MIN_POINTS = 4
"""The fewest non-trivial points a rate fit needs (three coefficients)."""
POINT = ["d", "n"]


def public_bound_rows(n: int, d: int, spikes: tuple[float, ...], seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Spiked Gaussian rows divided by the public bound ``2√tr Σ`` (Σ's declared spectrum: ``spikes`` then 1s),
    those still longer than 1 clipped onto the unit sphere; and the population's top direction."""
    X = spiked_synthetic(n=n, d=d, spikes=spikes, seed=seed)
    X /= 2.0 * np.sqrt(sum(spikes) + d - len(spikes))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    return X, spiked_population_directions(d, seed)[:, :1]


def samples_methods(section: dict[str, Any]) -> dict[str, Any]:
    """The methods of ``samples.methods``, each a registered common-task method (the study runs them at k = 1)."""
    known = common_task_methods()
    unknown = [name for name in section["samples"]["methods"] if name not in known]
    if unknown:
        raise ConfigError(f"studies.samples.methods: {unknown} are not common-task methods; use some of "
                          f"{sorted(known)}")  # fmt: skip
    return {name: known[name] for name in section["samples"]["methods"]}


def study_samples(section: dict[str, Any]) -> pd.DataFrame:
    """Every run at every (d, n) of ``samples.ds`` × ``samples.ns``, method and ε of ``samples.epsilons``: the
    common task's runs format with the point's ``d`` and ``n`` first and the ``population_error`` of each run."""
    cfg = section["samples"]
    options = {"adjacency": section["adjacency"], "iterations": int(section["iterations"])}
    spikes = tuple(float(s) for s in cfg["spikes"])
    methods = samples_methods(section)
    frames = []
    for d in cfg["ds"]:
        for n in cfg["ns"]:
            X, population = public_bound_rows(int(n), int(d), spikes, int(section["data"]["seed"]))
            task = CommonTask(X, (np.arange(int(n)),), 1)
            for name, method in methods.items():
                for eps in cfg["epsilons"]:
                    calibrated = method.common_calibrate(task, float(eps), float(section["delta"]), options)
                    rngs = run_generators(int(section["seed"]), ("samples", int(d), int(n), name, float(eps)),
                                          range(int(section["runs"])))  # fmt: skip
                    V_hat = method.common_estimate(task, calibrated, rngs, options)
                    rows = run_rows(task, name, method, calibrated, V_hat, np.nan, f"samples/{d}/{n}")
                    rows["population_error"] = subspace_error(V_hat, population)
                    rows.insert(0, "n", int(n))
                    rows.insert(0, "d", int(d))
                    frames.append(rows)
    return pd.concat(frames, ignore_index=True)


def samples_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (d, n, method, ε): :func:`ddppm.common_task.run.summarise` plus ``population_error_mean`` and its 95 %
    interval (normal approximation over the runs)."""
    frames = []
    for (d, n), group in runs.groupby(POINT, sort=False):
        summary = summarise(group.drop(columns=[*POINT, "population_error"]))
        by_point = group.groupby(["method", "eps"], sort=False)["population_error"]
        mean = by_point.mean()
        half = by_point.agg(lambda errors: mean_half_width(errors.to_numpy(float)))
        keys = list(zip(summary["method"], summary["eps"], strict=True))
        summary["population_error_mean"] = mean.loc[keys].to_numpy()
        summary["population_error_ci_lo"] = (mean - half).loc[keys].to_numpy()
        summary["population_error_ci_hi"] = (mean + half).loc[keys].to_numpy()
        summary.insert(0, "n", n)
        summary.insert(0, "d", d)
        frames.append(summary)
    return pd.concat(frames, ignore_index=True).drop(columns=["setting", "dataset"])


def rate_fits(summary: pd.DataFrame) -> pd.DataFrame:
    """Per (method, ε): the exponents of n (``a``) and d (``b``) fitted to the log mean population error over the
    non-trivial points (≤ :data:`NONTRIVIAL`), each with a 95 % interval (Student's t on the least-squares
    standard errors); NaN with fewer than :data:`MIN_POINTS` points."""
    from scipy.stats import t as student_t

    rows = []
    for (method, eps), group in summary.groupby(["method", "eps"], sort=False):
        used = group[group["population_error_mean"] <= NONTRIVIAL]
        fit = {"method": method, "eps": float(eps), "points": len(used), "a": np.nan, "a_half": np.nan,
               "b": np.nan, "b_half": np.nan}  # fmt: skip
        if len(used) >= MIN_POINTS and used["d"].nunique() >= 2 and used["n"].nunique() >= 2:
            design = np.column_stack([np.ones(len(used)), np.log(used["n"]), np.log(used["d"])])
            target = np.log(used["population_error_mean"].to_numpy(float))
            coef, *_ = np.linalg.lstsq(design, target, rcond=None)
            dof = len(used) - 3
            residual = target - design @ coef
            if dof > 0:
                cov = residual @ residual / dof * np.linalg.inv(design.T @ design)
                half = student_t.ppf(0.975, dof) * np.sqrt(np.diag(cov))
                fit.update(a_half=float(half[1]), b_half=float(half[2]))
            fit.update(a=float(coef[1]), b=float(coef[2]))
        rows.append(fit)
    return pd.DataFrame(rows)


def _compare(at: pd.DataFrame, method: str, other: str) -> str:
    """better / tied / worse of ``method`` against ``other`` by their population-error intervals at one point."""
    a, b = at.loc[method], at.loc[other]
    return interval_outcome(a["population_error_ci_lo"], a["population_error_ci_hi"], b["population_error_ci_lo"],
                            b["population_error_ci_hi"])  # fmt: skip


def _fit_text(fit: Any) -> str:
    if np.isnan(fit.a):
        return f"too few non-trivial points to fit ({int(fit.points)})"
    return (f"error ∝ n^{fit.a:.2f}±{fit.a_half:.2f} d^{fit.b:.2f}±{fit.b_half:.2f} over "
            f"{int(fit.points)} points")  # fmt: skip


def _missing(names: set[str], summary: pd.DataFrame) -> str:
    absent = sorted(names - set(summary["method"]))
    return f"not judged (studies.samples.methods lacks {absent})" if absent else ""


def beats_findings(summary: pd.DataFrame, fits: pd.DataFrame, method: str, claim: dict[str, Any]) -> list[str]:
    """A claim that ``method`` has a lower error than ``claim["against"]`` as n grows at fixed d: per (d, ε) and
    opponent, the population errors at the smallest and the largest n and who is better at each n (95 %
    intervals); the verdict holds where it is better at the largest n of every (d, ε, opponent), does not hold
    where nowhere, holds in part between; the fitted rates beside."""
    against = list(claim["against"])
    head = f"Claim, {method}: {claim['claim']}"
    if missing := _missing({method, *against}, summary):
        return [f"{head}: {missing}."]
    lines, wins, points = [], 0, 0
    for other in against:
        pair = summary[summary["method"].isin([method, other])]
        for (d, eps), group in pair.groupby(["d", "eps"], sort=False):
            at_n = group.set_index(["n", "method"])["population_error_mean"]
            lo, hi = int(group["n"].min()), int(group["n"].max())
            indexed = group.set_index("method")
            verdicts = [_compare(indexed[indexed["n"] == n], method, other) for n in sorted(set(group["n"]))]
            wins += verdicts[-1] == "better"
            points += 1
            lines.append(
                f"{method} against {other}, d = {d}, ε = {eps:g}, population error at n = {lo:,} → {hi:,}: "
                f"{at_n[(lo, method)]:.3f} → {at_n[(hi, method)]:.3f} against {at_n[(lo, other)]:.3f} → "
                f"{at_n[(hi, other)]:.3f}; better at {verdicts.count('better')} of {len(verdicts)} n, worse at "
                f"{verdicts.count('worse')} ({verdicts[-1]} at n = {hi:,})."
            )
    verdict = "holds" if wins == points else ("does not hold" if wins == 0 else "holds in part")
    lines += [_growth_with_d(fits, method, other, float(eps)) for other in against for eps in sorted(set(fits["eps"]))]
    rates = "; ".join(f"{fit.method}, ε = {fit.eps:g}: {_fit_text(fit)}"
                      for fit in fits[fits["method"].isin([method, *against])].itertuples())  # fmt: skip
    lines.insert(0, f"{head}: {verdict} here (better at the largest n in {wins} of {points} (d, ε, opponent)). "
                    f"Rates: {rates}.")  # fmt: skip
    return lines


def _growth_with_d(fits: pd.DataFrame, method: str, other: str, eps: float) -> str:
    """Whose fitted error grows more slowly with d at ε (95 % intervals of the d-exponents), and what that says."""
    at = fits[fits["eps"] == eps].set_index("method")
    mine, theirs = at.loc[method], at.loc[other]
    if np.isnan(mine["b"]) or np.isnan(theirs["b"]):
        return f"{method} against {other}, ε = {eps:g}: d-exponents not both fitted."
    how = {
        "better": "grows more slowly with d (the claim's mechanism: it gains as d grows at fixed n)",
        "worse": "grows faster with d",
        "tied": "grows with d as fast, within the intervals",
    }[interval_outcome(mine["b"] - mine["b_half"], mine["b"] + mine["b_half"], theirs["b"] - theirs["b_half"],
                       theirs["b"] + theirs["b_half"])]  # fmt: skip
    return (f"{method} against {other}, ε = {eps:g}: its error {how}: d-exponent {mine['b']:.2f}±{mine['b_half']:.2f} "
            f"against {theirs['b']:.2f}±{theirs['b_half']:.2f}; n-exponent {mine['a']:.2f}±{mine['a_half']:.2f} "
            f"against {theirs['a']:.2f}±{theirs['a_half']:.2f}.")


def rate_findings(summary: pd.DataFrame, fits: pd.DataFrame, method: str, claim: dict[str, Any]) -> list[str]:
    """A claimed error rate: the exponents of n and d fitted to ``method``'s population error against the claim's
    ranges ``claim["rate"]`` (``{n: [lo, hi], d: [lo, hi]}``); an exponent whose 95 % interval lies wholly outside
    its range does not follow the rate."""
    head = f"Claim, {method}: {claim['claim']}"
    if missing := _missing({method}, summary):
        return [f"{head}: {missing}."]
    ranges = claim["rate"]
    parts, outside, judged = [], [], 0
    for fit in fits[fits["method"] == method].itertuples():
        parts.append(f"ε = {fit.eps:g}: {_fit_text(fit)}")
        if np.isnan(fit.a):
            continue
        judged += 1
        for name, value, half in (("n", fit.a, fit.a_half), ("d", fit.b, fit.b_half)):
            lo, hi = ranges[name]
            if value - half > hi or value + half < lo:
                outside.append(f"the {name}-exponent at ε = {fit.eps:g}")
    verdict = ("not judged (too few non-trivial points)" if not judged else
               "does not hold here" if outside else "consistent with it")  # fmt: skip
    wanted = ", ".join(f"{name}-exponent in [{lo:g}, {hi:g}]" for name, (lo, hi) in ranges.items())
    return [f"{head} ({wanted}): {verdict}" + (f" ({'; '.join(outside)} outside)" if outside else "") + ". "
            + "; ".join(parts) + "."]  # fmt: skip


def samples_findings(summary: pd.DataFrame, claims: dict[str, dict[str, Any]]) -> list[str]:
    """Every claim of ``studies.samples.claims`` judged on one summary: :func:`beats_findings` for a claim with
    ``against``, :func:`rate_findings` for one with ``rate``."""
    fits = rate_fits(summary)
    lines = []
    for method, claim in claims.items():
        if "against" in claim:
            lines += beats_findings(summary, fits, method, claim)
        if "rate" in claim:
            lines += rate_findings(summary, fits, method, claim)
    return lines
