"""The README's result numbers, written from a run's tables (never typed by hand).

``python -m ddppm.pipeline.readme`` rewrites every generated block of README.md and docs/results.md (between
``<!-- NAME:begin -->`` and ``<!-- NAME:end -->``) from ``results/``: run it after the default run, before a
release. ``--check`` fails, printing the difference, when a file's blocks are not what the run gives. The blocks:
the journal D-DP-PM's verdict per claim and threat model with the numbers behind it (``results``), its key
points per data set (``journal``), and each other experiment's findings (``findings-<name>``, its
``findings.txt``). Which methods the verdict judges is the config's ``verdict`` section (``--config``; its
defaults are the journal D-DP-PM, the analytic LDP baseline and the oracle). The ``timings`` block (README.md,
docs/pipeline.md) comes from ``benchmarks/timings.yaml``, written by ``benchmarks/bench_pipeline.py``: the one
source of every run time the docs quote.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ddppm.core.io import read_parquet
from ddppm.data import LABELS
from ddppm.pipeline.config import verdict_roles
from ddppm.privacy.threat_models import BUILT_IN

CLAIM_EPS = (2.0, 5.0)
Verdict = dict[str, str]
"""The config's ``verdict`` section: ``method`` (judged), ``baseline`` (to beat), ``yardstick`` (shown beside)."""


def _fmt(x: float) -> str:
    return "—" if not np.isfinite(x) else (f"{x:.3g}" if abs(x) >= 1e-3 else f"{x:.1e}")


