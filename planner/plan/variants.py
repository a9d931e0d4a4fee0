"""Topics against query variants per topic (:func:`topics_for_variants`).

The model (docs/planning.md, "Topics against query variants"): for each pair ``(a, b)`` the
difference on variant ``q`` of topic ``t`` is ``delta + alpha_t + beta_tq``, so the variance of
a topic's mean difference over ``v`` variants is ``s2_a + s2_b / v``. The collection gives
``s2_b`` (each pair's within-topic variance of the difference over its ``V`` variants,
averaged over topics) and ``s2_d``, the variance over topics of the difference averaged over
all ``V`` (which estimates ``s2_a + s2_b / V``); with ``s2_a = max(s2_d - s2_b / V, 0)`` and
``ratio(v) = (s2_a + s2_b / v) / (s2_a + s2_b / V)``, ``sigma_d^2(v) = s2_d ratio(v)``, and for
``v < V`` at least ``s2_b / v`` (the model's bound, which binds where the topic part came out
negative). ``dbar`` stays the collection's, from all its variants.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import methods
from .._random import as_generator, seed_of, seed_to_use
from ..errors import DegenerateDataWarning, InputError, ParameterError
from ..results import IntervalMethod, ResultMixin
from ..scores import ScoreMatrix
from ..simulate import PairRates, fit_prior, pair_variance_model
from ..simulate.priors import close_pairs, unseen_mass_prior
from ..variance import check_alpha, pair_index
from .checks import as_scores, check_interval_resamples, check_prob, check_quantile
from .jackknife import factors_from_fits, leave_out_masks
from .pairs import PairModel, batch_stat, quantile_variance
from .search import allow_unseen, count_interval, resample_spread, smallest_n, smallest_n_vec
from .targets import check_target_value

__all__ = ["MAX_VARIANTS", "VariantModel", "VariantTrade", "fit_variant_model", "topics_for_variants",
           "variant_pair_variance"]

#: most query variants per topic :func:`topics_for_variants` (and a study's ``variants``) accepts
MAX_VARIANTS = 10_000


@dataclass(frozen=True, repr=False)
class VariantTrade(ResultMixin):
    """Topics a target needs with ``v`` query variants per topic, for several ``v``.

    Attributes
    ----------
    target, value, direction, method, min_diff, alpha
        As in :class:`TargetResult`.
    n_systems, n_topics_observed, n_variants_observed : int
        The collection's shape.
    identical_pairs : int
        Pairs identical on every topic and variant (ties, as everywhere).
    variant_share : float
        The median over pairs of the within-topic (variant) share of the variance of one
        variant's difference, ``s2_b / (s2_a + s2_b)``.
    rows : list of dict
        One per ``v``: ``n_variants``; ``n_topics`` (``None``: not reached up to ``n_max``);
        ``queries`` (``n_topics * n_variants``); ``achieved`` (the statistic at ``n_topics``);
        ``n_lower``, ``n_upper`` (the interval on n, with ``n_resamples``); ``variance_ratio``
        (the median over pairs of the variance of a topic's mean difference with ``v``
        variants, relative to the collection's own ``V``).
    confidence_level : float
        The level of each row's interval on n.
    interval_method : IntervalMethod
        How it was computed: ``TOPIC_RESAMPLING`` (the topics resampled with all their variants,
        each resample re-solved with the method), ``ANALYTIC`` for ``ci_width`` (the jackknife
        interval of each row's planning variance, :mod:`planner.plan.jackknife`; nothing drawn),
        ``NONE`` when skipped or when the collection itself reaches the target at no ``v``.
    n_resamples : int
        Topic resamples behind the intervals (0: none).
    seed : int or None
        The seed of the resampling, when it ran.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(0.5, 0.1, (4, 1, 1)) + rng.normal(0, 0.05, (4, 30, 3))
    >>> m = ScoreMatrix.build(x, ["a", "b", "c", "d"], [str(t) for t in range(30)], variants=["1", "2", "3"])
    >>> r = topics_for_variants(m, target="swap_rate", value=0.05, method="analytic", n_variants=[1, 3])
    >>> [row["n_variants"] for row in r.rows], r.rows[0]["n_topics"] >= r.rows[1]["n_topics"]
    ([1, 3], True)
    >>> list(r.to_frame()["n_variants"]), len(repr(r)) < 300
    ([1, 3], True)
    """

    target: str
    value: float
    direction: str
    method: str
    min_diff: float
    alpha: float
    n_systems: int
    n_topics_observed: int
    n_variants_observed: int
    identical_pairs: int
    variant_share: float
    rows: list
    confidence_level: float = 0.95
    interval_method: IntervalMethod = IntervalMethod.NONE
    n_resamples: int = 0
    seed: int | None = None

    _repr_fields = ("target", "value", "method", "rows", "interval_method")

    def to_frame(self) -> Any:
        """One row per number of variants (:attr:`rows`)."""
        import pandas as pd

        return pd.DataFrame(self.rows)


def variant_pair_variance(x: np.ndarray) -> np.ndarray:
    """Per pair ``a < b`` of a complete ``(S, T, V)`` array: the mean over topics of the
    variance (ddof=1) over the ``V`` variants of the difference ``x[a,t,v] - x[b,t,v]``.

    With ``y`` the deviations of each system's scores from its topic mean over variants,
    ``sum_{t,v} (y_a - y_b)^2 = G_aa + G_bb - 2 G_ab`` for the Gram matrix ``G = Y Y^T``
    (``Y = y`` as ``(S, T V)``): ``S^2`` floats, not ``K T V``.

    Examples
    --------
    >>> x = np.array([[[0.1, 0.3]], [[0.2, 0.2]]])
    >>> variant_pair_variance(x)
    array([0.02])
    """
    S, T, V = x.shape
    y = (x - x.mean(axis=2, keepdims=True)).reshape(S, T * V)
    G = y @ y.T
    a, b = pair_index(S)
    out = (G[a, a] + G[b, b] - 2.0 * G[a, b]) / (T * (V - 1))
    return np.maximum(out, 0.0)     # rounding of identical systems


@dataclass(frozen=True)
class _Question:
    """The checked question of :func:`topics_for_variants`."""

    target: methods.Target
    value: float
    method: methods.Method
    min_diff: float
    alpha: float
    quantile: float
    n_max: int

    def met(self, statistic: float) -> bool:
        return self.target.met(statistic, self.value)


class _VariantModel:
    """The variant model of one ``(S, T, V)`` array, fitted once."""

    def __init__(self, x: np.ndarray, spec: methods.PredictiveSpec | None, apart: bool | None = None):
        """``apart``: fit a scale prior apart on the close pairs (a topic resample of a collection
        whose prior is); ``None``: where the data say so (:func:`planner.simulate.priors.split_close`)."""
        self.S, self.T, self.V = x.shape
        self.model = PairModel(x.mean(axis=2), "pair")
        self.dbar, self.s2d = self.model.dbar, self.model.var
        self.s2b = variant_pair_variance(x)
        self.identical = self.model.identical & (self.s2b == 0)
        # the topic component, truncated at 0; a pair's variance with v variants is its own s2_d
        # times ratio(v) = (s2_a + s2_b / v) / (s2_a + s2_b / V): exactly s2_d at v = V
        self.s2a = np.maximum(self.s2d - self.s2b / self.V, 0.0)
        self.den = self.s2a + self.s2b / self.V
        one = self.s2a + self.s2b
        self.share = float(np.median(self.s2b[one > 0] / one[one > 0])) if (one > 0).any() else 0.0
        self.spec = spec
        self.s2m = self.prior = None
        if spec is not None:
            self.s2m = pair_variance_model(self.s2d, spec.variance)
            sv = x.mean(axis=2).var(axis=1, ddof=1)
            self.prior = fit_prior(self.dbar, self.s2m, self.T, prior=spec.prior,
                                   system_var=sv if apart is None else None,
                                   close=close_pairs(self.s2m, sv) if apart else None)

    def unseen(self, level: float) -> _VariantModel:
        """This model with the prior of the most mass near zero its pairs allow at ``level``
        (:func:`planner.simulate.priors.unseen_mass_prior`): the count to allow for in an interval's
        upper end (:func:`planner.plan.search.allow_unseen`)."""
        assert self.spec is not None and self.s2m is not None and self.prior is not None
        out = copy.copy(self)
        out.prior = unseen_mass_prior(self.dbar, self.s2m, self.T, self.S, level, close=self.prior.close)
        return out

    def variance_at(self, v: int) -> np.ndarray:
        """Each pair's variance of a topic's mean difference over ``v`` variants."""
        den = self.den
        ratio = np.where(den > 0, (self.s2a + self.s2b / v) / np.where(den > 0, den, 1.0), 1.0)
        var_v = self.s2d * ratio
        return np.maximum(var_v, self.s2b / v) if v < self.V else var_v

    def statistic(self, q: _Question, var_v: np.ndarray, rv: np.ndarray) -> Callable[[int], float]:
        """The target's statistic at n topics with the pair variances ``var_v`` (as the target is solved
        on them: :meth:`planner.plan.pairs.PairModel.for_target`)."""
        t = q.target
        comp = {k: np.array([v]) for k, v in self.model.comp.items()}
        if self.spec is None or not t.pair_rate:
            solved = self.model.for_target(t.name, var_v)

            def closed(n: int) -> float:
                return float(batch_stat(t.name, np.array([float(n)]), self.dbar[None, :], solved[None, :], comp,
                                        min_diff=q.min_diff, alpha=q.alpha, quantile=q.quantile)[0])
            return closed

        prior = self.prior
        assert prior is not None        # (fitted with the spec)
        key = "reversal_rate" if t.name == "reversal_rate" else "swap_rate"
        rates = PairRates(self.dbar, self.s2m, self.T, prior, key, future_scale=rv)   # posterior once

        def pred(n: int) -> float:
            r = rates(int(float(n)))        # pairs identical on every topic and variant: ties
            return float(1.0 - 2.0 * r.mean()) if t.name == "kendall_tau" else float(r.mean())
        return pred

    def row(self, q: _Question, v: int, start: int | None = None) -> dict:
        """The smallest n with ``v`` variants per topic (the search starts at ``start``, a guess such
        as the collection's count when this is a resample of it: same answer, fewer steps)."""
        var_v = self.variance_at(v)
        s2d = self.s2d
        rv = np.where(s2d > 0, var_v / np.where(s2d > 0, s2d, 1.0), 1.0)
        stat = self.statistic(q, var_v, rv)
        found = smallest_n_vec(lambda n: np.array([q.met(stat(int(n[0])))]), 1, 2, q.n_max, start=start)[0]
        n_star = int(found) if np.isfinite(found) else None
        return {"n_variants": v, "n_topics": n_star,
                "queries": None if n_star is None else int(n_star) * v,
                "achieved": None if n_star is None else stat(n_star),
                "variance_ratio": float(np.median(rv[s2d > 0])) if (s2d > 0).any() else 1.0}


def _variant_solve(x: np.ndarray, q: _Question, vs: list[int], source: Any, warn: bool = True,
                   vm: _VariantModel | None = None,
                   starts: list[int | None] | None = None) -> tuple[list[dict] | None, float, int]:
    """The rows of :func:`topics_for_variants` for the ``(S, T, V)`` values ``x`` (their model
    ``vm`` when fitted already; ``starts``: a guess of each row's count, as for
    :meth:`_VariantModel.row`), the median variant share and the number of identical pairs
    (rows ``None`` when every pair is identical and ``warn`` is off: a topic resample can draw
    such a set)."""
    if vm is None:
        vm = _VariantModel(x, q.method.spec)
    identical = vm.identical
    if identical.all():
        if not warn:
            return None, 0.0, int(identical.sum())
        raise InputError(f"every pair of systems is identical on every topic ({identical.size} pair(s)): no "
                         f"topic count changes the {q.target.name}", file=source)
    if identical.any() and warn:
        warnings.warn(f"{int(identical.sum())} pair(s) of systems identical on every topic and variant: each "
                      f"counts as a tie in the {q.target.name} target (swap and reversal rate 0.5, power 1, "
                      "interval width 0), as in planner predict", DegenerateDataWarning, stacklevel=3)
    starts = starts or [None] * len(vs)
    return [vm.row(q, v, n0) for v, n0 in zip(vs, starts)], vm.share, int(identical.sum())


def _variant_method(method: str) -> None:
    allowed = methods.method_names(lambda m: m.variants)
    if method not in allowed:
        raise ParameterError(f"method {method!r} has no model of query variants; expected one of "
                             f"{', '.join(allowed)}", parameter="method")


def _question(target: str, value: Any, method: str, min_diff: float, alpha: float, quantile: float,
              n_max: int) -> _Question:
    v = check_target_value(target, value, min_diff)
    t = methods.TARGETS[target]
    if t.reliability:
        raise ParameterError(f"{target} with query variants comes from the three-facet D-study "
                             "(planner.variance.fit_variants(...).dstudy), not from this function",
                             parameter="target")
    _variant_method(method)
    alpha = check_alpha(alpha)
    quantile = check_quantile(quantile)
    return _Question(t, v, methods.METHODS[method], float(min_diff), alpha, quantile, n_max)


def _variant_values(scores: Any) -> tuple[ScoreMatrix, np.ndarray]:
    m = as_scores(scores)
    if not m.has_variants:
        raise ParameterError("the scores have no query variants (use planner.variance.stack_variants, "
                             "or a tidy table with a variant column)", parameter="scores")
    x = np.asarray(m.values, dtype=float)
    if x.shape[2] < 2:
        raise InputError(f"need at least 2 variants per topic, got {x.shape[2]}", file=m.source)
    if np.isnan(x).any():
        raise InputError("the scores have missing (topic, variant) cells; the variant model needs every "
                         "system scored on every variant of every topic", file=m.source)
    return m, x


@dataclass(frozen=True, repr=False)
class VariantModel:
    """The variant model of a collection for one method (:func:`fit_variant_model`): pass it to
    :func:`topics_for_variants` (``model=``) to solve other targets without refitting it."""

    scores: ScoreMatrix
    values: np.ndarray
    method: str
    fitted: _VariantModel

    def __repr__(self) -> str:
        S, T, V = self.values.shape
        return f"VariantModel(method={self.method!r}, systems={S}, topics={T}, variants={V})"


def fit_variant_model(scores: Any, *, method: str = methods.DEFAULT_METHOD) -> VariantModel:
    """The variant model :func:`topics_for_variants` fits on ``scores`` for ``method``.

    Pass it as ``model=`` to solve several targets on the same scores with the model fitted
    (and the scores checked) once; the numbers are the same as without it.

    Parameters
    ----------
    scores : ScoreMatrix
        As for :func:`topics_for_variants`.
    method : str, optional
        As for :func:`topics_for_variants`.

    Returns
    -------
    VariantModel

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(0.5, 0.1, (4, 1, 1)) + rng.normal(0, 0.05, (4, 30, 3))
    >>> m = ScoreMatrix.build(x, ["a", "b", "c", "d"], [str(t) for t in range(30)], variants=["1", "2", "3"])
    >>> vm = fit_variant_model(m, method="analytic")
    >>> a = topics_for_variants(m, target="swap_rate", value=0.05, method="analytic", model=vm)
    >>> a.rows == topics_for_variants(m, target="swap_rate", value=0.05, method="analytic").rows
    True
    """
    _variant_method(method)
    m, x = _variant_values(scores)
    return VariantModel(m, x, method, _VariantModel(x, methods.METHODS[method].spec))


def _model_values(scores: Any, method: str, model: Any) -> tuple[ScoreMatrix, np.ndarray, _VariantModel | None]:
    """The scores, their values and the fitted model (``None``: fit it), checked against ``model``."""
    if model is None:
        return (*_variant_values(scores), None)
    if not isinstance(model, VariantModel):
        raise ParameterError(f"expected a VariantModel (planner.plan.fit_variant_model), got "
                             f"{type(model).__name__}", parameter="model")
    if model.method != method:
        raise ParameterError(f"the model was fitted for method {model.method!r}, not {method!r}",
                             parameter="model")
    if scores is not model.scores and (not isinstance(scores, ScoreMatrix)
                                       or np.shape(scores.values) != model.values.shape):
        raise ParameterError("the model was fitted on other scores", parameter="model")
    return model.scores, model.values, model.fitted


def _check_n_variants(n_variants: Any, V: int) -> list[int]:
    if n_variants is None:
        return list(range(1, V + 1))
    raw = [n_variants] if np.ndim(n_variants) == 0 else list(n_variants)
    if not raw or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= MAX_VARIANTS
                      for v in raw):
        raise ParameterError(f"expected integers from 1 to {MAX_VARIANTS:,}, got {n_variants!r}",
                             parameter="n_variants")
    return sorted({int(v) for v in raw})


def _resampled_rows(x: np.ndarray, q: _Question, vs: list[int], rows: list[dict], source: Any, resamples: int,
                    level: float, rng: Any, vm: _VariantModel) -> None:
    """Each row's interval on n from ``resamples`` topic resamples (each topic with all its variants);
    for a pair rate of the scale prior, the upper end allows for the mass near zero the resamples
    cannot see (:meth:`_VariantModel.unseen`)."""
    T = x.shape[1]
    ns = np.full((resamples, len(vs)), np.inf)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        starts = [r["n_topics"] for r in rows]     # the collection's counts: the resamples' vary around them
        # a scale prior fitted apart on the close pairs is, in every resample
        apart = vm.prior is not None and vm.prior.close is not None
        for i, g in enumerate(as_generator(rng).spawn(resamples)):
            xb = x[:, g.integers(0, T, T), :]
            rb, _, _ = _variant_solve(xb, q, vs, source, warn=False, starts=starts,
                                      vm=_VariantModel(xb, q.method.spec, apart=apart))
            for j, r in enumerate(rb or []):
                if r["n_topics"] is not None:
                    ns[i, j] = r["n_topics"]
    unseen = vm.unseen(level) if vm.spec is not None and vm.spec.unseen_mass and q.target.pair_rate else None
    for j, r in enumerate(rows):
        if r["n_topics"] is None:       # no interval for a count the collection does not reach
            continue
        lo, hi = count_interval(ns[:, j], r["n_topics"], level, spread=resample_spread(q.target))
        if unseen is not None and hi is not None:
            hi = allow_unseen(hi, unseen.row(q, r["n_variants"], start=hi)["n_topics"])
        r.update(n_lower=lo, n_upper=hi)


def _jackknife_rows(x: np.ndarray, q: _Question, rows: list[dict], level: float) -> None:
    """Each row's interval on n for a count that rises with one planning variance
    (:attr:`planner.methods.Target.variance_count`): the jackknife interval of the row's planning
    variance (:mod:`planner.plan.jackknife`; the variant model refitted with each topic left out,
    every variant kept, once for all rows), the row solved at each end."""
    live = [r for r in rows if r["n_topics"] is not None]   # no interval for a count not reached

    def planning(model: _VariantModel, v: int) -> float:
        return quantile_variance(model.model.for_target(q.target.name, model.variance_at(v)), q.quantile)

    masks, grouped = leave_out_masks(x.shape[1])
    fits = np.array([[planning(m, r["n_variants"]) for r in live]
                     for m in (_VariantModel(x[:, keep, :], None) for keep in masks)])
    full = _VariantModel(x, None)
    for j, r in enumerate(live):
        v = r["n_variants"]
        f = factors_from_fits(planning(full, v), fits[:, j], level, grouped)
        var_v = full.variance_at(v)
        r.update(n_lower=_count_with(full, q, f.low * var_v), n_upper=_count_with(full, q, f.high * var_v))


def _count_with(model: _VariantModel, q: _Question, var_v: np.ndarray) -> int | None:
    """The smallest n meeting a closed-form target with the pair variances ``var_v`` (``None``:
    unbounded, or past ``n_max``)."""
    if not np.all(np.isfinite(var_v)):
        return None
    stat = model.statistic(q, var_v, np.ones_like(var_v))
    return smallest_n(lambda n: q.met(stat(n)), 2, q.n_max)


def topics_for_variants(scores: Any, *, target: str, value: float, n_variants: Any = None,
                        method: str = methods.DEFAULT_METHOD, min_diff: float = 0.05, alpha: float = 0.05,
                        quantile: float = 50.0, n_max: int = 100_000, n_resamples: int = 0,
                        confidence_level: float = 0.95, rng: Any = None,
                        model: VariantModel | None = None) -> VariantTrade:
    """Smallest number of topics meeting a target when each topic has ``v`` query variants.

    Scores are averaged over a topic's variants; the model is in :mod:`planner.plan.variants`.
    ``v = V`` is :func:`size_for_target` on the collection (``n_resamples=0``).

    Parameters
    ----------
    scores : ScoreMatrix
        A complete ScoreMatrix with a variant axis (at least 2 variants per topic).
    target : str
        A pair rate, ``ci_width`` or ``power`` (Erho2 and Phi:
        :meth:`planner.variance.VariantComponents.dstudy`).
    value : float
        The target value.
    n_variants : int or list of int, optional
        Variants per topic to solve for (default ``1 .. V``; at most :data:`MAX_VARIANTS`);
        more than ``V`` extrapolates the model.
    method : str, optional
        ``analytic``, or a normal-prior predictive method (those with
        :attr:`planner.methods.Method.variants`): the pilot's
        ``dbar`` keeps its noise ``s2_d / T``, future topics have ``sigma_d^2(v) / n``
        (``predictive-shrunk``/``-pooled`` multiply their own variance by the same factor).
        Power and interval width use the paired t formulas with ``sigma_d^2(v)``. Default
        :data:`planner.methods.DEFAULT_METHOD` (``"predictive"``).
    min_diff, alpha, quantile, n_max : optional
        As in :func:`size_for_target`.
    n_resamples, confidence_level, rng : optional
        ``n_resamples`` bootstrap resamples of the topics, each with all its variants (one child
        stream of ``rng`` each), re-fit the model and re-solve every ``v`` (for ``ci_width``, any
        ``n_resamples`` above 0 asks for the jackknife interval instead, and nothing is drawn); a row's
        ``n_lower`` / ``n_upper`` are the ``(1 -+ confidence_level)/2`` quantiles (``None`` past
        ``n_max``, or when the collection itself does not reach the target). 0 (default) skips it.
    model : VariantModel, optional
        The model fitted earlier on the same scores for the same method
        (:func:`fit_variant_model`), so that a caller solving several targets fits it once;
        default: fit it here. The numbers are the same.

    Returns
    -------
    VariantTrade

    Notes
    -----
    Memory: ``S T V`` values of the deviations, ``S^2`` of their Gram matrix, and a few ``K``
    vectors (``K = S (S-1) / 2`` pairs).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(0.5, 0.1, (4, 1, 1)) + rng.normal(0, 0.05, (4, 30, 3))
    >>> m = ScoreMatrix.build(x, ["a", "b", "c", "d"], [str(t) for t in range(30)], variants=["1", "2", "3"])
    >>> topics_for_variants(m, target="swap_rate", value=0.05, n_variants=2).method
    'deconvolved'
    """
    q = _question(target, value, method, min_diff, alpha, quantile, n_max)
    m, x, vm = _model_values(scores, method, model)
    S, T, V = x.shape
    vs = _check_n_variants(n_variants, V)
    vm = vm or _VariantModel(x, q.method.spec)
    rows, share, n_identical = _variant_solve(x, q, vs, m.source, vm=vm)
    assert rows is not None         # (warn=True raises instead)
    for r in rows:
        r.update(n_lower=None, n_upper=None)
    resamples = check_interval_resamples(n_resamples)
    level = check_prob(confidence_level, "confidence_level")
    imethod, seed = IntervalMethod.NONE, None
    if resamples and all(r["n_topics"] is None for r in rows):
        # resamples can meet a target the collection itself does not: no interval without a point
        resamples = 0
    if resamples and q.target.variance_count:      # nothing drawn: the jackknife of the planning variance
        _jackknife_rows(x, q, rows, level)
        imethod, resamples = IntervalMethod.ANALYTIC, 0
    elif resamples:
        rng = seed_to_use(rng)      # a drawn seed when None, recorded so that the interval can be repeated
        _resampled_rows(x, q, vs, rows, m.source, resamples, level, rng, vm)
        imethod = IntervalMethod.TOPIC_RESAMPLING
        seed = seed_of(rng)
    return VariantTrade(target=target, value=q.value, direction=q.target.direction, method=method,
                        min_diff=q.min_diff, alpha=q.alpha, n_systems=S, n_topics_observed=T,
                        n_variants_observed=V, identical_pairs=n_identical,
                        variant_share=share, rows=rows, confidence_level=float(level),
                        interval_method=imethod, n_resamples=resamples, seed=seed)
