"""Argument checks and input coercion shared by the planning functions.

One validator per concept (a cost, a probability, a quantile, the number of topic resamples
of an interval on n, a complete score matrix). Each returns the clean value or raises a
:class:`~planner.errors.ParameterError` naming the argument, as scipy's ``_iv`` functions
do, so that the planning functions read straight through after their checks.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._checks import check_min_diff
from .._json import plain as _json_plain
from ..errors import InputError, ParameterError
from ..scores import ScoreMatrix
from ..variance import as_matrix

__all__ = ["MAX_COST", "MAX_INTERVAL_RESAMPLES", "N_MAX", "as_scores", "check_cost", "check_interval_resamples",
           "check_min_diff", "check_prob", "check_quantile", "complete_values", "plain"]

#: largest topic count any search goes to
N_MAX = 10_000_000
#: largest cost of a topic, judgment or variant, and largest total budget: beyond it the costs of
#: up to N_MAX topics would overflow to inf (1e308 per topic) or print as 300-digit numbers
MAX_COST = 1e15
#: most topic resamples behind an interval on n (each one is a whole re-solve)
MAX_INTERVAL_RESAMPLES = 100_000


def plain(obj: Any) -> Any:
    """Plain-Python copy for ``to_dict()``; NaN and inf are kept (planner._json)."""
    return _json_plain(obj, finite=False)


def check_cost(v: object, name: str) -> float:
    """A cost or budget as a float in [0, MAX_COST], or a ParameterError naming ``name``."""
    try:
        x = float(v)  # type: ignore[arg-type]  # anything float() takes; the rest is the error below
    except (TypeError, ValueError):
        raise ParameterError(f"must be a number >= 0, got {v!r}", parameter=name) from None
    if not (x >= 0 and math.isfinite(x)):
        raise ParameterError(f"must be a number >= 0, got {v}", parameter=name)
    if x > MAX_COST:
        raise ParameterError(f"must be at most {MAX_COST:.0e}, got {x:g}".replace("e+", "e"), parameter=name)
    return x


def check_prob(x: object, name: str) -> float:
    """A number strictly between 0 and 1 (a power, an interval level), or a ParameterError."""
    try:
        v = float(x)  # type: ignore[arg-type]  # anything float() takes; the rest is the error below
    except (TypeError, ValueError):
        raise ParameterError(f"expected a number, got {x!r}", parameter=name) from None
    if not (0 < v < 1) or not math.isfinite(v):
        extra = " (a power of 1 needs infinitely many topics)" if name == "power" and v >= 1 else ""
        raise ParameterError(f"must be strictly between 0 and 1, got {x}{extra}", parameter=name)
    return v


def check_quantile(quantile: float) -> float:
    """A quantile over pairs in percent, in (0, 100]."""
    if not 0 < quantile <= 100:
        raise ParameterError(f"must be in (0, 100], got {quantile}", parameter="quantile")
    return quantile


def check_interval_resamples(resamples: object) -> int:
    """The number of topic resamples of an interval on n: 0 (no interval) or 2 to
    ``MAX_INTERVAL_RESAMPLES``."""
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)):
        # True / False would be read as 1 / 0, 2.0 or inf as numbers: an integer or nothing
        raise ParameterError(f"expected an integer, got {resamples!r}", parameter="n_resamples")
    r = int(resamples)
    if r < 0 or r == 1 or r > MAX_INTERVAL_RESAMPLES:
        raise ParameterError(f"must be 0 (no interval) or an integer from 2 to {MAX_INTERVAL_RESAMPLES:,}, "
                             f"got {resamples!r}", parameter="n_resamples")
    return r


def as_scores(scores: Any, parameter: str = "scores") -> ScoreMatrix:
    """A ScoreMatrix from what :func:`planner.fit` accepts (ScoreMatrix, path, wide DataFrame that
    names its rows, systems x topics array: :data:`planner.collection.load.ORIENTATION`), with at
    least 2 systems and 2 topics. A ScoreMatrix is returned as it is (after the size check)."""
    if not isinstance(scores, ScoreMatrix):
        scores = as_matrix(scores, parameter)
    if scores.n_systems < 2 or scores.n_topics < 2:
        raise InputError(f"need at least 2 systems and 2 topics, got {scores.n_systems} system(s) x "
                         f"{scores.n_topics} topic(s)", file=getattr(scores, "source", None))
    return scores


def complete_values(scores: Any) -> np.ndarray:
    """The complete (S, T) values: a 2-D array is taken as systems x topics (the resampling
    loops pass those); anything else goes through :func:`as_scores`."""
    if isinstance(scores, np.ndarray) and scores.ndim == 2:
        vals = np.asarray(scores, float)
        if vals.shape[0] < 2 or vals.shape[1] < 2:
            raise InputError(f"need at least 2 systems and 2 topics, got {vals.shape[0]} system(s) x "
                             f"{vals.shape[1]} topic(s)")
    else:
        vals = as_scores(scores).topic_scores()
    if np.isnan(vals).any():
        raise ParameterError("the score matrix has missing cells; planning needs a complete "
                             "matrix (load it with another missing-cell policy)", parameter="scores")
    return vals
