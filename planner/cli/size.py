"""``planner size``: topic-set size of a classical design, of a target, or an allocation over strata.

``--design`` and ``--allocate`` live here; ``--target`` in :mod:`planner.cli.size_target`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .. import methods
from ..errors import ParameterError
from .errors import options
from .format import plan_line, print_json, words_or
from .inputs import load_scores
from .options import (
    Subparsers,
    add_command,
    add_missing_option,
    add_scores_input,
    add_variant_option,
    method_help,
    reject_unused,
    seed_type,
)
from .size_target import INTERVAL_RESAMPLES, run_target

if TYPE_CHECKING:
    from ..plan import Allocation, SizeResult

NAME = "size"


def _targets_with(direction: str) -> str:
    """The targets ``--target`` solves whose statistic must be ``direction`` the value (the registry's)."""
    return ", ".join(methods.target_names(lambda t: t.solvable and t.direction == direction))


#: the command's description: the targets and their directions come from the registry
_DESCRIPTION = (
    "With --target NAME:VALUE: the smallest n at which the statistic meets VALUE on the collection in "
    "SCORES (" + "; ".join(f"{d}: {_targets_with(d)}" for d in ("<=", ">=")) + "), with its 95% interval "
    "on n; plan with the interval's "
    "upper end, printed first. Give --target more than once for several targets: the one that binds is named.\n"
    "With --design: a classical topic-set-size design (Sakai 2016), solved for whichever of --topics, "
    "--min-diff and --power is unset (default power 0.8 when both --topics and --power are absent). For "
    "--design ci, --min-diff is the largest acceptable expected width of the interval of the mean difference.\n"
    "With --allocate N: N topics split over the strata of --strata.")


def add(subparsers: Subparsers) -> None:
    """Declare ``planner size``."""
    p = add_command(subparsers, NAME, "topics a target needs (--target), a classical design's size (--design), "
                                      "or a split over strata (--allocate)",
                    """  planner size ap.csv --target swap_rate:0.05 --seed 1     # the count to plan with, its interval
  planner size --design paired-t --min-diff 0.05 --sigma2 0.02 --power 0.8
  planner size --design anova --min-diff 0.1 ap.csv --variance pooled --systems 10
  planner size --design ci --min-diff 0.1 ap.csv --variance percentile:95 --json
  planner size --design paired-t --topics 50 --sigma2 0.02          # minimum detectable difference
  planner size --design paired-t --min-diff 0.05 --sigma2 0.02 --correction holm --systems 10
  planner size --target swap_rate:0.05 ap.csv --variance pair --seed 1
  planner size ap.csv --target swap_rate:0.05 --target power:0.8 --seed 1   # the binding one is named
  planner size --target kendall_tau:0.9 ap.csv --method bootstrap --seed 1 --json
  planner size --target swap_rate:0.05 clef_p10.csv --variant-divisor 1000 --variants 1,2,3,6
  planner size --allocate 100 ap.csv --strata topics.csv --stratum-costs web=1,news=2""",
                    description=_DESCRIPTION)
    _add_modes(p)
    _add_design_options(p)
    _add_target_options(p)
    p.add_argument("--strata", metavar="FILE", help="--allocate: topic metadata CSV (topic, stratum)")
    p.add_argument("--stratum-costs", metavar="K=C,...", default=None,
                   help="--allocate: cost per topic of each stratum (default 1 each)")
    p.add_argument("--allocation", choices=["proportional", "optimal"], default=None,
                   help="--allocate: the allocation reported as n (default optimal; both are always shown)")


def _add_modes(p: argparse.ArgumentParser) -> None:
    """What is solved (--design, --target, --allocate), and where the variance comes from."""
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--design", choices=["paired-t", "two-sample", "anova", "ci"])
    what.add_argument("--target", metavar="NAME:VALUE", action="append",
                      help=words_or(methods.target_names(lambda t: t.solvable))
                      + "; repeat it for several targets: each is solved, and the one needing the most "
                        "topics (the binding one) is named")
    what.add_argument("--allocate", type=int, metavar="N",
                      help="split N topics across the strata of --scores (needs --strata)")
    p.add_argument("--min-diff", type=float, default=None, metavar="D",
                   help="minimum detectable difference (anova: range best-worst; ci: width cap)")
    p.add_argument("--width", type=float, default=None, metavar="W",
                   help="ci: the largest acceptable expected interval width (same as --min-diff)")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--sigma2", type=float, metavar="V",
                     help="the variance the design needs (paired: of per-topic differences; "
                          "two-sample/anova: within-system)")
    add_scores_input(src, required=False, help="estimate the variance from a score file/folder or an "
                     "embedded data set (dl19-passage, dl20-passage) instead of --sigma2")
    p.add_argument("--measure", default=None, help="measure to select in SCORES (trec_eval folders)")
    add_missing_option(p)
    add_variant_option(p)
    p.add_argument("--variance", default=None, metavar="SEL",
                   help="with --scores: pair | pooled | within-system | percentile:q "
                        "(default pooled for --design, pair for --target)")


