"""Declaring the commands' options and parsing their values.

Each command module declares its options with :func:`add_command` and the shared option
groups here; the values argparse cannot check by type (lists, ``NAME:VALUE`` targets,
``--method`` names) are parsed here into :class:`planner.errors.ParameterError` naming the
option. Choice lists and target names are read from :mod:`planner.methods`.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any, NoReturn

from .. import methods
from ..errors import ParameterError
from ..policies import DUPLICATE_POLICIES, MISSING_POLICIES

#: argparse's ``add_subparsers()`` result (a private class in typeshed)
Subparsers = Any


class StoreOnce(argparse.Action):
    """argparse's ``store``, refusing an option given twice: argparse would keep the last value
    silently. Options that may be repeated say so (``action="append"``)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:  # argparse API
        given = namespace.__dict__.setdefault("_given", {})
        if self.dest in given and option_string is not None:
            raise argparse.ArgumentError(self, f"given more than once ({given[self.dest]} and {option_string} "
                                               f"{values}); give it once")
        given[self.dest] = f"{option_string} {values}"
        setattr(namespace, self.dest, values)


class Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line and exit 2 (no usage dump), that refuses an
    option given twice (:class:`StoreOnce`) and suggests the nearest choice for a wrong one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, StoreOnce)
        self.register("action", "store", StoreOnce)

    def error(self, message: str) -> NoReturn:  # argparse API
        self.exit(2, f"{self.prog}: error: {message}\n")

    def _check_value(self, action: argparse.Action, value: Any) -> None:  # argparse API
        if action.choices is not None and value not in action.choices:
            raise argparse.ArgumentError(action, f"invalid choice: {value!r}{methods.suggest(value, action.choices)} "
                                                 f"(choose from {', '.join(map(str, action.choices))})")

    def suggest_option(self, text: str) -> str:
        """`` (did you mean --seed?)`` for an unknown option ``text`` (``--seeed`` or
        ``--seeed=1``), or ``""``."""
        if not text.startswith("-"):
            return ""
        name = text.split("=", 1)[0]
        near = methods.closest(name, [o for a in self._actions for o in a.option_strings])
        return "" if near is None else f" (did you mean {near}?)"


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Help texts keep their line breaks (the examples)."""


def add_command(subparsers: Subparsers, name: str, help: str, examples: str,
                description: str | None = None) -> argparse.ArgumentParser:
    """A command's parser: its help, its examples (shown by ``--help``) and ``--json``."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        name, help=help, description=(description or help) + "\n\nexamples:\n" + examples.rstrip(),
        formatter_class=Formatter)
    p.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bars (they are drawn on stderr only when it is a terminal)")
    return p


#: what the score input of a command may be (its help)
SCORES_HELP = ("wide CSV, tidy CSV/TSV, folder of trec_eval -q files, or an embedded data set "
               "(dl19-passage, dl20-passage; measure default nDCG@10)")


def add_scores_input(p: argparse.ArgumentParser | Any, *, required: bool = True,
                     help: str = SCORES_HELP) -> None:
    """The score input of a command: the positional ``SCORES``, or ``--scores SCORES`` (the same;
    :func:`merge_scores_input` joins them after parsing and checks that one is given when
    ``required``). ``p`` may be a group (``--scores`` then belongs to it)."""
    p.add_argument("--scores", default=None, metavar="SCORES", help="the same as the argument SCORES")
    parser = getattr(p, "_container", p)     # a group adds its positional to its parser
    parser.add_argument("scores_input", nargs="?", default=None, metavar="SCORES", help=help)
    parser.set_defaults(_scores_required=required)


def merge_scores_input(args: argparse.Namespace) -> None:
    """``args.scores`` from the positional ``SCORES`` or ``--scores`` (given once), or a
    ParameterError naming ``SCORES`` when a command that needs scores has none."""
    if not hasattr(args, "scores_input"):
        return
    given = args.scores_input
    if given is not None and args.scores is not None:
        raise ParameterError(f"give the scores once: {given!r} as SCORES or --scores {args.scores}",
                             parameter="--scores")
    args.scores = given if given is not None else args.scores
    if args.scores is None and args._scores_required:
        raise ParameterError("give the scores to learn from (a score file or folder, or a data set name)",
                             parameter="SCORES")


def add_scores_option(p: argparse.ArgumentParser, *, missing_help: str | None = None) -> None:
    """The required score input (:func:`add_scores_input`) and the optional ``--measure``,
    ``--missing`` and ``--variant-divisor`` of fit, predict, validate and select."""
    add_scores_input(p)
    p.add_argument("--measure", default=None, help="measure to select in SCORES (trec_eval folders, tidy tables)")
    add_missing_option(p, help=missing_help)
    add_variant_option(p)


def add_missing_option(p: argparse.ArgumentParser, *, default: str | None = "error", help: str | None = None) -> None:
    """``--missing``: the missing-cell policy of a score file (:data:`planner.policies.MISSING_POLICIES`;
    the library's ``missing=``), which the missing-cell errors name."""
    p.add_argument("--missing", default=default, choices=MISSING_POLICIES,
                   help=help or "missing cells of SCORES: error (default), zero, drop-topic, drop-system, or keep "
                                "(only fits take it: the others need a complete matrix)")


