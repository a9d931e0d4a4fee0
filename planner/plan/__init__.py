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
:func:`planner.simulate.predict`. Every function that takes ``method=`` defaults to
:data:`planner.methods.DEFAULT_METHOD` (``"predictive"``), as :func:`planner.predict` does.

Query variants (:func:`topics_for_variants`): the same targets with ``v`` variants per
topic, each pair's variance split into a topic and a variant part, the latter over ``v``.

Budgets, pool depth, strata: see :func:`budget`, :func:`pool_depth_study`,
:func:`allocate`.

Modules, one step each:

- :mod:`~planner.plan.checks`: argument checks and input coercion shared by all of them;
- :mod:`~planner.plan.search`: the smallest n (one problem or many), interval quantiles;
- :mod:`~planner.plan.power`: power and expected widths of the classical designs;
- :mod:`~planner.plan.designs`: :func:`topic_set_size`, :class:`SizeResult`;
- :mod:`~planner.plan.pairs`: the closed-form pair model targets are solved on;
- :mod:`~planner.plan.targets`: :func:`size_for_target`, :class:`TargetResult`,
  :func:`check_target_value`;
- :mod:`~planner.plan.resolve`: the topic-resampling interval on n of a target;
- :mod:`~planner.plan.paired`: :func:`paired_difference`;
- :mod:`~planner.plan.variants`: :func:`topics_for_variants`, :class:`VariantTrade`,
  :func:`fit_variant_model`;
- :mod:`~planner.plan.pool`: :func:`pool_depth_study`, :func:`judgment_growth`,
  :class:`DepthStudy`, :class:`GrowthCurve`;
- :mod:`~planner.plan.budget`: :func:`budget`, :class:`BudgetResult`;
- :mod:`~planner.plan.allocation`: :func:`allocate`, :class:`Allocation`;
- :mod:`~planner.plan.stacked`: stacked strata (:class:`StackedStrata`, :func:`jackknife_intervals`,
  :func:`resampled_n`, :func:`stratum_counts`): several collections, each a stratum with its own systems;
- :mod:`~planner.plan.paired_bootstrap`: :func:`paired_bootstrap`, :class:`PairedBootstrap` (the
  paired topic bootstrap of a collection's system ordering).
"""

from __future__ import annotations

from .allocation import ALLOCATIONS, Allocation, allocate
from .budget import BudgetResult, budget
from .checks import MAX_COST, MAX_INTERVAL_RESAMPLES, N_MAX
from .designs import APPROX, CORRECTIONS, DESIGNS, PAIRED_DESIGNS, SizeResult, topic_set_size
from .jackknife import JACKKNIFE_ARMS
from .paired import PairedDifference, paired_difference
from .paired_bootstrap import PairedBootstrap, paired_bootstrap
from .pairs import pair_variances
from .pool import DepthStudy, GrowthCurve, judgment_growth, pool_depth_study
from .power import design_power, sakai_initial_n
from .reusability import Reusability, leave_group_out
from .search import POWER_SPREAD, RESAMPLE_SPREAD, count_interval, interval_quantiles, smallest_n
from .seeds import SeedComponents, SeedPower, SeedTradeoff, fit_seeds, seed_power, seed_topic_tradeoff
from .selection import SelectionBias, SplitPlan, plan_split, selection_bias
from .stacked import STACK_TARGETS, StackedPoint, StackedStrata, jackknife_intervals, resampled_n, stratum_counts
from .targets import TargetResult, check_target_value, size_for_target
from .variants import MAX_VARIANTS, VariantModel, VariantTrade, fit_variant_model, topics_for_variants

__all__ = [
    "ALLOCATIONS",
    "APPROX",
    "CORRECTIONS",
    "DESIGNS",
    "JACKKNIFE_ARMS",
    "MAX_COST",
    "MAX_INTERVAL_RESAMPLES",
    "MAX_VARIANTS",
    "N_MAX",
    "PAIRED_DESIGNS",
    "POWER_SPREAD",
    "RESAMPLE_SPREAD",
    "STACK_TARGETS",
    "Allocation",
    "BudgetResult",
    "DepthStudy",
    "GrowthCurve",
    "PairedBootstrap",
    "PairedDifference",
    "Reusability",
    "SeedComponents",
    "SeedPower",
    "SeedTradeoff",
    "SelectionBias",
    "SizeResult",
    "SplitPlan",
    "StackedPoint",
    "StackedStrata",
    "TargetResult",
    "VariantModel",
    "VariantTrade",
    "allocate",
    "budget",
    "check_target_value",
    "count_interval",
    "design_power",
    "fit_seeds",
    "fit_variant_model",
    "interval_quantiles",
    "jackknife_intervals",
    "judgment_growth",
    "leave_group_out",
    "pair_variances",
    "paired_bootstrap",
    "paired_difference",
    "plan_split",
    "pool_depth_study",
    "resampled_n",
    "sakai_initial_n",
    "seed_power",
    "seed_topic_tradeoff",
    "selection_bias",
    "size_for_target",
    "smallest_n",
    "stratum_counts",
    "topic_set_size",
    "topics_for_variants",
]
