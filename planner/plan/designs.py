"""Classical topic-set-size designs (Sakai): paired-t, two-sample, anova and ci.

:func:`topic_set_size` solves a design for whichever of ``n_topics``, ``min_diff`` and
``power`` is unset (``width`` for ci), with exact noncentral t / F or Sakai's approximations
(:mod:`planner.plan.power`), an optional multiple-comparison correction, and, from a collection,
an optional topic-resampling interval on a solved n.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, SupportsFloat

import numpy as np
from scipy import optimize

from ..errors import DegenerateDataWarning, ParameterError
from ..results import Interval, IntervalMethod, ResultMixin
from ..scores import ScoreMatrix
from ..variance import check_alpha, parse_selector
from .checks import N_MAX, check_interval_resamples, check_min_diff, check_prob, complete_values
from .jackknife import variance_factors
from .pairs import median_unbiased, planning_variances
from .power import design_power, expected_width, sakai_initial_n
from .search import ceil_start, smallest_n, smallest_n_vec

__all__ = ["APPROX", "CORRECTIONS", "DESIGNS", "PAIRED_DESIGNS", "SizeResult", "topic_set_size"]

DESIGNS = ("paired-t", "two-sample", "anova", "ci")
PAIRED_DESIGNS = ("paired-t", "ci")
APPROX = ("exact", "sakai")
CORRECTIONS = (None, "none", "bonferroni", "holm")


@dataclass(frozen=True, repr=False)
class SizeResult(ResultMixin):
    """Result of a classical topic-set-size design (:func:`topic_set_size`).

    Attributes
    ----------
    design : str
        ``paired-t``, ``two-sample``, ``anova`` or ``ci``.
    solved_for : str
        Which of ``n_topics``, ``min_diff``, ``power`` (``width`` for ci) was solved.
    n_topics : int
        Topics (per system for two-sample); for a solved n the smallest that meets the target.
    min_diff : float or None
        Minimum detectable difference (range for anova; None for ci).
    power : float or None
        Power at ``n_topics`` and ``min_diff`` (the achieved power when n was solved).
    target_power : float or None
        The requested power when n or min_diff was solved, else None.
    power_at_n_minus_1 : float or None
        Power at ``n_topics - 1`` (shows the solved n is the smallest), or None.
    width, target_width : float or None
        Expected interval width at ``n_topics`` and the requested width (ci design).
    alpha, alpha_per_test : float
        The family-wise (or single-test) level asked for; the level of each comparison after
        the correction.
    correction : str or None
        None, ``bonferroni`` or ``holm``; ``comparisons`` the number it covers (1 without one).
    comparisons, systems : int
        Comparisons of the correction; number of systems (anova, corrections).
    sigma2 : float
        The variance the design used; ``variance`` its name (``given (...)``, ``pooled``,
        ``pair (median over pairs, each median-unbiased)`` for the paired designs, ``pair (median
        over pairs)`` for the others, ``within-system``, ``percentile:q``).
    variance : str
        See ``sigma2``.
    method : str
        ``exact`` (noncentral t/F) or ``sakai`` (normal approximations).
    per_pair : dict or None
        For the ``pair`` selector, quantiles of the per-pair sizes (or min_diff / power).
    width_at_n_minus_1 : float or None
        ci design with n solved: expected width at ``n_topics - 1``.
    interval : Interval
        The jackknife interval on a solved n (``n_resamples > 0`` with a ScoreMatrix; ``how`` is
        ``ANALYTIC``, ``NONE`` without one).
    n_initial : float or None
        ``approx="sakai"`` with n solved: Sakai's normal-theory starting value n'.

    Examples
    --------
    >>> r = topic_set_size(design="paired-t", min_diff=0.05, sigma2=0.02, power=0.8)
    >>> r
    SizeResult(design='paired-t', solved_for='n_topics', n_topics=65, power=0.8016, interval=Interval(none))
    >>> r.to_dict()["design"], int(r.to_frame().loc[0, "n_topics"])
    ('paired-t', 65)
    """

    design: str
    solved_for: str
    n_topics: int
    min_diff: float | None
    power: float | None
    target_power: float | None
    power_at_n_minus_1: float | None
    width: float | None
    target_width: float | None
    alpha: float
    alpha_per_test: float
    correction: str | None
    comparisons: int
    systems: int
    sigma2: float
    variance: str
    method: str
    per_pair: dict | None = None
    width_at_n_minus_1: float | None = None
    interval: Interval = field(default_factory=lambda: Interval.none(""))
    n_initial: float | None = None

    _repr_fields = ("design", "solved_for", "n_topics", "power", "interval")


@dataclass(frozen=True)
class _Design:
    """The checked design: its test, levels, correction and variance."""

    design: str
    method: str
    alpha: float
    a_test: float
    correction: str | None
    K: int
    systems: int
    sigma2: float
    vname: str
    per_pair_var: np.ndarray | None

    def power(self, n: Any, delta: Any, s2: Any = None) -> np.ndarray:
        return design_power(self.design, n, delta, self.sigma2 if s2 is None else s2, alpha=self.a_test,
                            systems=self.systems, approx=self.method)

    def result(self, **fields: Any) -> SizeResult:
        return SizeResult(design=self.design, alpha=self.alpha, alpha_per_test=self.a_test,
                          correction=self.correction, comparisons=self.K, systems=self.systems,
                          sigma2=self.sigma2, variance=self.vname, method=self.method, **fields)


# ----------------------------------------------------------------------------- argument checks

def _check_choices(design: str, approx: str | None, exact: bool, correction: str | None) -> tuple[str, str | None]:
    """The approximation (``exact`` or ``sakai``) and the correction (None without one)."""
    if design not in DESIGNS:
        raise ParameterError(f"unknown design {design!r}; expected one of {', '.join(DESIGNS)}",
                             parameter="design")
    method = approx if approx is not None else ("exact" if exact else "sakai")
    if method not in APPROX:
        raise ParameterError(f"unknown approximation {approx!r}; expected sakai", parameter="approx")
    if correction == "none":
        correction = None
    if correction not in CORRECTIONS:
        raise ParameterError(f"unknown correction {correction!r}; expected holm or bonferroni",
                             parameter="correction")
    return method, correction


def _check_systems(systems: Any, design: str, correction: str | None) -> int:
    try:
        systems = int(systems)
    except (TypeError, ValueError):
        raise ParameterError(f"expected an integer, got {systems!r}", parameter="systems") from None
    if systems < 2:
        raise ParameterError(f"need at least 2 systems, got {systems}", parameter="systems")
    if design == "anova" and correction is not None:
        raise ParameterError("the anova design tests all systems at once; corrections apply to "
                             "paired-t, two-sample and ci", parameter="correction")
    return systems


def _check_n_topics(n_topics: Any) -> int | None:
    if n_topics is None:
        return None
    try:
        ok = float(n_topics) == int(n_topics) and not isinstance(n_topics, (bool, str))
        n_topics = int(n_topics)
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise ParameterError(f"expected an integer, got {n_topics!r}", parameter="n_topics")
    if n_topics < 2:
        raise ParameterError(f"need at least 2 topics, got {n_topics}", parameter="n_topics")
    return int(n_topics)


def _check_ci_options(design: str, power: Any, width: Any, min_diff: Any) -> None:
    if width is not None and design != "ci":
        raise ParameterError("a width cap applies to the ci design", parameter="width")
    if design != "ci":
        return
    # the ci design has no power, and one width: an option it would ignore is an error
    if power is not None:
        raise ParameterError("the ci design solves an interval width, not a power; leave power "
                             "unset", parameter="power")
    if width is not None and min_diff is not None:
        raise ParameterError("give the ci design's width as width or as min_diff, not both",
                             parameter="min_diff")


def _check_unknown(n_topics: Any, min_diff: Any, power: Any, a_test: float) -> tuple[str, float | None, float | None]:
    """The unknown of a t or F design, and the checked power and min_diff."""
    unknown = [k for k, v in (("n_topics", n_topics), ("min_diff", min_diff), ("power", power)) if v is None]
    if len(unknown) != 1:
        raise ParameterError("set exactly two of n_topics, min_diff and power (the third is solved); "
                             f"unset: {', '.join(unknown) or 'none'}", parameter=unknown[0] if unknown else "power")
    if power is not None:
        power = check_prob(power, "power")
        if power <= a_test:
            raise ParameterError(f"a power of {power} is not above the test level {a_test:.4g}",
                                 parameter="power")
    if min_diff is not None:
        min_diff = check_min_diff(min_diff)
    return unknown[0], min_diff, power


# ----------------------------------------------------------------------------- the variance

def _given_variance(variance: SupportsFloat, paired: bool) -> tuple[float, str, None]:
    s2 = float(variance)
    if not math.isfinite(s2) or s2 <= 0:
        raise ParameterError(f"must be a positive variance, got {variance}", parameter="sigma2")
    what = "variance of per-topic differences" if paired else "within-system variance"
    return s2, f"given ({what})", None


def _pair_design(paired: bool) -> str:
    """The ``design`` of :mod:`planner.plan.pairs` a (paired or not) classical design reads."""
    return "paired" if paired else "independent"


def _matrix_variance(scores: ScoreMatrix, selector: str, paired: bool) -> tuple[float, str, np.ndarray | None]:
    per_pair = planning_variances(scores, selector, design=_pair_design(paired))
    kind, _ = parse_selector(selector, parameter="variance")
    if kind == "pair" and np.any(per_pair <= 0):
        zero = int((per_pair <= 0).sum())
        warnings.warn(f"{zero} pair(s) with zero variance left out of the pair variances",
                      DegenerateDataWarning, stacklevel=5)
        per_pair = per_pair[per_pair > 0]
        if per_pair.size == 0:
            raise ParameterError("every pair has zero variance; nothing to plan", parameter="variance")
    s2 = _planning_of(per_pair, kind)
    if not s2 > 0:
        raise ParameterError(f"the {selector} variance of the collection is {s2}; nothing to plan",
                             parameter="variance")
    name = selector
    if median_unbiased(selector, _pair_design(paired)):
        name += " (median over pairs, each median-unbiased)"
    elif kind == "pair":
        name += " (median over pairs)"
    return s2, name, (per_pair if kind == "pair" else None)


def _fitted_variance(fitted: Any, selector: str, paired: bool) -> tuple[float, str, None]:
    kind, _ = parse_selector(selector, parameter="variance")
    if kind != "pooled":
        raise ParameterError(f"fitted components only give the pooled variance; pass the "
                             f"ScoreMatrix for {selector!r}", parameter="variance")
    ve = float(fitted.var_e)
    s2 = 2 * ve if paired else ve
    if not s2 > 0:
        raise ParameterError("the fitted residual variance is 0; nothing to plan", parameter="variance")
    return s2, "pooled", None


def _resolve_variance(sigma2: Any, scores: Any, selector: str, design: str) -> tuple[float, str, np.ndarray | None]:
    """(sigma2, name of the variance used, per-pair variances or None)."""
    paired = design in PAIRED_DESIGNS
    if (sigma2 is None) == (scores is None):
        raise ParameterError("give the variance the design needs: sigma2 (a number) or scores (a ScoreMatrix "
                             "or fitted VarianceComponents), not both", parameter="sigma2")
    if sigma2 is not None:
        if isinstance(sigma2, (int, float, np.floating, np.integer)) and not isinstance(sigma2, bool):
            return _given_variance(sigma2, paired)
        raise ParameterError(f"expected a number, got {type(sigma2).__name__}", parameter="sigma2")
    if isinstance(scores, ScoreMatrix):
        return _matrix_variance(scores, selector, paired)
    if hasattr(scores, "var_e"):  # VarianceComponents (fitted once; only its var_e is read)
        return _fitted_variance(scores, selector, paired)
    raise ParameterError(f"expected a ScoreMatrix or fitted VarianceComponents, got {type(scores).__name__}",
                         parameter="scores")


# ----------------------------------------------------------------------------- the solvers

def _quantiles(x: np.ndarray, what: str) -> dict:
    return {"quantity": what, "pairs": int(x.size), "min": float(np.min(x)),
            "median": float(np.median(x)), "p90": float(np.percentile(x, 90)),
            "max": float(np.max(x))}


def _solve_n(d: _Design, delta: float, power: float) -> int:
    start = 2 if d.method != "sakai" else ceil_start(float(sakai_initial_n(
        d.design, delta, d.sigma2, alpha=d.a_test, power=power, systems=d.systems)))
    n = smallest_n(lambda k: bool(d.power(k, delta) >= power), start)
    if n is None:
        s2 = d.sigma2
        raise ParameterError(f"no topic count up to {N_MAX:,} reaches power {power} for a difference "
                             f"of {delta:g} with variance {s2:.4g} (the difference is "
                             f"{delta / math.sqrt(s2):.3g} standard deviations)", parameter="min_diff")
    return n


def _solve_delta(d: _Design, n: int, power: float) -> float:
    def short(x: float) -> float:
        return float(d.power(n, x)) - power

    hi = math.sqrt(d.sigma2)
    while short(hi) < 0:
        hi *= 2
        if hi > 1e6 * math.sqrt(d.sigma2):
            raise ParameterError(f"no difference reaches power {power} with {n} topics", parameter="power")
    return float(optimize.brentq(short, 0.0, hi, xtol=1e-12, rtol=1e-12))


def _per_pair_n(d: _Design, min_diff: float, power: float, v: np.ndarray) -> dict:
    ns = smallest_n_vec(lambda k: d.power(k, min_diff, v) >= power, v.size)
    if d.method == "sakai":  # stepping up from ceil(n') = max(ceil(n'), smallest n)
        ns = np.maximum(ns, np.ceil(sakai_initial_n(d.design, min_diff, v, alpha=d.a_test, power=power,
                                                    systems=d.systems) - 1e-9))
    return _quantiles(ns, "n_topics")


def _power_design(d: _Design, n_topics: int | None, min_diff: float | None, power: float | None,
                  solved: str) -> SizeResult:
    """Solve a t or F design for ``solved``."""
    v = d.per_pair_var
    per_pair = prev = n_init = None
    if solved == "n_topics":
        assert min_diff is not None and power is not None       # (set by _check_unknown)
        n_topics = _solve_n(d, min_diff, power)
        prev = float(d.power(n_topics - 1, min_diff)) if n_topics > 2 else None
        per_pair = None if v is None else _per_pair_n(d, min_diff, power, v)
        if d.method == "sakai":
            n_init = float(sakai_initial_n(d.design, min_diff, d.sigma2, alpha=d.a_test, power=power,
                                           systems=d.systems))
    elif solved == "min_diff":
        assert n_topics is not None and power is not None
        min_diff = _solve_delta(d, n_topics, power)
        # power depends on delta / sigma only: the detectable difference scales with sigma
        per_pair = None if v is None else _quantiles(min_diff * np.sqrt(v / d.sigma2), "min_diff")
    elif v is not None:
        per_pair = _quantiles(np.asarray(d.power(n_topics, min_diff, v), dtype=float), "power")
    achieved = float(d.power(n_topics, min_diff))
    return d.result(solved_for=solved, n_topics=int(n_topics), min_diff=float(min_diff),  # type: ignore[arg-type]
                    power=achieved, target_power=power if solved != "power" else None,
                    power_at_n_minus_1=prev, width=None, target_width=None, per_pair=per_pair, n_initial=n_init)


def _check_width(width: Any) -> float | None:
    if width is None:
        return None
    width = float(width)
    if not (width > 0 and math.isfinite(width)):
        raise ParameterError(f"must be positive, got {width} (a width of 0 needs infinitely "
                             "many topics)", parameter="width")
    return width


def _ci_solve_n(d: _Design, width: float) -> tuple[int, float | None, dict | None]:
    """The smallest n whose expected width is at most ``width``; the width at n - 1; per pair."""
    n0 = 2 if d.method != "sakai" else ceil_start(float(sakai_initial_n("ci", width, d.sigma2, alpha=d.a_test)))
    n = smallest_n(lambda k: bool(expected_width(k, d.sigma2, d.a_test) <= width), n0)
    if n is None:
        raise ParameterError(f"no topic count up to {N_MAX} gives width {width}", parameter="width")
    prev = float(expected_width(n - 1, d.sigma2, d.a_test)) if n > 2 else None
    per_pair = None
    v = d.per_pair_var
    if v is not None:
        ns = smallest_n_vec(lambda k: expected_width(k, v, d.a_test) <= width, v.size)
        if d.method == "sakai":
            ns = np.maximum(ns, np.ceil(sakai_initial_n("ci", width, v, alpha=d.a_test) - 1e-9))
        per_pair = _quantiles(ns, "n_topics")
    return n, prev, per_pair


def _ci_design(d: _Design, width_in: Any, n_topics: int | None) -> SizeResult:
    if width_in is None and n_topics is None:
        raise ParameterError("set the width cap (or n_topics to get the expected width)", parameter="width")
    width = _check_width(width_in)
    n_init = None
    if n_topics is None:
        assert width is not None
        n_topics, prev, per_pair = _ci_solve_n(d, width)
        solved, target = "n_topics", width
        if d.method == "sakai":
            n_init = float(sakai_initial_n("ci", width, d.sigma2, alpha=d.a_test))
    else:
        prev, solved, target = None, "width", None
        v = d.per_pair_var
        per_pair = None if v is None else _quantiles(expected_width(n_topics, v, d.a_test), "width")
    w = float(expected_width(n_topics, d.sigma2, d.a_test))
    return d.result(solved_for=solved, n_topics=int(n_topics), min_diff=None, power=None, target_power=None,
                    power_at_n_minus_1=None, width=w, target_width=target, per_pair=per_pair,
                    width_at_n_minus_1=prev, n_initial=n_init)


def _solve_design(*, design: str, min_diff: Any, sigma2: Any, scores: Any, variance: str, alpha: float,
                  power: Any, n_topics: Any, systems: Any, exact: bool, approx: str | None, correction: str | None,
                  width: Any) -> SizeResult:
    """The design solved, without the interval on n."""
    method, correction = _check_choices(design, approx, exact, correction)
    alpha = check_alpha(alpha)
    systems = _check_systems(systems, design, correction)
    K = systems * (systems - 1) // 2 if correction else 1
    n_topics = _check_n_topics(n_topics)
    s2, vname, per_pair_var = _resolve_variance(sigma2, scores, variance, design)
    d = _Design(design, method, alpha, alpha / K, correction, K, systems, s2, vname, per_pair_var)
    _check_ci_options(design, power, width, min_diff)
    if design == "ci":
        return _ci_design(d, width if width is not None else min_diff, n_topics)
    solved, min_diff, power = _check_unknown(n_topics, min_diff, power, d.a_test)
    return _power_design(d, n_topics, min_diff, power, solved)


def _planning_of(per_pair: np.ndarray, kind: str) -> float:
    """The design's planning variance from the pairs' variances: for the ``pair`` selector the
    median over the pairs with any variance (identical systems left out; 0 when none has any),
    else the one value every pair shares."""
    if kind == "pair":
        pv = per_pair[per_pair > 0]
        return float(np.median(pv)) if pv.size else 0.0
    return float(per_pair[0])


def _design_sigma2(vals: np.ndarray, selector: str, paired: bool) -> float:
    """The design's planning variance of ``vals`` (a leave-out fit of the jackknife interval)."""
    kind, _ = parse_selector(selector, parameter="variance")
    return _planning_of(planning_variances(vals, selector, design=_pair_design(paired)), kind)


