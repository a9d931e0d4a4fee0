"""Argument checks shared by the public functions of :mod:`planner.simulate`.

Examples
--------
>>> from planner.simulate.checks import topic_counts
>>> topic_counts(25)
(25,)
>>> topic_counts([10, 1])
Traceback (most recent call last):
...
planner.errors.ParameterError: topics: topic counts must be integers >= 2, got 1
"""

from __future__ import annotations

import numpy as np

from .._random import as_generator, draw_seed
from ..errors import ParameterError
from ..methods import METHODS, Method, method_names
from ..policies import COMPLETE_POLICIES
from ..scores import ScoreMatrix
from ..variance import as_matrix

__all__ = ["MAX_RESAMPLES", "MAX_TOPICS", "check_method", "complete_matrix", "seed_to_use", "topic_counts"]


def complete_matrix(scores, parameter: str = "scores") -> ScoreMatrix:
    """A complete ScoreMatrix of at least 2 systems and 2 topics (variants averaged).

    Accepts what :func:`planner.fit` accepts (``variance.as_matrix``): a ScoreMatrix,
    a path (:func:`planner.load_scores`), a wide DataFrame that names its rows or a 2-D
    array (systems x topics; :data:`planner.collection.load.ORIENTATION`); anything else is a
    :class:`ParameterError` on ``parameter``.
    """
    m = as_matrix(scores, parameter)
    if m.has_variants:
        m = m.collapse_variants()
    where = f" ({m.source})" if m.source else ""
    for n, what in ((m.n_systems, "systems"), (m.n_topics, "topics")):
        if n < 2:
            raise ParameterError(f"need at least 2 {what} to simulate, got {n}{where}", parameter=parameter)
    if m.has_missing:
        ways = ", ".join(repr(p) for p in COMPLETE_POLICIES if p != "error")
        raise ParameterError(f"the simulator needs a complete matrix (missing cells found; load with missing={ways})",
                             parameter=parameter)
    return m


def check_method(method) -> Method:
    """The registered method called ``method``, or a :class:`ParameterError` listing them all."""
    if not isinstance(method, str) or method not in METHODS:
        raise ParameterError(f"unknown method {method!r}; expected one of " + ", ".join(method_names()),
                             parameter="method")
    return METHODS[method]


def seed_to_use(rng, method: Method):
    """``rng`` itself, or a drawn integer seed when ``rng`` is None and ``method`` draws
    random numbers, so that the seed can be recorded and the result repeated."""
    if rng is None and method.random:
        return draw_seed()
    as_generator(rng)       # a bad rng is an error before any work
    return rng


#: largest topic count a curve is computed for (the planner's searches stop there too)
MAX_TOPICS = 10_000_000
#: most resamples (replicates) one simulation draws; far beyond any Monte Carlo need
MAX_RESAMPLES = 1_000_000


def topic_counts(topics) -> tuple[int, ...]:
    """``topics`` (one int or a list) as distinct integer counts in ``[2, MAX_TOPICS]``."""
    if isinstance(topics, (str, bytes)):
        raise ParameterError(f"expected integer topic counts (a list, or one int), got the string {topics!r}",
                             parameter="topics")
    if isinstance(topics, (int, np.integer)):
        topics = [topics]
    try:
        out = tuple(int(n) for n in topics)
    except (TypeError, ValueError):
        raise ParameterError("expected a list of integer topic counts", parameter="topics") from None
    if not out:
        raise ParameterError("no topic counts given", parameter="topics")
    for n, raw in zip(out, topics):
        if n != raw or n < 2:
            raise ParameterError(f"topic counts must be integers >= 2, got {raw!r}", parameter="topics")
        if n > MAX_TOPICS:
            raise ParameterError(f"topic counts must be at most {MAX_TOPICS:,}, got {n}", parameter="topics")
    if len(set(out)) != len(out):
        raise ParameterError("repeated topic count", parameter="topics")
    return out
