"""The registry: every prediction method and every planning target, and what each supports.

This module is the one owner of these facts. Argument checks, command-line choice lists,
the study schema's enums and the words of messages read them from here; no other module
writes a tuple of method or target names.

A *method* predicts what ``n`` topics buy (:func:`planner.predict`) and solves for the
``n`` that meets a target (:func:`planner.size_for_target`). A *target* is a statistic of
that prediction with a direction and a range of values that say something.

Examples
--------
>>> from planner import methods
>>> methods.DEFAULT_METHOD
'deconvolved'
>>> methods.method("bootstrap").random
True
>>> methods.target("kendall_tau").direction
'>='
>>> methods.target("swap_rate").met(0.04, 0.05)
True
"""

from __future__ import annotations

import difflib
import enum
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .errors import ParameterError

__all__ = [
    "DEFAULT_BUDGET_TARGET",
    "DEFAULT_METHOD",
    "DEFAULT_VARIANCE",
    "LEVELS_OFF",
    "METHODS",
    "PAIR_RATES",
    "TARGETS",
    "VARIANCE_SELECTORS",
    "Engine",
    "Method",
    "PredictiveSpec",
    "Target",
    "levels_off",
    "method",
    "method_names",
    "suggest",
    "target",
    "target_names",
]


class Engine(enum.Enum):
    """How a method computes its statistics."""

    #: closed-form normal model with the observed differences plugged in
    ANALYTIC = "analytic"
    #: closed form, averaged over the posterior of each pair's true difference
    PREDICTIVE = "predictive"
    #: resampling the collection's topics (bootstrap with, subsample without replacement)
    RESAMPLING = "resampling"
    #: score matrices simulated from the fitted variance components
    PARAMETRIC = "parametric"


@dataclass(frozen=True)
class PredictiveSpec:
    """What a pilot-aware (predictive) method assumes.

    Attributes
    ----------
    prior : str
        Prior of the pair differences: ``"normal"``, ``"npmle"``, ``"mixture"`` or ``"scale"``
        (on standardized differences: the deconvolved method).
    variance : str
        Each pair's variance: ``"pair"``, ``"shrunk"`` or ``"pooled"``.
    integrate : bool
        Average over each pair's variance (kurtosis-adjusted degrees of freedom).
    """

    prior: str
    variance: str
    integrate: bool

    @property
    def histogram_rates(self) -> bool:
        """True when the mean rates of a collection can be computed on the prior's histogram of
        standardized differences (:func:`planner.simulate.rates.scale_batch_rates`), as the
        resamples of an interval or a prediction band are: the scale prior with each pair's own,
        plugged-in variance."""
        return self.prior == "scale" and self.variance == "pair" and not self.integrate

    @property
    def close_apart(self) -> bool:
        """True when the prior is fitted apart on the close pairs where the data say so
        (:func:`planner.simulate.priors.split_close`), in the collection and then in each of its
        topic resamples: the scale prior."""
        return self.prior == "scale"

    @property
    def unseen_mass(self) -> bool:
        """True when an interval on n of a pair-rate count takes the upper end at least to the count
        under the most mass near zero the pilot allows (:func:`planner.plan.search.allow_unseen`): the
        scale prior, whose maximum-likelihood weights put none where a small pilot cannot see it."""
        return self.prior == "scale"


