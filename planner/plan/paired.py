"""Two topic counts compared resample by resample (:func:`paired_difference`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..results import Interval, IntervalMethod, ResultMixin
from .checks import check_prob

__all__ = ["PairedDifference", "paired_difference"]


@dataclass(frozen=True, repr=False)
class PairedDifference(ResultMixin):
    """Two topic counts compared resample by resample (:func:`paired_difference`).

    Attributes
    ----------
    diff_median : float or None
        The median of ``n_b - n_a`` over the resamples (``None`` when infinite).
    interval : Interval
        The percentile interval of ``n_b - n_a`` (``how`` is ``PERCENTILE``; an infinite end is
        ``None``, i.e. unbounded).
    share_b_more, share_equal, share_b_fewer : float
        Shares of resamples where ``n_b`` is larger, equal, smaller.
    separated : str or None
        ``"b more"`` when the whole interval is above 0, ``"b fewer"`` when below, else ``None``.

    Examples
    --------
    >>> d = paired_difference([50, 52, 49, 51], [60, 61, 58, 63])
    >>> d
    PairedDifference(diff_median=9, interval=Interval(9, 12, level=0.95, percentile), separated='b more')
    >>> d.to_dict()["share_b_more"], d.to_frame().shape
    (1.0, (1, 11))
    """

    diff_median: float | None
    interval: Interval
    share_b_more: float
    share_equal: float
    share_b_fewer: float
    separated: str | None

    _repr_fields = ("diff_median", "interval", "separated")


def _paired_iv(n_a: Any, n_b: Any, confidence_level: Any) -> tuple[np.ndarray, np.ndarray, float]:
    try:
        a = np.asarray(n_a, dtype=float)
        b = np.asarray(n_b, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError("expected two vectors of resampled topic counts (numbers)",
                             parameter="n_a") from None
    if np.isnan(a).any() or np.isnan(b).any():
        raise ParameterError("resampled topic counts cannot be NaN", parameter="n_a")
    if a.shape != b.shape or a.ndim != 1 or a.size < 2:
        raise ParameterError(f"expected two equal-length vectors of at least 2 resampled counts, got "
                             f"shapes {a.shape} and {b.shape}", parameter="n_b")
    return a, b, check_prob(confidence_level, "confidence_level")


def _finite(v: float) -> float | None:
    """JSON-safe, as TargetResult's bounds: ``None`` for an infinite end."""
    return v if math.isfinite(v) else None


def paired_difference(n_a: Any, n_b: Any, *, confidence_level: float = 0.95) -> PairedDifference:
    """Two topic counts compared resample by resample.

    Parameters
    ----------
    n_a, n_b : array of float
        The smallest n of each topic resample for two questions asked of the same topics with
        the same resamples (:attr:`TargetResult.resampled_n` of two :func:`size_for_target`
        calls with the same seed on the same topic list, e.g. two measures of the same runs).
        Because each resample draws the same topics for both, the difference ``n_b - n_a``
        varies far less than the two intervals on n suggest when the two agree on which topics
        are hard. A resample where neither reaches the target within ``n_max`` counts as equal
        (difference 0); where only one does, the difference is infinite.
    confidence_level : float, optional
        Level of the interval of the difference.

    Returns
    -------
    PairedDifference
        Its ``interval`` is the percentile interval of ``n_b - n_a``: the ``k``-th smallest and
        the ``k``-th largest of the ``R`` differences, ``k = ceil(R (1 - confidence_level) / 2)``,
        so that swapping ``n_a`` and ``n_b`` negates the interval exactly (``n_resamples = R``).

    Examples
    --------
    >>> d = paired_difference([50, 52, 49, 51], [60, 61, 58, 63])
    >>> d.interval.low, d.interval.high, d.separated
    (9.0, 12.0, 'b more')
    """
    a, b, level = _paired_iv(n_a, n_b, confidence_level)
    both = np.isinf(a) & np.isinf(b)
    d = np.where(both, 0.0, b - np.where(both, 0.0, a))
    srt = np.sort(d)
    k = max(1, math.ceil(d.size * round((1 - level) / 2, 12)))
    lo, hi = float(srt[k - 1]), float(srt[d.size - k])
    med = float(np.quantile(d, 0.5, method="inverted_cdf"))
    return PairedDifference(
        diff_median=_finite(med),
        interval=Interval(_finite(lo), _finite(hi), level, IntervalMethod.PERCENTILE, int(d.size)),
        share_b_more=float(np.mean(d > 0)), share_equal=float(np.mean(d == 0)),
        share_b_fewer=float(np.mean(d < 0)), separated="b more" if lo > 0 else "b fewer" if hi < 0 else None)
