"""Solving a scenario's targets: the topics each needs, how that was computed, and its interval on n."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .. import methods
from ..errors import DegenerateDataWarning, IdenticalPairsWarning, PlannerError
from ..plan import fit_variant_model, topic_set_size, topics_for_variants
from ..plan.targets import fit_pairs, target_request
from ..plan.targets import solve_target as solve_for_n
from ..results import IntervalMethod
from .inputs import matrix_key
from .results import NO_INTERVAL as _NONE
from .results import ScenarioTarget, SolveKind, WithoutDuplicates

__all__ = ["INTERVAL_RESAMPLES", "CurveSolution", "from_curve", "replay", "solve_exact", "solve_target",
           "variant_targets"]

#: topic resamples behind the interval on n of the analytic swap/reversal/Kendall-tau sizes
INTERVAL_RESAMPLES = 200

#: the method an analytic-only computation uses (the pool study of a resampling method)
ANALYTIC = methods.method_names(lambda m: m.engine is methods.Engine.ANALYTIC)[0]


def chooses_variance(method: str) -> bool:
    """True when ``method`` takes a variance selector (the others fix their variance)."""
    return len(methods.method(method).variances) > 1


def _finite_points(rows: list[dict], col: str) -> list[tuple[int, float]]:
    return [(int(r["n_topics"]), r[col]) for r in rows if r.get(col) is not None and np.isfinite(r[col])]


def from_curve(rows: list[dict], target: str, value: float) -> tuple[float | None, str]:
    """Smallest n meeting ``target`` along the curve (linear interpolation between the
    simulated topic counts, rounded up); ``None`` when not reached. Only the fallback of
    :func:`solve_exact` when the method cannot be evaluated inside the bracket."""
    tgt = methods.target(target)
    col = tgt.statistic
    pts = _finite_points(rows, col)
    prev = None
    for n, v in pts:
        if tgt.met(v, value):
            if prev is None:
                return float(n), f"curve ({col}; met at the smallest n studied)"
            n0, v0 = prev
            if v == v0:
                return float(n), f"curve ({col})"
            frac = (value - v0) / (v - v0)
            return float(min(n, max(n0 + 1, int(np.ceil(n0 + frac * (n - n0) - 1e-9))))), \
                f"curve ({col}, interpolated)"
        prev = (n, v)
    return None, f"curve ({col}; not reached up to n = {pts[-1][0] if pts else '?'})"


def replay(rng: np.random.Generator) -> Callable[[], np.random.Generator]:
    """A factory of generators that start where ``rng`` is now: the same seed sequence
    with the same number of children spawned so far. :func:`planner.simulate.predict`
    derives one random stream per topic count from its generator's next child, so a
    count evaluated on its own with a replayed generator gives exactly the numbers it
    has on the scenario's curve (and the same for any ``--jobs``)."""
    ss = rng.bit_generator.seed_seq
    kind = type(rng.bit_generator)
    state = (ss.entropy, tuple(ss.spawn_key), ss.pool_size, ss.n_children_spawned)  # type: ignore[attr-defined]

    def make() -> np.random.Generator:
        return np.random.Generator(kind(np.random.SeedSequence(
            state[0], spawn_key=state[1], pool_size=state[2], n_children_spawned=state[3])))

    return make


@dataclass(frozen=True)
class CurveSolution:
    """The smallest n meeting a target with the method evaluated at n (:func:`solve_exact`).

    Attributes
    ----------
    n_topics : float or None
        The count (``None``: not reached along the studied counts).
    how : str
        How it was found, in words.
    bracket : tuple of int or None
        The studied counts it lies between.
    interpolated : bool
        True when the method could not be evaluated inside the bracket and the count is
        interpolated between its ends.
    """

    n_topics: float | None
    how: str
    bracket: tuple[int, int] | None
    interpolated: bool


