"""``planner seeds``: training seeds nested in recipes; power, false positives, topics x seeds."""

from __future__ import annotations

import argparse

from .format import print_json
from .options import Subparsers, add_command, add_run_options, add_scores_input, run_options

NAME = "seeds"


def add(subparsers: Subparsers) -> None:
    """Declare ``planner seeds``."""
    p = add_command(subparsers, NAME, "training seeds: power and false positives of comparing two recipes",
                    """  planner seeds seeds.csv --min-diff 0.03
  planner seeds --runs runs/ --qrels qrels.txt --measure nDCG@10 --min-diff 0.03
  planner seeds --scores seeds.csv --min-diff 0.03 --topics 50 --seeds 1,3,5
  planner seeds --scores seeds.csv --min-diff 0.03 --power 0.8 --topic-cost 1 --seed-cost 20 --json""",
                    description="Reads a tidy table with a seed column (system, seed, topic, value; each system "
                                "a training recipe, each seed one training run of it) and fits the variance "
                                "components with seeds nested in systems (planner.fit_seeds). Prints, for two "
                                "recipes differing by --min-diff on --topics topics with m seeds each, the power "
                                "of a seed-aware test and how often the usual paired t-test over topics calls a "
                                "zero difference significant (its false-positive rate). With --power: the "
                                "topics each number of seeds needs, and the cheapest design under --topic-cost "
                                "and --seed-cost. Definitions: docs/deep-learning.md.")
    add_scores_input(p, required=False,
                     help="tidy CSV/TSV with the columns system, seed, topic, value (optionally measure); or "
                          "give --runs and --qrels")
    p.add_argument("--runs", default=None, metavar="DIR",
                   help="folder of TREC runs, one per training seed, named RECIPE.seedK (see --seed-pattern)")
    p.add_argument("--qrels", default=None, metavar="FILE", help="qrels to score --runs against")
    p.add_argument("--seed-pattern", default=None, metavar="REGEX",
                   help="with --runs: a regular expression with the groups (?P<system>...) and (?P<seed>...) "
                        "that every run name matches (default: RECIPE.seedK, also -seedK, _seedK, @seedK)")
    add_run_options(p)
    p.add_argument("--measure", default=None,
                   help="measure to select when the table has a measure column; with --runs the measure to "
                        "score (ir_measures syntax, default nDCG@10)")
    p.add_argument("--min-diff", type=float, required=True, metavar="D", help="difference between the recipes")
    p.add_argument("--topics", type=int, default=None, metavar="N", help="topics (default: the table's)")
    p.add_argument("--seeds", dest="n_seeds", default=None, metavar="M,M,...",
                   help="seeds per recipe to evaluate (default 1 and the table's count)")
    p.add_argument("--alpha", type=float, default=0.05, help="test level (default 0.05)")
    p.add_argument("--power", type=float, default=None, metavar="P", help="target power: topics x seeds trade-off")
    p.add_argument("--topic-cost", type=float, default=1.0, help="cost of a topic (its judgments; default 1)")
    p.add_argument("--seed-cost", type=float, default=0.0, help="cost of a training run (default 0)")
    p.add_argument("--max-seeds", type=int, default=10, help="most seeds per recipe in the trade-off (default 10)")
    p.add_argument("--max-topics", type=int, default=2000, help="most topics in the trade-off (default 2000)")


def _frame(args: argparse.Namespace):
    """The tidy seed table: read from SCORES, or scored from --runs (one run per seed)."""
    from ..collection.tables import read_seed_table
    from ..errors import ParameterError
    from ..plan.seeds import SEED_PATTERN, seed_frame
    from .options import reject_unused

    if (args.scores is None) == (args.runs is None):
        raise ParameterError("give the seed table (SCORES) or --runs and --qrels, one of them", parameter="SCORES")
    if args.scores is not None:
        reject_unused({"--qrels": args.qrels, "--seed-pattern": args.seed_pattern,
                       "--select-runs": args.select_runs}, "not used with a seed table (it is for --runs)")
        return read_seed_table(args.scores, measure=args.measure), args.scores
    if args.qrels is None:
        raise ParameterError("--runs needs --qrels to score them against", parameter="--qrels")
    from ..measures import score_runs

    measure = args.measure or "nDCG@10"
    m = score_runs(args.runs, args.qrels, measure, progress=args.progress, **run_options(args))[measure]
    try:
        return seed_frame(m, args.seed_pattern or SEED_PATTERN), args.runs
    except ParameterError as exc:
        if exc.parameter != "pattern":
            raise
        raise ParameterError(exc.message, parameter="--seed-pattern") from None


