"""Informative-topic filtering: drop the topics on which the systems cannot differ."""

from __future__ import annotations

import math

from ..errors import ParameterError
from ..scores import ScoreMatrix
from .checks import complete_matrix

__all__ = ["filter_informative"]


def filter_informative(scores, *, lo: float = 0.0, hi: float = 1.0,
                       min_spread: float = 0.0) -> tuple[ScoreMatrix, tuple[str, ...]]:
    """Drop uninformative topics; returns ``(filtered matrix, removed topic ids)``.

    A topic is removed when every system scores ``<= lo``, or every system
    scores ``>= hi``, or its across-system range ``max - min`` is below
    ``min_spread``. The filtered mean is not comparable with the unfiltered one.

    Parameters
    ----------
    scores : ScoreMatrix, path, DataFrame or array
        What :func:`planner.simulate.predict` accepts.
    lo, hi : float, optional
        A topic on which every system scores at most ``lo`` (or at least ``hi``) goes.
    min_spread : float, optional
        A topic whose across-system range is below this goes.

    Returns
    -------
    (ScoreMatrix, tuple of str)
        The filtered matrix and the ids of the removed topics.

    Raises
    ------
    ParameterError
        A bad bound, or fewer than 2 topics left.

    Examples
    --------
    >>> import numpy as np
    >>> from planner.simulate import filter_informative
    >>> x = np.array([[0.0, 0.4, 1.0, 0.6], [0.0, 0.2, 1.0, 0.5]])
    >>> m, removed = filter_informative(x)
    >>> m.topics, removed
    (('t2', 't4'), ('t1', 't3'))
    """
    m = complete_matrix(scores)     # what predict accepts (a ScoreMatrix, path, DataFrame or array)
    for name, v in (("lo", lo), ("hi", hi), ("min_spread", min_spread)):
        if not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ParameterError(f"expected a finite number, got {v!r}", parameter=name)
    if min_spread < 0:
        raise ParameterError(f"must be >= 0, got {min_spread}", parameter="min_spread")
    if not lo < hi:
        raise ParameterError(f"the low bound must be below the high bound, got lo {lo:g} and hi {hi:g}",
                             parameter="lo")
    x = m.topic_scores()
    drop = (x <= lo).all(axis=0) | (x >= hi).all(axis=0) | ((x.max(axis=0) - x.min(axis=0)) < min_spread)
    removed = tuple(t for t, d in zip(m.topics, drop) if d)
    if (~drop).sum() < 2:
        raise ParameterError(f"filtering leaves {(~drop).sum()} topic(s); relax lo/hi/min_spread",
                             parameter="min_spread")
    return m.take(topics=~drop), removed
