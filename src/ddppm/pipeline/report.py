"""What the HTML report shows: the findings in words and numbers, tables as HTML, and the provenance table.

The report's landing page (``results/report/landing.rst``) is written by the workflow from the finished
tables, so every number on it comes from this run. The journal's comparison reads the summary table
(:data:`ddppm.pipeline.tables.SUMMARY_COLUMNS`); the other papers' experiments contribute their own lines.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ddppm.core.io import read_parquet, write_text_atomic
from ddppm.core.provenance import PACKAGE, RECORDED_DISTRIBUTIONS
from ddppm.data import LABELS
from ddppm.methods import available_methods
from ddppm.methods.base import UNNAMED_THREAT_MODELS
from ddppm.pipeline.config import verdict_roles
from ddppm.pipeline.tables import one_row_per_method

_CSS = """
body { font-family: system-ui, sans-serif; margin: 1em; color: #222; }
table { border-collapse: collapse; font-size: 13px; margin-bottom: 1.5em; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f0f0f0; }
td.text { text-align: left; }
tr.infeasible td { color: #7b3294; }
"""


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return "—"
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, float | np.floating):
        v = float(value)
        return f"{v:.3g}" if (v == 0 or 1e-3 <= abs(v) < 1e4) else f"{v:.2e}"
    return str(value)


def html_table(table: pd.DataFrame, title: str, note: str = "", infeasible_column: str | None = "feasible") -> str:
    """A standalone HTML page showing ``table`` (numbers to 3 significant digits, NaN as "—").

    Rows whose ``infeasible_column`` is False are drawn in the infeasible colour and the note says so.
    """
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
    rows = []
    for _, row in table.iterrows():
        bad = infeasible_column in table.columns and not bool(row[infeasible_column])
        cells = "".join(
            f'<td class="{"text" if isinstance(v, str) else "num"}">{html.escape(_fmt(v))}</td>' for v in row
        )
        rows.append(f'<tr class="{"infeasible" if bad else "ok"}">{cells}</tr>')
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{_CSS}</style></head><body>\n"
        f"<p>{html.escape(note)}</p>\n<table><caption>{html.escape(title)}</caption>"
        f"<thead><tr>{head}</tr></thead><tbody>\n" + "\n".join(rows) + "\n</tbody></table></body></html>\n"
    )


def _label(dataset: str) -> str:
    return LABELS.get(dataset, dataset)


def _method_label(name: str) -> str:

    method = available_methods(task=None).get(name)
    return method.label if method is not None else name


def journal_findings(summary: pd.DataFrame, verdict: dict[str, str] | None = None) -> list[str]:
    """The journal comparison in a few sentences with numbers, from ``summary.csv``'s rows.

    For each threat model of the judged method (config ``verdict.method``, D-DP-PM): at how many (dataset, ε)
    points its parameters meet the δ limit, and at how many of those it beats ``verdict.baseline`` (mean error;
    LDP with a σ valid at every ε); then the ε = 5 point of each dataset.
    """
    verdict = verdict or verdict_roles()
    reference = verdict["baseline"]
    out: list[str] = []
    summary = one_row_per_method(summary)
    ours = summary[summary["method"] == verdict["method"]]
    ref = summary[summary["method"] == reference].set_index(["dataset", "eps"])
    n_points = len(ours[["dataset", "eps"]].drop_duplicates())
    for model, rows in ours.groupby("threat_model", sort=False):
        feasible = rows[rows["feasible"].astype(bool) & rows["error_mean"].notna()]
        accounting = rows["accounting"].iloc[0]
        text = (
            f"Under threat model ``{model}`` ({accounting} accounting), D-DP-PM meets the paper's δ limit at "
            f"{len(feasible)} of {n_points} (dataset, ε) points"
        )
        if len(feasible) and len(ref):
            keys = [k for k in zip(feasible["dataset"], feasible["eps"], strict=True) if k in ref.index]
            wins = [
                k
                for k, e in zip(keys, feasible.set_index(["dataset", "eps"]).loc[keys, "error_mean"], strict=True)
                if e < ref.loc[k, "error_mean"]
            ]
            text += f"; there its mean error is below {_method_label(reference)}'s at {len(wins)} of {len(keys)}"
            where = sorted({_label(d) for d, _ in wins})
            if where:
                text += f" (on {', '.join(where)})"
        never = sorted(_label(d) for d, g in rows.groupby("dataset") if not g["feasible"].astype(bool).any())
        if never:
            text += f". It meets no limit at all on {', '.join(never)}"
        out.append(text + ".")
    at5 = summary[np.isclose(summary["eps"], 5.0)]
    for dataset, rows in at5.groupby("dataset", sort=False):
        parts = []
        for _, r in rows.iterrows():
            name = _method_label(r["method"]) + _suffix(r["threat_model"])
            if bool(r["feasible"]) and np.isfinite(r["error_mean"]):
                parts.append(f"{name} {r['error_mean']:.3f}")
            elif np.isfinite(r["error_mean"]):
                parts.append(f"{name} {r['error_mean']:.3f} (δ {r['delta']:.2g} over the limit)")
            else:
                parts.append(f"{name} infeasible")
        limit = rows["delta_limit"].iloc[0]
        out.append(f"{_label(dataset)} at ε = 5 (δ limit {limit:.3g}), mean error: " + "; ".join(parts) + ".")
    return out


def comparison_table(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, ε): each method's mean error (and threat model), "infeasible" where no parameters
    met the limit. The compact table of the landing page."""
    s = one_row_per_method(summary)
    s["column"] = [m + _suffix(t) for m, t in zip(s["method"], s["threat_model"], strict=True)]
    s["cell"] = [
        (f"{e:.3f}" + ("" if f else " ‡")) if np.isfinite(e) else "infeasible"
        for e, f in zip(s["error_mean"], s["feasible"].astype(bool), strict=True)
    ]
    wide = s.pivot_table(index=["dataset", "eps", "delta_limit"], columns="column", values="cell", aggfunc="first")
    wide = wide.reset_index()
    wide.insert(0, "data set", wide.pop("dataset").map(_label))
    return wide.rename(columns={"eps": "ε", "delta_limit": "δ limit"})


def method_legend(names: Iterable[str]) -> str:
    """``"ddppm = D-DP-PM; ldp = LDP (classic Gaussian); ..."``: what the short method names stand for."""
    return "; ".join(f"``{n}`` = {_method_label(n)}" for n in dict.fromkeys(names))


def rst_table(table: pd.DataFrame) -> str:
    """``table`` as an reStructuredText list-table (rendered as HTML on the report's landing page)."""
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for i, row in enumerate([list(table.columns), *table.itertuples(index=False)]):
        for j, value in enumerate(row):
            text = _fmt(value) if i else str(value)
            lines.append(f"   {'* -' if j == 0 else '  -'} {text.replace('|', '/')}")
    return "\n".join(lines)


def _short_commit(commit: str | None) -> str | None:
    """First 12 hex digits, keeping the ``+dirty`` mark of uncommitted changes."""
    if not commit:
        return None
    return commit[:12] + ("+dirty" if commit.endswith("+dirty") else "")


def _suffix(threat_model: str) -> str:
    """`` [threat model]`` after a method's name, except for no privacy claim or one that holds under all."""
    return "" if threat_model in UNNAMED_THREAT_MODELS else f" [{threat_model}]"


def write_table_page(csv_path: str | Path, html_path: str | Path, columns: Sequence[str] | None = None) -> None:
    """The CSV table at ``csv_path`` as the HTML page the report shows (the report's view of a CSV only downloads
    it): ``<folder>/<name>`` as title, rows whose ``feasible`` is False marked. ``columns``: only these (those the
    table has), for a table too wide to read on a screen; the page names the full CSV."""
    table = pd.read_csv(csv_path)
    name = f"{Path(csv_path).parent.name}/{Path(csv_path).stem}"
    note = f"{Path(csv_path).name} as a table; every column is explained in docs/columns.md."
    if columns is not None:
        shown = [c for c in columns if c in table.columns]
        note = (f"{len(shown)} of the {table.shape[1]} columns of {Path(csv_path).name} (the answer's); the full "
                f"table is {Path(csv_path).as_posix()}, every column explained in docs/columns.md.")
        table = table[shown]
    flag = "feasible" if "feasible" in table.columns else None
    write_text_atomic(html_path, html_table(table, name, note, infeasible_column=flag))


def where_to_look(results: str, configfiles: Sequence[str | Path] = (), since: float | None = None) -> str:
    """What a finished run prints: where its verdict and findings are, and the one command that builds its HTML
    report (with the same ``--configfile`` options, so the report shows this run's results). With ``since`` (the
    run's start, seconds since the epoch) only the files this run wrote are named, and each data set's own answer
    (``common/datasets/<name>/``) that it wrote."""
    options = "".join(f" --configfile {Path(f).as_posix()}" for f in configfiles)

    def fresh(path: str | Path) -> bool:
        return since is None or (Path(path).exists() and Path(path).stat().st_mtime >= since)

    entries = [
        ("the verdict (one screen):", [f"{results}/report/landing.rst"]),
        ("every finding:", [f"{results}/report/findings.html"]),
        ("the tables:", [f"{results}/tables/summary.csv", f"{results}/common/which_method.csv"]),
    ]
    if not fresh(f"{results}/report/landing.rst"):  # no landing page this run: what it would have covered
        entries.append(("the common task's findings:", [f"{results}/common/findings.txt"]))
        entries += [(f"{path.parent.name}'s answer:", [str(path), str(path.with_name("findings.txt"))])
                    for path in sorted(Path(results, "common", "datasets").glob("*/answer.md"))]  # fmt: skip
    lines = ["Finished. Where to look:"]
    for label, paths in entries:
        if updated := [p for p in paths if fresh(p)]:
            lines.append(f"  {label:29s}{', '.join(updated)}")
    lines.append(f"  {'the HTML report:':29s}snakemake{options} --report {results}/report.html")
    return "\n".join(lines)


def provenance_table(paths: Iterable[str | Path], root: str | Path = ".") -> pd.DataFrame:
    """One row per Parquet output: its path, the ``config_hash`` of the config it was made from, the git
    commit and package versions that made it (from its metadata, :func:`ddppm.core.io.write_parquet`)."""
    rows = []
    for path in paths:
        _, meta = read_parquet(path)
        prov = meta.get("provenance", {})
        rows.append(
            {
                "file": str(Path(path).relative_to(root)) if Path(path).is_relative_to(root) else str(path),
                "config_hash": meta.get("config_hash"),
                "git_commit": _short_commit(prov.get("git_commit")),
                PACKAGE: prov.get(PACKAGE),
                "python": prov.get("python"),
                **{dist: prov.get(dist) for dist in RECORDED_DISTRIBUTIONS},
            }
        )
    return pd.DataFrame(rows)


def landing_page(
    findings: Sequence[str],
    comparison: pd.DataFrame,
    provenance: pd.DataFrame,
    threat_models: dict[str, dict[str, str]],
    run_settings: str,
    legend: str = "",
    extra_sections: Sequence[tuple[str, Sequence[str]]] = (),
) -> str:
    """The report's landing page (reStructuredText): findings first, then the compact comparison table,
    threat models, the other papers' experiments, and provenance."""
    commits = sorted({c for c in provenance.get("git_commit", pd.Series(dtype=str)).dropna()})
    commit_text = ", ".join(f"``{c}``" for c in commits) or "unknown"
    out = [
        "ddppm: differentially private PCA over many parties, reproduced",
        "=" * 64,
        "",
        "Reproduction of A. Campbell, A. Scaglione and S. Peisert, *Decentralized Differentially Private Power "
        "Method* (journal version, and its TPDP 2025 workshop version), with the private-PCA methods it is compared "
        "with. Every δ names its threat model: who observes (view), how δ is computed (accounting) and which "
        "neighbouring data set (adjacency).",
        "",
        "Findings",
        "--------",
        "",
        *[f"* {line}" for line in findings],
        "",
        "Journal Fig. 2 at a glance: mean error sin(v, q) (eq. 37; chance ≈ 1)",
        "-" * 70,
        "",
        rst_table(comparison),
        "",
        f'Columns: {legend}. [name] = threat model; "infeasible": no parameters met the δ limit; ‡: the '
        "method's σ formula does not meet the limit (the classic Gaussian mechanism for ε ≥ 1); its error is shown.",
        "",
        "Threat models",
        "-------------",
        "",
        *[
            f"* ``{name}``: view ``{tm['view']}``, accounting ``{tm['accounting']}``, adjacency ``{tm['adjacency']}``."
            for name, tm in threat_models.items()
        ],
        "",
        run_settings,
        "",
    ]
    for title, lines in extra_sections:
        out += [title, "-" * len(title), "", *[f"* {line}" for line in lines], ""]
    out += [
        "Provenance",
        "----------",
        "",
        f"The tables behind this page were made at git commit(s) {commit_text}. "
        "Each output file carries the hash of the configuration its job read (``config_hash``) and the versions "
        "that made it; the table *Provenance* (category Tables) lists them, and every figure prints its own in its "
        "footer.",
        "",
    ]
    return "\n".join(out)


LANDING_CSS = (
    # Snakemake's report centres the page in a scroll box (flex, align-items: center): a page taller than the
    # window spills upward, out of reach. Start it at the top, and put the workflow graph under the text, not
    # beside it, where its labels covered the text's last column on narrow screens.
    "div.grow.flex.items-center.justify-center.h-screen.overflow-auto"
    "{align-items:flex-start!important;justify-content:safe center!important}"
    "div.grow.flex.gap-3.p-3.items-start{flex-direction:column!important}"
    "div.prose.prose-sm.max-w-lg{max-width:64rem!important}"
)


def short_landing(verdict: pd.DataFrame, floor_sentence: str, run_settings: str) -> str:
    """The report's landing page (reStructuredText), short enough for one screen: the title, the journal verdict
    per claim and threat model, the floor, and where everything else is. (Snakemake's report centres the landing
    page vertically in its box: a long page spills upward out of reach, so the long findings get a page of
    their own, :func:`findings_page`.)"""
    if "claim" in verdict:  # "(a) …" at the start of a cell would be read as an enumerated list, renumbered "1."
        verdict = verdict.assign(claim=verdict["claim"].str.replace(r"^\(", r"\\(", regex=True))
    out = [
        "ddppm: differentially private PCA over many parties, reproduced",
        "=" * 64,
        "",
        ".. raw:: html",
        "",
        f"   <style>{LANDING_CSS}</style>",
        "",
        "Findings",
        "--------",
        "",
        "The journal D-DP-PM's claims under each threat model (view, accounting, adjacency; ``worst``: a searched "
        'neighbour, so its δ is "at least"):',
        "",
        rst_table(verdict),
        "",
        floor_sentence.replace("**", ""),
        "",
        "Every finding in full, with the other papers' experiments: category *Findings*. Figures: categories "
        "*Fig. 2*, *Fig. 3*, *frontier*, and each experiment's. Every table as a page, in its experiment's category "
        "(the journal's under *Tables*); the rule graph: category *Rule graph*. "
        + run_settings,
        "",
    ]
    return "\n".join(out)


def findings_page(rst: str) -> str:
    """A standalone HTML page of reStructuredText (the long findings, shown as a report item)."""
    from docutils.core import publish_string

    settings = {"embed_stylesheet": True, "report_level": 4, "halt_level": 5}
    return publish_string(rst, writer_name="html5", settings_overrides=settings).decode("utf-8")
