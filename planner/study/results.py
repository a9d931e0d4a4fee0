"""What a study produces, as frozen dataclasses: each scenario's result, its targets, the honest
statement, the measures compared pairwise and the answer.

Every class has ``to_dict()`` giving the plain dict ``results.json`` and the report read (the
same keys in the same order as before the types existed), so the report folder is unchanged.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..plan import PairedBootstrap
from ..results import Interval, ResultMixin, plan_binding

__all__ = ["HEADLINE_WORDS", "NO_INTERVAL", "Answer", "HonestStatement",
           "JudgedShare", "PairedComparison", "ScenarioComponents", "ScenarioCurve", "ScenarioData", "ScenarioResult",
           "ScenarioTarget", "SolveKind", "StudyResult", "Verdict", "WithoutDuplicates", "answer_count", "plan_count",
           "plan_target"]


#: a target with no interval on n (``how`` in the target says why)
NO_INTERVAL = Interval.none("")


@dataclass(frozen=True)
class JudgedShare:
    """Judged share of the evaluated runs' top ``depth``.

    Attributes
    ----------
    depth : int
        The cut-off (the measure's, or the nearest depth the pool statistics have).
    mean, min : float
        Mean and lowest judged share over the runs.
    runs : int
        Runs evaluated.
    lowest_run : str
        The run with the lowest share.
    runs_in_pool : int or None
        Runs that formed the pool (``None`` when unknown).
    """

    depth: int
    mean: float
    min: float
    runs: int
    lowest_run: str
    runs_in_pool: int | None

    def to_dict(self) -> dict:
        return {"depth": self.depth, "mean": self.mean, "min": self.min, "runs": self.runs,
                "lowest_run": self.lowest_run, "runs_in_pool": self.runs_in_pool}


@dataclass(frozen=True)
class HonestStatement:
    """The honest statement of one collection (or one stratum of a stack).

    Attributes
    ----------
    paired : PairedBootstrap
        Mean, topics and the paired topic bootstrap of the system pairs.
    judged_share : JudgedShare or None
        Whether the evaluated runs' top k is judged (``None``: per-topic scores only).
    stratum : str or None
        The stratum's label when the collection is a stack.
    """

    paired: PairedBootstrap
    judged_share: JudgedShare | None
    stratum: str | None = None

    @property
    def interval(self) -> str:
        """How the interval of the top two's difference was computed, in words."""
        p = self.paired
        return f"{100 * (1 - p.alpha):g}% paired bootstrap percentile interval, {p.n_resamples} resamples"

    def to_dict(self) -> dict:
        p = self.paired
        out: dict[str, Any] = {
            "n_systems": p.n_systems, "n_topics": p.n_topics, "grand_mean": p.grand_mean,
            "best_system": p.best_system, "best_mean": p.best_mean,
            "second_system": p.second_system, "second_mean": p.second_mean,
            "identical_to_best": list(p.identical_to_best),
            "diff_top2": p.diff_top2, "diff_top2_lo": p.diff_top2_interval.low,
            "diff_top2_hi": p.diff_top2_interval.high,
            "reversal_top2": p.reversal_top2, "reversal_mean_pairs": p.reversal_mean_pairs,
            "pairs_reversal_over_5pct": p.pairs_reversal_over_5pct, "interval": self.interval,
            "judged_share": None if self.judged_share is None else self.judged_share.to_dict()}
        if self.stratum is not None:
            out["stratum"] = self.stratum
        return out


class SolveKind(enum.Enum):
    """How a scenario's target was solved."""

    #: D-study of the variance components (Erho2, Phi), interval on n in closed form
    DSTUDY = "dstudy"
    #: the classical design (paired t-test power, interval width) with the planning variance
    DESIGN = "design"
    #: the scenario's closed-form method solved exactly (plan.size_for_target)
    CLOSED_FORM = "closed form"
    #: bisection along the method's curve, the method evaluated at each candidate n
    CURVE = "curve"
    #: stacked strata (planner.plan.stacked)
    STACKED = "stacked"
    #: not computed (``how`` says why)
    NOT_COMPUTED = "not computed"


@dataclass(frozen=True)
class WithoutDuplicates:
    """A target's count with one run of each group of identical runs kept.

    Attributes
    ----------
    identical_pairs : int
        Pairs of systems scoring the same on every topic.
    duplicate_runs : tuple of str
        The runs left out.
    n_topics : int or None
        The count without them.
    interval : Interval
        Its interval on n.
    """

    identical_pairs: int
    duplicate_runs: tuple[str, ...]
    n_topics: int | None
    interval: Interval


@dataclass(frozen=True)
class ScenarioTarget:
    """One target of a scenario and the topics it needs.

    Attributes
    ----------
    target : str
        The target's name (:data:`planner.methods.TARGETS`).
    value : float
        The value to meet.
    n_topics : int or None
        Topics needed (``None``: not reached or not computed).
    interval : Interval
        The interval on n (``how`` says how it was computed; ``None`` ends: unbounded, or none).
    how : str
        How the count was computed, in words (for the report).
    kind : SolveKind
        How the count was computed.
    sigma2 : float or None
        The planning variance of a power target (the design's variance of per-topic differences).
    variance : str or None
        That variance's selector, in words.
    duplicates : WithoutDuplicates or None
        The count without duplicate runs, when the collection has identical runs.
    curve_n_topics : int or None
        The count along the scenario's curve (design and closed-form targets).
    bracket : tuple of int or None
        When the count is interpolated: the studied counts it lies between.
    resampled_n : numpy.ndarray or None
        Each topic resample's count (for measures compared pairwise; not written).
    runs_low : bool
        The count and its interval run low far beyond the collection's topics (the method's rule,
        :func:`planner.methods.runs_low_far_out`).
    """

    target: str
    value: float
    n_topics: int | None
    interval: Interval
    how: str
    kind: SolveKind
    sigma2: float | None = None
    variance: str | None = None
    duplicates: WithoutDuplicates | None = None
    curve_n_topics: int | None = None
    bracket: tuple[int, int] | None = None
    resampled_n: np.ndarray | None = field(default=None, repr=False, compare=False)
    runs_low: bool = False

    @property
    def interpolated(self) -> bool:
        """True when the count is interpolated between studied counts, not computed."""
        return self.bracket is not None

    @property
    def resampled_interval(self) -> bool:
        """True when the interval on n comes from topic resampling and has both ends' data."""
        return self.interval.resampled and self.interval.low is not None

    @property
    def runs_low_far_out(self) -> bool:
        """True when the count has a resampled interval and both run low when the count is far
        beyond the collection's topics (:attr:`runs_low`)."""
        return self.resampled_interval and self.runs_low

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"target": self.target, "value": self.value, "n_topics": self.n_topics,
                               "lower": self.interval.low, "upper": self.interval.high, "how": self.how}
        if self.sigma2 is not None:
            out.update(sigma2=self.sigma2, variance=self.variance)
        d = self.duplicates
        if d is not None:
            out.update(identical_pairs=d.identical_pairs, duplicate_runs=list(d.duplicate_runs),
                       n_without_duplicates=d.n_topics, n_without_duplicates_lower=d.interval.low,
                       n_without_duplicates_upper=d.interval.high)
        if self.kind in (SolveKind.DESIGN, SolveKind.CLOSED_FORM):
            out["curve_n_topics"] = self.curve_n_topics
        if self.bracket is not None:
            out.update(interpolated=True, bracket=list(self.bracket))
        return out


