"""``planner study``: run a YAML what-if study and write its report folder."""

from __future__ import annotations

import argparse
import shlex
import time

from ..errors import ParameterError
from .format import print_json
from .options import Subparsers, add_command, add_parallel_options, check_parallel_options, seed_type

NAME = "study"


def add(subparsers: Subparsers) -> None:
    """Declare ``planner study``."""
    p = add_command(subparsers, NAME, "run a YAML what-if study and write its report folder",
                    """  planner study                                   # embedded quick start (DL 2019, nDCG@10)
  planner study configs/metric-choice.yaml -o reports/metric-choice --force
  planner study my-study.yaml --seed 7 --jobs 2 --quiet --json
  planner study my-study.yaml --scheduler tcp://10.0.0.5:8786   # on a Dask cluster
  planner schema > study.schema.json                # JSON Schema for editors""",
                    description="Run a study (a YAML what-if grid: collection, measures, topic counts, methods, "
                                "strata, filters, targets, costs) and write report.md, report.html, "
                                "results.json, CSV tables and plots. Without CONFIG the embedded quick start "
                                "runs on the embedded TREC DL 2019 passage data.")
    p.add_argument("config", nargs="?", default=None, metavar="CONFIG", help="study YAML file")
    p.add_argument("-o", "--out", default=None, metavar="DIR",
                   help="report folder (default reports/<study name>)")
    p.add_argument("--force", action="store_true", help="replace an existing report folder")
    p.add_argument("--seed", type=seed_type, default=None, metavar="N", help="override the study's seed")
    add_parallel_options(p, "scenarios")
    p.add_argument("--max-scenarios", type=int, default=None, metavar="N",
                   help="run a grid of up to N scenarios (default 200: a larger grid is refused, with its size)")


def command_line(args: argparse.Namespace) -> str:
    """The ``planner study`` command line as given (options in a fixed order), for provenance."""
    parts = ["planner", "study"] + ([str(args.config)] if args.config else [])
    if args.out:
        parts += ["-o", str(args.out)]
    if args.force:
        parts.append("--force")
    if args.seed is not None:
        parts += ["--seed", str(args.seed)]
    if args.jobs not in (None, 1):
        parts += ["--jobs", str(args.jobs)]
    if args.max_scenarios is not None:
        parts += ["--max-scenarios", str(args.max_scenarios)]
    if args.scheduler:
        parts += ["--scheduler", str(args.scheduler)]
    if args.quiet:
        parts.append("--quiet")
    if args.json:
        parts.append("--json")
    return shlex.join(parts)


def run(args: argparse.Namespace) -> int:
    """Run ``planner study``."""
    import matplotlib  # heavy and optional: only a study draws figures

    matplotlib.use("Agg")
    from ..study import run_study  # heavy (the whole library): loaded when the command runs

    if args.max_scenarios is not None and args.max_scenarios < 1:
        raise ParameterError(f"expected an integer >= 1, got {args.max_scenarios}", parameter="--max-scenarios")
    jobs, scheduler = check_parallel_options(args)
    t0 = time.perf_counter()
    res = run_study(args.config, out=args.out, force=args.force, seed=args.seed, jobs=jobs,
                    quiet=args.quiet, command=command_line(args), scheduler=scheduler,
                    max_scenarios=args.max_scenarios)
    secs = time.perf_counter() - t0
    if args.json:
        print_json({"study": res.name, "out": res.out, "seconds": round(secs, 2),
                    "answer": res.answer, "seed": res.results.get("seed")}, args)
        return 0
    # the headline on its own line, then the details (the text without the headline)
    head = res.answer.get("headline", "").replace("**", "")
    text = res.answer.get("text", "").replace("**", "")
    print(head)
    rest = text[len(head):].strip() if head and text.startswith(head) else text
    if rest:
        print(rest)
    for b in res.answer.get("buys", []):
        print(f"  - {b}")
    print(f"report: {res.out}/report.html ({secs:.1f} s)")
    return 0