@dataclass(frozen=True)
class Method:
    """One prediction method and what it supports.

    Attributes
    ----------
    name : str
        The name users write (``method=`` in Python, ``--method``, a study's ``method:``).
    engine : Engine
        How it computes.
    summary : str
        One line for help texts and reports.
    variances : tuple of str
        The ``variance=`` selectors it accepts; the first is its default. ``"empirical"``
        (the resampled data's own) and ``"pooled"`` alone mean the choice is fixed.
    strata : bool
        Supports stratified sampling (``strata`` other than ``"uniform"``).
    interval_on_n : bool
        :func:`planner.size_for_target` can give it an interval on n by re-solving on
        topic resamples.
    variants : bool
        Solves the topics-against-query-variants trade-off.
    spec : PredictiveSpec or None
        The assumptions of a predictive method.
    disjoint : bool
        Draws pairs of disjoint topic sets without replacement (Voorhees & Buckley's
        subsample): counts up to ``T / 2`` are simulated, larger ones extrapolated, and
        the swap rate is the share of set pairs that disagree.
    """

    name: str
    engine: Engine
    summary: str
    variances: tuple[str, ...]
    strata: bool
    interval_on_n: bool
    variants: bool
    spec: PredictiveSpec | None = None
    disjoint: bool = False

    @property
    def random(self) -> bool:
        """True when the method draws random numbers (and so records a seed)."""
        return self.engine in (Engine.RESAMPLING, Engine.PARAMETRIC)

    @property
    def closed_form(self) -> bool:
        """True when the method needs no random numbers."""
        return not self.random

    @property
    def default_variance(self) -> str:
        """The variance selector used when none is given."""
        return self.variances[0]

    @property
    def deconvolved(self) -> bool:
        """True when the pair rates come from the deconvolved prior (``"scale"``), whose counts do
        not drift with the size of the collection they are learnt from."""
        return self.spec is not None and self.spec.prior == "scale"


#: the variance selectors of the closed-form model (``percentile:q`` takes a number)
VARIANCE_SELECTORS = ("pair", "pooled", "within-system", "percentile")
DEFAULT_VARIANCE = "pair"


def _predictive(name: str, summary: str, prior: str, variance: str, integrate: bool, *,
                variants: bool = False) -> Method:
    return Method(name, Engine.PREDICTIVE, summary, ("pair",), strata=False, interval_on_n=True,
                  variants=variants, spec=PredictiveSpec(prior, variance, integrate))


#: every method, the default first
METHODS: dict[str, Method] = {m.name: m for m in (
    _predictive("predictive", "posterior predictive over each pair's true difference (normal prior)",
                "normal", "pair", False, variants=True),
    Method("analytic", Engine.ANALYTIC, "normal model with the observed differences plugged in",
           VARIANCE_SELECTORS, strata=True, interval_on_n=True, variants=True),
    Method("bootstrap", Engine.RESAMPLING, "topics resampled with replacement",
           ("empirical",), strata=True, interval_on_n=False, variants=False),
    Method("subsample", Engine.RESAMPLING, "disjoint topic subsets drawn without replacement",
           ("empirical",), strata=True, interval_on_n=False, variants=False, disjoint=True),
    Method("parametric", Engine.PARAMETRIC, "score matrices simulated from the variance components",
           ("pooled",), strata=False, interval_on_n=False, variants=False),
    _predictive("predictive-integrated", "predictive, averaged over each pair's variance",
                "normal", "pair", True),
    _predictive("predictive-shrunk", "predictive with variances shrunk towards the pooled one",
                "normal", "shrunk", False, variants=True),
    _predictive("predictive-pooled", "predictive with one pooled variance", "normal", "pooled", False,
                variants=True),
    _predictive("predictive-pair", "predictive with each pair's own variance (same as predictive)",
                "normal", "pair", False, variants=True),
    _predictive("predictive-npmle", "predictive with a nonparametric (NPMLE) prior", "npmle", "pair", False),
    _predictive("predictive-mixture", "predictive with a spike-and-normal mixture prior",
                "mixture", "pair", False),
    _predictive("deconvolved", "predictive with a deconvolved prior on standardized differences (scale "
                "mixture): unbiased in the collection's size", "scale", "pair", False, variants=True),
)}

#: the method ``predict``, ``size``, ``budget`` and studies use when none is named: the
#: one ``planner validate`` measured closest to held-out swap rates (docs/validation.md)
DEFAULT_METHOD = "deconvolved"


def runs_low_far_out(method: Method, target: Target) -> bool:
    """True when this method's count for this target, and its interval on n, run low far beyond the
    collection's topics: the swap, reversal and Kendall tau counts of every method but a
    deconvolved one. An n0-topic collection sees each pair's true difference with noise of
    variance ``1 / n0``, so close pairs look further apart than they are, and a plug-in or
    normal-prior count shrinks with ``n0`` (measured: docs/research/calibration.md). Power and
    interval width read only the pairs' variances, which ``n0`` does not bias."""
    return target.pair_rate and not method.deconvolved


