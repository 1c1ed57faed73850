"""The common task's answer in words: the findings (a title line, then one sentence per line), the README's
"which method" table with intervals, ties and chance, and where the ranking changes between settings."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ddppm.common_task.raw_records import PREPROCESSING_ONLY
from ddppm.common_task.run import interval_outcome, reference_eps
from ddppm.common_task.settings import PREPARED, STANDARD
from ddppm.experiments.common_peers import peer_findings
from ddppm.privacy.threat_models import resolve

TRUST_COLUMNS = (("local", "no trusted party"), ("secure_aggregation", "secure aggregation"),
                 ("central", "a trusted curator"))  # fmt: skip
"""The "which method" table's columns, least trust first."""
WHICH_COLUMNS = ("setting", "dataset", "k", "eps", "trust_model", "best", "error_mean", "error_ci_lo", "error_ci_hi",
                 "competitive", "beats_chance")  # fmt: skip
"""The columns of ``which_method.csv`` the report's page shows (the answer's; the CSV has every column)."""


def _standard(table: pd.DataFrame | None, setting: str = STANDARD) -> pd.DataFrame | None:
    """The rows of one setting (tables written before settings existed are all standard)."""
    if table is None or "setting" not in table:
        return table
    return table[table["setting"] == setting]


def findings(
    which: pd.DataFrame,
    summary: pd.DataFrame,
    section: dict[str, Any],
    beside: pd.DataFrame | None = None,
    definitions: dict[str, dict[str, str]] | None = None,
) -> list[str]:
    """The answer in sentences with numbers: per data set and k, at ε = 5 (or the grid's middle), the best method
    for each trust level and what a trusted curator or secure aggregation buys over trusting no one (the standard
    setting); then what each second setting changes (:func:`second_setting_findings`)."""
    all_which, all_summary, all_beside = which, summary, beside
    which, summary, beside = _standard(which), _standard(summary), _standard(beside)
    share = section.get("preprocessing", {}).get("share", float("nan"))
    estimator = section.get("preprocessing", {}).get("estimator", "range_shrinking")
    lines = [
        "The common task: which private PCA method to use (every method on the same data, adjacency and δ)",
        f"Setting: from the raw records (scope raw_records: the (ε, δ) covers a user's records), δ = "
        f"{section['delta']:g}, adjacency {section['adjacency']}, {section['runs']} runs per point, power methods "
        f"with L = {section['iterations']}; rows prepared by declared public bounds, standardised privately with "
        f"{share:g} of μ² where the analyst standardises (estimator {estimator}); error = ‖V̂V̂ᵀ − VVᵀ‖_F/√(2k) "
        "against the PCA of the records standardised with their true statistics.",
    ]
    eps = reference_eps(which["eps"]) if len(which) else float("nan")  # a run may have no standard rows
    for (dataset, k), group in which[which["eps"] == eps].groupby(["dataset", "k"], sort=False):
        best = group.set_index("trust_model")
        parts = [_answer_words(best.loc[trust], text) for trust, text in TRUST_COLUMNS if trust in best.index]
        at = summary[(summary["dataset"] == dataset) & (summary["k"] == k)]
        chance = float(at["chance_error"].iloc[0]) if len(at) else float("nan")
        alone = at[(at["eps"] == eps) & at["method"].str.startswith(PREPROCESSING_ONLY)]
        floor = "; ".join(f"{row['method'].removeprefix(PREPROCESSING_ONLY + '_')} {row['error_mean']:.3f}"
                          for _, row in alone.iterrows())  # fmt: skip
        floor = f"; private standardisation alone: {floor}" if floor else ""
        lines.append(f"{dataset}, k = {k}, ε = {eps:g}: " + "; ".join(parts) + f" (chance level {chance:.2f}{floor}).")
    prepared_beside = _standard(all_beside, PREPARED)  # the floors and searched variants are on the prepared rows
    if prepared_beside is not None and "no_parameters_meet_limit" in prepared_beside:
        floors = prepared_beside[prepared_beside["no_parameters_meet_limit"].fillna(False).astype(bool)]
        for label, group in floors.groupby("label", sort=False):
            # A floor is non-increasing in ε: exceeded at the largest such ε, it is exceeded at every smaller one.
            parts = []
            for dataset, rows in group.groupby("dataset", sort=True):
                top = rows.loc[rows["eps"].idxmax()]
                parts.append(f"{dataset} at any ε ≤ {top['eps']:g} (δ at least {top['delta']:.2g} there)")
            lines.append(
                f"Not certified, {label} (prepared rows): no parameter choice meets δ = {section['delta']:g} on "
                + "; ".join(parts)
                + " (hockey-stick δ, Definition 1, exact tail, at the worst neighbour a search found: a lower bound)."
            )
    searched = searched_findings(prepared_beside, section, definitions)
    claims = claim_findings(all_summary, section.get("claims", {}))
    return (lines + claims + ranking_changes(all_which) + searched + peer_findings(all_summary)
            + second_setting_findings(all_which, all_summary, all_beside))  # fmt: skip


