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
import math
from typing import Any

import numpy as np

from ._json import plain

__all__ = ["Interval", "IntervalMethod", "ResultMixin", "short_repr"]


class IntervalMethod(enum.Enum):
    """How an interval was computed."""

    #: counts (or statistics) re-solved on topic resamples of the collection; percentile interval
    TOPIC_RESAMPLING = "topic resampling"
    #: topic-resampling counts corrected for the collection's size (planner.plan.calibrate)
    CALIBRATED = "calibrated topic resampling"
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

    def contains(self, value: float) -> bool:
        """True when ``value`` lies in the interval (an unbounded end holds everything beyond it)."""
        lo = -math.inf if self.low is None else self.low
        hi = math.inf if self.high is None else self.high
        return self.how is not IntervalMethod.NONE and lo <= value <= hi

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``how`` as its text)."""
        return {"low": plain(self.low), "high": plain(self.high), "level": self.level,
                "how": self.how.value, "n_resamples": self.n_resamples, "note": self.note}

    def __repr__(self) -> str:
        if self.how is IntervalMethod.NONE:
            return f"Interval(none: {self.note})" if self.note else "Interval(none)"
        return f"Interval({_num(self.low)}, {_num(self.high)}, level={self.level:g}, {self.how.value})"


def _num(v: object) -> str:
    if v is None:
        return "None"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.4g}"
    return repr(v)


def short_repr(obj: object, fields: tuple[str, ...]) -> str:
    """``Name(field=value, ...)`` for the named fields only, numbers to 4 significant digits."""
    parts = []
    for f in fields:
        v = getattr(obj, f)
        parts.append(f"{f}={_num(v) if not isinstance(v, Interval) else repr(v)}")
    return f"{type(obj).__name__}({', '.join(parts)})"


class ResultMixin:
    """``to_dict`` (JSON-ready, nested results and intervals included) and ``to_frame`` (one row)
    for a result dataclass; a class overrides ``to_frame`` when it holds a table."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            out[f.name] = _to_plain(v)
        return out

    def to_frame(self):  # -> pandas.DataFrame
        import pandas as pd

        row = {k: v for k, v in self.to_dict().items() if not isinstance(v, (dict, list))}
        return pd.DataFrame([row])


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
