"""Rows shaped by public inputs only: the end-to-end route from the raw records (docs/privacy.md, "What is public").

The pipeline's ``normalize`` (:mod:`ddppm.data.datasets`) standardises with the column means and standard deviations
of all rows and divides by the largest row norm: statistics of the private data, read without privacy, so replacing
one raw record moves every prepared row, and no (ε, δ) computed on the prepared rows covers a user's records. Here
the only inputs besides a row itself are **public**: per-feature bounds declared with their source
(each data set's record in ``datasets.yaml``, :mod:`ddppm.data.specs`, or ``dataset_options.<name>.public_bounds``)
and n.

:func:`prepare_public` maps each raw record x to

    clip(x, lower, upper) → (x − c) / h → / √d,      c = (lower + upper)/2,  h = (upper − lower)/2,

for a data set the analyst standardises (``normalization: standardize``), so every coordinate lies in [−1, 1]/√d
and every row in the unit ball; for one the analyst only rescales (``normalization: scale``: its directions are
those of the raw second moment, so no shift and no per-feature scaling), ``clip(x, lower, upper) / R`` with R the
declared row-norm bound (``row_norm``, rows beyond it clipped to norm 1) or the norm of the box's farthest corner.
Row i is a function of raw record i alone: one replaced record changes its own row and no other, bit for bit.
Centring at the data's mean and scaling by its standard deviations are Gaussian mechanisms with their own share
of the budget (:mod:`ddppm.common_task.preprocessing`). :func:`reference_rows` is what a non-private analyst computes
(the target), :func:`clipping` what the bounds cost before any noise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ddppm.core.arrays import clip_columns
from ddppm.core.errors import ConfigError
from ddppm.core.metrics import subspace_distance
from ddppm.data.specs import SPECS_FILE, dataset_specs

RAW_RECORDS, PREPARED_ROWS = "raw_records", "prepared_rows"
SCOPES = (RAW_RECORDS, PREPARED_ROWS)
"""What an (ε, δ) covers, the column ``scope`` of every summary: the raw records (only public inputs shaped the
rows), or the rows after a preprocessing that read the records without privacy (``normalize``)."""

BOUNDS_FILE = SPECS_FILE
"""Where the declared bounds live: each data set's record (``public_bounds``)."""
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
    row_norm: float | None = None
    """A declared bound on a raw record's norm (optional; used where the analyst only rescales)."""

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
        if self.row_norm is not None and not (np.isfinite(self.row_norm) and self.row_norm > 0):
            raise ConfigError(f"public_bounds.row_norm: {self.row_norm!r} must be a positive number")

    @property
    def d(self) -> int:
        return int(self.lower.size)

    @property
    def row_scale(self) -> float:
        """R of the route without centring: the declared row-norm bound, or the norm of the box's farthest corner."""
        if self.row_norm is not None:
            return float(self.row_norm)
        return float(np.linalg.norm(np.maximum(np.abs(self.lower), np.abs(self.upper))))


def _declared() -> dict[str, Any]:
    return {name: spec.public_bounds for name, spec in dataset_specs().items() if spec.public_bounds}


def bounds_from_entry(entry: dict[str, Any], d: int, key: str) -> PublicBounds:
    """A :class:`PublicBounds` from a config-style entry: ``kind``, ``source`` and either ``features`` (one
    ``[lower, upper]`` per feature) or ``all_features`` (one pair for every feature). ``key`` names the entry in
    errors."""
    if "features" in entry and "all_features" in entry:
        raise ConfigError(f"{key}: give `features` (one [lower, upper] per feature) or `all_features` (one pair for "
                          "every feature), not both")  # fmt: skip
    if "features" in entry:
        pairs = np.asarray(entry["features"], float)
        if pairs.shape != (d, 2):
            raise ConfigError(f"{key}.features: {pairs.shape[0]} pairs for {d} features; give one [lower, upper] each")
    elif "all_features" in entry:
        pairs = np.tile(np.asarray(entry["all_features"], float), (d, 1))
    else:
        raise ConfigError(f"{key}: give `features` (one [lower, upper] per feature) or `all_features`")
    row_norm = entry.get("row_norm")
    reversed_ = np.flatnonzero(~(pairs[:, 0] < pairs[:, 1]))
    if reversed_.size:
        j = int(reversed_[0])
        where = f"features[{j}]" if "features" in entry else "all_features"
        raise ConfigError(f"{key}.{where}: lower {pairs[j, 0]:g} is not below upper {pairs[j, 1]:g} (feature {j}, "
                          f"0-based, in the columns' order); give [lower, upper] with lower < upper")  # fmt: skip
    try:
        return PublicBounds(pairs[:, 0], pairs[:, 1], str(entry.get("kind", "")), str(entry.get("source", "")).strip(),
                            row_norm=None if row_norm is None else float(row_norm))  # fmt: skip
    except ConfigError as error:
        raise ConfigError(f"{key}: {error}") from None


def check_declared(name: str, override: dict[str, Any] | None = None) -> None:
    """Before any job: ``name`` has declared bounds (``override`` or the project's), well formed as far as they
    can be checked without loading the data (the feature count is checked when the records are loaded)."""
    if override:
        d = len(override["features"]) if "features" in override else 1
        bounds_from_entry(override, d, f"dataset_options.{name}.public_bounds")
    elif name not in _declared():
        public_bounds(name, 0)  # raises the error naming the key


