"""The ``planner`` command: a thin argparse front over the public functions.

One subcommand per public function. Every subcommand has ``--help`` with
examples and ``--json`` for machine output. Exit codes: 0 success; 2 a usage,
input or config error, printed as one line naming the file and line, the config
key or the option; 1 an internal fault.

Each subcommand is a pair in this file: ``_add_<name>(subparsers)`` declares it
and ``_cmd_<name>(args) -> int`` runs it; :data:`COMMANDS` lists them in the
order ``--help`` shows.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from typing import Callable

from .errors import ParameterError, PlannerError

PROG = "planner"


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line and exit 2 (no usage dump)."""

    def error(self, message: str):  # noqa: D401 - argparse API
        self.exit(2, f"{self.prog}: error: {message}\n")


class _Formatter(argparse.RawDescriptionHelpFormatter):
    pass


def _sub(subparsers, name: str, help: str, examples: str, description: str | None = None) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        name, help=help, description=(description or help) + "\n\nexamples:\n" + examples.rstrip(),
        formatter_class=_Formatter)
    p.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout")
    return p


def print_json(obj) -> None:
    """Print ``obj`` as JSON (NaN/inf become null)."""
    print(json.dumps(_jsonable(obj), indent=2, allow_nan=False))


def _jsonable(obj):
    import math

    import numpy as np

    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def parse_int_list(text: str, *, option: str, minimum: int = 1) -> list[int]:
    """``"25,50,100"`` -> ``[25, 50, 100]``; a bad item is a ParameterError naming ``option``."""
    out = []
    for item in text.split(","):
        item = item.strip()
        try:
            v = int(item)
        except ValueError:
            raise ParameterError(f"expected a comma-separated list of integers, got {item!r}",
                                 parameter=option) from None
        if v < minimum:
            raise ParameterError(f"values must be >= {minimum}, got {v}", parameter=option)
        out.append(v)
    if not out:
        raise ParameterError("empty list", parameter=option)
    return out


# --------------------------------------------------------------------------
# subcommands (each module's owner adds its pair below and lists it in COMMANDS)
# --------------------------------------------------------------------------


COMMANDS: list[tuple[Callable, Callable]] = []


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = _Parser(
        prog=PROG, formatter_class=_Formatter,
        description="planner: topic-set design and simulation for IR test collections.\n\n"
                    "Learns how scores vary between topics from an existing collection and "
                    "answers how many topics (and judgments) a campaign needs.",
        epilog="run 'planner COMMAND --help' for a command's options and examples")
    parser.add_argument("--version", action="version", version=f"planner {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for add, _ in COMMANDS:
        add(subparsers)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(f"{PROG}: warning: {message}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``planner`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    handler = dict((add.__name__[len("_add_"):], cmd) for add, cmd in COMMANDS)[args.command.replace("-", "_")]
    warnings.showwarning = _show_warning
    try:
        return int(handler(args) or 0)
    except PlannerError as exc:
        print(f"{PROG} {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