#: why a pilot-aware method's reversal rate stops falling (the ``why`` of ``planner size``)
LEVELS_OFF = ("a new topic set's order tends to the true order, so the chance that it reverses the "
              "collection's own order levels off at the chance that the collection orders a pair wrongly: "
              "no topic count goes below it. Judging more topics in the collection lowers it; swap_rate "
              "compares two new topic sets instead")


def levels_off(method: Method, target: Target) -> bool:
    """True when this method's statistic for this target levels off above 0 as the topics grow: a
    pilot-aware method's reversal rate, which keeps the chance that the collection's own order of a
    pair is wrong (:data:`LEVELS_OFF`; measured: docs/research/calibration.md, "The reversal
    target"). The plug-in methods take the collection's order as the truth, so theirs falls to 0."""
    return target.against_collection and method.spec is not None


@dataclass(frozen=True)
class Target:
    """A planning target: a statistic of the prediction at n topics, a direction and a range.

    Attributes
    ----------
    name : str
        The name users write (``--target NAME:VALUE``, a study's ``target:``).
    statistic : str
        The prediction row's column it reads (``Curve.to_frame()``).
    direction : str
        ``"<="`` when the statistic must be at most the value, ``">="`` at least.
    low, high : float
        The values that say something lie strictly between them.
    words : str
        The range in words, for messages and the schema.
    pair_rate : bool
        An ordering rate over system pairs (swap, reversal, Kendall tau): a predictive
        method models it; a stack of collections with their own systems cannot answer it.
    reliability : bool
        A generalizability coefficient of the variance components (no resampling).
    needs_min_diff : bool
        Defined at a true difference ``min_diff``.
    solvable : bool
        :func:`planner.size_for_target` solves for it; the others are read off a curve only
        (:func:`planner.topics_needed`, a study's scenario table).
    at_low, at_high : str
        The message of :meth:`check_value` for a value at or below ``low`` (at or above
        ``high``), saying why it is no target; a template with ``{name}``, ``{words}`` and
        ``{value}``. Empty: the plain range message.
    description : str
        What the statistic is, in one line (:meth:`describe` fills in ``{level}``, ``{alpha}``
        and ``{min_diff}``).
    per_pair : bool
        A rate each pair of systems has on its own (swap, reversal): the pilot-aware rates and
        ``planner validate`` compute these; Kendall tau is derived from the swap rate.
    topic_component : bool
        A reliability coefficient whose error term includes the topic component ``var_t``
        (Phi does; Erho2 does not).
    against_collection : bool
        Compares a new topic set with the collection's own observed order (the reversal rate),
        not with another new set: its count depends on the collection's size by definition
        (:func:`levels_off`).
    variance_count : bool
        Its count rises with one planning variance alone (the interval width: a quantile of the
        pairs' variances), so :func:`planner.size_for_target` solves it on that variance (each
        pair's made median-unbiased, :func:`planner.plan.pairs.planning_variances`, as a design
        does) and makes its interval on n on it with the jackknife
        (:mod:`planner.plan.jackknife`), not from topic resamples.
    """

    name: str
    statistic: str
    direction: str
    low: float
    high: float
    words: str
    pair_rate: bool = False
    reliability: bool = False
    needs_min_diff: bool = False
    solvable: bool = True
    at_low: str = ""
    at_high: str = ""
    description: str = ""
    per_pair: bool = False
    topic_component: bool = False
    against_collection: bool = False
    variance_count: bool = False

    def describe(self, *, alpha: float = 0.05, min_diff: float = 0.05) -> str:
        """:attr:`description` with the level, ``alpha`` and ``min_diff`` filled in.

        Examples
        --------
        >>> target("ci_width").describe(alpha=0.1)
        "median over system pairs of the width of the 90% interval of the pair's mean difference"
        """
        return self.description.format(level=f"{1 - alpha:.0%}", alpha=f"{alpha:g}", min_diff=f"{min_diff:g}")

    @property
    def resampled_interval(self) -> bool:
        """True when :func:`planner.size_for_target`'s interval on n comes from topic resamples
        (random: it takes a seed); the reliability coefficients' D-study interval and a variance
        count's jackknife interval draw nothing."""
        return not (self.reliability or self.variance_count)

    @property
    def increasing(self) -> bool:
        """True when more topics raise the statistic."""
        return self.direction == ">="

    def met(self, statistic: float, value: float) -> bool:
        """True when ``statistic`` meets the target ``value``."""
        return statistic >= value if self.increasing else statistic <= value

    def check_value(self, value: object, *, parameter: str = "value") -> float:
        """``value`` as a float in the target's range, or a :class:`ParameterError` saying why.

        Examples
        --------
        >>> target("swap_rate").check_value(0.7)   # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        planner.errors.ParameterError: value: a swap rate is at most 0.5 (...), so a target of 0.7 says nothing
        """
        if isinstance(value, bool):
            raise ParameterError(f"expected a number for a {self.name} target, got {value!r}", parameter=parameter)
        try:
            v = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise ParameterError(f"expected a number for a {self.name} target, got {value!r}",
                                 parameter=parameter) from None
        if not (self.low < v < self.high):
            why = (self.at_low if v <= self.low else self.at_high) or _OUT_OF_RANGE
            raise ParameterError(why.format(name=self.name, words=self.words, value=value), parameter=parameter)
        return v


