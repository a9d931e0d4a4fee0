"""The study's answer in words, built from the typed scenario results: how many topics (and
which pool depth), the binding target, what that count buys, and how the grid's other scenarios
compare."""

from __future__ import annotations

import math

import numpy as np

from .. import methods
from ..plan import design_power, stratum_counts
from ..plan.pool import cheapest_depth
from ..results import IntervalMethod
from .pool import finite
from .results import (
    HEADLINE_WORDS,
    Answer,
    PairedComparison,
    ScenarioResult,
    ScenarioTarget,
    Verdict,
    plan_count,
    plan_target,
)
from .schema import GRID_KEYS, MAX_TOPICS

__all__ = ["answer", "headline", "pool_others", "to_build"]


def to_build(s: ScenarioResult) -> int | None:
    """Topics a new collection must create so that a filtered scenario keeps the informative
    topics it needs: ``ceil(needed x topics before / topics after the filter)``."""
    need = s.need()
    if need is None or not s.data.n_topics:
        return need
    return int(math.ceil(need * s.data.n_topics_before_filter / s.data.n_topics - 1e-9))


def _binding_interval(s: ScenarioResult) -> tuple[int, int] | None:
    """The 95% interval on n of the scenario's binding target (its largest count), when known."""
    t = s.binding()
    if t is None or s.need() is None or t.interval.low is None or t.interval.high is None:
        return None
    return int(t.interval.low), int(t.interval.high)


def _paired_row(paired: list[PairedComparison], scens: list[ScenarioResult], name_a: str,
                name_b: str) -> PairedComparison | None:
    """The paired comparison of two scenarios on the binding target they share, if any."""
    by = {s.name: s for s in scens}
    ba, bb = by[name_a].binding(), by[name_b].binding()
    if ba is None or bb is None or (ba.target, ba.value) != (bb.target, bb.value):
        return None
    return next((r for r in paired if {r.fewer, r.more} == {name_a, name_b}
                 and (r.target, r.value) == (ba.target, ba.value)), None)


def _bound(v, side: int) -> float:
    """An interval end of :func:`planner.plan.paired_difference` (``None`` = unbounded)."""
    return side * math.inf if v is None else v


def _signed(v) -> str:
    return ("+inf" if v > 0 else "-inf") if not math.isfinite(v) else f"{int(v):+d}"


def _erho(s: ScenarioResult, n) -> float:
    c = s.components
    vs, ve = c.var_s, c.var_e
    return vs / (vs + ve / n) if vs + ve > 0 else float("nan")


def _phi(s: ScenarioResult, n) -> float:
    c = s.components
    vs, vt, ve = c.var_s, c.var_t, c.var_e
    return vs / (vs + (vt + ve) / n) if vs + vt + ve > 0 else float("nan")


def _closed_form(s: ScenarioResult) -> bool:
    return methods.method(s.settings["method"]).closed_form


def _predictive(s: ScenarioResult) -> bool:
    return methods.method(s.settings["method"]).engine is methods.Engine.PREDICTIVE


# ------------------------------------------------------------------------- the details
def _target_txt(s0: ScenarioResult, t: ScenarioTarget) -> str:
    txt = f"{t.target} {methods.target(t.target).direction} {t.value:g}"
    if t.variance:
        # a study's power target is the classical design's (one pair with the planning
        # variance), not the mean power over pairs of planner size --target power
        txt += (f" (a paired t-test at alpha {s0.settings['alpha']:g} detects a true difference of "
                f"{s0.settings['min_diff']:g} with this probability for a pair with the planning "
                f"variance of per-topic differences, {t.variance})")
    return txt


def _why_unsolved(s0: ScenarioResult, n_show: int) -> str:
    """Each target not reached, with its own reason and whether the count shown meets it anyway."""
    at_show = s0.at(n_show)
    missing = [t for t in s0.targets if t.n_topics is None]

    def why(t: ScenarioTarget) -> str:
        tgt = methods.target(t.target)
        v = at_show.get(tgt.statistic)
        met = v is not None and finite(v) and tgt.met(v, t.value)
        return (f"{t.target} {t.value:g} ({t.how or 'not reached'}"
                + (f"; at {n_show} topics it is {v:.3g}, which meets it: study topic counts up to "
                   f"{n_show} to find the smallest n" if met else "") + ")")

    return ("; ".join(why(t) for t in missing) + (" is" if len(missing) == 1 else " are") + " not solved.")


