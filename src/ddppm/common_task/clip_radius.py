"""A clipping radius that relaxes as the budget allows (docs/bounds.md, "The clipping radius").

The methods need every row in the unit ball. After centring (and scaling) with the released statistics, row i is
``r_i`` (standardised rows: mean squared norm about d; centred rows: in the ball of radius ``1 + ‖m̂‖``), and the
method sees ``clip₁(r_i / R)``. A fixed R (until 2026-11-29: ``c√d``, c = 2) leaves a bias that no ε removes: on
records with long tails the rows beyond R are shrunk at every budget. Here R is a private choice that grows when
the method's noise stops mattering.

**Which R.** For a Gaussian release of the second moment of the rows ``clip₁(r_i/R)`` (AnalyzeGauss; the other
methods' noise scales alike), the error in the records' own units has two parts: the noise, ``R²·σ_m·2√d`` in
operator norm (a symmetric d × d Gaussian of standard deviation σ_m = √2/μ_m per entry, μ_m the method's μ, √p
more with p noising parties), and the clipping bias, at most ``Σ_i (‖r_i‖² − R²)₊``. Their sum's derivative in R²
is ``2√2·√(d p)/μ_m − #{i : ‖r_i‖ > R}``: the R that balances them clips about

    t = κ √(d p) / μ_m                                                                (target_clipped)

rows with κ = 2√2 (:data:`OPERATOR_KAPPA`). That bound charges every clipped row's excess to the subspace; most of
it only shrinks the top eigenvalues along directions the rows already span, so the subspace error is best with
more rows clipped: ``kappa`` = 30 by default, chosen on a simulated log-normal factor model (not on any bench data
set; docs/bounds.md gives the sweep). t is public (d, p, μ_m) and falls to 0 as ε grows, so that R then covers
every row. The count of rows beyond R is private; it is read from one noisy histogram of the rows' norms:

* the grid ``R_b = R_0 γ^b``, b = 0, …, B, with ``R_B ≥ R_max``, the largest norm a row can have (post-processing
  of the released statistics and the box: :func:`max_norm`), B at most ``max_bins``;
* each party releases the counts of its rows' norms in the bins ``[R_b, R_{b+1})`` (the last bin open above; norms
  below R_0 are not counted) plus N(0, σ_r²) per count: one replaced record moves one count down and one up, L2
  sensitivity √2, so the release is μ_r-GDP with μ_r = √2/σ_r, its share of the preprocessing's μ²;
* ``R = R_{b*}``, b* the least b whose noisy tail ``T_b = Σ_{b' ≥ b} ñ_b'`` is at most t (``T_B = 0``:
  :func:`choose_radius`).

R_0 is public: for standardised rows ``c√d`` (their typical norm is √d by construction, so R never clips more than
the fixed radius did); for centred rows, whose typical norm nobody knows in advance, ``R_max / span``. The search
runs only when one count's noise ``σ_r √p`` is at most t and t < n (:func:`radius_runs`, public): otherwise the
counts could not tell t rows from none, or no radius could clip more than t rows (each individual as a party, for
one: t grows like √p), so R is the fixed radius and the budget goes to the sums. Row i depends on record i, the
declared bounds and the releases only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ddppm.core.errors import ConfigError
from ddppm.privacy.mechanisms import gaussian_release

HISTOGRAM_SENSITIVITY = float(np.sqrt(2.0))
"""L2 sensitivity of a party's histogram of its rows' norms under replace-one: one count −1, one +1."""
OPERATOR_KAPPA = float(2 * np.sqrt(2.0))
"""The κ of the operator-norm balance (module docstring): too few rows clipped for the subspace (docs/bounds.md)."""


@dataclass(frozen=True)
class RadiusPlan:
    """``common.preprocessing.radius``: whether the radius is ``adaptive``, its ``share`` of the preprocessing's μ²
    (what the private box leaves), κ (``kappa``) of the target count, the grid's ``ratio`` γ, at most ``max_bins``
    bins, and (centred rows) the grid's ``span`` R_max/R_0."""

    adaptive: bool = True
    share: float = 0.1
    kappa: float = 30.0
    ratio: float = float(np.sqrt(2.0))
    max_bins: int = 40
    span: float = 4096.0

    def __post_init__(self) -> None:
        if not 0 < self.share < 1:
            raise ConfigError(f"common.preprocessing.radius.share: {self.share!r} must lie in (0, 1)")
        if not self.kappa > 0:
            raise ConfigError(f"common.preprocessing.radius.kappa: {self.kappa!r} must be positive")
        if not self.ratio > 1 or self.max_bins < 1 or not self.span > 1:
            raise ConfigError("common.preprocessing.radius: ratio > 1, max_bins ≥ 1 and span > 1")

    @classmethod
    def from_section(cls, section: dict[str, Any]) -> RadiusPlan:
        keys = ("adaptive", "share", "kappa", "ratio", "max_bins", "span")
        return cls(**{key: section[key] for key in keys if key in section})


