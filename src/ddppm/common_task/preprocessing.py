"""Private standardisation with a declared share of the budget (docs/privacy.md, "What is public").

After the public preparation (:func:`ddppm.data.public_prep.prepare_public`: every coordinate in [−1, 1]/√d, so
every row in the unit ball, each a function of its own record and the declared bounds), centring at the data's
mean and scaling by its standard deviations read every row: they are mechanisms. Both are Gaussian mechanisms on
sums released by the **parties** the method's trust model allows (:func:`preprocessing_party`):

* ``curator``: one party sees every row (a trusted curator, or secure aggregation of the agents' sums with one
  Gaussian noise): the sums carry one noise;
* ``agents``: no trusted party: each of the m agents publishes its own noisy sums, m noises in the total;
* ``individuals``: each individual randomises its own record (local DP), n noises in the total.

Each party's release of the sum of its rows has L2 sensitivity :data:`SUM_SENSITIVITY` = 2 (one replaced record
moves its row within the box, whose diagonal is 2), and of the sum of its squared rows ``√(2/d)``
(:func:`squares_sensitivity`: the squares are non-negative with ``Σ_j z_j⁴ ≤ max_j z_j² Σ_j z_j² ≤ 1/d``). With
noises σ_sum and σ_squares a record's whole preprocessing is ``μ_pre``-GDP,
``μ_pre² = (2/σ_sum)² + (√(2/d)/σ_squares)²``, from its own party's view (the other parties' releases do not
depend on it). :func:`preprocessing_noise` splits ``μ_pre²`` between the two (``scale_share`` to the squares).

:func:`private_standardise` then computes, from the released sums only (post-processing),

    μ = (Σ z_i + N(0, p σ_sum² I)) / n,   s_j = (Σ z_ij² + N(0, p σ_squares²)) / n,
    m̂ = clip(μ, −b, b),   v̂_j = min(max(s_j − μ_j², floor), b_j²),   w_i = clip₁((z_i − m̂) / √v̂ / (c √d)),

with p the number of parties, ``floor`` a public multiple of v̂'s noise standard deviation (a feature whose
variance drowns in the noise is not blown up), b_j the largest value of coordinate j (a mean of values in [−b, b]
lies there and their variance is at most b²: :func:`admissible_statistics`) and c = ``row_scale`` (standardised
rows have mean squared norm d, so c = 2 clips only rows more than twice that norm). Row i depends on record i and
the releases only. The budget of the whole route is :mod:`ddppm.common_task.budget`.

Two estimators (``estimator``): ``one_shot``, the sums above on the declared box; ``range_shrinking`` (the
default), which first spends ``range.share`` of ``μ_pre²`` on a private box per feature from noisy histograms
(:mod:`ddppm.common_task.range_finding`) and then releases the same sums, with the rest, on the rows re-prepared in
that box, so that loose declared bounds cost little (docs/bounds.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ddppm.common_task.base import GaussianRelease, releases_mu
from ddppm.common_task.clip_radius import (
    HISTOGRAM_SENSITIVITY,
    RadiusPlan,
    max_norm,
    private_radius,
    radius_grid,
    radius_runs,
    radius_sigma,
    target_clipped,
)
from ddppm.common_task.range_finding import (
    RangePlan,
    histogram_sensitivity,
    private_intervals,
    range_rounds,
    round_sigma,
    to_box,
)
from ddppm.core.arrays import BLOCK_ROWS, column_squares, row_norms
from ddppm.core.errors import ConfigError, PrivacyError
from ddppm.privacy.mechanisms import gaussian_release

SUM_SENSITIVITY = 2.0
"""L2 sensitivity of a party's sum of publicly prepared rows under replace-one (the box's diagonal)."""

ESTIMATORS = ("range_shrinking", "one_shot")
"""``common.preprocessing.estimator``: a private box first, then the sums (the default), or the sums alone."""
PARTIES = ("curator", "agents", "individuals")
PARTY_OF_TRUST = {"central": "curator", "secure_aggregation": "curator", "gossip": "agents", "local": "agents"}
"""Who releases the preprocessing's sums, by the method's trust model (a method whose individuals do not trust
their agent says ``individuals`` itself: :attr:`ddppm.common_task.base.CommonTaskMethod.preprocessing_party`)."""


def preprocessing_party(method: Any) -> str:
    """Who releases the preprocessing's sums for ``method``: its own ``preprocessing_party`` or its trust model's."""
    return getattr(method, "preprocessing_party", "") or PARTY_OF_TRUST[method.trust_model]


def mean_sensitivity(n: int) -> float:
    """L2 sensitivity of the mean of n publicly prepared rows under replace-one: 2/n."""
    return SUM_SENSITIVITY / n


def squares_sensitivity(d: int) -> float:
    """L2 sensitivity of a party's sum of squared rows (coordinates in [−1, 1]/√d): √(2/d)."""
    return float(np.sqrt(2.0 / d))


