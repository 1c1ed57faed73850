"""What a release needs before any noise is drawn: public bounds, the parties' rows, and parameters in range.

Every check here runs on the inputs alone and raises a :class:`~ddppm.core.errors.DDPPMError` (a ``ValueError``)
that names the argument and the fix, so that nothing is drawn, and nothing written, on bad input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ddppm.core.arrays import BLOCK_ROWS, clip_columns, row_norms
from ddppm.core.errors import ConfigError, DataError, PrivacyError
from ddppm.data.public_prep import SOURCE_KINDS, PublicBounds, bounds_from_entry

BOUNDS_HELP = (
    "declare them from the variables' units or domain, never from the records: e.g. bounds={'source': 'alcohol is "
    "8-16 % vol by the assay', 'features': [[8, 16], ...]} (one [lower, upper] per feature), 'all_features': "
    "[lower, upper], or, with standardize=False, 'row_norm': R (docs/release.md, 'A walk-through': the bounds)"
)
BOUNDS_KEYS = ("source", "kind", "features", "all_features", "row_norm")
"""The keys a bounds mapping may hold (:func:`declared_bounds`); any other is refused, not ignored."""
STANDARDIZE = (True, "center", False)
"""``standardize``: privately centre and scale (True), privately centre only, or neither (the second moment)."""
NOISES = ("secure", "simulation")


def declared_bounds(bounds: Any, d: int, standardize: bool | str) -> PublicBounds:
    """The user's public bounds as :class:`PublicBounds`: a :class:`PublicBounds`, or a mapping with ``source``
    (and optional ``kind``, one of :data:`SOURCE_KINDS`, default ``declared``) and ``features`` (one
    ``[lower, upper]`` per feature), ``all_features`` (one pair for all) or, for ``standardize=False``,
    ``row_norm`` alone (every record's norm at most R)."""
    if bounds is None:
        raise ConfigError(f"bounds: a private PCA needs public bounds on every feature; {BOUNDS_HELP}")
    if isinstance(bounds, PublicBounds):
        if bounds.d != d:
            raise ConfigError(f"bounds: {bounds.d} features declared, the data has {d}; give one pair per feature")
        return bounds
    if not isinstance(bounds, Mapping):
        raise ConfigError(f"bounds: expected a mapping or PublicBounds, got {type(bounds).__name__}; {BOUNDS_HELP}")
    _known_and_consistent(bounds, standardize)
    entry = {"kind": "declared", **bounds}
    if "row_norm" in entry:
        entry["row_norm"] = _positive(entry["row_norm"], "bounds.row_norm")
    if not str(entry.get("source", "")).strip():
        raise ConfigError(f"bounds.source: say where the bounds come from; {BOUNDS_HELP}")
    if entry["kind"] not in SOURCE_KINDS:
        raise ConfigError(f"bounds.kind: {entry['kind']!r} is not one of {SOURCE_KINDS}")
    if "features" not in entry and "all_features" not in entry:
        if "row_norm" not in entry:
            raise ConfigError(f"bounds: give `features`, `all_features` or `row_norm`; {BOUNDS_HELP}")
        if standardize is not False:
            raise ConfigError("bounds.row_norm alone bounds no feature, so it cannot be standardised: give per-feature"
                              " bounds (`features`), or fit with standardize=False")  # fmt: skip
        entry["all_features"] = [-entry["row_norm"], entry["row_norm"]]
    if isinstance(entry.get("features"), Mapping):
        raise ConfigError("bounds.features: give a list of [lower, upper] in the columns' order (a mapping by column "
                          "name is for `ddppm fit`'s bounds file, which knows the columns)")  # fmt: skip
    for key in ("features", "all_features"):
        if key in entry:
            pairs = entry[key] if key == "features" else [entry[key]]
            try:
                shaped = np.asarray(pairs, dtype=float)
            except (TypeError, ValueError):
                shaped = np.empty((0, 0))
            if shaped.ndim != 2 or shaped.shape[1] != 2:
                what = "one [lower, upper] pair of numbers" + (" per feature" if key == "features" else "")
                raise ConfigError(f"bounds.{key}: give {what}, got {entry[key]!r}")
    if "features" in entry:
        count = len(entry["features"])
        if count != d:
            raise ConfigError(f"bounds.features: {count} pairs for {d} features; give one [lower, upper] per feature, "
                              "in the columns' order")  # fmt: skip
    return bounds_from_entry(entry, d, "bounds")


def _known_and_consistent(bounds: Mapping[str, Any], standardize: bool | str) -> None:
    """Refuse a key :func:`declared_bounds` does not read (a misspelling would otherwise be ignored, and the bounds
    it meant to set with it) and keys that contradict each other or the preparation."""
    import difflib

    unknown = [str(key) for key in bounds if key not in BOUNDS_KEYS]
    if unknown:
        close = difflib.get_close_matches(unknown[0], BOUNDS_KEYS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"bounds: unknown key {unknown[0]!r}{hint}; the keys are {', '.join(BOUNDS_KEYS)}")
    if "features" in bounds and "all_features" in bounds:
        raise ConfigError("bounds: give `features` (one [lower, upper] per feature) or `all_features` (one pair for "
                          "every feature), not both")  # fmt: skip
    if "row_norm" in bounds and standardize is not False and ("features" in bounds or "all_features" in bounds):
        raise ConfigError("bounds.row_norm scales the rows only with standardize=False (the second moment); with "
                          f"standardize={standardize!r} the rows are standardised in the feature bounds and row_norm "
                          "would be ignored: remove it, or fit with standardize=False")  # fmt: skip


def _positive(value: Any, key: str) -> float:
    """``value`` as a positive finite number, or a :class:`ConfigError` naming ``key``."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if not (np.isfinite(number) and number > 0):
        raise ConfigError(f"{key}: {value!r} must be a positive number")
    return number


def party_parts(n: int, parties: Any) -> tuple[np.ndarray, ...]:
    """The row indices of each party: one curator (``parties`` None) or one party per distinct label (``parties``:
    one label per row, in order of first appearance)."""
    if parties is None:
        return (np.arange(n),)
    labels = np.asarray(parties)
    if labels.ndim != 1 or labels.size != n:
        raise DataError(f"parties: give one label per row ({n} rows), got shape {labels.shape}")
    missing = pd.isna(labels)
    if missing.any():
        raise DataError(f"parties: {int(missing.sum())} row(s) have no party label (first: row "
                        f"{int(np.argmax(missing))}); give every row its party")  # fmt: skip
    labels = labels.astype(str) if labels.dtype == object else labels
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    order = np.argsort(first)
    return tuple(np.flatnonzero(inverse == group) for group in order)


def stacked_parties(blocks: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """A list of the parties' row blocks as one array and one label per row (party 0, 1, …)."""
    arrays = [np.asarray(block) for block in blocks]
    if not arrays or any(a.ndim != 2 for a in arrays):
        raise DataError("X: give an (n, d) array, or a list of the parties' (n_j, d) arrays")
    if len({a.shape[1] for a in arrays}) != 1:
        raise DataError(f"X: the parties' arrays have different feature counts {[a.shape[1] for a in arrays]}")
    empty = [j for j, a in enumerate(arrays) if len(a) == 0]
    if empty:
        raise DataError(f"X: the parties {empty} hold no rows (fewer rows than parties); leave them out")
    labels = np.concatenate([np.full(len(a), j) for j, a in enumerate(arrays)])
    return np.concatenate(arrays, axis=0), labels


def check_budget(epsilon: Any, delta: Any, n: int) -> tuple[float, float]:
    """ε > 0 and 0 < δ < 1/n (a δ of 1/n or more allows releasing a record outright)."""
    try:
        eps, dlt = float(epsilon), float(delta)
    except (TypeError, ValueError):
        raise PrivacyError(f"epsilon and delta must be numbers, got {epsilon!r} and {delta!r}") from None
    if not (np.isfinite(eps) and eps > 0):
        raise PrivacyError(f"epsilon: {epsilon!r} must be a positive number (the privacy loss of the whole release)")
    if not (0 < dlt < 1.0 / n):
        raise PrivacyError(f"delta: {delta!r} must lie in (0, 1/n) = (0, {1.0 / n:.3g}) for n = {n} rows: a δ of 1/n "
                           "or more permits publishing a record outright; 1/n² or less is usual")  # fmt: skip
    return eps, dlt


def check_rank(n_components: Any, d: int) -> int:
    """1 ≤ k < d."""
    if isinstance(n_components, bool) or not isinstance(n_components, int | np.integer):
        raise ConfigError(f"n_components: {n_components!r} must be an integer k with 1 <= k < d = {d}")
    if not 1 <= int(n_components) < d:
        raise ConfigError(f"n_components: k = {n_components} must satisfy 1 <= k < d, the features (n_features = {d}; "
                          "k = d is the whole space: nothing to estimate)")  # fmt: skip
    return int(n_components)


def standardize_choice(standardize: Any) -> bool | str:
    """``standardize`` as one of :data:`STANDARDIZE` (numpy booleans read as booleans)."""
    if isinstance(standardize, np.bool_):
        return bool(standardize)
    return standardize


def check_choices(standardize: Any, noise: Any, random_state: Any = None) -> None:
    """``standardize`` and ``noise`` take one of their documented values; ``random_state`` is an integer or None."""
    if random_state is not None and (isinstance(random_state, bool) or not isinstance(random_state, int | np.integer)
                                     or random_state < 0):  # fmt: skip
        raise ConfigError(f"random_state: {random_state!r} must be a non-negative integer or None")
    if not any(standardize is value or (isinstance(value, str) and standardize == value) for value in STANDARDIZE):
        raise ConfigError(f"standardize: {standardize!r} must be True (centre and scale privately), 'center' "
                          "(centre only) or False (neither: the second moment's directions)")  # fmt: skip
    if noise not in NOISES:
        raise ConfigError(f"noise: {noise!r} must be 'secure' (OpenDP's sampler, for releases) or 'simulation' "
                          "(numpy: reproducible, for benchmarks only)")  # fmt: skip


def clipped_count(X: np.ndarray, bounds: PublicBounds, standardize: bool | str) -> int:
    """How many values the bounds clip (with ``standardize=False`` and a row-norm bound: plus the rows beyond it).
    For the data holder's eyes only: a count of the records, not covered by the release's ε."""
    count = 0
    for start in range(0, X.shape[0], BLOCK_ROWS):  # a block at a time: no n × d temporaries
        block = X[start : start + BLOCK_ROWS]
        count += int(np.count_nonzero((block < bounds.lower) | (block > bounds.upper)))
    if standardize is False and bounds.row_norm is not None:
        count += int(np.count_nonzero(row_norms(clip_columns(X, bounds.lower, bounds.upper)) > bounds.row_norm))
    return count
