"""``planner pool``: pool size, judged documents and judged share per depth."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, cast

from .format import print_json
from .options import Subparsers, add_command, add_run_options, parse_int_list, parse_name_list, run_options

if TYPE_CHECKING:
    import pandas as pd

    from ..measures import PoolStats

NAME = "pool"


def add(subparsers: Subparsers) -> None:
    """Declare ``planner pool``."""
    p = add_command(subparsers, NAME, "pool statistics: pool size, judged documents and judged share per depth",
                    """  planner pool --runs runs/ --qrels qrels.txt --depth 10,20,50,100
  planner pool --runs runs/ --qrels qrels.txt --depth 10,100 --per run
  planner pool --runs runs/ --qrels qrels.txt --depth 20 --pool-runs runA,runB --json""",
                    description="For each depth k: per topic the number of distinct documents in the union of "
                                "the pool runs' top k (trec_eval order: score descending, then document id "
                                "descending) and how many the qrels judge; per run the judged share of its own "
                                "top k, averaged over topics. Definitions: docs/inputs.md.")
    p.add_argument("--runs", required=True, metavar="DIR", help="folder of TREC run files")
    p.add_argument("--qrels", required=True, metavar="FILE", help="qrels file")
    p.add_argument("--depth", "--depths", dest="depth", default="10,20,50,100", metavar="K,K,...",
                   help="pool depths (10,20,50,100); --depths, as in planner budget, is the same")
    p.add_argument("--pool-runs", default=None, metavar="NAME,...",
                   help="runs that form the pool (default: all runs in --runs)")
    p.add_argument("--per", default="summary", choices=["summary", "topic", "run"],
                   help="table to print: one row per depth (summary, default), per topic, or per run")
    add_run_options(p)


def _table(ps: PoolStats, per: str) -> pd.DataFrame:
    """The table ``--per`` asks for."""
    if per == "summary":
        return ps.summary()
    # PoolStats annotates its tables as object; they are DataFrames
    topics, runs = cast("pd.DataFrame", ps.topics), cast("pd.DataFrame", ps.runs)
    if per == "topic":
        df = topics.pivot(index="topic", columns="depth", values=["pool_size", "judged"])
        df.columns = [f"{a}@{k}" for a, k in df.columns]
        return df
    df = runs.pivot(index="run", columns="depth", values="judged_share")
    df.columns = [f"judged_share@{k}" for k in df.columns]
    inp = runs.drop_duplicates("run").set_index("run")["in_pool"]
    df.insert(0, "in_pool", inp.loc[df.index])
    return df


def run(args: argparse.Namespace) -> int:
    """Run ``planner pool``."""
    from ..measures import pool_stats  # heavy (pandas): loaded when the command runs

    depths = parse_int_list(args.depth, option="--depth", minimum=1)
    pool_runs = None if args.pool_runs is None else parse_name_list(args.pool_runs, option="--pool-runs")
    ps = pool_stats(args.runs, args.qrels, depths=depths, pool_runs=pool_runs, progress=args.progress,
                    **run_options(args))
    if args.json:
        print_json(ps.to_dict(), args)
        return 0
    df = _table(ps, args.per)
    print(f"pool of {len(ps.pool_runs)} runs; qrels: {ps.qrels_judgments} judgments")
    print(df.to_string(float_format=lambda v: f"{v:.4f}", index=args.per != "summary"))
    if args.per == "summary":
        print("pool_judged_share: share of the depth-k pool that the qrels judge; run_judged_share_mean: "
              "mean over all runs (pooled or not) of the judged share of each run's own top k")
    return 0
