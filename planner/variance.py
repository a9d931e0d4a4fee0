"""Variance components of per-topic scores: G-study, D-study, REML, pair variances.

Scores ``x[s, t]`` for system ``s = 1..S`` and topic ``t = 1..T`` follow the
two-way crossed random-effects model

    x[s, t] = mu + a[s] + b[t] + e[s, t],   Var a = var_s, Var b = var_t, Var e = var_e

(``var_e`` holds the system x topic interaction plus error; the two cannot be
separated with one observation per cell).

**ANOVA (G-study, balanced data).** With system means ``m_s``, topic means ``m_t``
and grand mean ``m``::

    SS_s = T * sum_s (m_s - m)^2                  df_s = S - 1
    SS_t = S * sum_t (m_t - m)^2                  df_t = T - 1
    SS_e = sum_{s,t} (x - m_s - m_t + m)^2         df_e = (S - 1)(T - 1)
    MS_* = SS_* / df_*
    var_s = (MS_s - MS_e) / T,  var_t = (MS_t - MS_e) / S,  var_e = MS_e

Negative estimates are set to 0, named in ``truncated`` and announced with a
:class:`~planner.errors.DegenerateDataWarning` (as gt4ireval does).
``drop=q`` first removes the systems whose mean is below the ``q``-quantile of the
system means (R's default quantile, type 7 = numpy's ``linear``); systems whose mean
equals the cut are kept (gt4ireval's ``colMeans(data) >= quantile(colMeans(data), drop)``).

**REML** (``method="reml"``, and ``"auto"`` whenever cells are missing): restricted
maximum likelihood of the same model on the observed cells. ``reml_engine="direct"``
(default) maximises the restricted likelihood here (see ``_reml2_direct``: Woodbury
identities reduce every step to a ``min(S, T)``-dimensional Cholesky factorisation);
``reml_engine="statsmodels"`` fits statsmodels ``MixedLM`` with one group and two crossed
variance components (system, topic), no group-level random intercept; the two agree
(tests) but MixedLM is one to two orders of magnitude slower. ``var_e`` is the residual
scale. REML keeps components non-negative (a component at the boundary is reported as
truncated). The mean squares of a REML fit are the ones implied by its components
(``MS_e = var_e``, ``MS_s = var_e + T var_s``, ``MS_t = var_e + S var_t``, with ``S``
and ``T`` the numbers of systems and topics that have any observed cell); the
D-study intervals use them with the balanced degrees of freedom, which is exact on
balanced data and an approximation otherwise.

**D-study** at ``n`` topics (``n`` may be any positive number)::

    Erho2(n) = var_s / (var_s + var_e / n)
    Phi(n)   = var_s / (var_s + (var_t + var_e) / n)

Intervals at level ``1 - alpha`` (two-sided; each tail ``alpha / 2``; gt4ireval's
``alpha`` is the per-tail probability, so its ``alpha=0.1`` is ``alpha=0.2`` here).
With ``F(p; d1, d2)`` the F quantile and ``F(p; d1, inf) = chi2(p; d1) / d1``:

- Feldt (1965) for Erho2: ``r_lo = (MS_s / (MS_e F(1 - alpha/2; df_s, df_e)) - 1) / T``,
  ``r_hi`` the same with ``F(alpha/2; ...)``, ``r`` estimating ``var_s / var_e``; the
  bound at ``n`` topics is ``n r / (1 + n r)``.
- Arteaga, Jeyaratnam & Franklin (1982) for Phi: with ``F1 = F(p; df_s, inf)``,
  ``F2 = F(p; df_s, df_e)``, ``F3 = F(p; df_s, df_t)``::

      L = (MS_s^2 - F1 MS_s MS_e + (F1 - F2) F2 MS_e^2) / ((S - 1) F1 MS_s MS_e + F3 MS_s MS_t)
      P1 = S L / (S L + T)                     # bound on Phi at one topic
      bound(n) = n P1 / (1 + (n - 1) P1)       # Spearman-Brown

  with ``p = 1 - alpha/2`` for the lower and ``alpha/2`` for the upper bound.

A bound whose ratio comes out negative (a small system effect) is reported as 0,
and the corresponding topic count as infinite.

**Topics needed** for a target ``g`` (``topics_for``): ``n = ceil(g var_e / (var_s (1 - g)))``
for Erho2 and ``ceil(g (var_t + var_e) / (var_s (1 - g)))`` for Phi; the interval of
``n`` comes from the bounds above (``ceil(g / (r (1 - g)))`` and
``ceil(g (1 - P1) / (P1 (1 - g)))``), as in gt4ireval.

**Pair variances.** For systems ``a < b``: ``d[t] = x[a, t] - x[b, t]``, ``dbar`` its mean,
``s2_d`` its variance (``ddof=1``). All pairs at once from the Gram matrix of the
topic-centred scores: ``s2_d(a, b) = v_a + v_b - 2 c_ab``, ``v_a`` the per-system
variance (``ddof=1``), ``c_ab`` the covariance. Averaged over all pairs,
``mean(s2_d) = 2 MS_e`` exactly. The selectors of :func:`pair_variance`:

============== ================================ =================================
selector       design="paired"                  design="independent"
============== ================================ =================================
pair           s2_d of each pair                (v_a + v_b) / 2 of each pair
pooled         2 var_e                          var_e
within-system  2 V_E1                           V_E1
percentile:q   q-th percentile of s2_d          q-th percentile of (v_a + v_b)/2
============== ================================ =================================

``V_E1`` (:func:`within_system_variance`) is the residual of the one-way ANOVA with
systems as the factor: ``sum_{s,t} (x - m_s)^2 / (S (T - 1))`` (pooled over the
observed cells when cells are missing).

**Strata.** When topics carry a stratum, each stratum gets its own two-way fit on its
topics (``strata``), with weights ``W_k = T_k / T`` by default (``weights`` overrides
them). Within a stratum, systems with a missing cell in it are left out of that
stratum's fit (so a combined collection whose systems differ between strata, such as
TREC DL 2019 + 2020, gets one complete fit per year); the overall fit uses all cells
(REML when any are missing).

**Three facets** (:func:`fit_variants`): ``x[s, t, v]`` with ``V`` variants nested in
topics (query variations: ``nesting="topic"``; design ``s x (v:t)``) or ``V`` seeds
nested in systems (``nesting="system"``; design ``(v:s) x t``). ANOVA estimates from
the expected mean squares (``var_e`` = residual, ``var_st`` = system x topic,
``var_v`` = variant-within-topic or seed-within-system). D-study at ``n`` topics and
``m`` variants (seeds)::

    nesting="topic":  rel = var_st / n + var_e / (n m);     abs = rel + var_t / n + var_v / (n m)
    nesting="system": rel = var_v / m + var_st / n + var_e / (n m);  abs = rel + var_t / n
    Erho2 = var_s / (var_s + rel),  Phi = var_s / (var_s + abs)

Memory: :func:`fit` (ANOVA) uses the score matrix plus ``min(S, 4e6 / T) * T`` floats
of work space; :func:`pair_stats` needs ``2 S T + S^2 + 6 P`` float64 values
(``P = S (S - 1) / 2`` pairs), about 0.2 GB for 1,000 systems x 10,000 topics; the
direct REML fit about ``4 S T + min(S, T)^2`` float64 values.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .errors import DegenerateDataWarning, InputError, ParameterError
from .scores import ScoreMatrix

__all__ = [
    "DStudy",
    "PairStats",
    "TopicsNeeded",
    "VarianceComponents",
    "VariantComponents",
    "VariantDStudy",
    "fit",
    "fit_variants",
    "pair_index",
    "pair_moments",
    "pair_stats",
    "pair_variance",
    "pair_variance_summary",
    "parse_selector",
    "stack_variants",
    "within_system_variance",
]

_METHODS = ("auto", "anova", "reml")
_CHUNK_VALUES = 4_000_000          # floats of work space per chunk (32 MB)
_PAIR_BLOCK = 2_000_000            # floats of differences per chunk in pair_moments (16 MB)


# ============================================================================ helpers
def as_matrix(scores, parameter: str = "scores") -> ScoreMatrix:
    """A ScoreMatrix from a ScoreMatrix, a path (``load_scores``), a wide DataFrame (rows
    topics) or a 2-D array (S x T)."""
    if isinstance(scores, ScoreMatrix):
        return scores
    if isinstance(scores, (str, os.PathLike)):
        from .collection import load_scores

        return load_scores(scores)
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover
        pd = None
    if pd is not None and isinstance(scores, pd.DataFrame):
        df = scores
        if len(df.columns) and str(df.columns[0]).lower() == "topic" and "system" not in df.columns:
            df = df.set_index(df.columns[0])
        return ScoreMatrix.from_frame(df, missing="keep")
    if isinstance(scores, (np.ndarray, list, tuple)):
        try:
            arr = np.asarray(scores, dtype=np.float64)
        except (TypeError, ValueError):
            raise ParameterError("expected numbers in a systems x topics array (or a ScoreMatrix, "
                                 "DataFrame or path)", parameter=parameter) from None
        if arr.ndim not in (2, 3):
            raise ParameterError(f"expected a systems x topics array, got shape {arr.shape}",
                                 parameter=parameter)
        return ScoreMatrix.build(arr, [f"s{i + 1}" for i in range(arr.shape[0])],
                                 [f"t{j + 1}" for j in range(arr.shape[1])], missing="keep")
    raise ParameterError(f"expected a ScoreMatrix, DataFrame or array, got {type(scores).__name__}",
                         parameter=parameter)


def _name(m: ScoreMatrix) -> str:
    return m.source or m.measure or "scores"


def _check_size(x: np.ndarray, m: ScoreMatrix) -> None:
    if x.shape[0] < 2:
        raise InputError(f"need at least 2 systems to fit variance components, got {x.shape[0]}",
                         file=m.source)
    if x.shape[1] < 2:
        raise InputError(f"need at least 2 topics to fit variance components, got {x.shape[1]}",
                         file=m.source)


def _check_degenerate(x: np.ndarray, m: ScoreMatrix, topics: Sequence[str]) -> None:
    """Error for a constant matrix; warning for topics on which every system scores the same."""
    finite = x[~np.isnan(x)]
    if finite.size == 0:
        raise InputError("no observed scores", file=m.source)
    if np.all(finite == finite[0]):
        raise InputError(f"every score is {finite[0]:.6g}: a constant matrix has no variance to "
                         "decompose", file=m.source)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo = np.nanmin(x, axis=0)
        hi = np.nanmax(x, axis=0)
    flat = np.flatnonzero(lo == hi)
    if flat.size:
        zero = [topics[j] for j in flat if lo[j] == 0]
        listed = ", ".join(repr(topics[j]) for j in flat[:5]) + (", ..." if flat.size > 5 else "")
        extra = f" ({len(zero)} of them all-zero)" if zero else ""
        warnings.warn(f"{_name(m)}: {flat.size} topic(s) on which every system scores the same"
                      f"{extra}: {listed}; they add to the topic variance but cannot separate "
                      "systems (consider informative-topic filtering)",
                      DegenerateDataWarning, stacklevel=4)


def _positive_n(n, parameter: str = "n") -> np.ndarray:
    arr = np.asarray(n, dtype=np.float64)
    if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ParameterError(f"topic counts must be positive finite numbers, got {n!r}",
                             parameter=parameter)
    return arr


#: smallest test level accepted: below it t, F and chi-square quantiles overflow or lose
#: all precision (alpha 1e-300 gave a "power" of 2 and NaN interval bounds)
MIN_ALPHA = 1e-10
#: test levels are below this (a 1 - alpha interval narrower than 50% is not a confidence
#: statement); the same range as the study schema's ``alpha``
MAX_ALPHA = 0.5


def check_alpha(alpha, parameter: str = "alpha") -> float:
    """``alpha`` as a float in ``[MIN_ALPHA, MAX_ALPHA)``, else a ParameterError naming ``parameter``."""
    rng = f"[{MIN_ALPHA:g}, {MAX_ALPHA:g})"
    if isinstance(alpha, bool):
        raise ParameterError(f"expected a number in {rng}, got {alpha!r}", parameter=parameter)
    try:
        a = float(alpha)
    except (TypeError, ValueError):
        raise ParameterError(f"expected a number in {rng}, got {alpha!r}", parameter=parameter) from None
    if not MIN_ALPHA <= a < MAX_ALPHA:
        raise ParameterError(f"must be in {rng}, got {alpha!r}", parameter=parameter)
    return a


_check_alpha = check_alpha


def _ratio(num, den):
    """num / den with 0/0 -> nan and x/0 -> 1 handled by the callers' conventions."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(num, dtype=np.float64) / np.asarray(den, dtype=np.float64)