def _pool_sentences(pool: dict, need: int, depth: int) -> str:
    text = ""
    full = (pool.get("full") or {}).get("n_topics_needed")
    if full is not None:
        text += (f" That count meets every target with the scores re-computed from depth-{depth} "
                 f"judgments (method {pool['method']}); with the full judgments the same targets "
                 + ("need the same count." if full == need else f"need {full}."))
    thin = [r for r in pool.get("depths") or []
            if r.get("pool_judged_share") is not None and r["pool_judged_share"] < 0.9]
    if thin:
        shares = ", ".join(f"{r['pool_judged_share']:.0%} at depth {r['depth']}"
                           for r in sorted(thin, key=lambda r: r["depth"]))
        text += (f" The existing judgments cover only part of the deeper pools ({shares} is judged), so the "
                 "Kendall tau of those depths shows the judgments already made, not what a deeper pool would "
                 "find; the depth comparison holds for these judgments only.")
    return text


def _duplicates_note(s0: ScenarioResult, binding: ScenarioTarget) -> str:
    d = binding.duplicates
    if d is None or not d.identical_pairs or d.n_topics is None:
        return ""
    meas = s0.settings["measure"] or "this measure"
    return (f" {d.identical_pairs} pair(s) of systems score the same on every topic "
            f"under {meas} (duplicate runs, or runs this measure cannot tell apart), each a tie "
            f"that keeps a swap and reversal rate of 0.5 at any topic count; with one run of "
            f"each such group ({len(d.duplicate_runs)} run(s) left out, with all "
            f"their pairs) the target needs {d.n_topics} topics"
            + (f" (95% interval on n: {int(d.interval.low)} to {int(d.interval.high)})"
               if d.interval.low is not None and d.interval.high is not None else "") + ".")


def _binding_sentence(s0: ScenarioResult, binding: ScenarioTarget) -> str:
    text = f" The point estimate's binding target is {binding.target} {binding.value:g}"
    if binding.interval.low is not None and binding.interval.high is not None:
        text += (f" (95% interval on n: {int(binding.interval.low)} to {int(binding.interval.high)}, "
                 "from the uncertainty of the collection's own estimates)")
        T0 = s0.data.n_topics or 0
        n = binding.n_topics or 0
        if T0 and binding.runs_low_far_out and n >= 1.5 * T0:
            text += (f"; a count {n / T0:.1f} times the collection's {T0} topics "
                     "tends to run low, interval included (see 'Intervals on n' in the honest "
                     "statement)")
    return text + "."


def _chosen(s0: ScenarioResult, need: int, depth: int | None, targets_txt: str) -> str:
    text = (f"The targets need **{need} topics**" + (f" judged to depth {depth}" if depth else "")
            + f", the point estimate (scenario {s0.name}; targets: {targets_txt}).")
    if depth and s0.pool:
        text += _pool_sentences(s0.pool, need, depth)
    binding = s0.binding()
    if binding is None:
        return text
    if not depth:
        text += _binding_sentence(s0, binding)
    return text + _duplicates_note(s0, binding)


def _details(s0: ScenarioResult, need: int | None, n_show: int | None, depth: int | None) -> str:
    """The answer after its headline: the targets, and why a count is missing or what it assumes."""
    targets_txt = "; ".join(_target_txt(s0, t) for t in s0.targets)
    pool = s0.pool
    if n_show is None:
        return f"Targets: {targets_txt}."
    if need is None:
        return f"Targets: {targets_txt}. " + _why_unsolved(s0, n_show)
    if pool and not pool.get("choice"):
        return (f"Targets: {targets_txt}. Pool study: {pool['reason']} (tables/pool.csv lists every "
                "depth).")
    return _chosen(s0, need, depth, targets_txt)


# ------------------------------------------------------------------------- the headline
def _short_target(t: ScenarioTarget) -> str:
    return f"{t.target} {methods.target(t.target).direction} {t.value:g}"


