"""A private range per feature before the sums, so that loose declared bounds cost little (docs/bounds.md says why
the one-shot sums' error grows with the bounds' width, and derives what follows). As CoinPress (Biswas, Dong, Kamath &
Ullman 2020) shrinks a ball and Karwa & Vadhan (2018) locate a Gaussian by a histogram, ``range_shrinking`` finds a
private box per feature from noisy histograms, then releases the sums on rows re-prepared in that box.

**The releases.** Per round r = 1, …, R, each party releases, for every feature j, the counts of its rows in B =
``bins`` equal bins of the current interval [a_j, b_j] (values outside counted in the end bins, so the counts of a
feature add up to n), plus Gaussian noise of standard deviation σ_R. One replaced record moves one count down and one
up per feature: the d histograms together have L2 sensitivity :func:`histogram_sensitivity` ``√(2d)``, whatever the
interval, so a round is a Gaussian mechanism with μ = √(2d)/σ_R; the R rounds share ``share`` of the preprocessing's
μ² equally (:func:`round_sigma`: σ_R = √(2d)·√R/μ_range, μ_range² = share·μ_pre²).

**The edges** (post-processing; p parties' noises add, s = √p·σ_R per count). An edge moves only on the records'
evidence, never on noise alone, and never past more than an allowance of A records per side
(:func:`allowance_count`): ``A = min(allowance·n, (z + power)·σ_max)``, σ_max = s√B/2 below. It is as small as the
noise permits (an empty stretch of any length still passes with probability Φ(``power``)), so the records it may
clip vanish as n or ε grows; at small n the share ``allowance`` of the records caps it.

* the records in the first k bins, C(k), are estimated from the noisy counts c̃ and the public n (all n records lie
  in some bin) by least squares, ``Ĉ(k) = Σ_{b<k} c̃_b − (k/B)(Σ_b c̃_b − n)``, whose noise has standard deviation
  ``σ_k = s·√(k(B − k)/B) ≤ σ_max = s·√B/2`` (:func:`cumulative_counts`, :func:`cumulative_sd`; a plain sum: s√k);
* the left edge cuts the most bins k whose estimate passes ``Ĉ(k) ≤ A − z·σ_k``, z = ``z`` (:func:`edge_cuts`),
  and the right edge likewise from the right: a stretch that holds A + t·σ_k records passes at its k with
  probability Φ(−z − t) (its noise would have to fall z + t standard deviations low), an empty stretch with
  probability Φ(A/σ_k − z);
* the new interval runs from the first to the last kept bin, one bin and ``margin`` times its span wider on each
  side, within the old one (:func:`shrink_intervals`). At least one bin is kept: no feature shrinks to nothing;
  records cut stay counted in the next round's end bins, so the allowance bounds all the rounds' cuts together.

**The rounds: a public rule** (:func:`range_rounds`; n, d, p and μ only, never the data). A round runs only if its
test can pass an empty stretch of any length without help from the noise, i.e. every threshold is non-negative,
``A − z·σ_k ≥ 0`` for every k; where one is negative an empty stretch would be cut only when its noise happens to fall
below it: on noise alone. The noisiest stretch is half the box, and (z + power)·σ_max ≥ z·σ_max always, so the
condition is ``z·s·√B/2 ≤ allowance·n``. With R rounds s grows like √R, so the rule runs
``R = min(rounds, ⌊2·(allowance·n·μ_range/z)² / (d·p·B)⌋)`` rounds, zero included: then the whole preprocessing
budget goes to the sums on the declared box (``one_shot``'s result); each individual as a party never runs one.

Rows for the sums: :func:`to_box`, each coordinate clipped to its private interval and mapped onto [−1, 1]/√d (the
sums' sensitivities unchanged; row i depends on record i, the bounds and the releases only). The adaptive rounds
compose exactly in μ² (Dong, Roth & Su 2022).
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
    μ², at most ``rounds`` rounds, ``bins`` per feature, ``margin``, the ``allowance`` (the most an edge may cut per
    side, a share of n), ``z`` (the edges' test, in standard deviations of its noise) and ``power`` (an empty stretch
    passes with probability at least Φ(power) where the allowance is set by the noise)."""

    share: float = 0.4
    rounds: int = 3
    bins: int = 16
    margin: float = 0.3
    allowance: float = 0.2
    z: float = 0.5
    power: float = 3.0

    def __post_init__(self) -> None:
        if not 0 < self.share < 1:
            raise ConfigError(f"common.preprocessing.range.share: {self.share!r} must lie in (0, 1)")
        if self.rounds < 1 or self.bins < 2:
            raise ConfigError("common.preprocessing.range: rounds ≥ 1 and bins ≥ 2")
        if self.margin < 0 or not 0 < self.allowance < 0.5 or not self.z > 0 or not self.power > 0:
            raise ConfigError("common.preprocessing.range: margin ≥ 0, allowance in (0, 0.5), z > 0 and power > 0")

    @classmethod
    def from_section(cls, section: dict[str, Any]) -> RangePlan:
        keys = ("share", "rounds", "bins", "margin", "allowance", "z", "power")
        return cls(**{k: section[k] for k in keys if k in section})


