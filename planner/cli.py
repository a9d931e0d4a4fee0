"""The ``planner`` command: a thin argparse front over the public functions.

One subcommand per public function. Every subcommand has ``--help`` with
examples and ``--json`` for machine output. Exit codes: 0 success; 2 a usage,
input or config error, printed as one line naming the file and line, the config
key or the option; 1 an internal fault. Warnings are held until the command ends
and printed only when it succeeds (or before an internal fault's traceback).

Each subcommand is a pair in this file: ``_add_<name>(subparsers)`` declares it
and ``_cmd_<name>(args) -> int`` runs it; :data:`COMMANDS` lists them in the
order ``--help`` shows.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
import warnings
from collections.abc import Callable

from .errors import DegenerateDataWarning, ParameterError, PlannerError

PROG = "planner"


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line and exit 2 (no usage dump)."""

    def error(self, message: str):  # argparse API
        self.exit(2, f"{self.prog}: error: {message}\n")


class _Formatter(argparse.RawDescriptionHelpFormatter):
    pass


def _sub(subparsers, name: str, help: str, examples: str, description: str | None = None) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        name, help=help, description=(description or help) + "\n\nexamples:\n" + examples.rstrip(),
        formatter_class=_Formatter)
    p.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout")
    return p


def _scores_option(p: argparse.ArgumentParser) -> None:
    """The required ``--scores FILE`` and optional ``--measure`` of fit, predict and validate."""
    p.add_argument("--scores", required=True, metavar="FILE",
                   help="wide CSV, tidy CSV/TSV, folder of trec_eval -q files, or an embedded data set "
                        "(dl19-passage, dl20-passage; measure default nDCG@10)")
    p.add_argument("--measure", default=None, help="measure to select in --scores (trec_eval folders, tidy tables)")
    _variant_option(p)


def _variant_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--variant-divisor", type=int, default=None, metavar="K",
                   help="query ids are topic*K+variant: the variants of a topic are averaged (and kept "
                        "together), so counts are of topics, not of queries (fit: the three-facet model too)")


def print_json(obj, args=None) -> None:
    """Print ``obj`` as JSON (NaN/inf become null). With the command's ``args``, an object
    gets a ``provenance`` entry: the command line and the versions behind its numbers."""
    if args is not None and isinstance(obj, dict) and "provenance" not in obj:
        from .report import versions

        argv = getattr(args, "argv", None)
        obj = {**obj, "provenance": {"command": None if argv is None else shlex.join([PROG, *argv]),
                                     "versions": versions()}}
    print(json.dumps(_jsonable(obj), indent=2, allow_nan=False))


def _jsonable(obj):
    from ._json import plain  # lazy: numpy is not imported at CLI start-up

    return plain(obj)


def _draw_seed(args) -> None:
    """A command that draws random numbers without ``--seed`` gets a fresh seed, recorded in its
    output and added to the provenance command line, so the run can be repeated exactly."""
    if getattr(args, "seed", None) is None:
        import secrets

        args.seed = secrets.randbelow(2 ** 31)
        args.seed_drawn = True
        if getattr(args, "argv", None) is not None:
            args.argv = [*args.argv, "--seed", str(args.seed)]


def _seed_note(args) -> str:
    return " (drawn; --seed repeats this run)" if getattr(args, "seed_drawn", False) else ""