def _scalar_or_array(arr: np.ndarray, like):
    return float(arr) if np.ndim(like) == 0 else arr


def _ceil_or_inf(v: float) -> float:
    if not np.isfinite(v) or v < 0:
        return math.inf
    # guard against 12.000000000000002 -> 13
    r = round(v)
    if abs(v - r) < 1e-9 * max(1.0, abs(v)):
        return float(max(r, 1))
    return float(max(math.ceil(v), 1))


# ============================================================================ D-study
@dataclass(frozen=True)
class DStudy:
    """Erho2 and Phi at several topic counts, with intervals.

    Attributes:
        n_topics: the topic counts.
        alpha: two-sided level; intervals cover ``1 - alpha`` (each tail ``alpha / 2``).
        erho2, erho2_lower, erho2_upper: generalizability coefficient and its Feldt interval.
        phi, phi_lower, phi_upper: dependability index and its Arteaga-Jeyaratnam-Franklin interval.
    """

    n_topics: tuple[float, ...]
    alpha: float
    erho2: tuple[float, ...]
    erho2_lower: tuple[float, ...]
    erho2_upper: tuple[float, ...]
    phi: tuple[float, ...]
    phi_lower: tuple[float, ...]
    phi_upper: tuple[float, ...]

    @property
    def rows(self) -> list[dict]:
        keys = ("n_topics", "erho2", "erho2_lower", "erho2_upper", "phi", "phi_lower", "phi_upper")
        cols = [getattr(self, k) for k in keys]
        out = []
        for vals in zip(*cols):
            row = dict(zip(keys, (float(v) for v in vals)))
            if float(row["n_topics"]).is_integer():
                row["n_topics"] = int(row["n_topics"])
            out.append(row)
        return out

    def to_dict(self) -> dict:
        return {"alpha": float(self.alpha), "interval": "Feldt (Erho2), Arteaga-Jeyaratnam-Franklin (Phi)",
                "rows": self.rows}

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame(self.rows)


@dataclass(frozen=True)
class TopicsNeeded:
    """Topics needed for a target Erho2 or Phi.

    Attributes:
        coefficient: ``"erho2"`` or ``"phi"``.
        target: the target value.
        alpha: two-sided level of the interval.
        n_topics: point estimate (``inf`` when the system variance is 0).
        lower, upper: the interval of the topic count (``upper`` may be ``inf``).
        ``to_dict()`` gives integers, and ``None`` for ``inf``.
    """

    coefficient: str
    target: float
    alpha: float
    n_topics: float
    lower: float
    upper: float

    def to_dict(self) -> dict:
        def conv(v):       # JSON-safe: an infinite count (or bound) is None, as elsewhere
            return int(v) if np.isfinite(v) else None

        return {"coefficient": self.coefficient, "target": float(self.target), "alpha": float(self.alpha),
                "n_topics": conv(self.n_topics), "lower": conv(self.lower), "upper": conv(self.upper)}