@dataclass(frozen=True)
class ScenarioData:
    """The scores a scenario ran on.

    Attributes
    ----------
    source : str
        Where they came from.
    measure : str
        The measure's label.
    n_systems, n_topics : int
        Systems and topics (after the filter).
    n_topics_before_filter : int
        Topics before the informative-topic filter.
    n_variants : int
        Query variants per topic (1: none).
    strata : list of str or None
        The strata's labels.
    per_stratum : tuple of dict or None
        A stack's strata: label, systems, topics and source of each.
    """

    source: str
    measure: str
    n_systems: int
    n_topics: int
    n_topics_before_filter: int
    n_variants: int
    strata: list[str] | None
    per_stratum: tuple[dict, ...] | None = None

    @property
    def filtered(self) -> bool:
        """True when the filter dropped topics."""
        return self.n_topics_before_filter != self.n_topics

    def to_dict(self) -> dict:
        out = {"source": self.source, "measure": self.measure, "n_systems": self.n_systems,
               "n_topics": self.n_topics, "n_topics_before_filter": self.n_topics_before_filter,
               "n_variants": self.n_variants, "strata": self.strata}
        if self.per_stratum is not None:
            out["per_stratum"] = [dict(d) for d in self.per_stratum]
        return out


@dataclass(frozen=True)
class ScenarioComponents:
    """A scenario's variance components (of the collection, or a stack's W-weighted ones).

    Attributes
    ----------
    method : str
        How they were estimated.
    var_s, var_t, var_e : float
        System, topic and residual variance.
    grand_mean : float
        Mean score.
    truncated : tuple of str
        Components truncated at 0.
    ms_s, ms_t, ms_e : float or None
        Mean squares (``None`` for a stack).
    df_s, df_t, df_e : int or None
        Degrees of freedom (``None`` for a stack).
    weighted : bool
        True for a stack's W-weighted mean of per-stratum components (written in that order).
    """

    method: str
    var_s: float
    var_t: float
    var_e: float
    grand_mean: float
    truncated: tuple[str, ...]
    ms_s: float | None = None
    ms_t: float | None = None
    ms_e: float | None = None
    df_s: int | None = None
    df_t: int | None = None
    df_e: int | None = None
    weighted: bool = False

    @classmethod
    def from_dict(cls, d: dict) -> ScenarioComponents:
        """From :meth:`planner.variance.VarianceComponents.to_dict` (its other keys ignored)."""
        return cls(d["method"], d["var_s"], d["var_t"], d["var_e"], d["grand_mean"], tuple(d["truncated"]),
                   d["ms_s"], d["ms_t"], d["ms_e"], d["df_s"], d["df_t"], d["df_e"])

    def to_dict(self) -> dict:
        head = {"method": self.method, "var_s": self.var_s, "var_t": self.var_t, "var_e": self.var_e}
        ms = {"ms_s": self.ms_s, "ms_t": self.ms_t, "ms_e": self.ms_e,
              "df_s": self.df_s, "df_t": self.df_t, "df_e": self.df_e}
        tail = {"grand_mean": self.grand_mean, "truncated": list(self.truncated)}
        return {**head, **tail, **ms} if self.weighted else {**head, **ms, **tail}


