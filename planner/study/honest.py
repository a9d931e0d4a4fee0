"""The honest statement in words: mean and topics, the sampling error from paired resampling,
pool bias, and what the intervals on n are (the caveat on counts far beyond the collection)."""

from __future__ import annotations

from .. import methods
from .results import HonestStatement, JudgedShare, ScenarioResult, ScenarioTarget
from .targets import INTERVAL_RESAMPLES

__all__ = ["checked_caveat", "honest_paragraphs", "interval_caveat", "stack_caveat"]

#: the largest multiple of a draw's topics at which benchmarks/bench_coverage.py checked the counts that
#: run low far out (method analytic, swap_rate 0.05, Terabyte AP: 204 topics from 25-topic draws)
COVERAGE_CHECKED = 8.2
#: what benchmarks/bench_coverage.py measured for the default method's counts (docs/research/calibration.md)
COVERAGE_FINDING = ("the 95% interval held the count the population of topics needs in 95% of draws on average "
                    "for the swap rate (200 draws of 20-50 topics: 89.5-99.3% on each of 27 collection and "
                    "measure rows, implied from draws without replacement; 96% with replacement, where the "
                    "collection is the population), Kendall tau alike, and 95% for power and interval width "
                    "solved as a study does by default, as designs on the median pair's variance, median-unbiased "
                    "(91.2-96.9%); the median count from a draw was within 10% of the whole collection's on 98 "
                    "of 108 rows (0.87-1.12 of it), none off by more than the draws' own noise; the lowest were "
                    "TREC-6 P@10 from 20 topics (0.87) and Terabyte AP from 25 and 43 (0.88).")
#: what benchmarks/bench_stack_coverage.py measured for a stack's intervals on n (docs/research/calibration.md)
STACK_COVERAGE_FINDING = ("over 60 draws of each of four stacks of two TREC collections (16 rows: width, power, "
                          "Erho2, Phi), the interval held the count the population of topics needs in 95% of draws "
                          "on average (89.6-98.6% by row, implied from draws of 10 or 20 topics per 50-topic "
                          "stratum without replacement), up to 27 times the draw's topics, and the whole stack's "
                          "count in 93-100%; the median count from a draw was 0.92-1.04 of the whole stack's.")


def _predictive(s: ScenarioResult) -> bool:
    return methods.method(s.settings["method"]).engine is methods.Engine.PREDICTIVE


def _far_targets(s: ScenarioResult) -> list[tuple[ScenarioTarget, float]]:
    """A scenario's targets whose count comes with an interval from topic resampling, each with
    the count's multiple of the collection's topics."""
    T = s.data.n_topics or 0
    return [(t, t.n_topics / T) for t in s.targets
            if T and t.n_topics is not None and t.runs_low_far_out]


def _checked_targets(s: ScenarioResult) -> list[ScenarioTarget]:
    """A scenario's targets with a resampled interval whose count does not run low far out, when its
    method is the one the coverage check measured (:data:`COVERAGE_FINDING`: the default method's)."""
    if s.settings["method"] != methods.DEFAULT_METHOD:
        return []
    return [t for t in s.targets if t.resampled_interval and not t.runs_low and t.n_topics is not None]


def checked_caveat(scens: list[ScenarioResult]) -> list[str]:
    """What the intervals on n of counts that do not drift with the collection's size are, and how
    often they held on draws (benchmarks/bench_coverage.py), when a scenario's answer has one."""
    cal = [(s, t) for s in scens for t in _checked_targets(s)]
    if not cal:
        return []
    s, t = max(cal, key=lambda x: x[1].n_topics or 0)
    T = s.data.n_topics or 0
    far = f", {(t.n_topics or 0) / T:.1f} times the collection's {T}" if T else ""
    return [f"**Intervals on n.** The swap, reversal and Kendall tau counts are re-solved on {INTERVAL_RESAMPLES} "
            "resamples of the collection's own topics; they come from pair differences deconvolved for the "
            "collection's size, so they do not shrink with it as plug-in counts do. Power and interval width rise "
            "with one planning variance of the pairs, and their interval is that variance's jackknife interval "
            "(each topic left out in turn). Checked on topic draws from every collection in the project's data "
            f"(benchmarks/bench_coverage.py): {COVERAGE_FINDING} Plan with the upper end. The largest count here: "
            f"{t.target} {t.value:g}, {t.n_topics} topics in {s.name}{far}."]