@dataclass(frozen=True)
class PreprocessingPlan:
    """The private preprocessing of ``common.preprocessing``: ``share`` of the target's μ² for it, ``scale``
    (also divide by private standard deviations), ``scale_share`` (of the preprocessing's μ², for the squares),
    ``row_scale`` (c) and ``variance_floor`` (in standard deviations of v̂'s noise)."""

    share: float = 0.25
    scale: bool = True
    scale_share: float = 0.5
    row_scale: float = 2.0
    variance_floor: float = 3.0
    estimator: str = "range_shrinking"
    range: RangePlan = RangePlan()
    radius: RadiusPlan = RadiusPlan()

    def __post_init__(self) -> None:
        if self.estimator not in ESTIMATORS:
            raise ConfigError(f"common.preprocessing.estimator: {self.estimator!r} is not one of {ESTIMATORS}")

    @classmethod
    def from_section(cls, section: dict[str, Any]) -> PreprocessingPlan:
        keys = ("share", "scale", "scale_share", "row_scale", "variance_floor", "estimator")
        found = {k: section[k] for k in keys if k in section}
        return cls(**found, range=RangePlan.from_section(section.get("range", {})),
                   radius=RadiusPlan.from_section(section.get("radius", {})))  # fmt: skip

    def fixed_radius(self, d: int, scaled: bool | None = None) -> float:
        """R where no private radius runs: ``c√d`` for standardised rows, 1 for centred ones (the unit ball's);
        ``scaled``: whether the rows were scaled (default: the plan's ``scale``)."""
        return float(self.row_scale * np.sqrt(d)) if (self.scale if scaled is None else scaled) else 1.0


@dataclass(frozen=True)
class PreprocessingNoise:
    """Per party, the noise of its released sum (``sigma_sum``) and sum of squares (``sigma_squares``, NaN when
    not scaling), the number of parties, and the releases one record's party makes (for the accounting, in the
    order drawn); with ``range_shrinking``, the rounds of the private box that run (``range_rounds``, 0 when
    skipped) and each round's noise per count (``sigma_range``, NaN when none); with an adaptive radius, the noise
    per count of the norms' histogram (``sigma_radius``, NaN when the search does not run) and the target count t
    (``target_clipped``, :mod:`ddppm.common_task.clip_radius`)."""

    parties: int
    sigma_sum: float
    sigma_squares: float
    releases: tuple[GaussianRelease, ...]
    range_rounds: int = 0
    sigma_range: float = float("nan")
    sigma_radius: float = float("nan")
    target_clipped: float = float("nan")

    @property
    def mu(self) -> float:
        return releases_mu(self.releases)

    @property
    def radius_searched(self) -> bool:
        return bool(np.isfinite(self.sigma_radius))

    def stages(self) -> list[tuple[str, GaussianRelease]]:
        """Each release with the words of its stage, in the order drawn."""
        words = ["preprocessing: private box, noisy histograms (one round)"] * self.range_rounds
        words += ["preprocessing: sum of the rows"]
        words += ["preprocessing: sum of the squared rows"] if np.isfinite(self.sigma_squares) else []
        words += ["preprocessing: clipping radius, noisy histogram of the rows' norms"] if self.radius_searched else []
        return list(zip(words, self.releases, strict=True))