@dataclass(frozen=True)
class ScenarioCurve:
    """A scenario's curve: the prediction against topic count.

    Attributes
    ----------
    method : str
        The prediction's method.
    variance : str or None
        Its planning variance.
    rows : list of dict
        One row per studied topic count (the method's statistics; their keys depend on it).
    """

    method: str
    variance: str | None
    rows: list[dict]

    def to_dict(self) -> dict:
        return {"method": self.method, "variance": self.variance, "rows": self.rows}


@dataclass(frozen=True, repr=False)
class ScenarioResult(ResultMixin):
    """Everything one scenario computed.

    Attributes
    ----------
    id, name : str
        The scenario's id (``s01``) and name.
    settings : dict
        The scenario's resolved settings (collection, measure, method, ...).
    data : ScenarioData
        The scores it ran on.
    inputs : list of dict
        Input files (or data sets) and their SHA-256.
    filtered : list of dict
        Topics the filter dropped, with the reason.
    components : ScenarioComponents
        The variance components (var_s, var_t, var_e, mean squares, ...).
    erho2_at_T, phi_at_T : float or None
        The coefficients at the collection's own topic count.
    strata : dict or None
        Per-stratum weights and components.
    curve : ScenarioCurve
        The prediction's method, variance and rows (one per studied topic count).
    targets : tuple of ScenarioTarget
        Each target and the topics it needs.
    at_n : list of dict
        The curve's statistics at the answer's count and the collection's own.
    variants : dict or None
        The query-variant D-study and trade-off.
    honest : HonestStatement
        The honest statement (a stack's first stratum).
    pool : dict or None
        The pool depth study.
    warnings : list of str
        Warnings raised while computing it.
    extra_curves, allocation : list of dict or None
        A stack's other curves (optimal allocation, each stratum alone) and allocations.
    honest_strata : tuple of HonestStatement or None
        A stack's honest statement per stratum.
    topics_key : str or None
        A key of the topics (scenarios sharing it drew the same topic resamples; not written).
    systems_key : str or None
        A key of the systems (scenarios sharing it and ``topics_key`` score the same runs on the
        same topics, whatever file each came from; not written).
    """

    id: str
    name: str
    settings: dict
    data: ScenarioData
    inputs: list
    filtered: list
    components: ScenarioComponents
    erho2_at_T: float | None
    phi_at_T: float | None
    strata: dict | None
    curve: ScenarioCurve
    targets: tuple[ScenarioTarget, ...]
    at_n: list
    variants: dict | None
    honest: HonestStatement
    pool: dict | None
    warnings: list
    extra_curves: list | None = None
    allocation: list | None = None
    honest_strata: tuple[HonestStatement, ...] | None = None
    topics_key: str | None = field(default=None, repr=False, compare=False)
    systems_key: str | None = field(default=None, repr=False, compare=False)

    _repr_fields = ("id", "name", "measure", "n_topics")

    @property
    def measure(self) -> str:
        """The measure the scenario's scores are of."""
        return self.data.measure

    @property
    def n_topics(self) -> int | None:
        """The topic count the scenario's answer speaks about (:meth:`answer_n`)."""
        return self.answer_n()

    def to_frame(self):  # -> pandas.DataFrame
        """One row a target: target, value, n_topics, lower, upper, how (and what else it records)."""
        import pandas as pd

        return pd.DataFrame([t.to_dict() for t in self.targets])

    @property
    def stacked(self) -> bool:
        """True when the collection is a stack of strata."""
        return self.honest_strata is not None

    def solved(self) -> list[ScenarioTarget]:
        """The targets with a count."""
        return [t for t in self.targets if t.n_topics is not None]

    def need(self) -> int | None:
        """Topics the scenario needs: the largest over its targets (``None`` if one is not reached)."""
        ns = [t.n_topics for t in self.targets]
        if not ns or any(n is None for n in ns):
            return None
        return int(max(n for n in ns if n is not None))

    def binding(self) -> ScenarioTarget | None:
        """The target with the largest count (the binding one), if any is reached."""
        ts = self.solved()
        return max(ts, key=lambda t: t.n_topics or 0) if ts else None

    def answer_n(self) -> int | None:
        """The topic count the answer speaks about (:func:`answer_count`)."""
        return answer_count(self.targets, self.pool)

    def at(self, n: int) -> dict:
        """The curve row computed at exactly ``n`` topics (``{}`` when not computed there)."""
        return {int(r["n_topics"]): r for r in self.at_n}.get(int(n), {})

    def to_dict(self) -> dict:
        out: dict[str, Any] = {
            "id": self.id, "name": self.name, "settings": self.settings, "data": self.data.to_dict(),
            "inputs": self.inputs, "filtered": self.filtered, "components": self.components.to_dict(),
            "erho2_at_T": self.erho2_at_T, "phi_at_T": self.phi_at_T, "strata": self.strata,
            "curve": self.curve.to_dict()}
        if self.stacked:
            out.update(extra_curves=self.extra_curves, allocation=self.allocation)
        out.update(targets=[t.to_dict() for t in self.targets], at_n=self.at_n, variants=self.variants,
                   honest=self.honest.to_dict())
        if self.honest_strata is not None:
            out["honest_strata"] = [h.to_dict() for h in self.honest_strata]
        out.update(pool=self.pool, warnings=self.warnings)
        return out