# ============================================================================ G-study result
@dataclass(frozen=True)
class VarianceComponents:
    """Variance components of the two-way crossed model (module docstring).

    Attributes:
        var_s, var_t, var_e: system, topic and residual (interaction + error) variances,
            after truncation of negative estimates to 0.
        ms_s, ms_t, ms_e: mean squares (REML: the ones implied by the components).
        df_s, df_t, df_e: degrees of freedom ``S-1``, ``T-1``, ``(S-1)(T-1)``.
        n_systems, n_topics: ``S`` and ``T`` of the fit (after ``drop``).
        grand_mean: mean score (REML: the GLS estimate of ``mu``).
        method: ``"anova"`` or ``"reml"``.
        truncated: names of the components set to 0 (``"var_s"``, ...).
        strata: per-stratum fits (stratum -> VarianceComponents) or ``None``.
        weights: stratum weights ``W_k`` (default ``T_k / T``) or ``None``.
        raw: the estimates before truncation.
        dropped: systems removed by ``drop``.
        drop: the ``drop`` fraction used.
        n_cells: observed cells used.
        measure: the measure of the scores, if known.
        converged: REML convergence (``True`` for ANOVA).
    """

    var_s: float
    var_t: float
    var_e: float
    ms_s: float
    ms_t: float
    ms_e: float
    df_s: int
    df_t: int
    df_e: int
    n_systems: int
    n_topics: int
    grand_mean: float
    method: str
    truncated: tuple[str, ...] = ()
    strata: Mapping[str, VarianceComponents] | None = None
    weights: Mapping[str, float] | None = None
    raw: Mapping[str, float] = field(default_factory=dict)
    dropped: tuple[str, ...] = ()
    drop: float = 0.0
    n_cells: int = 0
    measure: str | None = None
    converged: bool = True

    # ---------------------------------------------------------------- coefficients
    @property
    def total(self) -> float:
        return self.var_s + self.var_t + self.var_e

    def erho2(self, n):
        """Generalizability coefficient at ``n`` topics (scalar or array)."""
        nn = _positive_n(n)
        out = _ratio(self.var_s, self.var_s + self.var_e / nn)
        return _scalar_or_array(out, n)

    def phi(self, n):
        """Dependability index at ``n`` topics (scalar or array)."""
        nn = _positive_n(n)
        out = _ratio(self.var_s, self.var_s + (self.var_t + self.var_e) / nn)
        return _scalar_or_array(out, n)

    # ---------------------------------------------------------------- intervals
    def _clean_ms(self) -> tuple[float, float, float]:
        """``MS_s, MS_t, MS_e`` with rounding noise of an exactly-zero mean square (below
        ``1e-13`` of their sum, e.g. identical systems) set to 0."""
        ms = (self.ms_s, self.ms_t, self.ms_e)
        scale = sum(abs(v) for v in ms)
        return tuple(0.0 if abs(v) <= 1e-13 * scale else float(v) for v in ms)

    def _feldt_ratio(self, p: float) -> float:
        """Bound on var_s / var_e from the F quantile at probability ``p`` (NaN when both
        mean squares are 0: Erho2 is then 0/0)."""
        from scipy import stats

        ms_s, _, ms_e = self._clean_ms()
        if ms_e <= 0:
            return math.inf if ms_s > 0 else math.nan
        f = stats.f.ppf(p, self.df_s, self.df_e)
        return (ms_s / (ms_e * f) - 1.0) / self.n_topics

    def _ajf_phi1(self, p: float) -> float:
        """Arteaga-Jeyaratnam-Franklin bound on Phi at one topic, quantiles at ``p``."""
        from scipy import stats

        S, T = self.n_systems, self.n_topics
        f1 = stats.chi2.ppf(p, self.df_s) / self.df_s
        f2 = stats.f.ppf(p, self.df_s, self.df_e)
        f3 = stats.f.ppf(p, self.df_s, self.df_t)
        ms_s, ms_t, ms_e = self._clean_ms()
        num = ms_s ** 2 - f1 * ms_s * ms_e + (f1 - f2) * f2 * ms_e ** 2
        den = (S - 1) * f1 * ms_s * ms_e + f3 * ms_s * ms_t
        if den <= 0:
            # MS_s = 0: no evidence of system variance; MS_t = MS_e = 0 < MS_s: systems
            # differ by the same amount on every topic, Phi is 1 at any n
            return 1.0 if ms_s > 0 and ms_t == 0 and ms_e == 0 else 0.0
        L = num / den
        if L <= 0:
            return 0.0
        return S * L / (S * L + T)

    def _bounds(self, tail: float):
        r_lo = self._feldt_ratio(1 - tail)
        r_hi = self._feldt_ratio(tail)
        p_lo = self._ajf_phi1(1 - tail)
        p_hi = self._ajf_phi1(tail)
        return r_lo, r_hi, p_lo, p_hi

    def dstudy(self, n=None, *, alpha: float = 0.05) -> DStudy:
        """Erho2 and Phi at ``n`` topics (default: the fitted ``T``) with ``1 - alpha`` intervals."""
        a = _check_alpha(alpha)
        nn = np.atleast_1d(_positive_n(self.n_topics if n is None else n))
        r_lo, r_hi, p_lo, p_hi = self._bounds(a / 2)

        def erho_b(r):
            if not np.isfinite(r):   # inf: no residual variance (Erho2 is 1); NaN: 0/0
                return np.ones_like(nn) if r > 0 else np.full_like(nn, np.nan)
            if r <= 0:
                return np.zeros_like(nn)
            return nn * r / (1 + nn * r)

        def phi_b(p):
            if not np.isfinite(p):
                return np.full_like(nn, np.nan)
            p = min(max(p, 0.0), 1.0)
            return nn * p / (1 + (nn - 1) * p)

        return DStudy(
            n_topics=tuple(float(v) for v in nn), alpha=a,
            erho2=tuple(float(v) for v in np.atleast_1d(self.erho2(nn))),
            erho2_lower=tuple(float(v) for v in erho_b(r_lo)),
            erho2_upper=tuple(float(v) for v in erho_b(r_hi)),
            phi=tuple(float(v) for v in np.atleast_1d(self.phi(nn))),
            phi_lower=tuple(float(v) for v in phi_b(p_lo)),
            phi_upper=tuple(float(v) for v in phi_b(p_hi)),
        )

    def topics_for(self, *, erho2: float | None = None, phi: float | None = None,
                   alpha: float = 0.05) -> TopicsNeeded:
        """Topics needed for a target Erho2 or Phi (give exactly one), with its interval."""
        if (erho2 is None) == (phi is None):
            raise ParameterError("give exactly one of erho2= and phi=", parameter="erho2")
        coef = "erho2" if erho2 is not None else "phi"
        g = erho2 if erho2 is not None else phi
        try:
            g = float(g)
        except (TypeError, ValueError):
            raise ParameterError(f"expected a number in (0, 1), got {g!r}", parameter=coef) from None
        if not 0 < g < 1:
            raise ParameterError(f"target must be in (0, 1), got {g!r}", parameter=coef)
        a = _check_alpha(alpha)
        r_lo, r_hi, p_lo, p_hi = self._bounds(a / 2)
        k = g / (1 - g)
        if self.var_s <= 0:
            warnings.warn("system variance is 0: no number of topics reaches the target",
                          DegenerateDataWarning, stacklevel=2)
        if coef == "erho2":
            point = _ceil_or_inf(k * self.var_e / self.var_s) if self.var_s > 0 else math.inf
            lower = _ceil_or_inf(k / r_hi) if r_hi > 0 else math.inf
            upper = _ceil_or_inf(k / r_lo) if r_lo > 0 else math.inf
        else:
            point = (_ceil_or_inf(k * (self.var_t + self.var_e) / self.var_s)
                     if self.var_s > 0 else math.inf)
            lower = _ceil_or_inf(k * (1 - p_hi) / p_hi) if p_hi > 0 else math.inf
            upper = _ceil_or_inf(k * (1 - p_lo) / p_lo) if p_lo > 0 else math.inf
        return TopicsNeeded(coefficient=coef, target=g, alpha=a, n_topics=point,
                            lower=lower, upper=upper)

    # ---------------------------------------------------------------- output
    def to_dict(self) -> dict:
        d = {
            "method": self.method, "measure": self.measure,
            "n_systems": int(self.n_systems), "n_topics": int(self.n_topics), "n_cells": int(self.n_cells),
            "grand_mean": float(self.grand_mean),
            "var_s": float(self.var_s), "var_t": float(self.var_t), "var_e": float(self.var_e),
            "ms_s": float(self.ms_s), "ms_t": float(self.ms_t), "ms_e": float(self.ms_e),
            "df_s": int(self.df_s), "df_t": int(self.df_t), "df_e": int(self.df_e),
            "truncated": list(self.truncated), "raw": {k: float(v) for k, v in self.raw.items()},
            "drop": float(self.drop), "dropped": list(self.dropped), "converged": bool(self.converged),
            "strata": None, "weights": None,
        }
        if self.strata is not None:
            d["strata"] = {k: v.to_dict() for k, v in self.strata.items()}
        if self.weights is not None:
            d["weights"] = {k: float(v) for k, v in self.weights.items()}
        return d

    def to_frame(self):
        """Components table: component, variance, share of the total, mean square, df."""
        import pandas as pd

        tot = self.total
        rows = []
        for name, var, ms, df in (("system", self.var_s, self.ms_s, self.df_s),
                                  ("topic", self.var_t, self.ms_t, self.df_t),
                                  ("residual", self.var_e, self.ms_e, self.df_e)):
            rows.append({"component": name, "variance": var,
                         "share": var / tot if tot > 0 else math.nan,
                         "mean_square": ms, "df": df})
        return pd.DataFrame(rows)


