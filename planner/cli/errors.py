"""The one error-mapping layer of the ``planner`` command.

Every failure a user can fix is a :class:`planner.errors.PlannerError` (an input file and
line, a config key, a parameter). This module is the only place that turns such an error
into the command's one error line and its exit code, and the only place that renames a
Python parameter (``min_diff``) to the command-line option the user typed (``--min-diff``).

Exit codes: 0 success; 2 a usage, input or config error (one line; a file or folder that
may not be read or written is one, whichever is locked); 1 an internal fault or a read or
write that fails on the way (a full disk); 130 an interrupt. Warnings are held until the command ends and
printed only when it succeeds (or before an internal fault's traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from .._atomic import output_path, write_atomic
from ..errors import ParameterError, PlannerError, repeats

PROG = "planner"

#: library parameter names whose command-line option has another name (the option's ``dest``)
PARAMETER_OPTION = {"rng": "seed", "n_topics": "topics", "topics_needed": "topics", "divisor": "variant_divisor",
                    "n_resamples": "resamples", "method_resamples": "resamples",
                    "n0": "pilot", "value": "target", "n_runs": "project_runs",
                    "name": "dataset", "measures": "measure", "depths": "depth"}


@contextmanager
def options(aliases: Mapping[str, str] | None = None, *, every: str | None = None) -> Iterator[None]:
    """Rename, inside the block, the parameter a :class:`ParameterError` names.

    Parameters
    ----------
    aliases : mapping, optional
        Library parameter -> command-line option, for parameters whose option is not found by
        the generic rule of :func:`as_option` (the same parameter can stand for other options in
        other calls of one command).
    every : str, optional
        The option every parameter error of the block names.

    Examples
    --------
    >>> from planner.errors import ParameterError
    >>> try:
    ...     with options({"n": "--allocate"}):
    ...         raise ParameterError("must be positive", parameter="n")
    ... except ParameterError as exc:
    ...     print(exc)
    --allocate: must be positive
    """
    try:
        yield
    except ParameterError as exc:
        option = (aliases or {}).get(exc.parameter or "", every)
        if option is None:
            raise
        raise ParameterError(exc.message, parameter=option) from None


def as_option(exc: PlannerError, parser: argparse.ArgumentParser | None) -> PlannerError:
    """``exc`` naming the option of ``parser`` (a command's) that stands for its parameter.

    A :class:`ParameterError` that names a library parameter (``min_diff``) names the
    command's option instead (``--min-diff``), when the command has one; anything else is
    returned as it is.
    """
    if not isinstance(exc, ParameterError) or not exc.parameter or exc.parameter.startswith("-") \
            or parser is None:
        return exc
    for dest in (PARAMETER_OPTION.get(exc.parameter, exc.parameter), exc.parameter):
        for action in parser._actions:  # argparse keeps its actions here (no public accessor)
            if action.dest == dest and action.option_strings:
                return ParameterError(exc.message, parameter=max(action.option_strings, key=len))
    return exc


def write_text(path: str | os.PathLike, text: str, *, option: str) -> None:
    """Write ``text`` to ``path`` atomically (:func:`planner._atomic.write_atomic`: the old file
    stays when the write fails). A path that cannot be written is a usage error naming
    ``option`` (check it before the work with :func:`planner._atomic.output_path`); a write
    that fails on the way (a full disk) is an OSError, which :func:`run_command` makes one
    line and exit 1."""
    write_atomic(output_path(path, option=option), text)


class HeldWarnings:
    """Warnings held back until the command ends: printed (once each, in order) when it
    succeeds, dropped when it fails, so that a failure prints exactly one error line."""

    def __init__(self) -> None:
        self.lines: dict[str, None] = {}
        self.said: set[type[Warning]] = set()

    def show(self, message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: object = None, line: str | None = None) -> None:
        """A ``warnings.showwarning`` that keeps the message (the first of a kind said once:
        :func:`planner.errors.repeats`)."""
        if not repeats(category, self.said):
            self.lines[f"{PROG}: warning: {message}"] = None

    def flush(self) -> None:
        """Print the held warnings on standard error, and forget them."""
        for text in self.lines:
            print(text, file=sys.stderr)
        self.lines.clear()


def _silence_stdout() -> None:
    """Point standard output at the null device, so that the interpreter's last flush of what
    could not be written (a full disk) does not print a second error."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):    # no real file behind sys.stdout (tests)
        pass


def _error(command: str, message: str) -> None:
    print(f"{PROG} {command}: error: {message}", file=sys.stderr)


def run_command(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace,
                parser: argparse.ArgumentParser | None) -> int:
    """Run a command's ``handler`` and return the exit code, mapping every failure to one line.

    Parameters
    ----------
    handler : callable
        The command (``args -> exit code``).
    args : argparse.Namespace
        Its parsed options; ``args.command`` is the command's name.
    parser : argparse.ArgumentParser or None
        The command's parser, whose options name the parameters of its errors.

    Returns
    -------
    int
        0 on success, 2 on a usage, input or config error (a permission refused included), 1 on
        a read or write that fails otherwise,
        130 on an interrupt. An internal fault propagates, after the held warnings.
    """
    held = HeldWarnings()
    warnings.showwarning = held.show
    try:
        code = int(handler(args) or 0)
        held.flush()
        return code
    except PlannerError as exc:
        _error(args.command, str(as_option(exc, parser)))
        return 2
    except MemoryError:
        _error(args.command, "not enough memory for this problem (fewer resamples, subsets or systems, "
                             "or smaller topic counts, need less)")
        return 2
    except KeyboardInterrupt:
        held.flush()
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except PermissionError as exc:   # a locked file or folder: the user's to fix, as any input error
        where = f"{exc.filename}: " if exc.filename else ""
        _error(args.command, f"{where}permission denied")
        return 2
    except OSError as exc:     # the system refused a read or write (a full disk): one line, exit 1
        _silence_stdout()
        where = f" ({exc.filename})" if exc.filename else ""
        _error(args.command, f"input/output failed: {exc.strerror or exc}{where}")
        return 1
    except BaseException:      # an internal fault: its traceback follows what was warned
        held.flush()
        raise
