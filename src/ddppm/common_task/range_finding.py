"""A private range per feature before the sums: preprocessing whose error barely grows with the bounds' width.

The one-shot sums of :mod:`ddppm.common_task.preprocessing` add noise of a fixed size in the publicly prepared
coordinates (every coordinate in [−1, 1]/√d, the declared box). When the declared bounds are w times wider than the
data, the data's spread in those coordinates shrinks by w while the noise does not: the mean's error relative to the
spread grows like w, the variances' like w² (docs/bounds.md has the measured table). Counts do not have this fault:
one replaced record moves a count by one whatever the box. So, as CoinPress (Biswas, Dong, Kamath & Ullman 2020)
shrinks a ball and Karwa & Vadhan (2018) locate a Gaussian by a histogram, the estimator ``range_shrinking`` first
finds a private box per feature from noisy histograms, then releases the sums on rows re-prepared in that box.

Per round r = 1, …, R (``rounds``), each party releases, for every feature j, the counts of its rows in ``bins``
equal bins of the current interval [a_j, b_j] (values outside clipped into the end bins), plus Gaussian noise of
standard deviation σ_r. One replaced record moves one count down and one up per feature: the d histograms together
have L2 sensitivity :func:`histogram_sensitivity` ``√(2d)``, whatever the interval, so round r is a Gaussian
mechanism with μ_r = √(2d)/σ_r; the rounds share ``share`` of the preprocessing's μ² equally (μ_r² = share·μ_pre²/R).
With three rounds the box reaches the data's scale from declared bounds up to ten times too wide (docs/bounds.md).
From the released counts alone (post-processing), with p parties (their noises add: variance p σ_r²):

* a bin is *occupied* when its noisy count exceeds τ = z σ_r √p, z = Φ⁻¹(1 − ``false_bins``/(d·bins)), so that
  about ``false_bins`` empty bins in all the d histograms pass by noise alone (:func:`detection_threshold`);
* the new interval runs from the first to the last occupied bin, widened by one bin and by ``margin`` times its own
  width on each side, and cut to the old interval; a feature with no occupied bin keeps its interval
  (:func:`shrink_intervals`).

A public rule (n, d, p and the budget only) runs the most rounds, up to R, whose τ stays below n/2, and none when
even one round's does not, where not even a bin holding half the records would be seen (each individual as a
party, for one): the whole preprocessing budget then goes to the sums (:func:`range_rounds`). The rows for the
sums are :func:`to_box`: each publicly prepared coordinate clipped to its private interval and mapped onto
[−1, 1]/√d, so the sums' sensitivities (2 and √(2/d)) hold unchanged. Each row depends on its own record, the
declared bounds and the releases only. The rounds are adaptive (a round's bins depend on the earlier releases):
Gaussian mechanisms compose adaptively, exactly in μ² (Dong, Roth & Su 2022).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ddppm.core.arrays import clip_columns
from ddppm.core.errors import ConfigError
from ddppm.privacy.mechanisms import gaussian_release


@dataclass(frozen=True)
class RangePlan:
    """The private range of ``common.preprocessing.range`` (module docstring): ``share`` of the preprocessing's
    μ², ``rounds``, ``bins`` per feature, ``margin`` and ``false_bins``."""

    share: float = 0.4
    rounds: int = 3
    bins: int = 16
    margin: float = 0.25
    false_bins: float = 0.5

    def __post_init__(self) -> None:
        if not 0 < self.share < 1:
            raise ConfigError(f"common.preprocessing.range.share: {self.share!r} must lie in (0, 1)")
        if self.rounds < 1 or self.bins < 2:
            raise ConfigError("common.preprocessing.range: rounds ≥ 1 and bins ≥ 2")
        if self.margin < 0 or self.false_bins <= 0:
            raise ConfigError("common.preprocessing.range: margin ≥ 0 and false_bins > 0")

    @classmethod
    def from_section(cls, section: dict[str, Any]) -> RangePlan:
        keys = ("share", "rounds", "bins", "margin", "false_bins")
        return cls(**{k: section[k] for k in keys if k in section})


CHUNK_ROWS = 4096
"""Rows per block when counting (a few MB at d = 100)."""
DETECTABLE_SHARE = 0.5
"""A round runs only if a bin holding this share of the records would pass its threshold."""


def histogram_sensitivity(d: int) -> float:
    """L2 sensitivity of the d per-feature histograms under replace-one: one count −1 and one +1 per feature."""
    return float(np.sqrt(2.0 * d))


def round_sigma(mu_range: float, d: int, rounds: int) -> float:
    """Each party's noise per count in one of ``rounds`` rounds that together are ``mu_range``-GDP."""
    return histogram_sensitivity(d) * np.sqrt(rounds) / mu_range