def _seed(text: str) -> int:
    """argparse type of ``--seed``: an integer >= 0 (numpy's seed sequences need one)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {v}")
    return v


def parse_int_list(text: str, *, option: str, minimum: int = 1) -> list[int]:
    """``"25,50,100"`` -> ``[25, 50, 100]``; a bad item is a ParameterError naming ``option``."""
    out = []
    for item in text.split(","):
        item = item.strip()
        try:
            v = int(item)
        except ValueError:
            raise ParameterError(f"expected a comma-separated list of integers, got {item!r}",
                                 parameter=option) from None
        if v < minimum:
            raise ParameterError(f"values must be >= {minimum}, got {v}", parameter=option)
        if v in out:
            raise ParameterError(f"{v} is listed more than once", parameter=option)
        out.append(v)
    if not out:
        raise ParameterError("empty list", parameter=option)
    return out


def parse_name_list(text: str, *, option: str) -> list[str]:
    """``"a,b"`` -> ``["a", "b"]``; an empty or repeated name is a ParameterError naming ``option``."""
    out = [item.strip() for item in text.split(",")]
    for item in out:
        if not item:
            raise ParameterError(f"empty name in {text!r}", parameter=option)
        if out.count(item) > 1:
            raise ParameterError(f"{item!r} is listed more than once", parameter=option)
    return out


# --------------------------------------------------------------------------
# subcommands (each module's owner adds its pair below and lists it in COMMANDS)
# --------------------------------------------------------------------------


def _load_scores(path, *, measure=None, strata=None, missing="error", variant_divisor=None):
    """:func:`planner.load_scores`, or the embedded data set of that name (``planner.datasets``,
    measure default nDCG@10) when no such file or folder exists; with ``variant_divisor``
    the query ids become (topic, variant) (:func:`planner.variance.stack_variants`)."""
    from pathlib import Path

    from . import datasets
    from .collection import load_scores

    if variant_divisor is not None and variant_divisor < 2:   # before any data warning
        raise ParameterError(f"expected an integer >= 2, got {variant_divisor}", parameter="--variant-divisor")
    # with query variants the strata are attached after stacking (they may name topics)
    own = None if variant_divisor is not None else strata
    if path in datasets.available() and not Path(path).exists():
        m = datasets.load(path, measure=measure or "nDCG@10")
        m = load_scores(m, strata=own) if own is not None else m
    else:
        m = load_scores(path, measure=measure, strata=own, missing=missing)
    if variant_divisor is not None:
        from .collection import stack_with_strata

        if m.has_variants:
            raise ParameterError("the scores already have query variants (a 'variant' column): nothing to "
                                 "split", parameter="--variant-divisor")
        m = stack_with_strata(m, variant_divisor, strata)
    return m


def _add_size(subparsers) -> None:
    p = _sub(subparsers, "size", "topic-set size of a classical design (paired-t, two-sample, anova, ci)",
             """  planner size --design paired-t --min-diff 0.05 --sigma2 0.02 --power 0.8
  planner size --design anova --min-diff 0.1 --scores ap.csv --variance pooled --systems 10
  planner size --design ci --min-diff 0.1 --scores ap.csv --variance percentile:95 --json
  planner size --design paired-t --topics 50 --sigma2 0.02          # minimum detectable difference
  planner size --design paired-t --min-diff 0.05 --sigma2 0.02 --correction holm --systems 10
  planner size --target swap_rate:0.05 --scores ap.csv --variance pair --seed 1
  planner size --target kendall_tau:0.9 --scores ap.csv --method bootstrap --seed 1 --json
  planner size --target swap_rate:0.05 --scores clef_p10.csv --variant-divisor 1000 --variants 1,2,3,6
  planner size --allocate 100 --scores ap.csv --strata topics.csv --stratum-costs web=1,news=2""",
             description="Solve a classical topic-set-size design (Sakai 2016) for whichever of "
                         "--topics, --min-diff and --power is unset (default power 0.8 when both "
                         "--topics and --power are absent). For --design ci, --min-diff is the largest "
                         "acceptable expected width of the interval of the mean difference.\n"
                         "With --target NAME:VALUE instead of --design: the smallest n whose swap rate, "
                         "reversal rate, ci width (<=), Kendall tau, erho2, phi or mean power (>=) "
                         "meets VALUE on the collection in --scores, with an interval on n.")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--design", choices=["paired-t", "two-sample", "anova", "ci"])
    what.add_argument("--target", metavar="NAME:VALUE",
                      help="swap_rate, reversal_rate, ci_width, kendall_tau, erho2, phi or power")
    what.add_argument("--allocate", type=int, metavar="N",
                      help="split N topics across the strata of --scores (needs --strata)")
    p.add_argument("--min-diff", type=float, default=None, metavar="D",
                   help="minimum detectable difference (anova: range best-worst; ci: width cap)")
    p.add_argument("--width", type=float, default=None, metavar="W",
                   help="ci: the largest acceptable expected interval width (same as --min-diff)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--sigma2", type=float, metavar="V",
                     help="the variance the design needs (paired: of per-topic differences; "
                          "two-sample/anova: within-system)")
    src.add_argument("--scores", metavar="FILE", help="estimate the variance from a score file/folder or an "
                     "embedded data set (dl19-passage, dl20-passage)")
    p.add_argument("--measure", default=None, help="measure to select in --scores (trec_eval folders)")
    _variant_option(p)
    p.add_argument("--variance", default=None, metavar="SEL",
                   help="with --scores: pair | pooled | within-system | percentile:q "
                        "(default pooled for --design, pair for --target)")
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
    p.add_argument("--method", default=None,
                   help="--target: analytic (default) or a predict method (predictive, bootstrap, "
                        "subsample, parametric, or a predictive variant such as predictive-shrunk)")
    p.add_argument("--resamples", type=int, default=None,
                   help="topic resamples of the interval on n (default 200 for --target; 0 for "
                        "--design, where it needs --scores); with --target and --method bootstrap, "
                        "subsample or parametric, which give no interval, the simulation's resamples "
                        "at each topic count (default 1000)")
    p.add_argument("--seed", type=_seed, default=None, help="seed of the resampling")
    p.add_argument("--variants", default=None, metavar="V,V,...",
                   help="--target on scores with query variants: also the topics needed with V variants "
                        "per topic, for each V (swap_rate, reversal_rate, kendall_tau, ci_width, power; "
                        "method analytic, predictive, predictive-pair, predictive-shrunk or predictive-pooled)")
    p.add_argument("--strata", metavar="FILE", help="--allocate: topic metadata CSV (topic, stratum)")
    p.add_argument("--stratum-costs", metavar="K=C,...", default=None,
                   help="--allocate: cost per topic of each stratum (default 1 each)")
    p.add_argument("--allocation", choices=["proportional", "optimal"], default=None,
                   help="--allocate: the allocation reported as n (default optimal; both are always shown)")


def _cmd_size(args) -> int:
    from .plan import topic_set_size

    # options that the chosen mode would silently ignore are errors
    mode = "--target" if args.target is not None else "--allocate" if args.allocate is not None else "--design"
    unused = {"--strata": args.strata, "--stratum-costs": args.stratum_costs,
              "--allocation": args.allocation} if mode != "--allocate" else {}
    if mode != "--target":
        unused["--method"] = args.method
        unused["--variants"] = args.variants
    if mode != "--design":
        unused.update({"--power": args.power, "--width": args.width, "--approx": args.approx,
                       "--correction": args.correction, "--systems": args.systems, "--topics": args.topics})
    if mode == "--allocate":
        unused.update({"--min-diff": args.min_diff, "--variance": args.variance, "--resamples": args.resamples,
                       "--seed": args.seed})
    elif args.design == "ci":
        unused["--power"] = args.power
    for opt, val in unused.items():
        if val is not None:
            raise ParameterError(f"not used with {mode}" + (f" {args.design}" if mode == "--design" else ""),
                                 parameter=opt)
    if mode == "--design" and args.sigma2 is not None:
        # a given variance: nothing is estimated from scores, so these would be ignored
        for opt, val in (("--variance", args.variance), ("--measure", args.measure),
                         ("--resamples", args.resamples), ("--seed", args.seed),
                         ("--variant-divisor", args.variant_divisor)):
            if val is not None:
                raise ParameterError("not used with --sigma2 (it needs --scores)", parameter=opt)
    if args.target is not None:
        return _size_target(args)
    if args.allocate is not None:
        return _size_allocate(args)
    if args.design == "ci" and args.width is not None and args.min_diff is not None:
        raise ParameterError("give the width cap once (--width or --min-diff)", parameter="--width")
    if args.design == "anova" and args.systems is None:
        raise ParameterError("--design anova needs the number of systems compared", parameter="--systems")
    if args.correction is not None and args.systems is None:
        raise ParameterError("a correction over all pairs needs the number of systems", parameter="--systems")
    if args.scores is not None:
        if not args.resamples and args.seed is not None:
            raise ParameterError("not used without --resamples R (no interval on n: nothing is drawn at random)",
                                 parameter="--seed")
        variance = _load_scores(args.scores, measure=args.measure, variant_divisor=args.variant_divisor)
        if args.resamples:
            _draw_seed(args)
    else:
        variance = args.sigma2
    power = args.power
    if args.design != "ci" and power is None and (args.topics is None or args.min_diff is None):
        power = 0.8
    res = topic_set_size(design=args.design, min_diff=args.min_diff, variance=variance,
                         variance_selector=args.variance or "pooled", alpha=args.alpha, power=power,
                         n_topics=args.topics, systems=2 if args.systems is None else args.systems,
                         approx=args.approx,
                         correction=args.correction, width=args.width,
                         resamples=args.resamples or 0, rng=args.seed)
    if args.json:
        print_json(res.to_dict(), args)
        return 0
    print(f"design {res.design} ({res.method}), solved for {res.solved_for}")
    print(f"  topics        {res.n_topics}")
    if res.n_lower is not None or res.n_upper is not None:
        hi = "unbounded" if res.n_upper is None else res.n_upper
        print(f"  {res.interval:.0%} interval  [{res.n_lower}, {hi}]  ({res.interval_method})")
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
    if res.seed is not None:
        print(f"  seed          {res.seed}{_seed_note(args)}")
    return 0


def _size_allocate(args) -> int:
    from .plan import allocate

    if args.scores is None or args.strata is None:
        raise ParameterError("--allocate needs --scores FILE and --strata FILE", parameter="--allocate")
    costs = None
    if args.stratum_costs:
        costs = {}
        for item in args.stratum_costs.split(","):
            key, sep, val = item.partition("=")
            if key.strip() in costs:
                raise ParameterError(f"stratum {key.strip()!r} given twice", parameter="--stratum-costs")
            try:
                costs[key.strip()] = float(val)
            except ValueError:
                sep = ""
            if not sep:
                raise ParameterError(f"expected STRATUM=COST, got {item!r}", parameter="--stratum-costs")
    scores = _load_scores(args.scores, measure=args.measure, strata=args.strata,
                          variant_divisor=args.variant_divisor)
    try:
        res = allocate(scores, n=args.allocate, costs=costs, method=args.allocation or "optimal",
                       alpha=args.alpha)
    except ParameterError as exc:
        opt = {"n": "--allocate", "costs": "--stratum-costs", "scores": "--strata"}.get(exc.parameter)
        if opt is None:
            raise
        raise ParameterError(exc.message, parameter=opt) from None
    if args.json:
        print_json(res.to_dict(), args)
        return 0
    print(f"allocation of {args.allocate} topics, or of their cost when strata cost differently "
          f"({res.variance_note})")
    print(f"  {'stratum':<16} {'W':>6} {'sigma2':>9} {'cost':>6} {'prop.':>6} {'optimal':>8}")
    for r in res.strata:
        print(f"  {r['stratum']:<16} {r['weight']:>6.3f} {r['sigma2']:>9.5f} {r['cost']:>6.2f} "
              f"{r['n_proportional']:>6} {r['n_optimal']:>8}")
    for c in res.compare:
        print(f"  {c['design']:<13} n {c['n_topics']:>5}  cost {c['cost']:>9.2f}  "
              f"width {c['width']:.4f}")
    return 0


def _size_target(args) -> int:
    from .plan import size_for_target

    if args.scores is None:
        raise ParameterError("a target needs a collection to learn from (--scores FILE)", parameter="--scores")

    name, value = _parse_target(args.target)
    nv = None if args.variants is None else parse_int_list(args.variants, option="--variants", minimum=1)
    scores = _load_scores(args.scores, measure=args.measure, variant_divisor=args.variant_divisor)
    method = "analytic" if args.method is None else args.method      # '' is an unknown method, not the default
    if nv is not None:
        from .plan import MAX_VARIANTS, VARIANT_METHODS

        # what the variant model cannot answer is an error before any work
        why = (f"at most {MAX_VARIANTS:,} variants per topic, got {max(nv)}" if max(nv) > MAX_VARIANTS else
               "the scores have no query variants (give --variant-divisor K, or a tidy file with a variant "
               "column)" if not scores.has_variants else
               f"{name} with query variants is the three-facet D-study (planner fit on the same scores)"
               if name in ("erho2", "phi") else
               f"method {method} has no model of query variants (use analytic or a predictive method)"
               if method not in VARIANT_METHODS else
               "the variant model uses each pair's own variance (--variance pair)"
               if args.variance not in (None, "pair") else None)
        if why:
            raise ParameterError(why, parameter="--variants")
    dstudy = name in ("erho2", "phi")        # closed-form D-study: no method, variance or seed
    if not dstudy and ((args.resamples is None or args.resamples != 0)
                       or method in ("bootstrap", "subsample", "parametric")):
        _draw_seed(args)
    elif args.seed is not None:
        raise ParameterError("not used: nothing is drawn at random (" + (
            f"the {name} target is a closed-form D-study" if dstudy else
            f"--resamples 0 asks for no interval on n, and method {method} is a closed form") + ")",
            parameter="--seed")
    simulated = method in ("bootstrap", "subsample", "parametric")
    if simulated:
        # no interval on n for these: --resamples is the simulation's size, as in planner predict
        sim = 1000 if args.resamples is None else args.resamples
        if isinstance(sim, bool) or sim < 1:
            raise ParameterError(f"expected an integer >= 1 (the simulation's resamples), got {sim}",
                                 parameter="--resamples")
        rkw = {"resamples": 0, "sim_resamples": sim}
    else:
        rkw = {"resamples": 200 if args.resamples is None else args.resamples}
    try:
        res = size_for_target(scores, target=name, value=value, method=method,
                              variance="pair" if args.variance is None else args.variance, alpha=args.alpha,
                              min_diff=args.min_diff if args.min_diff is not None else 0.05,
                              rng=args.seed, **rkw)
    except ParameterError as exc:
        # name the command-line option the user typed
        opt = {"variance": "--variance", "method": "--method", "alpha": "--alpha", "min_diff": "--min-diff",
               "resamples": "--resamples", "value": "--target", "target": "--target"}.get(exc.parameter)
        if opt is None:
            raise
        raise ParameterError(exc.message, parameter=opt) from None
    vtr = None
    if nv is not None:
        from .plan import topics_for_variants

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)     # said once already
            vtr = topics_for_variants(scores, target=name, value=value, n_variants=nv, method=method,
                                      min_diff=args.min_diff if args.min_diff is not None else 0.05,
                                      alpha=args.alpha, resamples=rkw["resamples"], rng=args.seed)
    if args.json:
        print_json({**res.to_dict(), "source": scores.source, "measure": scores.measure,
                    "n_variants": scores.n_variants,
                    **({"variants": vtr.to_dict()} if vtr is not None else {})}, args)
        return 0
    n = "none up to the search limit" if res.n_topics is None else str(res.n_topics)
    how = "D-study of the variance components" if dstudy else f"{res.method}, variance {res.variance}"
    print(f"target {res.target} {res.direction} {res.value} ({how})")
    print(f"  statistic     {_target_statistic(res)}")
    print(f"  scores        {scores.source or 'scores'}"
          + (f", {scores.measure}" if scores.measure else "")
          + (f" (each topic the mean of its {scores.n_variants} query variants)"
             if getattr(scores, "n_variants", 1) and scores.n_variants > 1 else ""))
    print(f"  topics        {n}")
    if res.n_topics is not None:
        prev = "" if res.at_n_minus_1 is None else f" (at n-1: {res.at_n_minus_1:.8g})"
        print(f"  achieved      {res.achieved:.8g}{prev}")
    if res.interval_method.startswith("none"):
        print(f"  interval      {res.interval_method}")
    else:
        lo = "-" if res.lower is None else res.lower
        hi = "unbounded" if res.upper is None else res.upper
        print(f"  {res.interval:.0%} interval  [{lo}, {hi}]  ({res.interval_method})")
    print(f"  learnt from   {res.n_systems} systems x {res.n_topics_observed} topics, {res.n_pairs} pairs"
          + (f" ({res.identical_pairs} identical, counted as ties)" if res.identical_pairs else ""))
    far_noted = (res.n_topics is not None and res.interval_method.startswith("topic resampling")
                 and res.n_topics >= 1.5 * res.n_topics_observed)
    if far_noted:
        # measured: such counts and their intervals run low (benchmarks/bench_coverage.py)
        print(f"  note          {res.n_topics} is {res.n_topics / res.n_topics_observed:.1f} times the topics learnt "
              "from: counts this far out, and their interval, tend to run low (docs/planning.md, "
              "'What the interval on n covers'); plan towards the upper end")
    if res.sim_resamples:
        print(f"  simulation    {res.sim_resamples} resamples at each topic count (--resamples)")
    if vtr is not None:
        ivl = ("no interval on n" if not vtr.resamples else
               f"{vtr.interval:.0%} interval on n from the same {vtr.resamples} topic resamples")
        print(f"  variants      topics needed with V query variants per topic ({method}; each pair's "
              f"variant share of one variant's variance: median {vtr.variant_share:.2f}; {ivl}):")
        for r in vtr.rows:
            got = ("not reached" if r["n_topics"] is None else
                   f"{r['n_topics']:>7} topics, {r['queries']:>8} queries")
            if r["n_topics"] is not None and vtr.resamples:
                got += f"  [{r['n_lower']}, {'-' if r['n_upper'] is None else r['n_upper']}]"
            print(f"    V = {r['n_variants']:<4} {got}   (variance x {r['variance_ratio']:.3f})")
        far = max((r["n_topics"] for r in vtr.rows if r["n_topics"] is not None), default=None)
        more = [r["n_variants"] for r in vtr.rows if r["n_variants"] > vtr.n_variants_observed]
        if far is not None and far >= 1.5 * vtr.n_topics_observed:
            print(f"    note        the largest count, {far}, is {far / vtr.n_topics_observed:.1f} times the "
                  f"{vtr.n_topics_observed} topics learnt from"
                  + (" (as the note above says, such counts tend to run low)" if far_noted else
                     ": counts this far out tend to run low"))
        if more:
            print(f"    note        V = {', '.join(map(str, more))}: more than the collection's "
                  f"{vtr.n_variants_observed} variants per topic, so the model's 1/V scaling is extrapolated")
    if res.seed is not None and not dstudy:
        print(f"  seed          {res.seed}{_seed_note(args)}")
    return 0


def _target_statistic(res) -> str:
    """What a size --target statistic is, in words (the JSON has the same settings as fields)."""
    level = f"{1 - res.alpha:.0%}"
    return {
        "swap_rate": "mean over system pairs of the chance that two independent topic sets order the "
                     "pair differently",
        "reversal_rate": "mean over system pairs of the chance that a topic set orders the pair "
                         "differently from the collection",
        "kendall_tau": "expected Kendall tau between the system rankings of two independent topic sets",
        "ci_width": f"median over system pairs of the width of the {level} interval of the pair's mean "
                    "difference",
        "power": f"mean over system pairs of the power of the paired t-test (alpha {res.alpha:g}) to "
                 f"detect a difference of {res.min_diff:g}",
        "erho2": "generalizability coefficient Erho2 of the D-study (the variance components)",
        "phi": "dependability coefficient Phi of the D-study (the variance components)",
    }[res.target]


def _add_study(subparsers) -> None:
    p = _sub(subparsers, "study", "run a YAML what-if study and write its report folder",
             """  planner study                                   # embedded quick start (DL 2019, nDCG@10)
  planner study configs/metric-choice.yaml -o reports/metric-choice --force
  planner study my-study.yaml --seed 7 --jobs 2 --quiet --json
  planner schema > study.schema.json                # JSON Schema for editors""",
             description="Run a study (a YAML what-if grid: collection, measures, topic counts, methods, "
                         "strata, filters, targets, costs) and write report.md, report.html, results.json, "
                         "CSV tables and plots. Without CONFIG the embedded quick start runs on the "
                         "embedded TREC DL 2019 passage data.")
    p.add_argument("config", nargs="?", default=None, metavar="CONFIG", help="study YAML file")
    p.add_argument("-o", "--out", default=None, metavar="DIR",
                   help="report folder (default reports/<study name>)")
    p.add_argument("--force", action="store_true", help="replace an existing report folder")
    p.add_argument("--seed", type=_seed, default=None, metavar="N", help="override the study's seed")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="scenarios run in N parallel processes (same results for any N)")
    p.add_argument("--quiet", action="store_true", help="no progress bar (shown only when stderr is a terminal)")