def _range(low: float, high: float, note: str = "") -> tuple[float, float, str]:
    words = f"a number > {low:g}" if math.isinf(high) else f"a number in ({low:g}, {high:g})"
    return low, high, words + note


#: every target, in the order messages list them
_OUT_OF_RANGE = "a {name} target must be {words}, got {value!r}"


def _limit(why: str) -> str:
    return _OUT_OF_RANGE + f" ({why})"


_ANY_N = _limit("any topic count meets it")
_ONE = _limit("1 needs infinitely many topics")
_ZERO = _limit("0 needs infinitely many topics")

TARGETS: dict[str, Target] = {t.name: t for t in (
    Target("swap_rate", "swap_rate_mean", "<=", *_range(0, 0.5, " (a swap rate is at most 0.5)"),
           pair_rate=True, at_low=_ZERO, per_pair=True,
           at_high="a swap rate is at most 0.5 (two independent sets disagree with probability 2p(1-p)), so a "
                   "target of {value!r} says nothing",
           description="mean over system pairs of the chance that two independent topic sets order the "
                       "pair differently"),
    Target("reversal_rate", "reversal_rate_mean", "<=", *_range(0, 1), pair_rate=True, at_low=_ZERO,
           per_pair=True, against_collection=True,
           description="mean over system pairs of the chance that a topic set orders the pair "
                       "differently from the collection"),
    Target("kendall_tau", "kendall_tau_mean", ">=", *_range(-1, 1), pair_rate=True, at_low=_ANY_N, at_high=_ONE,
           description="expected Kendall tau between the system rankings of two independent topic sets"),
    Target("ci_width", "ci_width_median", "<=", *_range(0, math.inf), variance_count=True,
           at_low=_limit("a width of 0 needs infinitely many topics"),
           description="median over system pairs of the width of the {level} interval of the pair's mean "
                       "difference"),
    Target("power", "power_mean", ">=", *_range(0, 1), needs_min_diff=True, at_low=_ANY_N, at_high=_ONE,
           description="mean over system pairs of the power of the paired t-test (alpha {alpha}) to "
                       "detect a difference of {min_diff}"),
    Target("erho2", "erho2", ">=", *_range(0, 1), reliability=True, at_low=_ANY_N, at_high=_ONE,
           description="generalizability coefficient Erho2 of the D-study (the variance components)"),
    Target("phi", "phi", ">=", *_range(0, 1), reliability=True, at_low=_ANY_N, at_high=_ONE, topic_component=True,
           description="dependability coefficient Phi of the D-study (the variance components)"),
    Target("ci_width_p90", "ci_width_p90", "<=", *_range(0, math.inf), solvable=False,
           description="90th percentile over system pairs of the width of the {level} interval of the "
                       "pair's mean difference"),
    Target("discriminative_power", "discriminative_power", ">=", *_range(0, 1), needs_min_diff=True,
           solvable=False,
           description="share of system pairs whose paired t-test (alpha {alpha}) is significant"),
)}

