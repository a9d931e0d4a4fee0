"""TREC qrels: ``topic iteration doc grade``."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ..errors import InputError, ParameterError
from .interop import qrels_mapping
from .text import decode, parse_int, read_bytes

#: largest |grade| a qrels line may carry: trec_eval (pytrec_eval) allocates per grade level,
#: and a grade of 2^31 - 1 took 79 s and 16.8 GB for two topics (10^6: 1 s, +8 MB)
_MAX_GRADE = 1_000_000


class Qrels(dict[str, dict[str, int]]):
    """Relevance judgments: ``{topic: {doc: grade}}`` (a dict), with ``source``.

    Examples
    --------
    >>> q = Qrels({"101": {"d1": 2, "d2": 0}}, source="toy")
    >>> q, q.n_judgments
    (Qrels(1 topics, 2 judgments), 2)
    """

    source: str | None = None
    _frame: tuple[tuple[int, int], pd.DataFrame] | None = None

    def __init__(self, data: Mapping | None = None, *, source: str | None = None):
        super().__init__({str(t): {str(d): int(g) for d, g in docs.items()}
                          for t, docs in (data or {}).items()})
        self.source = source

    @property
    def n_judgments(self) -> int:
        return sum(len(d) for d in self.values())

    def to_frame(self) -> pd.DataFrame:
        """One row a judgment: ``query_id``, ``doc_id``, ``relevance``."""
        rows = [(t, d, g) for t, docs in self.items() for d, g in docs.items()]
        return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])

    def cached_frame(self) -> pd.DataFrame:
        """:meth:`to_frame`, kept on the object (keyed by its size, so that a Qrels edited in
        place afterwards is converted again); do not modify the frame."""
        sig = (len(self), self.n_judgments)
        if self._frame is None or self._frame[0] != sig:
            self._frame = (sig, self.to_frame())
        return self._frame[1]

    def __repr__(self) -> str:
        return f"Qrels({len(self)} topics, {self.n_judgments} judgments)"


def _checked(judgments: dict[str, dict[str, int]], source: str | None) -> Qrels:
    """A Qrels of judgments given in memory; a grade out of range is an error."""
    worst = max((abs(g) for docs in judgments.values() for g in docs.values()), default=0)
    if worst > _MAX_GRADE:
        message = f"grade {worst} is out of range (at most {_MAX_GRADE} in absolute value)"
        raise InputError(message, file=source) if source else ParameterError(message, parameter="qrels")
    return Qrels(judgments, source=source)


def read_qrels(path_or_text) -> Qrels:
    """Read TREC qrels: 4 columns ``topic iteration doc grade`` (integer grade).

    A repeated ``(topic, doc)`` pair with a different grade is an error; an exact
    repeat is ignored.

    Parameters
    ----------
    path_or_text : str or os.PathLike or bytes or Mapping or Qrels or object
        A path (compression detected), the text itself, or judgments already in
        memory: ``{topic: {doc: grade}}`` (pytrec_eval), a ranx ``Qrels``, a trectools
        ``TrecQrel``, a pandas frame (``query_id, doc_id, relevance``), ir_measures or
        ir_datasets records, an ir_datasets data set or ``"irds:<id>"``
        (:mod:`planner.collection.interop`), returned as a :class:`Qrels`.

    Returns
    -------
    Qrels

    Examples
    --------
    >>> q = read_qrels("101 0 d1 2\\n101 0 d2 0\\n102 0 d1 1\\n")
    >>> q
    Qrels(2 topics, 3 judgments)
    >>> q["101"]
    {'d1': 2, 'd2': 0}
    """
    if isinstance(path_or_text, Qrels):
        return path_or_text
    converted = qrels_mapping(path_or_text)
    if converted is not None:
        return _checked(*converted)
    data, source = read_bytes(path_or_text, what="qrels")
    text = decode(data, source)
    out: dict[str, dict[str, int]] = {}
    n = 0
    for i, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 4:
            raise InputError(f"expected 4 columns (topic iteration doc grade), found {len(parts)}",
                             file=source, line=i)
        t, _, d, g = parts
        try:
            grade = parse_int(g)
        except ValueError:
            raise InputError(f"grade must be an integer, found {g!r}", file=source, line=i) from None
        if not -_MAX_GRADE <= grade <= _MAX_GRADE:
            raise InputError(f"grade {g} is out of range (at most {_MAX_GRADE} in absolute value)",
                             file=source, line=i)
        docs = out.setdefault(t, {})
        if d in docs and docs[d] != grade:
            raise InputError(f"document {d!r} judged twice for topic {t!r} with different grades "
                             f"({docs[d]} and {grade})", file=source, line=i)
        docs[d] = grade
        n += 1
    if n == 0:
        raise InputError("empty qrels file", file=source)
    q = Qrels.__new__(Qrels)
    dict.__init__(q, out)
    q.source = source
    return q