def _study_command(args) -> str:
    """The ``planner study`` command line as given (options in a fixed order), for provenance."""
    import shlex

    parts = ["planner", "study"] + ([str(args.config)] if args.config else [])
    if args.out:
        parts += ["-o", str(args.out)]
    if args.force:
        parts.append("--force")
    if args.seed is not None:
        parts += ["--seed", str(args.seed)]
    if args.jobs not in (None, 1):
        parts += ["--jobs", str(args.jobs)]
    if args.quiet:
        parts.append("--quiet")
    if args.json:
        parts.append("--json")
    return shlex.join(parts)


def _cmd_study(args) -> int:
    import time as _time

    import matplotlib

    matplotlib.use("Agg")
    from .study import run_study

    if args.jobs is not None and args.jobs < 1:
        raise ParameterError(f"expected an integer >= 1, got {args.jobs}", parameter="--jobs")
    t0 = _time.perf_counter()
    cmd = _study_command(args)
    res = run_study(args.config, out=args.out, force=args.force, seed=args.seed, jobs=args.jobs,
                    quiet=args.quiet, command=cmd)
    secs = _time.perf_counter() - t0
    if args.json:
        print_json({"study": res.name, "out": res.out, "seconds": round(secs, 2),
                    "answer": res.answer, "seed": res.results.get("seed")}, args)
        return 0
    print(res.answer.get("text", "").replace("**", ""))
    for b in res.answer.get("buys", []):
        print(f"  - {b}")
    print(f"report: {res.out}/report.html ({secs:.1f} s)")
    return 0


def _add_schema(subparsers) -> None:
    _sub(subparsers, "schema", "print the JSON Schema of study YAML files",
         """  planner schema > study.schema.json
  planner schema --json""",
         description="Print the JSON Schema (draft 2020-12) that study files are validated against, "
                     "for editors that complete and check YAML.")


