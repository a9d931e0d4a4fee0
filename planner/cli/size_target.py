"""``planner size --target NAME:VALUE``: the smallest n whose statistic meets a value."""

from __future__ import annotations

import argparse
import math
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import methods
from ..errors import DegenerateDataWarning, ParameterError
from ..results import Interval, IntervalMethod, plan_binding
from .format import plan_line, print_json
from .inputs import draw_seed, load_scores, seed_note
from .options import parse_int_list, parse_target

if TYPE_CHECKING:
    from ..plan import TargetResult, VariantTrade
    from ..scores import ScoreMatrix

#: the simulation's resamples of a random method when --resamples is not given
SIM_RESAMPLES = 1000
#: topic resamples of the interval on n when --resamples is not given
INTERVAL_RESAMPLES = 200
#: the true difference of the power target when --min-diff is not given
MIN_DIFF = 0.05


def _variants_problem(args: argparse.Namespace, scores: ScoreMatrix, target: methods.Target,
                      method: methods.Method, nv: list[int]) -> str | None:
    """Why the variant model cannot answer ``--variants``, or None."""
    from ..plan import MAX_VARIANTS  # heavy (scipy): loaded when the command runs

    if max(nv) > MAX_VARIANTS:
        return f"at most {MAX_VARIANTS:,} variants per topic, got {max(nv)}"
    if not scores.has_variants:
        return ("the scores have no query variants (give --variant-divisor K, or a tidy file with a variant "
                "column)")
    if target.reliability:
        return f"{target.name} with query variants is the three-facet D-study (planner fit on the same scores)"
    if not method.variants:
        return f"method {method.name} has no model of query variants (use analytic or a predictive method)"
    if args.variance not in (None, "pair"):
        return "the variant model uses each pair's own variance (--variance pair)"
    return None


def _seed(args: argparse.Namespace, targets: list[methods.Target], method: methods.Method) -> None:
    """The seed, drawn when a target needs one; an error when --seed is given and none does."""
    resampled = args.resamples != 0 and any(t.resampled_interval for t in targets)
    if method.random or resampled:
        draw_seed(args)
    elif args.seed is not None:
        target = targets[0]
        raise ParameterError("not used: nothing is drawn at random (" + (
            f"the {target.name} target is a closed-form D-study" if target.reliability else
            f"the {target.name} target's interval is the jackknife's" if target.variance_count and args.resamples != 0
            else f"--resamples 0 asks for no interval on n, and method {method.name} is a closed form") + ")",
            parameter="--seed")


def _resampling(args: argparse.Namespace, method: methods.Method) -> dict[str, int]:
    """The resamples of the interval and the simulation."""
    if not method.random:
        return {"n_resamples": INTERVAL_RESAMPLES if args.resamples is None else args.resamples}
    # no interval on n for these: --resamples is the simulation's size, as in planner predict
    sim = SIM_RESAMPLES if args.resamples is None else args.resamples
    if isinstance(sim, bool) or sim < 1:
        raise ParameterError(f"expected an integer >= 1 (the simulation's resamples), got {sim}",
                             parameter="--resamples")
    return {"n_resamples": 0, "method_resamples": sim}


@dataclass
class _Solved:
    """One ``--target`` and what it got."""

    target: methods.Target
    res: TargetResult
    variants: VariantTrade | None

    @property
    def interval(self) -> Interval:
        return self.res.interval

    @property
    def n_topics(self) -> int | None:
        return self.res.n_topics

    @property
    def plan_count(self) -> float:
        """The count to plan with (:meth:`planner.results.Interval.plan_bound`): ``inf`` when unbounded
        or not reached."""
        return self.res.interval.plan_bound(self.res.n_topics)


def _targets(args: argparse.Namespace) -> list[tuple[str, float]]:
    """The ``--target`` options, each checked; the same target twice is an error."""
    out: list[tuple[str, float]] = []
    for text in args.target:
        name, value = parse_target(text)
        if (name, value) in out:
            raise ParameterError(f"{name}:{value:g} given more than once", parameter="--target")
        out.append((name, value))
    return out