def solve_exact(rows: list[dict], target: str, value: float, at: Callable[[int], dict | None]) -> CurveSolution:
    """Smallest n meeting ``target`` with the scenario's method evaluated AT n.

    The studied counts give the bracket (the last count that fails, the first that meets;
    below the smallest count the bracket starts at 1); bisection then evaluates the method
    at each candidate n (``at(n)`` -> a curve row or ``None``), so the n returned meets the
    target and n - 1 does not (for the resampling methods: with their random stream for
    that n, as on the curve, whose noise can make the curve locally non-monotone). When
    the method cannot be evaluated inside the bracket the count is interpolated between
    the bracket's ends, and the result says so.
    """
    tgt = methods.target(target)
    col = tgt.statistic
    pts = _finite_points(rows, col)
    hit = next((i for i, (_, v) in enumerate(pts) if tgt.met(v, value)), None)
    if hit is None:
        return CurveSolution(None, f"curve ({col}; not reached up to n = {pts[-1][0] if pts else '?'})",
                             None, False)
    n_hi = pts[hit][0]
    n_lo = pts[hit - 1][0] if hit > 0 else 1
    lo0, hi0 = n_lo, n_hi
    while n_hi - n_lo > 1:
        mid = (n_lo + n_hi) // 2
        r = at(mid)
        v = None if r is None else r.get(col)
        if v is None or not np.isfinite(v):
            n, _ = from_curve(rows, target, value)
            return CurveSolution(n, f"{col} interpolated linearly between the studied counts {lo0} and {hi0} "
                                    f"(the method cannot be evaluated at n = {mid}); the count is not exact",
                                 (lo0, hi0), True)
        if tgt.met(v, value):
            n_hi = mid
        else:
            n_lo = mid
    where = (f"between the studied counts {lo0} and {hi0}" if hit > 0
             else f"below the smallest studied count {hi0}")
    return CurveSolution(float(n_hi), f"smallest n whose {col} meets the target, the method evaluated at each "
                                      f"candidate n by bisection {where}", (lo0, hi0), False)


_SIZE_CACHE: dict = {}


def _size(m, **kw):
    """:func:`planner.plan.topic_set_size` on matrix ``m``, memoised per process (scenarios
    differing only in the method share it)."""
    key = (matrix_key(m), tuple(sorted(kw.items())))
    if key not in _SIZE_CACHE:
        _SIZE_CACHE[key] = topic_set_size(scores=m, **kw)
    return _SIZE_CACHE[key]


@dataclass(frozen=True)
class TargetContext:
    """What solving a scenario's targets needs.

    Attributes
    ----------
    sc : dict
        The scenario's settings.
    scores : ScoreMatrix
        Its (filtered) scores.
    components : VarianceComponents
        Their fit.
    rows : list of dict
        The curve's rows.
    at : callable
        The method evaluated at any single n (a curve row or ``None``).
    stream : numpy.random.Generator
        The topic resamples' stream (copied for each target: common random numbers).
    seed : int or None
        The study seed (with it, each target keeps its per-resample counts).
    fitted : dict
        The scores' pair model per variance selector, fitted once for all targets.
    """

    sc: dict
    scores: Any
    components: Any
    rows: list
    at: Callable[[int], dict | None]
    stream: np.random.Generator
    seed: int | None
    fitted: dict = field(default_factory=dict, repr=False, compare=False)


def _dstudy(ctx: TargetContext, t: str, v: float) -> ScenarioTarget:
    tn = ctx.components.topics_for(**{t: v}, alpha=ctx.sc["alpha"])
    return ScenarioTarget(t, v, tn.n_topics, tn.interval,
                          f"D-study ({t}), {100 * (1 - ctx.sc['alpha']):g}% interval on n", SolveKind.DSTUDY)


def _design(ctx: TargetContext, t: str, v: float) -> ScenarioTarget:
    """The classical design with the planning variance, and its interval on n (the jackknife
    interval of that variance: :func:`planner.plan.topic_set_size`)."""
    sc = ctx.sc
    power = methods.target(t).needs_min_diff
    kw: dict[str, Any] = (dict(design="paired-t", min_diff=sc["min_diff"], power=v) if power
                          else dict(design="ci", width=v))
    sr = _size(ctx.scores, variance=sc["variance"], alpha=sc["alpha"], n_resamples=INTERVAL_RESAMPLES, **kw)
    what = (f"paired t-test at min_diff {sc['min_diff']:g}" if power else
            f"expected {100 * (1 - sc['alpha']):g}% interval width")
    shown = sr.interval.how is not IntervalMethod.NONE
    how = f"{what}, variance {sr.variance}" + (f"; 95% interval on n: {sr.interval.describe()}" if shown else "")
    return ScenarioTarget(t, v, sr.n_topics, sr.interval, how, SolveKind.DESIGN,
                          sigma2=float(sr.sigma2) if power else None, variance=sr.variance if power else None,
                          curve_n_topics=_count(solve_exact(ctx.rows, t, v, ctx.at).n_topics))


def _size_for(ctx: TargetContext, scores, t: str, v: float, rng, resamples: int):
    """:func:`planner.plan.size_for_target` with its defaults; the scenario's own scores are
    coerced and their pair model fitted once for all its targets."""
    sc = ctx.sc
    variance = sc["variance"] if chooses_variance(sc["method"]) else "pair"
    req = target_request(target=t, value=v, method=sc["method"], variance=variance, min_diff=sc["min_diff"],
                         alpha=sc["alpha"], quantile=50.0, confidence_level=0.95, n_resamples=resamples,
                         n_max=100_000, method_resamples=1000)
    if scores is not ctx.scores:
        return solve_for_n(fit_pairs(scores, variance), req, rng)
    if variance not in ctx.fitted:
        ctx.fitted[variance] = fit_pairs(scores, variance)
    return solve_for_n(ctx.fitted[variance], req, rng)