def _cmd_schema(args) -> int:
    from .study import schema

    print(json.dumps(schema(), indent=2))
    return 0


def _add_predict(subparsers) -> None:
    p = _sub(subparsers, "predict", "curves of swap/reversal rate, Kendall tau, CI width, power vs topic count",
             """  planner predict --scores ap.csv --topics 25,50,100
  planner predict --scores ap.csv --topics 25,50,100 --method bootstrap --resamples 2000 --seed 1 --json
  planner predict --scores ap.csv --topics 10,20,25,50,100 --method subsample --seed 7
  planner predict --scores ap.csv --topics 25,50 --method analytic --variance percentile:95
  planner predict --scores ap.csv --strata topics.csv --allocation optimal --topics 30,60 --method bootstrap""",
             description="Predict, for each topic count, the mean swap and reversal rate over all pairs "
                         "of systems, the expected Kendall tau, the median and 90th percentile of the "
                         "pairs' interval widths, the mean power of the paired t-test at --min-diff, "
                         "the discriminative power, Erho2 and Phi (definitions: docs/simulate.md).")
    _scores_option(p)
    p.add_argument("--topics", required=True, metavar="N,N,...", help="topic counts, e.g. 25,50,100")
    p.add_argument("--method", default="predictive",
                   metavar="METHOD",
                   help="predictive (default, pilot-aware), analytic, bootstrap, subsample, parametric, "
                        "or a predictive variant as named by `planner validate` (predictive-shrunk, "
                        "predictive-pooled, predictive-integrated, predictive-npmle, predictive-mixture); "
                        "see docs/simulate.md")
    p.add_argument("--variance", default=None, metavar="SEL",
                   help="analytic: pair (default) | pooled | within-system | percentile:q")
    p.add_argument("--min-diff", type=float, default=0.05, metavar="D", help="difference for the power (0.05)")
    p.add_argument("--alpha", type=float, default=0.05, metavar="A", help="test level; intervals 1-A (0.05)")
    p.add_argument("--resamples", type=int, default=1000, metavar="R", help="resamples of random methods (1000)")
    p.add_argument("--seed", type=_seed, default=None, metavar="N", help="random seed")
    p.add_argument("--strata", default=None, metavar="FILE", help="topic metadata CSV (topic, stratum)")
    p.add_argument("--allocation", default=None, choices=["uniform", "stratified", "proportional", "optimal"],
                   help="with --strata: how n is spread over strata (default stratified = proportional; "
                        "needs --method analytic, bootstrap or subsample)")
    p.add_argument("--filter", default=None, metavar="LO:HI[:SPREAD]",
                   help="drop uninformative topics first (all systems <= LO or >= HI, or range < SPREAD)")
    p.add_argument("--bins", action="store_true", help="also print the summaries by bins of |difference|")


def _cmd_predict(args) -> int:
    from .simulate import filter_informative, predict

    topics = parse_int_list(args.topics, option="--topics", minimum=2)
    if args.allocation is not None and args.strata is None and args.allocation != "uniform":
        raise ParameterError("needs --strata FILE", parameter="--allocation")
    from .simulate import CLOSED_FORM, PREDICTIVE

    if args.seed is not None and args.method in CLOSED_FORM:
        raise ParameterError(f"not used with --method {args.method} (a closed form: nothing is drawn at random)",
                             parameter="--seed")
    if args.strata is not None and args.allocation in (None, "stratified", "proportional", "optimal") \
            and (args.method in PREDICTIVE or args.method == "parametric"):
        raise ParameterError(f"method {args.method!r}{' (the default)' if args.method == 'predictive' else ''} "
                             f"draws no topics within strata; with --strata give --method analytic, bootstrap "
                             f"or subsample, or --allocation uniform", parameter="--allocation")
    scores = _load_scores(args.scores, measure=args.measure, strata=args.strata,
                          variant_divisor=args.variant_divisor)
    removed = None
    filt = None
    if args.filter is not None:
        parts = args.filter.split(":")
        try:
            vals = [float(v) for v in parts]
        except ValueError:
            vals = []
        if len(vals) not in (2, 3):
            raise ParameterError(f"expected LO:HI or LO:HI:SPREAD, got {args.filter!r}", parameter="--filter")
        filt = {"lo": vals[0], "hi": vals[1], "min_spread": vals[2] if len(vals) == 3 else 0.0}
        try:
            scores, removed = filter_informative(scores, **filt)
        except ParameterError as exc:
            raise ParameterError(exc.message, parameter="--filter") from None
    allocation = args.allocation or ("stratified" if args.strata else "uniform")
    opts = {"--min-diff": args.min_diff, "--alpha": args.alpha, "--resamples": args.resamples,
            "--variance": args.variance, "--allocation": allocation}
    if args.method in ("bootstrap", "subsample", "parametric"):
        _draw_seed(args)
    try:
        curve = predict(scores, topics=topics, method=args.method, variance=args.variance,
                        min_diff=args.min_diff, alpha=args.alpha, resamples=args.resamples,
                        strata=allocation, rng=args.seed)
    except ParameterError as exc:
        name = {"min_diff": "--min-diff", "alpha": "--alpha", "resamples": "--resamples",
                "variance": "--variance", "strata": "--allocation", "topics": "--topics"}.get(exc.parameter)
        if name in opts or name == "--topics":
            raise ParameterError(exc.message, parameter=name) from None
        raise
    out = curve.to_dict()
    if filt is not None:
        out["filter"] = dict(filt, removed_topics=list(removed))
    if args.json:
        print_json(out, args)
        return 0
    seed_txt = "" if curve.seed is None else f"seed {curve.seed}{_seed_note(args)}, "
    print(f"{args.scores}" + (f" ({curve.measure})" if curve.measure else "")
          + f": {len(curve.systems)} systems x {curve.n_collection_topics} topics, "
          f"{curve.pair_a.size} pairs; method {curve.method}, variance {curve.variance}, "
          f"{seed_txt}min_diff {curve.min_diff:g}, alpha {curve.alpha:g}"
          + (f", strata {curve.strata}" if curve.strata != "uniform" else ""))
    if removed is not None:
        print(f"filter {args.filter}: removed {len(removed)} topic(s)"
              + (": " + ", ".join(removed) if removed else ""))
    if curve.prior is not None:
        pr = curve.prior
        line = f"prior on pair differences: {pr['kind']}, variance {pr['variance']}" \
            + (", integrated over its uncertainty" if pr["integrated"] else "")
        if pr["kind"] == "normal":
            line += f", tau2 {pr['tau2']:.4g} (sd {pr['tau2'] ** 0.5:.4g})"
            if pr.get("shrinkage_median") is not None:
                line += f"; median shrinkage factor {pr['shrinkage_median']:.3f} (1 = plug-in)"
        print(line)
    cols = ["n_topics", "swap_rate_mean", "reversal_rate_mean", "kendall_tau_mean", "ci_width_median",
            "ci_width_p90", "power_mean", "discriminative_power", "erho2", "phi"]
    heads = ["n", "swap", "reversal", "tau", "ci_med", "ci_p90", "power", "disc", "Erho2", "Phi"]
    print("  ".join(f"{h:>8}" for h in heads))
    for r in curve.rows:
        cells = [f"{r['n_topics']:>8d}"]
        for c in cols[1:]:
            v = r[c]
            cells.append(f"{'-':>8}" if v is None or v != v else f"{v:8.4f}")
        alloc = r.get("allocation")
        ext = ""
        if r.get("extrapolated"):
            sw = r.get("swap_rate_mean")
            ext = ("  (extrapolated)" if sw is not None and math.isfinite(sw)
                   else "  (above T/2: not extrapolated, see the warning)")
        print("  ".join(cells) + ext
              + ("  allocation " + ", ".join(f"{k}={v}" for k, v in alloc.items()) if alloc else ""))
    if args.bins:
        print("\nby |difference| bin:")
        print(f"{'n':>6} {'bin':>14} {'pairs':>6} {'swap':>8} {'reversal':>8} {'ci_med':>8} {'power':>8} {'disc':>8}")
        for r in curve.bins:
            if not r["n_pairs"]:
                continue
            cells = []
            for c in ("swap_rate_mean", "reversal_rate_mean", "ci_width_median", "power_mean",
                      "discriminative_power"):
                v = r[c]
                cells.append(f"{'-':>8}" if v is None or v != v else f"{v:8.4f}")
            print(f"{r['n_topics']:>6d} {'[' + format(r['bin_lo'], 'g') + ', ' + format(r['bin_hi'], 'g') + ')':>14} "
                  f"{r['n_pairs']:>6d} " + " ".join(cells))
    return 0


