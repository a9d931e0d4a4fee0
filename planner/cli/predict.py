"""``planner predict``: swap/reversal rate, Kendall tau, CI width and power against topic count."""

from __future__ import annotations

import argparse
import itertools
import math
from typing import TYPE_CHECKING, Any

from .. import methods
from ..errors import ParameterError
from .errors import options
from .format import cell, print_json, words_or
from .inputs import draw_seed, load_scores, seed_note
from .options import Subparsers, add_command, add_scores_option, method_help, parse_int_list, seed_type

if TYPE_CHECKING:
    from ..scores import ScoreMatrix
    from ..simulate import Curve

NAME = "predict"

#: the columns of the table, and their headings
COLUMNS = {"n_topics": "n", "swap_rate_mean": "swap", "reversal_rate_mean": "reversal", "kendall_tau_mean": "tau",
           "ci_width_median": "ci_med", "ci_width_p90": "ci_p90", "power_mean": "power",
           "discriminative_power": "disc", "erho2": "Erho2", "phi": "Phi"}
#: the level of the prediction intervals when --prediction is not given
PREDICTION_LEVEL = 0.9
BIN_COLUMNS = ("swap_rate_mean", "reversal_rate_mean", "ci_width_median", "power_mean", "discriminative_power")


def add(subparsers: Subparsers) -> None:
    """Declare ``planner predict``."""
    p = add_command(subparsers, NAME, "curves of swap/reversal rate, Kendall tau, CI width, power vs topic count",
                    """  planner predict ap.csv --topics 25,50,100
  planner predict ap.csv --topics 25,50,100 --method bootstrap --resamples 2000 --seed 1 --json
  planner predict ap.csv --topics 10,20,25,50,100 --method subsample --seed 7
  planner predict ap.csv --topics 25,50 --method analytic --variance percentile:95
  planner predict ap.csv --strata topics.csv --allocation optimal --topics 30,60 --method bootstrap""",
                    description="Predict, for each topic count, the mean swap and reversal rate over all pairs "
                                "of systems, the expected Kendall tau, the median and 90th percentile of the "
                                "pairs' interval widths, the mean power of the paired t-test at --min-diff, "
                                "the discriminative power, Erho2 and Phi (definitions: docs/simulate.md).")
    add_scores_option(p)
    p.add_argument("--topics", required=True, metavar="N,N,...", help="topic counts, e.g. 25,50,100")
    p.add_argument("--method", default=methods.DEFAULT_METHOD, metavar="METHOD",
                   help=method_help("how the statistics are computed") + "; see docs/simulate.md "
                        "and `planner validate`")
    p.add_argument("--variance", default=None, metavar="SEL",
                   help="analytic: pair (default) | pooled | within-system | percentile:q")
    p.add_argument("--min-diff", type=float, default=0.05, metavar="D", help="difference for the power (0.05)")
    p.add_argument("--alpha", type=float, default=0.05, metavar="A", help="test level; intervals 1-A (0.05)")
    p.add_argument("--resamples", type=int, default=1000, metavar="R",
                   help="resamples of random methods (1000); with the topic counts, bounded before any work "
                        "(planner.simulate.MAX_WORK, MAX_HELD: docs/robustness.md)")
    p.add_argument("--seed", type=seed_type, default=None, metavar="N", help="random seed")
    p.add_argument("--strata", default=None, metavar="FILE", help="topic metadata CSV (topic, stratum)")
    p.add_argument("--allocation", default=None, choices=["uniform", "stratified", "proportional", "optimal"],
                   help="with --strata: how n is spread over strata (default stratified = proportional; "
                        "needs --method " + words_or(methods.method_names(lambda m: m.strata)) + ")")
    p.add_argument("--filter", default=None, metavar="LO:HI[:SPREAD]",
                   help="drop uninformative topics first (all systems <= LO or >= HI, or range < SPREAD)")
    p.add_argument("--bins", nargs="?", const="", default=None, metavar="EDGES",
                   help="also print the summaries by bins of |difference|; EDGES sets the bins "
                        "(e.g. 0,0.01,0.05,0.1,inf; default 0,0.01,0.02,0.03,0.05,0.1,0.2,inf)")
    p.add_argument("--prediction", type=float, default=None, metavar="LEVEL",
                   help="level of the prediction intervals of the swap rate, reversal rate and tau that new "
                        f"topic sets will show ({PREDICTION_LEVEL:g}; 0: none); closed-form methods, drawn with "
                        "--seed")
    p.add_argument("--bin-by", default="collection", choices=["collection", "first-set"],
                   help="bin pairs by the collection's difference (default), or each draw by the first "
                        "of two disjoint topic sets, as Voorhees & Buckley (swap rates only)")