class Verdict(enum.Enum):
    """Whether two measures' counts differ beyond the resampling noise."""

    #: the one needing more needs more in at least the interval's share of resamples
    SEPARATED = "separated"
    #: the resamples put the other one higher beyond the noise
    REVERSED = "reversed"
    #: within the noise, and the point estimate's order is the resamples' majority
    NOT_SEPARATED = "not separated"
    #: within the noise, and the point estimate's order is not the resamples' majority
    UNSTABLE = "not separated (order not stable)"

    @property
    def apart(self) -> bool:
        """True when the difference is larger than the resampling noise."""
        return self in (Verdict.SEPARATED, Verdict.REVERSED)


@dataclass(frozen=True)
class PairedComparison:
    """Two scenarios that differ only in the measure, compared on one target resample by resample.

    Attributes
    ----------
    collection : str
        The collection's label.
    target : str
        The target.
    value : float
        Its value.
    fewer, more : str
        The scenarios needing fewer and more topics (the earlier on a tie).
    measure_fewer, measure_more : str
        Their measures.
    n_fewer, n_more : int or None
        Their counts.
    extra : int or None
        ``n_more - n_fewer`` (``None`` when ``more`` is not reached).
    extra_median : float or None
        The median difference over the topic resamples (``None``: unbounded).
    extra_interval : Interval
        Its 95% percentile interval over the resamples (``None`` ends: unbounded;
        ``n_resamples``: the topic resamples).
    share_more, share_equal, share_fewer : float
        Shares of resamples where ``more`` needs more, the same, fewer.
    verdict : Verdict
        Whether the difference is beyond the resampling noise.
    """

    collection: str
    target: str
    value: float
    fewer: str
    more: str
    measure_fewer: str
    measure_more: str
    n_fewer: int | None
    n_more: int | None
    extra: int | None
    extra_median: float | None
    extra_interval: Interval
    share_more: float
    share_equal: float
    share_fewer: float
    verdict: Verdict

    def to_dict(self) -> dict:
        return {"collection": self.collection, "target": self.target, "value": self.value,
                "fewer": self.fewer, "more": self.more, "measure_fewer": self.measure_fewer,
                "measure_more": self.measure_more, "n_fewer": self.n_fewer, "n_more": self.n_more,
                "extra": self.extra, "extra_median": self.extra_median, "extra_lower": self.extra_interval.low,
                "extra_upper": self.extra_interval.high, "share_more": self.share_more,
                "share_equal": self.share_equal, "share_fewer": self.share_fewer,
                "resamples": self.extra_interval.n_resamples, "verdict": self.verdict.value}


