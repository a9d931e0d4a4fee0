"""The paired topic bootstrap: how sure the collection is of its own system ordering.

Topics are resampled with replacement (the same topics for every system, so every pair is
compared on per-topic differences); for the two best systems it gives the percentile interval
of their mean difference and the share of resamples that reverse their order, and over all
pairs the mean reversal rate. A resample whose difference is exactly 0 counts half; a pair
with no observed difference has reversal rate 0.5.

Examples
--------
>>> import planner
>>> from planner.plan import paired_bootstrap
>>> m = planner.datasets.load("dl19-passage", measure="nDCG@10")
>>> b = paired_bootstrap(m, n_resamples=200, alpha=0.05, rng=1)
>>> b.n_topics, b.best_system
(43, 'idst_bert_p1')
>>> b.diff_top2_interval.contains(b.diff_top2), b.diff_top2_interval.how.value
(True, 'percentile')
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..results import Interval, IntervalMethod, ResultMixin

__all__ = ["PairedBootstrap", "paired_bootstrap"]

#: pairs of systems whose resampled differences are held at once (memory: CHUNK x resamples floats)
CHUNK = 2000


@dataclass(frozen=True, repr=False)
class PairedBootstrap(ResultMixin):
    """What the paired topic bootstrap says about a collection.

    Attributes
    ----------
    n_systems, n_topics : int
        The matrix's shape.
    grand_mean : float
        Mean score over systems and topics.
    best_system, second_system : str
        The system with the highest mean, and the best one that is not identical to it on
        every topic (a duplicate run would lead by 0 with the interval [0, 0]).
    best_mean, second_mean : float
        Their mean scores.
    identical_to_best : tuple of str
        Systems identical to the best on every topic (skipped as the second).
    diff_top2 : float
        ``best_mean - second_mean``.
    diff_top2_interval : Interval
        The ``1 - alpha`` percentile interval of that difference over the resamples
        (``how`` is ``PERCENTILE``).
    reversal_top2 : float
        Share of resamples that reverse the top two (ties half).
    reversal_mean_pairs : float
        Mean over all pairs of their reversal rate.
    pairs_reversal_over_5pct : float
        Share of pairs whose reversal rate exceeds 0.05.
    alpha : float
        One minus the interval's coverage.
    n_resamples : int
        Number of resamples.
    """

    n_systems: int
    n_topics: int
    grand_mean: float
    best_system: str
    best_mean: float
    second_system: str
    second_mean: float
    identical_to_best: tuple[str, ...]
    diff_top2: float
    diff_top2_interval: Interval
    reversal_top2: float
    reversal_mean_pairs: float
    pairs_reversal_over_5pct: float
    alpha: float
    n_resamples: int

    _repr_fields = ("n_topics", "best_system", "second_system", "diff_top2", "diff_top2_interval")


def _resampled_means(x: np.ndarray, rng: np.random.Generator, n_resamples: int) -> np.ndarray:
    """Each system's mean over ``n_resamples`` topic resamples (the same topics for all): (S, R)."""
    s, t = x.shape
    idx = rng.integers(0, t, size=(n_resamples, t))
    boot = np.empty((s, n_resamples))
    for i in range(s):                      # memory S * resamples floats
        boot[i] = x[i][idx].mean(axis=1)
    return boot


def _pair_reversals(boot: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Every pair's share of resamples against its observed order (ties half; 0.5 for no difference)."""
    ia, ib = np.triu_indices(len(means), 1)
    obs_sign = np.sign(means[ia] - means[ib])
    rev = np.empty(len(ia))
    for start in range(0, len(ia), CHUNK):
        sl = slice(start, start + CHUNK)
        d = boot[ia[sl]] - boot[ib[sl]]
        rev[sl] = np.mean(np.sign(d) == -obs_sign[sl, None], axis=1) + 0.5 * np.mean(d == 0, axis=1)
    return np.where(obs_sign == 0, 0.5, rev)


def paired_bootstrap(scores, *, n_resamples: int = 1000, alpha: float = 0.05, rng=None) -> PairedBootstrap:
    """The paired topic bootstrap of a score matrix's systems.

    Parameters
    ----------
    scores : planner.scores.ScoreMatrix
        Systems x topics scores.
    n_resamples : int, optional
        Topic resamples.
    alpha : float, optional
        The interval's coverage is ``1 - alpha``.
    rng : int, numpy.random.Generator or None, optional
        The random stream (a generator is used as it is).

    Returns
    -------
    PairedBootstrap

    Examples
    --------
    >>> import planner
    >>> m = planner.datasets.load("dl19-passage", measure="nDCG@10")
    >>> b = paired_bootstrap(m, n_resamples=100, rng=3)
    >>> 0 <= b.reversal_top2 <= 1 and 0 <= b.reversal_mean_pairs <= 0.5
    True
    """
    rng = np.random.default_rng(rng)
    x = scores.topic_scores()
    means = x.mean(axis=1)
    order = np.argsort(-means, kind="stable")
    a = int(order[0])
    same = [int(j) for j in order[1:] if np.array_equal(x[int(j)], x[a])]
    b = next((int(j) for j in order[1:] if int(j) not in same), int(order[1]))
    boot = _resampled_means(x, rng, n_resamples)
    d_ab = boot[a] - boot[b]
    obs = means[a] - means[b]
    lo, hi = np.quantile(d_ab, [alpha / 2, 1 - alpha / 2])
    rev_ab = float(np.mean(np.sign(d_ab) == -np.sign(obs)) + 0.5 * np.mean(d_ab == 0)) if obs != 0 else 0.5
    rev = _pair_reversals(boot, means)
    return PairedBootstrap(
        n_systems=x.shape[0], n_topics=x.shape[1], grand_mean=float(x.mean()),
        best_system=scores.systems[a], best_mean=float(means[a]),
        second_system=scores.systems[b], second_mean=float(means[b]),
        identical_to_best=tuple(scores.systems[j] for j in same),
        diff_top2=float(obs),
        diff_top2_interval=Interval(float(lo), float(hi), 1 - alpha, IntervalMethod.PERCENTILE, n_resamples),
        reversal_top2=rev_ab, reversal_mean_pairs=float(rev.mean()),
        pairs_reversal_over_5pct=float(np.mean(rev > 0.05)), alpha=alpha, n_resamples=n_resamples)