def _add_design_options(p: argparse.ArgumentParser) -> None:
    """The options of a classical design."""
    p.add_argument("--systems", type=int, default=None, metavar="M",
                   help="systems compared (needed by anova and by --correction, over all pairs)")
    p.add_argument("--alpha", type=float, default=0.05, metavar="A",
                   help="test level alpha; intervals are 1-A (0.05)")
    p.add_argument("--power", type=float, default=None, help="target power 1-beta")
    p.add_argument("--topics", type=int, default=None, metavar="N", help="topic count (solve the rest)")
    p.add_argument("--approx", choices=["sakai"], default=None,
                   help="Sakai's normal approximations instead of exact noncentral t/F")
    p.add_argument("--correction", choices=["holm", "bonferroni"], default=None,
                   help="multiple-comparison correction over all pairs of --systems")


def _add_target_options(p: argparse.ArgumentParser) -> None:
    """The options of --target (and the interval on n of --design)."""
    p.add_argument("--method", default=None, help=method_help("--target: how the statistic is computed"))
    random = words_or(methods.method_names(lambda m: m.random))
    p.add_argument("--resamples", type=int, default=None,
                   help="topic resamples of the interval on n (default 200 for --target); --design with "
                        "SCORES gives the jackknife interval, as --target ci_width does, and any R > 0 keeps "
                        "it, 0 skips it (R itself is unused: nothing is drawn); "
                        f"with --target and --method {random}, "
                        "which give no interval, the simulation's resamples at each topic count (default 1000)")
    p.add_argument("--seed", type=seed_type, default=None, help="seed of the resampling")
    p.add_argument("--variants", default=None, metavar="V,V,...",
                   help="--target on scores with query variants: also the topics needed with V variants "
                        "per topic, for each V (" + ", ".join(methods.target_names(lambda t: not t.reliability
                                                                                  and t.solvable))
                        + "; method " + words_or(methods.method_names(lambda m: m.variants)) + ")")


def _mode(args: argparse.Namespace) -> str:
    return "--target" if args.target is not None else "--allocate" if args.allocate is not None else "--design"


def _reject_unused(args: argparse.Namespace, mode: str) -> None:
    """Options that the chosen mode would silently ignore are errors."""
    unused: dict[str, object] = {"--strata": args.strata, "--stratum-costs": args.stratum_costs,
                                 "--allocation": args.allocation} if mode != "--allocate" else {}
    if mode != "--target":
        unused.update({"--method": args.method, "--variants": args.variants})
    if mode != "--design":
        unused.update({"--power": args.power, "--width": args.width, "--approx": args.approx,
                       "--correction": args.correction, "--systems": args.systems, "--topics": args.topics})
    if mode == "--allocate":
        unused.update({"--min-diff": args.min_diff, "--variance": args.variance, "--resamples": args.resamples,
                       "--seed": args.seed})
    elif args.design == "ci":
        unused["--power"] = args.power
    reject_unused(unused, f"not used with {mode}" + (f" {args.design}" if mode == "--design" else ""))
    if mode == "--design" and args.sigma2 is not None:
        # a given variance: nothing is estimated from scores, so these would be ignored
        reject_unused({"--variance": args.variance, "--measure": args.measure, "--resamples": args.resamples,
                       "--seed": args.seed, "--variant-divisor": args.variant_divisor},
                      "not used with --sigma2 (it needs --scores)")


def _check_source(args: argparse.Namespace) -> None:
    """The variance comes from --sigma2 or from SCORES: one of them, once."""
    if args.sigma2 is not None and args.scores is not None:
        raise ParameterError(f"give the variance (--sigma2) or the scores to estimate it from ({args.scores}), "
                             "not both", parameter="--sigma2")
    if args.sigma2 is None and args.scores is None:
        raise ParameterError("give the variance (--sigma2 V) or the scores to estimate it from (SCORES)",
                             parameter="--sigma2")


def run(args: argparse.Namespace) -> int:
    """Run ``planner size``."""
    _check_source(args)
    mode = _mode(args)
    _reject_unused(args, mode)
    if mode == "--target":
        return run_target(args)
    if mode == "--allocate":
        return _allocate(args)
    return _design(args)


def _check_design(args: argparse.Namespace) -> None:
    if args.design == "ci" and args.width is not None and args.min_diff is not None:
        raise ParameterError("give the width cap once (--width or --min-diff)", parameter="--width")
    if args.design == "anova" and args.systems is None:
        raise ParameterError("--design anova needs the number of systems compared", parameter="--systems")
    if args.correction is not None and args.systems is None:
        raise ParameterError("a correction over all pairs needs the number of systems", parameter="--systems")