def _plan_headline(s0: ScenarioResult, need: int, plan: int | None, depth: int | None, where: str) -> str:
    """The count to plan with, its interval and the binding target (or why there is no such count)."""
    t = plan_target(s0.targets)
    if t is None:
        return f"Choose **{need} topics**{where}."
    iv, tgt = t.interval, _short_target(t)
    if plan is None and iv.how is IntervalMethod.NONE:
        return (f"Choose **{need} topics**{where}, a point estimate for the binding target {tgt}: no "
                "interval on n was computed, so there is no count to plan with.")
    if plan is None:
        return (f"Choose **at least {need} topics**{where}: the {iv.level:.0%} interval on n for the "
                f"binding target {tgt}, from {int(iv.low or 0)} up, has no finite upper end, so these data "
                "support no count to plan with.")
    judged = f" judged to **depth {depth}**" if depth else ""
    ivl = f"{iv.level:.0%} interval on n, {int(iv.low or 0)} to {int(iv.high or 0)},"
    if depth:
        return (f"Plan for **{plan} topics**{judged}{where}: "
                + (f"the upper end of the {ivl} for {tgt} with the full judgments; depth {depth} needs {need}."
                   if plan == iv.plan_n else f"what depth {depth} needs; the {ivl} for {tgt} is for the full "
                   "judgments."))
    return (f"Plan for **{plan} topics**{where}: the upper end of the {ivl} for the binding target {tgt}; "
            f"the point estimate is {need}{_point_target(s0, t, need)}.")


def _point_target(s0: ScenarioResult, t: ScenarioTarget, need: int) -> str:
    """`` (target)`` when the point estimate ``need`` is another target's count than the binding ``t``'s."""
    if t.n_topics == need:
        return ""
    other = [x for x in s0.targets if x.n_topics == need]
    return f" ({_short_target(other[0])})" if other else ""


def headline(s0: ScenarioResult, need: int | None, n_show: int | None, depth: int | None) -> str:
    """The answer in at most :data:`~planner.study.results.HEADLINE_WORDS` words: the count to plan
    with (:func:`~planner.study.results.plan_count`), its interval and the binding target; the
    scenario's name is left out when it would make the headline longer."""
    out = ""
    for where in (f" (scenario **{s0.name}**)", ""):
        if n_show is None:
            out = (f"No target is reached{where} within the topic counts studied (up to "
                   f"{max(s0.settings['topics'])}): study larger counts or relax the targets.")
        elif need is None:
            out = (f"Choose **at least {n_show} topics**{where}: the reached targets need that many; "
                   + ", ".join(_short_target(t) for t in s0.targets if t.n_topics is None) + " not solved.")
        elif s0.pool and not s0.pool.get("choice"):
            out = (f"**No pool depth meets the targets**{where}: with the full judgments they need "
                   f"{n_show} topics.")
        else:
            out = _plan_headline(s0, need, plan_count(s0.targets, s0.pool), depth, where)
        if len(out.split()) <= HEADLINE_WORDS:
            break
    return out


# ------------------------------------------------------------------- query variants
def _variant_part(r: dict) -> str:
    if r["n_topics"] is None:
        return f"{r['n_variants']} variant{'s' if r['n_variants'] > 1 else ''}: not reached"
    return (f"{r['n_variants']} variant{'s' if r['n_variants'] > 1 else ''}: {r['n_topics']} topics"
            + (f" [{r['lower']}, {'-' if r.get('upper') is None else r['upper']}]"
               if r.get("lower") is not None else "")
            + f" ({r['queries']} query formulations)")


def _variant_costs(s0: ScenarioResult, vrows: list[dict], nv: int) -> str:
    priced = [r for r in vrows if r.get("cost") is not None]
    if not priced:
        return (" Fewer variants need fewer query formulations but more topics to judge; costs are "
                "not included (a topic and a variant both cost 0; give costs: {topic: ..., variant: "
                "...} to compare them).")
    best = min(priced, key=lambda r: (r["cost"], r["n_variants"]))
    c = s0.settings["costs"]
    own = next((r["cost"] for r in priced if r["n_variants"] == nv), float("nan"))
    return (f" At {c['topic']:g} per topic and {c['variant']:g} per variant, the cheapest is "
            f"{best['n_variants']} variant{'s' if best['n_variants'] > 1 else ''} per topic: "
            f"{best['n_topics']} topics, cost {best['cost']:.6g}"
            + (f" (with the collection's {nv}: cost {own:.6g})"
               if any(r["n_variants"] == nv for r in priced) and best["n_variants"] != nv else "") + ".")