def run_target(args: argparse.Namespace) -> int:
    """Run ``planner size --target`` (each target given, on the same scores and seed)."""
    if args.scores is None:
        raise ParameterError("a target needs a collection to learn from (SCORES)", parameter="--scores")
    asked = _targets(args)
    nv = None if args.variants is None else parse_int_list(args.variants, option="--variants", minimum=1)
    scores = load_scores(args.scores, measure=args.measure, missing=args.missing, variant_divisor=args.variant_divisor)
    # '' is an unknown method, not the default
    method = methods.method(methods.DEFAULT_METHOD if args.method is None else args.method, parameter="--method")
    for name, _ in asked:
        why = None if nv is None else _variants_problem(args, scores, methods.target(name), method, nv)
        if why:      # what the variant model cannot answer is an error before any work
            raise ParameterError(why, parameter="--variants")
    _seed(args, [methods.target(name) for name, _ in asked], method)
    rkw = _resampling(args, method)
    solved = [_solve(args, scores, method, name, value, nv, rkw) for name, value in asked]
    if args.json:
        _json(args, scores, solved)
        return 0
    if len(solved) > 1:
        _print_binding(solved)
    for one in solved:
        far_noted = _print_target(one.res, scores, one.target)
        if one.variants is not None:
            _print_variants(one.variants, method.name, far_noted, methods.runs_low_far_out(method, one.target))
        if one.res.seed is not None and not one.target.reliability:
            print(f"  seed          {one.res.seed}{seed_note(args)}")
    return 0


def _solve(args: argparse.Namespace, scores: ScoreMatrix, method: methods.Method, name: str, value: float,
           nv: list[int] | None, rkw: dict[str, int]) -> _Solved:
    from ..plan import size_for_target, topics_for_variants  # heavy (scipy): loaded when the command runs

    min_diff = args.min_diff if args.min_diff is not None else MIN_DIFF
    res = size_for_target(scores, target=name, value=value, method=method.name,
                          variance="pair" if args.variance is None else args.variance, alpha=args.alpha,
                          min_diff=min_diff, rng=args.seed, progress=args.progress, **rkw)
    vtr = None
    if nv is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)     # said once already
            vtr = topics_for_variants(scores, target=name, value=value, n_variants=nv, method=method.name,
                                      min_diff=min_diff, alpha=args.alpha, n_resamples=rkw["n_resamples"],
                                      rng=args.seed)
    return _Solved(methods.target(name), res, vtr)


def _one_json(scores: ScoreMatrix, one: _Solved) -> dict[str, Any]:
    return {**one.res.to_dict(), "source": scores.source, "measure": scores.measure, "n_variants": scores.n_variants,
            **({"variants": one.variants.to_dict()} if one.variants is not None else {})}


def _json(args: argparse.Namespace, scores: ScoreMatrix, solved: list[_Solved]) -> None:
    """One target: its result, as always; several: each, and the binding one."""
    if len(solved) == 1:
        print_json(_one_json(scores, solved[0]), args)
        return
    bind = plan_binding(solved)
    print_json({"targets": [_one_json(scores, one) for one in solved],
                "binding": {"target": bind.res.target, "value": bind.res.value,
                            "plan_n": None if math.isinf(bind.plan_count) else int(bind.plan_count),
                            "n_topics": bind.res.n_topics}}, args)


def _print_binding(solved: list[_Solved]) -> None:
    """The count to plan with for each target, and the binding one, before the details."""
    bind = plan_binding(solved)
    print(f"{len(solved)} targets; the binding one (needing the most topics): {bind.res.target} "
          f"{bind.res.direction} {bind.res.value:g}")
    print(f"  {'plan with':>10} {'point':>6}  target")
    for one in solved:
        plan = "unbounded" if math.isinf(one.plan_count) else str(int(one.plan_count))
        point = "-" if one.res.n_topics is None else str(one.res.n_topics)
        mark = "  (binding)" if one is bind else ""
        print(f"  {plan:>10} {point:>6}  {one.res.target} {one.res.direction} {one.res.value:g}{mark}")
    print("  plan with: the upper end of the interval on n where there is one, else the point count\n")