def claim_table(summary: pd.DataFrame, claims: dict[str, Any]) -> pd.DataFrame:
    """Each claimed method against each method it claims to beat, at every (data set, k, ε) of the standard
    setting where both ran feasibly: ``better`` when the claimant's 95 % interval lies below the other's, ``worse``
    when above, else ``tied``; ``ratio`` = the claimant's mean error over the other's."""
    standard = _standard(summary)
    rows = []
    for method, claim in claims.items():
        mine = standard[(standard["method"] == method) & standard["feasible"].astype(bool)]
        for other in claim["against"]:
            theirs = standard[(standard["method"] == other) & standard["feasible"].astype(bool)]
            paired = mine.merge(theirs, on=["dataset", "k", "eps"], suffixes=("", "_other"))
            for row in paired.itertuples():
                outcome = interval_outcome(row.error_ci_lo, row.error_ci_hi, row.error_ci_lo_other,
                                           row.error_ci_hi_other)  # fmt: skip
                rows.append({"method": method, "claim": claim["claim"], "against": other, "dataset": row.dataset,
                             "k": row.k, "eps": row.eps, "error": row.error_mean,
                             "error_other": row.error_mean_other, "ratio": row.error_mean / row.error_mean_other,
                             "outcome": outcome})  # fmt: skip
    return pd.DataFrame(rows)


def claim_findings(summary: pd.DataFrame, claims: dict[str, Any]) -> list[str]:
    """Each claim's verdict against each method, with numbers: holds (never worse, better somewhere), does not hold
    (never better, worse somewhere), mixed, or not resolved (tied everywhere)."""
    table = claim_table(summary, claims)
    lines: list[str] = []
    if table.empty:
        return lines
    for (method, claim), rows in table.groupby(["method", "claim"], sort=False):
        parts = []
        for other, group in rows.groupby("against", sort=False):
            counts = group["outcome"].value_counts()
            better, worse = int(counts.get("better", 0)), int(counts.get("worse", 0))
            verdict = ("holds" if better and not worse else "does not hold" if worse and not better
                       else "mixed" if worse else "not resolved")  # fmt: skip
            parts.append(f"against {other}: {verdict} (better at {better}, tied at "
                         f"{int(counts.get('tied', 0))}, worse at {worse} of {len(group)} (data set, k, ε) points; "
                         f"median error ratio {group['ratio'].median():.2f})")  # fmt: skip
        lines.append(f"Claim of {method}, '{claim}' (standard setting, 95 % intervals): " + "; ".join(parts) + ".")
    return lines