def _fit(args: argparse.Namespace):
    """The components of the seed table; a table that cannot be fitted names its file or folder."""
    from ..errors import InputError, ParameterError
    from ..plan.seeds import fit_seeds

    df, source = _frame(args)
    try:
        return fit_seeds(df)
    except ParameterError as exc:
        if exc.parameter != "scores":
            raise
        raise InputError(exc.message, file=source) from None


def run(args: argparse.Namespace) -> int:
    """Run ``planner seeds``."""
    from ..plan.seeds import seed_power, seed_topic_tradeoff
    from .options import parse_int_list

    c = _fit(args)
    n = args.topics if args.topics is not None else c.n_topics
    ms = (parse_int_list(args.n_seeds, option="--seeds", minimum=1) if args.n_seeds is not None
          else sorted({1, c.n_seeds}))
    rows = [seed_power(c, min_diff=args.min_diff, n_topics=n, n_seeds=m, alpha=args.alpha) for m in ms]
    trade = None
    if args.power is not None:
        trade = seed_topic_tradeoff(c, min_diff=args.min_diff, power=args.power, alpha=args.alpha,
                                    topic_cost=args.topic_cost, seed_cost=args.seed_cost, max_seeds=args.max_seeds,
                                    max_topics=args.max_topics)
    if args.json:
        out = {"components": c.to_dict(), "power": [r.to_dict() for r in rows]}
        if trade is not None:
            out["tradeoff"] = {"n_seeds": trade.n_seeds, "n_topics": trade.n_topics, "cost": trade.cost,
                               "power": trade.power, "at_max_seeds": trade.at_max_seeds,
                               "table": trade.table.to_dict("records")}
        print_json(out, args)
        return 0
    _print(c, rows, trade, args)
    return 0


def _print(c, rows, trade, args: argparse.Namespace) -> None:
    import pandas as pd

    print(f"{c.n_systems} recipes x {c.n_seeds} seeds x {c.n_topics} topics; components (ANOVA, seeds nested "
          "in recipes):")
    print("  " + "  ".join(f"{k} {getattr(c, k):.6g}" for k in ("var_s", "var_t", "var_st", "var_seed", "var_e")))
    if c.truncated:
        print(f"  estimated negative, set to 0: {', '.join(c.truncated)}")
    p0 = rows[0]
    print(f"two recipes differing by {p0.min_diff:g}, alpha {p0.alpha:g}, {p0.n_topics} topics:")
    t = pd.DataFrame([{"seeds": r.n_seeds, "power": r.power, "paired_t_power": r.naive_power,
                       "false_positive_rate": r.false_positive_rate} for r in rows])
    print(t.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    print("power: of a test that allows for the seed variance (size alpha); paired_t_power and "
          "false_positive_rate: how often the paired t-test over topics (ignoring seeds) rejects at this "
          f"difference and at none (nominal {p0.alpha:g})")
    if trade is None:
        return
    print(f"topics for power {trade.power:g} with m seeds per recipe (a topic costs {args.topic_cost:g}, a "
          f"training run {args.seed_cost:g}; both recipes trained m times):")
    print(trade.table.astype({"n_topics": "Int64"}).to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    print(f"power: at the topics needed (at {args.max_topics}, --max-topics, where none is given)")
    if trade.n_seeds is None:
        print(f"no design with at most {args.max_seeds} seeds and {args.max_topics} topics reaches it")
    else:
        print(f"cheapest: {trade.n_seeds} seeds x {trade.n_topics} topics, cost {trade.cost:g}"
              + (" (the most seeds tried: more may cost less; raise --max-seeds)" if trade.at_max_seeds else ""))
