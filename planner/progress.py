"""Progress of the long steps: the one place that decides whether a bar is drawn, and where.

A long loop (the chunks of :func:`planner.predict`, the topic resamples of an interval on n,
the repeats of :func:`planner.validate`, the scenarios of a study) opens a bar with
:func:`bar` and calls the function it yields as work gets done. What the caller passed as
``progress`` decides what that does:

- ``False`` or ``None`` (the library's default): nothing;
- ``True``: a tqdm bar on standard error (a notebook widget under Jupyter, through
  ``tqdm.auto``);
- ``"auto"`` (the command line's default): a tqdm bar on standard error only when standard
  error is a terminal, erased when the step ends, so logs and pipes get nothing;
- a :class:`Share`: a slice of an outer bar (a study's scenario), which the inner loops fill.

Progress never touches a number: the loops do the same work with or without it.

Examples
--------
>>> with bar(False, 3, "draws") as tick:
...     for _ in range(3):
...         tick()
>>> shown = []
>>> share = Share(shown.append, 1.0)
>>> with bar(share, 4, "chunks") as tick:
...     tick(2)
>>> shown
[0.5]
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .errors import ParameterError

__all__ = ["MODES", "Progress", "Share", "bar", "check_progress", "command_mode", "part"]

#: the string modes ``progress`` accepts (besides True, False, None and a Share)
MODES = ("auto",)


@dataclass
class Share:
    """A slice of an outer bar: the bars opened inside fill ``width`` units of it, no more.

    ``update`` receives the fractions of the outer bar as they are earned; :meth:`rest`
    gives what the inner loops left unfilled (a step without a loop, or one that ended early).
    """

    update: Callable[[float], None]
    width: float
    done: float = field(default=0.0)

    def add(self, amount: float) -> None:
        """Fill ``amount`` more of the slice (clipped to what is left)."""
        amount = max(0.0, min(amount, self.width - self.done))
        if amount:
            self.done += amount
            self.update(amount)

    def rest(self) -> None:
        """Fill what is left of the slice."""
        self.add(self.width - self.done)


#: what a ``progress`` argument may be
Progress = bool | str | Share | None


def part(progress: Progress, width: float) -> Share:
    """``width`` (a fraction) of the slice ``progress``, for one step of a longer job (a slice
    that shows nothing when ``progress`` is not a :class:`Share`: the step draws no bar of its
    own).

    Examples
    --------
    >>> shown = []
    >>> whole = Share(shown.append, 1.0)
    >>> part(whole, 0.25).rest()
    >>> shown, whole.done
    ([0.25], 0.25)
    """
    if not isinstance(progress, Share):
        return Share(lambda amount: None, width)
    return Share(progress.add, width * progress.width)


def check_progress(progress: Any, parameter: str = "progress") -> Progress:
    """``progress`` when it is one of the accepted values, else a ParameterError naming it."""
    if progress is None or isinstance(progress, (bool, Share)) or progress in MODES:
        return progress
    raise ParameterError(f"expected True, False, 'auto' or a planner.progress.Share, got {progress!r}",
                         parameter=parameter)


def command_mode(quiet: bool) -> Progress:
    """What the command line passes: ``"auto"`` (a bar when stderr is a terminal), or nothing
    with ``--quiet``."""
    return False if quiet else "auto"


#: the counter of a bar that its steps fill in fractions (a study's, whose scenarios are
#: filled step by step)
FRACTION_FORMAT = "{l_bar}{bar}| {n:.1f}/{total_fmt} {unit} [{elapsed}<{remaining}]"


def _tqdm(total: float | None, desc: str, unit: str, forced: bool, fractions: bool) -> Any:
    if forced:
        from tqdm.auto import tqdm  # a widget in a notebook, text elsewhere
    else:
        from tqdm import tqdm
    # disable=None: tqdm draws only when the file is a terminal; leave=False erases the bar
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False,
                disable=False if forced else None, dynamic_ncols=True,
                bar_format=FRACTION_FORMAT if fractions else None)


@contextmanager
def bar(progress: Progress, total: float | None, desc: str, *, unit: str = "step",
        fractions: bool = False) -> Iterator[Callable[..., None]]:
    """A context that yields ``tick(k=1)``, to call as ``k`` more of ``total`` units are done.

    Parameters
    ----------
    progress : bool, "auto", Share or None
        See the module docstring.
    total : float or None
        The units of the whole loop (``None``: unknown, the bar counts).
    desc : str
        What the bar says it is doing.
    unit : str, optional
        The unit tqdm shows.
    fractions : bool, optional
        The units are filled in fractions (by :class:`Share` slices): the counter shows one
        decimal.
    """
    progress = check_progress(progress)
    if isinstance(progress, Share):
        share = progress
        scale = share.width / total if total else 0.0
        yield lambda k=1: share.add(k * scale)
        return
    if not progress:
        yield lambda k=1: None
        return
    b = _tqdm(total, desc, unit, forced=progress is True, fractions=fractions)
    try:
        yield lambda k=1: b.update(k)
    finally:
        b.close()