def ranking_changes(which: pd.DataFrame) -> list[str]:
    """Where the answer from the raw records differs from the prepared rows' (setting ``prepared_rows``), at the
    reference ε, per data set, k and trust level: the best method of each, with its error."""
    if "setting" not in which or PREPARED not in set(which["setting"]):
        return []
    keys = ["dataset", "k", "eps", "trust_model"]
    raw = which[which["setting"] == STANDARD].set_index(keys)
    prepared = which[which["setting"] == PREPARED].set_index(keys)
    shared = raw.index.intersection(prepared.index)
    if shared.empty:  # no point of the grid in both settings: nothing to compare, no sentence
        return []
    eps = reference_eps(shared.get_level_values("eps"))
    changed, same = [], 0
    for key in shared:
        if key[2] != eps:
            continue
        a, b = raw.loc[key], prepared.loc[key]
        if a["best"] == b["best"]:
            same += 1
            continue
        changed.append(f"{key[0]} k = {key[1]} ({dict(TRUST_COLUMNS)[key[3]]}): {a['best']} {a['error_mean']:.3f} "
                       f"from the raw records, {b['best']} {b['error_mean']:.3f} on the prepared rows")  # fmt: skip
    head = (f"Ranking from the raw records against the prepared rows (setting prepared_rows, whose preprocessing is "
            f"not covered), at ε = {eps:g}: the best method is the same at {same} of {same + len(changed)} "
            "(data set, k, trust level) points")  # fmt: skip
    return [head + (": it changes at " + "; ".join(changed) + "." if changed else ".")]


def searched_findings(
    beside: pd.DataFrame | None, section: dict[str, Any], definitions: dict[str, dict[str, str]] | None = None
) -> list[str]:
    """One sentence per (method, data set) calibrated under a searched threat model (``common.searched``): where a
    choice met the limit for every neighbour the search found, and its error and searched δ at the reference ε,
    naming the threat model (view, accounting, adjacency; ``definitions``: the config's ``threat_models``) and
    the δ's definition."""
    if beside is None or "feasible" not in beside:
        return []
    name = section.get("searched", {}).get("threat_model", "sound")
    model = resolve(name, definitions, "common.searched.threat_model")
    under = (f"under `{name}` (view {model.view}, {model.accounting} accounting, {model.adjacency} neighbour; "
             "hockey-stick δ, Definition 1)")  # fmt: skip
    rows = beside[beside["feasible"].notna()]  # the floors' rows (no calibration) have none
    lines = []
    for (label, dataset), group in rows.groupby(["label", "dataset"], sort=False):
        met = group[group["feasible"].astype(bool)]
        if met.empty:
            lines.append(f"Searched, not certified: {label} on {dataset} meets δ = {section['delta']:g} {under} at "
                         "no ε of the grid, even for the neighbours its search found.")  # fmt: skip
            continue
        eps = reference_eps(group["eps"])
        at = met[met["eps"] == eps]
        quote = (f"; at ε = {eps:g} error {at['error_mean'].iloc[0]:.3f}, δ at least {at['delta'].iloc[0]:.2g} "
                 "(the worst neighbour found)") if len(at) else ""  # fmt: skip
        missing = sorted(set(group["eps"]) - set(met["eps"]))
        lines.append(
            f"Searched, not certified: {label} on {dataset} meets δ = {section['delta']:g} {under} for every "
            f"neighbour its search found at ε ∈ {{{', '.join(f'{e:g}' for e in sorted(met['eps']))}}}{quote}"
            + (f"; no choice found at ε ∈ {{{', '.join(f'{e:g}' for e in missing)}}}" if missing else "")
            + " (a lower bound on δ: listed beside the table, never in it)."
        )
    return lines