def _add_fit(subparsers) -> None:
    p = _sub(subparsers, "fit", "variance components (G-study), D-study and pair variances",
             """  planner fit --scores adhoc5_ap.csv
  planner fit --scores adhoc5_ap.csv --topics 25,50,100 --alpha 0.1 --json
  planner fit --scores runs_eval/ --measure map --drop 0.25
  planner fit --scores dl_ndcg.csv --strata topics.csv --method reml
  planner fit --scores clef_map.csv --variant-divisor 1000 --topics 25,50""",
             description="Fit the two-way crossed random-effects model x[s,t] = mu + a[s] + b[t] + e[s,t] "
                         "(ANOVA on complete matrices, REML when cells are missing), print the components, "
                         "the D-study (Erho2 with Feldt and Phi with Arteaga-Jeyaratnam-Franklin intervals "
                         "at level 1-alpha), the topics needed for Erho2/Phi targets and the variance of "
                         "per-topic differences under each selector (pair, pooled, within-system, "
                         "percentile:95). Definitions: docs/variance.md.")
    _scores_option(p)
    p.add_argument("--strata", default=None, metavar="FILE", help="topic metadata CSV (topic, stratum): per-stratum fits")
    p.add_argument("--drop", type=float, default=0.0, metavar="Q",
                   help="drop the systems whose mean is below the Q-quantile of system means first (gt4ireval)")
    p.add_argument("--method", default="auto", choices=["auto", "anova", "reml"],
                   help="auto (default): ANOVA when complete, REML when cells are missing and kept (--missing keep); "
                        "reml keeps missing cells by itself")
    p.add_argument("--missing", default="error", choices=["error", "zero", "drop-topic", "drop-system", "keep"],
                   help="missing-cell policy when reading --scores (keep: fit by REML)")
    p.add_argument("--alpha", type=float, default=0.05, metavar="A",
                   help="D-study intervals cover 1-A, two-sided (0.05)")
    p.add_argument("--topics", default=None, metavar="N,N,...",
                   help="topic counts of the D-study (default: the collection's count)")
    p.add_argument("--target", default="0.8,0.9,0.95", metavar="G,G,...",
                   help="Erho2/Phi targets for the topics-needed table (0.8,0.9,0.95)")
    p.add_argument("--reml-engine", default="direct", choices=["direct", "statsmodels"],
                   help="REML implementation (direct, default; statsmodels MixedLM is much slower)")


def _cmd_fit(args) -> int:
    from .variance import fit, fit_variants, pair_stats, pair_variance_summary

    topics = None if args.topics is None else parse_int_list(args.topics, option="--topics", minimum=1)
    targets = []
    for item in args.target.split(","):
        try:
            g = float(item)
        except ValueError:
            raise ParameterError(f"expected comma-separated numbers in (0, 1), got {item!r}",
                                 parameter="--target") from None
        if not 0 < g < 1:
            raise ParameterError(f"targets must be in (0, 1), got {item!r}", parameter="--target")
        targets.append(g)
    from .variance import check_alpha

    check_alpha(args.alpha, "--alpha")
    if not 0 <= args.drop < 1:
        raise ParameterError(f"must be a fraction in [0, 1), got {args.drop:g}", parameter="--drop")
    missing = "keep" if args.method == "reml" and args.missing == "error" else args.missing
    scores = _load_scores(args.scores, measure=args.measure, strata=args.strata, missing=missing,
                          variant_divisor=args.variant_divisor)
    variants = None
    if scores.has_variants:
        variants = fit_variants(scores)
    comp = fit(scores, method=args.method, drop=args.drop, reml_engine=args.reml_engine)
    ds = comp.dstudy(topics, alpha=args.alpha)
    need = [comp.topics_for(**{c: g}, alpha=args.alpha) for g in targets for c in ("erho2", "phi")]
    kept = scores.take(systems=[s for s in scores.systems if s not in set(comp.dropped)]).collapse_variants() \
        if comp.dropped else scores.collapse_variants()
    pairs = pair_stats(kept)
    pv = pair_variance_summary(kept, pairs=pairs)
    if args.json:
        out = {"scores": str(args.scores), "measure": scores.measure, "components": comp.to_dict(),
               "dstudy": ds.to_dict(), "topics_needed": [n.to_dict() for n in need],
               "pair_variance": pv}
        if variants is not None:
            out["variants"] = {"components": variants.to_dict(),
                               "dstudy": variants.dstudy(topics or [comp.n_topics]).to_dict()["rows"]}
        print_json(out, args)
        return 0
    print(f"{args.scores}: {comp.n_systems} systems x {comp.n_topics} topics"
          + (f" ({comp.n_cells} observed cells)" if comp.n_cells != comp.n_systems * comp.n_topics else "")
          + f", measure {scores.measure or 'not named'}, method {comp.method}, grand mean {comp.grand_mean:.4f}")
    if comp.dropped:
        print(f"drop {comp.drop:g}: left out {len(comp.dropped)} lowest-scoring system(s)")
    print("\nG-study (variance components)")
    print(f"{'component':<10} {'variance':>11} {'share':>7} {'mean sq.':>11} {'df':>7}")
    for r in comp.to_frame().to_dict("records"):
        share = "-" if r["share"] != r["share"] else f"{100 * r['share']:.1f}%"
        print(f"{r['component']:<10} {r['variance']:11.6f} {share:>7} {r['mean_square']:11.6f} {r['df']:7d}")
    if comp.truncated:
        print("truncated to 0: " + ", ".join(comp.truncated))
    if comp.strata:
        print("\nper stratum (own two-way fit; weight W_k)")
        print(f"{'stratum':<12} {'W_k':>6} {'systems':>7} {'topics':>6} {'var_s':>10} {'var_t':>10} {'var_e':>10}")
        for k, v in comp.strata.items():
            print(f"{k:<12} {comp.weights[k]:6.3f} {v.n_systems:7d} {v.n_topics:6d} {v.var_s:10.6f} "
                  f"{v.var_t:10.6f} {v.var_e:10.6f}")
    level = f"{100 * (1 - args.alpha):g}%"
    print(f"\nD-study ({level} intervals: Feldt for Erho2, Arteaga-Jeyaratnam-Franklin for Phi)")
    print(f"{'topics':>7} {'Erho2':>7} {'lower':>7} {'upper':>7}   {'Phi':>7} {'lower':>7} {'upper':>7}")
    for r in ds.rows:
        print(f"{r['n_topics']:>7} {r['erho2']:7.4f} {r['erho2_lower']:7.4f} {r['erho2_upper']:7.4f}   "
              f"{r['phi']:7.4f} {r['phi_lower']:7.4f} {r['phi_upper']:7.4f}")
    print(f"\ntopics needed ({level} interval)")
    fmt = lambda v: "inf" if v != v or v == float("inf") else str(int(v))
    print(f"{'target':>7} {'Erho2':>7} {'interval':>15}   {'Phi':>7} {'interval':>15}")
    for i in range(0, len(need), 2):
        e, p_ = need[i], need[i + 1]
        print(f"{e.target:7g} {fmt(e.n_topics):>7} {'[' + fmt(e.lower) + ', ' + fmt(e.upper) + ']':>15}   "
              f"{fmt(p_.n_topics):>7} {'[' + fmt(p_.lower) + ', ' + fmt(p_.upper) + ']':>15}")
    pr = pv["pair"]
    print(f"\nvariance of per-topic differences over {pv['n_pairs']} pairs (selector: value)")
    print(f"  pair:           mean {pr['mean']:.6f}  median {pr['median']:.6f}  p90 {pr['p90']:.6f}  "
          f"p95 {pr['p95']:.6f}  max {pr['max']:.6f}  (p95/mean {pr['p95_over_mean']:.2f})")
    print(f"  pooled:         {pv['pooled']:.6f}  (2 var_e)")
    print(f"  within-system:  {pv['within-system']:.6f}  (2 V_E1)")
    print(f"  percentile:95:  {pv['percentile:95']:.6f}")
    if variants is not None:
        print(f"\nthree facets: {variants.n_variants} variants nested in topics")
        print(f"{'component':<15} {'variance':>11} {'share':>7}")
        for r in variants.to_frame().to_dict("records"):
            print(f"{r['component']:<15} {r['variance']:11.6f} {100 * r['share']:6.1f}%")
        print(f"{'topics':>7} {'variants':>8} {'Erho2':>7} {'Phi':>7}")
        for r in variants.dstudy(topics or [comp.n_topics]).rows:
            print(f"{r['n_topics']:>7} {r['n_variants']:>8} {r['erho2']:7.4f} {r['phi']:7.4f}")
    return 0


