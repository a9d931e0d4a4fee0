"""``planner validate``: pilot-based swap/reversal predictions against held-out topics."""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any

from .. import methods
from .format import print_json, span
from .inputs import draw_seed, load_scores, seed_note
from .options import (
    Subparsers,
    add_command,
    add_parallel_options,
    add_scores_option,
    check_parallel_options,
    parse_int_list,
    parse_name_list,
    seed_type,
)

if TYPE_CHECKING:
    from ..validation import Validation

NAME = "validate"
STATISTICS = methods.PAIR_RATES


def add(subparsers: Subparsers) -> None:
    """Declare ``planner validate``."""
    p = add_command(subparsers, NAME, "check pilot-based swap/reversal predictions against held-out topics",
                    """  planner validate terabyte2006_ap.csv --pilot 25 --topics 25,50,62
  planner validate terabyte2006_ap.csv --pilot 25 --topics 25,50,62 --repeats 50 --seed 1 --json
  planner validate ap.csv --pilot 20 --topics 10,15 --methods predictive,analytic,bootstrap""",
                    description="Repeatedly split the topics at random into a pilot of --pilot topics and the "
                                "disjoint remainder; predict the mean swap and reversal rate over all system "
                                "pairs at each topic count from the pilot alone, measure them on pairs of "
                                "disjoint topic sets of the remainder, and print predicted and observed curves "
                                "with the relative error |pred - obs| / obs (median over repeats, with its "
                                "bootstrap standard error), and the method that predicted best here, whose "
                                "name planner predict / size --method and a study's method: accept. "
                                "Definitions: docs/validation.md.")
    add_scores_option(p)
    p.add_argument("--pilot", required=True, type=int, metavar="N0", help="pilot size (topics)")
    p.add_argument("--topics", required=True, metavar="N,N,...",
                   help="topic counts to predict, each at most half of the held-out topics")
    p.add_argument("--repeats", type=int, default=20, metavar="R", help="random pilot/remainder splits (20)")
    p.add_argument("--subsets", type=int, default=500, metavar="K",
                   help="random pairs of disjoint held-out topic sets per repeat (500)")
    p.add_argument("--methods", default=f"{methods.DEFAULT_METHOD},predictive,analytic", metavar="M,M,...",
                   help="prediction methods, any planner predict method ("
                        + ", ".join(methods.METHODS) + f"); default {methods.DEFAULT_METHOD},predictive,analytic")
    p.add_argument("--seed", type=seed_type, default=None, metavar="N", help="random seed")
    add_parallel_options(p, "repeats")


def _print_statistic(v: Validation, stat: str) -> None:
    """The table of one statistic, the methods without a prediction, and the best method."""
    w = max(6, *(len(m) for m in v.methods))
    print(f"\n{stat.replace('_', ' ')} (mean over pairs); error = |pred - obs| / obs over repeats")
    banded = v.prediction is not None
    print(f"{'method':>{w}} {'n':>5} {'predicted':>10} {'observed':>10} {'err_median':>10} {'(se)':>7} "
          f"{'err_p90':>8} {'bias':>7} {'sd_log':>7}" + (f" {'covered':>8} {'(se)':>6}" if banded else ""))
    for r in v.rows:
        if r["statistic"] != stat:
            continue
        print(f"{r['method']:>{w}} {r['n_topics']:>5d} {r['predicted_mean']:10.4f} {r['observed_mean']:10.4f} "
              f"{r['rel_error_median']:10.3f} {r['rel_error_median_se']:7.3f} {r['rel_error_p90']:8.3f} "
              f"{r['ratio_median'] - 1:+7.3f} "
              f"{r['log_ratio_sd']:7.3f}" + (_covered(r) if banded else ""))
    print("bias = median over repeats of pred/obs - 1; sd_log = sd over repeats of log(pred/obs)")
    if banded:
        held = "set pairs" if stat == "swap_rate" else "sets"
        print(f"covered = share of held-out {held} whose own {stat.replace('_', ' ')} fell inside the "
              f"method's {v.prediction:.0%} prediction interval from the pilot (aim: {v.prediction:.0%}; "
              "- : the method has none)")
    undefined = sorted({r["method"] for r in v.rows if r["statistic"] == stat
                        and not math.isfinite(r["predicted_mean"])})
    if undefined:
        print(f"nan: no prediction at that n from a {v.pilot}-topic pilot ({', '.join(undefined)}; "
              "subsample draws two disjoint n-topic sets, so it needs n <= pilot / 2)")
    rec = v.recommend(stat)
    if rec["method"] is not None:
        print(f"best here: {rec['method']} ({rec['rule']}; {_how_clear(v, rec)}); "
              f"use it with: planner predict --method {rec['method']}")


