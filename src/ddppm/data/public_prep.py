"""Rows shaped by public inputs only: the end-to-end route from the raw records (docs/privacy.md, "What is public").

The pipeline's ``normalize`` (:mod:`ddppm.data.datasets`) standardises with the column means and standard deviations
of all rows and divides by the largest row norm: statistics of the private data, read without privacy, so replacing
one raw record moves every prepared row, and no (ε, δ) computed on the prepared rows covers a user's records. Here
the only inputs besides a row itself are **public**: per-feature bounds declared with their source
(``public_bounds.yaml`` beside this module, or ``dataset_options.<name>.public_bounds``) and n.

:func:`prepare_public` maps each raw record x to

    clip(x, lower, upper) → (x − c) / h → / √d,      c = (lower + upper)/2,  h = (upper − lower)/2,

so every coordinate lies in [−1, 1]/√d and every row in the unit ball, and row i is a function of raw record i
alone: one replaced record changes its own row and no other, bit for bit. Centring at the data's mean and scaling
by its standard deviations, where wanted, are Gaussian mechanisms with their own share of the budget (not here).
:func:`clipping` measures what the bounds cost before any noise.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ddppm.core.errors import ConfigError
from ddppm.core.metrics import subspace_distance

RAW_RECORDS, PREPARED_ROWS = "raw_records", "prepared_rows"
SCOPES = (RAW_RECORDS, PREPARED_ROWS)
"""What an (ε, δ) covers, the column ``scope`` of every summary: the raw records (only public inputs shaped the
rows), or the rows after a preprocessing that read the records without privacy (``normalize``)."""

BOUNDS_FILE = Path(__file__).with_name("public_bounds.yaml")
SOURCE_KINDS = ("documentation", "construction", "declared")


@dataclass(frozen=True, eq=False)
class PublicBounds:
    """Per-feature bounds ``lower ≤ x_j ≤ upper`` on a raw record, with their source (``kind``: one of
    :data:`SOURCE_KINDS`)."""

    lower: np.ndarray
    upper: np.ndarray
    kind: str
    source: str
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.lower.shape != self.upper.shape or self.lower.ndim != 1:
            raise ConfigError("public_bounds: lower and upper must be vectors of one length (one pair per feature)")
        finite = np.all(np.isfinite(self.lower)) and np.all(np.isfinite(self.upper))
        if not (finite and np.all(self.lower < self.upper)):
            raise ConfigError("public_bounds: every feature needs finite bounds with lower < upper")
        if self.kind not in SOURCE_KINDS:
            raise ConfigError(f"public_bounds.kind: {self.kind!r} is not one of {SOURCE_KINDS}")
        if not self.source.strip():
            raise ConfigError("public_bounds.source: say where the bounds come from (documentation, construction)")

    @property
    def d(self) -> int:
        return int(self.lower.size)


def declared_bounds_digest() -> str:
    """A digest of the declared bounds file: a job that reads the bounds records it, so editing them (data, not
    code) reruns it."""
    return hashlib.sha256(BOUNDS_FILE.read_bytes()).hexdigest()[:16]


@cache
def _declared() -> dict[str, Any]:
    return yaml.safe_load(BOUNDS_FILE.read_text(encoding="utf-8"))


def bounds_from_entry(entry: dict[str, Any], d: int, key: str) -> PublicBounds:
    """A :class:`PublicBounds` from a config-style entry: ``kind``, ``source`` and either ``features`` (one
    ``[lower, upper]`` per feature) or ``all_features`` (one pair for every feature). ``key`` names the entry in
    errors."""
    if "features" in entry:
        pairs = np.asarray(entry["features"], float)
        if pairs.shape != (d, 2):
            raise ConfigError(f"{key}.features: {pairs.shape[0]} pairs for {d} features; give one [lower, upper] each")
    elif "all_features" in entry:
        pairs = np.tile(np.asarray(entry["all_features"], float), (d, 1))
    else:
        raise ConfigError(f"{key}: give `features` (one [lower, upper] per feature) or `all_features`")
    try:
        return PublicBounds(pairs[:, 0], pairs[:, 1], str(entry.get("kind", "")), str(entry.get("source", "")).strip())
    except ConfigError as error:
        raise ConfigError(f"{key}: {error}") from None


def public_bounds(name: str, d: int, override: dict[str, Any] | None = None) -> PublicBounds:
    """The declared bounds of data set ``name`` (``d`` features): ``override`` (the config's
    ``dataset_options.<name>.public_bounds``) or the project's declaration (``public_bounds.yaml``).

    Raises
    ------
    ConfigError
        The data set has no declared bounds: it cannot run from the raw records.
    """
    key = f"dataset_options.{name}.public_bounds"
    if override:
        return bounds_from_entry(override, d, key)
    declared = _declared()
    if name not in declared:
        raise ConfigError(
            f"{key}: {name!r} has no public bounds, so it cannot run from the raw records; declare them there "
            "(kind, source, and `features` or `all_features`), e.g. from the data set's documentation"
        )
    return bounds_from_entry(declared[name], d, f"{BOUNDS_FILE.name}: {name}")


def prepare_public(X: np.ndarray, bounds: PublicBounds) -> np.ndarray:
    """Each raw record clipped to the bounds, centred at their midpoint, divided by their half-width and by √d:
    rows in the unit ball, row i a function of record i and the bounds only (module docstring)."""
    X = np.asarray(X, float)
    if X.ndim != 2 or X.shape[1] != bounds.d:
        raise ConfigError(f"public_bounds: {bounds.d} features declared, the data has shape {X.shape}")
    centre = (bounds.lower + bounds.upper) / 2
    half_width = (bounds.upper - bounds.lower) / 2
    return (np.clip(X, bounds.lower, bounds.upper) - centre) / half_width / np.sqrt(bounds.d)


@dataclass(frozen=True)
class Clipping:
    """What the bounds cost before any noise: ``values`` (share of values clipped), ``rows`` (share of records with
    a clipped value) and ``bias`` (per k: the subspace error, ‖V̂V̂ᵀ − VVᵀ‖_F/√(2k), between the top-k principal
    directions of the records standardised with their true statistics and those of the clipped records
    standardised with the same statistics: the error from clipping alone)."""

    values: float
    rows: float
    bias: dict[int, float]


def _top_k(Z: np.ndarray, k: int) -> np.ndarray:
    _, vectors = np.linalg.eigh(Z.T @ Z)
    return vectors[:, ::-1][:, :k]


def clipping(X: np.ndarray, bounds: PublicBounds, ranks: tuple[int, ...] = (1, 3)) -> Clipping:
    """Measure :class:`Clipping` for the raw records ``X`` (the non-private target: PCA of ``X`` standardised with
    its true column means and standard deviations)."""
    X = np.asarray(X, float)
    clipped = np.clip(X, bounds.lower, bounds.upper)
    moved = clipped != X
    mean, std = X.mean(axis=0), X.std(axis=0)
    std = np.where(std > 0, std, 1.0)  # a constant column carries no direction
    target, after = (X - mean) / std, (clipped - mean) / std
    ranks = tuple(k for k in ranks if k < X.shape[1])
    if not moved.any():  # the same matrix: no bias (not eigh's round-off)
        return Clipping(0.0, 0.0, dict.fromkeys(ranks, 0.0))
    # ‖V̂V̂ᵀ − VVᵀ‖_F/√(2k) = ‖sin Θ‖_F/√k, the common task's metric
    bias = {k: subspace_distance(_top_k(after, k), _top_k(target, k)) / np.sqrt(k) for k in ranks}
    return Clipping(float(moved.mean()), float(moved.any(axis=1).mean()), bias)
