"""The centred PCA in the records' units (``standardize="center"``; the bench's ``common.preprocessing.scale:
false``): scikit-learn's ``PCA`` of the records, whose directions depend on every feature's unit. Two routes, by
what the method releases and whether the declared bounds put the features in different units (:func:`mixed_units`:
widths a hundred times apart or more; public):

* **Recoloured** (:func:`recolours`): on mixed units, a method that releases one noisy second-moment matrix ``M̂``
  (:attr:`~ddppm.common_task.base.CommonTaskMethod.second_moment`) runs as for the standardised PCA (the same
  private box, mean, variances and radius: the same releases and certificate), and its answer is the top k of
  ``diag(s) M̂ diag(s)`` (:func:`recoloured_top_k`), with ``s_j`` each feature's released standard deviation in the
  records' units (:func:`record_scales`): post-processing. The noise, added in standardised units, shrinks with
  each feature's scale, so directions that lie in small-unit features survive it.
* **One common scale**: otherwise, the method runs on the rows centred privately at one common scale factor
  (:func:`~ddppm.common_task.preprocessing.common_scale`; no variances released). Their second moment is the
  centred covariance's up to that factor, and a power method's noise is relative to its largest eigenvalue: on
  mixed units the second eigengap is 10⁻⁶ to 10⁻⁹ of the first, so directions after the first drown (measured:
  docs/release.md). Their first direction is better this way than recoloured rows (0.05 against 0.08 at ε = 5,
  n = 342, d = 4, 12 seeds: the variances' share of the budget goes to the mean, and the radius is searched on the
  centred norms). On features of one unit the common scale is the better route for every method: standardising
  them divides a near-constant feature by its small spread and clips the rows where it is not (Digits, 8 × 8 pixel
  counts, at ε = 10⁴: 0.002 against 0.036 recoloured).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ddppm.common_task.base import top_k

UNIT_RATIO = 100.0
"""Declared bounds whose widths differ by this factor or more mark features in different units
(:func:`mixed_units`). Two orders of magnitude: where the leading directions lie among the wider features and the
widths differ less, the common scale is the better route (``benchmarks/bench_release.py --target centred``, widths
30× apart, n = 10⁴, d = 10, ε = 1: 0.019 at k = 1 and 0.027 at k = 2 by the common scale, 0.046 and 0.063
recoloured)."""


def mixed_units(bounds: Any) -> bool:
    """Whether the declared bounds put the features in different units: their widths differ by
    :data:`UNIT_RATIO` or more (public: the bounds alone, never the records)."""
    widths = np.asarray(bounds.upper, float) - np.asarray(bounds.lower, float)
    return bool(widths.max() >= UNIT_RATIO * widths.min())


def recolours(method: Any, standardize: bool | str, bounds: Any) -> bool:
    """Whether a release of ``method`` with ``standardize`` on ``bounds`` takes the recoloured route: a centred
    release, a method with a second moment, features in mixed units (module docstring)."""
    return standardize == "center" and bool(getattr(method, "second_moment", False)) and mixed_units(bounds)


def raw_units(bounds: Any, box: Any, d: int, common: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(A, B)`` with the rows the sums see equal to ``(x − A)/B`` per feature, in the records' units: the public
    preparation ``(x − c)/(h√d)`` (c, h: the bounds' midpoint and half-width), then, when a private box ran, its
    ``(z − mid)/(half·√d)``: ``B = H√d`` with H the box's half-widths in the records' units. ``common``: one B for
    every feature, the box's half-diagonal ``‖H‖`` (the common scale's, and a centred release's ``scale_``)."""
    centre, half_width = (bounds.lower + bounds.upper) / 2, (bounds.upper - bounds.lower) / 2
    if box is None:
        offset, unit = centre, half_width * np.sqrt(d)
    else:
        mid, half = (box.lower + box.upper) / 2, (box.upper - box.lower) / 2
        offset, unit = centre + half_width * np.sqrt(d) * mid, half_width * half * d
    if common:
        unit = np.full(d, np.linalg.norm(unit) / np.sqrt(d))
    return offset, unit


def record_scales(bounds: Any, box: Any, variance: np.ndarray) -> np.ndarray:
    """Each feature's released standard deviation in the records' units: ``B_j √v̂_j`` (:func:`raw_units`)."""
    return raw_units(bounds, box, variance.shape[0])[1] * np.sqrt(variance)


def released_units(bounds: Any, box: Any, released: Any, d: int, standardize: bool | str
                   ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``mean_`` and ``scale_`` in the records' units: the released mean, and the released standard deviations
    (standardised) or one common factor (centred, either route: ``transform`` is scikit-learn's up to it);
    ``released`` None (not centred): zero and the public row bound."""
    if released is None:
        return np.zeros(d), np.full(d, bounds.row_scale)
    common = standardize == "center"
    offset, unit = raw_units(bounds, box, d, common=common and released.variance is None)
    mean = offset + unit * released.mean
    if common:
        return mean, raw_units(bounds, box, d, common=True)[1]
    return mean, unit * np.sqrt(released.variance)


def recoloured_top_k(second_moments: np.ndarray, scales: np.ndarray, k: int) -> np.ndarray:
    """The top k of ``diag(s) M̂ diag(s)`` for each noisy second moment ``M̂`` of the standardised rows (shape
    ``(runs, d, d)``): the centred covariance's directions in the records' units. ``s`` is normalised to
    ``max(s) = 1`` first (a common factor changes no direction; it keeps the products in range)."""
    s = scales / scales.max()
    return top_k(second_moments * s[:, None] * s[None, :], k)


def method_estimate(method: Any, task: Any, calibrated: Any, rngs: Any, options: dict[str, Any],
                    scales: np.ndarray | None) -> np.ndarray:  # fmt: skip
    """The method's estimates (runs × d × k) on ``task``: its own, or (``scales`` given: the recoloured route) the
    top k of its second moment recoloured by ``scales``."""
    if scales is None:
        return method.common_estimate(task, calibrated, rngs, options)
    return recoloured_top_k(method.common_second_moment(task, calibrated, rngs, options), scales, task.k)