def preprocessing_noise(
    plan: PreprocessingPlan, mu_pre: float, d: int, parties: int, n: int | None = None
) -> PreprocessingNoise:
    """The noises that make one record's preprocessing exactly ``mu_pre``-GDP (module docstring); ``n``, public,
    decides whether the private box's rounds run (``range_shrinking`` needs it)."""
    if mu_pre <= 0:
        raise PrivacyError("private preprocessing needs a positive share of the budget (common.preprocessing.share)")
    range_releases: list[GaussianRelease] = []
    rounds, sigma_range = 0, float("nan")
    mu_method = mu_pre * np.sqrt((1 - plan.share) / plan.share)  # split_budget's: public
    if plan.estimator == "range_shrinking":
        if n is None:
            raise ValueError("preprocessing_noise: range_shrinking needs the number of records n (public)")
        mu_range = np.sqrt(plan.range.share) * mu_pre
        rounds = range_rounds(plan.range, mu_range, n, d, parties)
        if rounds:
            sigma_range = float(round_sigma(mu_range, d, rounds))
            range_releases = [GaussianRelease(histogram_sensitivity(d), sigma_range)] * rounds
            mu_pre = float(np.sqrt(1 - plan.range.share) * mu_pre)
    radius_releases: list[GaussianRelease] = []
    sigma_radius, target = float("nan"), float("nan")
    if plan.radius.adaptive:
        target = target_clipped(d, parties, mu_method, plan.radius.kappa)
        sigma = radius_sigma(np.sqrt(plan.radius.share) * mu_pre)
        if radius_runs(sigma, parties, target, n):
            sigma_radius = float(sigma)
            radius_releases = [GaussianRelease(HISTOGRAM_SENSITIVITY, sigma_radius)]
            mu_pre = float(np.sqrt(1 - plan.radius.share) * mu_pre)
    mu_squares = np.sqrt(plan.scale_share) * mu_pre if plan.scale else 0.0
    mu_sum = np.sqrt(mu_pre**2 - mu_squares**2)
    releases = [GaussianRelease(SUM_SENSITIVITY, SUM_SENSITIVITY / mu_sum)]
    sigma_squares = float("nan")
    if plan.scale:
        sigma_squares = squares_sensitivity(d) / mu_squares
        releases.append(GaussianRelease(squares_sensitivity(d), sigma_squares))
    return PreprocessingNoise(int(parties), float(SUM_SENSITIVITY / mu_sum), float(sigma_squares),
                              (*range_releases, *releases, *radius_releases), rounds, sigma_range, sigma_radius,
                              float(target))  # fmt: skip


@dataclass(frozen=True)
class Released:
    """What the preprocessing releases, post-processed: the mean ``mean``, (when scaling) the floored variances
    ``variance`` (None: centre only), the clipping ``radius`` R of the centred (and scaled) rows (None: the
    plan's fixed radius, :meth:`PreprocessingPlan.fixed_radius`) and, where :func:`admissible_statistics` made
    them, the features it ``projected`` (:func:`projection_notes`)."""

    mean: np.ndarray
    variance: np.ndarray | None
    radius: float | None = None
    projected: dict[str, list[int]] = field(default_factory=dict)


def coordinate_bound(d: int, widths: np.ndarray | None = None, box: PrivateBox | None = None) -> np.ndarray:
    """The largest absolute value of each coordinate of the rows the sums see: ``1/√d`` (the prepared rows, in the
    declared or the private box), or, centring only (``widths``: the declared half-widths), ``H_j/‖H‖`` at the
    common scale (:func:`common_scale`)."""
    edge = np.full((1, d), 1.0 / np.sqrt(d))
    if widths is None:
        return edge[0]
    return np.abs(common_scale(edge, widths, box))[0]


def floor_of(noise: PreprocessingNoise, plan: PreprocessingPlan, n: int) -> float:
    """The variances' public floor: ``variance_floor`` standard deviations of v̂'s noise (module docstring)."""
    return float(plan.variance_floor * np.sqrt(noise.parties) * noise.sigma_squares / n)


def admissible_statistics(mean_hat: np.ndarray, variance_hat: np.ndarray | None, bound: np.ndarray, floor: float
                          ) -> Released:  # fmt: skip
    """The released statistics projected onto what the public bounds allow (post-processing: only released values
    and public numbers enter): every coordinate of the rows lies in ``[−b_j, b_j]`` (``bound``), so their mean does,
    and their variance is at most ``b_j²`` (Popoviciu: a variance of values in an interval of half-width b is at
    most b²). The variances are first raised to the public ``floor``; where the floor exceeds ``b_j²``, ``b_j²``."""
    mean = np.clip(mean_hat, -bound, bound)
    variance = None if variance_hat is None else np.minimum(np.maximum(variance_hat, floor), bound**2)
    return Released(mean, variance, projected=projection_notes(Released(mean, variance), bound, floor))