#: the target ``planner budget`` (and :func:`planner.plan.budget`'s callers) solve when none is given
DEFAULT_BUDGET_TARGET = ("swap_rate", 0.05)

#: the per-pair rates (swap, reversal), in registry order
PAIR_RATES = tuple(t.name for t in TARGETS.values() if t.per_pair)


def closest(name: object, choices: Iterable[str]) -> str | None:
    """The one of ``choices`` that ``name`` most likely meant (same letters in another case
    first, then difflib's closest), or None.

    Examples
    --------
    >>> closest("ndcg", ["AP", "nDCG"]), closest("bootsrap", ["bootstrap"]), closest("x", ["AP"])
    ('nDCG', 'bootstrap', None)
    """
    if not isinstance(name, str):
        return None
    options = list(choices)
    folded = {c.lower(): c for c in options}
    if name.lower() in folded:
        return folded[name.lower()]
    close = difflib.get_close_matches(name, options, n=1, cutoff=0.6)
    return close[0] if close else None


def suggest(name: object, choices: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the closest of ``choices`` (:func:`closest`), or ``""``."""
    near = closest(name, choices)
    return "" if near is None else f" (did you mean {near!r}?)"


def method_names(where: Callable[[Method], bool] | None = None) -> tuple[str, ...]:
    """The names of the methods for which ``where`` is true (all without it), registry order."""
    return tuple(m.name for m in METHODS.values() if where is None or where(m))


def target_names(where: Callable[[Target], bool] | None = None) -> tuple[str, ...]:
    """The names of the targets for which ``where`` is true (all without it), registry order."""
    return tuple(t.name for t in TARGETS.values() if where is None or where(t))


def method(name: object, *, parameter: str = "method",
           where: Callable[[Method], bool] | None = None, need: str = "") -> Method:
    """The registered method called ``name``, or a :class:`ParameterError` naming ``parameter``.

    Parameters
    ----------
    name : str
        A method name.
    parameter : str, optional
        The argument, option or key the error names.
    where : callable, optional
        A condition the method must meet (for example ``lambda m: m.variants``).
    need : str, optional
        What ``where`` asks for, in words, for the error (``"the variant trade-off"``).

    Examples
    --------
    >>> method("analytic").engine
    <Engine.ANALYTIC: 'analytic'>
    >>> method("bootsrap")
    Traceback (most recent call last):
    ...
    planner.errors.ParameterError: method: unknown method 'bootsrap' (did you mean 'bootstrap'?); expected one of ...
    """
    allowed = method_names(where)
    if not isinstance(name, str) or name not in METHODS:
        raise ParameterError(f"unknown method {name!r}{suggest(name, METHODS)}; expected one of "
                             + ", ".join(allowed), parameter=parameter)
    if name not in allowed:
        raise ParameterError(f"method {name!r} does not support {need or 'this'}; use one of "
                             + ", ".join(allowed), parameter=parameter)
    return METHODS[name]


def target(name: object, *, parameter: str = "target",
           where: Callable[[Target], bool] | None = None, need: str = "") -> Target:
    """The registered target called ``name``, or a :class:`ParameterError` naming ``parameter``.

    Examples
    --------
    >>> target("power").needs_min_diff
    True
    """
    allowed = target_names(where)
    if not isinstance(name, str) or name not in TARGETS:
        raise ParameterError(f"unknown target {name!r}{suggest(name, TARGETS)}; expected one of "
                             + ", ".join(allowed), parameter=parameter)
    if name not in allowed:
        raise ParameterError(f"target {name!r} is not available for {need or 'this'}; use one of "
                             + ", ".join(allowed), parameter=parameter)
    return TARGETS[name]
