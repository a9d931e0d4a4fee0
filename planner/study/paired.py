"""Measures compared on the same topics: two scenarios' counts, resample by resample."""

from __future__ import annotations

import math

from ..plan import PairedDifference, paired_difference
from .results import PairedComparison, ScenarioResult, ScenarioTarget, Verdict

__all__ = ["paired_measures"]

#: settings two scenarios must share for their counts to be compared measure against measure
_PAIRED_SAME = ("method", "variance", "min_diff", "strata", "filter", "alpha", "pool", "costs", "variants")


def _comparable(a: ScenarioResult, b: ScenarioResult) -> bool:
    """Two measures of the same runs on the same topics: one collection scored two ways, or two
    files (one a measure) holding the same systems and topics."""
    sa, sb = a.settings, b.settings
    same_runs = sa["collection"] == sb["collection"] or (a.systems_key is not None
                                                         and a.systems_key == b.systems_key)
    return (a.topics_key is not None and a.topics_key == b.topics_key and same_runs
            and (a.data.source, a.data.measure) != (b.data.source, b.data.measure)
            and all(sa[k] == sb[k] for k in _PAIRED_SAME))


def _label(s: ScenarioResult, other: ScenarioResult) -> str:
    """What tells ``s`` from ``other``: its measure within one collection, else its collection
    (a file per measure)."""
    if s.settings["collection"] == other.settings["collection"]:
        return s.data.measure
    return s.settings["collection"]["label"]


def _collections(a: ScenarioResult, b: ScenarioResult) -> str:
    la, lb = a.settings["collection"]["label"], b.settings["collection"]["label"]
    return la if la == lb else f"{la} / {lb}"


def _verdict(d: PairedDifference) -> Verdict:
    if d.separated == "b more":
        return Verdict.SEPARATED
    if d.separated == "b fewer":
        return Verdict.REVERSED
    # the point estimate's order is not the resamples' majority
    return Verdict.UNSTABLE if d.share_b_fewer > d.share_b_more else Verdict.NOT_SEPARATED


def _compare(a: ScenarioResult, ta: ScenarioTarget, b: ScenarioResult, tb: ScenarioTarget) -> PairedComparison:
    na = math.inf if ta.n_topics is None else ta.n_topics
    nb = math.inf if tb.n_topics is None else tb.n_topics
    (f, tf), (m, tm) = ((a, ta), (b, tb)) if na <= nb else ((b, tb), (a, ta))
    d = paired_difference(tf.resampled_n, tm.resampled_n)
    extra = None if tm.n_topics is None or tf.n_topics is None else tm.n_topics - tf.n_topics
    return PairedComparison(
        collection=_collections(a, b), target=ta.target, value=ta.value, fewer=f.name,
        more=m.name, measure_fewer=_label(f, m), measure_more=_label(m, f),
        n_fewer=tf.n_topics, n_more=tm.n_topics, extra=extra,
        extra_median=d.diff_median, extra_interval=d.interval,
        share_more=d.share_b_more, share_equal=d.share_equal, share_fewer=d.share_b_fewer, verdict=_verdict(d))


def paired_measures(scens: list[ScenarioResult]) -> list[PairedComparison]:
    """Measures compared on the same topics: for every two scenarios that differ only in the
    measure and cover the same topics, and every target both solved with topic-resampling
    intervals, the difference of their counts resample by resample
    (:func:`planner.plan.paired_difference`). ``fewer`` is the scenario whose count is the
    smaller (the earlier one on a tie); ``extra = n_more - n_fewer`` (``None`` when ``more`` is
    not reached), ``extra_median`` and ``extra_interval`` describe that difference
    over the resamples."""
    rows: list[PairedComparison] = []
    for i, a in enumerate(scens):
        for b in scens[i + 1:]:
            if not _comparable(a, b):
                continue
            for ta in a.targets:
                tb = next((t for t in b.targets if t.target == ta.target and t.value == ta.value), None)
                if tb is None or ta.resampled_n is None or tb.resampled_n is None:
                    continue
                rows.append(_compare(a, ta, b, tb))
    return rows
