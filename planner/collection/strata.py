"""Strata of topics attached to a score matrix (from a topic metadata file or a mapping)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping

from ..errors import InputError, ParameterError, PlannerWarning
from ..scores import ScoreMatrix
from .text import few, is_text
from .topics import read_topics


def attach_strata(m: ScoreMatrix, strata) -> ScoreMatrix:
    """``m`` with per-topic strata from a topic metadata file (:func:`read_topics`,
    path or text) or a mapping topic -> stratum.

    - Every topic of ``m`` needs a stratum: otherwise an :class:`InputError`
      naming the file (a :class:`ParameterError` on ``strata`` for a mapping)
      with the count and the first few topic ids (and, when the file's own ids
      differ, a few of those: ``1`` vs ``001`` is the usual cause).
    - Topics the file or mapping names that ``m`` does not hold (e.g. metadata
      for a whole track when the scores cover part of it) are ignored with a
      :class:`~planner.errors.PlannerWarning` giving their count and the first
      few ids. Strata are only made from topics of ``m``: a label whose topics
      are all unknown creates no (empty) stratum; the warning names it.
    - An empty stratum label is an error.
    """
    if isinstance(strata, Mapping):
        mapping: dict[str, str] = {}
        for k, v in strata.items():
            if v is None or not str(v).strip():
                raise ParameterError(f"topic {str(k)!r} has an empty stratum", parameter="strata")
            mapping[str(k).strip()] = str(v).strip()
        src, where = None, "the strata mapping"
    else:
        tdf = read_topics(strata)
        src = None if is_text(strata) or isinstance(strata, bytes) else str(strata)
        if "stratum" not in tdf.columns:
            raise InputError("topic metadata has no 'stratum' column", file=src)
        mapping = dict(zip(tdf["topic"], tdf["stratum"]))
        where = src or "the strata text"
    held = set(m.topics)
    unknown = [t for t in mapping if t not in held]
    lacking = [t for t in m.topics if t not in mapping]
    if lacking:
        msg = (f"{len(lacking)} of the scores' {m.n_topics} topics have no stratum: {few(lacking)}"
               + (f" (topics it names that the scores lack: {few(unknown)})" if unknown else ""))
        if src is None and isinstance(strata, Mapping):
            raise ParameterError(msg, parameter="strata")
        raise InputError(msg, file=src)
    if unknown:
        used = {mapping[t] for t in m.topics}
        empty = [s for s in dict.fromkeys(mapping[t] for t in unknown) if s not in used]
        warnings.warn(f"{where}: {len(unknown)} topic(s) not in the scores ignored: {few(unknown)}"
                      + (f"; no stratum made for {few(empty)} (none of its topics are in the scores)"
                         if empty else ""),
                      PlannerWarning, stacklevel=3)
    return m.with_strata({t: mapping[t] for t in m.topics}, source=src)