def public_bounds(name: str, d: int, override: dict[str, Any] | None = None) -> PublicBounds:
    """The declared bounds of data set ``name`` (``d`` features): ``override`` (the config's
    ``dataset_options.<name>.public_bounds``) or the project's declaration (its record in ``datasets.yaml``).

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
    return bounds_from_entry(declared[name], d, f"{BOUNDS_FILE.name}: {name}.public_bounds")


ROUTES = ("standardize", "scale")
"""The data sets' ``normalization`` values the end-to-end route supports (what the non-private analyst does)."""


def check_route(normalization: str, key: str = "normalization") -> None:
    """Only ``standardize`` and ``scale`` have an end-to-end route (``sphere`` projects every row, which needs no
    mechanism but changes the target: not offered)."""
    if normalization not in ROUTES:
        raise ConfigError(f"{key}: {normalization!r} has no end-to-end route from the raw records; use one of {ROUTES}")


def prepare_public(X: np.ndarray, bounds: PublicBounds, normalization: str = "standardize") -> np.ndarray:
    """Each raw record clipped to the bounds, then (``standardize``) centred at their midpoint and divided by their
    half-width and by √d, or (``scale``) divided by the row-norm bound and clipped to norm 1: rows in the unit
    ball, row i a function of record i and the bounds only (module docstring)."""
    X = np.asarray(X, float)
    check_route(normalization)
    if X.ndim != 2 or X.shape[1] != bounds.d:
        raise ConfigError(f"public_bounds: {bounds.d} features declared, the data has shape {X.shape}")
    clipped = clip_columns(X, bounds.lower, bounds.upper)
    if normalization == "scale":
        rows = clipped / bounds.row_scale
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1.0)
    centre = (bounds.lower + bounds.upper) / 2
    half_width = (bounds.upper - bounds.lower) / 2
    clipped -= centre  # in place: the same operations as (clip − c)/h/√d, without the temporaries
    clipped /= half_width
    clipped /= np.sqrt(bounds.d)
    return clipped


def reference_rows(X: np.ndarray, normalization: str = "standardize") -> np.ndarray:
    """What a non-private analyst runs PCA on: the raw records standardised with their true column means and
    standard deviations (a constant column becomes 0), (``center``) centred at their true means only, in their own
    units (what ``sklearn.decomposition.PCA`` decomposes), or (``scale``) the raw records as they are. The
    end-to-end setting's target is the top-k eigenvectors of ``XᵀX`` of these rows (a global scale changes none)."""
    X = np.asarray(X, float)
    if normalization == "center":
        return X - X.mean(axis=0)
    check_route(normalization)
    return X.copy() if normalization == "scale" else _standardised_as(X, X)


def _standardised_as(Y: np.ndarray, X: np.ndarray) -> np.ndarray:
    """``Y`` standardised with the true column means and standard deviations of ``X`` (a column constant in ``X``
    carries no direction: 0)."""
    std = X.std(axis=0)
    return np.where(std > 0, (Y - X.mean(axis=0)) / np.where(std > 0, std, 1.0), 0.0)


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


def clipping(
    X: np.ndarray, bounds: PublicBounds, ranks: tuple[int, ...] = (1, 3), normalization: str = "standardize"
) -> Clipping:
    """Measure :class:`Clipping` for the raw records ``X`` against the non-private target (:func:`reference_rows`:
    PCA of ``X`` standardised with its true statistics, or of ``X`` itself for ``scale``); the clipped records
    go through the same map, with the same true statistics, so only the clipping differs. For ``scale`` a row
    clipped to the declared row-norm bound counts as clipped."""
    X = np.asarray(X, float)
    clipped = np.clip(X, bounds.lower, bounds.upper)
    moved = clipped != X
    records = moved.any(axis=1)
    if normalization == "scale" and bounds.row_norm is not None:
        over = np.linalg.norm(clipped, axis=1) > bounds.row_norm
        clipped[over] *= bounds.row_norm / np.linalg.norm(clipped[over], axis=1, keepdims=True)
        records |= over
    target = reference_rows(X, normalization)
    after = clipped if normalization == "scale" else _standardised_as(clipped, X)
    ranks = tuple(k for k in ranks if k < X.shape[1])
    if not records.any():  # the same matrix: no bias (not eigh's round-off)
        return Clipping(0.0, 0.0, dict.fromkeys(ranks, 0.0))
    # ‖V̂V̂ᵀ − VVᵀ‖_F/√(2k) = ‖sin Θ‖_F/√k, the common task's metric
    bias = {k: subspace_distance(_top_k(after, k), _top_k(target, k)) / np.sqrt(k) for k in ranks}
    return Clipping(float(moved.mean()), float(records.mean()), bias)


def widen_bounds(bounds: PublicBounds, factor: float) -> PublicBounds:
    """``bounds`` widened ``factor`` times around each feature's midpoint (a feature whose declared lower bound is
    ≥ 0 cannot be negative: its lower bound stays ≥ 0), and the row-norm bound, where declared, times ``factor``:
    the looser bounds a user might declare (study ``bounds``, docs/bounds.md)."""
    if not factor >= 1:
        raise ConfigError(f"bounds.widths: {factor!r} must be at least 1 (a factor of the declared width)")
    centre, half = (bounds.lower + bounds.upper) / 2, (bounds.upper - bounds.lower) / 2
    lower = centre - factor * half
    lower = np.where(bounds.lower >= 0, np.maximum(lower, 0.0), lower)
    row_norm = None if bounds.row_norm is None else bounds.row_norm * factor
    return PublicBounds(lower, centre + factor * half, bounds.kind, bounds.source, dict(bounds.meta), row_norm)
