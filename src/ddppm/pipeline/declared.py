"""What each rule file and each experiment adds to the workflow's shared inputs, declared once and read lazily.

The default target, the report's provenance table and landing page, Fig. 2's floors, the common task's summary and
the calibration-frontier figure gather files that other rule files make. Each contributor (the journal's generic
rules, a calibrated method's rule file, an experiment of the registry, an experiment's rule file) states its
files once, in one :meth:`Declared.declare` call under its own name (its *owner*), and the consumers read them
only through :meth:`Declared.collect` and :meth:`Declared.fig2_floors` inside input functions or at ``rule all``,
after every rule file has been parsed. What a consumer reads follows the owners' order fixed when the registry
is made (journal, methods, experiments as ``config.yaml`` lists them), never the order in which the rule files
are included or declare: moving an ``include:`` changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

LIST_KINDS = (
    "targets",
    "provenance",
    "findings",
    "verdict",
    "common_lower_bounds",
    "common_searched_runs",
    "frontier_references",
    "all_studies",
)
"""The kinds of contribution that are lists of paths:

* ``targets``: figures and tables of the default target (``rule all``);
* ``provenance``: Parquet files whose provenance the report's table lists;
* ``findings``: findings files (a title line, then one sentence per line) of the report's landing page;
* ``verdict``: what the landing page's verdict reads (config ``verdict``);
* ``common_lower_bounds``: lower-bound tables on a method's δ beside the common task's table;
* ``common_searched_runs``: runs (the common task's runs format) calibrated under a searched threat model;
* ``frontier_references``: reference curves the journal method's calibration-frontier figure draws;
* ``all_studies``: targets of a study outside the default run that ``snakemake all_studies`` also builds."""

KINDS = (*LIST_KINDS, "fig2_floors")
"""Every kind; ``fig2_floors`` maps a data set to the δ-floor tables Fig. 2 draws on its panel."""


@dataclass(frozen=True)
class Declaration:
    """One owner's contributions, by kind (paths; ``fig2_floors`` by data set)."""

    owner: str
    lists: dict[str, tuple[str, ...]] = field(default_factory=dict)
    fig2_floors: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _paths(owner: str, kind: str, value: Iterable[str]) -> tuple[str, ...]:
    # A bare string would be iterated letter by letter: the one mistake a list argument invites.
    paths = (value,) if isinstance(value, str) else tuple(value)
    if isinstance(value, str) or not all(isinstance(path, str) for path in paths):
        raise TypeError(f"{owner}: {kind} must be a list of paths, got {value!r}")
    return paths


class Declared:
    """The registry of contributions of one workflow run.

    Parameters
    ----------
    owners
        Everyone who may declare, in the order consumers read their files (a declaration under any other name is
        an error: it would be read by no one).
    """

    def __init__(self, owners: Iterable[str]) -> None:
        self.owners = tuple(owners)
        if len(set(self.owners)) != len(self.owners):
            raise ValueError(f"owners listed twice: {self.owners}")
        self._declared: dict[str, Declaration] = {}

    def declare(self, owner: str, **contributions: Iterable[str] | Mapping[str, Iterable[str]]) -> Declaration:
        """Record everything ``owner`` contributes, by kind (:data:`KINDS`); once per owner.

        Raises
        ------
        ValueError
            ``owner`` is not one of :attr:`owners`, or has declared already (two declarations would make the
            result depend on which is read: state everything in one).
        TypeError
            An unknown kind, or a value that is not a list of paths (``fig2_floors``: a mapping to lists).
        """
        if owner not in self.owners:
            raise ValueError(f"{owner!r} declares contributions but is not an owner of this run: {self.owners}")
        if owner in self._declared:
            raise ValueError(f"{owner!r} declared its contributions twice: state them all in one declare()")
        unknown = sorted(set(contributions) - set(KINDS))
        if unknown:
            raise TypeError(f"{owner}: unknown kinds {unknown}; the kinds are {KINDS}")
        floors = contributions.pop("fig2_floors", {})
        if not isinstance(floors, Mapping):
            raise TypeError(f"{owner}: fig2_floors maps a data set to its floor tables, got {floors!r}")
        declaration = Declaration(
            owner,
            {kind: _paths(owner, kind, value) for kind, value in contributions.items()},  # type: ignore[arg-type]
            {dataset: _paths(owner, f"fig2_floors[{dataset}]", paths) for dataset, paths in floors.items()},
        )
        self._declared[owner] = declaration
        return declaration

    def _in_order(self) -> list[Declaration]:
        return [self._declared[owner] for owner in self.owners if owner in self._declared]

    def collect(self, kind: str) -> list[str]:
        """Every path of ``kind`` (one of :data:`LIST_KINDS`), owner by owner in the owners' order."""
        if kind not in LIST_KINDS:
            raise KeyError(f"unknown kind {kind!r}; the list kinds are {LIST_KINDS}")
        return [path for declaration in self._in_order() for path in declaration.lists.get(kind, ())]

    def fig2_floors(self, dataset: str) -> list[str]:
        """The δ-floor tables Fig. 2 draws on ``dataset``'s panel (none if no owner declares any)."""
        return [path for declaration in self._in_order() for path in declaration.fig2_floors.get(dataset, ())]
