"""Planning: topic-set sizes, targets from the score model, budgets, pool depth, strata.

Everything here answers "how many topics (judged how deep, split how) do we need?".
All formulas are written out in ``docs/planning.md``; the short version:

Classical designs (:func:`topic_set_size`; Sakai, "Topic set size design",
Information Retrieval Journal 19(3), 2016, and his 2018 book, chapter 6)
----------------------------------------------------------------------------
``sigma2`` is the variance the design needs (DESIGN.md, "Pair variances"): for the
paired designs (``paired-t``, ``ci``) the variance of per-topic differences
``d[t] = x[a,t] - x[b,t]``; for ``two-sample`` and ``anova`` the within-system
variance. ``delta`` is the minimum detectable difference (``min_diff``).

- ``paired-t`` (exact): ``phi = n - 1``, ``lambda = sqrt(n) * delta / sigma``,
  ``power = P(T' >= t_c) + P(T' <= -t_c)`` with ``T'`` noncentral t(phi, lambda) and
  ``t_c = t_{1-alpha/2}(phi)``.
- ``two-sample`` (exact): same with ``phi = 2 (n - 1)``, ``lambda = sqrt(n / 2) * delta / sigma``
  (``n`` topics per system; each system judged on its own topics).
- ``anova`` (exact): one-way ANOVA over ``m`` systems, ``phi_A = m - 1``,
  ``phi_E = m (n - 1)``; the least favourable configuration for a minimum
  detectable *range* ``delta`` (best minus worst system) puts two systems at
  ``+-delta/2`` and the rest at the grand mean, so ``lambda = n delta^2 / (2 sigma2)``;
  ``power = P(F'(phi_A, phi_E, lambda) >= F_{1-alpha}(phi_A, phi_E))``.
- ``ci``: paired data; the expected width of the ``1 - alpha`` interval of the mean
  difference, ``E[W] = 2 t_{1-alpha/2}(n-1) c(n) sigma / sqrt(n)`` with
  ``c(n) = sqrt(2/(n-1)) Gamma(n/2) / Gamma((n-1)/2)`` (``E[s] = c(n) sigma``); the
  design asks for ``E[W] <= width``.

Sakai's normal approximations (``approx="sakai"``; his Excel tools): the noncentral t
is replaced by ``P(u >= (t_c (1 - 1/(4 phi)) - lambda) / sqrt(1 + t_c^2 / (2 phi)))``
plus the matching lower tail, and the noncentral F by
``P(u >= w)``, ``w = (sqrt(phi_A F_c / phi_E * (2 phi_E - 1)) - sqrt(2 (phi_A + lambda)
- (phi_A + 2 lambda) / (phi_A + lambda))) / sqrt(phi_A F_c / phi_E + (phi_A + 2 lambda) /
(phi_A + lambda))`` (Patnaik's two-moment chi-square plus Fisher's square-root
normal approximation). As in his tools, ``n`` steps up from ``ceil(n')``, the
normal-theory starting value of :func:`sakai_initial_n`, until the approximate
criterion holds (= ``max(ceil(n'), smallest n meeting it)``). The ``ci`` design keeps
the exact expectation as its criterion and only starts from ``n'``.

Multiple comparisons (``correction="bonferroni"|"holm"``, t designs and ``ci``): all
``K = m (m-1) / 2`` pairs among ``m = systems`` systems; each comparison is made at
``alpha / K``. Holm's procedure rejects every hypothesis Bonferroni's rejects (its
first step is at ``alpha / K`` and later steps are more lenient), so the size
computed at ``alpha / K`` guarantees the power under Holm too; it is conservative
for Holm (exact only when the pair of interest is the one with the smallest
p-value and no others are rejected before it). ``correction="holm"`` is reported
as such, with the same numbers as Bonferroni.

Targets (:func:`size_for_target`)
---------------------------------
Per pair ``(a, b)`` the observed mean difference ``dbar`` is taken as the true
difference and ``sigma_d^2`` comes from the variance selector. At ``n`` topics:
``p = Phi(-|dbar| sqrt(n) / sigma_d)``; reversal rate ``p``; swap rate ``2 p (1 - p)``;
expected Kendall tau ``1 - 2 * mean swap``; interval width
``2 t_{1-alpha/2}(n-1) sigma_d / sqrt(n)`` (median over pairs, or a quantile);
power of the paired t at ``min_diff`` (mean over pairs); ``Erho2(n)`` and ``Phi(n)``
from the variance components. The smallest ``n`` that meets the target is found by
bisection (all these are monotone in ``n``). The interval on ``n`` comes from
resampling topics with replacement (``resamples`` times), recomputing the pair
statistics / components and re-solving: the 2.5% and 97.5% quantiles of the
re-solved ``n``. With ``method`` other than ``"analytic"``, the curve comes from
:func:`planner.simulate.predict` (when that module is present).

Query variants (:func:`topics_for_variants`): the same targets with ``v`` variants per
topic, each pair's variance split into a topic and a variant part, the latter over ``v``.

Budgets, pool depth, strata: see :func:`budget`, :func:`pool_depth_study`,
:func:`allocate`.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
from scipy import optimize, special, stats

from ._json import plain
from ._random import as_generator, draw_seed, seed_of, seed_to_use
from .errors import DegenerateDataWarning, InputError, ParameterError
from .simulate import INTERNAL_METHODS as _PILOT_METHODS
from .simulate import MAX_TOPICS, allocate_counts
from .variance import anova_components as _variance_anova
from .variance import check_alpha, pair_index, pair_moments, parse_selector, within_system

DESIGNS = ("paired-t", "two-sample", "anova", "ci")
PAIRED_DESIGNS = ("paired-t", "ci")
APPROX = ("exact", "sakai")
CORRECTIONS = (None, "none", "bonferroni", "holm")
N_MAX = 10_000_000
#: largest cost of a topic, judgment or variant, and largest total budget: beyond it the costs of
#: up to N_MAX topics would overflow to inf (1e308 per topic) or print as 300-digit numbers
MAX_COST = 1e15


def _check_cost(v, name: str) -> float:
    """A cost or budget as a float in [0, MAX_COST], or a ParameterError naming ``name``."""
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise ParameterError(f"must be a number >= 0, got {v!r}", parameter=name) from None
    if not (x >= 0 and math.isfinite(x)):
        raise ParameterError(f"must be a number >= 0, got {v}", parameter=name)
    if x > MAX_COST:
        raise ParameterError(f"must be at most {MAX_COST:.0e}, got {x:g}".replace("e+", "e"), parameter=name)
    return x


# =============================================================================
# power functions (vectorised over n and delta)
# =============================================================================

def _crit_t(alpha: float, df):
    return stats.t.isf(alpha / 2.0, df)


def _t_power_exact(df, nc, alpha):
    """Two-sided t-test power for noncentral t(df, nc)."""
    tc = _crit_t(alpha, df)
    nc = np.asarray(nc, dtype=float)
    with np.errstate(invalid="ignore"):
        up = stats.nct.sf(tc, df, nc)
        lo = stats.nct.cdf(-tc, df, nc)
    # scipy's nct returns NaN for some tiny tail probabilities: the tail opposite to nc
    # (from |nc| > 5, e.g. df 1, nc 11.3; it is below P(Z < -|nc|) < 2e-7 there) is then 0,
    # and far out (|nc| - tc > ~37) the power itself is 1
    pos = nc >= 0
    up = np.where(np.isnan(up) & ~pos, 0.0, up)
    lo = np.where(np.isnan(lo) & pos, 0.0, lo)
    p = up + lo
    return np.where(np.isnan(p) & (np.abs(nc) > tc), 1.0, p)


def _t_power_sakai(df, nc, alpha):
    """Sakai's (Nagata's) normal approximation of the noncentral t power."""
    df = np.asarray(df, dtype=float)
    tc = _crit_t(alpha, df)
    denom = np.sqrt(1.0 + tc ** 2 / (2.0 * df))
    a = tc * (1.0 - 1.0 / (4.0 * df))
    return stats.norm.sf((a - nc) / denom) + stats.norm.cdf((-a - nc) / denom)


def _f_power_exact(df1, df2, lam, alpha):
    fc = stats.f.isf(alpha, df1, df2)
    lam = np.asarray(lam, dtype=float)
    with np.errstate(invalid="ignore"):
        p = stats.ncf.sf(fc, df1, df2, np.where(np.isinf(lam), 1.0, lam))
    return np.where(np.isinf(lam), 1.0, p)     # an infinite noncentrality: power 1


def _f_power_sakai(df1, df2, lam, alpha):
    df1 = np.asarray(df1, dtype=float)
    df2 = np.asarray(df2, dtype=float)
    lam = np.asarray(lam, dtype=float)
    big = np.isinf(lam)
    lam = np.where(big, 1.0, lam)
    fc = stats.f.isf(alpha, df1, df2)
    c = (df1 + 2 * lam) / (df1 + lam)
    g = df1 * fc / df2
    w = (np.sqrt(g * (2 * df2 - 1)) - np.sqrt(np.maximum(2 * (df1 + lam) - c, 0.0))) / np.sqrt(g + c)
    return np.where(big, 1.0, stats.norm.sf(w))


def _c_factor(n):
    """``E[s] / sigma`` for a sample of size n from a normal population."""
    n = np.asarray(n, dtype=float)
    return np.sqrt(2.0 / (n - 1)) * np.exp(special.gammaln(n / 2) - special.gammaln((n - 1) / 2))


def _expected_width(n, sigma2, alpha):
    n = np.asarray(n, dtype=float)
    return 2.0 * _crit_t(alpha, n - 1) * _c_factor(n) * np.sqrt(sigma2 / n)


def design_power(design: str, n, delta, sigma2: float, *, alpha: float = 0.05, systems: int = 2,
                 approx: str = "exact"):
    """Power of ``design`` at ``n`` topics for true difference (or range) ``delta``.

    ``alpha`` is the per-comparison level (apply any correction before). Vectorised
    over ``n`` and ``delta``. Not defined for ``design="ci"``.
    """
    with np.errstate(over="ignore"):    # a noncentrality that overflows is inf: power 1
        return _design_power(design, n, delta, sigma2, alpha, approx, systems)


def _design_power(design, n, delta, sigma2, alpha, approx, systems):
    n = np.asarray(n, dtype=float)
    delta = np.abs(np.asarray(delta, dtype=float))
    sigma2 = np.asarray(sigma2, dtype=float)
    sigma = np.sqrt(sigma2)
    if design == "paired-t":
        df, nc = n - 1, np.sqrt(n) * delta / sigma
        f = _t_power_exact if approx == "exact" else _t_power_sakai
        return f(df, nc, alpha)
    if design == "two-sample":
        df, nc = 2 * (n - 1), np.sqrt(n / 2) * delta / sigma
        f = _t_power_exact if approx == "exact" else _t_power_sakai
        return f(df, nc, alpha)
    if design == "anova":
        m = systems
        lam = n * delta ** 2 / (2 * sigma2)
        f = _f_power_exact if approx == "exact" else _f_power_sakai
        return f(m - 1, m * (n - 1), lam, alpha)
    raise ParameterError(f"no power function for design {design!r}", parameter="design")


def sakai_initial_n(design: str, delta, sigma2, *, alpha: float = 0.05, power: float = 0.8,
                    systems: int = 2):
    """Sakai's normal-theory starting value n' of each design (his tools step up from ceil(n')).

    With ``z_a = z_{alpha/2}``, ``z_b = z_{1-power}`` (upper points), ``D = delta / sigma``:
    paired-t ``((z_a + z_b)/D)^2 + z_a^2/2``; two-sample ``2 ((z_a + z_b)/D)^2 + z_a^2/4``;
    anova ``lambda / (delta^2 / (2 sigma2))`` with ``lambda`` the noncentrality at which the
    noncentral chi-square test with ``m-1`` degrees of freedom has the target power; ci
    (``delta`` = the width cap) ``4 z_a^2 sigma2 / delta^2``. Vectorised over ``sigma2``.
    """
    sigma2 = np.asarray(sigma2, dtype=float)
    delta = np.float64(delta)      # (a Python float raises OverflowError on delta ** 2)
    za = stats.norm.isf(alpha / 2)
    with np.errstate(over="ignore"):    # an effect that overflows needs the fewest topics
        if design == "ci":
            return 4 * za ** 2 * sigma2 / delta ** 2
        zb = stats.norm.isf(1 - power)
        d = delta / np.sqrt(sigma2)
        if design == "paired-t":
            return ((za + zb) / d) ** 2 + za ** 2 / 2
        if design == "two-sample":
            return 2 * ((za + zb) / d) ** 2 + za ** 2 / 4
        if design == "anova":
            return _ncx2_lambda(systems - 1, alpha, power) / (delta ** 2 / (2 * sigma2))
    raise ParameterError(f"unknown design {design!r}", parameter="design")


def _ncx2_lambda(df: int, alpha: float, power: float) -> float:
    """Noncentrality at which P(chi'^2(df, lambda) >= chi^2_{1-alpha}(df)) = power."""
    c = stats.chi2.isf(alpha, df)
    f = lambda lam: stats.ncx2.sf(c, df, lam) - power
    hi = 1.0
    while f(hi) < 0:
        hi *= 2
    return optimize.brentq(f, 1e-12, hi, xtol=1e-12, rtol=1e-12)


#: most topic resamples behind an interval on n (each one is a whole re-solve)
MAX_INTERVAL_RESAMPLES = 100_000


def interval_quantiles(ns: np.ndarray, interval: float) -> tuple[float, float]:
    """The ``(1 - interval) / 2`` and ``(1 + interval) / 2`` quantiles of the resampled topic
    counts (``inverted_cdf``: the ``ceil(R q)``-th smallest of ``R``). The tail is rounded to 12
    decimals: ``(1 - 0.95) / 2`` is 0.025000000000000022 in floating point, which made the lower
    end the 6th smallest of 200 resamples instead of the 5th."""
    tail = round((1 - float(interval)) / 2, 12)
    lo, hi = np.quantile(ns, [tail, round(1 - tail, 12)], method="inverted_cdf")
    return float(lo), float(hi)


def paired_difference(n_a, n_b, interval: float = 0.95) -> dict:
    """Two topic counts compared resample by resample.

    ``n_a`` and ``n_b`` are the smallest n of each topic resample for two questions asked of
    the same topics with the same resamples (:attr:`TargetResult.resampled_n` of two
    :func:`size_for_target` calls with the same seed on the same topic list, e.g. two
    measures of the same runs). Because each resample draws the same topics for both, the
    difference ``n_b - n_a`` varies far less than the two intervals on n suggest when the
    two agree on which topics are hard.

    Returns a dict: ``resamples``; ``diff_median`` and ``lower``, ``upper`` (the
    ``interval`` percentile interval of ``n_b - n_a``: the ``k``-th smallest and the ``k``-th
    largest of the ``R`` differences, ``k = ceil(R (1 - interval) / 2)``, so that swapping
    ``n_a`` and ``n_b`` negates the interval exactly (the interval on n's ``inverted_cdf``
    upper end, the ``ceil(R q)``-th smallest, is one order statistic lower, which made the two
    directions disagree); ``None`` where infinite, i.e. unbounded); ``share_b_more``, ``share_equal``,
    ``share_b_fewer`` (shares of resamples); ``separated``: ``"b more"`` when the whole
    interval is above 0, ``"b fewer"`` when it is below, else ``None``. A resample where
    neither reaches the target within ``n_max`` counts as equal (difference 0); where only one
    does, the difference is infinite.
    """
    try:
        a = np.asarray(n_a, dtype=float)
        b = np.asarray(n_b, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError("expected two vectors of resampled topic counts (numbers)",
                             parameter="n_a") from None
    if np.isnan(a).any() or np.isnan(b).any():
        raise ParameterError("resampled topic counts cannot be NaN", parameter="n_a")
    if a.shape != b.shape or a.ndim != 1 or a.size < 2:
        raise ParameterError(f"expected two equal-length vectors of at least 2 resampled counts, got "
                             f"shapes {a.shape} and {b.shape}", parameter="n_b")
    interval = _check_prob(interval, "interval")
    both = np.isinf(a) & np.isinf(b)
    d = np.where(both, 0.0, b - np.where(both, 0.0, a))
    srt = np.sort(d)
    k = max(1, math.ceil(d.size * round((1 - interval) / 2, 12)))
    lo, hi = float(srt[k - 1]), float(srt[d.size - k])
    med = float(np.quantile(d, 0.5, method="inverted_cdf"))
    fin = lambda v: v if math.isfinite(v) else None  # JSON-safe, as TargetResult's bounds
    return {"resamples": int(d.size), "diff_median": fin(med), "lower": fin(lo), "upper": fin(hi),
            "share_b_more": float(np.mean(d > 0)), "share_equal": float(np.mean(d == 0)),
            "share_b_fewer": float(np.mean(d < 0)),
            "separated": "b more" if lo > 0 else "b fewer" if hi < 0 else None}


def _interval_resamples(resamples) -> int:
    """The number of topic resamples of an interval on n: 0 (no interval) or 2 to
    ``MAX_INTERVAL_RESAMPLES``."""
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)):
        # True / False would be read as 1 / 0, 2.0 or inf as numbers: an integer or nothing
        raise ParameterError(f"expected an integer, got {resamples!r}", parameter="resamples")
    r = int(resamples)
    if r < 0 or r == 1 or r > MAX_INTERVAL_RESAMPLES:
        raise ParameterError(f"must be 0 (no interval) or an integer from 2 to {MAX_INTERVAL_RESAMPLES:,}, "
                             f"got {resamples!r}", parameter="resamples")
    return r


def _smallest_n_vec(ok, size: int, n_min: int = 2, n_max: int = N_MAX) -> np.ndarray:
    """Vectorised :func:`smallest_n`: ``ok(n_array)`` -> bool array of ``size`` monotone
    problems; returns float n per problem (``inf`` where none up to n_max)."""
    lo = np.full(size, n_min - 1, dtype=np.int64)   # largest n known to fail (n_min - 1: none yet)
    hi = np.full(size, n_min, dtype=np.int64)
    good = ok(hi.astype(float))
    inf = np.zeros(size, dtype=bool)
    while True:
        bad = ~good & ~inf
        if not bad.any():
            break
        lo[bad] = hi[bad]
        at_max = bad & (hi >= n_max)
        inf |= at_max
        grow = bad & ~at_max
        hi[grow] = np.minimum(2 * hi[grow], n_max)
        good[grow] = ok(hi.astype(float))[grow]
    while True:
        gap = ~inf & (hi - lo > 1)
        if not gap.any():
            break
        mid = (lo + hi) // 2
        res = ok(np.where(gap, mid, hi).astype(float))
        up = gap & res
        down = gap & ~res
        hi[up] = mid[up]
        lo[down] = mid[down]
    out = hi.astype(float)
    out[inf] = np.inf
    return out


def smallest_n(ok, n_min: int, n_max: int = N_MAX) -> int | None:
    """Smallest integer n in [n_min, n_max] with ok(n) True (ok monotone), else None."""
    if ok(n_min):
        return n_min
    if n_max <= n_min:
        return None
    lo, hi = n_min, min(max(n_min + 1, 2 * n_min), n_max)
    while not ok(hi):
        lo = hi
        if hi >= n_max:
            return None
        hi = min(2 * hi, n_max)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


# =============================================================================
# variance from a collection
# =============================================================================

def _as_scores(scores, parameter: str = "scores"):
    """A ScoreMatrix from what :func:`planner.fit` accepts (ScoreMatrix, path, wide DataFrame with
    topics as rows, systems x topics array), with at least 2 systems and 2 topics."""
    if not hasattr(scores, "topic_scores"):
        from .variance import as_matrix

        scores = as_matrix(scores, parameter)
    if scores.n_systems < 2 or scores.n_topics < 2:
        raise InputError(f"need at least 2 systems and 2 topics, got {scores.n_systems} system(s) x "
                         f"{scores.n_topics} topic(s)", file=getattr(scores, "source", None))
    return scores


def _values(scores) -> np.ndarray:
    """The complete (S, T) values: a 2-D array is taken as systems x topics (the resampling
    loops pass those); anything else goes through :func:`_as_scores`."""
    if isinstance(scores, np.ndarray) and scores.ndim == 2:
        vals = np.asarray(scores, float)
        if vals.shape[0] < 2 or vals.shape[1] < 2:
            raise InputError(f"need at least 2 systems and 2 topics, got {vals.shape[0]} system(s) x "
                             f"{vals.shape[1]} topic(s)")
    else:
        vals = _as_scores(scores).topic_scores()
    if np.isnan(vals).any():
        raise ParameterError("the score matrix has missing cells; planning needs a complete "
                             "matrix (load it with another missing-cell policy)", parameter="scores")
    return vals


def _pairs(S: int):
    return pair_index(S)


def _anova_components(vals: np.ndarray) -> dict[str, float]:
    """Two-way ANOVA (method of moments) components of a complete (S, T) matrix."""
    c = _variance_anova(vals)
    return {k: c[k] for k in ("var_s", "var_t", "var_e")}


def _pair_diff_stats(vals: np.ndarray):
    a, b = _pairs(vals.shape[0])
    return (a, b) + pair_moments(vals, a, b)


def _parse_selector(selector: str) -> tuple[str, float | None]:
    return parse_selector(selector, parameter="variance")


def pair_variances(scores, selector: str = "pooled", *, design: str = "paired") -> np.ndarray:
    """One variance per system pair (all pairs a < b in order), as DESIGN.md defines them.

    A ScoreMatrix goes to :func:`planner.variance.pair_variance`; a complete (S, T)
    array (the resampling loops) is computed here with the same definitions and the
    ANOVA residual for ``pooled``.
    """
    kind, q = _parse_selector(selector)
    if hasattr(scores, "topic_scores"):
        from .variance import pair_variance

        return np.asarray(pair_variance(scores, selector, design=design), dtype=float)
    vals = _values(scores)
    a, b, _, s2d = _pair_diff_stats(vals)
    K = len(a)
    if design == "paired":
        if kind == "pair":
            return s2d
        if kind == "pooled":
            return np.full(K, 2 * _anova_components(vals)["var_e"])
        if kind == "within-system":
            return np.full(K, 2 * within_system(vals))
        return np.full(K, np.percentile(s2d, q))
    if design == "independent":
        var_sys = vals.var(axis=1, ddof=1)
        if kind == "pair":
            return (var_sys[a] + var_sys[b]) / 2
        if kind == "pooled":
            return np.full(K, _anova_components(vals)["var_e"])
        if kind == "within-system":
            return np.full(K, within_system(vals))
        return np.full(K, np.percentile((var_sys[a] + var_sys[b]) / 2, q))
    raise ParameterError(f"unknown design {design!r}; expected paired or independent", parameter="design")


def _resolve_variance(variance, selector: str, design: str) -> tuple[float, str, np.ndarray | None]:
    """(sigma2, name of the variance used, per-pair variances or None)."""
    paired = design in PAIRED_DESIGNS
    if variance is None:
        raise ParameterError("give the variance the design needs (a number, a ScoreMatrix or "
                             "fitted VarianceComponents)", parameter="variance")
    if isinstance(variance, (int, float, np.floating, np.integer)) and not isinstance(variance, bool):
        s2 = float(variance)
        if not math.isfinite(s2) or s2 <= 0:
            raise ParameterError(f"must be a positive variance, got {variance}", parameter="sigma2")
        what = "variance of per-topic differences" if paired else "within-system variance"
        return s2, f"given ({what})", None
    if hasattr(variance, "topic_scores"):
        per_pair = pair_variances(variance, selector, design="paired" if paired else "independent")
        kind, _ = _parse_selector(selector)
        if kind == "pair" and np.any(per_pair <= 0):
            warnings.warn(f"{int((per_pair <= 0).sum())} pair(s) with zero variance (identical systems) "
                          "left out of the pair variances", DegenerateDataWarning, stacklevel=3)
            per_pair = per_pair[per_pair > 0]
            if per_pair.size == 0:
                raise ParameterError("every pair has zero variance; nothing to plan", parameter="variance")
        s2 = float(np.median(per_pair)) if kind == "pair" else float(per_pair[0])
        if not s2 > 0:
            raise ParameterError(f"the {selector} variance of the collection is {s2}; nothing to plan",
                                 parameter="variance")
        name = selector + (" (median over pairs)" if kind == "pair" else "")
        return s2, name, (per_pair if kind == "pair" else None)
    if hasattr(variance, "var_e"):  # VarianceComponents
        kind, _ = _parse_selector(selector)
        if kind != "pooled":
            raise ParameterError(f"fitted components only give the pooled variance; pass the "
                                 f"ScoreMatrix for {selector!r}", parameter="variance_selector")
        ve = float(variance.var_e)
        s2 = 2 * ve if paired else ve
        if not s2 > 0:
            raise ParameterError("the fitted residual variance is 0; nothing to plan", parameter="variance")
        return s2, "pooled", None
    raise ParameterError(f"cannot use {type(variance).__name__} as a variance", parameter="variance")


# =============================================================================
# topic_set_size
# =============================================================================

@dataclass(frozen=True)
class SizeResult:
    """Result of a classical topic-set-size design.

    Attributes:
        design: ``paired-t``, ``two-sample``, ``anova`` or ``ci``.
        solved_for: which of ``n_topics``, ``min_diff``, ``power`` (``width`` for ci) was solved.
        n_topics: topics (per system for two-sample); for a solved n the smallest that meets the target.
        min_diff: minimum detectable difference (range for anova; None for ci).
        power: power at ``n_topics`` and ``min_diff`` (the achieved power when n was solved).
        target_power: the requested power when n or min_diff was solved, else None.
        power_at_n_minus_1: power at ``n_topics - 1`` (shows the solved n is the smallest), or None.
        width: expected interval width at ``n_topics`` (ci design), else None.
        target_width: requested width (ci design when n was solved), else None.
        alpha: the family-wise (or single-test) level asked for.
        alpha_per_test: level of each comparison after the correction.
        correction: None, ``bonferroni`` or ``holm``.
        comparisons: number of comparisons the correction covers (1 without one).
        systems: number of systems (anova, corrections).
        sigma2: the variance the design used.
        variance: its name (``given (...)``, ``pooled``, ``pair (median over pairs)``, ``within-system``,
            ``percentile:q``).
        method: ``exact`` (noncentral t/F) or ``sakai`` (normal approximations).
        per_pair: for the ``pair`` selector, quantiles of the per-pair sizes (or min_diff / power), else None.
        width_at_n_minus_1: ci design with n solved: expected width at ``n_topics - 1``.
        n_lower, n_upper, interval, interval_method: the topic-resampling interval on a solved n
            (``resamples > 0`` with a ScoreMatrix), else None.
        n_initial: ``approx="sakai"`` with n solved: Sakai's normal-theory starting value n'
            (his tools step n up from ceil(n') until the criterion holds), else None.
        seed: the integer seed of the topic resampling, when it ran with one.
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
    n_lower: int | None = None
    n_upper: int | None = None
    interval: float | None = None
    interval_method: str | None = None
    n_initial: float | None = None
    seed: int | None = None

    @property
    def lower(self) -> int | None:
        """``n_lower`` under the name :class:`TargetResult` uses (not in :meth:`to_dict`)."""
        return self.n_lower

    @property
    def upper(self) -> int | None:
        """``n_upper`` under the name :class:`TargetResult` uses (not in :meth:`to_dict`)."""
        return self.n_upper

    def to_dict(self) -> dict:
        return _plain(asdict(self))


def _plain(obj):
    """Plain-Python copy for ``to_dict()``; NaN and inf are kept (planner._json)."""
    return plain(obj, finite=False)


def _check_prob(x, name, *, lo_open=True, hi_open=True):
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ParameterError(f"expected a number, got {x!r}", parameter=name) from None
    if not (0 < v < 1) or not math.isfinite(v):
        extra = " (a power of 1 needs infinitely many topics)" if name == "power" and v >= 1 else ""
        raise ParameterError(f"must be strictly between 0 and 1, got {x}{extra}", parameter=name)
    return v


def topic_set_size(*, design: str = "paired-t", min_diff: float | None = None, variance=None,
                   variance_selector: str = "pooled", alpha: float = 0.05, power: float | None = None,
                   n_topics: int | None = None, systems: int = 2, exact: bool = True,
                   approx: str | None = None, correction: str | None = None,
                   width: float | None = None, resamples: int = 0, interval: float = 0.95,
                   rng=None) -> SizeResult:
    """Solve a classical design for whichever of ``n_topics``, ``min_diff``, ``power`` is unset.

    Args:
        design: ``paired-t`` | ``two-sample`` | ``anova`` | ``ci`` (module docstring).
        min_diff: minimum detectable difference (anova: range best - worst). For ``ci``
            it is accepted as the width cap when ``width`` is not given.
        variance: a float (the ``sigma2`` the design needs: variance of differences
            for paired-t/ci, within-system variance for two-sample/anova), a
            :class:`~planner.scores.ScoreMatrix` or fitted ``VarianceComponents``.
        variance_selector: for a ScoreMatrix: ``pooled`` | ``pair`` | ``within-system`` |
            ``percentile:q``; ``pair`` plans with the median pair and reports per-pair quantiles.
        alpha: significance level (family-wise with a correction); ``1 - alpha`` intervals for ci.
        power: target power (``1 - beta``).
        n_topics: topic count (per system for two-sample).
        systems: m, for anova and for the multiple-comparison correction.
        exact / approx: ``approx="sakai"`` (or ``exact=False``) uses Sakai's normal approximations.
        correction: ``bonferroni`` | ``holm`` over all ``m (m-1)/2`` pairs (t designs and ci).
        width: for ``ci``, the largest acceptable expected interval width.
        resamples, interval, rng: when ``variance`` is a ScoreMatrix and n is solved,
            ``resamples`` bootstrap resamples of its topics (one child stream of ``rng`` each)
            re-estimate the variance with the same selector and re-solve n; ``n_lower`` /
            ``n_upper`` are the ``(1 -+ interval)/2`` quantiles. 0 (default) skips it.

    Raises:
        ParameterError: bad or impossible inputs (power of 1, width of 0, none or
        several unknowns, a target no n up to 10^7 meets).
    """
    res = _topic_set_size(design=design, min_diff=min_diff, variance=variance,
                          variance_selector=variance_selector, alpha=alpha, power=power,
                          n_topics=n_topics, systems=systems, exact=exact, approx=approx,
                          correction=correction, width=width)
    resamples = _interval_resamples(resamples)
    if resamples == 0 or res.solved_for != "n_topics" or not hasattr(variance, "topic_scores"):
        return res
    interval = _check_prob(interval, "interval")
    rng = seed_to_use(rng)      # a drawn seed when None, recorded so that the interval can be repeated
    vals = _values(variance)
    kind, _ = _parse_selector(variance_selector)
    paired = res.design in PAIRED_DESIGNS
    T = vals.shape[1]
    s2s = np.empty(resamples)
    for i, g in enumerate(as_generator(rng).spawn(resamples)):
        vb = vals[:, g.integers(0, T, T)]
        pv = pair_variances(vb, variance_selector, design="paired" if paired else "independent")
        if kind == "pair":
            pv = pv[pv > 0]
            s2s[i] = float(np.median(pv)) if pv.size else 0.0
        else:
            s2s[i] = float(pv[0])
    pos = s2s > 0
    ns = np.full(resamples, 2.0)
    v = s2s[pos]
    if res.design == "ci":
        ns[pos] = _smallest_n_vec(lambda k: _expected_width(k, v, res.alpha_per_test) <= res.target_width, v.size)
    else:
        ns[pos] = _smallest_n_vec(lambda k: design_power(res.design, k, res.min_diff, v, alpha=res.alpha_per_test,
                                                         systems=res.systems, approx=res.method)
                                  >= res.target_power, v.size)
    lo, hi = interval_quantiles(ns, interval)
    from dataclasses import replace as _replace

    return _replace(res, n_lower=None if not np.isfinite(lo) else int(lo),
                    n_upper=None if not np.isfinite(hi) else int(hi), interval=interval,
                    interval_method=f"topic resampling ({resamples} resamples, {variance_selector} variance re-estimated)",
                    seed=seed_of(rng))


def _topic_set_size(*, design, min_diff, variance, variance_selector, alpha, power, n_topics, systems,
                    exact, approx, correction, width) -> SizeResult:
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
    alpha = check_alpha(alpha)
    try:
        systems = int(systems)
    except (TypeError, ValueError):
        raise ParameterError(f"expected an integer, got {systems!r}", parameter="systems") from None
    if systems < 2:
        raise ParameterError(f"need at least 2 systems, got {systems}", parameter="systems")
    if design == "anova" and correction is not None:
        raise ParameterError("the anova design tests all systems at once; corrections apply to "
                             "paired-t, two-sample and ci", parameter="correction")
    K = systems * (systems - 1) // 2 if correction else 1
    a_test = alpha / K
    if n_topics is not None:
        try:
            ok = float(n_topics) == int(n_topics) and not isinstance(n_topics, (bool, str))
            n_topics = int(n_topics)
        except (TypeError, ValueError, OverflowError):
            ok = False
        if not ok:
            raise ParameterError(f"expected an integer, got {n_topics!r}", parameter="n_topics")
        if n_topics < 2:
            raise ParameterError(f"need at least 2 topics, got {n_topics}", parameter="n_topics")
    sigma2, vname, per_pair_var = _resolve_variance(variance, variance_selector, design)

    if width is not None and design != "ci":
        raise ParameterError("a width cap applies to the ci design", parameter="width")
    if design == "ci":
        # the ci design has no power, and one width: an option it would ignore is an error
        if power is not None:
            raise ParameterError("the ci design solves an interval width, not a power; leave power "
                                 "unset", parameter="power")
        if width is not None and min_diff is not None:
            raise ParameterError("give the ci design's width as width or as min_diff, not both",
                                 parameter="min_diff")
        return _ci_size(width if width is not None else min_diff, n_topics, sigma2, vname,
                        per_pair_var, alpha, a_test, correction, K, systems, method)

    unknown = [k for k, v in (("n_topics", n_topics), ("min_diff", min_diff), ("power", power)) if v is None]
    if len(unknown) != 1:
        raise ParameterError("set exactly two of n_topics, min_diff and power (the third is solved); "
                             f"unset: {', '.join(unknown) or 'none'}", parameter=unknown[0] if unknown else "power")
    if power is not None:
        power = _check_prob(power, "power")
        if power <= a_test:
            raise ParameterError(f"a power of {power} is not above the test level {a_test:.4g}",
                                 parameter="power")
    if min_diff is not None:
        min_diff = float(min_diff)
        if not (min_diff > 0 and math.isfinite(min_diff)):
            raise ParameterError(f"must be positive, got {min_diff}", parameter="min_diff")

    def pw(n, delta, s2=sigma2):
        return design_power(design, n, delta, s2, alpha=a_test, systems=systems, approx=method)

    def start(delta, s2):
        if method != "sakai":
            return 2
        return max(2, math.ceil(sakai_initial_n(design, delta, s2, alpha=a_test, power=power,
                                                systems=systems) - 1e-9))

    def solve_n(delta, s2):
        n = smallest_n(lambda k: pw(k, delta, s2) >= power, start(delta, s2))
        if n is None:
            raise ParameterError(f"no topic count up to {N_MAX:,} reaches power {power} for a difference "
                                 f"of {delta:g} with variance {s2:.4g} (the difference is "
                                 f"{delta / math.sqrt(s2):.3g} standard deviations)", parameter="min_diff")
        return n

    def solve_delta(n, s2):
        f = lambda d: float(pw(n, d, s2)) - power
        hi = math.sqrt(s2)
        while f(hi) < 0:
            hi *= 2
            if hi > 1e6 * math.sqrt(s2):
                raise ParameterError(f"no difference reaches power {power} with {n} topics",
                                     parameter="power")
        return optimize.brentq(f, 0.0, hi, xtol=1e-12, rtol=1e-12)

    solved = unknown[0]
    per_pair = None
    prev = None
    if solved == "n_topics":
        n_topics = solve_n(min_diff, sigma2)
        achieved = float(pw(n_topics, min_diff))
        prev = float(pw(n_topics - 1, min_diff)) if n_topics > 2 else None
        if per_pair_var is not None:
            ns = _smallest_n_vec(lambda k: pw(k, min_diff, per_pair_var) >= power, per_pair_var.size)
            if method == "sakai":  # stepping up from ceil(n') = max(ceil(n'), smallest n)
                ns = np.maximum(ns, np.ceil(sakai_initial_n(design, min_diff, per_pair_var, alpha=a_test,
                                                            power=power, systems=systems) - 1e-9))
            per_pair = _quantiles(ns, "n_topics")
    elif solved == "min_diff":
        min_diff = solve_delta(n_topics, sigma2)
        achieved = float(pw(n_topics, min_diff))
        if per_pair_var is not None:
            # power depends on delta / sigma only: the detectable difference scales with sigma
            ds = min_diff * np.sqrt(per_pair_var / sigma2)
            per_pair = _quantiles(ds, "min_diff")
    else:
        achieved = float(pw(n_topics, min_diff))
        if per_pair_var is not None:
            per_pair = _quantiles(np.asarray(pw(n_topics, min_diff, per_pair_var), dtype=float), "power")
    n_init = None
    if solved == "n_topics" and method == "sakai":
        n_init = float(sakai_initial_n(design, min_diff, sigma2, alpha=a_test, power=power, systems=systems))
    return SizeResult(design=design, solved_for=solved, n_topics=int(n_topics), min_diff=float(min_diff),
                      power=achieved, target_power=power if solved != "power" else None,
                      power_at_n_minus_1=prev, width=None, target_width=None, alpha=alpha,
                      alpha_per_test=a_test, correction=correction, comparisons=K, systems=systems,
                      sigma2=sigma2, variance=vname, method=method, per_pair=per_pair, n_initial=n_init)


def _quantiles(x: np.ndarray, what: str) -> dict:
    return {"quantity": what, "pairs": int(x.size), "min": float(np.min(x)),
            "median": float(np.median(x)), "p90": float(np.percentile(x, 90)),
            "max": float(np.max(x))}


def _ci_size(width, n_topics, sigma2, vname, per_pair_var, alpha, a_test, correction, K, systems, method):
    if width is None and n_topics is None:
        raise ParameterError("set the width cap (or n_topics to get the expected width)", parameter="width")
    per_pair = None
    if width is not None:
        width = float(width)
        if not (width > 0 and math.isfinite(width)):
            raise ParameterError(f"must be positive, got {width} (a width of 0 needs infinitely "
                                 "many topics)", parameter="width")
    if n_topics is None:
        def solve(s2):
            n0 = 2 if method != "sakai" else max(2, math.ceil(sakai_initial_n("ci", width, s2, alpha=a_test) - 1e-9))
            n = smallest_n(lambda k: _expected_width(k, s2, a_test) <= width, n0)
            if n is None:
                raise ParameterError(f"no topic count up to {N_MAX} gives width {width}", parameter="width")
            return n
        n_topics = solve(sigma2)
        prev = float(_expected_width(n_topics - 1, sigma2, a_test)) if n_topics > 2 else None
        if per_pair_var is not None:
            ns = _smallest_n_vec(lambda k: _expected_width(k, per_pair_var, a_test) <= width, per_pair_var.size)
            if method == "sakai":
                ns = np.maximum(ns, np.ceil(sakai_initial_n("ci", width, per_pair_var, alpha=a_test) - 1e-9))
            per_pair = _quantiles(ns, "n_topics")
        solved, target = "n_topics", width
    else:
        prev = None
        solved, target = "width", None
        if per_pair_var is not None:
            per_pair = _quantiles(_expected_width(n_topics, per_pair_var, a_test), "width")
    w = float(_expected_width(n_topics, sigma2, a_test))
    return SizeResult(design="ci", solved_for=solved, n_topics=int(n_topics), min_diff=None, power=None,
                      target_power=None, power_at_n_minus_1=None, width=w, target_width=target,
                      alpha=alpha, alpha_per_test=a_test, correction=correction, comparisons=K,
                      systems=systems, sigma2=sigma2, variance=vname, method=method,
                      per_pair=per_pair, width_at_n_minus_1=prev,
                      n_initial=(float(sakai_initial_n("ci", width, sigma2, alpha=a_test))
                                 if method == "sakai" and solved == "n_topics" else None))


# =============================================================================
# targets from the score model
# =============================================================================

TARGETS = {
    # name: (direction, row key of planner.simulate.predict)
    "swap_rate": ("<=", "swap_rate_mean"),
    "reversal_rate": ("<=", "reversal_rate_mean"),
    "ci_width": ("<=", "ci_width_median"),
    "kendall_tau": (">=", "kendall_tau_mean"),
    "erho2": (">=", "erho2"),
    "phi": (">=", "phi"),
    "power": (">=", "power_mean"),
}


@dataclass(frozen=True)
class TargetResult:
    """Smallest topic count meeting a target, with an interval.

    Attributes:
        target: ``swap_rate`` | ``reversal_rate`` | ``ci_width`` | ``kendall_tau`` | ``erho2`` |
            ``phi`` | ``power``.
        value: the target value; ``direction`` says whether the statistic must be ``<=`` or ``>=`` it.
        n_topics: smallest n meeting it (``None`` when no n up to ``n_max`` does).
        achieved: the statistic at ``n_topics``; ``at_n_minus_1``: at ``n_topics - 1``.
        lower, upper: interval on n (``interval`` level) from the uncertainty of the variance
            estimates (``interval_method`` says how; ``None`` = unbounded).
        method: how the statistic was computed (``analytic`` or a :func:`planner.simulate.predict` method).
        variance: the variance selector used for the pair variances.
        min_diff, alpha: options the statistic used (power uses min_diff; widths use alpha).
        n_pairs, n_systems, n_topics_observed: size of the collection it was learnt from.
        identical_pairs: pairs of systems identical on every topic; they count as ties, as in
            :func:`planner.simulate.predict` (swap and reversal rate 0.5, power 1, width 0).
        resamples: topic resamples behind the interval on n; 0 when it came from the D-study or
            none was computed.
        sim_resamples: the resamples of each simulated n for ``bootstrap``, ``subsample`` and
            ``parametric`` (what drives their n); 0 for the closed-form methods.
        seed: the integer seed, when one was given; for ``bootstrap``, ``subsample`` and
            ``parametric`` the seed every n was simulated with (drawn from the Generator given,
            or fresh without one), so ``rng=seed`` repeats the answer.
        resampled_n: the smallest n of each topic resample (``inf`` where none up to ``n_max``),
            in resample order, when the interval came from topic resampling; not in
            :meth:`to_dict`. Two results computed with the same seed on the same topics drew the
            same resamples, so :func:`paired_difference` can compare them resample by resample.
    """

    target: str
    value: float
    direction: str
    n_topics: int | None
    achieved: float | None
    at_n_minus_1: float | None
    lower: int | None
    upper: int | None
    interval: float
    interval_method: str
    method: str
    variance: str
    min_diff: float
    alpha: float
    n_pairs: int
    n_systems: int
    n_topics_observed: int
    identical_pairs: int
    resamples: int
    seed: int | None
    sim_resamples: int = 0
    resampled_n: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def n_lower(self) -> int | None:
        """``lower`` under the name :class:`SizeResult` uses (not in :meth:`to_dict`)."""
        return self.lower

    @property
    def n_upper(self) -> int | None:
        """``upper`` under the name :class:`SizeResult` uses (not in :meth:`to_dict`)."""
        return self.upper

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("resampled_n")
        return _plain(d)


class _Model:
    """Pair differences and variance components of a complete (S, T) matrix."""

    def __init__(self, vals: np.ndarray, selector: str):
        self.vals = vals
        a, b, dbar, s2d = _pair_diff_stats(vals)
        self.var = pair_variances(vals, selector, design="paired")
        # pairs identical on every topic are ties, as in planner.simulate.predict
        self.identical = (s2d == 0) & (dbar == 0)
        self.dbar = dbar
        self.comp = _anova_components(vals)

    def stat(self, target: str, n: float, *, min_diff: float, alpha: float, quantile: float = 50.0):
        comp = {k: np.array([v]) for k, v in self.comp.items()}
        return float(_batch_stat(target, np.array([float(n)]), self.dbar[None, :], self.var[None, :],
                                 comp, min_diff=min_diff, alpha=alpha, quantile=quantile)[0])


def _batch_stat(target: str, n: np.ndarray, dbar: np.ndarray, var: np.ndarray,
                comp: dict, *, min_diff: float, alpha: float, quantile: float = 50.0) -> np.ndarray:
    """The target statistic at ``n[i]`` for each of ``B`` models (rows): ``dbar``, ``var``
    are ``(B, K)``, ``comp`` holds ``(B,)`` components. A pair with ``var = 0`` and
    ``dbar = 0`` (identical systems) is a tie: swap and reversal rate 0.5, power 1, width 0."""
    n = np.asarray(n, dtype=float)
    nn = n[:, None]
    sd = np.sqrt(var)
    safe = np.where(sd > 0, sd, 1.0)

    def mmean(x):
        return x.mean(axis=1)

    if target in ("swap_rate", "reversal_rate", "kendall_tau"):
        z = np.where(sd > 0, np.abs(dbar) * np.sqrt(nn) / safe, np.where(dbar != 0, np.inf, 0.0))
        p = stats.norm.sf(z)
        if target == "reversal_rate":
            return mmean(p)
        swap = mmean(2 * p * (1 - p))
        return swap if target == "swap_rate" else 1.0 - 2.0 * swap
    if target == "ci_width":
        w = 2 * stats.t.isf(alpha / 2, nn - 1) * sd / np.sqrt(nn)
        return np.percentile(w, quantile, axis=1)
    if target == "power":
        pw = np.where(sd > 0, _t_power_exact(nn - 1, np.sqrt(nn) * min_diff / safe, alpha), 1.0)
        return mmean(pw)
    vs, vt, ve = comp["var_s"], comp["var_t"], comp["var_e"]
    with np.errstate(divide="ignore", invalid="ignore"):
        if target == "erho2":
            return np.where(vs + ve > 0, vs / (vs + ve / n), 0.0)
        if target == "phi":
            return np.where(vs + vt + ve > 0, vs / (vs + (vt + ve) / n), 0.0)
    raise ParameterError(f"unknown target {target!r}", parameter="target")


#: float64 values of one block of resamples in the pilot-aware interval (16 quadrature
#: scales and a pair mean per pair and resample)
_PRED_BLOCK = 4_000_000


def _predictive_batch(target: str, D: np.ndarray, V: np.ndarray, kurt, n0: int, spec):
    """``stat(n)`` -> the target at ``n[i]`` under the pilot-aware model of resample ``i``.

    ``D``, ``V``: ``(B, P)`` pair means and own variances of ``B`` topic resamples of
    ``n0`` topics; ``kurt``: their kurtoses (``spec`` integrated) or ``None``;
    ``spec``: ``(prior, variance, integrate)`` of :data:`planner.pilot.INTERNAL_METHODS`.
    As in :func:`planner.simulate.predict`, pairs identical on every topic are ties (0.5).
    Each resample's prior is fitted once, and a grid or mixture prior's posterior computed once
    (:class:`planner.pilot.PairRates`); every call costs ``B`` predictive evaluations at one n each.
    """
    from .simulate import PairRates, fit_prior, pair_variance_model, variance_df, variance_scales

    kind, pvar, integrate = spec
    B = D.shape[0]
    key = "reversal_rate" if target == "reversal_rate" else "swap_rate"
    rates = []
    for i in range(B):
        s2m = pair_variance_model(V[i], pvar)
        df = variance_scales(variance_df(n0, kurt[i]), pairs=D.shape[1]) if integrate else None
        rates.append(PairRates(D[i], s2m, n0, fit_prior(D[i], s2m, n0, prior=kind), key, df=df))

    def stat(n: np.ndarray) -> np.ndarray:
        out = np.empty(B)
        for i in range(B):
            r = np.where((D[i] == 0) & (V[i] == 0), 0.5, rates[i](int(n[i])))
            out[i] = r.mean()
        return 1.0 - 2.0 * out if target == "kendall_tau" else out
    return stat


def _meets(direction: str, x: float, value: float) -> bool:
    return x <= value if direction == "<=" else x >= value


def check_target_value(target: str, value, min_diff=0.05) -> float:
    """The target value as a float, or a ParameterError saying why it cannot be met or
    says nothing (shared by ``size --target``, ``budget --target`` and :func:`size_for_target`)."""
    if target not in TARGETS:
        raise ParameterError(f"unknown target {target!r}; expected one of {', '.join(TARGETS)}",
                             parameter="target")
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"expected a number, got {value!r}", parameter="value") from None
    if target in ("swap_rate", "reversal_rate") and not 0 < value < 1:
        raise ParameterError(f"a {target} target must be in (0, 1), got {value}"
                             + (" (0 needs infinitely many topics)" if value <= 0 else ""), parameter="value")
    if target == "swap_rate" and value >= 0.5:
        raise ParameterError(f"a swap rate is at most 0.5 (two independent sets disagree with probability "
                             f"2p(1-p)), so a target of {value} says nothing", parameter="value")
    if target == "ci_width" and not value > 0:
        raise ParameterError(f"a width target must be positive, got {value} (a width of 0 needs "
                             "infinitely many topics)", parameter="value")
    if target in ("kendall_tau", "erho2", "phi", "power") and not value < 1:
        raise ParameterError(f"a {target} target must be below 1, got {value} (1 needs infinitely "
                             "many topics)", parameter="value")
    if target == "power" and not (float(min_diff) > 0 and math.isfinite(float(min_diff))):
        raise ParameterError(f"the power target needs a positive difference, got {min_diff}",
                             parameter="min_diff")
    return value


def size_for_target(scores, *, target: str, value: float, method: str = "analytic",
                    variance: str = "pair", min_diff: float = 0.05, alpha: float = 0.05,
                    quantile: float = 50.0, interval: float = 0.95, resamples: int = 200,
                    n_max: int = 100_000, sim_resamples: int = 1000, rng=None) -> TargetResult:
    """Smallest number of topics for which a statistic of the collection meets ``value``.

    Args:
        scores: a complete :class:`~planner.scores.ScoreMatrix` (variants are averaged).
        target: ``swap_rate`` / ``reversal_rate`` / ``ci_width`` (<= value), ``kendall_tau`` /
            ``erho2`` / ``phi`` / ``power`` (>= value).
        method: ``analytic`` (formulas in the module docstring) or a
            :func:`planner.simulate.predict` method, whose curve is then searched.
        variance: pair-variance selector (``pair`` | ``pooled`` | ``within-system`` | ``percentile:q``).
        min_diff: true difference for the ``power`` target.
        quantile: the quantile over pairs of the ``ci_width`` statistic (50 = median).
        interval, resamples: level and count of the topic-resampling interval on n
            (``resamples=0`` skips it). For ``erho2``/``phi`` the interval is the D-study
            interval of :meth:`planner.variance.VarianceComponents.topics_for` (Feldt / AJF).
        sim_resamples: ``resamples`` of each :func:`planner.simulate.predict` call (random methods);
            every n is simulated with the same seed (common random numbers), so the search is
            over a fixed curve. The resampling methods use the data's own pair variances
            (``variance`` only applies to ``analytic``).
        n_max: largest n searched.
        rng: seed or Generator for the resampling (one child stream per resample).

    The interval re-solves each resample with the analytic formulas, or, for the swap,
    reversal and Kendall tau targets of a pilot-aware method (``predictive`` and its
    variants), with that method's own model (prior refitted on every resample;
    ``predictive-integrated`` costs about 16 times more).

    Memory: ``K T`` floats for the ``K = S (S-1) / 2`` pair differences of one resample, plus
    ``3 B K`` (``B = resamples``) for the resampled pair means and variances, which are solved
    together (a few more ``B K`` temporaries per step of the search); the pilot-aware
    re-solve works on blocks of resamples of about 4e6 float64 values (``B K`` more for
    ``predictive-integrated``'s kurtoses).
    """
    value = check_target_value(target, value, min_diff)
    direction, key = TARGETS[target]
    alpha = check_alpha(alpha)
    interval = _check_prob(interval, "interval")
    if not 0 < quantile <= 100:
        raise ParameterError(f"must be in (0, 100], got {quantile}", parameter="quantile")
    resamples = _interval_resamples(resamples)
    pred_spec = _PILOT_METHODS.get(method) if method != "analytic" else None
    if pred_spec is not None and variance != "pair":
        raise ParameterError(f"method {method!r} uses each pair's own variance (variance='pair'); "
                             f"got {variance!r}", parameter="variance")
    scores = _as_scores(scores)
    vals = _values(scores)
    if rng is None and ((resamples > 0 and target not in ("erho2", "phi"))
                        or method in ("bootstrap", "subsample", "parametric")):
        rng = draw_seed()       # recorded, so that the interval (or simulation) can be repeated
    seed = seed_of(rng)
    gen = as_generator(rng)
    model = _Model(vals, variance)
    identical = int(model.identical.sum())
    if identical and model.identical.all():
        raise InputError(f"every pair of systems is identical on every topic ({identical} pair(s)): no "
                         f"topic count changes the {target}", file=getattr(scores, "source", None))
    if identical:
        warnings.warn(f"{identical} pair(s) of systems identical on every topic: each counts as a tie in "
                      f"the {target} target (swap and reversal rate 0.5, power 1, interval width 0), as in "
                      "planner predict", DegenerateDataWarning, stacklevel=2)
    opts = dict(min_diff=float(min_diff), alpha=alpha, quantile=quantile)

    def solve(mdl) -> int | None:
        return smallest_n(lambda n: _meets(direction, mdl.stat(target, n, **opts), value), 2, n_max)

    if method == "analytic":
        stat_at = lambda n: model.stat(target, n, **opts)
        n_star = solve(model)
    else:
        if seed is None and pred_spec is None:
            # every n is simulated from one integer seed (common random numbers); without one, draw
            # it from the generator given (or fresh), and record it, so the answer can be repeated
            seed = int(gen.integers(0, 2 ** 31))
        stat_at = _predict_stat(scores, key=key, method=method, min_diff=min_diff, alpha=alpha,
                                resamples=int(sim_resamples), rng=seed if seed is not None else 0)
        top = n_max
        if method == "subsample":
            # two disjoint sets of the collection's topics: nothing beyond T // 2 can be simulated
            top = min(n_max, vals.shape[1] // 2)
            if top < 2:
                raise InputError(f"method 'subsample' needs at least 4 topics (two disjoint sets of 2), "
                                 f"got {vals.shape[1]}", file=getattr(scores, "source", None))
        n_star = smallest_n(lambda n: _meets(direction, stat_at(n), value), 2, top)
        if n_star is None and top < n_max:
            raise ParameterError(
                f"method 'subsample' cannot reach {target} {value:g}: it draws two disjoint topic sets "
                f"from the collection's {vals.shape[1]} topics, so it stops at {top} topics, where "
                f"{target} is {stat_at(top):.4g}; use method 'analytic', 'predictive' or 'bootstrap'",
                parameter="method")
    achieved = float(stat_at(n_star)) if n_star is not None else None
    prev = float(stat_at(n_star - 1)) if n_star is not None and n_star > 2 else None

    lower = upper = None
    imethod = "none"
    if n_star is None and method == "analytic" and target in ("swap_rate", "reversal_rate", "kendall_tau"):
        # pairs whose means are exactly equal (not identical systems) keep p = 0.5 at every n
        tied = int(((np.abs(model.dbar) <= 1e-12) & ~model.identical).sum())
        if tied:
            warnings.warn(f"{tied} pair(s) of systems have exactly equal means on this collection: each "
                          f"keeps swap and reversal rate 0.5 at every n, so the {target} target "
                          f"{value:g} is out of reach; with more decimals in the scores the ties "
                          "would break", DegenerateDataWarning, stacklevel=2)
    if n_star is None and resamples > 0 and target not in ("erho2", "phi"):
        # resamples can meet a target the collection itself does not (they break exact ties):
        # an interval without a point would answer another question
        imethod = "none (the target is not reached on the collection itself)"
    elif method in ("bootstrap", "subsample", "parametric") and target not in ("erho2", "phi"):
        # the analytic re-solve of each topic resample answers for another estimator: its
        # interval could even exclude this method's n (a parametric 251 against [101, 248])
        imethod = (f"none ({method}: an interval on n would re-run the simulation on every topic "
                   "resample; --method analytic gives one, but for the analytic estimator, which "
                   "can exclude this method's n)")
    elif target in ("erho2", "phi"):
        lower, upper, imethod = _dstudy_interval(scores, target, value, interval)
    elif resamples > 0:
        T = vals.shape[1]
        K = model.dbar.size
        D = np.empty((resamples, K))
        V = np.empty((resamples, K))
        comp = {k: np.empty(resamples) for k in ("var_s", "var_t", "var_e")}
        # the pilot-aware methods' swap, reversal and tau are re-solved with their own model
        pred = pred_spec is not None and target in ("swap_rate", "reversal_rate", "kendall_tau")
        kurt = np.empty((resamples, K)) if pred and pred_spec[2] else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            for i, g in enumerate(gen.spawn(resamples)):
                vb = vals[:, g.integers(0, T, T)]
                mb = _Model(vb, variance)
                D[i], V[i] = mb.dbar, mb.var
                for k in comp:
                    comp[k][i] = mb.comp[k]
                if kurt is not None:
                    a_, b_ = pair_index(vb.shape[0])
                    kurt[i] = pair_moments(vb, a_, b_, kurtosis=True)[2]
        sign = 1.0 if direction == "<=" else -1.0
        if pred:
            # blocks of resamples, each solved on its own (the problems are independent),
            # so what each resample's model keeps is held for one block only: the
            # chi-square quadrature of an integrated variance
            # (17 quadrature factors per pair), or the cached posteriors of a grid or
            # mixture prior (pilot.PairRates: 121 grid points, or 3 x about 30 components)
            per_pair = {"npmle": 122, "mixture": 100}.get(pred_spec[0], 17)
            step = max(1, min(resamples, _PRED_BLOCK // (per_pair * K)))
            parts = []
            for lo_ in range(0, resamples, step):
                blk = slice(lo_, min(resamples, lo_ + step))
                stat = _predictive_batch(target, D[blk], V[blk], None if kurt is None else kurt[blk], T,
                                         pred_spec)
                parts.append(_smallest_n_vec(lambda n, f=stat: sign * f(n) <= sign * value,
                                             blk.stop - blk.start, 2, n_max))
            ns = np.concatenate(parts)
        else:
            ns = _smallest_n_vec(lambda n: sign * _batch_stat(target, n, D, V, comp, **opts) <= sign * value,
                                 resamples, 2, n_max)
        lo, hi = interval_quantiles(ns, interval)
        lower = None if not np.isfinite(lo) else int(lo)
        upper = None if not np.isfinite(hi) else int(hi)
        imethod = f"topic resampling ({resamples} resamples, {method if pred else 'analytic'} re-solve)"
    return TargetResult(target=target, value=value, direction=direction, n_topics=n_star,
                        achieved=achieved, at_n_minus_1=prev, lower=lower, upper=upper,
                        interval=interval, interval_method=imethod, method=method,
                        variance=("pooled" if method == "parametric" else
                                  "empirical" if method in ("bootstrap", "subsample") else variance),
                        min_diff=float(min_diff), alpha=alpha,
                        n_pairs=int(model.dbar.size), n_systems=vals.shape[0],
                        n_topics_observed=vals.shape[1], identical_pairs=identical,
                        resamples=resamples if imethod.startswith("topic resampling") else 0, seed=seed,
                        sim_resamples=int(sim_resamples) if method in ("bootstrap", "subsample", "parametric")
                        else 0,
                        resampled_n=ns if imethod.startswith("topic resampling") else None)


#: methods :func:`topics_for_variants` solves with (a closed form each)
VARIANT_METHODS = ("analytic", "predictive", "predictive-pair", "predictive-shrunk", "predictive-pooled")
#: most query variants per topic :func:`topics_for_variants` (and a study's ``variants``) accepts
MAX_VARIANTS = 10_000


@dataclass(frozen=True)
class VariantTrade:
    """Topics a target needs with ``v`` query variants per topic, for several ``v``
    (:func:`topics_for_variants`).

    Attributes:
        target, value, direction, method, min_diff, alpha: as in :class:`TargetResult`.
        n_systems, n_topics_observed, n_variants_observed: the collection's shape.
        identical_pairs: pairs identical on every topic and variant (ties, as everywhere).
        rows: one dict per ``v``: ``n_variants``; ``n_topics`` (``None``: not reached up to
            ``n_max``); ``queries`` (``n_topics * n_variants``, the queries to write);
            ``achieved`` (the statistic at ``n_topics``); ``n_lower``, ``n_upper`` (the interval
            on n, with ``resamples``); ``variance_ratio`` (the median over
            pairs of the variance of a topic's mean difference with ``v`` variants, relative to
            the collection's own ``V``).
        variant_share: the median over pairs of the within-topic (variant) share of the
            variance of one variant's difference, ``s2_b / (s2_a + s2_b)``.
        interval, interval_method, resamples, seed: the interval on n of each row (``n_lower``,
            ``n_upper``; ``None`` without resamples): topic resampling, ``"none"`` when skipped.
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
    interval: float = 0.95
    interval_method: str = "none"
    resamples: int = 0
    seed: int | None = None

    def to_dict(self) -> dict:
        return _plain(asdict(self))


def _variant_pair_variance(x: np.ndarray) -> np.ndarray:
    """Per pair ``a < b`` of a complete ``(S, T, V)`` array: the mean over topics of the
    variance (ddof=1) over the ``V`` variants of the difference ``x[a,t,v] - x[b,t,v]``.

    With ``y`` the deviations of each system's scores from its topic mean over variants,
    ``sum_{t,v} (y_a - y_b)^2 = G_aa + G_bb - 2 G_ab`` for the Gram matrix ``G = Y Y^T``
    (``Y = y`` as ``(S, T V)``): ``S^2`` floats, not ``K T V``."""
    S, T, V = x.shape
    y = (x - x.mean(axis=2, keepdims=True)).reshape(S, T * V)
    G = y @ y.T
    a, b = _pairs(S)
    out = (G[a, a] + G[b, b] - 2.0 * G[a, b]) / (T * (V - 1))
    return np.maximum(out, 0.0)     # rounding of identical systems


def _variant_solve(x: np.ndarray, target: str, value: float, direction: str, vs: list, method: str,
                   min_diff: float, alpha: float, quantile: float, n_max: int, source, warn: bool = True):
    """The rows of :func:`topics_for_variants` for the ``(S, T, V)`` values ``x``, the median
    variant share and the number of identical pairs (rows ``None`` when every pair is identical
    and ``warn`` is off: a topic resample can draw such a set)."""
    S, T, V = x.shape
    vals = x.mean(axis=2)
    model = _Model(vals, "pair")
    dbar, s2d = model.dbar, model.var
    s2b = _variant_pair_variance(x)
    identical = model.identical & (s2b == 0)
    if identical.all():
        if not warn:
            return None, 0.0, int(identical.sum())
        raise InputError(f"every pair of systems is identical on every topic ({identical.size} pair(s)): no "
                         f"topic count changes the {target}", file=source)
    if identical.any() and warn:
        warnings.warn(f"{int(identical.sum())} pair(s) of systems identical on every topic and variant: each "
                      f"counts as a tie in the {target} target (swap and reversal rate 0.5, power 1, interval "
                      "width 0), as in planner predict", DegenerateDataWarning, stacklevel=3)
    # the topic component, truncated at 0; a pair's variance with v variants is its own s2_d
    # times ratio(v) = (s2_a + s2_b / v) / (s2_a + s2_b / V): exactly s2_d at v = V
    s2a = np.maximum(s2d - s2b / V, 0.0)
    den = s2a + s2b / V

    def ratio(v: int) -> np.ndarray:
        return np.where(den > 0, (s2a + s2b / v) / np.where(den > 0, den, 1.0), 1.0)

    one = s2a + s2b
    share = float(np.median(s2b[one > 0] / one[one > 0])) if (one > 0).any() else 0.0
    spec = _PILOT_METHODS.get(method) if method != "analytic" else None
    prior = s2m = None
    if spec is not None:
        from .simulate import fit_prior, pair_variance_model

        s2m = pair_variance_model(s2d, spec[1])
        prior = fit_prior(dbar, s2m, T, prior="normal")
    opts = dict(min_diff=float(min_diff), alpha=alpha, quantile=quantile)
    comp = {k: np.array([v]) for k, v in model.comp.items()}
    rows = []
    for v in vs:
        var_v = s2d * ratio(v)
        if v < V:
            var_v = np.maximum(var_v, s2b / v)
        rv = np.where(s2d > 0, var_v / np.where(s2d > 0, s2d, 1.0), 1.0)

        def stat(n, var_v=var_v):
            n = float(n)
            if spec is None or target not in ("swap_rate", "reversal_rate", "kendall_tau"):
                return float(_batch_stat(target, np.array([n]), dbar[None, :], var_v[None, :], comp,
                                         **opts)[0])
            from .simulate import predictive_pair_rates

            pr = predictive_pair_rates(dbar, s2m, T, [int(n)], prior=prior, future_scale=rv)
            r = np.where(model.identical, 0.5,
                         pr["reversal_rate" if target == "reversal_rate" else "swap_rate"][:, 0])
            return float(1.0 - 2.0 * r.mean()) if target == "kendall_tau" else float(r.mean())

        n_star = smallest_n(lambda n, f=stat: _meets(direction, f(n), value), 2, n_max)
        rows.append({"n_variants": v, "n_topics": n_star,
                     "queries": None if n_star is None else int(n_star) * v,
                     "achieved": None if n_star is None else stat(n_star),
                     "variance_ratio": float(np.median(rv[s2d > 0])) if (s2d > 0).any() else 1.0})
    return rows, share, int(identical.sum())


def topics_for_variants(scores, *, target: str, value: float, n_variants=None, method: str = "analytic",
                        min_diff: float = 0.05, alpha: float = 0.05, quantile: float = 50.0,
                        n_max: int = 100_000, resamples: int = 0, interval: float = 0.95,
                        rng=None) -> VariantTrade:
    """Smallest number of topics meeting a target when each topic has ``v`` query variants
    (scores averaged over them), for each ``v`` in ``n_variants``.

    The model (docs/planning.md, "Topics against query variants"): for each pair ``(a, b)``
    the difference on variant ``q`` of topic ``t`` is ``delta + alpha_t + beta_tq``, so the
    variance of a topic's mean difference over ``v`` variants is ``s2_a + s2_b / v``. The
    collection gives ``s2_b`` (each pair's within-topic variance of the difference over its
    ``V`` variants, averaged over topics) and ``s2_d``, the variance over topics of the
    difference averaged over all ``V`` (which estimates ``s2_a + s2_b / V``); with
    ``s2_a = max(s2_d - s2_b / V, 0)`` and ``ratio(v) = (s2_a + s2_b / v) / (s2_a + s2_b / V)``,
    ``sigma_d^2(v) = s2_d ratio(v)``, and for ``v < V`` at least ``s2_b / v`` (the model's
    bound, which binds where the topic part came out negative). ``dbar`` stays the
    collection's, from all its variants. ``v = V`` is :func:`size_for_target` on the
    collection (``resamples=0``).

    Args:
        scores: a complete ScoreMatrix with a variant axis (at least 2 variants per topic).
        target: ``swap_rate`` | ``reversal_rate`` | ``kendall_tau`` | ``ci_width`` | ``power``
            (Erho2 and Phi: :meth:`planner.variance.VariantComponents.dstudy`).
        n_variants: variants per topic to solve for (default ``1 .. V``; at most
            :data:`MAX_VARIANTS`); more than ``V`` extrapolates the model.
        method: ``analytic``, or a normal-prior predictive method (:data:`VARIANT_METHODS`):
            the pilot's ``dbar`` keeps its noise ``s2_d / T`` (its ``V`` variants), future
            topics have ``sigma_d^2(v) / n`` (``predictive-shrunk``/``-pooled`` multiply their
            own variance by the same factor ``sigma_d^2(v) / s2_d``). Power and interval width
            use the paired t formulas with ``sigma_d^2(v)``, as :func:`planner.simulate.predict`
            does.
        min_diff, alpha, quantile, n_max: as in :func:`size_for_target`.
        resamples, interval, rng: ``resamples`` bootstrap resamples of the topics, each with all
            its variants (one child stream of ``rng`` each), re-fit the model and re-solve every
            ``v``; a row's ``n_lower`` / ``n_upper`` are the ``(1 -+ interval)/2`` quantiles
            (``None`` past ``n_max``, or when the collection itself does not reach the target).
            0 (default) skips it. Like :func:`size_for_target`'s, it reflects the uncertainty of
            the collection's own estimates only.

    Memory: ``S T V`` values of the deviations, ``S^2`` of their
    Gram matrix, and a few ``K`` vectors (``K = S (S-1) / 2`` pairs).
    """
    value = check_target_value(target, value, min_diff)
    direction, key = TARGETS[target]
    if target in ("erho2", "phi"):
        raise ParameterError(f"{target} with query variants comes from the three-facet D-study "
                             "(planner.variance.fit_variants(...).dstudy), not from this function",
                             parameter="target")
    if method not in VARIANT_METHODS:
        raise ParameterError(f"method {method!r} has no model of query variants; expected one of "
                             f"{', '.join(VARIANT_METHODS)}", parameter="method")
    alpha = check_alpha(alpha)
    if not 0 < quantile <= 100:
        raise ParameterError(f"must be in (0, 100], got {quantile}", parameter="quantile")
    m = _as_scores(scores)
    if not m.has_variants:
        raise ParameterError("the scores have no query variants (use planner.variance.stack_variants, "
                             "or a tidy table with a variant column)", parameter="scores")
    x = np.asarray(m.values, dtype=float)
    S, T, V = x.shape
    if V < 2:
        raise InputError(f"need at least 2 variants per topic, got {V}", file=m.source)
    if np.isnan(x).any():
        raise InputError("the scores have missing (topic, variant) cells; the variant model needs every "
                         "system scored on every variant of every topic", file=m.source)
    if n_variants is None:
        vs = list(range(1, V + 1))
    else:
        raw = [n_variants] if np.ndim(n_variants) == 0 else list(n_variants)
        if not raw or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= MAX_VARIANTS
                          for v in raw):
            raise ParameterError(f"expected integers from 1 to {MAX_VARIANTS:,}, got {n_variants!r}",
                                 parameter="n_variants")
        vs = sorted({int(v) for v in raw})
    rows, share, n_identical = _variant_solve(x, target, value, direction, vs, method, float(min_diff), alpha,
                                              quantile, n_max, m.source)
    for r in rows:
        r.update(n_lower=None, n_upper=None)
    resamples = _interval_resamples(resamples)
    interval = _check_prob(interval, "interval")
    imethod, seed = "none", None
    if resamples and all(r["n_topics"] is None for r in rows):
        # resamples can meet a target the collection itself does not: no interval without a point
        imethod, resamples = "none (the target is not reached on the collection itself)", 0
    if resamples:
        rng = seed_to_use(rng)      # a drawn seed when None, recorded so that the interval can be repeated
        ns = np.full((resamples, len(vs)), np.inf)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            for i, g in enumerate(as_generator(rng).spawn(resamples)):
                rb, _, _ = _variant_solve(x[:, g.integers(0, T, T), :], target, value, direction, vs, method,
                                          float(min_diff), alpha, quantile, n_max, m.source, warn=False)
                for j, r in enumerate(rb or []):
                    if r["n_topics"] is not None:
                        ns[i, j] = r["n_topics"]
        for j, r in enumerate(rows):
            if r["n_topics"] is None:       # no interval for a count the collection does not reach
                continue
            lo, hi = interval_quantiles(ns[:, j], interval)
            r.update(n_lower=int(lo) if np.isfinite(lo) else None, n_upper=int(hi) if np.isfinite(hi) else None)
        imethod = (f"topic resampling ({resamples} resamples of the topics with all their variants, "
                   f"{method} re-solve)")
        seed = seed_of(rng)
    return VariantTrade(target=target, value=value, direction=direction, method=method,
                        min_diff=float(min_diff), alpha=alpha, n_systems=S, n_topics_observed=T,
                        n_variants_observed=V, identical_pairs=n_identical,
                        variant_share=share, rows=rows, interval=float(interval),
                        interval_method=imethod, resamples=resamples, seed=seed)


def _dstudy_interval(scores, target, value, interval):
    try:
        from .variance import fit
    except ImportError:
        return None, None, "none (planner.variance not available)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        need = fit(scores).topics_for(**{target: value}, alpha=1 - interval)
    # the D-study counts from 1 topic, the answer from 2 (the least a pair's variance needs):
    # the interval uses the answer's floor, so it always contains the answer
    conv = lambda v: None if v is None or not math.isfinite(v) else max(2, int(v))
    name = "Feldt" if target == "erho2" else "Arteaga-Jeyaratnam-Franklin"
    return conv(need.lower), conv(need.upper), f"D-study interval ({name})"


def _predict_stat(scores, *, key, method, min_diff, alpha, resamples, rng):
    try:
        from .simulate import predict
    except ImportError:
        raise ParameterError(f"method {method!r} needs planner.simulate.predict, which is not "
                             "available; use method='analytic'", parameter="method") from None
    cache: dict[int, float] = {}

    def stat(n: int) -> float:
        if n not in cache:
            curve = predict(scores, topics=[int(n)], method=method, min_diff=min_diff, alpha=alpha,
                            resamples=resamples, keep_pairs=False, rng=rng)
            cache[n] = float(curve.rows[0][key])
        return cache[n]
    return stat


# =============================================================================
# pool depth, judgment growth and budgets
# =============================================================================

def _ranked_runs(run_map, topics, ties: str = "trec_eval"):
    """One frame ``run, query_id, doc_id, rank`` (0-based, trec_eval order) of all runs."""
    import pandas as pd

    from .measures import rank_frame

    parts = []
    for name, run in run_map.items():
        df = rank_frame(run, ties=ties)
        df = df[df["query_id"].isin(topics)]
        parts.append(pd.DataFrame({"run": name, "query_id": df["query_id"].to_numpy(),
                                   "doc_id": df["doc_id"].to_numpy(), "rank": df["rank"].to_numpy()}))
    out = pd.concat(parts, ignore_index=True)
    if out.empty:
        from .errors import InputError

        raise InputError("runs and qrels have no topic in common")
    return out


def _check_depths(depths) -> tuple[int, ...]:
    if isinstance(depths, (int, np.integer)):
        depths = [depths]
    if isinstance(depths, (str, bytes)) or isinstance(depths, bool):
        # a string would be read one character at a time ("10" -> depths 0 and 1)
        raise ParameterError(f"expected an integer or a list of integers, got {depths!r}", parameter="depths")
    try:
        out = tuple(sorted({int(d) for d in depths}))
    except (TypeError, ValueError):
        raise ParameterError(f"expected integers, got {depths!r}", parameter="depths") from None
    if not out or out[0] < 1:
        raise ParameterError(f"depths must be >= 1, got {list(out)}", parameter="depths")
    return out


@dataclass(frozen=True)
class GrowthCurve:
    """Distinct documents per topic in the depth-k pool against the number of pooled runs.

    Fitted per depth as a power law ``J_k(r) = a_k * r ** b_k`` by least squares on
    ``log J`` against ``log r`` over random run subsets (``subsets`` per size ``r``).

    Attributes:
        depths: the depths k.
        a, b: fitted coefficients per depth (dicts depth -> float).
        r2: coefficient of determination of each log-log fit.
        n_runs: runs the curve was learnt from; ``points``: rows (depth, runs, judgments_per_topic)
            of the subset means the fit used.
        seed: integer seed of the subset draws, when given.
    """

    depths: tuple[int, ...]
    a: dict
    b: dict
    r2: dict
    n_runs: int
    n_topics: int
    points: tuple
    seed: int | None

    def predict(self, depth: int, n_runs) -> np.ndarray | float:
        """Projected judgments per topic at ``depth`` for ``n_runs`` participating runs."""
        if depth not in self.a:
            raise ParameterError(f"no growth curve for depth {depth}; fitted {list(self.depths)}",
                                 parameter="depth")
        r = np.asarray(n_runs, dtype=float)
        if np.any(r < 1):
            raise ParameterError("the number of runs must be >= 1", parameter="n_runs")
        out = self.a[depth] * r ** self.b[depth]
        return float(out) if out.ndim == 0 else out

    def to_dict(self) -> dict:
        return _plain({"depths": list(self.depths), "a": self.a, "b": self.b, "r2": self.r2,
                       "n_runs": self.n_runs, "n_topics": self.n_topics, "seed": self.seed,
                       "model": "judgments_per_topic = a * runs ** b",
                       "points": [dict(p) for p in self.points]})

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame(list(self.points))


def judgment_growth(runs, qrels=None, *, depths=(10, 20, 50, 100), subsets: int = 10,
                    sizes: Sequence[int] | None = None, rng=None, topics: Sequence[str] | None = None) -> GrowthCurve:
    """Fit the growth of the depth-k pool with the number of runs (:class:`GrowthCurve`).

    ``runs``: a folder or mapping of runs (as :func:`planner.measures.score_runs`);
    ``qrels``: optional, only to restrict the topics to the judged ones. ``sizes``:
    subset sizes r (default a geometric grid from 1 to all runs); ``subsets`` random
    subsets per size, one child stream of ``rng`` per size.
    Memory: a boolean matrix of ``R x D`` (runs x distinct (topic, document) pairs in the
    deepest pool).
    """
    from .measures import as_runs

    depths = _check_depths(depths)
    if isinstance(subsets, bool) or not isinstance(subsets, (int, np.integer)) or subsets < 1:
        raise ParameterError(f"expected an integer >= 1, got {subsets!r}", parameter="subsets")
    run_map = as_runs(runs)
    names = list(run_map)
    R = len(names)
    if R < 2:
        raise ParameterError("need at least 2 runs to fit a growth curve", parameter="runs")
    if topics is None and qrels is not None:
        from .collection import read_qrels

        topics = list(read_qrels(qrels))
    if topics is None:
        topics = sorted(set().union(*(set(r.frame["query_id"]) for r in run_map.values())))
    topics = [str(t) for t in topics]
    allr = _ranked_runs(run_map, set(topics))
    T = len(set(allr["query_id"]))
    if sizes is None:
        sizes = sorted({int(round(x)) for x in np.geomspace(1, R, num=min(R, 9))})
    sizes = [int(s) for s in sizes if 1 <= int(s) <= R]
    if len(sizes) < 2:
        raise ParameterError("need at least two subset sizes between 1 and the number of runs",
                             parameter="sizes")
    rng = seed_to_use(rng)      # a drawn seed when None, recorded so that the fit can be repeated
    seed = seed_of(rng)
    streams = as_generator(rng).spawn(len(sizes))
    run_idx = allr["run"].map({n: i for i, n in enumerate(names)}).to_numpy()
    a, b, r2, points = {}, {}, {}, []
    for k in depths:
        sel = allr["rank"].to_numpy() < k
        keys = allr.loc[sel, "query_id"].astype(str) + "\x00" + allr.loc[sel, "doc_id"].astype(str)
        uniq, doc_id = np.unique(keys.to_numpy(), return_inverse=True)
        M = np.zeros((R, len(uniq)), dtype=bool)
        M[run_idx[sel], doc_id] = True
        xs, ys = [], []
        for s, g in zip(sizes, streams):
            # a fresh generator per (depth, size) from the size's stream: same draws at every depth
            gk = np.random.default_rng(g.bit_generator.seed_seq)
            vals = []
            reps = 1 if s == R else subsets
            for _ in range(reps):
                pick = gk.choice(R, size=s, replace=False)
                vals.append(M[pick].any(axis=0).sum() / T)
            mean = float(np.mean(vals))
            points.append({"depth": k, "runs": s, "judgments_per_topic": mean})
            xs.append(math.log(s))
            ys.append(math.log(mean))
        xs, ys = np.array(xs), np.array(ys)
        slope, icept = np.polyfit(xs, ys, 1)
        pred = icept + slope * xs
        ss = ((ys - ys.mean()) ** 2).sum()
        a[k], b[k] = float(math.exp(icept)), float(slope)
        r2[k] = float(1 - ((ys - pred) ** 2).sum() / ss) if ss > 0 else 1.0
    return GrowthCurve(depths=depths, a=a, b=b, r2=r2, n_runs=R, n_topics=T, points=tuple(points), seed=seed)


@dataclass(frozen=True)
class DepthStudy:
    """Pool depth against topics (:func:`pool_depth_study`).

    Attributes:
        measure, target, value, variance: what was measured and the (first) target solved per
            depth; ``targets`` all of them as ``(target, value)``, ``method`` how they were solved.
        rows: one dict per depth: ``depth``, ``judgments_per_topic`` (mean distinct documents in the
            depth-k pool), ``pool_judged_share`` (share of the depth-k pool's documents, over all
            topics, that the existing qrels judge; below 1 the re-scored pool is shallower than a
            real depth-k judgment, since unjudged documents count as non-relevant),
            ``kendall_tau_vs_full`` (tau-b of the system means against full judgments),
            ``var_s``, ``var_t``, ``var_e`` and ``var_e_ratio`` (to full judgments),
            ``mean_score`` / ``mean_score_full``, ``n_topics_needed`` (the largest over the
            targets, None when one is not reached; with ``n_lower``, ``n_upper``),
            ``n_by_target``, ``cost_per_topic``, ``total_cost``, ``tau_ok``.
        full: the same statistics with the full qrels (``depth`` None).
        recommendation: the chosen row (cheapest total cost among depths with tau >= tau_min;
            the deepest when none qualifies) and ``reason`` text.
        n_runs, n_topics, pool_runs, topic_cost, judgment_cost, tau_min.
        resamples, seed: the topic resamples behind ``n_lower``/``n_upper`` (0: no interval)
            and the seed they were drawn with (drawn when ``rng`` is None; None for a Generator).
    """

    measure: str
    target: str
    value: float
    variance: str
    targets: tuple
    method: str
    rows: tuple
    full: dict
    recommendation: dict
    n_runs: int
    n_topics: int
    pool_runs: tuple
    topic_cost: float
    judgment_cost: float
    tau_min: float
    resamples: int = 0
    seed: int | None = None

    def to_dict(self) -> dict:
        return _plain(asdict(self))

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame(list(self.rows))


def _components(m) -> dict[str, float]:
    from .variance import fit

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        f = fit(m)
    return {"var_s": float(f.var_s), "var_t": float(f.var_t), "var_e": float(f.var_e)}


def pool_depth_study(runs, qrels, *, depths=(10, 20, 50, 100), measure: str = "nDCG@10",
                     pool_runs: Sequence[str] | None = None, target: str = "swap_rate",
                     value: float = 0.05, variance: str = "pair", min_diff: float = 0.05,
                     alpha: float = 0.05, topic_cost: float = 0.0, judgment_cost: float = 1.0,
                     tau_min: float = 0.9, resamples: int = 0, rng=None, targets=None,
                     method: str = "analytic") -> DepthStudy:
    """Re-score runs with judgments restricted to the depth-k pool and weigh depth against topics.

    For each depth k: the qrels keep only documents in the union of the top k of
    ``pool_runs`` (default all runs; trec_eval order), unjudged = non-relevant; every
    run is re-scored with ``measure``; reported are the judgments a new campaign
    needs at depth k (distinct pooled documents per topic, judged or not), Kendall's
    tau-b of the system means against the full judgments, the variance components,
    and the topics needed for ``target`` (:func:`size_for_target` with ``method``, analytic by
    default, and each pair's own variance by default as in ``size --target`` and studies,
    with ``resamples`` topic resamples for an interval). ``targets``, a list of
    ``(target, value)``, replaces ``target``/``value``: a depth then needs the largest count
    over them (``n_by_target`` keeps each; the interval is the binding target's). ``cost_per_topic = topic_cost +
    judgments_per_topic * judgment_cost``. The recommendation is the cheapest total
    (topics needed x cost per topic) among depths whose tau reaches ``tau_min``:
    shallow pools buy topics but bias scores, and tau measures that bias.
    """
    from .collection import Qrels, read_qrels
    from .measures import as_runs, score_runs

    depths = _check_depths(depths)
    resamples = _interval_resamples(resamples)
    if resamples > 0:
        # every depth and target resamples with this seed (common random numbers); recorded
        rng = seed_to_use(rng)
    from .simulate import CLOSED_FORM as _CF

    if method not in _CF:
        # a random method would re-run its simulation at every depth and target, and subsample
        # cannot reach beyond half the topics: the budget and study paths refuse them too
        raise ParameterError(f"expected one of {', '.join(_CF)} (a closed form, solved at every depth), "
                             f"got {method!r}", parameter="method")
    tlist = [(str(t), float(v)) for t, v in (targets if targets else [(target, value)])]
    for name, v in (("topic_cost", topic_cost), ("judgment_cost", judgment_cost)):
        _check_cost(v, name)
    if not -1 <= float(tau_min) <= 1:
        raise ParameterError(f"must be in [-1, 1], got {tau_min}", parameter="tau_min")
    q = read_qrels(qrels)
    run_map = as_runs(runs)
    pool_names = list(run_map) if pool_runs is None else [str(p) for p in pool_runs]
    unknown = [p for p in pool_names if p not in run_map]
    if unknown:
        raise ParameterError(f"unknown run {unknown[0]!r}", parameter="pool_runs")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        full = score_runs(run_map, q, [measure], warn=False)[measure]
    topics = list(full.topics)
    allr = _ranked_runs({n: run_map[n] for n in pool_names}, set(topics))

    def stats_of(m, cost):
        comp = _components(m)
        by: dict[str, int | None] = {}
        best = (-1, None, None)               # the binding target's n and interval
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            for t, v in tlist:
                try:
                    tr = size_for_target(m, target=t, value=v, variance=variance, method=method,
                                         min_diff=min_diff, alpha=alpha, resamples=resamples, rng=rng)
                    by[t] = tr.n_topics
                except ParameterError:
                    by[t] = None
                if by[t] is not None and by[t] > best[0]:
                    best = (by[t], tr.lower, tr.upper)
        need = None if any(n is None for n in by.values()) else int(best[0])
        lo, hi = (best[1], best[2]) if need is not None else (None, None)
        return {**comp, "mean_score": float(m.topic_scores().mean()), "n_topics_needed": need,
                "n_by_target": by, "n_lower": lo, "n_upper": hi,
                "total_cost": None if need is None or cost is None else need * cost}

    full_row = {"depth": None, "judgments_per_topic": float(q.n_judgments) / max(len(q), 1),
                **stats_of(full, None)}
    full_means = full.topic_scores().mean(axis=1)
    rows = []
    undefined: list[int] = []
    ranks = allr["rank"].to_numpy()
    for k in depths:
        top = allr[ranks < k].drop_duplicates(["query_id", "doc_id"])
        pooled: dict[str, set] = {}
        for t, d in zip(top["query_id"].tolist(), top["doc_id"].tolist()):
            pooled.setdefault(t, set()).add(d)
        sizes = np.array([len(pooled.get(t, ())) for t in topics], dtype=float)
        rq = Qrels({t: {d: g for d, g in docs.items() if d in pooled.get(t, ())} for t, docs in q.items()
                    if t in set(topics)}, source=q.source)
        judged = sum(len(v) for v in rq.values())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m_k = score_runs(run_map, rq, [measure], warn=False)[measure]
        m_k = _align(m_k, full)
        k_means = m_k.topic_scores().mean(axis=1)
        tau = float(stats.kendalltau(full_means, k_means).statistic)
        if math.isnan(tau):
            if np.ptp(full_means) == 0 and np.ptp(k_means) == 0:
                tau = 1.0           # every system tied under both: the same (empty) order
            else:
                undefined.append(k)
        jpt = float(sizes.mean())
        cost = float(topic_cost) + jpt * float(judgment_cost)
        st = stats_of(m_k, cost)
        rows.append({"depth": k, "judgments_per_topic": jpt,
                     "pool_judged_share": judged / sizes.sum() if sizes.sum() else float("nan"),
                     "kendall_tau_vs_full": tau, **st,
                     "var_e_ratio": st["var_e"] / full_row["var_e"] if full_row["var_e"] > 0 else float("nan"),
                     "mean_score_full": full_row["mean_score"], "cost_per_topic": cost,
                     "tau_ok": bool(tau >= tau_min)})
    if undefined:
        warnings.warn("Kendall tau against full judgments is undefined at depth(s) "
                      + ", ".join(map(str, undefined)) + ": every system has the same mean score under "
                      "full judgments or at that depth (no ranking to agree with)", DegenerateDataWarning,
                      stacklevel=2)
    thin = [r for r in rows if r["pool_judged_share"] < 0.9]
    if thin:
        warnings.warn("the qrels judge only part of the pooled documents ("
                      + ", ".join(f"{r['pool_judged_share']:.0%} at depth {r['depth']}" for r in thin)
                      + "): those depths are re-scored with the existing judgments "
                      "(unjudged = non-relevant), so their tau and scores show the judgments already made, "
                      "not what a real pool to that depth would find; their cost is a real pool's",
                      DegenerateDataWarning, stacklevel=2)
    ok = [r for r in rows if r["tau_ok"] and r["total_cost"] is not None]
    if ok:
        best = min(ok, key=lambda r: (r["total_cost"], -r["depth"]))
        reason = (f"cheapest total cost ({best['n_topics_needed']} topics x {best['cost_per_topic']:.4g}) "
                  f"among depths whose Kendall tau against full judgments is >= {tau_min}")
    else:
        cand = [r for r in rows if r["total_cost"] is not None] or rows
        best = max(cand, key=lambda r: r["depth"])
        reason = (f"no depth reaches Kendall tau >= {tau_min} with a reachable target; the deepest "
                  "pool is the least biased")
    rec = {"depth": best["depth"], "n_topics": best["n_topics_needed"], "total_cost": best["total_cost"],
           "kendall_tau_vs_full": best["kendall_tau_vs_full"], "reason": reason}
    return DepthStudy(measure=measure, target=tlist[0][0], value=tlist[0][1], variance=variance,
                      targets=tuple(tlist), method=method,
                      rows=tuple(rows), full=full_row, recommendation=rec, n_runs=len(run_map),
                      n_topics=len(topics), pool_runs=tuple(pool_names), topic_cost=float(topic_cost),
                      judgment_cost=float(judgment_cost), tau_min=float(tau_min), resamples=resamples,
                      seed=seed_of(rng) if resamples > 0 else None)


def _align(m_k, full):
    """m_k on full's systems and topics (topics the restricted qrels lost score 0)."""
    if m_k.topics == full.topics and m_k.systems == full.systems:
        return m_k
    pos = {t: i for i, t in enumerate(m_k.topics)}
    spos = {s: i for i, s in enumerate(m_k.systems)}
    vals = np.zeros(full.values.shape[:2])
    src = m_k.topic_scores()
    for j, t in enumerate(full.topics):
        if t in pos:
            vals[:, j] = src[[spos[s] for s in full.systems], pos[t]]
    from .scores import ScoreMatrix

    return ScoreMatrix(vals, full.systems, full.topics, measure=m_k.measure, source=m_k.source)


@dataclass(frozen=True)
class BudgetResult:
    """Assessment budget over pool depths (:func:`budget`).

    Attributes:
        rows: one dict per depth: ``depth``, ``judgments_per_topic`` (observed, or projected to
            ``n_runs``), ``cost_per_topic`` (= topic_cost + judgments x judgment_cost),
            ``max_topics`` (floor(total / cost_per_topic), the feasible frontier; None without a
            total), ``n_topics_needed`` (None when unknown), ``total_cost`` (needed x cost per topic),
            ``kendall_tau_vs_full`` and ``tau_ok`` (from a DepthStudy, else None / True),
            ``feasible`` (needed known, within the total, and tau_ok).
        cheapest: the feasible row of least total cost (ties: deeper), or None.
        total, topic_cost, judgment_cost: the inputs; ``n_runs``: projection target (None = as observed);
        judgments_source: where the judgments per topic came from.
    """

    rows: tuple
    cheapest: dict | None
    tau_min: float | None
    total: float | None
    topic_cost: float
    judgment_cost: float
    n_runs: int | None
    judgments_source: str

    def to_dict(self) -> dict:
        return _plain(asdict(self))

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame(list(self.rows))

    def frontier(self, *, max_points: int = 50):
        """Rows ``depth, n_topics, cost`` of the cost of 1..max_topics topics at each depth
        (for :func:`planner.plots.plot_budget`)."""
        import pandas as pd

        out = []
        for r in self.rows:
            top = r["max_topics"] or r["n_topics_needed"] or 0
            for n in np.unique(np.linspace(1, max(top, 1), num=min(max_points, max(top, 1))).astype(int)):
                out.append({"depth": r["depth"], "n_topics": int(n), "cost": int(n) * r["cost_per_topic"]})
        return pd.DataFrame(out)


def budget(*, topic_cost: float = 0.0, judgment_cost: float = 1.0, total: float | None = None,
           judgments=None, topics_needed=None, n_runs: int | None = None,
           growth: GrowthCurve | None = None, tau_min: float | None = None,
           source: str | None = None) -> BudgetResult:
    """Cost per topic at each pool depth, the feasible (topics, depth) frontier and the cheapest pair.

    Args:
        judgments: judgments per topic at each depth: a mapping ``depth -> number``, a
            :class:`planner.measures.PoolStats` (mean pool size per depth), or a
            :class:`DepthStudy` (which also supplies the topics needed per depth).
        topics_needed: an int (the same at every depth) or a mapping ``depth -> n``; overrides
            a DepthStudy's.
        n_runs: project the judgments to this many participating runs with ``growth``
            (a :class:`GrowthCurve`, see :func:`judgment_growth`): judgments are scaled by
            ``growth.predict(k, n_runs) / growth.predict(k, growth.n_runs)``.
        total: the total budget; ``max_topics = floor(total / cost_per_topic)``, at most
            ``N_MAX`` (10,000,000). Costs and the total are at most ``MAX_COST`` (1e15).
        source: a label for where mapping judgments came from (recorded in the result).
        tau_min: with a DepthStudy (default: its ``tau_min``), a depth is feasible only when its
            Kendall tau against full judgments reaches ``tau_min`` (shallow pools bias scores).

    Raises ParameterError for negative costs, a total that buys not even one topic at any
    depth, or a projection without a growth curve.
    """
    tc, jc = _check_cost(topic_cost, "topic_cost"), _check_cost(judgment_cost, "judgment_cost")
    if tc == 0 and jc == 0:
        raise ParameterError("topic and judgment costs are both 0; nothing to budget",
                             parameter="judgment_cost")
    label = source
    need_map: dict[int, int | None] = {}
    tau_map: dict[int, float] = {}
    if isinstance(judgments, DepthStudy):
        tau_map = {r["depth"]: r["kendall_tau_vs_full"] for r in judgments.rows}
        if tau_min is None:
            tau_min = judgments.tau_min
        jmap = {r["depth"]: r["judgments_per_topic"] for r in judgments.rows}
        need_map = {r["depth"]: r["n_topics_needed"] for r in judgments.rows}
        label = f"pool depth study ({judgments.n_runs} runs, {judgments.n_topics} topics)"
    elif hasattr(judgments, "topics") and hasattr(judgments, "depths"):  # PoolStats
        df = judgments.topics
        jmap = {int(k): float(v) for k, v in df.groupby("depth")["pool_size"].mean().items()}
        label = f"pool statistics ({len(judgments.pool_runs)} pooled runs)"
    elif isinstance(judgments, Mapping):
        jmap = {int(k): float(v) for k, v in judgments.items()}
        label = source or "given"
    elif judgments is None and growth is not None:
        jmap = {k: growth.predict(k, growth.n_runs) for k in growth.depths}
        label = f"growth curve ({growth.n_runs} runs)"
    else:
        raise ParameterError("give judgments per topic per depth (mapping, PoolStats or DepthStudy)",
                             parameter="judgments")
    if not jmap:
        raise ParameterError("no depths", parameter="judgments")
    if any(not (v >= 0) for v in jmap.values()):
        raise ParameterError("judgments per topic must be >= 0", parameter="judgments")
    if n_runs is not None:
        if growth is None:
            raise ParameterError("projecting to another number of runs needs a growth curve "
                                 "(judgment_growth)", parameter="n_runs")
        n_runs = int(n_runs)
        if n_runs < 1:
            raise ParameterError(f"must be >= 1, got {n_runs}", parameter="n_runs")
        jmap = {k: v * growth.predict(k, n_runs) / growth.predict(k, growth.n_runs) for k, v in jmap.items()}
        label += f", projected to {n_runs} runs (power law a*r^b)"
    if topics_needed is not None:
        given = list(topics_needed.values()) if isinstance(topics_needed, Mapping) else [topics_needed]
        for v in given:
            if v is not None and (isinstance(v, bool) or not float(v) >= 1 or float(v) != int(v)):
                raise ParameterError(f"topic counts must be integers >= 1, got {v!r}", parameter="topics_needed")
        if isinstance(topics_needed, Mapping):
            need_map = {int(k): (None if v is None else int(v)) for k, v in topics_needed.items()}
        else:
            need_map = {k: int(topics_needed) for k in jmap}
    if total is not None:
        total = float(total)
        if not (total > 0 and math.isfinite(total)):
            raise ParameterError(f"must be a positive number, got {total}", parameter="total")
        _check_cost(total, "total")
        cheapest_topic = min(tc + j * jc for j in jmap.values())
        if total < cheapest_topic:
            raise ParameterError(f"a budget of {total:g} is below the cost of one topic at any depth "
                                 f"(cheapest {cheapest_topic:.4g})", parameter="total")
    rows = []
    for k in sorted(jmap):
        cost = tc + jmap[k] * jc
        max_n = None if total is None else (min(int(math.floor(min(total / cost, N_MAX))), N_MAX)
                                            if cost > 0 else None)
        need = need_map.get(k)
        tot = None if need is None else need * cost
        tau = tau_map.get(k)
        tau_ok = tau is None or tau_min is None or tau >= tau_min
        feasible = need is not None and (total is None or tot <= total) and tau_ok
        rows.append({"depth": k, "judgments_per_topic": jmap[k], "cost_per_topic": cost,
                     "max_topics": max_n, "n_topics_needed": need, "total_cost": tot,
                     "kendall_tau_vs_full": tau, "tau_ok": bool(tau_ok), "feasible": bool(feasible)})
    ok = [r for r in rows if r["feasible"]]
    cheapest = min(ok, key=lambda r: (r["total_cost"], -r["depth"])) if ok else None
    return BudgetResult(rows=tuple(rows), cheapest=cheapest, tau_min=tau_min, total=total, topic_cost=tc, judgment_cost=jc,
                        n_runs=n_runs, judgments_source=label)


# =============================================================================
# strata allocation
# =============================================================================

@dataclass(frozen=True)
class Allocation:
    """Allocation of ``n`` topics across strata (:func:`allocate`).

    Attributes:
        method: the allocation asked for (``proportional`` or ``optimal``); ``n_topics`` its total.
        strata: one dict per stratum: ``stratum``, ``weight`` W_k, ``sigma2`` (variance of per-topic
            pair differences within the stratum, mean over pairs), ``cost`` c_k, ``n_proportional``,
            ``n_optimal`` (integers), ``n`` (of the chosen method).
        compare: one dict per design (``proportional``, ``optimal``, ``unstratified``): ``n_topics``,
            ``cost`` (sum n_k c_k; unstratified: n x mean cost under proportional weights),
            ``variance`` of the (stratified) mean pair difference, ``width`` = 2 z_{1-alpha/2} sqrt(variance).
        alpha: level of the widths; ``variance_note`` says which variance was used.
    """

    method: str
    n_topics: int
    strata: tuple
    compare: tuple
    alpha: float
    variance_note: str

    def to_dict(self) -> dict:
        return _plain(asdict(self))

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame(list(self.strata))


def _round_alloc_cost(target: np.ndarray, c: np.ndarray, budget: float, a: np.ndarray,
                      minimum: int = 2) -> np.ndarray:
    """The integer allocation (each >= minimum) with the smallest variance ``sum a_k / n_k``
    whose cost ``sum n_k c_k`` stays within ``budget`` (when the minimum allows it).

    Largest-remainder rounding of the topic count could overspend when costs differ, and
    filling up from the floors one topic at a time (by variance drop per unit cost) can
    miss the best allocation (TREC-5 AP, costs 1 and 3: [31, 40] against [28, 41]). So:
    every floor/ceiling combination of the real allocation (up to 2^10 of them; beyond,
    the floors only) is filled up greedily, the best kept, and then improved by exchanges
    (topics out of one stratum, what the freed budget buys into another, then filled up)
    until none helps; with up to 6 strata a branch and bound (:func:`_exact_alloc_cost`)
    then makes it exact (unless it needs over 200,000 branches). Tested against exhaustive
    search.
    """
    tgt = np.asarray(target, float)
    K = tgt.size
    tol = 1e-9 * max(1.0, budget)

    def cost(n):
        return float((n * c).sum())

    def var(n):
        return float((a / n).sum())

    def fill(n):
        n = n.copy()
        while cost(n) > budget + tol and np.any(n > minimum):
            # over the budget (the minimum or a ceiling): drop the topic whose removal raises
            # the variance least per unit cost saved
            gain = np.where(n > minimum, a * (1.0 / (n - 1) - 1.0 / n) / c, np.inf)
            n[int(np.argmin(gain))] -= 1
        while True:
            fits = cost(n) + c <= budget + tol
            if not fits.any():
                return n
            gain = np.where(fits, a * (1.0 / n - 1.0 / (n + 1)) / c, -np.inf)
            k = int(np.argmax(gain))
            # the one-at-a-time greedy keeps adding to k while its gain a/(m (m+1) c) stays
            # above the runner-up's and the budget allows: add that many at once (with very
            # unequal costs this is millions of single steps)
            runner = np.max(np.delete(gain, k)) if K > 1 else -np.inf
            step = int((budget + tol - cost(n)) // c[k])
            if runner > 0:
                m = int((math.sqrt(1.0 + 4.0 * a[k] / (c[k] * runner)) - 1.0) / 2.0)
                step = min(step, m - int(n[k]) + 1)
            n[k] += max(1, step)

    lo = np.maximum(np.floor(tgt + 1e-9).astype(int), minimum)
    hi = np.maximum(np.ceil(tgt - 1e-9).astype(int), minimum)
    starts = [lo]
    if K <= 10:
        starts = [np.where(np.array(bits, bool), hi, lo) for bits in itertools.product((0, 1), repeat=K)]
    best = min((fill(s) for s in starts), key=lambda n: (cost(n) > budget + tol, var(n)))
    if cost(best) > budget + tol:
        return best                      # the minimum alone is over the budget
    # exchanges: r topics out of stratum k (r up to what buys one topic of the dearest
    # stratum), as many as the freed budget buys into stratum j, then fill up
    r_max = int(min(50, math.ceil(float(c.max() / c.min())) + 1))
    improved = True
    while improved:
        improved = False
        for k in range(K):
            for r in range(1, r_max + 1):
                if best[k] - r < minimum:
                    break
                for j in range(K):
                    n = best.copy()
                    n[k] -= r
                    if j != k:
                        n[j] += int((budget + tol - cost(n)) // c[j])
                    n = fill(n)
                    if cost(n) <= budget + tol and var(n) < var(best) * (1 - 1e-12):
                        best, improved = n, True
    if K <= 6:
        best = _exact_alloc_cost(np.asarray(a, float), np.asarray(c, float), budget + tol, minimum, best)
    return best


def _exact_alloc_cost(a: np.ndarray, c: np.ndarray, budget: float, minimum: int, incumbent: np.ndarray,
                      max_nodes: int = 200_000):
    """Branch and bound for ``min sum a_k / n_k`` s.t. ``sum c_k n_k <= budget``, ``n_k >= minimum``
    integer, from a feasible ``incumbent``. A branch (``n_1..n_k`` fixed, budget ``R`` left) is
    cut when its variance plus the continuous bound of the rest, ``(sum_j sqrt(a_j c_j))^2 / R``
    (the relaxation without the minimum), cannot beat the best; the last stratum takes all the
    budget left. Exact when the search ends within ``max_nodes`` branches (milliseconds for a
    few strata and hundreds of topics); beyond that (tens of thousands of topics in 5-6
    strata, where the variance is flat near its optimum) the best allocation found so far,
    never worse than the incumbent, is returned."""
    K = a.size
    root = np.concatenate([np.cumsum(np.sqrt(a * c)[::-1])[::-1], [0.0]])   # suffix sums
    min_rest = np.concatenate([np.cumsum((minimum * c)[::-1])[::-1], [0.0]])
    best = incumbent.copy()
    best_v = [float((a / best).sum())]
    n = np.zeros(K, int)
    nodes = [0]

    def dfs(k: int, spent: float, v: float) -> None:
        nodes[0] += 1
        if nodes[0] > max_nodes:
            return
        left = budget - spent
        if k == K - 1:
            m = int(left // c[k])
            if m >= minimum and v + a[k] / m < best_v[0] * (1 - 1e-12):
                n[k] = m
                best[:] = n
                best_v[0] = v + a[k] / m
            return
        hi = int((left - min_rest[k + 1]) // c[k])
        if hi < minimum:
            return
        r2 = root[k + 1] ** 2

        def lb(m: int) -> float:
            rem = left - c[k] * m
            return v + a[k] / m + (r2 / rem if rem > 0 else math.inf)

        # lb is convex in m: the m worth trying form an interval around its minimiser
        ms = math.sqrt(a[k]) * left / (math.sqrt(a[k]) * c[k] + math.sqrt(c[k]) * root[k + 1])
        m0 = int(min(max(round(ms), minimum), hi))
        thr = best_v[0] * (1 - 1e-12)
        if lb(m0) >= thr:
            return

        def edge(inside: int, outside: int) -> int:     # last m from inside with lb < thr
            if lb(outside) < thr:
                return outside
            while abs(outside - inside) > 1:
                mid = (inside + outside) // 2
                inside, outside = (mid, outside) if lb(mid) < thr else (inside, mid)
            return inside

        lo_m, hi_m = edge(m0, minimum), edge(m0, hi)
        order = sorted(range(lo_m, hi_m + 1), key=lambda m: abs(m - ms))
        for mm in order:
            if lb(mm) >= best_v[0] * (1 - 1e-12):
                continue
            n[k] = mm
            dfs(k + 1, spent + c[k] * mm, v + a[k] / mm)

    dfs(0, 0.0, 0.0)
    return best


def allocate(scores, *, n: int, costs: Mapping[str, float] | None = None, method: str = "proportional",
             weights: Mapping[str, float] | None = None, alpha: float = 0.05) -> Allocation:
    """Split ``n`` topics across the strata of ``scores``: proportional or Neyman optimal.

    ``W_k``: ``weights`` (normalised) or the strata's shares of the collection's topics.
    ``sigma_k^2``: the within-stratum variance of per-topic pair differences, averaged over
    pairs. Proportional: ``n_k = n W_k``. Optimal (Neyman with cost ``c_k``, default 1):
    ``n_k ∝ W_k sigma_k / sqrt(c_k)``, scaled to the proportional allocation's total cost
    (so both cost the same; with unequal costs the rounding keeps the optimal one within that
    cost, adding topics where they lower the variance most per unit cost). Each stratum gets
    at least 2 topics (largest-remainder rounding).
    The variance of the stratified mean difference is ``sum_k W_k^2 sigma_k^2 / n_k`` and the
    width ``2 z_{1-alpha/2} sqrt(.)``; ``unstratified`` is simple random sampling of ``n`` topics
    with the collection's overall pair-difference variance (including between-strata spread).
    """
    if method not in ("proportional", "optimal"):
        raise ParameterError(f"unknown method {method!r}; expected proportional or optimal",
                             parameter="method")
    alpha = check_alpha(alpha)
    try:
        n = int(n)
    except (TypeError, ValueError):
        raise ParameterError(f"expected an integer, got {n!r}", parameter="n") from None
    if getattr(scores, "strata", None) is None:
        raise ParameterError("the score matrix has no strata (attach them with with_strata or "
                             "load_scores(strata=...))", parameter="scores")
    vals = _values(scores)
    labels = list(scores.stratum_labels())
    strata = np.asarray(scores.strata)
    a, b = _pairs(vals.shape[0])
    sig2, counts = [], []
    for lab in labels:
        cols = strata == lab
        if cols.sum() < 2:
            raise ParameterError(f"stratum {lab!r} has {int(cols.sum())} topic; need 2 to estimate "
                                 "its variance", parameter="scores")
        d = vals[a][:, cols] - vals[b][:, cols]
        sig2.append(float(d.var(axis=1, ddof=1).mean()))
        counts.append(int(cols.sum()))
    sig2 = np.array(sig2)
    if weights is not None:
        missing = [lab for lab in labels if lab not in weights]
        if missing:
            raise ParameterError(f"no weight for stratum {missing[0]!r}", parameter="weights")
        W = np.array([float(weights[lab]) for lab in labels])
        if np.any(W < 0) or W.sum() <= 0:
            raise ParameterError("weights must be >= 0 and not all 0", parameter="weights")
    else:
        W = np.array(counts, dtype=float)
    W = W / W.sum()
    if costs is not None:
        unknown = [str(k) for k in costs if k not in labels]
        if unknown:
            raise ParameterError(f"unknown stratum {unknown[0]!r} (the strata are {', '.join(map(repr, labels))})",
                                 parameter="costs")
        missing = [lab for lab in labels if lab not in costs]
        if missing:
            raise ParameterError(f"no cost for stratum {missing[0]!r}", parameter="costs")
        c = np.array([float(costs[lab]) for lab in labels])
        if np.any(~(c > 0)) or not np.all(np.isfinite(c)):
            raise ParameterError("stratum costs must be positive and finite", parameter="costs")
    else:
        c = np.ones(len(labels))
    n_prop = allocate_counts(n, W, parameter="n")
    budget_c = float((n * W * c).sum())
    shape = W * np.sqrt(sig2) / np.sqrt(c)
    if shape.sum() <= 0:
        shape = W.copy()
    opt_real = shape * budget_c / float((shape * c).sum())
    def too_many(total):
        return ParameterError(f"with these stratum costs (largest / smallest = {c.max() / c.min():.3g}) the "
                              f"budget of {n} proportionally allocated topics buys {total:.3g} topics in the "
                              f"optimal allocation, more than {MAX_TOPICS:,}", parameter="costs")

    if not opt_real.sum() <= MAX_TOPICS:
        raise too_many(opt_real.sum())
    if np.all(c == c[0]):
        n_opt_total = int(round(opt_real.sum()))
        n_opt = allocate_counts(max(n_opt_total, 2 * len(labels)), opt_real, parameter="n")
    else:
        n_opt = _round_alloc_cost(opt_real, c, budget_c, W ** 2 * sig2)
        if n_opt.sum() > MAX_TOPICS:     # the rounding spent what it freed on very cheap topics
            raise too_many(float(n_opt.sum()))
    z = stats.norm.isf(alpha / 2)

    def summary(name, nk):
        v = float((W ** 2 * sig2 / nk).sum())
        return {"design": name, "n_topics": int(nk.sum()), "cost": float((nk * c).sum()),
                "variance": v, "width": float(2 * z * math.sqrt(v))}

    d_all = vals[a] - vals[b]
    v_srs = float(d_all.var(axis=1, ddof=1).mean()) / n
    compare = (summary("proportional", n_prop), summary("optimal", n_opt),
               {"design": "unstratified", "n_topics": n, "cost": float(n * (W * c).sum()),
                "variance": v_srs, "width": float(2 * z * math.sqrt(v_srs))})
    chosen = n_prop if method == "proportional" else n_opt
    rows = tuple({"stratum": lab, "weight": float(W[i]), "sigma2": float(sig2[i]), "cost": float(c[i]),
                  "topics_observed": counts[i], "n_proportional": int(n_prop[i]),
                  "n_optimal": int(n_opt[i]), "n": int(chosen[i])} for i, lab in enumerate(labels))
    return Allocation(method=method, n_topics=int(chosen.sum()), strata=rows, compare=compare, alpha=alpha,
                      variance_note="within-stratum variance of per-topic pair differences, mean over "
                                    "all system pairs; normal-theory widths")