def _add_budget(subparsers) -> None:
    p = _sub(subparsers, "budget", "assessment budget: cost per topic by pool depth, frontier, cheapest depth",
             """  planner budget --runs dl19/runs --qrels dl19/qrels.txt --depths 10,20,50 \\
      --topic-cost 20 --judgment-cost 1 --total 30000 --target swap_rate:0.05
  planner budget --dataset dl19-passage --topic-cost 20 --judgment-cost 1 --total 20000 --topics 50
  planner budget --runs dl19/runs --qrels dl19/qrels.txt --project-runs 80 --json""",
             description="Cost per topic = topic cost + judgments at depth k x judgment cost, with the "
                         "judgments at depth k from the pool of real runs (optionally projected to "
                         "another number of runs with a power-law growth curve). With runs and qrels "
                         "the runs are re-scored with the depth-k pool only, so each depth gets its "
                         "own Kendall tau against full judgments and its own topics needed.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--runs", metavar="DIR", help="folder of TREC run files (needs --qrels)")
    src.add_argument("--dataset", metavar="NAME", help="embedded data set (planner.datasets)")
    p.add_argument("--qrels", metavar="FILE", help="qrels of the runs")
    p.add_argument("--depths", default="10,20,50,100", help="pool depths (default 10,20,50,100)")
    p.add_argument("--measure", default="nDCG@10", help="measure (ir_measures name; default nDCG@10)")
    p.add_argument("--topic-cost", type=float, default=0.0, metavar="C", help="cost of creating a topic")
    p.add_argument("--judgment-cost", type=float, default=1.0, metavar="J", help="cost of one judgment")
    p.add_argument("--total", type=float, default=None, metavar="B", help="total budget")
    tg = p.add_mutually_exclusive_group()
    tg.add_argument("--target", default="swap_rate:0.05", metavar="NAME:VALUE",
                    help="swap_rate, reversal_rate, ci_width, kendall_tau, erho2, phi or power, "
                         "e.g. swap_rate:0.05 (default)")
    tg.add_argument("--topics", type=int, default=None, metavar="N", help="a fixed number of topics instead")
    p.add_argument("--variance", default="pair", metavar="SEL",
                   help="pair variance selector (default pair, as size --target and studies use)")
    p.add_argument("--method", default=None, metavar="METHOD",
                   help="how the target is solved: analytic (default) or a pilot-aware method "
                        "(predictive, predictive-shrunk, ...), as in size --target")
    p.add_argument("--min-diff", type=float, default=0.05, help="difference for the power target")
    p.add_argument("--tau-min", type=float, default=None,
                   help="least Kendall tau vs full judgments (with --runs; default 0.9)")
    p.add_argument("--pool-runs", default=None, metavar="A,B", help="runs forming the pool (default all)")
    p.add_argument("--project-runs", type=int, default=None, metavar="R",
                   help="project judgments to R participating runs (needs --runs)")
    p.add_argument("--seed", type=_seed, default=None, help="seed of the run subsets of the growth fit")


def _parse_target(text: str) -> tuple[str, float]:
    from .plan import TARGETS, check_target_value

    name, sep, val = text.partition(":")
    if not sep or name not in TARGETS:
        raise ParameterError(f"expected NAME:VALUE with NAME one of {', '.join(TARGETS)}, got {text!r}",
                             parameter="--target")
    try:
        value = float(val)
    except ValueError:
        raise ParameterError(f"bad value {val!r}", parameter="--target") from None
    try:
        return name, check_target_value(name, value, math.inf if name != "power" else 1.0)
    except ParameterError as exc:      # (the power target's --min-diff is checked by the command)
        raise ParameterError(exc.message, parameter="--target") from None


def _cmd_budget(args) -> int:
    from . import plan

    depths = parse_int_list(args.depths, option="--depths")
    if args.topics is not None and args.topics < 1:
        raise ParameterError(f"expected an integer >= 1, got {args.topics}", parameter="--topics")
    target, value = _parse_target(args.target) if args.topics is None else (None, None)
    from .simulate import CLOSED_FORM

    if args.method is not None and args.topics is not None:
        raise ParameterError("not used with --topics (a fixed count solves no target)", parameter="--method")
    method = "analytic" if args.method is None else args.method
    if method not in CLOSED_FORM:
        raise ParameterError(f"expected one of {', '.join(CLOSED_FORM)} (a closed form, solved at every "
                             f"depth), got {method!r}", parameter="--method")
    if method != "analytic" and args.variance != "pair":
        raise ParameterError(f"method {method!r} uses each pair's own variance (pair), got {args.variance!r}",
                             parameter="--variance")
    if target == "power" and not (args.min_diff > 0 and math.isfinite(args.min_diff)):
        raise ParameterError(f"the power target needs a positive difference, got {args.min_diff:g}",
                             parameter="--min-diff")
    if args.runs is None:
        # options that only the runs + qrels path reads
        for opt, val in (("--qrels", args.qrels), ("--pool-runs", args.pool_runs), ("--tau-min", args.tau_min),
                         ("--seed", args.seed)):
            if val is not None:
                raise ParameterError("only used with --runs (the data set's pool statistics are fixed)",
                                     parameter=opt)
    elif args.seed is not None and args.project_runs is None:
        raise ParameterError("only used with --project-runs (it seeds the run subsets of the growth fit)",
                             parameter="--seed")
    study = growth = None
    if args.runs is not None:
        if not args.qrels:
            raise ParameterError("--runs needs --qrels", parameter="--qrels")
        from .collection import read_qrels
        from .measures import as_runs

        runs = as_runs(args.runs)
        qrels = read_qrels(args.qrels)
        pool_runs = None if args.pool_runs is None else parse_name_list(args.pool_runs, option="--pool-runs")
        study = plan.pool_depth_study(runs, qrels, depths=depths, measure=args.measure, pool_runs=pool_runs,
                                      target=target or "swap_rate", value=value if value is not None else 0.05,
                                      variance=args.variance, method=method, min_diff=args.min_diff,
                                      topic_cost=args.topic_cost, judgment_cost=args.judgment_cost,
                                      tau_min=0.9 if args.tau_min is None else args.tau_min)
        if args.project_runs is not None:
            _draw_seed(args)
            growth = plan.judgment_growth(runs, qrels, depths=depths, rng=args.seed)
        res = plan.budget(topic_cost=args.topic_cost, judgment_cost=args.judgment_cost, total=args.total,
                          judgments=study, topics_needed=args.topics, n_runs=args.project_runs, growth=growth)
    else:
        if args.project_runs is not None:
            raise ParameterError("projection to other run counts needs --runs", parameter="--project-runs")
        from . import datasets

        pool = datasets.load_pool(args.dataset)
        need = args.topics
        if need is None:
            scores = datasets.load(args.dataset, measure=args.measure)
            need = plan.size_for_target(scores, target=target, value=value, variance=args.variance,
                                        method=method, min_diff=args.min_diff, resamples=0).n_topics
            if need is None:
                raise ParameterError(f"no topic count reaches {target} {value}", parameter="--target")
        ps_depths = set(int(d) for d in pool.depths)
        bad = [d for d in depths if d not in ps_depths]
        if bad:
            raise ParameterError(f"the data set has pool statistics at depths {sorted(ps_depths)}, not {bad[0]}",
                                 parameter="--depths")
        jm = pool.topics.groupby("depth")["pool_size"].mean()
        res = plan.budget(topic_cost=args.topic_cost, judgment_cost=args.judgment_cost, total=args.total,
                          judgments={d: float(jm[d]) for d in depths}, topics_needed=need,
                          source=f"pool statistics of data set {args.dataset} ({len(pool.pool_runs)} pooled runs)")
    if args.json:
        print_json({"target": target, "value": value, "method": None if args.topics is not None else method,
                    "variance": None if args.topics is not None else args.variance,
                    "budget": res.to_dict(), "pool_study": None if study is None else study.to_dict(),
                    "growth": None if growth is None else growth.to_dict()}, args)
        return 0
    what = (f"{target} {'<=' if target in ('swap_rate', 'reversal_rate', 'ci_width') else '>='} {value} "
            f"({method}, variance {args.variance})" if args.topics is None else f"{args.topics} topics (fixed)")
    print(f"budget for {what}, measure {args.measure}; topic cost {args.topic_cost:g}, judgment cost "
          f"{args.judgment_cost:g}" + (f", total {args.total:g}" if args.total is not None else "")
          + f"; judgments from {res.judgments_source}")
    print(f"{'depth':>6} {'judg/topic':>10} {'cost/topic':>10} {'max topics':>10} {'needed':>7} "
          f"{'total cost':>11} {'tau':>6}")
    taus = {r["depth"]: r["kendall_tau_vs_full"] for r in res.rows}
    for r in res.rows:
        fmt = lambda v, f: "-" if v is None else format(v, f)
        print(f"{r['depth']:>6} {r['judgments_per_topic']:>10.1f} {r['cost_per_topic']:>10.2f} "
              f"{fmt(r['max_topics'], 'd'):>10} {fmt(r['n_topics_needed'], 'd'):>7} "
              f"{fmt(r['total_cost'], '.1f'):>11} {fmt(taus.get(r['depth']), '.3f'):>6}")
    c = res.cheapest
    cond = "within the total" if res.total is not None else ""
    if res.tau_min is not None:
        cond += (" and " if cond else "") + f"with Kendall tau vs full judgments >= {res.tau_min}"
    print(f"cheapest depth{' ' + cond if cond else ''}: " + (
        "none" if c is None else f"depth {c['depth']}, {c['n_topics_needed']} topics, cost {c['total_cost']:.1f}"))
    if growth is not None:
        fits = "; ".join(f"depth {d}: {growth.a[d]:.3g} * r^{growth.b[d]:.3f} (R^2 {growth.r2[d]:.3f})"
                         for d in growth.depths)
        print(f"judgments per topic against runs r, fitted on {growth.n_runs} runs: {fits}; "
              f"seed {growth.seed}{_seed_note(args)}")
    if study is None:
        # embedded pool statistics: no runs to re-score, so no depth's bias was measured
        print("no runs: the depths' pool bias (Kendall tau against the full judgments) is not assessed, "
              "so the depth is chosen by cost alone; give --runs and --qrels to measure it")
    return 0