def target_clipped(d: int, parties: int, mu_method: float, kappa: float) -> float:
    """t = κ √(d p)/μ_m: how many rows the radius clips (module docstring)."""
    return float(kappa * np.sqrt(d * parties) / mu_method)


def radius_sigma(mu_radius: float) -> float:
    """Each party's noise per count for a μ_r-GDP histogram of norms."""
    return HISTOGRAM_SENSITIVITY / mu_radius


def radius_runs(sigma: float, parties: int, target: float, n: int | None = None) -> bool:
    """Whether the search runs (public inputs only): one count's noise in the total, σ_r √p, is at most t, and t is
    below n (at t ≥ n no radius would clip more than t rows, so the least one, R_0, is the answer unseen)."""
    return bool(sigma * np.sqrt(parties) <= target and (n is None or target < n))


def radius_grid(low: float, high: float, plan: RadiusPlan) -> np.ndarray:
    """``R_b = low·γ^b``, b = 0, …, B: the least B with ``R_B ≥ high``, at most ``plan.max_bins``."""
    bins = int(np.ceil(np.log(max(high, low) / low) / np.log(plan.ratio) - 1e-12)) if high > low else 0
    bins = min(max(bins, 0), plan.max_bins)
    return low * plan.ratio ** np.arange(bins + 1)


def norm_counts(norms: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """The counts of ``norms`` in ``[R_b, R_{b+1})``, b = 0, …, B − 1, the last bin open above (B = 0: none)."""
    bins = radii.size - 1
    if bins == 0:
        return np.zeros(0)
    index = np.searchsorted(radii, norms, side="right") - 1  # R_b ≤ norm < R_{b+1} → b; below R_0 → −1
    index = index[index >= 0]
    return np.bincount(np.minimum(index, bins - 1), minlength=bins).astype(float)


def choose_radius(noisy: np.ndarray, radii: np.ndarray, target: float) -> float:
    """``R_{b*}``: the least b whose noisy tail count ``Σ_{b' ≥ b} ñ_b'`` is at most ``target`` (``T_B = 0``)."""
    tails = np.append(np.cumsum(noisy[::-1])[::-1], 0.0)
    return float(radii[int(np.argmax(tails <= target))])


def max_norm(mean: np.ndarray, variance: np.ndarray, half: np.ndarray) -> float:
    """The largest norm a centred and scaled row can have: ``‖(half + |m̂|)/√v̂‖`` (``half``: each coordinate's
    bound before centring)."""
    return float(np.linalg.norm((half + np.abs(mean)) / np.sqrt(variance)))


def private_radius(
    norms: np.ndarray, radii: np.ndarray, sigma: float, parties: int, target: float, rng: Any
) -> float:  # fmt: skip
    """The released radius (module docstring): the p parties' noises enter each total count as one Gaussian of
    variance p σ² (the law of the sum of their releases)."""
    if radii.size == 1:  # nothing to choose: R_0 already covers every row
        return float(radii[0])
    noisy = gaussian_release(norm_counts(norms, radii), np.sqrt(parties) * sigma, rng)
    return choose_radius(noisy, radii, target)