def projection_notes(released: Released, bound: np.ndarray, floor: float) -> dict[str, list[int]]:
    """Which features' released statistics sit where :func:`admissible_statistics` put them (post-processing: read
    off the released values): a mean on a bound; a variance on its public floor (or on b² where the floor exceeds
    it: either way the scale then says nothing of the data); a variance cut down to b². Empty lists are left out."""
    notes = {"mean_on_bound": np.flatnonzero(np.abs(released.mean) >= bound)}
    if released.variance is not None:
        lowest = np.minimum(floor, bound**2)
        notes["variance_on_floor"] = np.flatnonzero(released.variance <= lowest)
        notes["variance_on_bound"] = np.flatnonzero((released.variance >= bound**2) & (lowest < bound**2))
    return {key: [int(j) for j in value] for key, value in notes.items() if value.size}


def release_statistics(
    Z: np.ndarray, noise: PreprocessingNoise, plan: PreprocessingPlan, rng: np.random.Generator,
    bound: np.ndarray | None = None,
) -> Released:  # fmt: skip
    """The released mean (and variances) of the publicly prepared rows ``Z`` (module docstring), projected onto
    what ``bound`` (each coordinate's largest absolute value, :func:`coordinate_bound`; default ``1/√d``) allows
    (:func:`admissible_statistics`). The p parties' noises enter the totals as one Gaussian of variance p σ² (the
    same law as the sum of their releases)."""
    Z = np.asarray(Z, float)
    n, d = Z.shape
    bound = coordinate_bound(d) if bound is None else bound
    spread = np.sqrt(noise.parties)
    mean_hat = gaussian_release(Z.sum(axis=0), spread * noise.sigma_sum, rng) / n
    if not plan.scale:
        return admissible_statistics(mean_hat, None, bound, 0.0)
    squares_hat = gaussian_release(column_squares(Z), spread * noise.sigma_squares, rng) / n
    return admissible_statistics(mean_hat, squares_hat - mean_hat**2, bound, floor_of(noise, plan, n))


def standardise_rows(Z: np.ndarray, released: Released, plan: PreprocessingPlan, overwrite: bool = False) -> np.ndarray:
    """Each row centred at the released mean (and divided by the released standard deviations), divided by the
    clipping radius R (:attr:`Released.radius`, or the plan's fixed one), then clipped to the unit ball: row i
    depends on row i and the releases only. ``overwrite``: in ``Z``'s own memory."""
    rows = np.subtract(np.asarray(Z, float), released.mean, out=Z if overwrite else None)
    if released.variance is not None:  # in place below: the same operations, without the temporaries
        rows /= np.sqrt(released.variance)
    radius = released.radius
    if radius is None:
        radius = plan.fixed_radius(rows.shape[1], scaled=released.variance is not None)
    if radius != 1.0:
        rows /= radius
    norms = row_norms(rows)[:, None]
    rows /= np.maximum(norms, 1.0, out=norms)
    return rows


def centred_norms(Z: np.ndarray, released: Released) -> np.ndarray:
    """The norms of the rows centred at the released mean (and divided by the released standard deviations), a
    block of rows at a time."""
    norms = np.empty(Z.shape[0])
    for start in range(0, Z.shape[0], BLOCK_ROWS):
        block = Z[start : start + BLOCK_ROWS] - released.mean
        if released.variance is not None:
            block /= np.sqrt(released.variance)
        norms[start : start + BLOCK_ROWS] = np.linalg.norm(block, axis=1)
    return norms