def _add_scores(subparsers) -> None:
    p = _sub(subparsers, "scores", "read or compute a score matrix and write it as wide or tidy CSV",
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
    p.add_argument("input", nargs="?", default=None, metavar="INPUT",
                   help="score file, trec_eval folder or data set name (dl19-passage, dl20-passage)")
    p.add_argument("--runs", default=None, metavar="DIR", help="folder (or file) of TREC runs to score")
    p.add_argument("--qrels", default=None, metavar="FILE", help="qrels to score --runs against")
    p.add_argument("--measure", action="append", default=None, metavar="M",
                   help="measure: ir_measures syntax with --runs (repeat for several), the trec_eval "
                        "name for a trec_eval folder, the measure column value of a tidy table")
    p.add_argument("--missing", default=None, choices=["error", "zero", "drop-topic", "drop-system", "keep"],
                   help="missing-cell policy (default: error for score files, zero for --runs)")
    p.add_argument("--duplicates", default="error", choices=["error", "first"],
                   help="a document repeated for a topic in a run: error (default) or keep the first")
    p.add_argument("--strata", default=None, metavar="FILE", help="topic metadata CSV (topic,stratum) to attach")
    p.add_argument("--tidy", action="store_true", help="write the tidy form (system,topic,value[,measure])")
    p.add_argument("-o", "--output", default=None, metavar="FILE", help="write the CSV here (default stdout)")


def _cmd_scores(args) -> int:
    import pandas as pd

    from .collection import load_scores
    from .measures import score_runs

    if args.json:
        # the JSON goes to stdout and holds the matrices as they are: a CSV option would be ignored
        for opt, val in (("--output", args.output), ("--tidy", args.tidy or None)):
            if val is not None:
                raise ParameterError("not used with --json (the JSON is printed on stdout)", parameter=opt)
    measures = args.measure or []
    repeated = sorted({m for m in measures if measures.count(m) > 1})
    if repeated:
        raise ParameterError(f"measure {repeated[0]!r} given more than once", parameter="--measure")
    if args.runs is not None or args.qrels is not None:
        if args.input is not None:
            raise ParameterError("give either INPUT or --runs/--qrels, not both", parameter="--runs")
        if args.runs is None or args.qrels is None:
            raise ParameterError("--runs and --qrels go together", parameter="--runs" if args.runs is None else "--qrels")
        if not measures:
            raise ParameterError("give at least one measure to score runs with", parameter="--measure")
        res = score_runs(args.runs, args.qrels, measures, missing_topic=args.missing or "zero",
                         duplicates=args.duplicates)
        mats = [res[m] for m in measures]
        if args.strata:
            mats = [load_scores(m, strata=args.strata) for m in mats]
    else:
        if args.input is None:
            raise ParameterError("give a score file or folder, a data set name, or --runs and --qrels",
                                 parameter="INPUT")
        if len(measures) > 1:
            raise ParameterError("one measure for a score file", parameter="--measure")
        measure = measures[0] if measures else None
        mats = [_load_scores(args.input, measure=measure, missing=args.missing or "error", strata=args.strata)]
    if args.json:
        print_json({"matrices": [{"measure": m.measure, "source": m.source, "systems": list(m.systems),
                                  "topics": list(m.topics), "strata": None if m.strata is None else list(m.strata),
                                  "values": m.values, "report": m.meta.get("report")} for m in mats]}, args)
        return 0
    tidy = args.tidy or len(mats) > 1 or mats[0].has_variants
    if tidy:
        df = pd.concat([m.to_frame(tidy=True) for m in mats], ignore_index=True)
        text = df.to_csv(index=False, lineterminator="\n")
    else:
        text = mats[0].to_frame().to_csv(lineterminator="\n")
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise ParameterError(f"cannot write {args.output}: {exc.strerror or exc}", parameter="--output") from None
    else:
        sys.stdout.write(text)
    return 0


def _add_pool(subparsers) -> None:
    p = _sub(subparsers, "pool", "pool statistics: pool size, judged documents and judged share per depth",
             """  planner pool --runs runs/ --qrels qrels.txt --depth 10,20,50,100
  planner pool --runs runs/ --qrels qrels.txt --depth 10,100 --per run
  planner pool --runs runs/ --qrels qrels.txt --depth 20 --pool-runs runA,runB --json""",
             description="For each depth k: per topic the number of distinct documents in the union of the "
                         "pool runs' top k (trec_eval order: score descending, then document id descending) "
                         "and how many the qrels judge; per run the judged share of its own top k, averaged "
                         "over topics. Definitions: docs/inputs.md.")
    p.add_argument("--runs", required=True, metavar="DIR", help="folder of TREC run files")
    p.add_argument("--qrels", required=True, metavar="FILE", help="qrels file")
    p.add_argument("--depth", "--depths", dest="depth", default="10,20,50,100", metavar="K,K,...",
                   help="pool depths (10,20,50,100); --depths, as in planner budget, is the same")
    p.add_argument("--pool-runs", default=None, metavar="NAME,...",
                   help="runs that form the pool (default: all runs in --runs)")
    p.add_argument("--per", default="summary", choices=["summary", "topic", "run"],
                   help="table to print: one row per depth (summary, default), per topic, or per run")
    p.add_argument("--duplicates", default="error", choices=["error", "first"],
                   help="a document repeated for a topic in a run: error (default) or keep the first")


def _cmd_pool(args) -> int:
    from .measures import pool_stats

    depths = parse_int_list(args.depth, option="--depth", minimum=1)
    pool_runs = None if args.pool_runs is None else parse_name_list(args.pool_runs, option="--pool-runs")
    ps = pool_stats(args.runs, args.qrels, depths=depths, pool_runs=pool_runs, duplicates=args.duplicates)
    if args.json:
        print_json(ps.to_dict(), args)
        return 0
    if args.per == "summary":
        df = ps.summary()
    elif args.per == "topic":
        df = ps.topics.pivot(index="topic", columns="depth", values=["pool_size", "judged"])
        df.columns = [f"{a}@{k}" for a, k in df.columns]
    else:
        df = ps.runs.pivot(index="run", columns="depth", values="judged_share")
        df.columns = [f"judged_share@{k}" for k in df.columns]
        inp = ps.runs.drop_duplicates("run").set_index("run")["in_pool"]
        df.insert(0, "in_pool", inp.loc[df.index])
    print(f"pool of {len(ps.pool_runs)} runs; qrels: {ps.qrels_judgments} judgments")
    print(df.to_string(float_format=lambda v: f"{v:.4f}", index=args.per != "summary"))
    if args.per == "summary":
        print("pool_judged_share: share of the depth-k pool that the qrels judge; run_judged_share_mean: "
              "mean over all runs (pooled or not) of the judged share of each run's own top k")
    return 0


def _add_validate(subparsers) -> None:
    p = _sub(subparsers, "validate", "check pilot-based swap/reversal predictions against held-out topics",
             """  planner validate --scores terabyte2006_ap.csv --pilot 25 --topics 25,50,62
  planner validate --scores terabyte2006_ap.csv --pilot 25 --topics 25,50,62 --repeats 50 --seed 1 --json
  planner validate --scores ap.csv --pilot 20 --topics 10,15 --methods predictive,analytic,bootstrap""",
             description="Repeatedly split the topics at random into a pilot of --pilot topics and the "
                         "disjoint remainder; predict the mean swap and reversal rate over all system "
                         "pairs at each topic count from the pilot alone, measure them on pairs of "
                         "disjoint topic sets of the remainder, and print predicted and observed curves "
                         "with the relative error |pred - obs| / obs (median over repeats, with its "
                         "bootstrap standard error), and the method that predicted best here, whose "
                         "name planner predict / size --method and a study's method: accept. "
                         "Definitions: docs/validation.md.")
    _scores_option(p)
    p.add_argument("--pilot", required=True, type=int, metavar="N0", help="pilot size (topics)")
    p.add_argument("--topics", required=True, metavar="N,N,...",
                   help="topic counts to predict, each at most half of the held-out topics")
    p.add_argument("--repeats", type=int, default=20, metavar="R", help="random pilot/remainder splits (20)")
    p.add_argument("--subsets", type=int, default=500, metavar="K",
                   help="random pairs of disjoint held-out topic sets per repeat (500)")
    p.add_argument("--methods", default="predictive,analytic", metavar="M,M,...",
                   help="prediction methods, any planner predict method (predictive, predictive-integrated, "
                        "predictive-shrunk, predictive-pooled, predictive-pair, predictive-npmle, "
                        "predictive-mixture, analytic, bootstrap, subsample, parametric); default "
                        "predictive,analytic")
    p.add_argument("--seed", type=_seed, default=None, metavar="N", help="random seed")


def _cmd_validate(args) -> int:
    from .validation import validate

    topics = parse_int_list(args.topics, option="--topics", minimum=1)
    methods = parse_name_list(args.methods, option="--methods")
    scores = _load_scores(args.scores, measure=args.measure, variant_divisor=args.variant_divisor)
    names = {"pilot": "--pilot", "topics": "--topics", "repeats": "--repeats", "subsets": "--subsets",
             "methods": "--methods"}
    _draw_seed(args)
    try:
        v = validate(scores, pilot=args.pilot, topics=topics, repeats=args.repeats, rng=args.seed,
                     methods=methods, subsets=args.subsets)
    except ParameterError as exc:
        if exc.parameter in names:
            raise ParameterError(exc.message, parameter=names[exc.parameter]) from None
        raise
    if args.json:
        print_json(v.to_dict(), args)
        return 0
    print(f"{args.scores}" + (f" ({v.measure})" if getattr(v, "measure", None) else "")
          + f": {v.n_systems} systems x {v.n_topics} topics; pilot {v.pilot}, "
          f"{v.repeats} repeats, {v.subsets} held-out subset pairs each, seed {v.seed}{_seed_note(args)}")
    w = max(6, *(len(m) for m in v.methods))
    for stat in ("swap_rate", "reversal_rate"):
        print(f"\n{stat.replace('_', ' ')} (mean over pairs); error = |pred - obs| / obs over repeats")
        print(f"{'method':>{w}} {'n':>5} {'predicted':>10} {'observed':>10} {'err_median':>10} {'(se)':>7} "
              f"{'err_p90':>8} {'bias':>7} {'sd_log':>7}")
        for r in v.rows:
            if r["statistic"] != stat:
                continue
            print(f"{r['method']:>{w}} {r['n_topics']:>5d} {r['predicted_mean']:10.4f} {r['observed_mean']:10.4f} "
                  f"{r['rel_error_median']:10.3f} {r['rel_error_median_se']:7.3f} {r['rel_error_p90']:8.3f} "
                  f"{r['ratio_median'] - 1:+7.3f} "
                  f"{r['log_ratio_sd']:7.3f}")
        print("bias = median over repeats of pred/obs - 1; sd_log = sd over repeats of log(pred/obs)")
        undefined = sorted({r["method"] for r in v.rows if r["statistic"] == stat
                            and not math.isfinite(r["predicted_mean"])})
        if undefined:
            print(f"nan: no prediction at that n from a {v.pilot}-topic pilot ({', '.join(undefined)}; "
                  "subsample draws two disjoint n-topic sets, so it needs n <= pilot / 2)")
        rec = v.recommend(stat)
        if rec["method"] is not None:
            se_known = v.repeats >= 2
            how = ("ahead of every other method by more than 2 standard errors at every n" if rec["clear"]
                   else "the only method" if not rec["close"]
                   else "not clearly ahead of " + ", ".join(rec["close"]) + ": within 2 standard errors at "
                   "some n, more --repeats narrow them" if se_known
                   else "not compared with " + ", ".join(rec["close"]) + ": standard errors need "
                   "--repeats 2 or more")
            print(f"best here: {rec['method']} ({rec['rule']}; {how}); "
                  f"use it with: planner predict --method {rec['method']}")
    rec = v.recommend("swap_rate")
    rows = [r for r in v.rows if r["statistic"] == "swap_rate" and r["method"] == rec["method"]
            and math.isfinite(r["rel_error_median"])]
    if rows:
        # the answer to "how far can I trust a prediction from a pilot this size?", in one line
        med = [r["rel_error_median"] for r in rows]
        p90 = [r["rel_error_p90"] for r in rows]
        ns = [r["n_topics"] for r in rows]
        rng_ = lambda xs: f"{100 * min(xs):.0f}%" if round(100 * min(xs)) == round(100 * max(xs)) \
            else f"{100 * min(xs):.0f}-{100 * max(xs):.0f}%"
        print(f"\nin short: from {v.pilot}-topic pilots, {rec['method']}'s predicted mean swap rate at "
              f"{ns[0] if len(ns) == 1 else f'{min(ns)}-{max(ns)}'} topics was off by a median {rng_(med)} "
              f"(90% of repeats within {rng_(p90)}); this collection's {v.n_topics} topics can check "
              f"held-out sets of at most {(v.n_topics - v.pilot) // 2} topics")
    return 0


COMMANDS: list[tuple[Callable, Callable]] = []
COMMANDS.append((_add_scores, _cmd_scores))
COMMANDS.append((_add_pool, _cmd_pool))
COMMANDS.append((_add_fit, _cmd_fit))
COMMANDS.append((_add_predict, _cmd_predict))
COMMANDS.append((_add_validate, _cmd_validate))
COMMANDS.append((_add_size, _cmd_size))
COMMANDS.append((_add_budget, _cmd_budget))
COMMANDS.append((_add_study, _cmd_study))
COMMANDS.append((_add_schema, _cmd_schema))


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = _Parser(
        prog=PROG, formatter_class=_Formatter,
        description="planner: topic-set design and simulation for IR test collections.\n\n"
                    "Learns how scores vary between topics from an existing collection and "
                    "answers how many topics (and judgments) a campaign needs.",
        epilog="run 'planner COMMAND --help' for a command's options and examples")
    parser.add_argument("--version", action="version", version=f"planner {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for add, _ in COMMANDS:
        add(subparsers)
    parser.set_defaults(_commands=subparsers.choices)
    return parser


# library parameter names whose CLI option has another name
_PARAMETER_OPTION = {"rng": "seed", "n_topics": "topics", "topics_needed": "topics", "divisor": "variant_divisor",
                     "variance_selector": "variance", "n0": "pilot", "value": "target", "n_runs": "project_runs",
                     "name": "dataset", "measures": "measure"}


def _as_option(exc: PlannerError, args) -> PlannerError:
    """A ParameterError that names a library parameter (``min_diff``) names the command's
    option instead (``--min-diff``), when the command has one."""
    if not isinstance(exc, ParameterError) or not exc.parameter or exc.parameter.startswith("-"):
        return exc
    sub = getattr(args, "_commands", {}).get(args.command)
    if sub is None:
        return exc
    dest = _PARAMETER_OPTION.get(exc.parameter, exc.parameter)
    for action in sub._actions:  # argparse keeps its actions here
        if action.dest == dest and action.option_strings:
            return ParameterError(exc.message, parameter=max(action.option_strings, key=len))
    return exc


class _Warnings:
    """Warnings held back until the command ends: printed (once each, in order) when it
    succeeds, dropped when it fails, so that a failure prints exactly one error line."""

    def __init__(self) -> None:
        self.lines: dict[str, None] = {}

    def show(self, message, category, filename, lineno, file=None, line=None) -> None:
        self.lines[f"{PROG}: warning: {message}"] = None

    def flush(self) -> None:
        for text in self.lines:
            print(text, file=sys.stderr)
        self.lines.clear()


def _silence_stdout() -> None:
    """Point standard output at the null device, so that the interpreter's last flush of what
    could not be written (a full disk) does not print a second error."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):    # no real file behind sys.stdout (tests)
        pass


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``planner`` console script; returns the exit code."""
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
    except SystemExit as exc:   # a usage error (one line, 2) or --help / --version (0)
        return int(exc.code or 0)
    if extra:
        where = f"{PROG} {args.command}" if getattr(args, "command", None) else PROG
        print(f"{where}: error: unrecognized arguments: {' '.join(extra)}", file=sys.stderr)
        return 2
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    args.argv = list(sys.argv[1:] if argv is None else argv)
    handler = dict((add.__name__[len("_add_"):], cmd) for add, cmd in COMMANDS)[args.command.replace("-", "_")]
    held = _Warnings()
    warnings.showwarning = held.show
    try:
        code = int(handler(args) or 0)
        held.flush()
        return code
    except PlannerError as exc:
        print(f"{PROG} {args.command}: error: {_as_option(exc, args)}", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"{PROG} {args.command}: error: not enough memory for this problem (fewer resamples, "
              "subsets or systems, or smaller topic counts, need less)", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        held.flush()
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:     # the system refused a read or write (a full disk): one line, exit 1
        _silence_stdout()
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"{PROG} {args.command}: error: input/output failed: {exc.strerror or exc}{where}", file=sys.stderr)
        return 1
    except BaseException:      # an internal fault: its traceback follows what was warned
        held.flush()
        raise
