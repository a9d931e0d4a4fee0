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
(default) maximises the restricted likelihood here (see ``planner.variance.reml``: Woodbury
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
(``P = S (S - 1) / 2`` pairs), about 0.2 GB for 1,000 systems x 10,000 topics (the Gram
matrix ``S^2`` is built in blocks past ~1,400 systems; more pairs than ``MAX_PAIR_MEMORY``
allows are refused, docs/robustness.md); the direct REML fit about ``4 S T + min(S, T)^2`` float64 values.

Modules: ``anova`` (mean squares, moment estimates), ``reml`` (the direct and the
statsmodels REML engines), ``components`` (:class:`VarianceComponents`), ``dstudy``
(Erho2, Phi, their intervals, topics needed), ``fit`` (:func:`fit`: drop, truncation,
strata), ``pairs`` (pair statistics and the variance selectors), ``variants`` (the
three-facet model); ``common`` holds the checks they share. The input coercion
(:func:`as_matrix`) and :func:`stack_variants` belong to :mod:`planner.collection` and
are re-exported here.
"""

from __future__ import annotations

from .._checks import MAX_ALPHA, MIN_ALPHA, check_alpha
from ..collection import as_matrix, stack_variants
from .anova import anova_components
from .components import VarianceComponents
from .dstudy import DStudy, TopicsNeeded
from .fit import fit
from .pairs import (
    PairStats,
    decimal_grid,
    exact_dbar,
    pair_index,
    pair_moments,
    pair_stats,
    pair_variance,
    pair_variance_summary,
    parse_selector,
    score_grid,
    within_system,
    within_system_variance,
)
from .variants import VariantComponents, VariantDStudy, fit_variants

__all__ = [
    "MAX_ALPHA",
    "MIN_ALPHA",
    "DStudy",
    "PairStats",
    "TopicsNeeded",
    "VarianceComponents",
    "VariantComponents",
    "VariantDStudy",
    "anova_components",
    "as_matrix",
    "check_alpha",
    "decimal_grid",
    "exact_dbar",
    "fit",
    "fit_variants",
    "pair_index",
    "pair_moments",
    "pair_stats",
    "pair_variance",
    "pair_variance_summary",
    "parse_selector",
    "score_grid",
    "stack_variants",
    "within_system",
    "within_system_variance",
]
