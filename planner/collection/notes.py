"""One line for a note that many inputs share.

A campaign's folder of 38 run files can give the same note for 24 of them (a tag column that
disagrees with the file name). Every reader says such a note once, with the count and the
first :data:`SHOWN_NAMES` names (:func:`collapse`, :func:`warn_collapsed`); the full lists stay
in the reader's typed record (:class:`planner.collection.RunsRead`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from ..errors import ReadNoteWarning

#: how many names a collapsed note shows before "and N more"
SHOWN_NAMES = 3
#: how many items a collapsed note shows when each carries its own count (repeated pairs per
#: run): the counts are what the reader needs
SHOWN_COUNTS = 10


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``1 run``, ``24 runs`` (``nouns`` when the plural is not ``noun + 's'``).

    Examples
    --------
    >>> plural(1, "run"), plural(1224, "pair"), plural(2, "entry", "entries")
    ('1 run', '1,224 pairs', '2 entries')
    """
    return f"{n:,} {noun if n == 1 else nouns or noun + 's'}"


def collapse(where: str | None, what: str, items: Sequence[str], shown: int = SHOWN_NAMES) -> str:
    """``where: what: a, b, c and 21 more``: a note of many items as one line.

    Parameters
    ----------
    where : str or None
        The folder or file the note is about (left out when None).
    what : str
        The note, with its count (:func:`plural`).
    items : sequence of str
        The items, already formatted; the first ``shown`` are written out.
    shown : int
        How many items to write out.

    Examples
    --------
    >>> collapse("runs", "skipped 5 empty run files", ["'a'", "'b'", "'c'", "'d'", "'e'"])
    "runs: skipped 5 empty run files: 'a', 'b', 'c' and 2 more"
    >>> collapse(None, "1 run", ["'a'"])
    "1 run: 'a'"
    """
    return (f"{where}: " if where else "") + f"{what}: {first_of(items, shown)}"


def first_of(items: Sequence[str], shown: int = SHOWN_NAMES) -> str:
    """``a, b, c and 21 more``: the first ``shown`` items, and how many are left out.

    Examples
    --------
    >>> first_of(["'a'", "'b'"]), first_of(list("abcde"), 2)
    ("'a', 'b'", 'a, b and 3 more')
    """
    text = ", ".join(items[:shown])
    return text + (f" and {len(items) - shown:,} more" if len(items) > shown else "")


def warn_collapsed(where: str | None, what: str, items: Sequence[str], *, shown: int = SHOWN_NAMES,
                   stacklevel: int = 2) -> None:
    """Warn :func:`collapse` ``(where, what, items, shown)`` as a
    :class:`~planner.errors.ReadNoteWarning` (nothing when ``items`` is empty)."""
    if items:
        warnings.warn(collapse(where, what, items, shown), ReadNoteWarning, stacklevel=stacklevel + 1)
