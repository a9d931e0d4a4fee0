"""The ``planner`` command: the parser of every command, and the dispatch to the one asked for."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from types import ModuleType

from .. import __version__
from ..progress import command_mode
from . import budget, fit, pool, predict, reuse, schema, scores, seeds, select, size, study, validate
from .errors import PROG, run_command
from .options import Formatter, Parser, merge_scores_input

#: the commands, in the order ``planner --help`` lists them; each module has ``NAME``,
#: ``add(subparsers)`` and ``run(args) -> int``
COMMANDS: tuple[ModuleType, ...] = (scores, pool, reuse, fit, predict, validate, select, seeds, size, budget, study,
                                    schema)


def build_parser() -> Parser:
    """The parser of ``planner`` and all its commands.

    Examples
    --------
    >>> build_parser().parse_args(["schema"]).command
    'schema'
    """
    parser = Parser(
        prog=PROG, formatter_class=Formatter,
        description="planner: topic-set design and simulation for IR test collections.\n\n"
                    "Learns how scores vary between topics from an existing collection and "
                    "answers how many topics (and judgments) a campaign needs.",
        epilog="run 'planner COMMAND --help' for a command's options and examples")
    parser.add_argument("--version", action="version", version=f"planner {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for command in COMMANDS:
        command.add(subparsers)
    parser.set_defaults(_commands=subparsers.choices)
    return parser


def _handler(name: str) -> Callable[[argparse.Namespace], int]:
    run: Callable[[argparse.Namespace], int] = {c.NAME: c.run for c in COMMANDS}[name]
    return run


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``planner`` console script; returns the exit code.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after ``planner`` (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 success; 2 a usage, input or config error (one line on standard error);
        1 an internal fault or a failed read or write.

    Examples
    --------
    >>> main(["size", "--design", "paired-t", "--min-diff", "0.1", "--sigma2", "0.02"])  # doctest: +ELLIPSIS
    design paired-t (exact), solved for n_topics
      topics        18
      min_diff      0.1
      power         0.8070 (target 0.8)
      alpha         0.05
      variance      0.02  [given...]
    0
    """
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
    except SystemExit as exc:   # a usage error (one line, 2) or --help / --version (0)
        return int(exc.code or 0)
    command = getattr(args, "command", None)
    if extra:
        where = f"{PROG} {command}" if command else PROG
        near = (args._commands[command] if command else parser).suggest_option(extra[0])
        print(f"{where}: error: unrecognized arguments: {' '.join(extra)}{near}", file=sys.stderr)
        return 2
    if not command:
        parser.print_help()
        return 2
    args.argv = list(sys.argv[1:] if argv is None else argv)
    return run_command(_run, args, args._commands.get(command))


def _run(args: argparse.Namespace) -> int:
    """The command, after what every command shares: the score input (SCORES or --scores) and
    the progress bars (on a terminal, unless --quiet)."""
    merge_scores_input(args)
    args.progress = command_mode(args.quiet)
    return _handler(args.command)(args)