def _far_variants(far: int | None, T0: int, runs_low: bool) -> str:
    """The note on a far variant count, for a method whose counts run low there (``runs_low``)."""
    if not runs_low or far is None or not T0 or far < 1.5 * T0:
        return ""
    return (f"; the largest, {far}, is {far / T0:.1f} times the collection's {T0} topics, and "
            "counts this far out tend to run low (see 'Intervals on n')")


def _variant_tradeoff(s0: ScenarioResult, bt: ScenarioTarget, vrows: list[dict], nv: int) -> str:
    T0 = s0.data.n_topics or 0
    ivl = any(r.get("lower") is not None for r in vrows)
    more = [r["n_variants"] for r in vrows if r["n_variants"] > nv]
    far = max((r["n_topics"] for r in vrows if r["n_topics"] is not None), default=None)
    dups = [r.get("n_without_duplicates") for r in vrows]
    text = (f"; with v variants per topic, {bt.target} {bt.value:g} needs "
            f"{'; '.join(_variant_part(r) for r in vrows)} "
            f"(method {vrows[0]['method']}, the variant part of each pair's variance scaled by 1/v; "
            + ("95% intervals on n from the scenario's topic resamples" if ivl else "no interval on n")
            + ("; every run counted, the tied pairs included: with one run of each tied group "
               + " / ".join("-" if d is None else str(d) for d in dups) + " topics"
               if "n_without_duplicates" in vrows[0] else "")
            + _far_variants(far, T0, bt.runs_low)
            + (f"; more than the collection's {nv} variants extrapolates the model" if more else "")
            + ("; informative topics, before scaling up to the topics to build" if s0.data.filtered else "")
            + ").")
    return text + _variant_costs(s0, vrows, nv) + (
        " The table 'Topics against query variants' has every ranking target, and Erho2 and Phi from the "
        "D-study.")


def _variants_sentence(s0: ScenarioResult, nv: int) -> str:
    text = f" Each topic counts with its {nv} query variants, averaged, as in the collection"
    bt = s0.binding()
    vtargets = (s0.variants or {}).get("targets") or []
    vrows = [r for r in vtargets if bt is not None and r["target"] == bt.target and r["value"] == bt.value
             and r.get("n_variants") is not None]
    if vrows and bt is not None:
        return text + _variant_tradeoff(s0, bt, vrows, nv)
    ranked = sorted({r["target"] for r in vtargets if r.get("n_variants") is not None})
    return text + ("; the table 'Topics against query variants' trades topics against variants per topic "
                   + (f"for {', '.join(ranked)} and " if ranked else "for ") + "Erho2 and Phi (the D-study).")


# ------------------------------------------------------------------- what n topics buy
def _curve_buys(s0: ScenarioResult, n_show: int) -> list[str]:
    alpha, md = s0.settings["alpha"], s0.settings["min_diff"]
    ci_lab = (f"{100 * (1 - alpha):g}% interval width of a pair's stratified mean "
              "difference (pooled variance per stratum, proportional allocation)" if s0.stacked else
              f"median {100 * (1 - alpha):g}% interval width of a pair's mean difference")
    pw_lab = (f"power at min_diff {md:g} (normal approximation, stratified)"
              if s0.stacked else f"mean power over pairs of the paired t-test at min_diff {md:g}")
    rev_lab = "mean reversal rate over system pairs" + (
        " (against the collection's order, counting the chance that this order is itself wrong, so it levels "
        "off as n grows; the honest statement's bootstrap rate treats the order as given)"
        if _predictive(s0) else "")
    out = []
    for col, lab in (("ci_width_median", ci_lab), ("swap_rate_mean", "mean swap rate over system pairs"),
                     ("reversal_rate_mean", rev_lab),
                     ("kendall_tau_mean", "expected Kendall tau between two topic sets' rankings"),
                     ("power_mean", pw_lab)):
        v = s0.at(n_show).get(col)
        if v is not None and finite(v):
            extra = ""
            if col == "ci_width_median":
                # the width is the whole interval: a pair's difference is pinned down to +- half
                extra = (f" (a pair's difference known to +-{v / 2:.3f}, "
                         + ("below" if v / 2 < md else "not below") + f" min_diff {md:g})")
            out.append(f"{lab}: {v:.3f}{extra}")
    return out


