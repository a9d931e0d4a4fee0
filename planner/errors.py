"""Error and warning types of planner.

Every problem with what a user gave us (a file, a config key, an option) is
raised as a :class:`PlannerError` subclass whose ``str()`` is one line naming
the place: ``file:line: message``, ``key.path: message`` or ``--option: message``.
The CLI prints that line and exits 2; anything else is an internal fault (exit 1).
"""

from __future__ import annotations

import os


class PlannerError(Exception):
    """Base class of the errors planner raises for bad input or usage."""


class InputError(PlannerError, ValueError):
    """A problem in an input file or text, located by file and (optionally) line."""

    def __init__(self, message: str, *, file: str | os.PathLike | None = None,
                 line: int | None = None) -> None:
        self.file = None if file is None else str(file)
        self.line = line
        self.message = message
        where = ""
        if self.file is not None:
            where = self.file + (f":{line}" if line is not None else "") + ": "
        elif line is not None:
            where = f"line {line}: "
        super().__init__(where + message)


class ConfigError(PlannerError, ValueError):
    """A problem in a study configuration, located by its key path."""

    def __init__(self, message: str, *, key: str | None = None,
                 file: str | os.PathLike | None = None) -> None:
        self.key = key
        self.file = None if file is None else str(file)
        self.message = message
        parts = [p for p in (self.file, key) if p]
        super().__init__((": ".join(parts) + ": " if parts else "") + message)


class ParameterError(PlannerError, ValueError):
    """A bad argument to a public function or CLI option, named in the message."""

    def __init__(self, message: str, *, parameter: str | None = None) -> None:
        self.parameter = parameter
        self.message = message
        super().__init__((f"{parameter}: " if parameter else "") + message)


class PlannerWarning(UserWarning):
    """Base class of planner's warnings."""


class ReadNoteWarning(PlannerWarning):
    """What a reader skipped or changed in its input: empty run files skipped, repeated
    (topic, document) pairs dropped, tag columns that disagree with the run name, entries that
    are not files. A folder's readers say each kind once, with a count and the first names
    (:func:`planner.collection.notes.collapse`); a study reports it once, whatever the scenario."""


class DegenerateDataWarning(PlannerWarning):
    """Data that makes some statistic meaningless or unstable (zero variance,
    identical systems, truncated negative components, values out of range)."""


class IdenticalPairsWarning(DegenerateDataWarning):
    """Pairs of systems identical on every topic, counted as ties (swap and reversal rate 0.5 at
    any n). The score matrix says it first, naming the systems; the steps that meet the same pairs
    again (the pair variances, :func:`planner.predict`, :func:`planner.plan.size_for_target`) warn
    with this class too, so that a command or a study scenario says it
    once (:data:`SAID_ONCE`, :func:`repeats`) and a caller that has said so already filters it by class.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", IdenticalPairsWarning)
    ...     warnings.warn("2 pair(s) identical", IdenticalPairsWarning)
    >>> issubclass(IdenticalPairsWarning, DegenerateDataWarning)
    True
    """


#: warning classes said once per command or study scenario: the first of each stands for the rest
#: (every step that meets the same identical systems warns about them in its own words)
SAID_ONCE: tuple[type[Warning], ...] = (IdenticalPairsWarning,)


def repeats(category: type[Warning], said: set[type[Warning]]) -> bool:
    """Whether a warning of ``category`` repeats one already said (``said``: the :data:`SAID_ONCE`
    classes seen so far, updated here); a class not in :data:`SAID_ONCE` never repeats.

    Examples
    --------
    >>> said: set = set()
    >>> [repeats(c, said) for c in (IdenticalPairsWarning, DegenerateDataWarning, IdenticalPairsWarning)]
    [False, False, True]
    """
    kind = next((k for k in SAID_ONCE if issubclass(category, k)), None)
    if kind is None:
        return False
    if kind in said:
        return True
    said.add(kind)
    return False