def _check(args: argparse.Namespace) -> tuple[list[int], methods.Method]:
    """The topic counts and the method, after the checks that need no data."""
    topics = parse_int_list(args.topics, option="--topics", minimum=2)
    if args.allocation is not None and args.strata is None and args.allocation != "uniform":
        raise ParameterError("needs --strata FILE", parameter="--allocation")
    m = methods.method(args.method, parameter="--method")
    if args.seed is not None and m.closed_form and args.bin_by == "collection" and args.prediction == 0:
        raise ParameterError(f"not used with --method {m.name} and --prediction 0 (a closed form: nothing is "
                             "drawn at random)", parameter="--seed")
    if args.strata is not None and args.allocation != "uniform" and not m.strata:
        raise ParameterError(f"method {m.name!r}{' (the default)' if m.name == methods.DEFAULT_METHOD else ''} "
                             f"draws no topics within strata; with --strata give --method "
                             f"{words_or(methods.method_names(lambda x: x.strata))}, or --allocation uniform",
                             parameter="--allocation")
    return topics, m


def _filter(args: argparse.Namespace, scores: ScoreMatrix) -> tuple[ScoreMatrix, dict[str, Any] | None, list[str]]:
    """``--filter LO:HI[:SPREAD]``: the informative topics, the filter and the topics it removed."""
    from ..simulate import filter_informative  # heavy (scipy): loaded when the command runs

    if args.filter is None:
        return scores, None, []
    try:
        vals = [float(v) for v in args.filter.split(":")]
    except ValueError:
        vals = []
    if len(vals) not in (2, 3):
        raise ParameterError(f"expected LO:HI or LO:HI:SPREAD, got {args.filter!r}", parameter="--filter")
    filt = {"lo": vals[0], "hi": vals[1], "min_spread": vals[2] if len(vals) == 3 else 0.0}
    with options(every="--filter"):
        scores, removed = filter_informative(scores, **filt)
    return scores, filt, list(removed)


def _prior_line(prior: dict[str, Any]) -> str:
    line = f"prior on pair differences: {prior['kind']}, variance {prior['variance']}" \
        + (", integrated over its uncertainty" if prior["integrated"] else "")
    if prior["kind"] == "normal":
        line += f", tau2 {prior['tau2']:.4g} (sd {prior['tau2'] ** 0.5:.4g})"
        if prior.get("shrinkage_median") is not None:
            line += f"; median shrinkage factor {prior['shrinkage_median']:.3f} (1 = plug-in)"
    elif prior["kind"] == "scale":
        line += (f" (deconvolved), sd of the standardized true differences {prior['tau2'] ** 0.5:.3g} "
                 f"pair sds")
        if prior.get("close_pairs"):
            line += (f"; fitted apart on the {prior['close_pairs']} close pairs (systems that rise and fall "
                     "together) and the others")
    return line


def _print_header(args: argparse.Namespace, curve: Curve, filt: dict[str, Any] | None, removed: list[str]) -> None:
    seed_txt = "" if curve.seed is None else f"seed {curve.seed}{seed_note(args)}, "
    print(f"{args.scores}" + (f" ({curve.measure})" if curve.measure else "")
          + f": {len(curve.systems)} systems x {curve.n_collection_topics} topics, "
          f"{curve.pair_a.size} pairs; method {curve.method}, variance {curve.variance}, "
          f"{seed_txt}min_diff {curve.min_diff:g}, alpha {curve.alpha:g}"
          + (f", strata {curve.strata}" if curve.strata != "uniform" else ""))
    if filt is not None:
        print(f"filter {args.filter}: removed {len(removed)} topic(s)"
              + (": " + ", ".join(removed) if removed else ""))
    if curve.prior is not None:
        print(_prior_line(curve.prior))


def _row_note(row: dict[str, Any]) -> str:
    """What follows a row: whether it was extrapolated, and the allocation over strata."""
    ext = ""
    if row.get("extrapolated"):
        sw = row.get("swap_rate_mean")
        ext = ("  (extrapolated)" if sw is not None and math.isfinite(sw)
               else "  (above T/2: not extrapolated, see the warning)")
    alloc = row.get("allocation")
    return ext + ("  allocation " + ", ".join(f"{k}={v}" for k, v in alloc.items()) if alloc else "")


def _print_rows(curve: Curve) -> None:
    print("  ".join(f"{h:>8}" for h in COLUMNS.values()))
    for r in curve.rows:
        cells = [f"{r['n_topics']:>8d}"] + [cell(r[c]) for c in list(COLUMNS)[1:]]
        print("  ".join(cells) + _row_note(r))


def _no_band(args: argparse.Namespace, m: methods.Method, strata: str) -> str | None:
    """Why no prediction interval is computed (``--prediction 0``, or the method has none), or None."""
    from ..simulate.prediction import band_reason  # heavy (scipy): loaded when the command runs

    if args.prediction == 0:
        return "--prediction 0"
    variance = args.variance or (m.default_variance if m.closed_form else "pair")
    why = band_reason(m, variance, strata)
    # without --prediction a method that has none is silent about it
    return why if why is None or args.prediction is not None else "--prediction 0"