def _design_buys(s0: ScenarioResult, n_show: int) -> list[str]:
    """The power target's own definition: one pair with the planning variance."""
    out = []
    md, alpha = s0.settings["min_diff"], s0.settings["alpha"]
    for t in s0.targets:
        if t.sigma2 is not None and finite(t.sigma2):
            p = float(design_power("paired-t", n_show, md, t.sigma2, alpha=alpha))
            out.append(f"power of the paired t-test at min_diff {md:g} for a pair with the planning variance "
                       f"({t.variance}, {t.sigma2:.4g}; what the power target is solved on): {p:.3f}")
    return out


def _split_buys(s0: ScenarioResult, n_show: int) -> list[str]:
    if not (s0.stacked and s0.strata):
        return []
    labs = list(s0.strata["weights"])
    W = np.array([s0.strata["weights"][k] for k in labs])
    sig = np.sqrt(np.array([s0.strata["sigma2"][k] for k in labs]))
    prop, opt = stratum_counts(n_show, W), stratum_counts(n_show, W * sig)
    return ["split: proportional " + ", ".join(f"{k} {int(v)}" for k, v in zip(labs, prop))
            + "; Neyman-optimal " + ", ".join(f"{k} {int(v)}" for k, v in zip(labs, opt))]


def _today_buys(s0: ScenarioResult, n_show: int) -> list[str]:
    T = s0.data.n_topics
    row = s0.at(T)
    today = [(lab, row.get(col)) for col, lab in (("ci_width_median", "interval width"),
                                                   ("swap_rate_mean", "swap rate"),
                                                   ("kendall_tau_mean", "Kendall tau"), ("power_mean", "power"))]
    shown = [f"{lab} {v:.3f}" for lab, v in today if finite(v)]
    out = []
    if shown and n_show != T:
        out.append(f"for comparison, at the collection's own {T} topics: " + ", ".join(shown))
    at_n = {int(r["n_topics"]): r for r in s0.at_n}
    for n in sorted({n_show, T}):
        r = at_n.get(n)
        if r is None:
            continue
        if r.get("not_computed"):
            out.append(f"the curve statistics cannot be computed at {n} topics (above the "
                       f"{MAX_TOPICS:,} topics planner simulates)")
        elif not s0.stacked and not finite(r.get("swap_rate_mean")) and s0.settings["method"] == "subsample":
            out.append(f"subsample draws two disjoint topic sets from the collection's {T} topics, "
                       f"so its statistics exist only up to {T // 2} topics, not at {n}")
    return out


def _pool_buys(s0: ScenarioResult, depth: int) -> list[str]:
    pool = s0.pool or {}
    ch = pool["choice"]
    cst = s0.settings.get("costs") or {}
    out = [f"about {ch['judgments_per_topic']:.0f} judgments per topic, "
           f"{ch['n_topics_plan'] * ch['judgments_per_topic']:.0f} in all for the {ch['n_topics_plan']} topics "
           f"to plan with; total cost "
           f"{ch['total_cost']:.0f} ({cst.get('topic', 0):g} per topic created + "
           f"{cst.get('judgment', 1):g} per judgment); ranking Kendall tau "
           f"{ch['kendall_tau_vs_full']:.3f} against the full judgments",
           "the rates above are from the full judgments; the pool study re-scores at "
           "each depth (tables/pool.csv)",
           f"depth chosen by the pool study of every target (method {pool['method']}): {pool['reason']}"]
    nb = pool.get("budget_topics")
    if nb is not None and nb > ch["n_topics_plan"]:
        rb = s0.at(nb)
        stats_b = [f"{lab} {rb[col]:.3f}" for col, lab in (("swap_rate_mean", "swap rate"),
                                                           ("kendall_tau_mean", "Kendall tau"),
                                                           ("power_mean", "mean power"))
                   if finite(rb.get(col))]
        budget = float(s0.settings["costs"]["budget"])
        out.append(f"the whole budget {budget:g} would buy {nb} topics at depth {depth} "
                   f"({budget - ch['total_cost']:.0f} is left after the {ch['n_topics_plan']} to plan with)"
                   + (": " + ", ".join(stats_b) if stats_b else ""))
    return out


