"""``planner reuse``: leave each team's runs out of the pool and re-score them."""

from __future__ import annotations

import argparse

from .format import print_json
from .options import Subparsers, add_command, add_run_options, parse_name_list, run_options

NAME = "reuse"

GROUPS_HELP = ("teams: 'prefix' (default: the run name up to its first - or _), 'regex:PATTERN' (its first "
               "group), or a CSV FILE[:COLUMN] with a system (or run) column and a group column (default 'group')")


def add(subparsers: Subparsers) -> None:
    """Declare ``planner reuse``."""
    p = add_command(subparsers, NAME, "pool reusability: leave each team out of the pool, re-score its runs",
                    """  planner reuse --runs runs/ --qrels qrels.txt
  planner reuse --runs runs/ --qrels qrels.txt --measure "AP(rel=2)" --groups teams.csv:team
  planner reuse --runs runs/ --qrels qrels.txt --pool-runs runA,runB,runC --json""",
                    description="For each team: the documents only its runs put in the depth-k pool lose their "
                                "judgments, its runs are re-scored, every other run keeps its score. Prints each "
                                "run's score and rank change, the largest drop beside the 95% interval "
                                "half-width of a run's mean, and Kendall's tau of the whole ranking. Definitions: "
                                "docs/deep-learning.md.")
    p.add_argument("--runs", required=True, metavar="DIR", help="folder of TREC run files")
    p.add_argument("--qrels", required=True, metavar="FILE", help="qrels file (the full judgments)")
    p.add_argument("--measure", default="nDCG@10", help="ir_measures measure (default nDCG@10)")
    p.add_argument("--depth", type=int, default=10, metavar="K",
                   help="pool depth at which documents are attributed to teams (default 10: TREC DL)")
    p.add_argument("--groups", default="prefix", metavar="RULE|FILE[:COLUMN]", help=GROUPS_HELP)
    p.add_argument("--pool-runs", default=None, metavar="NAME,...",
                   help="runs that formed the pool (default all); the others keep their scores")
    add_run_options(p)


def run(args: argparse.Namespace) -> int:
    """Run ``planner reuse``."""
    from ..plan.reusability import leave_group_out

    pool_runs = None if args.pool_runs is None else parse_name_list(args.pool_runs, option="--pool-runs")
    r = leave_group_out(args.runs, args.qrels, measure=args.measure, groups=args.groups, depth=args.depth,
                        pool_runs=pool_runs, **run_options(args))
    if args.json:
        print_json(r.to_dict(), args)
        return 0
    print(f"{r.measure}, {r.n_runs} runs in {r.n_groups} teams, {r.n_topics} topics; "
          f"unique documents at depth {r.depth}")
    cols = ["run", "group", "full", "left_out", "change", "rank_full", "rank_left_out", "rank_change"]
    print(r.runs.sort_values("change")[cols].to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    half = r.runs["ci_half_width"].median()
    print(f"Kendall tau (full vs left-out ranking): {r.kendall_tau:.4f}")
    print(f"largest drop: {r.largest_drop:.4f} ({r.largest_drop_run or 'none'}); largest rank drop: "
          f"{r.largest_rank_drop}")
    print(f"sampling error beside it: median 95% half-width of a run's mean at {r.n_topics} topics "
          f"{half:.4f} (largest drop / half-width = {r.drop_vs_sampling:.2f})")
    return 0