def _print_prediction(curve: Curve, no_band: str | None) -> None:
    """The prediction intervals: what new n-topic sets will show (or why there are none)."""
    from ..simulate.prediction import PREDICTED  # heavy (scipy): loaded when the command runs

    band = curve.prediction
    if band is None:
        if no_band != "--prediction 0":
            print(f"no prediction intervals: {no_band}")
        return
    print(f"\n{band.level:.0%} prediction intervals: the swap rate and tau between two new n-topic sets, "
          f"the reversal rate of one ({band.resamples} resamples; docs/simulate.md)")
    print(f"{'n':>8}  {'swap':>17}  {'reversal':>17}  {'tau':>17}")
    for j, n in enumerate(band.topics):
        cells = [f"[{lo[j]:.4f}, {hi[j]:.4f}]" for lo, hi in (band.ends(k) for k in PREDICTED)]
        print(f"{n:>8d}  " + "  ".join(f"{c:>17}" for c in cells))


def _print_bins(curve: Curve) -> None:
    print("\nby |difference| bin:")
    print(f"{'n':>6} {'bin':>14} {'pairs':>6} {'swap':>8} {'reversal':>8} {'ci_med':>8} {'power':>8} {'disc':>8}")
    for r in curve.bins:
        if not r["n_pairs"]:
            continue
        edges = "[" + format(r["bin_lo"], "g") + ", " + format(r["bin_hi"], "g") + ")"
        print(f"{r['n_topics']:>6d} {edges:>14} {r['n_pairs']:>6d} " + " ".join(cell(r[c]) for c in BIN_COLUMNS))


def _edges(args: argparse.Namespace) -> tuple[float, ...]:
    """``--bins EDGES`` as numbers (the default bins for a bare ``--bins``)."""
    from ..simulate import DEFAULT_BINS  # heavy (scipy): loaded when the command runs

    if args.bin_by != "collection" and args.bins is None:
        raise ParameterError("needs --bins (with or without edges)", parameter="--bin-by")
    if not args.bins:
        return tuple(DEFAULT_BINS)
    try:
        edges = tuple(float(e) for e in args.bins.split(","))
    except ValueError:
        raise ParameterError(f"expected numbers separated by commas, got {args.bins!r}", parameter="--bins") \
            from None
    if len(edges) < 2 or any(not lo < hi for lo, hi in itertools.pairwise(edges)) or edges[0] < 0:
        raise ParameterError(f"expected at least 2 increasing edges >= 0, got {args.bins!r}", parameter="--bins")
    return edges


def _print_first_set(fs: Any) -> None:
    print(f"\nswap rate by the first set's |difference| (Voorhees & Buckley; {fs.n_resamples} pairs of "
          f"disjoint topic sets per n, seed {fs.seed}):")
    print(f"{'n':>6} {'bin':>14} {'draws':>9} {'swap':>8}")
    for r in fs.to_dict()["rows"]:
        if r["draws"]:
            edges = "[" + format(r["bin_lo"], "g") + ", " + format(r["bin_hi"], "g") + ")"
            print(f"{r['n_topics']:>6d} {edges:>14} {r['draws']:>9d} {cell(r['swap_rate'])}")


def run(args: argparse.Namespace) -> int:
    """Run ``planner predict``."""
    from ..simulate import predict  # heavy (scipy): loaded when the command runs

    topics, m = _check(args)
    edges = _edges(args)
    scores = load_scores(args.scores, measure=args.measure, strata=args.strata, missing=args.missing,
                         variant_divisor=args.variant_divisor)
    scores, filt, removed = _filter(args, scores)
    strata = args.allocation or ("stratified" if args.strata else "uniform")
    no_band = _no_band(args, m, strata)
    if m.random or no_band is None:
        draw_seed(args)
    with options({"strata": "--allocation", "prediction": "--prediction", "prediction_resamples": "--prediction"}):
        curve = predict(scores, topics=topics, method=m.name, variance=args.variance,
                        min_diff=args.min_diff, alpha=args.alpha, n_resamples=args.resamples,
                        strata=strata, rng=args.seed, bins=edges, progress=args.progress, keep_pairs=False,
                        prediction=(args.prediction or PREDICTION_LEVEL) if no_band is None else None)
    out = curve.to_dict()
    first = None
    if args.bin_by == "first-set":
        from ..simulate import first_set_bins  # heavy: loaded when asked for

        if args.seed is None:
            draw_seed(args)
        first = first_set_bins(scores, topics=topics, bins=edges, n_resamples=args.resamples, rng=args.seed)
        out["bins_first_set"] = first.to_dict()
    if filt is not None:
        out["filter"] = dict(filt, removed_topics=removed)
    if args.json:
        print_json(out, args)
        return 0
    _print_header(args, curve, filt, removed)
    _print_rows(curve)
    _print_prediction(curve, no_band)
    if args.bins is not None and first is None:
        _print_bins(curve)
    if first is not None:
        _print_first_set(first)
    return 0
