"""Which methods are competitive, from paired comparisons: the best method, those not significantly worse, and
whether any beats chance.

Errors come as a table with one row per run and one column per method, where run r of every method shares its
common random numbers (the same data draw, in the method map) or at least is independent of every other run (the
common task, where the data are fixed): the paired differences ``e_j,r − e_best,r`` are then independent across
runs, and Student's t gives their 95 % interval whatever the correlation between the two methods. A method is in
the **competitive set** when that interval reaches 0: it is not significantly worse than the best (the method of
least mean error, always a member). The answer **separates** when the set has one member.

**Chance.** A uniformly random k-subspace of R^d has mean squared subspace error exactly ``1 − k/d``
(:func:`ddppm.common_task.task.chance_error` is its square root). The best method **beats chance** when the 95 %
upper bound of its mean squared error is below ``1 − k/d``: squared errors, because the mean error of a random guess
sits below the root mean square, so comparing mean errors with ``sqrt(1 − k/d)`` would let a random guess "beat"
chance.

The intervals are per comparison (no correction for testing several methods against the best), and a caller that
adds runs until the answer separates (:mod:`ddppm.studies.method_map`) tests repeatedly: the nominal 95 % is then
approximate. Both are stated wherever the sets are reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

LEVEL = 0.95
"""The level of every interval."""


@lru_cache(maxsize=4096)
def student_quantile(q: float, dof: int) -> float:
    """Student's t quantile ``q`` with ``dof`` degrees of freedom (``scipy.stats.t.ppf``), computed once per
    argument pair: a summary asks for the same few thousands of times, and scipy's distribution machinery costs
    more than the rest of an interval."""
    from scipy.stats import t as student_t

    return float(student_t.ppf(q, dof))


def mean_interval(values: np.ndarray, level: float = LEVEL) -> tuple[float, float, float]:
    """Mean of ``values`` and its two-sided Student-t interval (NaN bounds for fewer than two values; zero width
    when every value is equal)."""
    values = np.asarray(values, float)
    mean = float(values.mean()) if values.size else np.nan
    if values.size < 2:
        return mean, np.nan, np.nan
    half = float(student_quantile(0.5 + level / 2, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size))
    return mean, mean - half, mean + half


@dataclass(frozen=True)
class Ranking:
    """The answer at one point: the best method, the competitive set (best first, then by mean error), each
    method's interval and paired difference to the best, and whether the best beats chance."""

    best: str
    members: tuple[str, ...]
    table: pd.DataFrame
    beats_chance: bool
    runs: int

    @property
    def separated(self) -> bool:
        """One method is significantly better than every other."""
        return len(self.members) == 1


def rank_methods(errors: pd.DataFrame, chance_mse: float, level: float = LEVEL) -> Ranking:
    """Rank the methods (columns of ``errors``, one row per paired run; NaN rows dropped) by mean error.

    Parameters
    ----------
    errors
        Subspace errors, one column per method and one row per run; run r of every column is paired. A method may
        lack some runs (NaN): its mean uses its own runs, its difference to the best the runs both have.
    chance_mse
        The mean squared error of a uniformly random subspace, ``1 − k/d``.
    level
        The level of the intervals.

    Returns
    -------
    Ranking
        With ``table`` columns ``method``, ``error_mean``, ``error_lo``, ``error_hi`` (its own interval),
        ``diff_mean``, ``diff_lo``, ``diff_hi`` (paired, against the best), ``competitive``, ``runs``.
    """
    errors = errors.dropna(axis=1, how="all").dropna(axis=0, how="all")
    if errors.shape[1] == 0 or errors.shape[0] == 0:
        raise ValueError("rank_methods: no method with a run")
    means = errors.mean(axis=0).sort_values(kind="stable")
    best = str(means.index[0])
    # Columns as arrays, once: the same values pandas' column access gives, without its cost per access.
    column = {method: errors[method].to_numpy(float) for method in means.index}
    best_errors = column[best]
    rows = []
    for method in means.index:
        own = column[method]
        mean, lo, hi = mean_interval(own[~np.isnan(own)], level)
        # Paired over the runs both methods have (a method given more runs than another is compared on the shared
        # ones; its mean uses all of its own).
        paired = own - best_errors
        diff, diff_lo, diff_hi = mean_interval(paired[~np.isnan(paired)], level)
        competitive = method == best or not diff_lo > 0  # NaN (one run) keeps a method in: nothing separates it
        rows.append({"method": method, "error_mean": mean, "error_lo": lo, "error_hi": hi, "diff_mean": diff,
                     "diff_lo": diff_lo, "diff_hi": diff_hi, "competitive": bool(competitive),
                     "runs": int((~np.isnan(own)).sum())})  # fmt: skip
    table = pd.DataFrame(rows)
    _, _, mse_hi = mean_interval(best_errors[~np.isnan(best_errors)] ** 2, level)
    beats = bool(mse_hi < chance_mse)
    members = tuple(table.loc[table["competitive"], "method"])
    return Ranking(best, members, table, beats, int(errors.shape[0]))