def _buys(s0: ScenarioResult, n_show: int, depth: int | None) -> list[str]:
    buys = _curve_buys(s0, n_show) + _design_buys(s0, n_show) + _split_buys(s0, n_show)
    buys.append(f"Erho2 = {_erho(s0, n_show):.3f}, Phi = {_phi(s0, n_show):.3f} (D-study)")
    buys += _today_buys(s0, n_show)
    if depth and s0.pool:
        buys += _pool_buys(s0, depth)
    random = "" if s0.stacked or _closed_form(s0) else (
        "; the resamples at each count use the random stream that count has on the scenario's curve")
    buys.append(f"(every figure above is computed at exactly that topic count, not interpolated "
                f"along the curve; method {s0.curve.method}, variance {s0.curve.variance}{random})")
    return buys


# -------------------------------------------------------------------- the grid's others
def _same_count(scens: list[ScenarioResult], n: int) -> str:
    text = f" Every scenario that reaches its targets needs {n} topics"
    bts = {b.target for s in scens if s.need() is not None and (b := s.binding()) is not None}
    if (all(not methods.target(b).pair_rate for b in bts)
            and len({s.settings["method"] for s in scens}) > 1):
        # the grid's methods cannot differ there: that target's formula has no method
        text += (f", because the binding target ({', '.join(sorted(bts))}) is solved by the "
                 "same formula whatever the method; the methods differ only on the other targets "
                 "(the table 'Topics needed')")
    return text + "."


def _to_build_range(scens: list[ScenarioResult]) -> str:
    trip = [(s.name, s.need(), to_build(s)) for s in scens if to_build(s) is not None]
    if not any(b != n for _, n, b in trip):
        return ""
    # a filter keeps a share of the topics: the needed ones are counted after it, but a new
    # collection must create more (the topics_to_build column)
    blo = min(((x, b) for x, _, b in trip), key=lambda p: p[1] or 0)
    bhi = max(((x, b) for x, _, b in trip), key=lambda p: p[1] or 0)
    return (f" Filters count the topics kept after filtering; counted as topics to "
            f"create (topics_to_build), the range is {blo[1]} ({blo[0]}) to {bhi[1]} ({bhi[0]}).")


def _paired_verdict(pr: PairedComparison, a_, b_, lo: tuple, hi: tuple) -> str:
    """Measures on the same topics: the paired interval is the verdict; the two intervals on n can
    overlap while it excludes 0."""
    return (f" Their 95% intervals on n are [{a_[0]}, {a_[1]}] and [{b_[0]}, {b_[1]}]; "
            f"paired over the same {pr.extra_interval.n_resamples} topic resamples, the difference "
            f"({_signed(hi[1] - lo[1])}, 95% interval [{_signed(_bound(pr.extra_interval.low, -1))}, "
            f"{_signed(_bound(pr.extra_interval.high, 1))}]) "
            + ("is larger than the uncertainty of the collection's own estimates." if pr.verdict.apart else
               "is within the uncertainty of the collection's own estimates."))


def _overlap_verdict(scens: list[ScenarioResult], a_, b_, lo: tuple, hi: tuple) -> str:
    """A rough verdict on the comparison the grid asks for: overlapping intervals do not prove that
    a difference is noise, and two scenarios that differ in several settings do not say which one
    matters."""
    by = {s.name: s for s in scens}
    diff = [k for k in GRID_KEYS if by[lo[0]].settings[k] != by[hi[0]].settings[k]]
    return (f" Their 95% intervals on n ([{a_[0]}, {a_[1]}] and [{b_[0]}, {b_[1]}]) "
            + ("overlap, a rough sign that the difference may be within the uncertainty of "
               "the estimates (overlap is not a test)" if a_[1] >= b_[0] else
               "do not overlap: the difference is larger than the uncertainty of the "
               "estimates")
            + (f"; the two differ in {', '.join(diff[:-1])} and {diff[-1]}, so this does "
               "not say which setting matters." if len(diff) > 1 else "."))