# ============================================================================ fitting
def _anova2(x: np.ndarray) -> dict:
    """Mean squares and components of a complete (S, T) matrix."""
    S, T = x.shape
    m_s = x.mean(axis=1)
    m_t = x.mean(axis=0)
    m = float(m_s.mean())
    ss_s = T * float(np.sum((m_s - m) ** 2))
    ss_t = S * float(np.sum((m_t - m) ** 2))
    ss_e = 0.0
    step = max(1, _CHUNK_VALUES // max(T, 1))
    base = m_t - m
    for i in range(0, S, step):
        r = x[i:i + step] - m_s[i:i + step, None] - base[None, :]
        ss_e += float(np.einsum("ij,ij->", r, r))
    df_s, df_t = S - 1, T - 1
    df_e = df_s * df_t
    ms_s, ms_t, ms_e = ss_s / df_s, ss_t / df_t, ss_e / df_e
    return {"ms_s": ms_s, "ms_t": ms_t, "ms_e": ms_e, "df_s": df_s, "df_t": df_t, "df_e": df_e,
            "var_s": (ms_s - ms_e) / T, "var_t": (ms_t - ms_e) / S, "var_e": ms_e,
            "grand_mean": m, "n_systems": S, "n_topics": T, "n_cells": S * T, "converged": True}


def anova_components(x: np.ndarray) -> dict:
    """Two-way ANOVA (method of moments) components of a complete ``(S, T)`` array, unchunked.

    ``var_s = (MS_s - MS_e)/T``, ``var_t = (MS_t - MS_e)/S``, ``var_e = MS_e``; ``var_s``
    and ``var_t`` truncated to 0 (also when undefined, S or T < 2). Returns those and the mean
    squares as floats, with no validation or warnings: the array-level helper planner.plan and
    planner.simulate use (bootstrap resamples, strata). :func:`fit` uses :func:`_anova2`
    (same definitions, residual summed in memory-bounded chunks), which agrees to rounding
    (about 1e-14 relative on the TREC matrices), not bit for bit.
    """
    S, T = x.shape
    mu = x.mean()
    ms = x.mean(axis=1)
    mt = x.mean(axis=0)
    ss_s = T * ((ms - mu) ** 2).sum()
    ss_t = S * ((mt - mu) ** 2).sum()
    resid = x - ms[:, None] - mt[None, :] + mu
    ss_e = (resid ** 2).sum()
    ms_s, ms_t, ms_e = ss_s / (S - 1), ss_t / (T - 1), ss_e / ((S - 1) * (T - 1))
    return {"var_s": float(max(0.0, (ms_s - ms_e) / T)), "var_t": float(max(0.0, (ms_t - ms_e) / S)),
            "var_e": float(ms_e), "ms_s": float(ms_s), "ms_t": float(ms_t), "ms_e": float(ms_e)}


def _moment_start(x: np.ndarray) -> tuple[float, float, float, float]:
    """(var_s, var_t, var_e, mean) to start REML from: the ANOVA estimates on a complete
    matrix, rough moment estimates from the observed cells otherwise; floored at 1% of var_e."""
    if not np.isnan(x).any():
        est = _anova2(x)
        var_e = est["var_e"] if est["var_e"] > 0 else 1e-6
        floor = 0.01 * var_e
        return max(est["var_s"], floor), max(est["var_t"], floor), var_e, est["grand_mean"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        m = float(np.nanmean(x))
        m_s = np.nanmean(x, axis=1)
        m_t = np.nanmean(x, axis=0)
        r = x - m_s[:, None] - m_t[None, :] + m
        var_e = float(np.nanvar(r))
        n_s = np.sum(~np.isnan(x), axis=1)
        n_t = np.sum(~np.isnan(x), axis=0)
        var_s = float(np.nanvar(m_s) - var_e * np.nanmean(1.0 / np.maximum(n_s, 1)))
        var_t = float(np.nanvar(m_t) - var_e * np.nanmean(1.0 / np.maximum(n_t, 1)))
    var_e = var_e if var_e > 0 else 1e-6
    floor = 0.01 * var_e
    return max(var_s, floor), max(var_t, floor), var_e, m


def _reml2(x: np.ndarray, name: str, start: str = "moments") -> dict:
    """REML fit of the crossed model on the observed cells of ``x`` (NaN = missing).

    ``start="moments"`` starts the optimiser at moment estimates (the ANOVA solution on
    balanced data, which is the REML optimum when no component is negative) with
    L-BFGS; ``start="default"`` uses statsmodels' own start and optimiser choice.
    """
    import pandas as pd
    from statsmodels.regression.mixed_linear_model import MixedLM, MixedLMParams

    obs = ~np.isnan(x)
    si, ti = np.nonzero(obs)
    # relabel to the systems / topics that have data
    su, si = np.unique(si, return_inverse=True)
    tu, ti = np.unique(ti, return_inverse=True)
    S, T = len(su), len(tu)
    df = pd.DataFrame({"y": x[obs], "system": si, "topic": ti, "g": np.zeros(si.size, dtype=int)})
    with warnings.catch_warnings():
        # statsmodels warns "MLE may be on the boundary" for every fit without a group-level
        # random effect (re_formula="0"); convergence is read from the result instead
        warnings.simplefilter("ignore")
        model = MixedLM.from_formula("y ~ 1", groups="g", re_formula="0", data=df,
                                     vc_formula={"system": "0 + C(system)", "topic": "0 + C(topic)"})
        names = list(model.exog_vc.names)
        if start == "moments":
            vs, vt, ve, mu = _moment_start(x)
            comp = {"system": vs / ve, "topic": vt / ve}
            sp = MixedLMParams.from_components(fe_params=np.array([mu]), cov_re=np.zeros((0, 0)),
                                               vcomp=np.array([comp[n] for n in names]))
            res = model.fit(reml=True, start_params=sp, method="lbfgs")
            if not bool(getattr(res, "converged", True)):
                res = model.fit(reml=True)
        else:
            res = model.fit(reml=True)
    converged = bool(getattr(res, "converged", True))
    if not converged:
        warnings.warn(f"{name}: REML fit did not converge; components may be inaccurate",
                      DegenerateDataWarning, stacklevel=4)
    vc = dict(zip(names, np.asarray(res.vcomp, dtype=float)))
    var_s, var_t, var_e = vc["system"], vc["topic"], float(res.scale)
    df_s, df_t = S - 1, T - 1
    return {"ms_s": var_e + T * var_s, "ms_t": var_e + S * var_t, "ms_e": var_e,
            "df_s": df_s, "df_t": df_t, "df_e": df_s * df_t,
            "var_s": var_s, "var_t": var_t, "var_e": var_e,
            "grand_mean": float(np.asarray(res.fe_params)[0]), "n_systems": S, "n_topics": T,
            "n_cells": int(obs.sum()), "converged": converged}


def _reml2_direct(x: np.ndarray, name: str) -> dict:
    """REML of the crossed model by direct maximisation of the restricted likelihood.

    Same likelihood as statsmodels' MixedLM fit (``_reml2``), computed in
    ``min(S, T)`` dimensions: with ratios ``g_s = var_s / var_e`` and ``g_t = var_t / var_e``,
    ``H = I + Z diag(g) Z'`` and ``A = I + D Z'Z D`` (``D = diag(sqrt(g))``), every quadratic
    form ``u' H^-1 v`` is ``u'v - (D Z'u)' A^-1 (D Z'v)``, ``log|H| = log|A|``, and ``A`` is
    reduced to its Schur complement on the smaller of the system and topic blocks. The
    profile ``-2 log L_R = log|A| + log(1' H^-1 1) + (n - 1) log(r' H^-1 r / (n - 1))`` is
    minimised over ``(sqrt g_s, sqrt g_t)`` with L-BFGS-B from the moment start.
    """
    from scipy import linalg, optimize

    obs = ~np.isnan(x)
    keep_s = obs.any(axis=1)
    keep_t = obs.any(axis=0)
    x = x[keep_s][:, keep_t]
    obs = obs[keep_s][:, keep_t]
    S, T = x.shape
    x0 = np.where(obs, x, 0.0)
    M = obs.astype(float)
    n_s, n_t = M.sum(axis=1), M.sum(axis=0)
    y_s, y_t = x0.sum(axis=1), x0.sum(axis=0)
    n = float(M.sum())
    sum_y = float(x0.sum())
    yy = float(np.einsum("ij,ij->", x0, x0))
    swap = T > S                 # dense block = the smaller of the two
    if swap:
        M, n_s, n_t, y_s, y_t = M.T, n_t, n_s, y_t, y_s

    def parts(theta, grad=False):
        th_s, th_t = (theta[1], theta[0]) if swap else (theta[0], theta[1])
        p = 1.0 + th_s ** 2 * n_s                         # diagonal block (large side)
        q = 1.0 + th_t ** 2 * n_t
        B = (th_s * th_t) * M
        Bp = B / p[:, None]
        C = np.diag(q) - B.T @ Bp
        cf = linalg.cho_factor(C, lower=True, check_finite=False)
        logdet = float(np.sum(np.log(p)) + 2 * np.sum(np.log(np.diag(cf[0]))))
        # u = D Z'1 and w = D Z'y, split into the two blocks
        u1, u2 = th_s * n_s, th_t * n_t
        w1, w2 = th_s * y_s, th_t * y_t
        ru = u2 - Bp.T @ u1
        rw = w2 - Bp.T @ w1
        sol = linalg.cho_solve(cf, np.column_stack([ru, rw]), check_finite=False)
        uu = float(u1 @ (u1 / p) + ru @ sol[:, 0])
        uw = float(u1 @ (w1 / p) + ru @ sol[:, 1])
        ww = float(w1 @ (w1 / p) + rw @ sol[:, 1])
        xhx = n - uu                   # 1' H^-1 1
        xhy = sum_y - uw               # 1' H^-1 y
        yhy = yy - ww                  # y' H^-1 y
        beta = xhy / xhx
        rhr = yhy - beta * xhy
        if not grad:
            return logdet, xhx, beta, rhr
        # gradient of -2 log L_R in theta_k (k = block): with A^-1 (D Z'v) = D Z' H^-1 v,
        # d/d theta_k = (2 / theta_k) [tr_k(I - A^-1) - |(A^-1 u)_k|^2 / xhx
        #                              - (n - 1) |(A^-1 D Z'r)_k|^2 / rhr]
        a2u = sol[:, 0]                          # A^-1 u, block 2 (Schur side)
        a1u = (u1 - B @ a2u) / p                 # block 1
        a2r = sol[:, 1] - beta * sol[:, 0]       # A^-1 D Z'r, r = y - beta
        a1r = (w1 - beta * u1 - B @ a2r) / p
        Cinv = linalg.cho_solve(cf, np.eye(C.shape[0]), check_finite=False)
        tr2 = float(np.trace(Cinv))
        tr1 = float(np.sum(1.0 / p) + np.einsum("ij,ji->", Cinv, Bp.T @ Bp))
        g = np.zeros(2)
        for k, (th, size, tr, au, ar) in enumerate(((th_s, p.size, tr1, a1u, a1r),
                                                    (th_t, q.size, tr2, a2u, a2r))):
            if th == 0:
                continue
            bracket = (size - tr) - float(au @ au) / xhx - (n - 1) * float(ar @ ar) / rhr
            g[k] = 2.0 * bracket / th
        if swap:
            g = g[::-1]
        return logdet, xhx, beta, rhr, g

    def objective(theta):
        try:
            logdet, xhx, _, rhr = parts(theta)
        except (np.linalg.LinAlgError, ValueError):
            return np.inf
        if not (xhx > 0 and rhr > 0):
            return np.inf
        return logdet + math.log(xhx) + (n - 1) * math.log(rhr / (n - 1))

    def objective_grad(theta):
        try:
            logdet, xhx, _, rhr, g = parts(theta, grad=True)
        except (np.linalg.LinAlgError, ValueError):
            return np.inf, np.zeros(2)
        if not (xhx > 0 and rhr > 0):
            return np.inf, np.zeros(2)
        return logdet + math.log(xhx) + (n - 1) * math.log(rhr / (n - 1)), g

    vs, vt, ve, _ = _moment_start(x)
    start = np.sqrt([vs / ve, vt / ve])
    opts = {"ftol": 1e-14, "gtol": 1e-10, "maxiter": 500}
    res = optimize.minimize(objective_grad, start, jac=True, method="L-BFGS-B", options=opts)
    theta, best = np.abs(res.x), float(res.fun)
    # a component whose optimum is the boundary (g = 0): compare with the profile there
    for k in (0, 1):
        if theta[k] == 0:
            continue
        free = 1 - k

        def along(v, k=k, free=free):
            th = np.zeros(2)
            th[free] = v
            return objective(th)

        if not along(theta[free]) < best + 1e-10 * max(1.0, abs(best)):
            continue            # the boundary is clearly worse: nothing to refine there
        r1 = optimize.minimize_scalar(along, bracket=(0.5 * theta[free] + 1e-6, theta[free] + 1e-6))
        if r1.fun < best - 1e-10 * max(1.0, abs(best)):
            theta = np.zeros(2)
            theta[free] = abs(r1.x)
            best = float(r1.fun)
    g = objective_grad(theta)[1]
    # the gradient vanishes at an interior optimum; at 0 only one-sided moves matter
    converged = bool(np.isfinite(best)) and all(
        abs(g[k]) < 1e-3 * max(1.0, abs(best)) ** 0.5 or (theta[k] == 0 and g[k] >= 0) for k in (0, 1))
    if not converged:
        warnings.warn(f"{name}: REML fit did not converge; components may be inaccurate",
                      DegenerateDataWarning, stacklevel=4)
    _, _, beta, rhr = parts(theta)
    var_e = rhr / (n - 1)
    var_s, var_t = float(theta[0] ** 2 * var_e), float(theta[1] ** 2 * var_e)
    df_s, df_t = S - 1, T - 1
    return {"ms_s": var_e + T * var_s, "ms_t": var_e + S * var_t, "ms_e": var_e,
            "df_s": df_s, "df_t": df_t, "df_e": df_s * df_t,
            "var_s": var_s, "var_t": var_t, "var_e": float(var_e),
            "grand_mean": float(beta), "n_systems": S, "n_topics": T,
            "n_cells": int(n), "converged": converged}


def _finish(est: dict, *, method: str, name: str, measure, drop=0.0, dropped=(), warn=True,
            reml_boundary: bool = False) -> VarianceComponents:
    raw = {k: float(est[k]) for k in ("var_s", "var_t", "var_e")}
    truncated = []
    vals = dict(raw)
    scale = max(sum(abs(v) for v in raw.values()), 1e-300)
    for k, v in raw.items():
        if not reml_boundary and abs(v) <= 1e-13 * scale:
            # rounding noise of an exactly-zero moment estimate: 0, not a truncation (REML
            # estimates at the boundary are reported as truncated below)
            vals[k] = 0.0
            continue
        at_boundary = v < 0 or (reml_boundary and v <= 1e-8 * scale)
        if at_boundary:
            truncated.append(k)
            vals[k] = 0.0
    if truncated and warn:
        what = {"var_s": "system", "var_t": "topic", "var_e": "residual"}
        listed = ", ".join(f"{what[k]} ({raw[k]:.3g})" for k in truncated)
        warnings.warn(f"{name}: variance estimate(s) at or below 0 set to 0: {listed}",
                      DegenerateDataWarning, stacklevel=4)
    if warn and vals["var_s"] == 0 and vals["var_e"] == 0:
        warnings.warn(f"{name}: neither system nor residual variance (are all systems identical?): "
                      "Erho2 is 0/0 and reported as NaN", DegenerateDataWarning, stacklevel=4)
    return VarianceComponents(
        var_s=vals["var_s"], var_t=vals["var_t"], var_e=vals["var_e"],
        ms_s=float(est["ms_s"]), ms_t=float(est["ms_t"]), ms_e=float(est["ms_e"]),
        df_s=int(est["df_s"]), df_t=int(est["df_t"]), df_e=int(est["df_e"]),
        n_systems=int(est["n_systems"]), n_topics=int(est["n_topics"]),
        grand_mean=float(est["grand_mean"]), method=method, truncated=tuple(truncated),
        raw=raw, dropped=tuple(dropped), drop=float(drop), n_cells=int(est["n_cells"]),
        measure=measure, converged=bool(est["converged"]))


def _no_residual(x: np.ndarray) -> bool:
    """Whether the additive model ``mu + a[s] + b[t]`` fits every observed cell (to rounding):
    least squares on the observed cells (scipy's ``lsqr`` on the sparse design)."""
    S, T = x.shape
    if not np.isnan(x).any():   # complete: the two-way ANOVA residual
        est = _anova2(x)
        return est["ms_e"] <= 1e-13 * (est["ms_s"] + est["ms_t"] + est["ms_e"])
    from scipy import sparse
    from scipy.sparse.linalg import lsqr

    r, c = np.nonzero(~np.isnan(x))
    y = x[r, c]
    total = float(np.sum((y - y.mean()) ** 2))
    if total == 0.0:
        return True
    k = y.size
    design = sparse.csr_matrix((np.ones(2 * k), (np.repeat(np.arange(k), 2),
                                                 np.column_stack([r, S + c]).ravel())), shape=(k, S + T))
    sol = lsqr(design, y - y.mean(), atol=1e-15, btol=1e-15, iter_lim=20 * (S + T))[0]
    resid = (y - y.mean()) - design @ sol
    return float(resid @ resid) <= 1e-20 * total


def _fit_array(x: np.ndarray, m: ScoreMatrix, topics: Sequence[str], method: str, *,
               drop=0.0, dropped=(), name=None, reml_start: str = "moments",
               reml_engine: str = "direct") -> VarianceComponents:
    name = name or _name(m)
    _check_size(x, m)
    _check_degenerate(x, m, topics)
    missing = bool(np.isnan(x).any())
    use = method
    if method == "auto":
        use = "reml" if missing else "anova"
    if use == "anova":
        if missing:
            raise ParameterError(f"{name}: {int(np.isnan(x).sum())} missing cell(s); the ANOVA fit "
                                 "needs a complete matrix (use the REML fit, method 'reml', or a "
                                 "missing-cell policy)", parameter="method")
        est = _anova2(x)
    else:
        # the REML likelihood is parametrised relative to the residual variance, which is 0
        # when system and topic effects explain every cell (identical systems, systems a
        # constant apart): no REML estimate exists (the engines fail or stop anywhere)
        none = InputError("the REML fit has no solution on these scores: system and topic effects "
                          "explain every cell (no residual variance; identical systems, or systems "
                          "a constant apart?)" + ("; the ANOVA fit (method 'anova') handles them"
                                                  if not missing else ""), file=name)
        if _no_residual(x):
            raise none
        try:
            est = _reml2_direct(x, name) if reml_engine == "direct" else _reml2(x, name, reml_start)
        except (ZeroDivisionError, FloatingPointError, np.linalg.LinAlgError):
            raise none from None
        comps = [float(est[k]) for k in ("var_s", "var_t", "var_e")]
        if not all(math.isfinite(v) for v in comps) or comps[2] <= 1e-12 * sum(abs(v) for v in comps):
            raise none
    return _finish(est, method=use, name=name, measure=m.measure, drop=drop, dropped=dropped,
                   reml_boundary=(use == "reml"))


def fit(scores, *, method: str = "auto", drop: float = 0.0,
        weights: Mapping[str, float] | None = None, reml_engine: str = "direct",
        reml_start: str = "moments") -> VarianceComponents:
    """Fit the two-way crossed variance-components model (module docstring).

    Args:
        scores: a :class:`ScoreMatrix` (or a path read by ``load_scores``, a wide DataFrame
            or an ``(S, T)`` array). A matrix
            with variants is averaged over its variants first (use :func:`fit_variants`
            for the three-facet model).
        method: ``"anova"`` (complete matrices), ``"reml"`` (see ``reml_engine``) or
            ``"auto"`` (ANOVA when complete, REML when cells are missing).
        drop: fraction in ``[0, 1)`` of lowest-scoring systems to drop first (gt4ireval).
        weights: stratum weights (stratum -> weight, normalised to sum 1) replacing the
            default ``T_k / T``; only with strata.
        reml_engine: ``"direct"`` (default: the restricted likelihood maximised here, in
            ``min(S, T)`` dimensions) or ``"statsmodels"`` (MixedLM with crossed variance
            components; the same likelihood, much slower on large matrices).
        reml_start: statsmodels engine only: ``"moments"`` (start at moment estimates,
            L-BFGS) or ``"default"`` (statsmodels' own start and optimiser).

    Returns:
        :class:`VarianceComponents`, with per-stratum fits in ``strata`` when the
        matrix has strata (two or more distinct labels).

    Raises:
        ParameterError: unknown method, bad drop, ANOVA asked on missing cells, bad weights.
        InputError: fewer than 2 systems or topics, or a constant matrix.
    """
    m = as_matrix(scores)
    if method not in _METHODS:
        raise ParameterError(f"unknown method {method!r}; expected one of " + ", ".join(_METHODS),
                             parameter="method")
    try:
        drop = float(drop)
    except (TypeError, ValueError):
        raise ParameterError(f"expected a fraction in [0, 1), got {drop!r}", parameter="drop") from None
    if not 0 <= drop < 1:
        raise ParameterError(f"must be a fraction in [0, 1), got {drop!r}", parameter="drop")
    if reml_engine not in ("direct", "statsmodels"):
        raise ParameterError(f"expected direct or statsmodels, got {reml_engine!r}", parameter="reml_engine")
    if reml_start not in ("moments", "default"):
        raise ParameterError(f"expected moments or default, got {reml_start!r}", parameter="reml_start")
    if m.has_variants:
        m = m.collapse_variants()
    x = m.values
    dropped: tuple[str, ...] = ()
    if drop > 0:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            means = np.nanmean(x, axis=1)
        cut = np.quantile(means, drop)          # R quantile type 7 == numpy "linear"
        keep = means >= cut
        dropped = tuple(s for s, k in zip(m.systems, keep) if not k)
        if keep.sum() < 2:
            raise InputError(f"drop={drop} leaves {int(keep.sum())} system(s); need at least 2",
                             file=m.source)
        m = m.take(systems=keep)
        x = m.values
    res = _fit_array(x, m, m.topics, method, drop=drop, dropped=dropped, reml_start=reml_start,
                     reml_engine=reml_engine)

    labels = m.stratum_labels()
    if weights is not None and len(labels) < 2:
        raise ParameterError("weights given but the scores have fewer than 2 strata", parameter="weights")
    if len(labels) >= 2:
        strata_l = np.array(m.strata, dtype=object)
        per: dict[str, VarianceComponents] = {}
        sizes: dict[str, int] = {}
        for lab in labels:
            cols = np.flatnonzero(strata_l == lab)
            sub = x[:, cols]
            complete = ~np.isnan(sub).any(axis=1)
            partial = (~complete) & (~np.isnan(sub).all(axis=1))
            if partial.any():
                warnings.warn(f"{_name(m)}: stratum {lab!r}: {int(partial.sum())} system(s) with some "
                              "missing cells left out of this stratum's fit",
                              DegenerateDataWarning, stacklevel=2)
            sub = sub[complete]
            sm = m.take(systems=complete, topics=cols)
            try:
                with warnings.catch_warnings():
                    # already reported for the whole matrix
                    warnings.filterwarnings("ignore", message=".*every system scores the same")
                    per[lab] = _fit_array(sub, sm, sm.topics, "anova" if method == "auto" else method,
                                          name=f"{_name(m)} [stratum {lab}]", reml_start=reml_start,
                                          reml_engine=reml_engine)
            except (InputError, ParameterError) as exc:
                warnings.warn(f"{_name(m)}: stratum {lab!r} not fitted: {exc}",
                              DegenerateDataWarning, stacklevel=2)
                continue
            sizes[lab] = len(cols)
        if weights is None:
            tot = sum(sizes.values())
            w = {k: v / tot for k, v in sizes.items()} if tot else {}
        else:
            w = _check_weights(weights, labels)
            w = {k: w[k] for k in per}
            tot = sum(w.values())
            w = {k: v / tot for k, v in w.items()} if tot > 0 else w
        res = _replace(res, strata=per, weights=w)
    return res


def _check_weights(weights: Mapping[str, float], labels: Sequence[str]) -> dict[str, float]:
    if not isinstance(weights, Mapping):
        raise ParameterError("expected a mapping stratum -> weight", parameter="weights")
    w = {str(k): v for k, v in weights.items()}
    unknown = [k for k in w if k not in labels]
    if unknown:
        raise ParameterError(f"unknown stratum {unknown[0]!r}", parameter="weights")
    missing = [k for k in labels if k not in w]
    if missing:
        raise ParameterError(f"no weight for stratum {missing[0]!r}", parameter="weights")
    out = {}
    for k, v in w.items():
        try:
            fv = float(v)
        except (TypeError, ValueError):
            raise ParameterError(f"weight of {k!r} is not a number: {v!r}", parameter="weights") from None
        if not np.isfinite(fv) or fv < 0:
            raise ParameterError(f"weight of {k!r} must be >= 0, got {v!r}", parameter="weights")
        out[k] = fv
    if sum(out.values()) <= 0:
        raise ParameterError("weights sum to 0", parameter="weights")
    return out


def _replace(obj, **kw):
    from dataclasses import replace

    return replace(obj, **kw)


# ============================================================================ pairs
@dataclass(frozen=True)
class PairStats:
    """Per-pair mean and variance of per-topic differences, all ``S (S - 1) / 2`` pairs.

    Attributes:
        a, b: system indices of each pair (``a < b``, row-major order of ``np.triu_indices``).
        dbar: mean over topics of ``x[a, t] - x[b, t]``.
        s2_d: variance (``ddof=1``) of those differences.
        n_topics: number of topics ``T``.
        systems: the system names.
        var_system: per-system variance over topics (``ddof=1``), shape ``(S,)``.
        n_common: topics observed for both systems of each pair (only with missing cells, else ``None``).
    """

    a: np.ndarray
    b: np.ndarray
    dbar: np.ndarray
    s2_d: np.ndarray
    n_topics: int
    systems: tuple[str, ...]
    var_system: np.ndarray
    n_common: np.ndarray | None = None

    @property
    def n_pairs(self) -> int:
        return int(self.a.size)

    def to_frame(self):
        import pandas as pd

        names = np.array(self.systems, dtype=object)
        d = {"system_a": names[self.a], "system_b": names[self.b], "dbar": self.dbar, "s2_d": self.s2_d}
        if self.n_common is not None:
            d["n_common"] = self.n_common
        return pd.DataFrame(d)

    def to_dict(self) -> dict:
        return {"n_topics": int(self.n_topics), "systems": list(self.systems), "a": self.a.tolist(),
                "b": self.b.tolist(), "dbar": self.dbar.tolist(), "s2_d": self.s2_d.tolist()}


def pair_index(n_systems: int) -> tuple[np.ndarray, np.ndarray]:
    """All pairs ``a < b`` in row-major order (``numpy.triu_indices(S, 1)``), as ``intp``.

    The one pair order every module uses (pair_stats, planner.simulate, planner.pilot).
    """
    a, b = np.triu_indices(n_systems, 1)
    return a.astype(np.intp), b.astype(np.intp)


def pair_moments(x: np.ndarray, a: np.ndarray, b: np.ndarray, *, kurtosis: bool = False,
                 block: int = _PAIR_BLOCK):
    """``dbar`` and ``s2_d`` (ddof=1) of ``d[t] = x[a,t] - x[b,t]`` for every pair.

    Computed from the differences themselves (so identical systems give exactly
    0), in chunks of ``block // T`` pairs (at least one): memory about ``3 * max(block, T)``
    float64 values (the differences and two temporaries, with or without ``kurtosis``;
    ``block`` defaults to ``2e6``). Per pair the same numbers as one unchunked
    ``d.mean(axis=1)``, ``d.var(axis=1, ddof=1)``; used by planner.pilot,
    planner.plan and the direct path of ``planner.simulate.pair_moments``.

    With ``kurtosis=True`` a third array is returned: each pair's sample excess
    kurtosis ``m4 / m2^2 - 3`` of the differences (``m2``, ``m4`` central moments
    with divisor ``T``, as ``scipy.stats.kurtosis(d, axis=1, bias=True)``), 0 for
    pairs whose differences are constant.
    """
    T = x.shape[1]
    dbar = np.empty(a.size)
    s2 = np.empty(a.size)
    kurt = np.empty(a.size) if kurtosis else None
    chunk = max(1, int(block) // max(1, T))
    for lo in range(0, a.size, chunk):
        d = x[a[lo:lo + chunk]] - x[b[lo:lo + chunk]]
        dbar[lo:lo + chunk] = d.mean(axis=1)
        s2[lo:lo + chunk] = d.var(axis=1, ddof=1)
        if kurtosis:
            c = d - dbar[lo:lo + chunk, None]
            c *= c
            m2 = c.mean(axis=1)
            m4 = (c * c).mean(axis=1)
            ok = m2 > 0
            kurt[lo:lo + chunk] = np.where(ok, m4 / np.where(ok, m2 * m2, 1.0) - 3.0, 0.0)
    return (dbar, s2, kurt) if kurtosis else (dbar, s2)


def score_grid(xg: np.ndarray, n_max: int) -> tuple[np.ndarray, float]:
    """Scores as integers on a grid, ``(q, unit)`` with ``x ~= q * unit``, for exact sums.

    Decimal scores (e.g. trec_eval's 4 decimals) use ``unit = 10^-k``, the
    fewest decimals that represent every score within ``1e-6 unit``: then
    sums of decimals that are equal, e.g. 0.3 + 0.5 and 0.4 + 0.4, are equal.
    Other scores use ``unit = 2^-k``, ``k`` the largest such that
    ``n_max max|x| / unit < 2^50`` (each score moves by at most
    ``2^-50 n_max max|x|``, ~4e-14 for n = 50 and scores in [0, 1]). Either way
    any sum of at most ``n_max`` scores with integer weights is an integer
    below ``2^50``, exact in float64 whatever order a matrix product adds it in.
    """
    amax = float(np.max(np.abs(xg))) if xg.size else 0.0
    if amax == 0.0:
        return np.zeros_like(xg), 1.0
    for k in range(10):
        if amax * 10.0 ** k * n_max >= 2.0 ** 50:
            break
        y = xg * 10.0 ** k
        q = np.rint(y)
        if np.max(np.abs(y - q)) <= 1e-6:
            return q, 10.0 ** -k
    k = 50 - math.frexp(amax * n_max)[1]
    return np.rint(np.ldexp(xg, k)), math.ldexp(1.0, -k)


def exact_dbar(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each pair's observed mean difference, from the scores' integer grid (:func:`score_grid`).

    Every system's total is an exact integer there, so pairs with equal totals get exactly 0
    (a tie: reversal 0.5) and, on a decimal grid, a difference is the double nearest its
    decimal value (one rounding), so that e.g. 0.02 falls in the bin ``[0.02, 0.03)``. The
    float mean of the differences can instead be 1e-18 for a tie, or 0.019999999999999987
    (TREC-6 P@10). On a binary grid the value moves by at most ``2^-50 max|x|``.
    """
    T = x.shape[1]
    q, unit = score_grid(x, T)
    tot = q.sum(axis=1)                      # exact integers below 2^50
    diff = tot[a] - tot[b]
    if unit <= 1.0:
        return diff / (T * float(round(1.0 / unit)))
    return diff * unit / T


def pair_stats(scores) -> PairStats:
    """Mean and variance of per-topic differences for every pair of systems.

    Complete matrices use the Gram matrix of topic-centred scores (memory in the module
    docstring) and the exact mean differences of :func:`exact_dbar` (equal totals give 0,
    as in :func:`planner.simulate.predict`); with missing cells each pair uses the topics both systems have
    (needs >= 2 such topics, else ``NaN`` with a warning).
    """
    m = as_matrix(scores)
    x = m.topic_scores()
    S, T = x.shape
    _check_size(x, m)
    a, b = pair_index(S)
    if not np.isnan(x).any():
        mean = x.mean(axis=1)
        xc = x - mean[:, None]
        gram = xc @ xc.T
        gram /= (T - 1)
        v = np.diagonal(gram).copy()
        cov = gram[a, b]
        del gram
        s2 = v[a] + v[b] - 2.0 * cov
        # rounding noise around 0 for (nearly) identical systems
        tiny = 64 * np.finfo(float).eps * (v[a] + v[b])
        s2[s2 < tiny] = 0.0
        # on the scores' integer grid, as planner.simulate.predict: equal totals are an exact
        # tie (0), not the 1e-18 that the float means can leave
        dbar = exact_dbar(x, a, b)
        n_common = None
    else:
        mask = (~np.isnan(x)).astype(float)
        x0 = np.where(np.isnan(x), 0.0, x)
        n = mask @ mask.T
        sx = x0 @ mask.T            # sum over common topics of x_a
        sxx = (x0 * x0) @ mask.T
        cross = x0 @ x0.T
        nab = n[a, b]
        sum_d = sx[a, b] - sx[b, a]
        sum_d2 = sxx[a, b] + sxx[b, a] - 2 * cross[a, b]
        with np.errstate(divide="ignore", invalid="ignore"):
            dbar = sum_d / nab
            s2 = (sum_d2 - sum_d * dbar) / (nab - 1)
        s2[nab < 2] = np.nan
        s2 = np.where(s2 < 0, 0.0, s2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            v = np.nanvar(x, axis=1, ddof=1)
        n_common = nab.astype(int)
        few = int((nab < 2).sum())
        if few:
            warnings.warn(f"{_name(m)}: {few} pair(s) share fewer than 2 topics; their s2_d is NaN",
                          DegenerateDataWarning, stacklevel=2)
    zero = np.flatnonzero(s2 == 0)
    if zero.size:
        k = zero[0]
        warnings.warn(f"{_name(m)}: {zero.size} pair(s) with zero variance of per-topic differences "
                      f"(first: {m.systems[a[k]]!r} vs {m.systems[b[k]]!r}); tests and intervals "
                      "for them are degenerate", DegenerateDataWarning, stacklevel=2)
    return PairStats(a=a, b=b, dbar=dbar, s2_d=s2, n_topics=T, systems=m.systems,
                     var_system=v, n_common=n_common)


def within_system_variance(scores) -> float:
    """``V_E1``: residual of the one-way ANOVA with systems as the factor (module docstring)."""
    m = as_matrix(scores)
    x = m.topic_scores()
    _check_size(x, m)
    v = within_system(x)
    if not math.isfinite(v):
        raise InputError("no system has 2 observed topics", file=m.source)
    return v


def within_system(x: np.ndarray) -> float:
    """``V_E1`` of an (S, T) array, missing cells as NaN (nan when no system has 2
    observed topics); for complete arrays the mean of the per-system variances."""
    obs = ~np.isnan(x)
    n_s = obs.sum(axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(x, axis=1)
    ss = float(np.nansum((x - mean[:, None]) ** 2))
    dof = int(np.sum(np.maximum(n_s - 1, 0)))
    return ss / dof if dof > 0 else math.nan


def parse_selector(selector: str, *, parameter: str = "selector") -> tuple[str, float | None]:
    """``"pair" | "pooled" | "within-system" | "percentile:q"`` -> (kind, q), ``0 < q <= 100``
    (``percentile:100`` is the largest pair variance; 0 would be the smallest, often 0).

    The one parser of variance selectors (planner.plan and planner.simulate use it
    with ``parameter="variance"``, the name of their option)."""
    if not isinstance(selector, str):
        raise ParameterError(f"expected a variance selector string, got {selector!r}", parameter=parameter)
    s = selector.strip().lower()
    if s in ("pair", "pooled", "within-system"):
        return s, None
    if s.startswith("percentile:"):
        try:
            q = float(s.split(":", 1)[1])
        except ValueError:
            q = math.nan
        if not 0 < q <= 100:
            raise ParameterError(f"percentile must be in (0, 100], got {selector!r}", parameter=parameter)
        return "percentile", q
    raise ParameterError(f"unknown variance selector {selector!r}; expected pair, pooled, "
                         "within-system or percentile:q", parameter=parameter)


def pair_variance(scores, selector: str = "pair", *, design: str = "paired",
                  pairs: PairStats | None = None) -> np.ndarray:
    """The variance each pair's computation uses, one value per pair (module docstring table).

    ``design="paired"``: variance of per-topic differences; ``"independent"``: the
    within-system variance. ``pairs`` reuses a :func:`pair_stats` result.
    """
    kind, q = parse_selector(selector)
    if design not in ("paired", "independent"):
        raise ParameterError(f"unknown design {design!r}; expected paired or independent",
                             parameter="design")
    m = as_matrix(scores)
    S = m.n_systems
    n_pairs = S * (S - 1) // 2
    factor = 2.0 if design == "paired" else 1.0
    if kind == "pooled":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            var_e = fit(m).var_e
        return np.full(n_pairs, factor * var_e)
    if kind == "within-system":
        return np.full(n_pairs, factor * within_system_variance(m))
    ps = pairs if pairs is not None else pair_stats(m)
    if design == "paired":
        per = ps.s2_d
    else:
        per = (ps.var_system[ps.a] + ps.var_system[ps.b]) / 2
    if kind == "pair":
        return np.array(per, dtype=float)
    return np.full(n_pairs, float(np.nanpercentile(per, q)))


def pair_variance_summary(scores, *, pairs: PairStats | None = None) -> dict:
    """Summary of the variance of per-topic differences and of each selector's value.

    Keys: ``pair`` (mean, median, p90, p95, max and p95/mean of ``s2_d``), ``pooled``
    (``2 var_e``), ``within-system`` (``2 V_E1``), ``percentile:95``, ``n_pairs``.
    """
    m = as_matrix(scores)
    ps = pairs if pairs is not None else pair_stats(m)
    s2 = ps.s2_d[np.isfinite(ps.s2_d)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        pooled = 2 * fit(m).var_e
    mean = float(s2.mean())
    return {
        "design": "paired",
        "n_pairs": int(ps.n_pairs),
        "pair": {"mean": mean, "median": float(np.median(s2)), "p90": float(np.percentile(s2, 90)),
                 "p95": float(np.percentile(s2, 95)), "max": float(s2.max()),
                 "p95_over_mean": float(np.percentile(s2, 95) / mean) if mean > 0 else math.nan},
        "pooled": float(pooled),
        "within-system": float(2 * within_system_variance(m)),
        "percentile:95": float(np.percentile(s2, 95)),
    }


# ============================================================================ three facets
@dataclass(frozen=True)
class VariantDStudy:
    """Erho2 and Phi over a grid of topics x variants (seeds).

    Attributes:
        nesting: ``"topic"`` (variants within topics) or ``"system"`` (seeds within systems).
        rows: one dict per (n_topics, n_variants): ``n_topics``, ``n_variants``, ``units``
            (``n_topics * n_variants``), ``rel_error``, ``abs_error``, ``erho2``, ``phi``.
    """

    nesting: str
    rows: tuple[dict, ...]

    def to_dict(self) -> dict:
        return {"nesting": self.nesting, "rows": [dict(r) for r in self.rows]}

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame(list(self.rows))


@dataclass(frozen=True)
class VariantComponents:
    """Three-facet components (module docstring).

    Attributes:
        nesting: ``"topic"`` (design ``s x (v:t)``) or ``"system"`` (``(v:s) x t``).
        var_s, var_t: system and topic variances.
        var_v: variants within topics (``nesting="topic"``) or seeds within systems.
        var_st: system x topic interaction.
        var_e: residual (variant x system within topic, or seed x topic within system, + error).
        ms, df: mean squares and degrees of freedom by source (``s``, ``t``, ``v``, ``st``, ``e``).
        n_systems, n_topics, n_variants, grand_mean, truncated, raw: as in
            :class:`VarianceComponents`.
    """

    nesting: str
    var_s: float
    var_t: float
    var_v: float
    var_st: float
    var_e: float
    ms: Mapping[str, float]
    df: Mapping[str, int]
    n_systems: int
    n_topics: int
    n_variants: int
    grand_mean: float
    truncated: tuple[str, ...] = ()
    raw: Mapping[str, float] = field(default_factory=dict)
    method: str = "anova"
    measure: str | None = None

    def _errors(self, n, m):
        n = _positive_n(n, "n_topics")
        m = _positive_n(m, "n_variants")
        if self.nesting == "topic":
            rel = self.var_st / n + self.var_e / (n * m)
            ab = rel + self.var_t / n + self.var_v / (n * m)
        else:
            rel = self.var_v / m + self.var_st / n + self.var_e / (n * m)
            ab = rel + self.var_t / n
        return rel, ab

    def erho2(self, n_topics, n_variants=1):
        rel, _ = self._errors(n_topics, n_variants)
        out = _ratio(self.var_s, self.var_s + rel)
        return out if np.ndim(out) else float(out)

    def phi(self, n_topics, n_variants=1):
        _, ab = self._errors(n_topics, n_variants)
        out = _ratio(self.var_s, self.var_s + ab)
        return out if np.ndim(out) else float(out)

    def dstudy(self, n_topics, n_variants=None) -> VariantDStudy:
        """Erho2 and Phi for every combination of ``n_topics`` and ``n_variants``
        (default ``1..V``)."""
        ns = np.atleast_1d(_positive_n(n_topics, "n_topics"))
        ms = np.atleast_1d(_positive_n(np.arange(1, self.n_variants + 1) if n_variants is None
                                       else n_variants, "n_variants"))
        rows = []
        for n in ns:
            for mm in ms:
                rel, ab = self._errors(n, mm)
                rel, ab = float(rel), float(ab)
                rows.append({"n_topics": _intish(n), "n_variants": _intish(mm), "units": _intish(n * mm),
                             "rel_error": rel, "abs_error": ab,
                             "erho2": float(_ratio(self.var_s, self.var_s + rel)),
                             "phi": float(_ratio(self.var_s, self.var_s + ab))})
        return VariantDStudy(nesting=self.nesting, rows=tuple(rows))

    def to_dict(self) -> dict:
        return {"nesting": self.nesting, "method": self.method, "measure": self.measure,
                "var_s": float(self.var_s), "var_t": float(self.var_t), "var_v": float(self.var_v),
                "var_st": float(self.var_st), "var_e": float(self.var_e),
                "ms": {k: float(v) for k, v in self.ms.items()}, "df": {k: int(v) for k, v in self.df.items()},
                "n_systems": int(self.n_systems), "n_topics": int(self.n_topics),
                "n_variants": int(self.n_variants), "grand_mean": float(self.grand_mean),
                "truncated": list(self.truncated), "raw": {k: float(v) for k, v in self.raw.items()}}

    def to_frame(self):
        import pandas as pd

        vname = "variant:topic" if self.nesting == "topic" else "seed:system"
        rows = [("system", "s", self.var_s), ("topic", "t", self.var_t), (vname, "v", self.var_v),
                ("system x topic", "st", self.var_st), ("residual", "e", self.var_e)]
        tot = sum(r[2] for r in rows)
        return pd.DataFrame([{"component": c, "variance": v, "share": v / tot if tot > 0 else math.nan,
                              "mean_square": self.ms[k], "df": self.df[k]} for c, k, v in rows])


def _intish(v):
    f = float(v)
    return int(f) if f.is_integer() else f


def fit_variants(scores, *, nesting: str = "topic") -> VariantComponents:
    """Three-facet ANOVA of ``x[s, t, v]`` (balanced, no missing cells); module docstring.

    ``nesting="topic"``: the ``V`` variants are query variations nested in topics;
    ``"system"``: they are seeds (replicates) nested in systems.
    """
    m = as_matrix(scores)
    if nesting not in ("topic", "system"):
        raise ParameterError(f"unknown nesting {nesting!r}; expected topic or system", parameter="nesting")
    if not m.has_variants:
        raise ParameterError("the scores have no variant axis (use stack_variants() or a tidy table "
                             "with a variant column)", parameter="scores")
    x = m.values
    S, T, V = x.shape
    _check_size(x[:, :, 0], m)
    if V < 2:
        raise InputError(f"need at least 2 variants per topic, got {V}", file=m.source)
    if np.isnan(x).any():
        raise ParameterError(f"{int(np.isnan(x).sum())} missing cell(s); the three-facet fit needs a "
                             "complete matrix", parameter="scores")
    flat = x.reshape(S, T * V)
    if np.all(flat == flat.flat[0]):
        raise InputError(f"every score is {flat.flat[0]:.6g}: a constant matrix has no variance to "
                         "decompose", file=m.source)
    g = float(x.mean())
    m_s = x.mean(axis=(1, 2))
    m_t = x.mean(axis=(0, 2))
    m_st = x.mean(axis=2)
    ss_s = T * V * float(np.sum((m_s - g) ** 2))
    ss_t = S * V * float(np.sum((m_t - g) ** 2))
    ss_st = V * float(np.sum((m_st - m_s[:, None] - m_t[None, :] + g) ** 2))
    if nesting == "topic":
        m_tv = x.mean(axis=0)                                    # (T, V)
        ss_v = S * float(np.sum((m_tv - m_t[:, None]) ** 2))
        res = x - m_st[:, :, None] - m_tv[None, :, :] + m_t[None, :, None]
        df_v, df_e = T * (V - 1), (S - 1) * T * (V - 1)
    else:
        m_sv = x.mean(axis=1)                                    # (S, V)
        ss_v = T * float(np.sum((m_sv - m_s[:, None]) ** 2))
        res = x - m_st[:, :, None] - m_sv[:, None, :] + m_s[:, None, None]
        df_v, df_e = S * (V - 1), S * (V - 1) * (T - 1)
    ss_e = float(np.einsum("ijk,ijk->", res, res))
    df = {"s": S - 1, "t": T - 1, "v": df_v, "st": (S - 1) * (T - 1), "e": df_e}
    ss = {"s": ss_s, "t": ss_t, "v": ss_v, "st": ss_st, "e": ss_e}
    ms = {k: ss[k] / df[k] for k in ss}
    if nesting == "topic":
        raw = {"var_e": ms["e"], "var_st": (ms["st"] - ms["e"]) / V, "var_v": (ms["v"] - ms["e"]) / S,
               "var_t": (ms["t"] - ms["st"] - ms["v"] + ms["e"]) / (S * V),
               "var_s": (ms["s"] - ms["st"]) / (T * V)}
    else:
        raw = {"var_e": ms["e"], "var_st": (ms["st"] - ms["e"]) / V, "var_v": (ms["v"] - ms["e"]) / T,
               "var_s": (ms["s"] - ms["st"] - ms["v"] + ms["e"]) / (T * V),
               "var_t": (ms["t"] - ms["st"]) / (S * V)}
    vals = {k: max(v, 0.0) for k, v in raw.items()}
    truncated = tuple(k for k, v in raw.items() if v < 0)
    if truncated:
        warnings.warn(f"{_name(m)}: negative variance estimate(s) set to 0: "
                      + ", ".join(f"{k} ({raw[k]:.3g})" for k in truncated),
                      DegenerateDataWarning, stacklevel=2)
    return VariantComponents(nesting=nesting, var_s=vals["var_s"], var_t=vals["var_t"], var_v=vals["var_v"],
                             var_st=vals["var_st"], var_e=vals["var_e"], ms=ms, df=df, n_systems=S,
                             n_topics=T, n_variants=V, grand_mean=g, truncated=truncated, raw=raw,
                             measure=m.measure)


def stack_variants(scores, *, divisor: int = 1000) -> ScoreMatrix:
    """Turn a 2-D matrix whose topic ids encode ``topic * divisor + variant`` (CLEF eHealth
    2016 query variations) into a 3-D ``(S, T, V)`` matrix. Every topic must have the same
    set of variant numbers."""
    m = as_matrix(scores)
    if m.has_variants:
        return m
    try:
        div = int(divisor)
    except (TypeError, ValueError):
        raise ParameterError(f"expected a positive integer, got {divisor!r}", parameter="divisor") from None
    if div < 2:
        raise ParameterError(f"expected an integer >= 2, got {divisor!r}", parameter="divisor")
    ids = []
    for t in m.topics:
        try:     # Python integers: exact for ids of any length, whatever the divisor
            ids.append(int(t) if str(t).strip().lstrip("+-").isdigit() else int(float(t)))
        except (ValueError, OverflowError):
            raise InputError(f"topic id {t!r} is not a number (expected topic * {div} + variant)",
                             file=m.source) from None
    top, var = zip(*(divmod(i, div) for i in ids))
    topics = list(dict.fromkeys(top))
    variants = sorted(set(var))
    if len(topics) < 2:
        raise ParameterError(f"{div} maps all {len(ids)} query ids to topic {topics[0]} (ids must be "
                             f"topic * {div} + variant); use the divisor the ids were built with",
                             parameter="divisor")
    pos = {(t, v): j for j, (t, v) in enumerate(zip(top, var))}
    out = np.full((m.n_systems, len(topics), len(variants)), np.nan)
    for i, t in enumerate(topics):
        for k, v in enumerate(variants):
            j = pos.get((t, v))
            if j is None:
                raise InputError(f"topic {t} has no variant {v} (query id {t * div + v})", file=m.source)
            out[:, i, k] = m.values[:, j]
    strata = None
    if m.strata is not None:
        first = {}
        for t, v, s in zip(top, var, m.strata):
            if first.setdefault(t, (s, v))[0] != s:
                s0, v0 = first[t]
                raise InputError(f"topic {t} has variants in two strata ({s0!r} for query id "
                                 f"{t * div + v0}, {s!r} for {t * div + v}); a stratum belongs to "
                                 "a topic, so all its variants need the same one", file=m.source)
        strata = [first[t][0] for t in topics]
    return ScoreMatrix.build(out, m.systems, [str(t) for t in topics], measure=m.measure,
                             strata=strata, variants=[str(v) for v in variants], missing="keep",
                             source=m.source, warn=False)