def second_setting_findings(
    which: pd.DataFrame, summary: pd.DataFrame, beside: pd.DataFrame | None = None
) -> list[str]:
    """Per second setting and data set (k = 1): the best method with no trusted party at ε = 5 (or the middle
    of the setting's grid) against the standard setting's at the same ε, the points where each trust level has
    a certified method within the limit, and the points no parameter choice of a not-certified method meets."""
    if "setting" not in which:
        return []
    lines = []
    standard = which[(which["setting"] == STANDARD) & (which["k"] == 1)].set_index(["dataset", "eps", "trust_model"])
    for setting in [s for s in dict.fromkeys(summary["setting"]) if s != STANDARD]:
        at = which[(which["setting"] == setting) & (which["k"] == 1)]
        points = summary[(summary["setting"] == setting) & (summary["k"] == 1)]
        for dataset, group in at.groupby("dataset", sort=True):
            n_points = points[points["dataset"] == dataset]["eps"].nunique()
            eps = reference_eps(group["eps"])
            row = group[(group["eps"] == eps) & (group["trust_model"] == "local")]
            parts = []
            if len(row):
                row = row.iloc[0]
                text = f"at ε = {eps:g} (δ ≤ {row['delta_limit']:.2g}) " + _answer_words(row, "no trusted party")
                key = (dataset, eps, "local")
                if key in standard.index:
                    text += f" [standard setting: {standard.loc[key, 'best']} {standard.loc[key, 'error_mean']:.3f}]"
                parts.append(text)
            met = group.groupby("trust_model")["eps"].nunique()
            parts.append(
                "a certified method meets the limit at "
                + ", ".join(f"{met.get(t, 0)} of {n_points} points with {text}" for t, text in TRUST_COLUMNS)
            )
            if beside is not None and "no_parameters_meet_limit" in beside:
                mine = beside[(beside["setting"] == setting) & (beside["dataset"] == dataset)]
                for label, rows in mine.groupby("label", sort=False):
                    excluded = rows["no_parameters_meet_limit"].fillna(False).astype(bool)
                    if "no_parameters_meet_limit" in rows and rows["no_parameters_meet_limit"].notna().any():
                        parts.append(
                            f"{label}: no parameter choice meets the limit at {int(excluded.sum())} of "
                            f"{len(rows)} points (searched floor, a lower bound)"
                        )
            lines.append(f"Setting {setting}, {dataset}, k = 1: " + "; ".join(parts) + ".")
    return lines


def _answer_kind(row: pd.Series) -> str:
    """What the table says at one (point, trust level): ``chance`` (no method beats chance), ``tie`` (the
    competitive set has more than one member) or ``best``. Both the table and the findings read it."""
    if "beats_chance" in row and pd.notna(row["beats_chance"]) and not bool(row["beats_chance"]):
        return "chance"
    if "tie" in row and pd.notna(row["tie"]) and bool(row["tie"]):
        return "tie"
    return "best"


def _answer_words(row: pd.Series, trust_text: str) -> str:
    """The findings' words for one (point, trust level): the table's answer (:func:`_answer_kind`), never a
    recommendation where no method beats chance or where the competitive set is a tie."""
    kind, error = _answer_kind(row), f"error {row['error_mean']:.3f}"
    if kind == "chance":
        return f"with {trust_text} no method beats chance (best {row['best']}, {error})"
    if kind == "tie":
        members = " or ".join(str(row["competitive"]).split(";"))
        return f"with {trust_text} {members}, tied within noise (best {row['best']}, {error})"
    return f"with {trust_text} use {row['best']} ({error})"


def _answer_cell(row: pd.Series) -> str:
    """One cell of the "which method" table: the best method with its mean error and 95 % interval, the tied
    methods where the competitive set has more than one member, or that no method beats chance."""
    interval = f"{row['error_mean']:.3f} [{row['error_ci_lo']:.3f}, {row['error_ci_hi']:.3f}]"
    kind = _answer_kind(row)
    if kind == "chance":
        return f"no method beats chance (best `{row['best']}` {interval})"
    if kind == "tie":
        return "tie: " + ", ".join(f"`{m}`" for m in str(row["competitive"]).split(";")) + f" ({interval})"
    return f"`{row['best']}` {interval}"