def _range(scens: list[ScenarioResult], paired: list[PairedComparison], reach: list, n_per: int,
           depth) -> tuple[str, PairedComparison | None]:
    lo = min(reach, key=lambda p: p[1])
    hi = max(reach, key=lambda p: p[1])
    which = (f"{len(scens)} scenarios" if len(reach) == n_per else
             f"{len(reach)} of the {len(scens)} scenarios that reach every target")
    full = " with the full judgments" if depth else ""
    text = (f" Across the {which} the topics needed{full} range from {lo[1]} ({lo[0]}) to "
            f"{hi[1]} ({hi[0]}).") + _to_build_range(scens)
    bounds = {s.name: _binding_interval(s) for s in scens}
    a_, b_ = bounds.get(lo[0]), bounds.get(hi[0])
    if not (a_ and b_):
        return text, None
    pr = _paired_row(paired, scens, lo[0], hi[0])
    if pr is not None:
        return text + _paired_verdict(pr, a_, b_, lo, hi), pr
    return text + _overlap_verdict(scens, a_, b_, lo, hi), None


def _grid(scens: list[ScenarioResult], paired: list[PairedComparison], need, depth) -> str:
    s0 = scens[0]
    said = None                    # the paired comparison already given for the extremes
    text = (f" The answer speaks for the first scenario of the grid ({s0.name}); list the "
            "settings you plan with first.")
    per = [(s.name, s.need()) for s in scens]
    reach = [p for p in per if p[1] is not None]
    if reach:
        lo = min(reach, key=lambda p: p[1] or 0)
        hi = max(reach, key=lambda p: p[1] or 0)
        if lo[1] == hi[1]:
            text += _same_count(scens, lo[1] or 0)
        else:
            more, said = _range(scens, paired, reach, len(per), depth)
            text += more
        if len(reach) < len(per):
            text += f" {len(per) - len(reach)} scenario(s) do not reach all targets."
    if depth:
        text += pool_others(s0, scens, depth)
    binding = s0.binding()
    if paired and binding is not None and need is not None:
        text += _paired_sentence(s0, binding, [r for r in paired if r is not said])
    return text


def pool_others(s0: ScenarioResult, scens: list[ScenarioResult], depth: int) -> str:
    """The other scenarios' pool studies at the chosen depth, and the cheapest depth serving all:
    a depth chosen for one measure can fail another's tau_min or need more topics for it."""
    others = [s for s in scens[1:] if s.pool and s.pool.get("depths")]
    if not others or not s0.pool:
        return ""
    rows = {s.name: {int(r["depth"]): r for r in (s.pool or {})["depths"]} for s in [s0] + others}
    bad = [b for s in others if (b := _pool_other(s, rows[s.name].get(int(depth)), s0.pool))]
    if not bad:
        return (f" At depth {depth} the other scenarios need no more topics and keep their Kendall tau "
                "against the full judgments.")
    return f" At depth {depth}, " + "; ".join(bad) + "." + _serving_all(rows, s0.name)


def _pool_other(s: ScenarioResult, r: dict | None, pool0: dict) -> str:
    if r is None:
        return ""
    n = r.get("n_topics_needed")
    if r.get("tau_ok", True) and n is not None and n <= pool0["choice"]["n_topics_needed"]:
        return ""
    tau = r.get("kendall_tau_vs_full")
    return (f"{s.name} needs {'no reachable count' if n is None else f'{n} topics'}"
            + (f" and its Kendall tau against its full judgments is {tau:.3f}"
               + (f", below tau_min {(s.pool or {}).get('tau_min')}" if not r.get("tau_ok", True) else "")
               if tau is not None else ""))


def _serving_all(rows: dict, first: str) -> str:
    joint = []
    for d in sorted(rows[first]):
        rs = [rows[k].get(d) for k in rows]
        if any(r is None or r.get("n_topics_plan") is None for r in rs):
            continue
        n = max(int(r["n_topics_plan"]) for r in rs)
        joint.append({"depth": d, "n": n, "tau_ok": all(r.get("tau_ok", True) for r in rs),
                      "total_cost": n * rows[first][d]["cost_per_topic"]})
    best = cheapest_depth(joint)
    if best is None:
        return " No depth serves every scenario at once."
    return (f" Serving every scenario at once takes depth {best['depth']} with {best['n']} topics to plan with "
            f"(cost {best['total_cost']:.0f}).")