def _load(results: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    summary = pd.read_csv(results / "tables" / "summary.csv")
    floor_path = results / "tables" / "floor.csv"
    floor = pd.read_csv(floor_path) if floor_path.exists() else pd.DataFrame()
    return summary, floor


def _models(summary: pd.DataFrame, verdict: Verdict) -> list[str]:
    rows = summary[summary["method"] == verdict["method"]]
    return [m for m in ("paper", "paper_worst", "sound") if m in set(rows["threat_model"])] + sorted(
        set(rows["threat_model"]) - {"paper", "paper_worst", "sound"}
    )


def _views(summary: pd.DataFrame, verdict: Verdict) -> dict[str, str]:
    return {m: BUILT_IN[m].view for m in _models(summary, verdict) if m in ("paper", "paper_worst", "sound")}


def _judged(summary: pd.DataFrame, model: str, verdict: Verdict) -> pd.DataFrame:
    return summary[(summary["method"] == verdict["method"]) & (summary["threat_model"] == model)]


def _reference(summary: pd.DataFrame, name: str) -> pd.DataFrame:
    return summary[summary["method"] == name].drop_duplicates(["dataset", "eps"])


def claim_rows(results: Path, verdict: Verdict | None = None) -> list[tuple[str, dict[str, str]]]:
    """(claim, {threat model: verdict with its numbers}) for the journal's claims (a)–(d) and the floor."""
    verdict = verdict or verdict_roles()
    summary, floor = _load(results)
    models, views = _models(summary, verdict), _views(summary, verdict)
    ref = _reference(summary, verdict["baseline"]).set_index(["dataset", "eps"])["error_mean"]
    datasets = list(dict.fromkeys(summary["dataset"]))
    first = "diabetes" if "diabetes" in datasets else datasets[0]  # the journal's first data set
    out: list[tuple[str, dict[str, str]]] = []

    beats = {}
    for m in models:
        rows = _judged(summary, m, verdict)
        at = rows[rows["eps"].isin(CLAIM_EPS)]
        wins = sum(bool(r.feasible) and r.error_mean < ref.get((r.dataset, r.eps), np.nan) for r in at.itertuples())
        key = at[(at["dataset"] == first) & (at["eps"] == 5.0)]
        key_err = float(key["error_mean"].iloc[0]) if len(key) else np.nan
        key_ref = float(ref.get((first, 5.0), np.nan))
        beats[m] = (
            f"{'holds' if wins == len(at) else 'partly' if wins else 'no'}: {wins} of {len(at)} points; "
            f"{LABELS.get(first, first)} ε = 5: {_fmt(key_err) if np.isfinite(key_err) else 'infeasible'} "
            f"vs {_fmt(key_ref)}"
        )
    out.append(("(a) beats LDP (analytic σ) at ε ∈ {2, 5}", beats))

    converged = {}
    for m in models:
        path = results / "methods" / verdict["method"] / first / m / "delta_vs_T.parquet"
        if not path.exists():
            continue
        curve, _ = read_parquet(path)
        at5 = curve[curve["T"] == min(5, int(curve["T"].max()))].iloc[0]
        at1 = curve[curve["T"] == 1].iloc[0]
        ok = at5["delta"] <= at5["delta_limit"] and at5["error_mean"] < 0.1
        converged[m] = (
            f"{'holds' if ok else 'no'}: {LABELS.get(first, first)} T = 1 → {int(at5['T'])}: "
            f"δ {_fmt(at1['delta'])} → {_fmt(at5['delta'])} (limit {_fmt(at5['delta_limit'])}), "
            f"error {_fmt(at1['error_mean'])} → {_fmt(at5['error_mean'])}"
        )
    out.append(("(b) converged by T ≈ 5 with δ barely grown (ε = 5)", converged))

    dims = {}
    for m in models:
        rows = _judged(summary, m, verdict)
        counts = rows.groupby("dataset")["feasible"].agg(["sum", "size"])
        dims[m] = "; ".join(f"{LABELS.get(d, d)} {int(c['sum'])}/{int(c['size'])}" for d, c in counts.iterrows())
    out.append(("(c) better on higher-dimensional data (points meeting the limit)", dims))

    met = {}
    for m in models:
        rows = _judged(summary, m, verdict)
        text = f"met at {int(rows['feasible'].sum())} of {len(rows)} points"
        if m in views and len(floor):
            f = floor[floor["view"] == views[m]]
            text += f"; the {views[m]} view's floor excludes {int(f['infeasible_every_choice'].sum())} of {len(f)}"
        met[m] = text
    out.append(("(d) the δ limits can be met", met))
    return out


def verdict_table(results: Path, verdict: Verdict) -> str:
    """The journal verdict as a Markdown table: one row per claim, one column per threat model."""
    rows = claim_rows(results, verdict)
    models = _models(_load(results)[0], verdict)
    lines = ["| claim | " + " | ".join(f"`{m}`" for m in models) + " |", "|---" * (len(models) + 1) + "|"]
    for claim, cells in rows:
        lines.append(f"| {claim} | " + " | ".join(cells.get(m, "—") for m in models) + " |")
    return "\n".join(lines)


def floor_sentence(results: Path) -> str:
    _, floor = _load(results)
    if floor.empty:
        return ""
    parts = []
    for view, f in floor.groupby("view", sort=False):
        at5 = f[f["eps"] == 5.0]
        example = (
            f" ({LABELS.get(at5['dataset'].iloc[0], at5['dataset'].iloc[0])}, ε = 5: δ ≥ "
            f"{_fmt(at5['floor_hockey'].iloc[0])}, limit {_fmt(at5['delta_limit'].iloc[0])})"
            if len(at5)
            else ""
        )
        parts.append(f"`{view}` view: {int(f['infeasible_every_choice'].sum())} of {len(f)} points{example}")
    return (
        "**Infeasible for every parameter choice** (the δ floor of the releases without added noise exceeds the "
        "limit; a proof, hockey-stick δ at the worst neighbour found): " + "; ".join(parts) + "."
    )


def other_findings(results: Path) -> list[str]:
    """The first finding of each other experiment that wrote a ``findings.txt``, with its title."""
    out = []
    for path in sorted(_findings_files(results).values()):
        lines = [line.strip() for line in path.read_text().splitlines() if line.strip()]
        body = [line for line in lines[1:] if not line.startswith("Setting")]
        if body:
            out.append(f"* **{lines[0]}**: {body[0]}")
    return out


def journal_table(results: Path, verdict: Verdict, eps_shown: tuple[float, ...] = (2.0, 5.0, 10.0, 100.0)) -> str:
    """Mean error at a few ε per data set: D-DP-PM under each threat model (δ achieved, or why not) beside the
    valid LDP baseline and the oracle (the config's ``verdict``)."""
    summary, floor = _load(results)
    models, views = _models(summary, verdict), _views(summary, verdict)
    ref = _reference(summary, verdict["baseline"]).set_index(["dataset", "eps"])
    oracle = _reference(summary, verdict["yardstick"]).set_index(["dataset", "eps"])
    head = ["dataset", "ε", "δ limit", *(f"D-DP-PM `{m}`" for m in models), "LDP analytic", verdict["yardstick"]]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for ds in dict.fromkeys(summary["dataset"]):
        for e in eps_shown:
            rows = summary[(summary["dataset"] == ds) & (summary["eps"] == e)]
            if rows.empty:
                continue
            cells = [LABELS.get(ds, ds), f"{e:g}", _fmt(float(rows["delta_limit"].iloc[0]))]
            for m in models:
                r = rows[(rows["method"] == verdict["method"]) & (rows["threat_model"] == m)]
                f = (
                    floor[(floor["dataset"] == ds) & (floor["eps"] == e) & (floor["view"] == views.get(m))]
                    if len(floor)
                    else floor
                )
                proof = len(f) and bool(f["infeasible_every_choice"].iloc[0])
                if len(r) and bool(r["feasible"].iloc[0]):
                    cell = f"{_fmt(float(r['error_mean'].iloc[0]))} (δ {_fmt(float(r['delta'].iloc[0]))})"
                    cell += " ◯" if proof else ""
                else:
                    cell = "✖ floor" if proof else "✖"
                cells.append(cell)
            cells.append(_fmt(float(ref["error_mean"].get((ds, e), np.nan))))
            cells.append(_fmt(float(oracle["error_mean"].get((ds, e), np.nan))))
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _findings_files(results: Path) -> dict[str, Path]:
    """Each experiment's findings file in the run, by experiment (its directory under ``results``)."""
    paths = sorted([*results.glob("*/tables/findings.txt"), *results.glob("*/findings.txt")])
    return {p.relative_to(results).parts[0]: p for p in paths}


def _summary_files(results: Path) -> dict[str, Path]:
    """Each experiment's README summary (``<experiment>/readme_summary.md``, Markdown), by experiment."""
    return {p.relative_to(results).parts[0]: p for p in sorted(results.glob("*/readme_summary.md"))}


def findings_text(path: Path) -> str:
    """Every finding an experiment wrote (its ``findings.txt``), one bullet each."""
    lines = [line.strip() for line in path.read_text().splitlines() if line.strip()]
    return "\n".join(f"* {line}" for line in lines[1:])


def results_block(results: str | Path, verdict: Verdict) -> str:
    """The README's generated verdict (between the ``results`` markers) for the run in ``results``."""
    results = Path(results)
    return "\n".join(
        [
            "<!-- written by `python -m ddppm.pipeline.readme` from results/: do not edit by hand -->",
            verdict_table(results, verdict),
            "",
            floor_sentence(results),
            "",
            *other_findings(results),
        ]
    )


def blocks(results: str | Path, verdict: Verdict | None = None) -> dict[str, str]:
    """Every generated block by name: ``results`` (the verdict), ``journal`` (the key-point table),
    ``findings-<experiment>`` for each experiment of the run and ``summary-<experiment>`` for each that writes a
    README summary."""
    results, verdict = Path(results), verdict or verdict_roles()
    out = {"results": results_block(results, verdict), "journal": journal_table(results, verdict)}
    for name, path in _findings_files(results).items():
        out[f"findings-{name}"] = findings_text(path)
    for name, path in _summary_files(results).items():
        out[f"summary-{name}"] = path.read_text().strip()
    return out


TIMINGS = Path("benchmarks/timings.yaml")
"""Measured run times (``benchmarks/bench_pipeline.py`` writes it), relative to the repository root."""


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def timings_block(timings: dict[str, dict[str, object]]) -> str:
    """The run times the docs quote, from the record of ``benchmarks/bench_pipeline.py``."""
    parts = []
    if "default" in timings:
        t = timings["default"]
        parts.append(
            f"The default run took **{_duration(float(t['wall_seconds']))}** on a {t['cores']}-core machine "
            f"({t['jobs']} jobs from scratch, measured {t['date']} at commit {t['commit']}); allow up to twice that on "
            "a slower machine."
        )
        if "summed_job_seconds" in t:
            costliest = ", ".join(f"`{c['rule']}` {_duration(float(c['seconds']))}" for c in t["costliest_rules"][:3])
            parts.append(
                f"Its jobs took {_duration(float(t['summed_job_seconds']))} in all, about "
                f"{_duration(float(t['summed_startup_seconds']))} of it starting Python; the costliest rules: "
                f"{costliest}."
            )
        if "baseline" in t:  # bench_pipeline.py --baseline: the same hour's timing of another commit
            base = t["baseline"]
            parts.append(
                f"Commit {base['commit']}, timed right after on the same machine, took "
                f"{_duration(float(base['wall_seconds']))} (jobs {_duration(float(base['summed_job_seconds']))}): "
                "run times vary by the hour on a shared machine, so compare within one session."
            )
    if "tiny" in timings:
        t = timings["tiny"]
        parts.append(
            f"The tiny configuration (`./run.sh --configfile tests/config/tiny.yaml`, into `results-tiny/`) took "
            f"**{_duration(float(t['wall_seconds']))}** ({t['jobs']} jobs, {t['date']})."
        )
    parts.append("Source: `benchmarks/timings.yaml`, written by `python benchmarks/bench_pipeline.py tiny|default`.")
    return " ".join(parts)


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}:begin -->", f"<!-- {name}:end -->"