def _print_target(res: TargetResult, scores: ScoreMatrix, target: methods.Target) -> bool:
    """The answer's lines; True when its note on far counts was printed."""
    n = "none up to the search limit" if res.n_topics is None else str(res.n_topics)
    how = "D-study of the variance components" if target.reliability else f"{res.method}, variance {res.variance}"
    print(f"target {res.target} {res.direction} {res.value} ({how})")
    print(f"  statistic     {statistic_words(res)}")
    print(f"  scores        {scores.source or 'scores'}"
          + (f", {scores.measure}" if scores.measure else "")
          + (f" (each topic the mean of its {scores.n_variants} query variants)"
             if getattr(scores, "n_variants", 1) and scores.n_variants > 1 else ""))
    ivl = res.interval
    lead = plan_line(ivl)
    if lead is not None:
        print(lead)
    print(f"  topics        {n}")
    if res.why_unreached():
        print(f"  why           {res.why_unreached()}")
    if res.n_topics is not None:
        prev = "" if res.at_n_minus_1 is None else f" (at n-1: {res.at_n_minus_1:.8g})"
        print(f"  achieved      {res.achieved:.8g}{prev}")
    resampled = ivl.how is IntervalMethod.TOPIC_RESAMPLING
    if ivl.how is IntervalMethod.NONE:
        print(f"  interval      {ivl.describe()}")
    else:
        lo = "-" if ivl.low is None else ivl.low
        hi = "unbounded" if ivl.high is None else ivl.high
        print(f"  {ivl.level:.0%} interval  [{lo}, {hi}]  ({ivl.describe()})")
    print(f"  learnt from   {res.n_systems} systems x {res.n_topics_observed} topics, {res.n_pairs} pairs"
          + (f" ({res.identical_pairs} identical, counted as ties)" if res.identical_pairs else ""))
    far_noted = False
    runs_low = methods.runs_low_far_out(methods.method(res.method), target)
    if res.n_topics is not None and resampled and runs_low and res.n_topics >= 1.5 * res.n_topics_observed:
        far_noted = True
        print(f"  note          {res.n_topics} is {res.n_topics / res.n_topics_observed:.1f} times the topics learnt "
              f"from: method {res.method}'s counts this far out, and their interval, tend to run low "
              f"(docs/planning.md, 'What the interval on n covers'); method {methods.DEFAULT_METHOD} corrects "
              "for it")
    if res.method_resamples:
        print(f"  simulation    {res.method_resamples} resamples at each topic count (--resamples)")
    return far_noted


def _print_variants(vtr: VariantTrade, method: str, far_noted: bool, runs_low: bool) -> None:
    """The topics needed with each variant count; the note on far counts only for a method whose
    counts run low there (``runs_low``: :func:`planner.methods.runs_low_far_out`)."""
    how = vtr.interval_method
    ivl = ("no interval on n" if how is IntervalMethod.NONE else
           f"{vtr.confidence_level:.0%} jackknife interval on n of each row's planning variance"
           if how is IntervalMethod.ANALYTIC else
           f"{vtr.confidence_level:.0%} interval on n from the same {vtr.n_resamples} topic resamples")
    print(f"  variants      topics needed with V query variants per topic ({method}; each pair's "
          f"variant share of one variant's variance: median {vtr.variant_share:.2f}; {ivl}):")
    for r in vtr.rows:
        print(f"    V = {r['n_variants']:<4} {_variant_count(r, how is not IntervalMethod.NONE)}   "
              f"(variance x {r['variance_ratio']:.3f})")
    far = max((r["n_topics"] for r in vtr.rows if r["n_topics"] is not None), default=None)
    more = [r["n_variants"] for r in vtr.rows if r["n_variants"] > vtr.n_variants_observed]
    if runs_low and far is not None and far >= 1.5 * vtr.n_topics_observed:
        print(f"    note        the largest count, {far}, is {far / vtr.n_topics_observed:.1f} times the "
              f"{vtr.n_topics_observed} topics learnt from"
              + (" (as the note above says, such counts tend to run low)" if far_noted else
                 ": counts this far out tend to run low"))
    if more:
        print(f"    note        V = {', '.join(map(str, more))}: more than the collection's "
              f"{vtr.n_variants_observed} variants per topic, so the model's 1/V scaling is extrapolated")


def _variant_count(r: dict[str, Any], interval: bool) -> str:
    if r["n_topics"] is None:
        return "not reached"
    got = f"{r['n_topics']:>7} topics, {r['queries']:>8} queries"
    if interval:
        got += f"  [{r['n_lower']}, {'-' if r['n_upper'] is None else r['n_upper']}]"
    return got


def statistic_words(res: TargetResult) -> str:
    """What a size --target statistic is, in words (the registry's description; the JSON has the
    same settings as fields)."""
    return methods.target(res.target).describe(alpha=res.alpha, min_diff=res.min_diff)
