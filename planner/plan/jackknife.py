"""The jackknife interval of a planning variance, for the counts that rise with it alone.

The count of an interval-width target, and of every classical design, is a monotone function of
one variance learnt from the collection (a quantile of the pairs' variances, or a pooled one).
Per-topic differences are heavy-tailed: a few topics carry much of a pair's variance. A
collection that lacks them has a low variance, and its topic resamples, which cannot draw them
either, spread too little around it: the percentile interval of the resampled counts held the
whole collection's width count in 78-98% of 20-25-topic draws, every miss low. The delete-one
jackknife's standard error of the log variance, with a t quantile, held it in 87-100% over 60
draws, 90% or more on 25 of 27 rows (docs/research/calibration.md, twelfth session); the
stratified version (:func:`factors_from_strata`) held a stack's count in 90-100%
(``benchmarks/bench_stack_coverage.py``, thirteenth session).

Those draws were judged against the whole collection's count. Against the count of the population
of topics, which a plan is for, the symmetric interval held 93% on average (87-97% by row, 200
draws), and its misses were lopsided: the population's count lay above the upper end in 5.7% of
draws and below the lower one in 1.1%. A draw that lacks the heavy topics falls short of the
population's variance further than a draw with them overshoots it. The interval's two arms are
therefore set apart (:data:`JACKKNIFE_ARMS`; docs/research/calibration.md, sixteenth session).

Since a monotone map keeps what an interval covers, the interval is made on the variance and
mapped to counts by the caller: :func:`variance_factors` gives the factors on the variance at
the two ends. Nothing is random.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = ["JACKKNIFE_ARMS", "MAX_GROUPS", "VarianceFactors", "factors_from_fits", "factors_from_strata",
           "leave_out_masks", "variance_factors"]

#: the most leave-out fits: delete-one up to this many topics, else this many groups of topics
MAX_GROUPS = 100
#: the jackknife interval's arms on the log variance, below and above, as multiples of ``t se``.
#: Symmetric (1, 1), the power and width designs' 95% interval held the population's count in 93.2%
#: of 20-50-topic draws (mean of 27 collection and measure rows, 86.9-97.2% by row; implied from
#: draws without replacement), the count above the upper end in 5.7%, below the lower in 1.1%.
#: Part of that lean was the planning variance's own: planned on the pairs' median-unbiased
#: variances (:func:`planner.plan.pairs.median_unbiased_factors`) the designs need arms less far
#: apart. At (0.9, 1.2) with those variances: 94.6% (91.2-96.9%), above in 2.5%, below in 2.9%
#: (200 draws; with replacement 95.1%); the ``ci_width`` target of ``size_for_target``, on the same
#: variances, 94.6% (91.4-96.8%), above in 2.5%, below in 2.9% (on plain variances, before
#: 2026-12-05: 95.0%, 90.7-97.8%, above in 3.2%, below in 1.8%, its median count 0.88-0.99 of the
#: whole collection's where now 0.90-1.02).
#: A calibration chosen on ../shared/data's matrices (docs/research/calibration.md, sixteenth and
#: seventeenth sessions)
JACKKNIFE_ARMS = (0.9, 1.2)


@dataclass(frozen=True)
class VarianceFactors:
    """The ends of the jackknife interval of a planning variance, as factors on the collection's.

    Attributes
    ----------
    low, high : float
        The variance at the interval's lower (upper) end over the collection's; ``high`` is
        ``inf`` when a leave-out fit has no variance (the data cannot bound it).
    groups : int
        The leave-out fits (the topics, or :data:`MAX_GROUPS` groups of them).
    grouped : bool
        True when each fit left out a group of topics rather than one topic.
    se : float
        The jackknife standard error of the log variance.
    strata : int
        The strata whose topics were left out one stratum at a time (1: no strata).
    """

    low: float
    high: float
    groups: int
    grouped: bool
    se: float
    strata: int = 1

    def note(self, variance: str = "planning variance") -> str:
        """How the interval was computed, in words (an :class:`~planner.results.Interval`'s note), naming
        the ``variance`` it was made on."""
        arms = "{:g} t se below and {:g} t se above on the log scale".format(*JACKKNIFE_ARMS)
        if self.strata > 1:
            unit = f"topics (or up to {MAX_GROUPS} groups of them)" if self.grouped else "topics"
            return (f"stratified jackknife t interval of the {variance}, {arms}, {unit} left out of one stratum "
                    f"at a time, {self.groups} fits")
        left = f"{self.groups} groups of topics" if self.grouped else "each topic"
        return f"jackknife t interval of the {variance}, {arms}, {left} left out in turn"


def leave_out_masks(topics: int) -> tuple[list[np.ndarray], bool]:
    """The jackknife's leave-out fits as boolean masks of the topics kept: each topic left out in
    turn, or with more than :data:`MAX_GROUPS` topics the groups ``j mod MAX_GROUPS``; and whether
    they are groups."""
    G = min(topics, MAX_GROUPS)
    idx = np.arange(topics) % G
    return [idx != g for g in range(G)], topics > G


def factors_from_fits(whole: float, fits: np.ndarray, level: float, grouped: bool) -> VarianceFactors:
    """:func:`variance_factors` from the variance of all topics (``whole``) and of each leave-out fit
    (``fits``, in :func:`leave_out_masks` order), when the caller fits them itself (one fit serving
    several variances)."""
    return factors_from_strata(whole, [fits], level, grouped)


def factors_from_strata(whole: float, fits: Sequence[np.ndarray], level: float, grouped: bool) -> VarianceFactors:
    """The stratified jackknife: :func:`factors_from_fits` when the topics fall in strata and each
    stratum's leave-out fits (``fits[k]``, topics left out of stratum ``k`` alone) vary its own part.

    ``se^2 = sum_k (G_k - 1) / G_k sum_i (log v_ki - mean_i log v_ki)^2`` over the strata's ``G_k``
    fits, and the Student quantile has ``sum_k (G_k - 1)`` degrees of freedom: one stratum is the
    delete-one jackknife. The factors are ``exp(-a t se)`` and ``exp(b t se)``, ``(a, b)``
    :data:`JACKKNIFE_ARMS`.
    """
    G, K = sum(f.size for f in fits), len(fits)
    if not whole > 0:           # no variance at all: every count is the least one
        return VarianceFactors(1.0, 1.0, G, grouped, 0.0, K)
    # a leave-out fit without variance (or, for a ratio, without a denominator) bounds nothing
    if not all(np.all(np.isfinite(f) & (f > 0)) for f in fits):
        return VarianceFactors(0.0, np.inf, G, grouped, np.inf, K)
    logs = [np.log(f) for f in fits]
    se = float(np.sqrt(sum((g.size - 1) / g.size * np.sum((g - g.mean()) ** 2) for g in logs)))
    half = float(stats.t.ppf(0.5 + level / 2, max(G - K, 1))) * se
    below, above = JACKKNIFE_ARMS
    return VarianceFactors(float(np.exp(-below * half)), float(np.exp(above * half)), G, grouped, se, K)


def variance_factors(variance: Callable[[np.ndarray], float], topics: int, level: float) -> VarianceFactors:
    """The ``level`` interval of ``variance(keep)`` (``keep``: a boolean mask of the topics) from the
    delete-one jackknife on the log scale, as factors on ``variance`` of all topics.

    ``exp(-a t se)`` and ``exp(b t se)``, ``se`` the jackknife standard error of ``log variance``
    over ``G`` leave-out fits (:func:`leave_out_masks`: each topic, or with more than
    :data:`MAX_GROUPS` topics the groups ``j mod G``), ``t`` the Student quantile with ``G - 1``
    degrees of freedom and ``(a, b)`` :data:`JACKKNIFE_ARMS`.

    Examples
    --------
    >>> x = np.array([1.0, 3.0, 2.0, 8.0, 4.0, 5.0])
    >>> f = variance_factors(lambda keep: float(np.var(x[keep], ddof=1)), x.size, 0.95)
    >>> f.groups, round(f.low, 3), round(f.high, 3)
    (6, 0.13, 15.255)
    """
    masks, grouped = leave_out_masks(topics)
    whole = variance(np.ones(topics, dtype=bool))
    return factors_from_fits(whole, np.array([variance(keep) for keep in masks]), level, grouped)