def stack_caveat(scens: list[ScenarioResult]) -> list[str]:
    """What a stack's intervals on n are and how often they held on draws
    (benchmarks/bench_stack_coverage.py), when a stacked scenario's answer has one; names the count
    farthest beyond the stack's topics."""
    got = [(s, t) for s in scens if s.stacked for t in s.targets
           if t.n_topics is not None and t.interval.low is not None]
    if not got:
        return []
    s, t = max(got, key=lambda x: x[1].n_topics or 0)
    T = s.data.n_topics or 0
    far = f", {(t.n_topics or 0) / T:.1f} times the stack's {T}" if T else ""
    return ["**Intervals on n.** A stack's counts (interval width, power, Erho2, Phi) each rise with one ratio "
            "of the strata's variance components; the 95% interval on n is that ratio's stratified jackknife "
            "interval (the topics of one stratum left out in turn), each end solved as the count is. Nothing is "
            f"drawn. Checked on topic draws from stacks of the project's data (benchmarks/bench_stack_coverage.py): "
            f"{STACK_COVERAGE_FINDING} Plan with the upper end. The largest count here: {t.target} {t.value:g}, "
            f"{t.n_topics} topics in {s.name}{far}."]


def interval_caveat(scens: list[ScenarioResult]) -> list[str]:
    """What the intervals on n from topic resampling are, and what a coverage check found, when a
    scenario's answer has one; names the count farthest beyond its collection's topics."""
    far = [(s, t, r) for s in scens for t, r in _far_targets(s)]
    if not far:
        return []
    s, t, ratio = max(far, key=lambda x: x[2])
    here = ""
    if ratio >= 1.5:
        here = (f" The farthest here: {t.target} {t.value:g} needs {t.n_topics} topics in "
                f"{s.name}, {ratio:.1f} times the collection's {s.data.n_topics}"
                + (f", beyond the {COVERAGE_CHECKED:g} times that check reached: its miss rate is "
                   "unmeasured and probably higher." if ratio > COVERAGE_CHECKED else "."))
    return [f"**Intervals on n.** They re-solve the target on resamples of the collection's own topics: how "
            "much the count moves with the topics, not a calibrated confidence interval. Far beyond the "
            "collection's size count and interval both run low: in a coverage check (swap_rate 0.05, TREC 2006 "
            "Terabyte AP, 20 draws per size, method analytic; benchmarks/bench_coverage.py, docs/planning.md) the "
            "median count from a draw was 0.81 of the whole collection's at 4.7 times the draw's topics and 0.71 "
            f"at {COVERAGE_CHECKED:g} times, and the interval missed that count in 20% and 10% of draws. "
            f"With {INTERVAL_RESAMPLES} resamples the upper end moves about 5-10% between "
            "seeds." + here + " Plan towards the upper end, or pilot more topics."]


def _mean_and_topics(s0: ScenarioResult, h: HonestStatement) -> str:
    d, p = s0.data, h.paired
    where = h.stratum or s0.settings["collection"]["label"]
    filtered = ""
    if not h.stratum and d.filtered:
        filtered = (f" (after filtering {d.n_topics_before_filter - d.n_topics} of "
                    f"{d.n_topics_before_filter})")
    return (f"**Mean and topics.** On {where} ({d.measure}), {p.n_systems} systems were "
            f"scored on **{p.n_topics} topics**{filtered}; the mean score over systems and "
            f"topics is {p.grand_mean:.3f}, the best system ({p.best_system}) has mean "
            f"{p.best_mean:.3f}.")


