"""Searches for the smallest topic count, and the quantiles of an interval on n.

Every statistic a plan solves for is monotone in the number of topics ``n``, so the
smallest ``n`` that meets a target is found by doubling and bisection: one problem at a
time (:func:`smallest_n`) or many at once, vectorised (:func:`smallest_n_vec`, used to
re-solve every topic resample of an interval on n together).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

from .. import methods
from .checks import N_MAX

__all__ = ["POWER_SPREAD", "RESAMPLE_SPREAD", "allow_unseen", "count_interval", "interval_quantiles",
           "resample_spread", "search_points", "smallest_n",
           "smallest_n_vec"]

#: the interval on n (:func:`count_interval`) stretches the resamples' spread about the count by
#: this factor on the log scale. The topic resamples of a collection spread its count less than topic
#: sets drawn from the population do (the draws' spread over the resamples', median 1.17 and 0.88-1.57
#: over 27 collection and measure rows): a draw that lacks the heavy topics cannot resample them. At
#: 1.3 the 95% swap interval holds the count of the population of topics in 95.1% of 20-50-topic draws
#: (mean of 27 rows, 89.5-99.3% by row; the count above its upper end in 2.5%); at 1, in 89.3% (81.6-97.5%).
#: A calibration chosen on ../shared/data's matrices (docs/research/calibration.md, fifteenth session)
RESAMPLE_SPREAD = 1.3

#: the stretch of the power target's interval (the mean over pairs of each pair's power), below and
#: above the count. Its resamples' spread falls short on one side: stretched by RESAMPLE_SPREAD on
#: both, the population's count lay above the upper end in 4.4% of 20-50-topic draws and below the
#: lower in 0.5% (200 draws of 27 rows; mean coverage 95.2%, 88.1-98.1% by row). A draw that lacks
#: the heavy topics cannot resample them, and without them every pair's variance, so the count, is
#: low, as for the designs' jackknife (:data:`planner.plan.jackknife.JACKKNIFE_ARMS`). At (0.9, 1.6):
#: above in 2.2%, below in 2.8%, mean 95.0% (89.6-98.2%). A calibration chosen on ../shared/data's
#: matrices (docs/research/calibration.md, nineteenth session)
POWER_SPREAD = (0.9, 1.6)


def resample_spread(target: methods.Target) -> tuple[float, float]:
    """The stretch (below, above the count) of the interval on n of ``target``'s count from topic
    resamples (:func:`count_interval`): :data:`POWER_SPREAD` for the power target,
    :data:`RESAMPLE_SPREAD` on both sides for the others (swap, reversal, Kendall tau)."""
    return POWER_SPREAD if target.needs_min_diff else (RESAMPLE_SPREAD, RESAMPLE_SPREAD)


def interval_quantiles(ns: np.ndarray, interval: float) -> tuple[float, float]:
    """The ends of the percentile interval of resampled topic counts.

    Parameters
    ----------
    ns : array of float
        The smallest n of each topic resample (``inf`` where none was found).
    interval : float
        The level; the ends are the ``(1 - interval) / 2`` and ``(1 + interval) / 2``
        quantiles (``inverted_cdf``: the ``ceil(R q)``-th smallest of ``R``). The tail is
        rounded to 12 decimals: ``(1 - 0.95) / 2`` is 0.025000000000000022 in floating point,
        which made the lower end the 6th smallest of 200 resamples instead of the 5th.

    Returns
    -------
    tuple of float
        ``(lower, upper)``; ``inf`` where unbounded.

    Examples
    --------
    >>> interval_quantiles(np.arange(1.0, 201.0), 0.95)
    (5.0, 195.0)
    """
    tail = round((1 - float(interval)) / 2, 12)
    lo, hi = np.quantile(ns, [tail, round(1 - tail, 12)], method="inverted_cdf")
    return float(lo), float(hi)


def count_interval(ns: np.ndarray, point: int, interval: float, n_min: int = 2,
                   spread: tuple[float, float] = (RESAMPLE_SPREAD, RESAMPLE_SPREAD)) -> tuple[int | None, int | None]:
    """The interval on n of the count ``point`` from the counts ``ns`` re-solved on topic resamples.

    The percentile interval of ``ns`` (:func:`interval_quantiles`), moved on the log scale so that
    the resamples' median falls on ``point`` and stretched about it by ``spread`` (below, above;
    the target's own: :func:`resample_spread`): ``point * (q / median(ns)) ** s`` for each end
    ``q`` and its side's ``s``. The resamples give the
    spread; the count of the collection itself gives the centre. A resample repeats topics, so it
    holds fewer distinct ones than the collection, and its counts sit off the collection's (below it
    for the pair rates of the deconvolved method); the plain percentile interval carries that offset,
    and held the whole collection's count in 85% of 20-topic draws where the moved one held it in 95%
    (docs/research/calibration.md). Ends are rounded outwards (the lower one to at least ``n_min``);
    ``None`` where unbounded. Where more than half of the resamples reach no count, the median is
    unbounded and the interval is the plain percentile one.

    Examples
    --------
    >>> count_interval(np.arange(1.0, 201.0), 100, 0.95)
    (2, 239)
    >>> count_interval(np.array([50.0, 60.0, 80.0, np.inf]), 100, 0.5)
    (78, 146)
    """
    lo, hi = interval_quantiles(ns, interval)
    med = float(np.quantile(ns, 0.5, method="inverted_cdf"))
    if np.isfinite(med) and med > 0:
        lo, hi = point * (lo / med) ** spread[0], point * (hi / med) ** spread[1]
    return (max(n_min, math.floor(lo)) if np.isfinite(lo) else None,
            math.ceil(hi) if np.isfinite(hi) else None)


def allow_unseen(upper: int | None, unseen: int | None) -> int | None:
    """The upper end of an interval on n (:func:`count_interval`) allowing for what no topic resample
    can see: at least ``unseen``, the count under the most mass near zero the collection's pairs
    allow (:func:`planner.simulate.priors.unseen_mass_weights`); ``None`` (unbounded) when either is.

    Examples
    --------
    >>> allow_unseen(179, 233), allow_unseen(300, 233), allow_unseen(179, None)
    (233, 300, None)
    """
    return None if upper is None or unseen is None else max(upper, unseen)


def smallest_n(ok: Callable[[int], bool], n_min: int, n_max: int = N_MAX) -> int | None:
    """Smallest integer n in [n_min, n_max] with ``ok(n)`` true (``ok`` monotone), else None.

    Examples
    --------
    >>> smallest_n(lambda n: n * n >= 1000, 2)
    32
    >>> smallest_n(lambda n: False, 2, 100) is None
    True
    """
    if ok(n_min):
        return n_min
    if n_max <= n_min:
        return None
    lo, hi = n_min, min(max(n_min + 1, 2 * n_min), n_max)
    while not ok(hi):
        lo = hi
        if hi >= n_max:
            return None
        hi = min(2 * hi, n_max)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def search_points(n_min: int, top: int) -> tuple[list[int], int]:
    """What :func:`smallest_n` over ``[n_min, top]`` may evaluate at most: its doubling points
    (``n_min``, then doubling up to ``top``) and the most bisection steps after one of them (each
    at a count below ``top``) (what the work of a search is bounded by: ``planner size --target``).

    Examples
    --------
    >>> search_points(2, 100)
    ([2, 4, 8, 16, 32, 64, 100], 6)
    """
    points = [n_min]
    hi = min(max(n_min + 1, 2 * n_min), top)
    while top > points[-1]:
        points.append(hi)
        hi = min(2 * hi, top)
    gap = max((b - a for a, b in itertools.pairwise(points)), default=1)
    return points, math.ceil(math.log2(gap))


def _grow(ok: Callable[[np.ndarray], np.ndarray], lo: np.ndarray, hi: np.ndarray, n_max: int) -> np.ndarray:
    """Doubling phase: raise ``hi`` until each problem meets ``ok`` (``lo``: largest n known to
    fail); returns the mask of problems with no n up to ``n_max``."""
    good = ok(hi.astype(float))
    inf = np.zeros(hi.size, dtype=bool)
    while True:
        bad = ~good & ~inf
        if not bad.any():
            return inf
        lo[bad] = hi[bad]
        at_max = bad & (hi >= n_max)
        inf |= at_max
        grow = bad & ~at_max
        hi[grow] = np.minimum(2 * hi[grow], n_max)
        good[grow] = ok(hi.astype(float))[grow]


def _halve(ok: Callable[[np.ndarray], np.ndarray], lo: np.ndarray, hi: np.ndarray, down: np.ndarray,
           n_min: int) -> None:
    """Halving phase: lower ``hi`` (known to meet ``ok``) of the problems ``down`` until the half
    fails (then ``lo``) or ``n_min`` is reached."""
    while True:
        down &= hi > n_min
        if not down.any():
            return
        cand = np.maximum(n_min, hi // 2)
        res = ok(np.where(down, cand, hi).astype(float))
        lo[down & ~res] = cand[down & ~res]
        down &= res
        hi[down] = cand[down]


def smallest_n_vec(ok: Callable[[np.ndarray], np.ndarray], size: int, n_min: int = 2,
                   n_max: int = N_MAX, start: int | None = None) -> np.ndarray:
    """Vectorised :func:`smallest_n` over ``size`` monotone problems.

    ``ok(n_array)`` returns a bool array (problem ``i`` at ``n_array[i]``). Returns the
    smallest n of each problem as floats (``inf`` where none up to ``n_max``). ``start``: a
    guess of the answers (e.g. the count the resampled problems vary around); the search
    halves or doubles from there instead of doubling from ``n_min``, with the same answers
    for monotone problems in fewer steps when the guess is close.

    Examples
    --------
    >>> smallest_n_vec(lambda n: n * np.array([1.0, 2.0, 0.0]) >= 10, 3, 2, 100)
    array([10.,  5., inf])
    >>> smallest_n_vec(lambda n: n * np.array([1.0, 2.0, 0.0]) >= 10, 3, 2, 100, start=7)
    array([10.,  5., inf])
    """
    lo = np.full(size, n_min - 1, dtype=np.int64)   # largest n known to fail (n_min - 1: none yet)
    hi = np.full(size, n_min, dtype=np.int64)
    if start is not None and n_min < start <= n_max:
        hi[:] = start
        good = ok(hi.astype(float))
        _halve(ok, lo, hi, good.copy(), n_min)
        lo[~good] = start
        hi[~good] = min(2 * int(start), n_max)
    inf = _grow(ok, lo, hi, n_max)
    while True:
        gap = ~inf & (hi - lo > 1)
        if not gap.any():
            break
        mid = (lo + hi) // 2
        res = ok(np.where(gap, mid, hi).astype(float))
        up = gap & res
        down = gap & ~res
        hi[up] = mid[up]
        lo[down] = mid[down]
    out = hi.astype(float)
    out[inf] = np.inf
    return out


def ceil_start(x: float) -> int:
    """``ceil(x)`` tolerant of rounding just above an integer (Sakai's starting values), at least 2."""
    return max(2, math.ceil(x - 1e-9))