def _design(args: argparse.Namespace) -> int:
    from ..plan import topic_set_size  # heavy (scipy): loaded when the command runs

    _check_design(args)
    if args.seed is not None:
        raise ParameterError("not used: nothing is drawn at random (a design's interval on n is the jackknife "
                             "interval of its variance)", parameter="--seed")
    if args.scores is not None:
        scores: object = load_scores(args.scores, measure=args.measure, missing=args.missing,
                                     variant_divisor=args.variant_divisor)
    else:
        scores = None
    power = args.power
    if args.design != "ci" and power is None and (args.topics is None or args.min_diff is None):
        power = 0.8
    res = topic_set_size(design=args.design, min_diff=args.min_diff, scores=scores,
                         sigma2=args.sigma2 if scores is None else None,
                         variance=args.variance or "pooled", alpha=args.alpha, power=power,
                         n_topics=args.topics, systems=2 if args.systems is None else args.systems,
                         approx=args.approx, correction=args.correction, width=args.width,
                         n_resamples=_design_resamples(args, scores))
    if args.json:
        print_json(res.to_dict(), args)
        return 0
    _print_design(args, res)
    return 0


def _design_resamples(args: argparse.Namespace, scores: object) -> int:
    """The design's ``n_resamples``: with scores its jackknife interval on n unless ``--resamples 0``
    (any R > 0 only switches it on); a given ``--sigma2`` has none."""
    if scores is None:
        return 0
    return INTERVAL_RESAMPLES if args.resamples is None else args.resamples


def _print_design(args: argparse.Namespace, res: SizeResult) -> None:
    print(f"design {res.design} ({res.method}), solved for {res.solved_for}")
    ivl = res.interval
    lead = plan_line(ivl) if res.solved_for == "n_topics" else None
    if lead is not None:
        print(lead)
    print(f"  topics        {res.n_topics}")
    if ivl.low is not None or ivl.high is not None:
        hi = "unbounded" if ivl.high is None else ivl.high
        print(f"  {ivl.level:.0%} interval  [{ivl.low}, {hi}]  ({ivl.describe()})")
    if res.min_diff is not None:
        print(f"  min_diff      {res.min_diff:.4g}")
    if res.power is not None:
        print(f"  power         {res.power:.4f}" + (f" (target {res.target_power})" if res.target_power else ""))
    if res.width is not None:
        print(f"  exp. width    {res.width:.4g}")
    print(f"  alpha         {res.alpha}" + (f" ({res.correction}: {res.alpha_per_test:.3g} per test, "
                                            f"{res.comparisons} pairs)" if res.correction else ""))
    print(f"  variance      {res.sigma2:.6g}  [{res.variance}]")
    if res.per_pair:
        pp = res.per_pair
        print(f"  per pair      {pp['quantity']}: min {pp['min']:.4g}, median {pp['median']:.4g}, "
              f"p90 {pp['p90']:.4g}, max {pp['max']:.4g} over {pp['pairs']} pairs")


def _stratum_costs(text: str | None) -> dict[str, float] | None:
    """``--stratum-costs web=1,news=2`` as a dict."""
    if not text:
        return None
    costs: dict[str, float] = {}
    for item in text.split(","):
        key, sep, val = item.partition("=")
        if key.strip() in costs:
            raise ParameterError(f"stratum {key.strip()!r} given twice", parameter="--stratum-costs")
        try:
            costs[key.strip()] = float(val)
        except ValueError:
            sep = ""
        if not sep:
            raise ParameterError(f"expected STRATUM=COST, got {item!r}", parameter="--stratum-costs")
    return costs


def _allocate(args: argparse.Namespace) -> int:
    from ..plan import allocate  # heavy (scipy): loaded when the command runs

    if args.scores is None or args.strata is None:
        raise ParameterError("--allocate needs --scores FILE and --strata FILE", parameter="--allocate")
    costs = _stratum_costs(args.stratum_costs)
    scores = load_scores(args.scores, measure=args.measure, strata=args.strata, missing=args.missing,
                         variant_divisor=args.variant_divisor)
    with options({"n": "--allocate", "costs": "--stratum-costs", "scores": "--strata"}):
        res = allocate(scores, n=args.allocate, costs=costs, method=args.allocation or "optimal",
                       alpha=args.alpha)
    if args.json:
        print_json(res.to_dict(), args)
        return 0
    _print_allocation(args, res)
    return 0


def _print_allocation(args: argparse.Namespace, res: Allocation) -> None:
    print(f"allocation of {args.allocate} topics, or of their cost when strata cost differently "
          f"({res.variance_note})")
    print(f"  {'stratum':<16} {'W':>6} {'sigma2':>9} {'cost':>6} {'prop.':>6} {'optimal':>8}")
    for r in res.strata:
        print(f"  {r['stratum']:<16} {r['weight']:>6.3f} {r['sigma2']:>9.5f} {r['cost']:>6.2f} "
              f"{r['n_proportional']:>6} {r['n_optimal']:>8}")
    for c in res.compare:
        print(f"  {c['design']:<13} n {c['n_topics']:>5}  cost {c['cost']:>9.2f}  "
              f"width {c['width']:.4f}")