@dataclass(frozen=True)
class Answer:
    """The study's answer, for its first scenario.

    Attributes
    ----------
    scenario : str
        The scenario's id.
    n_topics : int or None
        Topics the targets need, the point estimate (``None`` when a target is not reached).
    depth : int or None
        The pool depth to judge to (with a pool study).
    headline : str
        The answer in at most :data:`HEADLINE_WORDS` words: the count to plan with, its interval
        and the binding target.
    details : str
        The rest of the answer in words (the grid's other scenarios, pool, variants, duplicates).
    buys : tuple of str
        What that many topics buy, one statement each.
    plan_n : int or None
        The count to plan with (:func:`plan_count`); ``None`` when the interval on n has no
        finite upper end or there is none.
    """

    scenario: str
    n_topics: int | None
    depth: int | None
    headline: str
    details: str
    buys: tuple[str, ...]
    plan_n: int | None = None

    @property
    def text(self) -> str:
        """The whole answer: the headline, then the details."""
        return (self.headline + " " + self.details).strip()

    def to_dict(self) -> dict:
        return {"scenario": self.scenario, "n_topics": self.n_topics, "plan_n": self.plan_n, "depth": self.depth,
                "headline": self.headline, "text": self.text, "buys": list(self.buys)}


#: the most words an answer's headline has (tests/test_report_answer.py counts them)
HEADLINE_WORDS = 40