def add_run_options(p: argparse.ArgumentParser) -> None:
    """How every command that reads TREC runs reads them: ``--duplicates`` and ``--select-runs``
    (the library's ``duplicates`` and ``select_runs``; :func:`run_options` reads them back)."""
    p.add_argument("--duplicates", default="error", choices=DUPLICATE_POLICIES,
                   help="a document repeated for a topic in a run: error (default), or keep its first line "
                        "(the lines dropped are counted per run)")
    p.add_argument("--select-runs", action="append", default=None, metavar="GLOB[,GLOB...]",
                   help="read only the runs whose name matches: names or globs such as 'bm25*' (quote them), "
                        "comma-separated or repeated; default all")


def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keywords of :func:`add_run_options` for the library's run readers (``duplicates``,
    ``select_runs``); a bad list is a ParameterError naming ``--select-runs``.

    Examples
    --------
    >>> run_options(argparse.Namespace(duplicates="first", select_runs=["bm25*,dense", "p_*"]))
    {'duplicates': 'first', 'select_runs': ['bm25*', 'dense', 'p_*']}
    """
    select = None
    if args.select_runs is not None:
        select = parse_name_list(",".join(args.select_runs), option="--select-runs")
    return {"duplicates": args.duplicates, "select_runs": select}


def add_variant_option(p: argparse.ArgumentParser) -> None:
    """``--variant-divisor K``: query ids are topic*K+variant."""
    p.add_argument("--variant-divisor", type=int, default=None, metavar="K",
                   help="query ids are topic*K+variant: the variants of a topic are averaged (and kept "
                        "together), so counts are of topics, not of queries (fit: the three-facet model too)")


def add_parallel_options(p: argparse.ArgumentParser, what: str) -> None:
    """``--jobs N`` (local processes) and ``--scheduler ADDRESS`` (a Dask cluster) for ``what``."""
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help=f"{what} run in N parallel processes (same results for any N)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help=f"{what} run on the Dask cluster of this scheduler (e.g. tcp://host:8786; the same "
                        "results as a serial run; pip install 'planner[dask]')")


def check_parallel_options(args: argparse.Namespace) -> tuple[int, str | None]:
    """``(jobs, scheduler)`` of :func:`add_parallel_options`, checked (exit 2 naming the option)."""
    from ..parallel import check_jobs, check_scheduler

    return (check_jobs(args.jobs, parameter="--jobs"),
            check_scheduler(args.scheduler, parameter="--scheduler"))


def seed_type(text: str) -> int:
    """argparse type of ``--seed``: an integer >= 0 (numpy's seed sequences need one)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {v}")
    return v


def method_help(lead: str, where: Callable[[methods.Method], bool] | None = None) -> str:
    """Help of a ``--method`` option: ``lead``, then the methods of the registry it accepts."""
    names = methods.method_names(where)
    return f"{lead}: {', '.join(names)} (default {methods.DEFAULT_METHOD})"


def parse_int_list(text: str, *, option: str, minimum: int = 1) -> list[int]:
    """``"25,50,100"`` -> ``[25, 50, 100]``; a bad item is a ParameterError naming ``option``.

    Examples
    --------
    >>> parse_int_list("25, 50,100", option="--topics")
    [25, 50, 100]
    """
    out: list[int] = []
    seen: set[int] = set()     # (a list's `in` made 300,000 counts quadratic: hours)
    for item in text.split(","):
        item = item.strip()
        try:
            v = int(item)
        except ValueError:
            raise ParameterError(f"expected a comma-separated list of integers, got {item!r}",
                                 parameter=option) from None
        if v < minimum:
            raise ParameterError(f"values must be >= {minimum}, got {v}", parameter=option)
        if v in seen:
            raise ParameterError(f"{v} is listed more than once", parameter=option)
        seen.add(v)
        out.append(v)
    if not out:
        raise ParameterError("empty list", parameter=option)
    return out


def parse_name_list(text: str, *, option: str) -> list[str]:
    """``"a,b"`` -> ``["a", "b"]``; an empty or repeated name is a ParameterError naming ``option``.

    Examples
    --------
    >>> parse_name_list("bm25,dense", option="--pool-runs")
    ['bm25', 'dense']
    """
    out = [item.strip() for item in text.split(",")]
    for item in out:
        if not item:
            raise ParameterError(f"empty name in {text!r}", parameter=option)
        if out.count(item) > 1:
            raise ParameterError(f"{item!r} is listed more than once", parameter=option)
    return out


def parse_target(text: str) -> tuple[str, float]:
    """``--target NAME:VALUE`` of size and budget: a solvable target of the registry and its value.

    Examples
    --------
    >>> parse_target("swap_rate:0.05")
    ('swap_rate', 0.05)
    """
    from ..plan import check_target_value  # heavy (scipy): loaded only when a target is parsed

    names = methods.target_names(lambda t: t.solvable)
    name, sep, val = text.partition(":")
    if not sep or name not in names:
        raise ParameterError(f"expected NAME:VALUE with NAME one of {', '.join(names)}, got {text!r}"
                             + methods.suggest(name, names), parameter="--target")
    try:
        value = float(val)
    except ValueError:
        raise ParameterError(f"bad value {val!r}", parameter="--target") from None
    try:
        return name, check_target_value(name, value, math.inf if name != "power" else 1.0)
    except ParameterError as exc:      # (the power target's --min-diff is checked by the command)
        raise ParameterError(exc.message, parameter="--target") from None


def reject_unused(given: dict[str, object], why: str) -> None:
    """A ParameterError naming the first option of ``given`` that was set (not ``None``)."""
    for option, value in given.items():
        if value is not None:
            raise ParameterError(why, parameter=option)
