"""Stacked strata: several collections, each a stratum with its own systems, planned as one.

A *stack* is a topic population made of K collections (strata) whose systems may differ, so
no pair of systems is scored on every stratum. What can still be planned is what depends on
the strata's variance components only: the width of a pair's stratified mean difference,
the power of its test, and the generalizability coefficients of the weighted components.

With weights ``W_k = T_k / sum T`` (each stratum's share of the topics) and
``sigma_k^2 = 2 var_e,k`` (the mean over pairs of the variance of per-topic differences, an
identity of the ANOVA), the stratified mean difference of a pair over ``n_k`` topics per
stratum has variance ``V = sum_k W_k^2 sigma_k^2 / n_k``. For ``n`` topics this module gives

- the proportional (``n_k ∝ W_k``) and Neyman-optimal (``n_k ∝ W_k sigma_k``) allocations
  (:func:`stratum_counts`, at least 2 topics per stratum);
- the interval width ``2 t_{1-alpha/2}(n - K) sqrt(V)`` and the power of the two-sided test
  at ``min_diff`` (normal approximation);
- Erho2 and Phi of the W-weighted components;
- the width of uniform sampling from the mixed population with the between-strata spread of
  a pair's effect set to 0: a lower bound, since that spread cannot be estimated without
  systems common to the strata;
- the smallest ``n`` meeting a target (:meth:`StackedStrata.smallest_n`), its interval on n
  (:func:`jackknife_intervals`: the stratified jackknife of the one ratio of components each
  count rises with) and its topic resampling distribution, topics resampled within each
  stratum and each stratum's ANOVA re-fitted (:func:`resampled_n`).

Examples
--------
>>> import numpy as np
>>> from planner.plan import StackedStrata
>>> st = StackedStrata.from_components([(0.002, 0.02, 0.010), (0.001, 0.03, 0.020)], [40, 60],
...                                    alpha=0.05, min_diff=0.05)
>>> st.weights.tolist()
[0.4, 0.6]
>>> st.smallest_n("power", 0.8)
101
>>> st.at(101).n_proportional.tolist()
[40, 61]
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import special, stats

from .. import methods
from ..results import Interval, IntervalMethod, ResultMixin
from ..simulate import allocate_counts
from ..variance import anova_components
from .jackknife import factors_from_strata, leave_out_masks
from .search import smallest_n as _smallest_n

__all__ = ["STACK_TARGETS", "StackedPoint", "StackedStrata", "jackknife_intervals", "resampled_n",
           "stratum_counts"]

#: the targets a stack answers: those that depend on the strata's components only (no pair rates,
#: which need systems common to all strata)
STACK_TARGETS = methods.target_names(lambda t: t.solvable and not t.pair_rate)


def stratum_counts(n: int, share: Sequence[float] | np.ndarray) -> np.ndarray:
    """``n`` topics across strata in proportion to ``share``, at least 2 per stratum.

    The rounding is :func:`planner.simulate.allocate_counts` (largest remainder); below
    ``2 K`` topics every stratum gets 2.

    Parameters
    ----------
    n : int
        Topics in all.
    share : array_like of float
        Each stratum's share (need not sum to 1).

    Returns
    -------
    numpy.ndarray of int
        Topics per stratum.

    Examples
    --------
    >>> stratum_counts(100, [43 / 97, 54 / 97]).tolist()
    [44, 56]
    >>> stratum_counts(3, [0.9, 0.1]).tolist()
    [2, 2]
    """
    share = np.asarray(share, dtype=float)
    if n < 2 * len(share):
        return np.full(len(share), 2)
    return _allocate_cached(int(n), tuple(share.tolist())).copy()


@functools.lru_cache(maxsize=4096)
def _allocate_cached(n: int, share: tuple[float, ...]) -> np.ndarray:
    return allocate_counts(n, list(share))


@functools.lru_cache(maxsize=4096)
def _t_quantile(q: float, df: int) -> float:
    return float(stats.t.ppf(q, df))


@dataclass(frozen=True, repr=False)
class StackedPoint(ResultMixin):
    """The stack at ``n`` topics.

    Attributes
    ----------
    n_topics : int
        Topics in all.
    n_proportional, n_optimal : numpy.ndarray of int
        Topics per stratum, proportional and Neyman-optimal.
    width_proportional, width_optimal : float
        Interval width of a pair's stratified mean difference under each allocation.
    width_uniform_lower_bound : float
        Width under uniform sampling of the mixed population, between-strata spread 0.
    power_proportional, power_optimal : float
        Power of the two-sided test at ``min_diff`` under each allocation.
    erho2, phi : float or None
        Generalizability coefficients of the W-weighted components (``None`` when undefined).
    """

    n_topics: int
    n_proportional: np.ndarray
    n_optimal: np.ndarray
    width_proportional: float
    width_optimal: float
    width_uniform_lower_bound: float
    power_proportional: float
    power_optimal: float
    erho2: float | None
    phi: float | None

    _repr_fields = ("n_topics", "width_proportional", "power_proportional", "erho2", "phi")


@dataclass(frozen=True, repr=False)
class StackedStrata(ResultMixin):
    """Strata of a stack: weights and per-stratum variance components.

    Attributes
    ----------
    weights : numpy.ndarray
        ``W_k``, each stratum's share of the topics.
    var_s, var_t, var_e : numpy.ndarray
        Each stratum's system, topic and residual variance components.
    alpha : float
        Test level; intervals have coverage ``1 - alpha``.
    min_diff : float
        The true difference the power is computed at.
    """

    weights: np.ndarray
    var_s: np.ndarray
    var_t: np.ndarray
    var_e: np.ndarray
    alpha: float = 0.05
    min_diff: float = 0.05

    _repr_fields = ("weights", "alpha", "min_diff")

    @classmethod
    def from_components(cls, components: Iterable, n_topics: Sequence[int], *, alpha: float = 0.05,
                        min_diff: float = 0.05) -> StackedStrata:
        """The strata from each stratum's components and topic count.

        Parameters
        ----------
        components : iterable
            Per stratum, an object with ``var_s``, ``var_t``, ``var_e`` (for example
            :class:`planner.variance.VarianceComponents`) or a tuple of the three.
        n_topics : sequence of int
            Topics per stratum; the weights are their shares.
        alpha, min_diff : float
            Test level and the difference the power is computed at.

        Returns
        -------
        StackedStrata

        Examples
        --------
        >>> StackedStrata.from_components([(0.01, 0.02, 0.03)] * 2, [10, 30]).weights.tolist()
        [0.25, 0.75]
        """
        comps = [c if isinstance(c, tuple) else (c.var_s, c.var_t, c.var_e) for c in components]
        vs, vt, ve = (np.array([c[i] for c in comps], dtype=float) for i in range(3))
        w = np.array(n_topics, dtype=float) / sum(n_topics)
        return cls(w, vs, vt, ve, alpha=alpha, min_diff=min_diff)

    @property
    def sigma2(self) -> np.ndarray:
        """``sigma_k^2 = 2 var_e,k``: the variance of a pair's per-topic differences per stratum."""
        return np.array([2 * v for v in self.var_e])

    def weighted(self, component: str) -> float:
        """The W-weighted mean of one component (``"var_s"``, ``"var_t"`` or ``"var_e"``)."""
        return float(np.sum(self.weights * getattr(self, component)))

    def erho2(self, n: float) -> float | None:
        """Erho2 of the W-weighted components at ``n`` topics."""
        vs, ve = self.weighted("var_s"), self.weighted("var_e")
        return vs / (vs + ve / n) if vs + ve > 0 else None

    def phi(self, n: float) -> float | None:
        """Phi of the W-weighted components at ``n`` topics."""
        vs = self.weighted("var_s")
        tot = vs + (self.weighted("var_t") + self.weighted("var_e")) / n
        return vs / tot if tot > 0 else None

    def width_power(self, n_k: np.ndarray) -> tuple[float, float, float]:
        """``(V, width, power)`` of a pair's stratified mean difference with ``n_k`` topics per stratum."""
        v = float(np.sum(self.weights ** 2 * self.sigma2 / n_k))
        n = int(n_k.sum())
        k = len(self.weights)
        width = 2 * _t_quantile(1 - self.alpha / 2, max(n - k, 1)) * np.sqrt(v)
        z = stats.norm.ppf(1 - self.alpha / 2)
        power = float(special.ndtr(self.min_diff / np.sqrt(v) - z)
                      + special.ndtr(-self.min_diff / np.sqrt(v) - z))
        return v, width, power

    def at(self, n: int) -> StackedPoint:
        """The allocations, widths, powers and coefficients at ``n`` topics."""
        n_prop = stratum_counts(n, self.weights)
        n_opt = stratum_counts(n, self.weights * np.sqrt(self.sigma2))
        _, w_p, p_p = self.width_power(n_prop)
        _, w_o, p_o = self.width_power(n_opt)
        w_u = 2 * stats.t.ppf(1 - self.alpha / 2, n - 1) * np.sqrt(float(np.sum(self.weights * self.sigma2)) / n)
        return StackedPoint(int(n), n_prop, n_opt, w_p, w_o, w_u, p_p, p_o, self.erho2(n), self.phi(n))

    def smallest_n(self, target: str, value: float) -> int | None:
        """The smallest n meeting ``target`` (one of :data:`STACK_TARGETS`) with proportional allocation.

        Erho2 and Phi are solved in closed form; the width and power by bisection, then the
        first n meeting the target from a little below (allocation rounding can make the
        criterion flicker near the answer). ``None`` when not reached up to 100,000.
        """
        tgt = methods.target(target, where=lambda t: t.name in STACK_TARGETS, need="stacked strata")
        if tgt.reliability:
            # Phi's error term holds the topic component too, Erho2's does not
            vs = self.weighted("var_s")
            num = self.weighted("var_e") + (self.weighted("var_t") if tgt.topic_component else 0.0)
            return int(np.ceil(value / (1 - value) * num / vs)) if vs > 0 else None

        def ok(n: int) -> bool:
            _, w, p = self.width_power(stratum_counts(n, self.weights))
            return tgt.met({"ci_width_median": w, "power_mean": p}[tgt.statistic], value)

        lo = max(2 * len(self.weights), 2)
        n0 = _smallest_n(ok, lo, 100_000)
        if n0 is None:
            return None
        return next(n for n in range(max(lo, n0 - 20), n0 + 1) if ok(n))

    def planning(self, target: str) -> float:
        """The one ratio of W-weighted components the count of ``target`` rises with: ``var_e``
        for the width and power (``V = sum_k W_k 2 var_e,k / n`` under proportional allocation),
        ``var_e / var_s`` for Erho2, ``(var_t + var_e) / var_s`` for Phi (``inf`` without system
        variance). :meth:`scaled` multiplies it by a factor."""
        tgt = methods.target(target, where=lambda t: t.name in STACK_TARGETS, need="stacked strata")
        num = self.weighted("var_e") + (self.weighted("var_t") if tgt.topic_component else 0.0)
        if not tgt.reliability:
            return num
        vs = self.weighted("var_s")
        return num / vs if vs > 0 else np.inf

    def scaled(self, factor: float) -> StackedStrata:
        """The design with the topic and residual components times ``factor``: every target's
        :meth:`planning` ratio times ``factor``, the system component as it is."""
        return replace(self, var_t=self.var_t * factor, var_e=self.var_e * factor)

    def refit(self, matrices: Sequence[np.ndarray]) -> StackedStrata:
        """The same design (weights, alpha, min_diff) with components re-fitted by ANOVA on ``matrices``."""
        comps = [anova_components(x) for x in matrices]
        return replace(self, var_s=np.array([c["var_s"] for c in comps]),
                       var_t=np.array([c["var_t"] for c in comps]),
                       var_e=np.array([c["var_e"] for c in comps]))


