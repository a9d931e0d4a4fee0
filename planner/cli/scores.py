"""``planner scores``: read or compute a score matrix and write it as wide or tidy CSV."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from .._atomic import output_path
from ..errors import ParameterError
from .errors import write_text
from .format import print_json
from .inputs import load_scores
from .options import (
    Subparsers,
    add_command,
    add_missing_option,
    add_run_options,
    add_scores_input,
    reject_unused,
    run_options,
)

if TYPE_CHECKING:
    from ..scores import ScoreMatrix

NAME = "scores"



def add(subparsers: Subparsers) -> None:
    """Declare ``planner scores``."""
    p = add_command(subparsers, NAME, "read or compute a score matrix and write it as wide or tidy CSV",
                    """  planner scores adhoc5_ap.csv                      # wide CSV -> wide CSV (validated)
  planner scores runs_eval/ --measure map --tidy    # folder of trec_eval -q files -> tidy CSV
  planner scores --runs runs/ --qrels qrels.txt --measure nDCG@10 -o ndcg.csv
  planner scores --runs runs/ --qrels qrels.txt --measure 'AP(rel=2)' --measure 'RBP(rel=2,p=0.8)'
  planner scores dl19-passage --measure AP --json    # an embedded data set""",
                    description="Read any score input (wide CSV, tidy CSV/TSV, folder of trec_eval -q files, an "
                                "embedded data set name) or score TREC runs against qrels with ir_measures, and "
                                "write the systems x topics matrix: wide CSV (one row a topic, first column "
                                "'topic'), tidy CSV (system,topic,value[,measure]) with --tidy or when several "
                                "measures are given, or JSON with --json. Formats: docs/inputs.md.")
    add_scores_input(p, required=False,
                     help="score file, trec_eval folder or data set name (dl19-passage, dl20-passage)")
    p.add_argument("--runs", default=None, metavar="DIR", help="folder (or file) of TREC runs to score")
    p.add_argument("--qrels", default=None, metavar="FILE", help="qrels to score --runs against")
    p.add_argument("--measure", action="append", default=None, metavar="M",
                   help="measure: ir_measures syntax with --runs (repeat for several), the trec_eval "
                        "name for a trec_eval folder, the measure column value of a tidy table")
    add_missing_option(p, default=None, help="missing-cell policy (default: error for score files, zero for --runs)")
    add_run_options(p)
    p.add_argument("--strata", default=None, metavar="FILE", help="topic metadata CSV (topic,stratum) to attach")
    p.add_argument("--tidy", action="store_true", help="write the tidy form (system,topic,value[,measure])")
    p.add_argument("-o", "--output", default=None, metavar="FILE", help="write the CSV here (default stdout)")


def _check(args: argparse.Namespace) -> list[str]:
    """The options that contradict each other; the measures asked for."""
    if args.json:
        # the JSON goes to stdout and holds the matrices as they are: a CSV option would be ignored
        reject_unused({"--output": args.output, "--tidy": args.tidy or None},
                      "not used with --json (the JSON is printed on stdout)")
    measures: list[str] = args.measure or []
    repeated = sorted({m for m in measures if measures.count(m) > 1})
    if repeated:
        raise ParameterError(f"measure {repeated[0]!r} given more than once", parameter="--measure")
    return measures


def _score_runs(args: argparse.Namespace, measures: list[str]) -> list[ScoreMatrix]:
    from ..collection import load_scores as read  # heavy (pandas)
    from ..measures import score_runs  # heavy (ir_measures)

    if args.scores is not None:
        raise ParameterError("give either SCORES or --runs/--qrels, not both", parameter="--runs")
    if args.runs is None or args.qrels is None:
        raise ParameterError("--runs and --qrels go together", parameter="--runs" if args.runs is None else "--qrels")
    if not measures:
        raise ParameterError("give at least one measure to score runs with", parameter="--measure")
    res = score_runs(args.runs, args.qrels, measures, missing_topic=args.missing or "zero",
                     progress=args.progress, **run_options(args))
    mats = [res[m] for m in measures]
    if args.strata:
        mats = [read(m, strata=args.strata) for m in mats]
    return mats


def _read(args: argparse.Namespace, measures: list[str]) -> list[ScoreMatrix]:
    if args.scores is None:
        raise ParameterError("give a score file or folder, a data set name, or --runs and --qrels",
                             parameter="SCORES")
    if len(measures) > 1:
        raise ParameterError("one measure for a score file", parameter="--measure")
    reject_unused({"--select-runs": args.select_runs}, "only used with --runs (a score file is read whole)")
    measure = measures[0] if measures else None
    return [load_scores(args.scores, measure=measure, missing=args.missing or "error", strata=args.strata)]


def _csv(args: argparse.Namespace, mats: list[ScoreMatrix]) -> str:
    import pandas as pd  # heavy: loaded when the command runs

    if args.tidy or len(mats) > 1 or mats[0].has_variants:
        df = pd.concat([m.to_frame(tidy=True) for m in mats], ignore_index=True)
        return str(df.to_csv(index=False, lineterminator="\n"))
    return str(mats[0].to_frame().to_csv(lineterminator="\n"))


def run(args: argparse.Namespace) -> int:
    """Run ``planner scores``."""
    measures = _check(args)
    if args.output:      # a link, a loop or a folder that cannot be written: refused before the work
        args.output = str(output_path(args.output, option="--output"))
    if args.runs is not None or args.qrels is not None:
        mats = _score_runs(args, measures)
    else:
        mats = _read(args, measures)
    if args.json:
        print_json({"matrices": [{"measure": m.measure, "source": m.source, "systems": list(m.systems),
                                  "topics": list(m.topics), "strata": None if m.strata is None else list(m.strata),
                                  "values": m.values, "report": m.meta.get("report")} for m in mats]}, args)
        return 0
    text = _csv(args, mats)
    if args.output:
        write_text(args.output, text, option="--output")
    else:
        sys.stdout.write(text)
    return 0
