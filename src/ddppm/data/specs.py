"""One record per data set (:class:`DatasetSpec`), read from ``datasets.yaml`` beside this module.

Everything the project knows about a built-in data set is in its record: name, label, default shape, the source
papers whose figures use it, how to load it (a scikit-learn loader with its arguments, or a generator of
:mod:`ddppm.data.synthetic`), whether it stands in for private data, and its public bounds with their source
(docs/privacy.md, "What is public"). The tables the rest of the library reads (:data:`ddppm.data.DATASETS`,
``SHAPES``, ``LABELS``...) are derived from these records, so a new data set is one record (and, if synthetic,
its generator). A user's local file needs no record (``dataset_options.<name>``, source ``file``:
:mod:`ddppm.data.local_file`); a download can take a record's place (source ``url``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ddppm.core.errors import ConfigError
from ddppm.data import synthetic

SPECS_FILE = Path(__file__).with_name("datasets.yaml")
PAPERS = ("journal", "workshop")


@dataclass(frozen=True)
class DatasetSpec:
    """A built-in data set: ``name``, ``label`` (figures), ``shape`` (n, d of the default source), ``papers`` (the
    source papers whose figures use it), ``loader`` (``{"sklearn": name, "arguments": {...}}`` or
    ``{"generator": name}``), ``stand_in`` (non-empty: it stands in for private data) and ``public_bounds`` (the
    entry :func:`ddppm.data.public_prep.bounds_from_entry` reads: kind, source, features or all_features,
    optional row_norm) and ``oracle_bounds`` (the same form: the records' own published range, a statistic of the
    records that no user has before reading them; only the labelled setting ``oracle_bounds`` uses it)."""

    name: str
    label: str
    shape: tuple[int, int]
    papers: tuple[str, ...]
    loader: dict[str, Any]
    public_bounds: dict[str, Any] = field(default_factory=dict)
    stand_in: str = ""
    oracle_bounds: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        where = f"{SPECS_FILE.name}: {self.name}"
        if len(self.shape) != 2 or min(self.shape) < 1:
            raise ConfigError(f"{where}.shape: give [n, d] with n, d ≥ 1, got {list(self.shape)}")
        unknown = sorted(set(self.papers) - set(PAPERS))
        if unknown:
            raise ConfigError(f"{where}.papers: {unknown} are not source papers ({list(PAPERS)})")
        if ("sklearn" in self.loader) == ("generator" in self.loader):
            raise ConfigError(f"{where}.loader: give either `sklearn` (a loader name) or `generator`")
        if "generator" in self.loader and not callable(getattr(synthetic, self.loader["generator"], None)):
            raise ConfigError(f"{where}.loader.generator: ddppm.data.synthetic has no {self.loader['generator']!r}")

    @property
    def generator(self) -> Callable[..., np.ndarray] | None:
        """The generator of a synthetic set (None for a scikit-learn one)."""
        name = self.loader.get("generator")
        return getattr(synthetic, name) if name else None

    @property
    def sklearn_loader(self) -> str | None:
        return self.loader.get("sklearn")

    @property
    def sklearn_arguments(self) -> dict[str, Any]:
        return dict(self.loader.get("arguments", {}))


@cache
def dataset_specs() -> dict[str, DatasetSpec]:
    """Every built-in data set's record, by name, in the file's order."""
    # libyaml's parser when present (the same safe constructor, the same objects): every job reads this file
    records = yaml.load(SPECS_FILE.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return {
        name: DatasetSpec(name=name, label=r["label"], shape=tuple(r["shape"]), papers=tuple(r.get("papers", ())),
                          loader=dict(r["loader"]), public_bounds=dict(r.get("public_bounds") or {}),
                          stand_in=str(r.get("stand_in", "")),
                          oracle_bounds=dict(r.get("oracle_bounds") or {}))  # fmt: skip
        for name, r in records.items()
    }