def resampled_n(strata: StackedStrata, matrices: Sequence[np.ndarray], targets: Sequence[tuple[str, float]],
                rng: np.random.Generator, n_resamples: int) -> list[np.ndarray]:
    """The smallest n of each target on topic resamples drawn within each stratum.

    Each resample draws every stratum's topics with replacement (its own count), re-fits each
    stratum's ANOVA components and re-solves every target with the design's weights. The
    resample ``r`` uses the ``r``-th child of ``rng.spawn(n_resamples)``, drawing the strata in
    order.

    Parameters
    ----------
    strata : StackedStrata
        The design (weights, alpha, min_diff).
    matrices : sequence of numpy.ndarray
        Each stratum's complete systems x topics scores.
    targets : sequence of (str, float)
        The targets and their values.
    rng : numpy.random.Generator
        The stream the resamples derive from.
    n_resamples : int
        Number of resamples.

    Returns
    -------
    list of numpy.ndarray
        Per target, the ``n_resamples`` counts (``inf`` where the target is not reached).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> mats = [rng.normal(0.5, 0.1, (4, 20)), rng.normal(0.4, 0.1, (3, 30))]
    >>> st = StackedStrata.from_components([(0.002, 0.02, 0.01), (0.001, 0.03, 0.02)], [20, 30])
    >>> ns = resampled_n(st, mats, [("ci_width", 0.1)], np.random.default_rng(2), 20)
    >>> ns[0].shape
    (20,)
    """
    got: list[list[float]] = [[] for _ in targets]
    for g in rng.spawn(n_resamples):
        rs = strata.refit([x[:, g.integers(0, x.shape[1], x.shape[1])] for x in matrices])
        for j, (t, v) in enumerate(targets):
            nb = rs.smallest_n(t, float(v))
            got[j].append(np.inf if nb is None else nb)
    return [np.array(v, dtype=float) for v in got]


