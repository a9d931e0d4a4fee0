"""Query variants (or seeds) stacked into the third axis of a score matrix, with strata."""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np

from .._checks import check_int
from ..errors import InputError, ParameterError
from ..scores import ScoreMatrix
from .load import as_matrix
from .strata import attach_strata
from .text import is_text


def stack_variants(scores, *, divisor: int = 1000) -> ScoreMatrix:
    """Turn a 2-D matrix whose topic ids encode ``topic * divisor + variant`` (CLEF eHealth
    2016 query variations) into a 3-D ``(S, T, V)`` matrix.

    Parameters
    ----------
    scores : ScoreMatrix or path or DataFrame or array_like
        Anything :func:`as_matrix` takes; a matrix that already has variants is returned as is.
    divisor : int
        The multiplier of the topic number in the query ids (>= 2). Every topic must have
        the same set of variant numbers, and all variants of a topic the same stratum.

    Returns
    -------
    ScoreMatrix
        ``values[s, t, v]``, topics in order of first appearance, variants sorted.

    Examples
    --------
    >>> import numpy as np
    >>> m = ScoreMatrix.build(np.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]]),
    ...                       ["a", "b"], ["101001", "101002", "102001", "102002"])
    >>> stack_variants(m, divisor=1000)
    ScoreMatrix(?: 2 systems x 2 topics x 2 variants)
    """
    m = as_matrix(scores)
    if m.has_variants:
        return m
    div = check_int(divisor, "divisor", minimum=2)
    ids = _query_ids(m, div)
    top, var = zip(*(divmod(i, div) for i in ids))
    topics = list(dict.fromkeys(top))
    variants = sorted(set(var))
    if len(topics) < 2:
        raise ParameterError(f"{div} maps all {len(ids)} query ids to topic {topics[0]} (ids must be "
                             f"topic * {div} + variant); use the divisor the ids were built with",
                             parameter="divisor")
    pos = {(t, v): j for j, (t, v) in enumerate(zip(top, var))}
    out = np.full((m.n_systems, len(topics), len(variants)), np.nan)
    for i, t in enumerate(topics):
        for k, v in enumerate(variants):
            j = pos.get((t, v))
            if j is None:
                raise InputError(f"topic {t} has no variant {v} (query id {t * div + v})", file=m.source)
            out[:, i, k] = m.values[:, j]
    strata = None if m.strata is None else _topic_strata(m.strata, top, var, div, m.source)
    return ScoreMatrix.build(out, m.systems, [str(t) for t in topics], measure=m.measure,
                             strata=strata, variants=[str(v) for v in variants], missing="keep",
                             source=m.source, warn=False)


def _query_ids(m: ScoreMatrix, div: int) -> list[int]:
    """The topic ids of ``m`` as integers (Python integers: exact for ids of any length)."""
    ids = []
    for t in m.topics:
        try:
            ids.append(int(t) if str(t).strip().lstrip("+-").isdigit() else int(float(t)))
        except (ValueError, OverflowError):
            raise InputError(f"topic id {t!r} is not a number (expected topic * {div} + variant)",
                             file=m.source) from None
    return ids


def _topic_strata(strata: tuple[str, ...], top: tuple[int, ...], var: tuple[int, ...], div: int,
                  source: str | None) -> list[str]:
    """One stratum a topic, from the strata of its query ids (which must agree)."""
    first: dict[int, tuple[str, int]] = {}
    for t, v, s in zip(top, var, strata):
        if first.setdefault(t, (s, v))[0] != s:
            s0, v0 = first[t]
            raise InputError(f"topic {t} has variants in two strata ({s0!r} for query id "
                             f"{t * div + v0}, {s!r} for {t * div + v}); a stratum belongs to "
                             "a topic, so all its variants need the same one", file=source)
    return [first[t][0] for t in dict.fromkeys(top)]


def stack_with_strata(m: ScoreMatrix, divisor: int, strata=None) -> ScoreMatrix:
    """:func:`stack_variants` (query ids ``topic * divisor + variant``), then
    the strata of :func:`attach_strata`, named by topic (``101``) or, as before stacking, by
    query id (``101001``; all variants of a topic must share one stratum, otherwise an error
    naming the strata file, the topic and two of its query ids). When neither fits, the error
    is the one for topic ids."""
    m3 = stack_variants(m, divisor=divisor)
    if strata is None:
        return m3
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = attach_strata(m3, strata)
        except (InputError, ParameterError) as by_topic:
            try:
                with warnings.catch_warnings(record=True) as caught_q:
                    warnings.simplefilter("always")
                    by_query = attach_strata(m, strata)
            except (InputError, ParameterError):
                raise by_topic from None
            caught = caught_q
            try:    # m itself stacked above: the only error left is variants of a topic in two strata
                out = stack_variants(by_query, divisor=divisor)
            except InputError as e:
                if isinstance(strata, Mapping):
                    raise ParameterError(e.message, parameter="strata") from None
                src = None if is_text(strata) or isinstance(strata, bytes) else str(strata)
                raise InputError(e.message, file=src) from None
    for w in caught:
        warnings.warn(w.message, w.category, stacklevel=2)
    return out
