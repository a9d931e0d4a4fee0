"""Signal handling while a report folder is written: the temporary folder never stays behind.

Python's default SIGTERM (and SIGHUP) action ends the process without running ``finally``
clauses, so a report interrupted that way would leave its hidden ``.NAME.tmp-PID`` folder.
While :class:`cleanup_on_signals` is active those signals, when they have their default
action, raise :class:`Terminated` instead; the ``finally`` clauses remove the temporary folder,
and on the way out the default action is restored and the signal raised again, so the process
still ends by that signal. A :class:`Guard` in its critical part (the renames into place) holds
the signal back until the renames are done.

Examples
--------
>>> with cleanup_on_signals() as guard:
...     guard.critical = True
...     guard.leave_critical()
>>> guard.pending is None
True
"""

from __future__ import annotations

import contextlib
import signal
import threading
from types import FrameType, TracebackType
from typing import Any

__all__ = ["Guard", "Terminated", "cleanup_on_signals"]


class Terminated(BaseException):
    """Raised by the SIGTERM handler while a report is written, so that the temporary
    folder is removed on the way out (Python's default SIGTERM action skips ``finally``)."""


class Guard:
    """The handler installed while a report is written, and its critical part.

    Attributes
    ----------
    critical : bool
        True while the folder is renamed into place: a signal then waits.
    pending : int or None
        A signal that came during the critical part.
    """

    def __init__(self) -> None:
        self.critical = False
        self.pending: int | None = None

    def handler(self, signum: int, frame: FrameType | None) -> None:
        """The signal handler: raise :class:`Terminated`, or hold the signal while critical."""
        if self.critical:          # renaming into place: finish that first, then stop
            self.pending = signum
            return
        raise Terminated(signum)

    def leave_critical(self) -> None:
        """End the critical part; raise :class:`Terminated` for a signal that came during it."""
        self.critical = False
        if self.pending is not None:
            signum, self.pending = self.pending, None
            raise Terminated(signum)


def _default_action_signals() -> list[signal.Signals]:
    """SIGTERM and SIGHUP where they exist and still have their default action (an ignored
    signal stays ignored and a handler someone installed stays theirs)."""
    sigs = [getattr(signal, name, None) for name in ("SIGTERM", "SIGHUP")]
    return [s for s in sigs if s is not None and signal.getsignal(s) is signal.SIG_DFL]


class cleanup_on_signals:  # lower case: used like a function (a context manager)
    """While a report is written: SIGTERM (and SIGHUP), when they have their default action,
    raise :class:`Terminated`, so the ``finally`` clauses remove the temporary folder;
    afterwards the default action is restored and the signal raised again, so the process
    ends as it would have (killed by that signal)."""

    def __enter__(self) -> Guard:
        self.guard = Guard()
        self.old: dict[signal.Signals, Any] = {}
        if threading.current_thread() is not threading.main_thread():
            return self.guard       # only the main thread may install handlers
        for sig in _default_action_signals():
            with contextlib.suppress(ValueError, OSError):   # pragma: no cover - not allowed here
                self.old[sig] = signal.signal(sig, self.guard.handler)
        return self.guard

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        for sig, old in self.old.items():
            signal.signal(sig, old)
        if isinstance(exc, Terminated):
            # the folder is cleaned up: now end the way the signal would have ended us
            signal.raise_signal(exc.args[0])
            raise SystemExit(128 + int(exc.args[0]))   # the previous handler returned