def _leave_outs(strata: StackedStrata, matrices: Sequence[np.ndarray]) -> tuple[list[list[StackedStrata]], bool]:
    """Per stratum, the design with that stratum's ANOVA re-fitted on each of its jackknife
    leave-out fits (:func:`planner.plan.jackknife.leave_out_masks`), the other strata as they are."""
    out, grouped = [], False
    for k, x in enumerate(matrices):
        masks, g = leave_out_masks(x.shape[1])
        grouped |= g
        fits = []
        for keep in masks:
            c = anova_components(x[:, keep])
            fits.append(replace(strata, **{f: np.where(np.arange(len(matrices)) == k, c[f], getattr(strata, f))
                                           for f in ("var_s", "var_t", "var_e")}))
        out.append(fits)
    return out, grouped


def jackknife_intervals(strata: StackedStrata, matrices: Sequence[np.ndarray], targets: Sequence[tuple[str, float]],
                        level: float = 0.95) -> list[Interval]:
    """The ``level`` interval on n of each target's count: the stratified jackknife
    (:func:`planner.plan.jackknife.factors_from_strata`) of the log of its :meth:`StackedStrata.planning`
    ratio, topics left out of one stratum at a time with that stratum's ANOVA re-fitted, each end
    the count of the design :meth:`StackedStrata.scaled` to it. Nothing is drawn.

    Per-topic differences are heavy-tailed, and topic resamples of strata that lack the heavy
    topics spread too little around their low variance. On draws of 10 topics per 50-topic
    stratum from four stacks (``benchmarks/bench_stack_coverage.py``) this interval held the whole
    stack's count in 90-100% of draws, the resamples' in 88-100% (docs/research/calibration.md,
    thirteenth session).

    Parameters
    ----------
    strata : StackedStrata
        The design, fitted on ``matrices``.
    matrices : sequence of numpy.ndarray
        Each stratum's complete systems x topics scores.
    targets : sequence of (str, float)
        The targets (:data:`STACK_TARGETS`) and their values.
    level : float
        Confidence level.

    Returns
    -------
    list of Interval
        Per target; an end is ``None`` where the target is not reached (or a leave-out fit has no
        system variance, for Erho2 and Phi).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> mats = [rng.normal(0.5, 0.1, (4, 20)), rng.normal(0.4, 0.1, (3, 30))]
    >>> st = StackedStrata.from_components([(0.0, 0.0, 0.0)] * 2, [20, 30]).refit(mats)
    >>> iv = jackknife_intervals(st, mats, [("ci_width", 0.1)])[0]
    >>> iv.low < st.smallest_n("ci_width", 0.1) < iv.high
    True
    """
    fits, grouped = _leave_outs(strata, matrices)
    out = []
    for t, v in targets:
        f = factors_from_strata(strata.planning(t), [np.array([s.planning(t) for s in fk]) for fk in fits],
                                level, grouped)

        def end(factor: float, t: str = t, v: float = v) -> int | None:
            if not np.isfinite(factor):
                return None
            n = strata.scaled(factor).smallest_n(t, float(v))
            return None if n is None else max(n, 1)      # no variance at all: the least count

        out.append(Interval(end(f.low), end(f.high), level, IntervalMethod.ANALYTIC, 0,
                            f.note("planning ratio of the W-weighted components")))
    return out