def release_radius(
    Z: np.ndarray, released: Released, noise: PreprocessingNoise, plan: PreprocessingPlan, rng: np.random.Generator
) -> Released:  # fmt: skip
    """``released`` with its private clipping radius (:mod:`ddppm.common_task.clip_radius`) when the search runs:
    the grid from ``R_0`` (standardised rows: c√d; centred: R_max/span) to the largest possible norm R_max, and
    the norms' noisy histogram. ``Z``: the rows the sums saw (each coordinate within [−1, 1]/√d, or, centring only,
    within the common-scale box)."""
    if not noise.radius_searched:
        return released
    d = Z.shape[1]
    if plan.scale:
        highest = max_norm(released.mean, released.variance, np.full(d, 1.0 / np.sqrt(d)))
        lowest = plan.fixed_radius(d)
    else:  # centring only: the rows lie in the unit ball, so their centred norms within 1 + ‖m̂‖
        highest = 1.0 + float(np.linalg.norm(released.mean))
        lowest = highest / plan.radius.span
    radii = radius_grid(lowest, highest, plan.radius)
    radius = private_radius(centred_norms(Z, released), radii, noise.sigma_radius, noise.parties,
                            noise.target_clipped, rng)  # fmt: skip
    return replace(released, radius=radius)


@dataclass(frozen=True)
class PrivateBox:
    """The private box per feature (``range_shrinking``), in the publicly prepared coordinates: each coordinate of a
    row is clipped to ``[lower_j, upper_j]`` and mapped onto [−1, 1]/√d (:func:`~.range_finding.to_box`)."""

    lower: np.ndarray
    upper: np.ndarray


def common_scale(Z: np.ndarray, widths: np.ndarray, box: PrivateBox | None, overwrite: bool = False) -> np.ndarray:
    """Centring only: the rows mapped from one scale per feature ([−1, 1]/√d of the declared or private box) to one
    common scale, ``(x − M)/‖H‖`` in the records' units (M, H: the box's midpoints and half-widths; ``widths``: the
    declared half-widths h), so that the rows' second moment is the centred records' covariance up to one factor.
    Each coordinate stays within ``H_j/‖H‖``: rows in the unit ball, the sum's sensitivity 2 unchanged."""
    d = Z.shape[1]
    half = np.full(d, 1.0 / np.sqrt(d)) if box is None else (box.upper - box.lower) / 2
    raw_half = np.asarray(widths, float) * np.sqrt(d) * half  # H_j, the box's half-widths in the records' units
    factors = raw_half * np.sqrt(d) / np.linalg.norm(raw_half)
    return np.multiply(Z, factors, out=Z if overwrite else None)


def private_statistics(
    Z: np.ndarray, noise: PreprocessingNoise, plan: PreprocessingPlan, rng: np.random.Generator,
    overwrite: bool = False, widths: np.ndarray | None = None,
) -> tuple[np.ndarray, Released, PrivateBox | None]:  # fmt: skip
    """Every release of the preprocessing, in the order drawn: the private box when its rounds run
    (``range_shrinking``), then :func:`release_statistics` on the rows re-prepared in it (centring only: at one
    common scale, :func:`common_scale`, which needs the declared half-widths ``widths``), projected onto what the
    bounds allow, then the clipping radius when its search runs (:func:`release_radius`). Returns those rows, the
    released statistics and the box (None when no round ran). ``overwrite``: re-prepare in ``Z``'s own memory (a
    release, which holds ``Z`` once; the bench shares it between draws)."""
    if not plan.scale and widths is None:
        raise ValueError("private_statistics: centring only needs the declared half-widths (widths=)")
    box = None
    if noise.range_rounds:
        box = PrivateBox(*private_intervals(Z, plan.range, noise.sigma_range, noise.parties, noise.range_rounds, rng))
        Z = to_box(Z, box.lower, box.upper, overwrite=overwrite)
    if not plan.scale:
        Z = common_scale(Z, widths, box, overwrite=overwrite or box is not None)
    bound = coordinate_bound(Z.shape[1], None if plan.scale else widths, box)
    released = release_statistics(Z, noise, plan, rng, bound)
    return Z, release_radius(Z, released, noise, plan, rng), box


def private_standardise(
    Z: np.ndarray, noise: PreprocessingNoise, plan: PreprocessingPlan, rng: np.random.Generator,
    widths: np.ndarray | None = None,
) -> np.ndarray:  # fmt: skip
    """:func:`standardise_rows` at :func:`private_statistics` (module docstring)."""
    rows, released, _ = private_statistics(Z, noise, plan, rng, widths=widths)
    return standardise_rows(rows, released, plan, overwrite=rows is not Z)