def plan_target(targets) -> ScenarioTarget | None:
    """The target that sets the count to plan with: the reached target whose count to plan with
    (its interval's upper end, :attr:`planner.results.Interval.plan_n`, else its count) is
    largest, the larger count on a tie; ``None`` when no target is reached."""
    reached = [t for t in targets if t.n_topics is not None]
    return plan_binding(reached) if reached else None


def plan_count(targets, pool: dict | None = None) -> int | None:
    """The count to plan with: the upper end of the 95% interval on n of :func:`plan_target`
    (with a pool study, at least the count to plan with at its chosen depth). ``None`` when a
    target is not reached, or the binding interval has no finite upper end or none at all (the
    answer then says why).

    Examples
    --------
    >>> from planner.results import Interval, IntervalMethod
    >>> t = ScenarioTarget("swap_rate", 0.05, 109, Interval(61, 157, 0.95, IntervalMethod.TOPIC_RESAMPLING, 200),
    ...                    "", SolveKind.CURVE)
    >>> plan_count([t])
    157
    """
    if any(t.n_topics is None for t in targets):
        return None
    t = plan_target(targets)
    if t is None or t.interval.plan_n is None:
        return None
    n = int(math.ceil(t.interval.plan_n))
    if pool and pool.get("choice") and pool["choice"].get("n_topics_plan") is not None:
        n = max(n, int(pool["choice"]["n_topics_plan"]))
    return n


def answer_count(targets, pool: dict | None) -> int | None:
    """The topic count the answer speaks about: the pool study's at its chosen depth, else the
    largest over the targets (all reached), else the largest over the reached ones."""
    if pool and pool.get("choice") and pool["choice"].get("n_topics_needed") is not None:
        return int(pool["choice"]["n_topics_needed"])
    reached = [t.n_topics for t in targets if t.n_topics is not None]
    return int(max(reached)) if reached else None


@dataclass(frozen=True, repr=False)
class StudyResult(ResultMixin):
    """What a study produced.

    Attributes
    ----------
    name : str
        The study name.
    config : dict
        The resolved config (every default filled in).
    results : dict
        Every number, JSON-able and deterministic (written as ``results.json``).
    tables : dict
        Name -> pandas DataFrame (written as ``tables/<name>.csv``).
    provenance : dict
        Versions, seed, input hashes, command, time (``provenance.json``).
    out : str or None
        The report folder, or ``None`` when no report was written.
    elapsed : float
        Wall-clock seconds of the whole study.
    scenario_results : tuple of ScenarioResult
        Each scenario's typed result (``results["scenarios"]`` holds their dicts).
    answer_result : Answer or None
        The typed answer (``results["answer"]`` holds its dict).
    """

    _repr_fields = ('name', 'n_topics', 'n_scenarios', 'elapsed', 'out')

    name: str
    config: dict
    results: dict
    tables: dict = field(repr=False)
    provenance: dict = field(repr=False)
    out: str | None = None
    elapsed: float = 0.0
    scenario_results: tuple[ScenarioResult, ...] = field(default=(), repr=False)
    answer_result: Answer | None = field(default=None, repr=False)

    @property
    def answer(self) -> dict:
        """The answer as written to ``results.json``."""
        return self.results.get("answer", {})

    def to_dict(self) -> dict:
        """The results (``results.json``)."""
        return self.results

    @property
    def n_topics(self) -> int | None:
        """The count the answer speaks about (``None`` when a target is not reached)."""
        return self.answer_result.n_topics if self.answer_result is not None else self.answer.get("n_topics")

    @property
    def n_scenarios(self) -> int:
        return len(self.results.get("scenarios", ()))

    def _html_note(self) -> str | None:
        """The answer in words and what its count buys (Markdown emphasis dropped)."""
        a = self.answer
        text = " ".join([a.get("text") or "", *a.get("buys", ())]).strip()
        return re.sub(r"\*\*(.+?)\*\*", r"\1", text) or None

    def to_frame(self):
        """The required-topics table (scenario, target, value, n_topics, how)."""
        return self.tables["targets"]
