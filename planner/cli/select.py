"""``planner select``: optimism of the best of k, pick accuracy, and the dev/test split."""

from __future__ import annotations

import argparse

from .format import print_json
from .inputs import draw_seed, load_scores, seed_note
from .options import Subparsers, add_command, add_scores_option, parse_int_list, seed_type
from .reuse import GROUPS_HELP

NAME = "select"


def add(subparsers: Subparsers) -> None:
    """Declare ``planner select``."""
    p = add_command(subparsers, NAME, "selection on the test topics: optimism of the best of k, pick accuracy",
                    """  planner select dl19-passage --seed 1
  planner select dl19-passage --n-dev 10,20,30 --k 2 --margin 0.01 --seed 1
  planner select dl20-passage --accuracy 0.8 --width 0.15 --margin 0.02 --seed 1
  planner select scores.csv --groups sweep.csv:config --n-dev 20 --json""",
                    description="Groups of candidates (a team's runs, a sweep's checkpoints) are picked by their "
                                "mean on n_dev dev topics and reported on the other topics of a random split. "
                                "Prints per group and over groups the optimism (dev minus test score of the pick) "
                                "and the pick accuracy (the pick is the best on the test topics, within --margin). "
                                "With --accuracy and/or --width: the dev/test split of --budget topics (default: "
                                "the smallest budget) that meets them. Definitions: docs/deep-learning.md.")
    add_scores_option(p)
    p.add_argument("--groups", default="prefix", metavar="RULE|FILE[:COLUMN]", help=GROUPS_HELP)
    p.add_argument("--n-dev", default=None, metavar="N,N,...", help="dev topic counts (default 5,10,15,... up to N-2)")
    p.add_argument("--k", type=int, default=None, metavar="K", help="candidates drawn from each group (default all)")
    p.add_argument("--margin", type=float, default=0.0, help="a pick within this of the best is right (default 0)")
    p.add_argument("--accuracy", type=float, default=None, metavar="P", help="target pick accuracy: plan the split")
    p.add_argument("--width", type=float, default=None, metavar="W",
                   help="target mean width of the reported score's interval: plan the split")
    p.add_argument("--budget", type=int, default=None, metavar="N", help="topics to split (default: the smallest)")
    p.add_argument("--confidence-level", type=float, default=0.95, help="of the reported score's interval")
    p.add_argument("--resamples", "--n-resamples", dest="n_resamples", type=int, default=1000, metavar="R",
                   help="random dev/test splits (default 1000; --n-resamples is the same)")
    p.add_argument("--seed", type=seed_type, default=None, metavar="N", help="random seed")


def run(args: argparse.Namespace) -> int:
    """Run ``planner select``."""
    from ..plan.selection import check_budget, plan_split, selection_bias

    check_budget(args.budget, args.accuracy, args.width)
    m = load_scores(args.scores, measure=args.measure, missing=args.missing, variant_divisor=args.variant_divisor)
    draw_seed(args)
    common = {"margin": args.margin, "confidence_level": args.confidence_level, "n_resamples": args.n_resamples,
              "rng": args.seed}
    if args.accuracy is not None or args.width is not None:
        plan = plan_split(m, args.groups, accuracy=args.accuracy, width=args.width, budget=args.budget, k=args.k,
                          **common)
        if args.json:
            print_json({"plan": plan.to_dict()}, args)
            return 0
        _print_plan(plan, args)
        return 0
    n_dev = None if args.n_dev is None else parse_int_list(args.n_dev, option="--n-dev", minimum=2)
    sb = selection_bias(m, args.groups, n_dev=n_dev, k=args.k, **common)
    if args.json:
        print_json({"selection": sb.to_dict()}, args)
        return 0
    label = sb.measure or m.source or "scores"     # (a wide table names no measure)
    print(f"{label}: {len(sb.groups)} groups of candidates, {sb.n_topics} topics, {sb.n_resamples} random "
          f"dev/test splits, seed {sb.seed}{seed_note(args)}")
    if sb.skipped:
        print(f"set aside (fewer than 2 candidates, or fewer than --k): {', '.join(sb.skipped)}")
    cols = ["group", "k", "n_dev", "n_test", "optimism", "pick_accuracy", "width"]
    print(sb.table[cols].to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    print("optimism: dev minus test mean of the pick; pick_accuracy: share of splits whose pick is the best on "
          f"the test topics (within {sb.margin:g}); width: mean {sb.confidence_level:g} interval of its test mean")
    return 0


def _print_plan(plan, args: argparse.Namespace) -> None:
    sb = plan.selection
    targets = []
    if plan.accuracy_target is not None:
        targets.append(f"pick accuracy >= {plan.accuracy_target:g}")
    if plan.width_target is not None:
        targets.append(f"interval width <= {plan.width_target:g}")
    print(f"{sb.measure}: {len(sb.groups)} groups, {sb.n_resamples} splits, seed {sb.seed}{seed_note(args)}; "
          f"targets: {', '.join(targets)}")
    if not plan.met:
        print(f"no split of at most {sb.n_topics} topics meets the targets (best pick accuracy seen "
              f"{plan.pick_accuracy:.4f})")
        return
    print(f"split of {plan.budget} topics: {plan.n_dev} dev + {plan.n_test} test; pick accuracy "
          f"{plan.pick_accuracy:.4f}, interval width {plan.width:.4f}")