def _without_duplicates(ctx: TargetContext, t: str, v: float, identical: int) -> WithoutDuplicates | None:
    """Identical runs are permanent ties (swap 0.5 at every n): what the target needs with one run
    of each identical group kept, on the same topic resamples as the count with the duplicates
    (the stream depends on the seed and the topic list, not on the systems)."""
    m = ctx.scores
    drop = {name for g in m.identical_systems() for name in g[1:]}
    keep = [x for x in m.systems if x not in drop]
    if len(keep) < 2:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr2 = _size_for(ctx, m.take(systems=keep), t, v, copy.deepcopy(ctx.stream), INTERVAL_RESAMPLES)
    return WithoutDuplicates(int(identical), tuple(sorted(drop)), tr2.n_topics, tr2.interval)


def _closed_form(ctx: TargetContext, t: str, v: float, stream) -> ScenarioTarget:
    """The exact smallest n, and a 95% interval on n from INTERVAL_RESAMPLES topic resamples, each
    re-solved with the same method."""
    with warnings.catch_warnings():
        # the curve has already said that identical pairs count as ties
        warnings.simplefilter("ignore", IdenticalPairsWarning)
        tr = _size_for(ctx, ctx.scores, t, v, stream, INTERVAL_RESAMPLES)
    how = f"{ctx.sc['method']}: smallest n meeting the target (plan.size_for_target); 95% interval on n: " \
          f"{tr.interval.describe()}" if tr.n_topics is not None else f"{ctx.sc['method']}: {tr.why_unreached()}"
    low = methods.runs_low_far_out(methods.method(ctx.sc["method"]), methods.target(t))
    base = ScenarioTarget(t, v, tr.n_topics, tr.interval, how, SolveKind.CLOSED_FORM, runs_low=low)
    try:
        dup = _without_duplicates(ctx, t, v, tr.identical_pairs) if tr.identical_pairs else None
    except PlannerError as exc:
        # the count stands; what failed is said where the count's method would be
        return replace(base, how=f"not computed: {exc}", kind=SolveKind.NOT_COMPUTED,
                       interval=replace(base.interval, how=IntervalMethod.NONE))
    resampled = tr.resampled_n if ctx.seed is not None else None
    return replace(base, duplicates=dup, resampled_n=resampled,
                   curve_n_topics=_count(solve_exact(ctx.rows, t, v, ctx.at).n_topics))


def _on_curve(ctx: TargetContext, t: str, v: float) -> ScenarioTarget:
    sol = solve_exact(ctx.rows, t, v, ctx.at)
    how = f"{ctx.sc['method']}: {sol.how}" + (
        "; no interval on n (it would re-run the simulation on every topic resample)"
        if sol.n_topics is not None else "")
    return ScenarioTarget(t, v, _count(sol.n_topics), _NONE, how, SolveKind.CURVE,
                          bracket=sol.bracket if sol.interpolated else None)


def _count(v) -> int | None:
    """Topic counts are integers everywhere (the D-study's came as floats: 32.0); an infinite one is None."""
    return None if v is None or not np.isfinite(v) else int(v)


def solve_target(ctx: TargetContext, tg: Mapping, stream) -> ScenarioTarget:
    """One target of the scenario: its count, interval on n and how they were computed."""
    t, v = tg["target"], float(tg["value"])
    tgt = methods.target(t)
    try:
        if tgt.reliability:
            res = _dstudy(ctx, t, v)
        elif not tgt.pair_rate:
            res = _design(ctx, t, v)
        elif methods.method(ctx.sc["method"]).closed_form:
            res = _closed_form(ctx, t, v, stream)
        else:
            res = _on_curve(ctx, t, v)
    except PlannerError as exc:
        res = ScenarioTarget(t, v, None, _NONE, f"not computed: {exc}", SolveKind.NOT_COMPUTED)
    top = max(ctx.sc["topics"])
    how = res.how
    if res.n_topics is not None and np.isfinite(res.n_topics) and res.n_topics > top:
        # closed forms solve at any n; the curves (and figures) stop at the largest count
        how += f"; beyond the largest studied count ({top}): from the formula, not on the curves"
    ivl = replace(res.interval, low=_count(res.interval.low), high=_count(res.interval.high))
    return replace(res, how=how, n_topics=_count(res.n_topics), interval=ivl,
                   curve_n_topics=_count(res.curve_n_topics))


