"""A whole study's work, estimated before its first scenario runs, and its limit (issue 23).

Each scenario's own calls are bounded (:mod:`planner.simulate.work`), and the grid by its
scenario count (:data:`planner.study.config.MAX_SCENARIOS`); but 200 scenarios each just under
the limit of a call would run for hours. :func:`study_work` adds up, per scenario, what it
computes, each part with the estimator of the code that computes it (the engines'
:meth:`~planner.simulate.engine.PairEngine.work`, :func:`planner.plan.search.search_points`):

- the curve: the method's engine at the scenario's topic counts and ``resamples``;
- each pair-rate target's count: the bisection of :func:`planner.study.targets.solve_exact`
  between the studied counts (one call of the method at one count per step, at the top of the
  widest bracket), and for a closed-form method the interval on n, whose
  :data:`~planner.study.targets.INTERVAL_RESAMPLES` topic resamples are each re-solved
  (the method's closed form at every point of a search up to ``n_max``, as
  :func:`planner.plan.targets.search_work` counts a search), twice with identical runs;
- the classical designs' interval on n: the same resamples, each re-estimating the variances;
- the statistics at the answer's count and at the collection's own (two calls at one count);
- the honest statement's paired bootstrap (``resamples`` draws of every system's mean);
- query variants: each pair-rate target re-solved on every resample for every number of
  variants;
- the pool study: the runs re-scored at each depth and with the full judgments, the targets
  solved at each (:func:`planner.plan.pool.depth_study_estimate`, from the documents each run
  ranks on each topic).

A study over :func:`planner.simulate.work.max_work`
is refused (:func:`check_study_work`) naming the key that would bring it under; the environment
variable ``PLANNER_MAX_WORK`` raises the limit for a study meant to be long.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from .. import methods
from ..errors import ConfigError, ParameterError, PlannerError
from ..plan.pool import depth_study_estimate, ranked_lines
from ..simulate.predict import ENGINES
from ..simulate.work import UNIT_NS, Knob, Shape, Work, check_limits
from .config import StudyConfig
from .inputs import held_inputs, load_runs_qrels, load_scores
from .targets import INTERVAL_RESAMPLES

__all__ = ["LONG_SECONDS", "DataShape", "StudyWork", "check_study_work", "data_shapes", "scenario_work", "study_work"]

#: a study estimated to take longer than this (seconds of CPU) says so on standard error
#: before its first scenario (unless ``quiet``)
LONG_SECONDS = 30.0

#: units per system pair to re-solve one topic resample of a pair-rate target's interval on n
#: (:func:`planner.plan.size_for_target`: the resample's pair moments, its model and its search;
#: 80-310 measured for analytic, predictive and deconvolved on DL 2019/2020, docs/research/known-limits.md)
RESOLVE_UNITS = 200.0
#: the same for a classical design's interval on n (the variances of each resample; 38-50 measured)
DESIGN_RESOLVE_UNITS = 50.0
#: the same for each number of query variants of :func:`planner.plan.topics_for_variants`
#: (the variant model's predictive rates; about 1,500 measured on CLEF eHealth 2016)
VARIANT_RESOLVE_UNITS = 1500.0


@dataclass(frozen=True)
class DataShape:
    """What a scenario's work depends on in its data: ``systems``, ``topics`` (before the
    informative-topic filter: an upper bound), ``strata`` and query ``variants`` per topic; of
    runs, the documents each (run, topic) ranks (:func:`planner.plan.pool.ranked_lines`, as sorted
    pairs) and ``run_rows`` in all (the pool study's work)."""

    systems: int
    topics: int
    strata: int = 1
    variants: int = 1
    lines: tuple[tuple[int, int], ...] = ()
    run_rows: int = 0


@dataclass(frozen=True)
class StudyWork:
    """A study's estimated work: ``units`` in all (:data:`planner.simulate.work.UNIT_NS` each)
    and per scenario (``None``: its data could not be read, so it is not counted; the scenario
    reports why when it runs)."""

    units: float
    per_scenario: tuple[float | None, ...]

    @property
    def seconds(self) -> float:
        """The estimate in seconds of CPU on the reference machine."""
        return self.units * UNIT_NS * 1e-9

    @property
    def long(self) -> bool:
        """True when over :data:`LONG_SECONDS` (a study then says its estimate)."""
        return self.seconds > LONG_SECONDS

    def describe(self) -> str:
        """The estimate in words: ``about 3 min of CPU``."""
        s = self.seconds
        return f"about {s / 60:,.0f} min of CPU" if s >= 90 else f"about {s:,.0f} s of CPU"


def _call(method: methods.Method, d: DataShape, counts: Sequence[int], resamples: int,
          t_tests: bool = True) -> float:
    """One :func:`planner.simulate.predict` call's units (its engine's estimate)."""
    shape = Shape(d.systems, d.topics, tuple(counts), resamples if method.random else 0, d.strata,
                  t_tests, disjoint=method.disjoint)
    return ENGINES[method.engine].work(shape).units


def _pooled(d: DataShape) -> DataShape:
    """``d`` without strata (the topic resamples are re-solved on the pooled model)."""
    return replace(d, strata=1)


def _first(engine: methods.Engine) -> methods.Method:
    return methods.method(methods.method_names(lambda x: x.engine is engine)[0])


def _bisection(method: methods.Method, d: DataShape, counts: Sequence[int], resamples: int) -> float:
    """:func:`planner.study.targets.solve_exact`: a call at one count per step of a bisection in
    the widest bracket between studied counts (from 1), at its middle."""
    cs = sorted(set(counts))
    lo, hi = max(zip([1, *cs], cs), key=lambda p: p[1] - p[0])
    return math.ceil(math.log2(max(2, hi - lo))) * _call(method, d, [(lo + hi + 1) // 2], resamples)


def _targets(sc: Mapping, method: methods.Method, d: DataShape, counts: Sequence[int], resamples: int) -> float:
    """Every target's count (a bisection), interval on n and counts with query variants."""
    units, P = 0.0, d.systems * (d.systems - 1) // 2
    for tg in sc["targets"]:
        t = methods.target(tg["target"])
        if t.reliability:
            continue
        units += _bisection(method, d, counts, resamples)
        if not t.pair_rate:
            units += INTERVAL_RESAMPLES * P * DESIGN_RESOLVE_UNITS
        elif method.closed_form:
            units += INTERVAL_RESAMPLES * P * RESOLVE_UNITS
        if t.pair_rate and d.variants > 1 and method.variants:
            nv = len(sc["variants"] or range(d.variants))
            units += (INTERVAL_RESAMPLES + 1) * nv * P * VARIANT_RESOLVE_UNITS
    return units


def scenario_work(sc: Mapping, d: DataShape, resamples: int, counts: Sequence[int] | None = None) -> float:
    """The work units of one (unstacked) scenario ``sc`` on data of shape ``d`` with ``resamples``
    (at ``counts``, default the scenario's topic counts)."""
    method = methods.method(sc["method"])
    counts = list(counts or sc["topics"])
    curve = _call(method, d, counts, resamples)
    at_n = _call(method, d, [max(counts)], resamples)
    honest = _call(_first(methods.Engine.RESAMPLING), _pooled(d), [d.topics], resamples, t_tests=False)
    return curve + at_n + honest + _targets(sc, method, d, counts, resamples) + _pool(sc, d)


def _pool(sc: Mapping, d: DataShape) -> float:
    """The pool study (:func:`planner.study.pool.pool_study`, not of a stack): its runs re-scored at
    each depth."""
    if not sc.get("pool") or not d.lines or "stack" in sc["collection"]:
        return 0.0
    return depth_study_estimate(dict(d.lines), d.run_rows, d.systems, d.topics, sc["pool"]["depths"],
                                len(sc["targets"]) or 1).units


def _shape(coll: Mapping, measure, seen: dict, pools: bool) -> DataShape | None:
    """A collection's data shape, read once per collection (whatever the measure), its runs'
    ranked lines only when a scenario has a pool study (``pools``); None when it
    cannot be read (the scenario reports why, with its own key, when it runs). Within a study
    (:func:`planner.study.inputs.held_inputs`) its scenarios find it read, and the study says its
    reading notes."""
    key = json.dumps(coll, sort_keys=True, default=str)
    if key not in seen:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")      # the study says them, or the scenario
                m, _ = load_scores(coll, measure, "collection")
        except PlannerError:
            return None
        seen[key] = DataShape(m.n_systems, m.n_topics, len(m.stratum_labels()) or 1, m.n_variants,
                              *(_runs_shape(coll, m.topics) if pools else ((), 0)))
    return seen[key]


def _runs_shape(coll: Mapping, topics) -> tuple[tuple[tuple[int, int], ...], int]:
    """The documents each (run, topic) ranks and the runs' documents in all (none without runs)."""
    if "runs" not in coll:
        return (), 0
    runs, _ = load_runs_qrels(coll)          # read already (held_inputs)
    return tuple(sorted(ranked_lines(runs, topics).items())), sum(len(r.frame) for r in runs.values())


def data_shapes(cfg: StudyConfig) -> list[list[DataShape] | None]:
    """Each scenario's data shapes (one per stacked collection; with strata only when the scenario
    stratifies), or None when its data cannot be read."""
    seen: dict[str, DataShape] = {}
    out: list[list[DataShape] | None] = []
    pools = any(sc.get("pool") for sc in cfg.scenarios)
    with held_inputs():
        for sc in cfg.scenarios:
            ds = [_shape(c, sc["measure"], seen, pools) for c in sc["collection"].get("stack", [sc["collection"]])]
            out.append(None if any(d is None for d in ds) else
                       [d if sc["strata"] == "stratified" else _pooled(d) for d in ds if d is not None])
    return out


def study_work(cfg: StudyConfig, shapes: Sequence[Sequence[DataShape] | None] | None = None, *,
               resamples: int | None = None, counts: Sequence[int] | None = None) -> StudyWork:
    """The work of every scenario of ``cfg`` on its data ``shapes`` (default: :func:`data_shapes`),
    with ``resamples`` instead of the study's and each scenario's topic counts up to ``max(counts)``
    when given."""
    shapes = data_shapes(cfg) if shapes is None else shapes
    r = cfg.resamples if resamples is None else resamples
    per: list[float | None] = []
    for sc, ds in zip(cfg.scenarios, shapes):
        cs = sc["topics"] if counts is None else [c for c in sc["topics"] if c <= max(counts)] or [max(counts)]
        per.append(None if ds is None else sum(scenario_work(sc, d, r, cs) for d in ds))
    return StudyWork(sum(u for u in per if u is not None), tuple(per))


def check_study_work(cfg: StudyConfig) -> StudyWork:
    """Refuse, before its first scenario, a study whose :func:`study_work` is over the work limit
    (:func:`planner.simulate.work.max_work`): a ConfigError naming the key that would bring it
    under (the grid's ``scenarios``, ``resamples``, else ``topics``) with what fits, and the
    estimate. Returns the estimate."""
    shapes = data_shapes(cfg)
    work = study_work(cfg, shapes)
    n = len(cfg.scenarios)
    counts = sorted({c for sc in cfg.scenarios for c in sc["topics"]})

    def estimate(cs: Sequence[int], v: tuple[int, ...]) -> Work:
        kept, r = (v[0], v[1]) if n > 1 else (1, v[0])
        w = work if (r == cfg.resamples and list(cs) == counts) else study_work(cfg, shapes, resamples=r, counts=cs)
        return Work(w.units * kept / n, 0)

    knobs = ([Knob("scenarios", n, "{:,} scenarios", "at most {:,} scenarios (fewer values in the grid)")]
             if n > 1 else []) + [Knob("resamples", cfg.resamples, "resamples: {:,}", "resamples: {:,}")]
    try:
        check_limits(estimate, counts, knobs, what="the study",
                     also=f"PLANNER_MAX_WORK={work.units * 1.05:.1e} to run it as it is",
                     n_fix="topics up to {:,}")
    except ParameterError as e:
        raise ConfigError(e.message, key=e.parameter, file=cfg.source) from None
    return work