def detection_threshold(plan: RangePlan, sigma: float, d: int, parties: int) -> float:
    """τ: a noisy count above it marks its bin occupied (about ``false_bins`` empty bins pass in all)."""
    from scipy.stats import norm

    return float(norm.isf(plan.false_bins / (d * plan.bins)) * sigma * np.sqrt(parties))


def range_rounds(plan: RangePlan, mu_range: float, n: int, d: int, parties: int) -> int:
    """How many rounds run: the most, up to ``plan.rounds``, whose threshold τ stays below n/2; 0 when even one
    round's does not (public inputs only: module docstring)."""
    for rounds in range(plan.rounds, 0, -1):
        if detection_threshold(plan, round_sigma(mu_range, d, rounds), d, parties) < DETECTABLE_SHARE * n:
            return rounds
    return 0


def bin_counts(Z: np.ndarray, lower: np.ndarray, upper: np.ndarray, bins: int) -> np.ndarray:
    """The (d, bins) counts of each feature's values in ``bins`` equal bins of [lower_j, upper_j] (values outside
    counted in the end bins)."""
    n, d = Z.shape
    counts, offsets, width = np.zeros(d * bins, dtype=np.int64), np.arange(d) * bins, upper - lower
    for start in range(0, n, CHUNK_ROWS):  # a block at a time, in cache: the same bins, several times faster
        position = Z[start : start + CHUNK_ROWS] - lower
        position /= width
        position *= bins
        index = position.astype(np.int64)  # truncation = floor for positions ≥ 0; below 0 both clip to bin 0
        np.maximum(index, 0, out=index)
        np.minimum(index, bins - 1, out=index)
        index += offsets
        counts += np.bincount(index.ravel(), minlength=d * bins)
    return counts.reshape(d, bins).astype(float)


def shrink_intervals(
    noisy: np.ndarray, lower: np.ndarray, upper: np.ndarray, threshold: float, margin: float
) -> tuple[np.ndarray, np.ndarray]:
    """The new intervals from the noisy counts (module docstring): first to last occupied bin, one bin and
    ``margin`` of the span wider on each side, within the old interval; unchanged where no bin is occupied."""
    d, bins = noisy.shape
    occupied = noisy > threshold
    seen = occupied.any(axis=1)
    first = np.argmax(occupied, axis=1)
    last = bins - 1 - np.argmax(occupied[:, ::-1], axis=1)
    width = (upper - lower) / bins
    start, stop = lower + (first - 1) * width, lower + (last + 2) * width
    extra = margin * (stop - start)
    new_lower = np.where(seen, np.maximum(lower, start - extra), lower)
    new_upper = np.where(seen, np.minimum(upper, stop + extra), upper)
    return new_lower, new_upper


def private_intervals(
    Z: np.ndarray, plan: RangePlan, sigma: float, parties: int, rounds: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """The private interval of every feature of the publicly prepared rows ``Z`` (coordinates in [−1, 1]/√d) after
    ``rounds`` rounds. The p parties' noises enter each total count as one Gaussian of variance p σ² (the law of
    the sum of their releases)."""
    n, d = Z.shape
    half = 1.0 / np.sqrt(d)
    lower, upper = np.full(d, -half), np.full(d, half)
    threshold = detection_threshold(plan, sigma, d, parties)
    for _ in range(rounds):
        noisy = gaussian_release(bin_counts(Z, lower, upper, plan.bins), np.sqrt(parties) * sigma, rng)
        lower, upper = shrink_intervals(noisy, lower, upper, threshold, plan.margin)
    return lower, upper


def to_box(Z: np.ndarray, lower: np.ndarray, upper: np.ndarray, overwrite: bool = False) -> np.ndarray:
    """Each coordinate clipped to its interval and mapped affinely onto [−1, 1]/√d: row i depends on row i and the
    intervals only. ``overwrite``: in ``Z``'s own memory (a caller that holds no other reference to it)."""
    d = Z.shape[1]
    centre, half_width = (lower + upper) / 2, (upper - lower) / 2
    rows = clip_columns(Z, lower, upper, out=Z if overwrite else None)
    rows -= centre  # in place: the same operations as (clip − c)/h/√d, without the temporaries
    rows /= half_width
    rows /= np.sqrt(d)
    return rows
