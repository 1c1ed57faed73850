"""The common task's privacy settings: the standard one and the second settings run beside it.

A setting fixes the adjacency and, per data set, the (ε, δ limit) points every method is calibrated to:

* ``standard``: **from the raw records** (scope ``raw_records``, :mod:`ddppm.common_task.raw_records`): public
  preparation by declared bounds, private standardisation with ``common.preprocessing.share`` of the budget,
  then the method; the grid ``common.epsilons`` at the one limit ``common.delta`` (10⁻⁵ by default, below 1/n
  for every data set), adjacency ``common.adjacency`` (of raw records), on every data set of
  ``common.datasets``; error against the PCA of the truly standardised records. The "which method" answer of
  the README is this setting's.
* ``prepared_rows``: the same points on the rows the pipeline's ``normalize`` prepares (it reads every record
  without privacy, so the (ε, δ) covers those rows, not the records), error against their own PCA: what the
  methods cost when preprocessing is free. Its random draws are the unlabelled stream (``draws="standard"``, the
  standard setting's before the end-to-end one existed), so its numbers are those of earlier runs.
* ``distance_one``: the prepared rows' points under the other adjacency, the journal's ``‖x − x′‖ ≤ 1``
  (smaller sensitivities, :mod:`ddppm.common_task.adjacency`): what the weaker neighbour notion buys. It is
  ``prepared_rows``' twin (it reuses its random draws, so the comparison is paired), so it is refused when
  ``common.adjacency`` already is ``distance_one``.
* ``oracle_bounds``: the standard setting (from the raw records, the same points, preprocessing and random draws,
  so the comparison is paired) with bounds no user has: each record's range as its documentation publishes it, the
  Min and Max of those very records (``oracle_bounds`` in ``datasets.yaml``), on the data sets that have one. The
  gap to the standard setting is the price of not knowing the data's exact range (docs/bounds.md). Scope
  ``raw_records``, but the bounds are statistics of the records read without privacy: labelled, never the answer.
* ``journal_delta_limits``: the journal's own points, the top-level ``epsilons`` with ``delta_limits.<name>``
  (one limit per ε, §IV-B of the journal paper), on the data sets that have limits; adjacency
  ``common.adjacency``. These limits are far looser than 10⁻⁵ at small ε (0.38 at ε = 1), which is where a
  method whose δ has a data-dependent floor could still meet one (prepared rows: the journal's preprocessing).

A second setting with no data set to run on (a user's own file alone has neither journal limits nor a published
range) is skipped, and :func:`setting_notes` says so once before any job.

Which second settings run is ``common.settings``.

Every setting names its **scope**, what its (ε, δ) covers (:data:`ddppm.data.public_prep.SCOPES`):
``raw_records`` (the records themselves: only public inputs shape rows outside a mechanism; the standard
setting) or ``prepared_rows`` (the rows after the pipeline's preprocessing, which reads every record without
privacy: docs/privacy.md, "What is public"; every second setting).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ddppm.core.errors import ConfigError
from ddppm.data.public_prep import PREPARED_ROWS, RAW_RECORDS
from ddppm.data.specs import dataset_specs

STANDARD = "standard"
PREPARED = "prepared_rows"
"""Today's rows before the end-to-end setting: the pipeline's normalised rows (scope ``prepared_rows``)."""
ORACLE = "oracle_bounds"
"""The standard setting with the records' own published range as bounds (labelled; never the answer)."""
SECOND_SETTINGS = (PREPARED, "distance_one", ORACLE, "journal_delta_limits")
SETTING_TITLES = {
    STANDARD: "from the raw records (private standardisation), δ = {delta:g}, adjacency {adjacency}",
    PREPARED: "prepared rows (preprocessing not covered), δ = {delta:g}, adjacency {adjacency}",
    "distance_one": "prepared rows, δ = {delta:g}, adjacency distance_one (the journal's ‖x − x′‖ ≤ 1)",
    ORACLE: "from the raw records with oracle bounds (the records' own published range), δ = {delta:g}, adjacency "
    "{adjacency}",
    "journal_delta_limits": "prepared rows, the journal's δ limits (one per ε), adjacency {adjacency}",
}


@dataclass(frozen=True)
class Setting:
    """One privacy setting of the common task: its ``name``, ``adjacency`` and, per data set it runs on, the
    ``(ε, δ limit)`` points (``points[dataset]``)."""

    name: str
    adjacency: str
    points: dict[str, tuple[tuple[float, float], ...]]
    draws: str = ""
    """The stream whose random draws this one reuses (``standard``, the unlabelled stream, for ``prepared_rows``
    and ``distance_one``: same points, only σ changes between them, so the comparison is paired run for run);
    empty: its own."""
    scope: str = PREPARED_ROWS
    """What its (ε, δ) covers (:data:`ddppm.data.public_prep.SCOPES`)."""

    @property
    def datasets(self) -> list[str]:
        return list(self.points)

    def title(self, delta: float) -> str:
        """How figures and tables name the setting."""
        return SETTING_TITLES[self.name].format(delta=delta, adjacency=self.adjacency)


