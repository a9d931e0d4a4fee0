"""The ``planner`` command: a thin argparse front over the public functions.

One module per command (:mod:`~planner.cli.scores`, ``pool``, ``fit``, ``predict``,
``validate``, ``size``, ``budget``, ``study``, ``schema``), each with ``add(subparsers)``
declaring it and ``run(args) -> int`` running it; :mod:`~planner.cli.app` builds the parser
and dispatches; :mod:`~planner.cli.errors` is the one place that turns an error into the
command's one error line and exit code and names the option behind a parameter;
:mod:`~planner.cli.format` prints ``--json`` (with provenance) and table cells.

Every command has ``--help`` with examples and ``--json`` for machine output. Exit codes:
0 success; 2 a usage, input or config error, printed as one line naming the file and line,
the config key or the option; 1 an internal fault. Warnings are held until the command ends
and printed only when it succeeds (or before an internal fault's traceback). Choice lists,
defaults and messages about methods and targets read :mod:`planner.methods`.
"""

from __future__ import annotations

from .app import COMMANDS, build_parser, main
from .errors import PROG
from .format import print_json
from .options import parse_int_list, parse_name_list

__all__ = ["COMMANDS", "PROG", "build_parser", "main", "parse_int_list", "parse_name_list", "print_json"]
