"""Pieces every result shares: the :class:`Interval`, short reprs, ``to_dict`` and ``to_frame``.

Examples
--------
>>> from planner.results import Interval, IntervalMethod
>>> iv = Interval(117, 161, 0.95, IntervalMethod.TOPIC_RESAMPLING, n_resamples=200)
>>> iv
Interval(117, 161, level=0.95, topic resampling)
>>> iv.to_dict()["how"]
'topic resampling'
>>> Interval.none("no resampling asked for").bounded
False
"""

from __future__ import annotations

import dataclasses
import enum
import html
import math
from typing import Any

import numpy as np

from ._json import plain

__all__ = ["Interval", "IntervalMethod", "ResultMixin", "html_view", "joint_need", "plan_binding", "short_repr"]


class IntervalMethod(enum.Enum):
    """How an interval was computed."""

    #: counts (or statistics) re-solved on topic resamples of the collection; percentile interval
    TOPIC_RESAMPLING = "topic resampling"
    #: a closed-form confidence interval (Feldt, Arteaga-Jeyaratnam-Franklin, t)
    ANALYTIC = "analytic"
    #: percentiles of the method's own resampled statistic
    PERCENTILE = "percentile"
    #: no interval: ``note`` says why
    NONE = "none"


@dataclasses.dataclass(frozen=True, repr=False)
class Interval:
    """A two-sided interval with its level and how it was computed.

    Attributes
    ----------
    low, high : float or int or None
        The ends; ``None`` when an end is unbounded or could not be computed
        (``high is None`` with a finite ``low``: the data cannot support a finite upper end).
    level : float
        The stated coverage, e.g. 0.95.
    how : IntervalMethod
        How it was computed.
    n_resamples : int
        Resamples behind it (0 for closed forms and for none).
    note : str
        What a reader must know (why there is none, what was re-estimated on each resample).
    """

    low: float | None
    high: float | None
    level: float
    how: IntervalMethod
    n_resamples: int = 0
    note: str = ""

    @classmethod
    def none(cls, note: str, level: float = 0.95) -> Interval:
        """No interval, with the reason."""
        return cls(None, None, level, IntervalMethod.NONE, 0, note)

    @property
    def bounded(self) -> bool:
        """True when both ends are finite numbers."""
        return all(v is not None and math.isfinite(v) for v in (self.low, self.high))

    @property
    def plan_n(self) -> float | None:
        """The count to plan with: the upper end, the count that suffices at the stated level.

        ``None`` when that end is unbounded (the data cannot support a finite count) or there is
        no interval. Every answer that leads with a count (CLI, reports, JSON) reads it here.

        Examples
        --------
        >>> Interval(117, 161, 0.95, IntervalMethod.TOPIC_RESAMPLING, 200).plan_n
        161
        >>> Interval(117, None, 0.95, IntervalMethod.TOPIC_RESAMPLING, 200).plan_n is None
        True
        """
        if self.how is IntervalMethod.NONE or self.high is None or not math.isfinite(self.high):
            return None
        return self.high

    def plan_bound(self, point: float | None) -> float:
        """The count to plan with of a target whose point count is ``point``, as a number to compare
        targets by: the upper end where this is an interval (``inf`` when unbounded: no finite count
        suffices), else ``point`` (``inf`` when not reached). The largest binds (:func:`plan_binding`).

        Examples
        --------
        >>> Interval(117, 161, 0.95, IntervalMethod.TOPIC_RESAMPLING, 200).plan_bound(130)
        161.0
        >>> Interval(117, None, 0.95, IntervalMethod.TOPIC_RESAMPLING, 200).plan_bound(130)
        inf
        >>> Interval.none("no resamples").plan_bound(130)
        130.0
        """
        if self.how is not IntervalMethod.NONE:
            return math.inf if self.plan_n is None else float(self.plan_n)
        return math.inf if point is None else float(point)

    def plan_count(self, point: float | None) -> int | None:
        """:meth:`plan_bound` as a topic count: rounded up, ``None`` where no finite count suffices
        (an unbounded upper end, or a target not reached). What budgets cost and depths are chosen by.

        Examples
        --------
        >>> Interval(36.2, 37.4, 0.95, IntervalMethod.ANALYTIC, 0).plan_count(24)
        38
        >>> Interval.none("no resamples").plan_count(None) is None
        True
        """
        bound = self.plan_bound(point)
        return None if math.isinf(bound) else math.ceil(bound)

    @property
    def resampled(self) -> bool:
        """True when the interval comes from topic resamples."""
        return self.how is IntervalMethod.TOPIC_RESAMPLING

    def contains(self, value: float) -> bool:
        """True when ``value`` lies in the interval (an unbounded end holds everything beyond it)."""
        lo = -math.inf if self.low is None else self.low
        hi = math.inf if self.high is None else self.high
        return self.how is not IntervalMethod.NONE and lo <= value <= hi

    def describe(self) -> str:
        """How the interval was computed, in words (what the CLI and reports print).

        Examples
        --------
        >>> Interval(117, 161, 0.95, IntervalMethod.TOPIC_RESAMPLING, 200, "analytic re-solve").describe()
        'topic resampling (200 resamples, analytic re-solve)'
        >>> Interval.none("no resampling asked for").describe()
        'none (no resampling asked for)'
        """
        if self.how is IntervalMethod.NONE:
            return f"none ({self.note})" if self.note else "none"
        if self.how is IntervalMethod.ANALYTIC:
            return self.note or "analytic"
        return (f"{self.how.value} ({self.n_resamples} resamples" + (f", {self.note}" if self.note else "")
                + ")")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``how`` as its text)."""
        return {"low": plain(self.low), "high": plain(self.high), "level": self.level,
                "how": self.how.value, "n_resamples": self.n_resamples, "note": self.note}

    def to_frame(self):  # -> pandas.DataFrame
        """One row: the fields of :meth:`to_dict`."""
        import pandas as pd

        return pd.DataFrame([self.to_dict()])

    def __repr__(self) -> str:
        if self.how is IntervalMethod.NONE:
            return f"Interval(none: {self.note})" if self.note else "Interval(none)"
        return f"Interval({_num(self.low)}, {_num(self.high)}, level={self.level:g}, {self.how.value})"


def _num(v: object) -> str:
    if v is None:
        return "None"
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.4g}"
    return repr(v)


def _short(v: object) -> str:
    """One field's value in a short repr: numbers to 4 digits (never ``np.float64(...)``),
    containers by their size, small ones element by element."""
    if isinstance(v, (Interval, enum.Enum)):
        return repr(v) if isinstance(v, Interval) else repr(v.value)
    if isinstance(v, np.ndarray):
        return f"<array {'x'.join(map(str, v.shape))}>"
    if isinstance(v, (list, tuple, dict)):
        items = [f"{_short(k)}: {_short(x)}" for k, x in v.items()] if isinstance(v, dict) else list(map(_short, v))
        text = ", ".join(items)
        if len(v) > 4 or len(text) > 40:
            return f"<{type(v).__name__} of {len(v)}>"
        return {dict: "{%s}", list: "[%s]"}.get(type(v), "(%s,)" if len(v) == 1 else "(%s)") % text
    if isinstance(v, str) and len(v) > 40:
        return repr(v[:37] + "...")
    if hasattr(v, "shape") and hasattr(v, "columns"):          # a DataFrame
        return f"<frame {v.shape[0]}x{v.shape[1]}>"
    return _num(v)


def html_view(title: str, rows: list[tuple[str, str]], *, frame=None, note: str | None = None) -> str:
    """A small HTML view for notebooks: a title, ``(name, value)`` rows, an optional note
    and an optional table (its first and last rows when long); every text escaped.

    Examples
    --------
    >>> html_view("R", [("n_topics", "50"), ("label", "<b>")])
    '<div><strong>R</strong><table><tr><th>n_topics</th><td>50</td></tr><tr><th>label</th><td>&lt;b&gt;</td></tr></table></div>'
    """
    parts = [f"<strong>{html.escape(title)}</strong>"]
    if note:
        parts.append(f"<p>{html.escape(note)}</p>")
    if rows:
        parts.append("<table>" + "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
                                         for k, v in rows) + "</table>")
    if frame is not None:
        parts.append(frame.to_html(max_rows=HTML_MAX_ROWS, max_cols=HTML_MAX_COLS, escape=True,
                                   float_format=lambda x: f"{x:.4g}", border=0))
    return "<div>" + "".join(parts) + "</div>"


#: rows and columns of a table a notebook view shows (the first and last halves)
HTML_MAX_ROWS = 12
HTML_MAX_COLS = 10


def short_repr(obj: object, fields: tuple[str, ...]) -> str:
    """``Name(field=value, ...)`` for the named fields only, numbers to 4 significant digits.

    Examples
    --------
    >>> import dataclasses
    >>> @dataclasses.dataclass
    ... class R:
    ...     n: int
    ...     x: float
    ...     rows: list
    >>> short_repr(R(3, 0.123456, list(range(10))), ("n", "x", "rows"))
    'R(n=3, x=0.1235, rows=<list of 10>)'
    """
    parts = [f"{f}={_short(getattr(obj, f))}" for f in fields]
    return f"{type(obj).__name__}({', '.join(parts)})"


class ResultMixin:
    """``to_dict`` (JSON-ready, nested results and intervals included), ``to_frame`` (one row)
    and a short ``repr`` for a result dataclass.

    A class overrides ``to_frame`` when it holds a table, and names the fields its repr shows
    in ``_repr_fields`` (default: the first four). A field with ``metadata={"raw": True}`` (raw
    draws) is left out of ``to_dict``. Declare the dataclass with ``repr=False`` so
    that this repr is used.

    Examples
    --------
    >>> import dataclasses
    >>> @dataclasses.dataclass(frozen=True, repr=False)
    ... class R(ResultMixin):
    ...     n_topics: int
    ...     interval: Interval
    >>> r = R(50, Interval(40, 70, 0.95, IntervalMethod.TOPIC_RESAMPLING, 200))
    >>> r
    R(n_topics=50, interval=Interval(40, 70, level=0.95, topic resampling))
    >>> r.to_dict()["interval"]["high"], list(r.to_frame().columns)[:3]
    (70, ['n_topics', 'interval_low', 'interval_high'])
    """

    _repr_fields: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict (intervals and nested results as dicts)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            if f.metadata.get("raw"):       # raw draws (resampled counts): kept, not written
                continue
            out[f.name] = _to_plain(getattr(self, f.name))
        return out

    def to_frame(self):  # -> pandas.DataFrame
        """One row: the scalar fields, an interval's parts as ``<name>_low``, ``<name>_high``, ..."""
        import pandas as pd

        row: dict[str, Any] = {}
        for k, v in self.to_dict().items():
            if isinstance(v, dict) and set(v) == {"low", "high", "level", "how", "n_resamples", "note"}:
                row.update({f"{k}_{part}": x for part, x in v.items()})
            elif not isinstance(v, (dict, list)):
                row[k] = v
        return pd.DataFrame([row])

    def _repr_names(self) -> tuple[str, ...]:
        return self._repr_fields or tuple(f.name for f in dataclasses.fields(self)[:4])  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return short_repr(self, self._repr_names())

    def _html_note(self) -> str | None:
        """A sentence a notebook view shows above the fields (none by default)."""
        return None

    def _repr_html_(self) -> str:
        """The notebook view: the repr's fields as a small table, and the result's own table
        (:meth:`to_frame`) when the class holds one."""
        values = {name: getattr(self, name) for name in self._repr_names()}
        rows = [(k, v if isinstance(v, str) else _short(v)) for k, v in values.items()]
        holds_table = type(self).to_frame is not ResultMixin.to_frame
        return html_view(type(self).__name__, rows, frame=self.to_frame() if holds_table else None,
                         note=self._html_note())