# ------------------------------------------------------------------------ query variants
def _variants_unsupported(sc: Mapping) -> str | None:
    m = methods.method(sc["method"])
    if not m.variants:
        return f"method {sc['method']} has no model of query variants"
    if chooses_variance(sc["method"]) and sc["variance"] != "pair":
        return f"the variant model uses each pair's own variance (variance: pair), not {sc['variance']}"
    return None


def _fit_variant_model(m3, sc: Mapping):
    """The scenario's variant model, fitted once for all its targets (``None`` when it cannot be
    fitted: each target then gives its own reason)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            return fit_variant_model(m3, method=sc["method"])
    except PlannerError:
        return None


def _dedup_model(m3, sc: Mapping) -> tuple[set, Any]:
    """Runs scoring the same on every topic are permanent ties (swap 0.5 at any n): the runs
    dropped to count with one run of each such group, and the variant model without them."""
    drop = {x for g in m3.collapse_variants().identical_systems() for x in g[1:]}
    keep = [x for x in m3.systems if x not in drop]
    if not drop or len(keep) < 2:
        return drop, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        kept = m3.take(systems=keep)
    return drop, _fit_variant_model(kept, sc)


def _dedup_variants(dedup: tuple[set, Any], sc: Mapping, t: str, v: float, nv) -> tuple[set, dict]:
    """The counts with one run of each group of permanent ties, as the scenario's own target
    gives them (``dedup`` from :func:`_dedup_model`)."""
    drop, model = dedup
    if model is None:
        return drop, {}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            td = topics_for_variants(model.scores, target=t, value=v, n_variants=nv, method=sc["method"],
                                     min_diff=sc["min_diff"], alpha=sc["alpha"], model=model)
    except PlannerError:
        return drop, {}
    return drop, {r["n_variants"]: r["n_topics"] for r in td.rows}


def _variant_rows(dedup: tuple[set, Any], sc: Mapping, t: str, v: float, nv, tr) -> list[dict]:
    ct, cv = float(sc["costs"].get("topic") or 0.0), float(sc["costs"].get("variant") or 0.0)
    priced = ct > 0 or cv > 0
    drop, dedup_n = _dedup_variants(dedup, sc, t, v, nv)
    out = []
    for row in tr.rows:
        out.append({"target": t, "value": v, "n_variants": row["n_variants"],
                    "n_topics": row["n_topics"], "lower": row["n_lower"], "upper": row["n_upper"],
                    **({"n_without_duplicates": dedup_n.get(row["n_variants"])} if drop else {}),
                    "queries": row["queries"],
                    **({"cost": None if row["n_topics"] is None else
                        row["n_topics"] * (ct + row["n_variants"] * cv)} if priced else {}),
                    "variance_ratio": row["variance_ratio"], "variant_share": tr.variant_share,
                    "method": sc["method"]})
    return out


def variant_targets(m3, sc: Mapping, nv, stream=None) -> list[dict]:
    """Topics each ranking target needs with ``v`` query variants per topic, for every ``v``
    of the study (:func:`planner.plan.topics_for_variants`); a row per (target, v). With
    ``stream`` (the scenario's target stream), each row gets a 95% interval on n from
    :data:`INTERVAL_RESAMPLES` topic resamples, the same ones as the scenario's targets: at the
    collection's own number of variants it is the scenario's interval (within about 1% for
    ``deconvolved``, whose scenario interval is solved on its prior's histogram). Power and width come
    from the classical designs, which have no variant model: only pair rates are traded."""
    out: list[dict] = []
    fitted: tuple[Any, tuple[set, Any]] | None = None     # the scenario's models, fitted once
    for tg in sc["targets"]:
        t, v = tg["target"], float(tg["value"])
        if not methods.target(t).pair_rate:
            continue
        why = _variants_unsupported(sc)
        if why is None:
            if fitted is None:
                fitted = (_fit_variant_model(m3, sc), _dedup_model(m3, sc))
            model, dedup = fitted
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DegenerateDataWarning)   # the curve says it already
                    tr = topics_for_variants(m3, target=t, value=v, n_variants=nv, method=sc["method"],
                                             min_diff=sc["min_diff"], alpha=sc["alpha"],
                                             n_resamples=INTERVAL_RESAMPLES if stream is not None else 0,
                                             rng=copy.deepcopy(stream), model=model)
            except PlannerError as exc:
                why = str(exc)
            else:
                out.extend(_variant_rows(dedup, sc, t, v, nv, tr))
                continue
        out.append({"target": t, "value": v, "n_variants": None, "n_topics": None, "lower": None,
                    "upper": None, "queries": None, "variance_ratio": None, "variant_share": None,
                    "method": sc["method"], "note": f"not computed: {why}"})
    return out
