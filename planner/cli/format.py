"""Printing: ``--json`` output with its provenance, and the cells of text tables."""

from __future__ import annotations

import argparse
import json
import shlex
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .errors import PROG

if TYPE_CHECKING:
    from ..results import Interval


def print_json(obj: object, args: argparse.Namespace | None = None) -> None:
    """Print ``obj`` as JSON (NaN/inf become null).

    With the command's ``args``, a dict gets a ``provenance`` entry: the command line and the
    versions behind its numbers.

    Examples
    --------
    >>> print_json({"n": float("nan"), "m": [1, 2]})
    {
      "n": null,
      "m": [
        1,
        2
      ]
    }
    """
    from .._json import plain  # numpy: not imported for a usage error or --help

    if args is not None and isinstance(obj, dict) and "provenance" not in obj:
        from ..report import versions  # heavy (pandas): only output with provenance needs it

        argv = getattr(args, "argv", None)
        obj = {**obj, "provenance": {"command": None if argv is None else shlex.join([PROG, *argv]),
                                     "versions": versions()}}
    print(json.dumps(plain(obj), indent=2, allow_nan=False))


def cell(value: float | None, width: int = 8, spec: str = ".4f") -> str:
    """A number right-aligned in ``width`` characters, or ``-`` for None and NaN.

    Examples
    --------
    >>> cell(0.12345), cell(None), cell(float("nan"), 4)
    ('  0.1235', '       -', '   -')
    """
    if value is None or value != value:
        return f"{'-':>{width}}"
    return f"{value:{width}{spec}}"


def dash(value: object, spec: str) -> str:
    """``format(value, spec)``, or ``-`` for None."""
    return "-" if value is None else format(value, spec)


def span(values: Iterable[float]) -> str:
    """The range of shares as percentages: ``"12%"`` when they round alike, else ``"10-14%"``."""
    xs = list(values)
    lo, hi = 100 * min(xs), 100 * max(xs)
    return f"{lo:.0f}%" if round(lo) == round(hi) else f"{lo:.0f}-{hi:.0f}%"


def words_or(names: Iterable[str]) -> str:
    """``"a, b or c"``.

    Examples
    --------
    >>> words_or(["analytic", "bootstrap", "subsample"])
    'analytic, bootstrap or subsample'
    """
    xs = list(names)
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " or " + xs[-1]


def plan_line(ivl: Interval) -> str | None:
    """The lead line of a count with an interval on n (a :class:`planner.results.Interval`): the
    count to plan with (:attr:`~planner.results.Interval.plan_n`), or that there is none when the
    upper end is unbounded; ``None`` without an interval.

    Examples
    --------
    >>> from planner.results import Interval, IntervalMethod
    >>> plan_line(Interval(192, 356, 0.95, IntervalMethod.TOPIC_RESAMPLING, 100))
    "  plan with     356 topics (enough at 95%: the interval's upper end)"
    >>> plan_line(Interval.none("no resamples")) is None
    True
    """
    from ..results import IntervalMethod  # numpy: not imported for a usage error or --help

    if ivl.plan_n is not None:
        return f"  plan with     {ivl.plan_n} topics (enough at {ivl.level:.0%}: the interval's upper end)"
    if ivl.how is IntervalMethod.NONE:
        return None
    return (f"  plan with     no count: at {ivl.level:.0%} the interval's upper end is unbounded "
            "(these topics cannot bound it; judge more)")