def _to_plain(v: object) -> Any:
    if isinstance(v, (Interval, ResultMixin)):
        return v.to_dict()
    if isinstance(v, enum.Enum):
        return v.value
    if isinstance(v, (list, tuple)):
        return [_to_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _to_plain(x) for k, x in v.items()}
    return plain(v)


def joint_need(results: list[Any]) -> tuple[int | None, Interval]:
    """Of results with a point count ``n_topics`` and an ``interval`` (one per target), what they
    need together: the largest point count (``None`` when a target is not reached) and the interval
    of the target that binds the plan (:func:`plan_binding`), whose :meth:`Interval.plan_bound` is
    the count to plan with. The largest point count lies in that interval: the binding target's
    lower end is below its own count, and its upper end above every target's.

    Examples
    --------
    >>> from types import SimpleNamespace as R
    >>> tr = IntervalMethod.TOPIC_RESAMPLING
    >>> swap = R(n_topics=216, interval=Interval(60, 342, 0.95, tr, 200))
    >>> power = R(n_topics=250, interval=Interval(200, 300, 0.95, tr, 200))
    >>> n, iv = joint_need([swap, power])
    >>> n, iv.plan_bound(n)
    (250, 342.0)
    >>> joint_need([swap, R(n_topics=None, interval=Interval.none("not reached"))])[0] is None
    True
    """
    if not results or any(r.n_topics is None for r in results):
        return None, Interval.none("a target is not reached")
    return max(int(r.n_topics) for r in results), plan_binding(results).interval


def plan_binding(results: list[Any]) -> Any:
    """Of results with an ``interval`` and a point count ``n_topics`` (one per target), the one that
    sets the count to plan with: the largest :meth:`Interval.plan_bound` (an unbounded upper end
    first), the larger point count on a tie, the first of equals. Every answer that names a binding
    target (``planner size``, ``planner budget``, a study's headline) reads it here.

    Examples
    --------
    >>> from types import SimpleNamespace as R
    >>> tr = IntervalMethod.TOPIC_RESAMPLING
    >>> a = R(n_topics=216, interval=Interval(60, 342, 0.95, tr, 200))
    >>> b = R(n_topics=238, interval=Interval(44, None, 0.95, tr, 200))
    >>> plan_binding([a, b]) is b
    True
    """
    return max(results, key=lambda r: (r.interval.plan_bound(r.n_topics),
                                       math.inf if r.n_topics is None else r.n_topics))