def _sampling_error(s0: ScenarioResult, h: HonestStatement) -> str:
    p = h.paired
    same = p.identical_to_best
    dup = (f" ({', '.join(same)}, identical to the best on every topic, {'is' if len(same) == 1 else 'are'} "
           "skipped)" if same else "")
    return (f"**Sampling error (paired resampling of topics).** The best system leads the second"
            f"{dup} ({p.second_system}, {p.second_mean:.3f}) by {p.diff_top2:.3f}, "
            f"{h.interval} [{p.diff_top2_interval.low:.3f}, {p.diff_top2_interval.high:.3f}]; "
            f"that pair reverses in {p.reversal_top2:.3f} of the resamples. Over all pairs the mean reversal "
            f"rate at {p.n_topics} topics is {p.reversal_mean_pairs:.3f} (the collection's order taken as given"
            + (", unlike the predictive curves" if _predictive(s0) else "")
            + f"); {100 * p.pairs_reversal_over_5pct:.0f}% of pairs reverse in more than 5% of resamples.")


def _pool_bias(js: JudgedShare | None) -> str:
    if js is None:
        return ("**Pool bias.** Unknown: this input gives per-topic scores only, so whether the "
                "evaluated runs contributed to the judgment pool (the judged share of their top k) "
                "cannot be checked; give runs + qrels to see it.")
    if js.min >= 0.999:
        verdict = ("every evaluated run's top {k} is judged, so unjudged documents cannot bias "
                   "these scores at this depth")
    elif js.min >= 0.95:
        verdict = ("the runs' top {k} is almost fully judged (unjudged documents count as "
                   "non-relevant), so pool bias at this depth is small")
    else:
        verdict = ("some runs have many unjudged documents in their top {k}, counted as "
                   "non-relevant: those runs did not fully contribute to the pool and their "
                   "scores may be biased low")
    contrib = ""
    if js.runs_in_pool is not None and js.runs_in_pool < js.runs:
        contrib = (f"{js.runs_in_pool} of the {js.runs} evaluated runs formed the pool "
                   "(pool_runs); the others did not contribute to it. ")
    return (f"**Pool bias.** {contrib}Judged share of the evaluated runs' top {js.depth}: mean "
            f"{js.mean:.3f}, lowest {js.min:.3f}" + (f" ({js.lowest_run})" if js.lowest_run else "")
            + "; " + verdict.format(k=js.depth) + ".")


def _other_pool_bias(scens: list[ScenarioResult]) -> list[str]:
    """The other collections of the grid: their pool bias can differ from the first one's."""
    out = []
    seen = {scens[0].settings["collection"].get("label")}
    for s in scens[1:]:
        lab = s.settings["collection"].get("label")
        js = s.honest.judged_share
        if lab in seen or s.stacked:
            continue
        seen.add(lab)
        if js and js.min is not None and js.min < 0.95:
            out.append(f"**Pool bias on {lab}.** Judged share of the evaluated runs' top {js.depth}: mean "
                       f"{js.mean:.3f}, lowest {js.min:.3f}" + (f" ({js.lowest_run})" if js.lowest_run else "")
                       + f"; runs with many unjudged documents in their top {js.depth} count them as "
                         "non-relevant, so their scores may be biased low.")
    return out


def honest_paragraphs(scens: list[ScenarioResult], reuse: str | None = None) -> list[str]:
    """The honest statement of the grid's first scenario (of each stratum of a stack), with the
    caveat on intervals on n and the pool bias of the grid's other collections; ``reuse``, the
    pool-reusability paragraph (:mod:`planner.study.reuse`), follows the first one's pool bias."""
    out = []
    s0 = scens[0]
    for h in s0.honest_strata or (s0.honest,):
        out.append(_mean_and_topics(s0, h))
        out.append(_sampling_error(s0, h))
        if not s0.stacked:
            out.extend(interval_caveat(scens))
            out.extend(checked_caveat(scens))
        out.append(_pool_bias(h.judged_share))
    if reuse:
        out.append(reuse)
    if s0.stacked:
        out.extend(stack_caveat(scens))     # after every stratum's paragraphs: it is about the stack
    out.extend(_other_pool_bias(scens))
    if len(scens) > 1:
        out.append("The table below gives the same statement for every scenario. Compare systems "
                   "with per-topic (paired) differences, never with two means computed separately.")
    else:
        out.append("Compare systems with per-topic (paired) differences, never with two means "
                   "computed separately.")
    return out