def render(
    text: str, results: str | Path, verdict: Verdict | None = None, timings: Path | None = TIMINGS
) -> str:
    """``text`` with every generated block it contains rewritten from ``results`` (and the ``timings`` block from
    the ``timings`` record, where that file exists)."""
    found = 0
    generated = blocks(results, verdict) if Path(results).exists() else {}
    if timings is not None and Path(timings).exists():
        generated["timings"] = timings_block(yaml.safe_load(Path(timings).read_text(encoding="utf-8")))
    for name in re.findall(r"<!-- ((?:findings|summary)-[\w-]+):begin -->", text):  # an experiment not in the run
        if Path(results).exists():  # without a run only the timings are rendered; the rest stays as it is
            generated.setdefault(name, f"(experiment {name.split('-', 1)[1]} is not in this run)")
    for name, body in generated.items():
        begin, end = _markers(name)
        if begin in text and end in text:
            head, rest = text.split(begin, 1)
            text = head + begin + "\n" + body + "\n" + end + rest.split(end, 1)[1]
            found += 1
    if not found:
        raise ValueError("no generated block (<!-- results:begin --> … <!-- results:end -->, …) in the file")
    return text


def check(path: str | Path, results: str | Path, verdict: Verdict | None = None) -> list[str]:
    """The difference between a file's generated blocks and what ``results`` gives (empty: they agree)."""
    text = Path(path).read_text()
    rendered = render(text, results, verdict)
    return list(difflib.unified_diff(text.splitlines(), rendered.splitlines(), str(path), "from results", lineterm=""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="results", help="the run's results directory")
    parser.add_argument("files", nargs="*", default=["README.md", "docs/results.md", "docs/pipeline.md"])
    parser.add_argument("--check", action="store_true", help="fail if a file's numbers differ from the run's")
    parser.add_argument("--config", default="config.yaml", help="the run's config file (its `verdict` section)")
    args = parser.parse_args(argv)
    config = Path(args.config)
    verdict = verdict_roles(yaml.safe_load(config.read_text(encoding="utf-8")) if config.exists() else None)
    status = 0
    for name in args.files:
        if args.check:
            diff = check(name, args.results, verdict)
            print("\n".join(diff) if diff else f"{name}: every generated number matches {args.results}/")
            status |= bool(diff)
        else:
            path = Path(name)
            path.write_text(render(path.read_text(), args.results, verdict))
            print(f"{name}: generated blocks rewritten from {args.results}/")
    return status


if __name__ == "__main__":
    sys.exit(main())