def _covered(r: dict[str, Any]) -> str:
    """The row's prediction-interval coverage and its standard error (``-`` without one)."""
    c, se = r.get("pred_coverage", math.nan), r.get("pred_coverage_se", math.nan)
    if not math.isfinite(c):
        return f" {'-':>8} {'':>6}"
    return f" {c:8.1%} {se:6.1%}" if math.isfinite(se) else f" {c:8.1%} {'':>6}"


def _how_clear(v: Validation, rec: dict[str, Any]) -> str:
    """How far the recommended method is ahead of the others, in words."""
    if rec["clear"]:
        return "ahead of every other method by more than 2 standard errors at every n"
    if not rec["close"]:
        return "the only method"
    if v.repeats >= 2:
        return ("not clearly ahead of " + ", ".join(rec["close"]) + ": within 2 standard errors at "
                "some n, more --repeats narrow them")
    return "not compared with " + ", ".join(rec["close"]) + ": standard errors need --repeats 2 or more"


def _print_in_short(v: Validation) -> None:
    """The answer to "how far can I trust a prediction from a pilot this size?", in one line."""
    rec = v.recommend("swap_rate")
    rows = [r for r in v.rows if r["statistic"] == "swap_rate" and r["method"] == rec["method"]
            and math.isfinite(r["rel_error_median"])]
    if not rows:
        return
    ns = [r["n_topics"] for r in rows]
    print(f"\nin short: from {v.pilot}-topic pilots, {rec['method']}'s predicted mean swap rate at "
          f"{ns[0] if len(ns) == 1 else f'{min(ns)}-{max(ns)}'} topics was off by a median "
          f"{span(r['rel_error_median'] for r in rows)} "
          f"(90% of repeats within {span(r['rel_error_p90'] for r in rows)}); this collection's "
          f"{v.n_topics} topics can check held-out sets of at most {(v.n_topics - v.pilot) // 2} topics")


def run(args: argparse.Namespace) -> int:
    """Run ``planner validate``."""
    from ..validation import validate  # heavy (scipy): loaded when the command runs

    topics = parse_int_list(args.topics, option="--topics", minimum=1)
    names = parse_name_list(args.methods, option="--methods")
    scores = load_scores(args.scores, measure=args.measure, missing=args.missing, variant_divisor=args.variant_divisor)
    jobs, scheduler = check_parallel_options(args)
    draw_seed(args)
    v = validate(scores, pilot=args.pilot, topics=topics, repeats=args.repeats, rng=args.seed,
                 methods=names, subsets=args.subsets, jobs=jobs, scheduler=scheduler, progress=args.progress)
    if args.json:
        print_json(v.to_dict(), args)
        return 0
    print(f"{args.scores}" + (f" ({v.measure})" if getattr(v, "measure", None) else "")
          + f": {v.n_systems} systems x {v.n_topics} topics; pilot {v.pilot}, "
          f"{v.repeats} repeats, {v.subsets} held-out subset pairs each, seed {v.seed}{seed_note(args)}")
    for stat in STATISTICS:
        _print_statistic(v, stat)
    _print_in_short(v)
    return 0