CHUNK_ROWS = 4096
"""Rows per block when counting (a few MB at d = 100)."""


def histogram_sensitivity(d: int) -> float:
    """L2 sensitivity of the d per-feature histograms under replace-one: one count −1 and one +1 per feature."""
    return float(np.sqrt(2.0 * d))


def round_sigma(mu_range: float, d: int, rounds: int) -> float:
    """Each party's noise per count in one of ``rounds`` rounds that together are ``mu_range``-GDP."""
    return histogram_sensitivity(d) * np.sqrt(rounds) / mu_range


def range_rounds(plan: RangePlan, mu_range: float, n: int, d: int, parties: int) -> int:
    """How many rounds run (module docstring): the most, up to ``plan.rounds``, whose thresholds are all
    non-negative, ``z·s·√B/2 ≤ allowance·n`` for the total noise per count ``s = √p·σ_R``; 0 when not even one
    round's are. Public inputs only."""
    most = 2.0 * (plan.allowance * n * mu_range / plan.z) ** 2 / (d * parties * plan.bins)
    return int(min(plan.rounds, np.floor(most * (1 + 1e-12))))


def allowance_count(plan: RangePlan, n: int, noise: float) -> float:
    """A, the records an edge may cut per side: ``(z + power)·σ_max`` (σ_max = noise·√B/2, the noisiest stretch's),
    at most ``allowance·n`` (module docstring)."""
    return float(min(plan.allowance * n, (plan.z + plan.power) * noise * np.sqrt(plan.bins) / 2))


def cumulative_sd(noise: float, bins: int) -> np.ndarray:
    """σ_k, k = 1, …, B − 1: the standard deviation of :func:`cumulative_counts`' estimate of the first k bins'
    records when each count carries independent noise of standard deviation ``noise``, ``noise·√(k(B − k)/B)``."""
    k = np.arange(1, bins)
    return noise * np.sqrt(k * (bins - k) / bins)


def cumulative_counts(noisy: np.ndarray, n: int) -> np.ndarray:
    """The (d, B − 1) least-squares estimates Ĉ(k) of the records in each feature's first k bins, k = 1, …, B − 1,
    given that its B counts add up to the public n: the noisy partial sums less k/B of the total's excess over n."""
    bins = noisy.shape[1]
    k = np.arange(1, bins)
    excess = noisy.sum(axis=1, keepdims=True) - n
    return np.cumsum(noisy[:, :-1], axis=1) - k / bins * excess


def edge_cuts(noisy: np.ndarray, n: int, noise: float, plan: RangePlan) -> tuple[np.ndarray, np.ndarray]:
    """How many bins each feature's left and right edges cut (module docstring): the most k with ``Ĉ(k) ≤ A − z·σ_k``
    (A: :func:`allowance_count`) from each side, 0 where none passes, and 0 on both sides where the two cuts would
    leave no bin. ``noise``: the standard deviation of each noisy count (√p σ)."""
    d, bins = noisy.shape
    limit = allowance_count(plan, n, noise) - plan.z * cumulative_sd(noise, bins)

    def most(passes: np.ndarray) -> np.ndarray:
        return np.where(passes.any(axis=1), bins - 1 - np.argmax(passes[:, ::-1], axis=1), 0)

    left = most(cumulative_counts(noisy, n) <= limit)
    right = most(cumulative_counts(noisy[:, ::-1], n) <= limit)
    meet = left + right > bins - 1
    return np.where(meet, 0, left), np.where(meet, 0, right)


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
    noisy: np.ndarray, lower: np.ndarray, upper: np.ndarray, n: int, noise: float, plan: RangePlan
) -> tuple[np.ndarray, np.ndarray]:
    """The new intervals from the noisy counts (module docstring): the bins :func:`edge_cuts` keeps, one bin and
    ``margin`` of their span wider on each side, within the old interval (unchanged where nothing is cut)."""
    bins = noisy.shape[1]
    left, right = edge_cuts(noisy, n, noise, plan)
    width = (upper - lower) / bins
    start, stop = lower + (left - 1) * width, upper - (right - 1) * width
    extra = plan.margin * (stop - start)
    return np.maximum(lower, start - extra), np.minimum(upper, stop + extra)


def private_intervals(
    Z: np.ndarray, plan: RangePlan, sigma: float, parties: int, rounds: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """The private interval of every feature of the publicly prepared rows ``Z`` (coordinates in [−1, 1]/√d) after
    ``rounds`` rounds. The p parties' noises enter each total count as one Gaussian of variance p σ² (the law of
    the sum of their releases)."""
    n, d = Z.shape
    half = 1.0 / np.sqrt(d)
    lower, upper = np.full(d, -half), np.full(d, half)
    noise = np.sqrt(parties) * sigma
    for _ in range(rounds):
        noisy = gaussian_release(bin_counts(Z, lower, upper, plan.bins), noise, rng)
        lower, upper = shrink_intervals(noisy, lower, upper, n, noise, plan)
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
