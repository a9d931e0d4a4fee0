"""The smallest number of topics for which a statistic of the collection meets a target.

:func:`size_for_target` solves on the closed-form pair model (:mod:`planner.plan.pairs`) or on
the curve of any :func:`planner.simulate.predict` method, and gives an interval on n from topic
resamples (:mod:`planner.plan.resolve`). The targets, their directions and ranges are the
registry's (:data:`planner.methods.TARGETS`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import methods
from .._random import as_generator, draw_seed, seed_of
from ..errors import DegenerateDataWarning, IdenticalPairsWarning, InputError, ParameterError
from ..progress import Progress, bar
from ..results import Interval, IntervalMethod, ResultMixin
from ..scores import ScoreMatrix
from ..simulate import fit_model, predict
from ..simulate.predict import ENGINES, predict_until
from ..simulate.summary import PARTIAL_STATS
from ..simulate.work import Knob, Shape, Work, check_limits, fits, largest_fitting
from ..variance import VarianceComponents, check_alpha, fit
from .checks import (
    as_scores,
    check_interval_resamples,
    check_min_diff,
    check_prob,
    check_quantile,
    complete_values,
)
from .jackknife import variance_factors
from .pairs import PairModel, planning_variances, quantile_variance
from .resolve import (
    dstudy_interval,
    resample_models,
    resolve_analytic,
    resolve_predictive,
    unseen_mass_count,
)
from .search import allow_unseen, count_interval, resample_spread, search_points, smallest_n

__all__ = ["FittedPairs", "TargetRequest", "TargetResult", "check_target_value", "fit_pairs", "search_work",
           "size_for_target", "solve_target", "target_request"]

@dataclass(frozen=True, repr=False)
class TargetResult(ResultMixin):
    """Smallest topic count meeting a target, with an interval.

    Attributes
    ----------
    target : str
        A solvable target of :data:`planner.methods.TARGETS`.
    value : float
        The target value; ``direction`` says whether the statistic must be ``<=`` or ``>=`` it.
    direction : str
        ``"<="`` or ``">="``.
    n_topics : int or None
        Smallest n meeting it (``None`` when no n up to ``n_max`` does).
    achieved, at_n_minus_1 : float or None
        The statistic at ``n_topics`` and at ``n_topics - 1``.
    interval : Interval
        Interval on n from the uncertainty of the estimates: ``how`` is ``TOPIC_RESAMPLING``
        (``n_resamples`` topic resamples, each re-solved), ``ANALYTIC`` (the D-study's Feldt /
        Arteaga-Jeyaratnam-Franklin interval of Erho2 and Phi) or ``NONE`` (``note`` says why);
        an end ``None`` is unbounded.
    method : str
        How the statistic was computed (a :data:`planner.methods.METHODS` name).
    variance : str
        The variance selector used for the pair variances.
    min_diff, alpha : float
        Options the statistic used (power uses min_diff; widths use alpha).
    n_pairs, n_systems, n_topics_observed : int
        Size of the collection it was learnt from.
    identical_pairs : int
        Pairs of systems identical on every topic; they count as ties, as in
        :func:`planner.simulate.predict` (swap and reversal rate 0.5, power 1, width 0).
    seed : int or None
        The integer seed, when one was given; for the random methods the seed every n was
        simulated with (drawn from the Generator given, or fresh without one), so
        ``rng=seed`` repeats the answer.
    method_resamples : int
        The resamples of each simulated n for the random methods (what drives their n); 0 for
        the closed-form methods.
    at_limit : float or None
        The statistic at ``n_max`` when no count up to it meets the target (how far from the value
        it stays; a pilot-aware reversal rate levels off there: :func:`planner.methods.levels_off`),
        else None.
    resampled_n : numpy.ndarray or None
        The smallest n of each topic resample (``inf`` where none up to ``n_max``), in resample
        order, when the interval came from topic resampling; not in :meth:`to_dict`. Two results
        computed with the same seed on the same topics drew the same resamples, so
        :func:`paired_difference` can compare them resample by resample.

    Examples
    --------
    >>> from planner import datasets, plan
    >>> m = datasets.load("dl19-passage", measure="nDCG@10")
    >>> r = plan.size_for_target(m, target="swap_rate", value=0.05, method="analytic", n_resamples=50, rng=1)
    >>> r.interval   # doctest: +ELLIPSIS
    Interval(..., ..., level=0.95, topic resampling)
    >>> r.interval.how.value, r.to_dict()["interval"]["n_resamples"], r.to_frame().shape[0]
    ('topic resampling', 50, 1)
    """

    target: str
    value: float
    direction: str
    n_topics: int | None
    achieved: float | None
    at_n_minus_1: float | None
    interval: Interval
    method: str
    variance: str
    min_diff: float
    alpha: float
    n_pairs: int
    n_systems: int
    n_topics_observed: int
    identical_pairs: int
    seed: int | None
    method_resamples: int = 0
    at_limit: float | None = None
    resampled_n: np.ndarray | None = field(default=None, repr=False, compare=False, metadata={"raw": True})

    _repr_fields = ("target", "value", "n_topics", "interval")

    def why_unreached(self) -> str:
        """Why no count meets the target, in one clause ("" when one does): the statistic at the
        search limit, and, where the method's statistic levels off there, why
        (:func:`planner.methods.levels_off`)."""
        if self.n_topics is not None or self.at_limit is None:
            return ""
        why = f"{self.target} is {self.at_limit:.4g} at the search limit"
        if methods.levels_off(methods.method(self.method), methods.TARGETS[self.target]):
            why += f" ({methods.LEVELS_OFF})"
        return why


def check_target_value(target: str, value: object, min_diff: object = 0.05) -> float:
    """The target value as a float, or a ParameterError saying why it cannot be met or says nothing.

    The range and its explanations are the registry's (:meth:`planner.methods.Target.check_value`),
    so ``size --target``, ``budget --target``, :func:`size_for_target` and the study schema share
    one rule.

    Parameters
    ----------
    target : str
        A solvable target name.
    value : float
        The value to check.
    min_diff : float, optional
        The difference of a ``power`` target (must be positive).

    Returns
    -------
    float
        ``value`` as a float.

    Examples
    --------
    >>> check_target_value("swap_rate", "0.05")
    0.05
    >>> check_target_value("kendall_tau", 1)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    planner.errors.ParameterError: value: a kendall_tau target must be ..., got 1 (1 needs infinitely many topics)
    """
    t = methods.target(target, where=lambda t: t.solvable, need="solving for n")
    v = t.check_value(value)
    if t.needs_min_diff:
        check_min_diff(min_diff)
    return v


@dataclass(frozen=True)
class TargetRequest:
    """The checked arguments of one :func:`size_for_target` question."""

    target: methods.Target
    value: float
    method: methods.Method
    variance: str
    min_diff: float
    alpha: float
    quantile: float
    confidence_level: float
    n_resamples: int
    n_max: int
    method_resamples: int

    @property
    def options(self) -> dict[str, float]:
        """The keywords of :meth:`PairModel.stat`."""
        return {"min_diff": self.min_diff, "alpha": self.alpha, "quantile": self.quantile}

    def met(self, statistic: float) -> bool:
        """True when ``statistic`` meets the target value."""
        return self.target.met(statistic, self.value)


def target_request(*, target: str, value: object, method: str, variance: str, min_diff: float, alpha: float,
                   quantile: float, confidence_level: float, n_resamples: int, n_max: int,
                   method_resamples: int) -> TargetRequest:
    """Check the arguments of :func:`size_for_target` (every check before any work)."""
    v = check_target_value(target, value, min_diff)
    alpha = check_alpha(alpha)
    confidence_level = check_prob(confidence_level, "confidence_level")
    quantile = check_quantile(quantile)
    n_resamples = check_interval_resamples(n_resamples)
    m = methods.method(method)
    if m.engine is methods.Engine.PREDICTIVE and variance not in m.variances:
        raise ParameterError(f"method {method!r} uses each pair's own variance (variance='pair'); "
                             f"got {variance!r}", parameter="variance")
    return TargetRequest(methods.TARGETS[target], v, m, variance, float(min_diff), alpha, quantile,
                         confidence_level, n_resamples, n_max, int(method_resamples))


@dataclass(frozen=True)
class FittedPairs:
    """A collection coerced once and its pair model fitted once (what every target reads).

    ``components`` (the variance components, for the D-study interval of Erho2 and Phi) and
    ``prior`` (a predictive method's prior) are fitted on first use and kept.
    """

    scores: ScoreMatrix
    vals: np.ndarray
    model: PairModel
    variance: str
    fitted: dict = field(default_factory=dict, repr=False, compare=False)

    def components(self) -> VarianceComponents:
        """The variance components of the collection (fitted once)."""
        if "components" not in self.fitted:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DegenerateDataWarning)
                self.fitted["components"] = fit(self.scores)
        return self.fitted["components"]

    def prior(self, method: methods.Method) -> Any:
        """The prior ``method`` fits (``None`` for a method without one), fitted once per method."""
        key = ("prior", method.name)
        if key not in self.fitted:
            self.fitted[key] = fit_model(self.scores, method=method.name)
        return self.fitted[key]


def fit_pairs(scores: Any, variance: str) -> FittedPairs:
    """Coerce ``scores`` and fit the pair model with the ``variance`` selector."""
    sm = as_scores(scores)
    vals = complete_values(sm)
    return FittedPairs(sm, vals, PairModel(vals, variance), variance)


def _check_identical(data: FittedPairs, target: str) -> int:
    """The number of identical pairs; an error when every pair is, a warning when some are."""
    ident = data.model.identical
    identical = int(ident.sum())
    if identical and ident.all():
        raise InputError(f"every pair of systems is identical on every topic ({identical} pair(s)): no "
                         f"topic count changes the {target}", file=getattr(data.scores, "source", None))
    if identical:
        warnings.warn(f"{identical} pair(s) of systems identical on every topic: each counts as a tie in "
                      f"the {target} target (swap and reversal rate 0.5, power 1, interval width 0), as in "
                      "planner predict", IdenticalPairsWarning, stacklevel=4)
    return identical


class _CurveStat:
    """The target's statistic at n on the curve of ``req.method`` (memoised per n; a predictive
    method's prior fitted once)."""

    def __init__(self, data: FittedPairs, req: TargetRequest, seed: int, tick: Callable[..., None]):
        self.data, self.req, self.seed, self.tick = data, req, seed, tick
        self.cache: dict[int, float] = {}
        self.prior = data.prior(req.method)

    def __call__(self, n: int) -> float:
        if n not in self.cache:
            req = self.req
            curve = predict(self.data.scores, topics=[int(n)], method=req.method.name, min_diff=req.min_diff,
                            alpha=req.alpha, n_resamples=req.method_resamples, keep_pairs=False, rng=self.seed,
                            model=self.prior)
            self.cache[n] = float(curve.rows[0][req.target.statistic])
            self.tick()
        return self.cache[n]

    def settle(self, n: int) -> tuple[bool, str]:
        """Whether the target is met at ``n``, and its statistic there in words: a mean over pairs or
        the median width (:data:`~planner.simulate.summary.PARTIAL_STATS`) found out of reach from the
        first chunks of pairs (:func:`~planner.simulate.predict.predict_until`: ``"at least 0.0103"``),
        else exact."""
        req, stat = self.req, self.req.target.statistic
        if n in self.cache or stat not in PARTIAL_STATS:
            return req.met(self(n)), f"{self(n):.4g}"
        value, up = req.value, req.target.increasing

        def out(lo: float, hi: float) -> bool:      # beyond the value by more than the sums' rounding
            return (value - hi if up else lo - value) > 1e-9 * abs(value) + 1e-15

        got = predict_until(self.data.scores, n=int(n), statistic=stat, decided=out, method=req.method.name,
                            min_diff=req.min_diff, alpha=req.alpha, n_resamples=req.method_resamples,
                            rng=self.seed, model=self.prior)
        self.tick()
        if isinstance(got, tuple):
            return False, f"at most {got[1]:.4g}" if up else f"at least {got[0]:.4g}"
        self.cache[n] = float(got.rows[0][stat])
        return req.met(self.cache[n]), f"{self.cache[n]:.4g}"


def search_work(data: FittedPairs, req: TargetRequest, top: int, resamples: int | None = None) -> Work:
    """The most work and memory the search of ``req.method``'s curve over ``[2, top]`` takes: one
    :func:`planner.simulate.predict` call (its engine's :meth:`~planner.simulate.engine.PairEngine.work`
    and ``80 P`` bytes of kept results) at each count :func:`~planner.plan.search.smallest_n` may
    visit (:func:`~planner.plan.search.search_points`), at the count below the answer and at
    ``top`` first (when the search is bounded below ``n_max``); held: the largest call's."""
    S, T = data.vals.shape
    m = req.method
    R = (req.method_resamples if resamples is None else resamples) if m.random else 0
    engine = ENGINES[m.engine]

    def call(n: int) -> Work:
        shape = Shape(S, T, (n,), R, disjoint=m.disjoint)
        return engine.work(shape) + Work(0.0, 80 * shape.pairs)

    points, steps = search_points(2, top)
    last = call(top)
    units = sum(call(n).units for n in points) + (steps + 2) * last.units
    return Work(units, max(call(n).held for n in points))


def _search_limits(data: FittedPairs, req: TargetRequest, top: int, *, what: str, parameter: str) -> None:
    """Refuse a search over ``[2, top]`` over the work limits (:mod:`planner.simulate.work`), naming
    the simulation's resamples (a random method, when fewer fit) or ``parameter``, with what fits."""
    knobs = [Knob("method_resamples", req.method_resamples)] if req.method.random else []
    plain = methods.method_names(lambda m: m.engine is methods.Engine.ANALYTIC)
    check_limits(lambda c, v: search_work(data, req, max(c), v[0] if v else None), [top], knobs, what=what,
                 also=None if req.method.name in plain else f"method {plain[0]}", parameter=parameter,
                 n_fix="a target met within {:,} topics")


def _search_top(data: FittedPairs, req: TargetRequest, top: int) -> int:
    """The largest count the search may reach within the work limits: ``top`` when the whole search
    fits, else the largest that does; a search whose first steps are already over is refused
    before it starts."""
    if fits(search_work(data, req, top)):
        return top
    bound = largest_fitting(lambda t: search_work(data, req, t), top - 1)
    if bound is None:
        _search_limits(data, req, top, what=f"the search of {req.method.name}'s curve", parameter="method")
    return bound or top


def _simulated_point(data: FittedPairs, req: TargetRequest, seed: int,
                     tick: Callable[..., None]) -> tuple[int | None, Callable[[int], float]]:
    """The smallest n on a :func:`planner.simulate.predict` curve, and the curve. The search goes
    as far as the work limits allow (:func:`search_work`); a target not met there is an error
    that says what would let it go further."""
    stat_at = _CurveStat(data, req, seed, tick)
    top = req.n_max
    T = data.vals.shape[1]
    if req.method.disjoint:
        # two disjoint sets of the collection's topics: nothing beyond T // 2 can be simulated
        top = min(req.n_max, T // 2)
        if top < 2:
            raise InputError(f"method {req.method.name!r} needs at least 4 topics (two disjoint sets of 2), "
                             f"got {T}", file=getattr(data.scores, "source", None))
    bound = _search_top(data, req, top)
    # a search bounded below n_max (by the work limits, or a disjoint method's T // 2) looks at its
    # bound first (smallest_n's curve is monotone): a target not met there is an error after one
    # call, or after its first chunks of pairs when they show the target out of reach
    met, there = (True, "") if bound == req.n_max else stat_at.settle(bound)
    n_star = smallest_n(lambda n: req.met(stat_at(n)), 2, bound) if met else None
    if n_star is None and bound < top:
        t = req.target.name
        there = there or f"{stat_at(bound):.4g}"
        _search_limits(data, req, top, what=f"no count up to {bound:,} meets {t} {req.value:g} on the curve of "
                       f"{req.method.name} ({t} {there} there); searching further",
                       parameter="value")
    if n_star is None and top < req.n_max:
        t = req.target.name
        raise ParameterError(
            f"method {req.method.name!r} cannot reach {t} {req.value:g}: it draws two disjoint topic sets "
            f"from the collection's {T} topics, so it stops at {top} topics, where "
            f"{t} is {there or f'{stat_at(top):.4g}'}; use a method that is not limited to the collection's topics: "
            + ", ".join(methods.method_names(lambda m: not m.disjoint)),
            parameter="method")
    return n_star, stat_at


def _warn_tied_means(data: FittedPairs, req: TargetRequest) -> None:
    """Pairs whose means are exactly equal (not identical systems) keep p = 0.5 at every n."""
    model = data.model
    tied = int(((np.abs(model.dbar) <= 1e-12) & ~model.identical).sum())
    if tied:
        warnings.warn(f"{tied} pair(s) of systems have exactly equal means on this collection: each "
                      f"keeps swap and reversal rate 0.5 at every n, so the {req.target.name} target "
                      f"{req.value:g} is out of reach; with more decimals in the scores the ties "
                      "would break", DegenerateDataWarning, stacklevel=4)


def _interval(data: FittedPairs, req: TargetRequest, n_star: int | None,
              gen: np.random.Generator,
              progress: Progress = False) -> tuple[Interval, np.ndarray | None]:
    """The interval on n of the answer ``n_star``, and the re-solved counts behind it."""
    t, m, level = req.target, req.method, req.confidence_level
    if n_star is None and req.n_resamples > 0 and not t.reliability:
        # resamples can meet a target the collection itself does not (they break exact ties):
        # an interval without a point would answer another question
        return Interval.none("the target is not reached on the collection itself", level), None
    if not m.interval_on_n and not t.reliability:
        # the analytic re-solve of each topic resample answers for another estimator: its
        # interval could even exclude this method's n (a parametric 251 against [101, 248])
        return Interval.none(f"{m.name}: an interval on n would re-run the simulation on every topic "
                             "resample; --method analytic gives one, but for the analytic estimator, which "
                             "can exclude this method's n", level), None
    if t.reliability:
        return dstudy_interval(data.components(), t.name, req.value, level), None
    if req.n_resamples == 0:
        return Interval.none("", level), None
    if t.variance_count:
        return _variance_interval(data, req), None
    # the pilot-aware methods' swap, reversal and tau are re-solved with their own model
    spec = m.spec if t.pair_rate else None
    # one bar: each resample drawn, then each re-solved
    # the scale prior is fitted apart on the close pairs in every resample where it is on the collection:
    # the collection's prior (the point count's) decided that once
    close = data.prior(m).close if spec is not None and spec.close_apart else None
    with bar(progress, 2 * req.n_resamples, "interval on n", unit="resample") as tick:
        rs = resample_models(data.vals, req.variance, gen, req.n_resamples,
                             kurtosis=spec is not None and spec.integrate, close=close is not None, tick=tick)
        if spec is not None:
            ns = resolve_predictive(t, req.value, rs, data.vals.shape[1], spec, req.n_max, start=n_star, tick=tick)
        else:
            ns = resolve_analytic(t, req.value, rs, req.n_max, **req.options, tick=tick)
    assert n_star is not None       # (no interval without a point, above)
    lower, upper = count_interval(ns, n_star, level, spread=resample_spread(t))
    note = f"{m.name if spec is not None else 'analytic'} re-solve"
    if spec is not None and spec.unseen_mass and upper is not None:
        # the resamples share the pilot's blind spot for pairs near zero
        unseen = unseen_mass_count(t, req.value, data.model.dbar, data.model.var, data.vals.shape[1],
                                   data.vals.shape[0], level, req.n_max, start=upper, close=close)
        raised = allow_unseen(upper, unseen)
        if raised != upper:
            note += (f"; upper end raised from the resamples' {upper} to the count under the most mass "
                     "near zero the pairs allow")
            upper = raised
    return Interval(lower, upper, level, IntervalMethod.TOPIC_RESAMPLING, req.n_resamples, note), ns


def _variance_interval(data: FittedPairs, req: TargetRequest) -> Interval:
    """The interval on n of a count that rises with the planning variance alone
    (:attr:`planner.methods.Target.variance_count`): the jackknife interval of that variance (the
    target's quantile over pairs of their variances, refitted with each topic left out), each end
    solved as the point is."""
    t, level = req.target, req.confidence_level
    q = req.quantile

    def planning(keep: np.ndarray) -> float:
        var = (data.model.for_target(t.name, data.model.var) if keep.all()
               else planning_variances(data.vals[:, keep], data.variance))
        return quantile_variance(var, q)

    f = variance_factors(planning, data.vals.shape[1], level)

    def count(scale: float) -> int | None:
        if not np.isfinite(scale):
            return None
        return smallest_n(lambda n: req.met(data.model.stat(t.name, n, **req.options, var_scale=scale)), 2,
                          req.n_max)

    return Interval(count(f.low), count(f.high), level, IntervalMethod.ANALYTIC, 0,
                    f.note(f"{q:g}th percentile over pairs of their variances"))


def _seed(req: TargetRequest, rng: Any) -> tuple[Any, int | None]:
    """The rng to use and its recorded seed: drawn when none is given and anything is random."""
    if rng is None and ((req.n_resamples > 0 and req.target.resampled_interval) or req.method.random):
        rng = draw_seed()       # recorded, so that the interval (or simulation) can be repeated
    return rng, seed_of(rng)


def solve_target(data: FittedPairs, req: TargetRequest, rng: Any = None, progress: Progress = False) -> TargetResult:
    """:func:`size_for_target` on a collection already coerced and fitted (:func:`fit_pairs`)."""
    rng, seed = _seed(req, rng)
    gen = as_generator(rng)
    identical = _check_identical(data, req.target.name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdenticalPairsWarning)   # (said once, above: not per curve point)
        return _solve(data, req, gen, seed, identical, progress)


def _solve(data: FittedPairs, req: TargetRequest, gen: np.random.Generator, seed: int | None, identical: int,
           progress: Progress) -> TargetResult:
    """:func:`solve_target` once its seed is drawn and its identical pairs counted."""
    m = req.method
    stat_at: Callable[[int], float]
    if m.engine is methods.Engine.ANALYTIC or (m.closed_form and req.target.variance_count):
        # a variance count is solved on its planning variance, as its jackknife interval's ends are
        def analytic(n: int) -> float:
            return data.model.stat(req.target.name, n, **req.options)
        stat_at = analytic
        n_star = smallest_n(lambda n: req.met(stat_at(n)), 2, req.n_max)
    else:
        if seed is None and m.spec is None:
            # every n is simulated from one integer seed (common random numbers); without one, draw
            # it from the generator given (or fresh), and record it, so the answer can be repeated
            seed = int(gen.integers(0, 2 ** 31))
        with bar(progress, None, f"searching n ({m.name})", unit="n") as tick:
            n_star, stat_at = _simulated_point(data, req, seed if seed is not None else 0, tick)
    achieved = float(stat_at(n_star)) if n_star is not None else None
    prev = float(stat_at(n_star - 1)) if n_star is not None and n_star > 2 else None
    # (the search looked at n_max last: no new work)
    at_limit = float(stat_at(req.n_max)) if n_star is None else None
    if n_star is None and m.engine is methods.Engine.ANALYTIC and req.target.pair_rate:
        _warn_tied_means(data, req)
    interval, ns = _interval(data, req, n_star, gen, progress)
    return TargetResult(target=req.target.name, value=req.value, direction=req.target.direction,
                        n_topics=n_star, achieved=achieved, at_n_minus_1=prev, interval=interval, method=m.name,
                        variance=m.default_variance if m.random else req.variance,
                        min_diff=req.min_diff, alpha=req.alpha, n_pairs=int(data.model.dbar.size),
                        n_systems=data.vals.shape[0], n_topics_observed=data.vals.shape[1],
                        identical_pairs=identical, seed=seed,
                        method_resamples=req.method_resamples if m.random else 0, at_limit=at_limit,
                        resampled_n=ns)


def size_for_target(scores: Any, *, target: str, value: float, method: str = methods.DEFAULT_METHOD,
                    variance: str = "pair", min_diff: float = 0.05, alpha: float = 0.05,
                    quantile: float = 50.0, confidence_level: float = 0.95, n_resamples: int = 200,
                    n_max: int = 100_000, method_resamples: int = 1000, rng: Any = None,
                    progress: Progress = False) -> TargetResult:
    """Smallest number of topics for which a statistic of the collection meets ``value``.

    Parameters
    ----------
    scores : ScoreMatrix, path, DataFrame or array
        A complete collection (variants are averaged); see :func:`planner.fit`.
    target : str
        ``swap_rate`` / ``reversal_rate`` / ``ci_width`` (<= value), ``kendall_tau`` /
        ``erho2`` / ``phi`` / ``power`` (>= value): :data:`planner.methods.TARGETS`.
    value : float
        The target value, in the target's range (:func:`check_target_value`).
    method : str, optional
        A :func:`planner.simulate.predict` method, whose curve is searched, or ``"analytic"``
        (formulas in :mod:`planner.plan.pairs`). Default :data:`planner.methods.DEFAULT_METHOD`
        (``"deconvolved"``), as in :func:`planner.predict`.
    variance : str, optional
        Pair-variance selector (``pair`` | ``pooled`` | ``within-system`` | ``percentile:q``);
        the predictive methods take ``pair`` only, the resampling methods use the data's own.
    min_diff : float, optional
        True difference of the ``power`` target.
    alpha : float, optional
        Level of the intervals whose width is the ``ci_width`` target, and of the power test.
    quantile : float, optional
        The quantile over pairs of the ``ci_width`` statistic (50 = median). With any method
        but a resampling one, ``ci_width`` is solved on its planning variance, as the ``ci``
        design is (each ``pair`` variance made median-unbiased:
        :func:`planner.plan.pairs.planning_variances`).
    confidence_level, n_resamples : float, int, optional
        Level and count of the topic-resampling interval on n (``n_resamples=0`` skips it). For
        ``erho2``/``phi`` the interval is the D-study interval of
        :meth:`planner.variance.VarianceComponents.topics_for` (Feldt / AJF); for ``ci_width`` the
        jackknife interval of the planning variance (:mod:`planner.plan.jackknife`: nothing drawn,
        the number of resamples unused). The interval
        re-solves each resample with the analytic formulas, or, for the swap, reversal and
        Kendall tau targets of a predictive method, with that method's own model (prior
        refitted on every resample; ``predictive-integrated`` costs about 16 times more).
    n_max : int, optional
        Largest n searched.
    method_resamples : int, optional
        ``n_resamples`` of each :func:`planner.simulate.predict` call (random methods); every n is
        simulated with the same seed (common random numbers), so the search is over a fixed curve.
    rng : int, Generator or None, optional
        Seed or Generator for the resampling (one child stream per resample).
    progress : bool, "auto" or Share, optional
        Bars of the search of a random method and of the interval's resamples
        (:mod:`planner.progress`); default none. The numbers are the same with or without.

    Returns
    -------
    TargetResult

    Notes
    -----
    Memory: ``K T`` floats for the ``K = S (S-1) / 2`` pair differences of one resample, plus
    ``3 B K`` (``B = n_resamples``) for the resampled pair means and variances, which are solved
    together (a few more ``B K`` temporaries per step of the search); the pilot-aware re-solve
    works on blocks of resamples of about 4e6 float64 values (``B K`` more for
    ``predictive-integrated``'s kurtoses).

    Examples
    --------
    >>> from planner import datasets
    >>> m = datasets.load("dl19-passage", measure="nDCG@10")
    >>> a = size_for_target(m, target="swap_rate", value=0.05, method="analytic", n_resamples=0)
    >>> p = size_for_target(m, target="swap_rate", value=0.05, n_resamples=0)   # deconvolved
    >>> p.method, a.n_topics <= p.n_topics
    ('deconvolved', True)
    """
    req = target_request(target=target, value=value, method=method, variance=variance, min_diff=min_diff,
                         alpha=alpha, quantile=quantile, confidence_level=confidence_level,
                         n_resamples=n_resamples, n_max=n_max, method_resamples=method_resamples)
    return solve_target(fit_pairs(scores, variance), req, rng, progress)