def setting_names(section: dict[str, Any]) -> list[str]:
    """``standard`` first, then the second settings of ``common.settings`` in their order."""
    return [STANDARD, *section.get("settings", [])]


def common_setting(name: str, config: dict[str, Any]) -> Setting:
    """The setting ``name`` of the validated config (its ``common`` section, and for ``journal_delta_limits`` the
    top-level ``epsilons`` and ``delta_limits``). Raises :class:`ConfigError` naming the key to fix."""
    section = config["common"]
    datasets = list(section["datasets"])
    if name in (STANDARD, PREPARED, ORACLE, "distance_one"):
        standard = tuple((float(e), float(section["delta"])) for e in section["epsilons"])
        if name == STANDARD:
            return Setting(STANDARD, section["adjacency"], {ds: standard for ds in datasets}, scope=RAW_RECORDS)
        if name == PREPARED:
            return Setting(PREPARED, section["adjacency"], {ds: standard for ds in datasets}, draws=STANDARD)
        if name == ORACLE:
            with_oracle = [ds for ds in datasets if oracle_bounds_entry(ds, config) is not None]
            return Setting(ORACLE, section["adjacency"], {ds: standard for ds in with_oracle}, scope=RAW_RECORDS)
        if section["adjacency"] == "distance_one":
            raise ConfigError(
                "common.settings: `distance_one` repeats the standard setting (common.adjacency is distance_one); "
                "remove it from common.settings or set common.adjacency: replace_one"
            )
        return Setting(name, "distance_one", {ds: standard for ds in datasets}, draws=STANDARD)
    if name == "journal_delta_limits":
        limits = config.get("delta_limits", {})
        epsilons = [float(e) for e in config.get("epsilons", [])]
        points = {}
        for ds in (ds for ds in datasets if ds in limits):
            if len(limits[ds]) != len(epsilons):
                raise ConfigError(
                    f"delta_limits.{ds} has {len(limits[ds])} values but epsilons has {len(epsilons)}; give one per ε "
                    "(the setting journal_delta_limits of common.settings pairs them)"
                )
            points[ds] = tuple(zip(epsilons, (float(x) for x in limits[ds]), strict=True))
        return Setting(name, section["adjacency"], points)  # none with limits: skipped (setting_notes)
    raise ConfigError(f"common.settings: unknown setting {name!r}; use some of {list(SECOND_SETTINGS)}")


def setting_notes(config: dict[str, Any]) -> list[str]:
    """One sentence per second setting of ``common.settings`` that runs on no data set of ``common.datasets``
    (none has the journal's limits, or a published range): it is skipped, not an error, so a user's own data set
    runs alone with the default settings."""
    needs = {"journal_delta_limits": "limits under `delta_limits` (the journal's δ limits)",
             ORACLE: "a published range of its records (`oracle_bounds` in datasets.yaml)"}  # fmt: skip
    return [f"common.settings: `{name}` is skipped: no data set of common.datasets "
            f"({', '.join(config['common']['datasets'])}) has {needs[name]}"
            for name, setting in common_settings(config).items() if name in needs and not setting.datasets]  # fmt: skip


def common_settings(config: dict[str, Any]) -> dict[str, Setting]:
    """Every setting the config runs, by name, ``standard`` first (checks each one)."""
    return {name: common_setting(name, config) for name in setting_names(config["common"])}


def setting_config_keys(name: str) -> tuple[str, ...]:
    """The config keys a job of setting ``name`` reads besides the section's method keys (so that changing the
    journal's limits reruns only that setting's jobs, and the preprocessing only the standard's)."""
    if name == "journal_delta_limits":
        return ("common.datasets", "common.adjacency", "epsilons", "delta_limits")
    keys = ("common.datasets", "common.adjacency", "common.epsilons", "common.delta")
    return (*keys, "common.preprocessing") if name in (STANDARD, ORACLE) else keys


def oracle_bounds_entry(dataset: str, config: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The oracle bounds of ``dataset`` (its record's ``oracle_bounds`` in ``datasets.yaml``), or None; a data
    set whose ``dataset_options.<name>.source`` is not its default has none (another file, other records)."""
    options = ((config or {}).get("dataset_options") or {}).get(dataset) or {}
    if options.get("source", "default") != "default":
        return None
    spec = dataset_specs().get(dataset)
    return dict(spec.oracle_bounds) if spec is not None and spec.oracle_bounds else None


def task_options(section: dict[str, Any], adjacency: str | None = None) -> dict[str, Any]:
    """What the common-task methods read of the section ``common`` (``adjacency``: a setting's, else the
    section's)."""
    return {"adjacency": adjacency or section["adjacency"], "iterations": int(section["iterations"])}
