"""A lower bound on ε from a test's true- and false-positive counts (Jagielski, Ullman & Oprea 2020; Nasr et al.
2021), with Clopper–Pearson intervals.

If a mechanism is (ε, δ)-DP, every test that says "X′" on its output obeys, for the neighbours X and X′,
``TPR ≤ e^ε FPR + δ`` and, for the complementary test, ``1 − FPR ≤ e^ε (1 − TPR) + δ`` (TPR = P(say X′ | X′),
FPR = P(say X′ | X)). With a one-sided lower confidence bound on TPR and an upper one on FPR (each at
``(1 − level)/2``), ``ε ≥ max(ln((TPR_lo − δ)/FPR_hi), ln((1 − FPR_hi − δ)/(1 − TPR_lo)))`` holds with probability at
least ``level``. The test (a statistic among candidates, and its threshold) is chosen on draws kept apart from
those counted (:func:`audit_scores`), so the choice costs no confidence.

**Resolution.** With N draws per side the upper bound on FPR is at least about ``−ln(β)/N`` even when no false
positive occurs, so no bound exceeds ``ln(N/ln(1/β))``; and a gap in δ below about ``(1 + e^ε)·sqrt(ln(1/β)/(2N))``
cannot be resolved (:func:`resolvable_delta_gap`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

LEVEL = 0.95


def clopper_pearson(successes: int, trials: int, level: float = LEVEL) -> tuple[float, float]:
    """The two-sided Clopper–Pearson interval of a binomial proportion; each side has ``(1 − level)/2``."""
    from scipy.stats import beta

    alpha = 1.0 - level
    lo = 0.0 if successes == 0 else float(beta.ppf(alpha / 2, successes, trials - successes + 1))
    hi = 1.0 if successes == trials else float(beta.ppf(1 - alpha / 2, successes + 1, trials - successes))
    return lo, hi


def epsilon_lower_bound(true_pos: int, positives: int, false_pos: int, negatives: int, delta: float,
                        level: float = LEVEL) -> float:  # fmt: skip
    """The ε every (ε, δ)-DP mechanism must exceed to let a test reach these counts, with confidence ``level``
    (0 when the counts prove nothing)."""
    tpr_lo, _ = clopper_pearson(true_pos, positives, level)
    _, fpr_hi = clopper_pearson(false_pos, negatives, level)
    bounds = [0.0]
    if tpr_lo - delta > 0 and fpr_hi > 0:
        bounds.append(math.log((tpr_lo - delta) / fpr_hi))
    if 1 - fpr_hi - delta > 0 and tpr_lo < 1:
        bounds.append(math.log((1 - fpr_hi - delta) / (1 - tpr_lo)))
    return max(bounds)


@dataclass(frozen=True)
class AuditResult:
    """The bound and the counts it rests on: the test says X′ when statistic ``statistic`` (a column of the scores)
    exceeds ``threshold``."""

    eps_lower: float
    threshold: float
    true_pos: int
    false_pos: int
    draws: int
    statistic: int = 0


def _best_threshold(select_x: np.ndarray, select_p: np.ndarray, delta: float, level: float,
                    candidates: int) -> tuple[float, float]:  # fmt: skip
    """The threshold (among ``candidates`` quantiles of the pooled sorted scores, tails resolved finely) whose bound
    on these draws is largest, and that bound."""
    pooled = np.concatenate([select_x, select_p])
    tails = np.logspace(-7, -1, candidates // 2)  # the bound at small δ lives in the tails: resolve them finely
    levels = np.clip(np.concatenate([np.linspace(0.0, 1.0, candidates), tails, 1.0 - tails]), 0.0, 1.0)
    thresholds = np.unique(np.quantile(pooled, levels))
    best, best_threshold = -1.0, float(thresholds[0])
    for threshold in thresholds:
        tp = select_p.size - int(np.searchsorted(select_p, threshold, side="right"))
        fp = select_x.size - int(np.searchsorted(select_x, threshold, side="right"))
        bound = epsilon_lower_bound(tp, select_p.size, fp, select_x.size, delta, level)
        if bound > best:
            best, best_threshold = bound, float(threshold)
    return best, best_threshold


def audit_scores(scores_x: np.ndarray, scores_x_prime: np.ndarray, delta: float, level: float = LEVEL,
                 candidates: int = 200) -> AuditResult:  # fmt: skip
    """The lower bound on ε from scores of the observer's view under X and under X′ (larger means "X′").

    Scores are one statistic per draw (shape ``(N,)``) or several candidate statistics (``(N, S)``). Each sample is
    split in halves: the first halves choose the statistic and its threshold (the pair whose bound from the first
    halves is largest), the second halves are counted, so the choice among many tests costs no confidence.
    ``draws`` is the number counted per side.
    """
    scores_x, scores_x_prime = np.asarray(scores_x, float), np.asarray(scores_x_prime, float)
    if scores_x.ndim == 1:
        scores_x, scores_x_prime = scores_x[:, None], scores_x_prime[:, None]
    half_x, half_p = scores_x.shape[0] // 2, scores_x_prime.shape[0] // 2
    choices = [(*_best_threshold(np.sort(scores_x[:half_x, s]), np.sort(scores_x_prime[:half_p, s]), delta, level,
                                 candidates), s) for s in range(scores_x.shape[1])]  # fmt: skip
    _, threshold, statistic = max(choices, key=lambda choice: choice[0])
    count_x, count_p = scores_x[half_x:, statistic], scores_x_prime[half_p:, statistic]
    tp, fp = int(np.sum(count_p > threshold)), int(np.sum(count_x > threshold))
    eps = epsilon_lower_bound(tp, count_p.size, fp, count_x.size, delta, level)
    return AuditResult(eps, threshold, tp, fp, int(min(count_x.size, count_p.size)), int(statistic))


def resolvable_delta_gap(eps: float, draws: int, level: float = LEVEL) -> float:
    """About the smallest excess of δ a black-box test with ``draws`` per side can see at ε:
    ``(1 + e^ε)·sqrt(ln(1/β)/(2N))``, β = (1 − level)/2 (Hoeffding on each rate)."""
    beta_side = (1.0 - level) / 2
    return (1.0 + math.exp(eps)) * math.sqrt(math.log(1.0 / beta_side) / (2.0 * draws))


def verdict(eps_lower: float, eps: float) -> str:
    """``violated`` when the measured lower bound exceeds the claimed ε, else ``consistent`` (evidence, never
    proof)."""
    return "violated" if eps_lower > eps else "consistent"