def _with_interval(res: SizeResult, scores: ScoreMatrix, selector: str, level: float,
                   solve: Callable[[float], int]) -> SizeResult:
    """``res`` with the interval on its solved n: the jackknife interval of the planning variance
    (:mod:`planner.plan.jackknife`), each end solved by ``solve`` (the same design with that
    variance given)."""
    vals = complete_values(scores)
    paired = res.design in PAIRED_DESIGNS
    f = variance_factors(lambda keep: _design_sigma2(vals[:, keep], selector, paired), vals.shape[1], level)

    def end(factor: float) -> int | None:
        v = res.sigma2 * factor
        return None if not np.isfinite(v) else 2 if v <= 0 else solve(v)

    return replace(res, interval=Interval(end(f.low), end(f.high), level, IntervalMethod.ANALYTIC, 0,
                                          f.note(f"{selector} variance")))


def topic_set_size(*, design: str = "paired-t", min_diff: float | None = None, sigma2: float | None = None,
                   scores: Any = None, variance: str = "pooled", alpha: float = 0.05, power: float | None = None,
                   n_topics: int | None = None, systems: int = 2, exact: bool = True,
                   approx: str | None = None, correction: str | None = None,
                   width: float | None = None, n_resamples: int = 0,
                   confidence_level: float = 0.95) -> SizeResult:
    """Solve a classical design for whichever of ``n_topics``, ``min_diff``, ``power`` is unset.

    Parameters
    ----------
    design : {"paired-t", "two-sample", "anova", "ci"}, optional
        The design (formulas in :mod:`planner.plan`).
    min_diff : float, optional
        Minimum detectable difference (anova: range best - worst). For ``ci`` it is accepted
        as the width cap when ``width`` is not given.
    sigma2 : float, optional
        The variance the design needs, given directly: the variance of per-topic differences
        for paired-t/ci, the within-system variance for two-sample/anova. Give it or ``scores``.
    scores : ScoreMatrix or VarianceComponents, optional
        The collection the variance is estimated from (as :func:`size_for_target`'s first
        argument), or its fitted ``VarianceComponents`` (used as fitted, not refitted; the
        ``pooled`` variance only).
    variance : str, optional
        How the variance is estimated from ``scores`` (the selector of
        :func:`size_for_target` and :func:`planner.predict`): ``pooled`` | ``pair`` |
        ``within-system`` | ``percentile:q``; ``pair`` plans with the median pair and reports
        per-pair quantiles.
    alpha : float, optional
        Significance level (family-wise with a correction); ``1 - alpha`` intervals for ci.
    power : float, optional
        Target power (``1 - beta``).
    n_topics : int, optional
        Topic count (per system for two-sample).
    systems : int, optional
        m, for anova and for the multiple-comparison correction.
    exact, approx : optional
        ``approx="sakai"`` (or ``exact=False``) uses Sakai's normal approximations.
    correction : {"bonferroni", "holm"}, optional
        Over all ``m (m-1)/2`` pairs (t designs and ci).
    width : float, optional
        For ``ci``, the largest acceptable expected interval width.
    n_resamples, confidence_level : optional
        When ``scores`` is a ScoreMatrix and n is solved, any ``n_resamples`` above 0 asks for the
        ``confidence_level`` interval on n: the jackknife interval of the planning variance
        (re-estimated with each topic left out, :mod:`planner.plan.jackknife`), the design solved
        at each end. Nothing is drawn. 0 (default) skips it.

    Returns
    -------
    SizeResult

    Raises
    ------
    ParameterError
        Bad or impossible inputs (power of 1, width of 0, none or several unknowns, a target no
        n up to 10^7 meets).

    Examples
    --------
    >>> topic_set_size(design="paired-t", min_diff=0.05, sigma2=0.02, power=0.8).n_topics
    65
    >>> round(topic_set_size(design="paired-t", min_diff=0.05, sigma2=0.02, n_topics=65).power, 3)
    0.802
    >>> topic_set_size(design="ci", width=0.1, sigma2=0.02).n_topics
    33
    >>> import planner
    >>> m = planner.datasets.load("dl19-passage", measure="nDCG@10")
    >>> r = topic_set_size(min_diff=0.05, power=0.8, scores=m, variance="pair", n_resamples=50)
    >>> r.variance, r.interval.how.value
    ('pair (median over pairs, each median-unbiased)', 'analytic')
    """
    def solve(sigma2_: Any, scores_: Any, n_topics_: Any) -> SizeResult:
        return _solve_design(design=design, min_diff=min_diff, sigma2=sigma2_, scores=scores_, variance=variance,
                             alpha=alpha, power=power, n_topics=n_topics_, systems=systems, exact=exact,
                             approx=approx, correction=correction, width=width)

    res = solve(sigma2, scores, n_topics)
    n_resamples = check_interval_resamples(n_resamples)
    if n_resamples == 0 or res.solved_for != "n_topics" or not isinstance(scores, ScoreMatrix):
        return res
    # each end: the same design with the variance at that end given
    return _with_interval(res, scores, variance, check_prob(confidence_level, "confidence_level"),
                          lambda s2: solve(s2, None, None).n_topics)