def _paired_part(s0: ScenarioResult, r: PairedComparison) -> str:
    mine_fewer = r.fewer == s0.name
    other = r.measure_more if mine_fewer else r.measure_fewer
    n_other = r.n_more if mine_fewer else r.n_fewer
    sign = 1 if mine_fewer else -1
    # the other measure's count minus this one's: paired_difference's interval is symmetric,
    # so negating the table's gives exactly paired_difference(mine, other)
    lo, hi = sorted((sign * _bound(r.extra_interval.low, -1), sign * _bound(r.extra_interval.high, 1)))
    diff = math.inf if r.extra is None else sign * r.extra
    unstable = ""
    if r.verdict is Verdict.UNSTABLE:
        # the point difference's sign is the minority over the resamples
        share = r.share_more if mine_fewer else r.share_fewer
        unstable = (f"; which of the two needs fewer is not settled: {other} needs more in "
                    f"{share:.0%} of the resamples")
    return (f"{other} {n_other if n_other is not None else 'not reached'} "
            f"({_signed(diff)}, 95% interval [{_signed(lo)}, {_signed(hi)}]{unstable})")


def _paired_sentence(s0: ScenarioResult, binding: ScenarioTarget, paired: list[PairedComparison]) -> str:
    """What the answer says about the chosen scenario against the other measures on its topics."""
    rows = [r for r in paired if s0.name in (r.fewer, r.more)
            and r.target == binding.target and r.value == binding.value]
    if not rows:
        return ""
    apart = [(r.measure_more if r.fewer == s0.name else r.measure_fewer) for r in rows if r.verdict.apart]
    full = " with the full judgments" if s0.pool else ""
    text = (f" Paired over the same {rows[0].extra_interval.n_resamples} topic resamples of {rows[0].collection} "
            f"(each resample solved for every measure), the counts the other measures need for "
            f"{binding.target} {binding.value:g}{full}, against {s0.settings['measure']}'s "
            f"{binding.n_topics}: " + "; ".join(_paired_part(s0, r) for r in rows) + ". ")
    if not apart:
        return text + "None of these differences is larger than the resampling noise."
    if len(apart) == len(rows):
        return text + "Every one of these differences is larger than the resampling noise."
    return text + ("Only " + ", ".join(apart) + (" differs" if len(apart) == 1 else " differ")
                   + " by more than the resampling noise.")


# ------------------------------------------------------------------------- the answer
def _tail(s0: ScenarioResult, n_show: int | None) -> str:
    """Counts beyond the studied range, query variants, interpolated counts."""
    text = ""
    top = max(s0.settings["topics"])
    if n_show is not None and n_show > top and not (s0.pool and s0.pool.get("choice")):
        text += (f" That count is beyond the largest topic count studied ({top}): it comes from the "
                 f"method's formula, and the curves and figures stop at {top} (add larger counts to "
                 "`topics` to see them).")
    nv = s0.data.n_variants or 1
    if n_show is not None and nv > 1:
        text += _variants_sentence(s0, nv)
    for t in s0.targets:
        if t.bracket is not None:
            text += (f" The count for {t.target} {t.value:g} is interpolated between the studied "
                     f"counts {t.bracket[0]} and {t.bracket[1]} (the method cannot be evaluated "
                     "between them), not computed.")
    return text


def answer(scens: list[ScenarioResult], paired: list[PairedComparison] | None = None) -> Answer:
    """The study's answer for the grid's first scenario, and how the others compare.

    Parameters
    ----------
    scens : list of ScenarioResult
        The scenarios, the one the answer speaks for first.
    paired : list of PairedComparison, optional
        Measures compared on the same topics (:func:`planner.study.paired.paired_measures`).

    Returns
    -------
    Answer
    """
    s0 = scens[0]
    need = s0.need()
    reached = [t.n_topics for t in s0.targets if t.n_topics is not None]
    pool = s0.pool
    depth = pool["choice"]["depth"] if pool and pool.get("choice") else None
    if pool and pool.get("choice"):
        need = pool["choice"]["n_topics_needed"]
    n_show = need if need is not None else (int(max(reached)) if reached else None)
    text = _details(s0, need, n_show, depth) + _tail(s0, n_show)
    buys = _buys(s0, n_show, depth) if n_show is not None else []
    if len(scens) > 1:
        text += _grid(scens, paired or [], need, depth)
    if buys:
        text += f" What {n_show} topics buy (scenario {s0.name}):"
    plan = plan_count(s0.targets, pool) if need is not None else None
    return Answer(s0.id, need, depth, headline(s0, need, n_show, depth), text.strip(), tuple(buys), plan)