def which_method_markdown(which: pd.DataFrame, summary: pd.DataFrame, k: int = 1, eps: float = 5.0) -> str:
    """The answer as one Markdown table (the README's): per data set and trust level at (k, ε), the best certified
    method with its mean error and 95 % interval, ties within noise, or "no method beats chance" (the competitive
    set, :func:`ddppm.common_task.run.which_method`), with the chance level and a line on how many draws the
    answer rests on. ``k``/``ε`` fall back to the smallest rank and the grid's middle when the run has no such
    point. The standard setting's rows only."""
    which, summary = _standard(which), _standard(summary)
    ranks = sorted(set(which["k"]))
    k = k if k in ranks else ranks[0]
    eps = reference_eps(which["eps"], eps)
    chance = summary[summary["k"] == k].groupby("dataset")["chance_error"].first()
    lines = [
        f"| data set (k = {k}, ε = {eps:g}) | " + " | ".join(text for _, text in TRUST_COLUMNS) + " | chance |",
        "|---" * (len(TRUST_COLUMNS) + 2) + "|",
    ]
    at = which[(which["k"] == k) & (which["eps"] == eps)]
    for dataset, group in at.groupby("dataset", sort=True):
        best = group.set_index("trust_model")
        cells = [_answer_cell(best.loc[t]) if t in best.index else "–" for t, _ in TRUST_COLUMNS]
        lines.append(f"| {dataset} | " + " | ".join(cells) + f" | {chance.get(dataset, float('nan')):.2f} |")
    if "units" in at and at["units"].notna().any():
        units = at["units"].dropna().astype(int)
        added = at[at["units"] > units.min()]
        where = "; ".join(f"{r.dataset} ({r.trust_model}): {int(r.units)} draws, "
                          + ("a tie at the cap" if bool(r.tie) else "separated")
                          for r in added.itertuples())  # fmt: skip
        lines += ["", f"Mean error [95 % interval, Student's t over at least {units.min()} independent units: "
                  "preprocessing draws, or runs where the analyst does not standardise; cut to the error's range "
                  "[0, 1]]. A tie lists the methods "
                  "not significantly worse than the best (paired 95 % intervals); \"no method beats chance\" where "
                  "the best's mean squared error is not significantly below 1 − k/d. Where a tie remained, draws "
                  "were added until it separated or a cap: "
                  + (where or "none needed more") + "."]  # fmt: skip
    return "\n".join(lines)


def dataset_answers(tables: dict[str, pd.DataFrame], config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per data set of ``common.datasets``, its own answer (``results/common/datasets/<name>/``, kept when a later
    run names other data sets): its findings (:func:`findings` on its rows alone), its "which method" table in
    Markdown (:func:`which_method_markdown`) and its rows of ``which_method.csv`` (a data set where no certified
    method met the limit says so)."""
    which, summary, beside = tables["which_method"], tables["summary"], tables.get("not_certified")
    out = {}
    for dataset in config["common"]["datasets"]:
        mine = which[which["dataset"] == dataset] if "dataset" in which else which
        own = summary[summary["dataset"] == dataset]
        theirs = beside[beside["dataset"] == dataset] if beside is not None and "dataset" in beside else None
        standard = _standard(mine)
        if standard is None or standard.empty:
            none = f"{dataset}: no certified method met the limit at any point of the standard setting."
            out[dataset] = {"findings": [none], "answer": none, "which_method": mine}
            continue
        lines = findings(mine, own, config["common"], theirs, config.get("threat_models"))
        out[dataset] = {"findings": lines, "answer": which_method_markdown(mine, own), "which_method": mine}
    return out


def readme_summary(which: pd.DataFrame, summary: pd.DataFrame) -> str:
    """The README's block: :func:`which_method_markdown` and the sentence saying where the best method differs
    on the prepared rows (:func:`ranking_changes`)."""
    return "\n\n".join([which_method_markdown(which, summary), *ranking_changes(which)])
