"""Simulator: what n topics buy, as curves against topic count.

The package, one module a concern:

- :mod:`~planner.simulate.predict`: the public :func:`predict` (checks, engine, chunks, summary);
- :mod:`~planner.simulate.engine`: the one per-chunk interface (:class:`PairEngine`, :class:`Setup`);
- :mod:`~planner.simulate.analytic`, :mod:`~planner.simulate.predictive`,
  :mod:`~planner.simulate.resampling`, :mod:`~planner.simulate.parametric`: the engines;
  :mod:`~planner.simulate.priors` and :mod:`~planner.simulate.rates`: the predictive
  model (priors, posterior predictive pair rates); :mod:`~planner.simulate.kernels`: the
  resampling kernels;
- :mod:`~planner.simulate.curve` (the :class:`Curve` result), :mod:`~planner.simulate.summary`
  (sums over pairs, rows), :mod:`~planner.simulate.extrapolation` (subsample above T/2),
  :mod:`~planner.simulate.prediction` (prediction intervals: what new topic sets will show);
- :mod:`~planner.simulate.strata`, :mod:`~planner.simulate.informative`,
  :mod:`~planner.simulate.scenarios`, :mod:`~planner.simulate.pairs`, :mod:`~planner.simulate.checks`.

:func:`predict` takes a :class:`~planner.scores.ScoreMatrix` (``S`` systems x
``T`` topics; or what :func:`planner.fit` reads: a path, a wide DataFrame, an array) and a
list of topic counts ``n`` and returns a :class:`Curve`:
for every ``n``, per pair of systems and summarised over pairs, the statistics
defined in ``docs/simulate.md`` (from the project's design notes).

Notation
--------
Pairs are all ``a < b`` in row-major order (``numpy.triu_indices(S, 1)``),
``P = S (S - 1) / 2`` of them. ``d[t] = x[a,t] - x[b,t]``; ``dbar`` its mean and
``s2_d`` its variance (ddof=1) over the ``T`` topics of the collection.
A comparison involving a tie counts half (an exactly zero mean difference, or an
observed ``dbar = 0``).

Statistics (per pair, at ``n`` topics)
--------------------------------------
- ``reversal_rate``: probability that a new ``n``-topic sample orders the pair
  opposite to the collection (``sign(dbar)``); ties count half.
- ``swap_rate``: probability that two independent ``n``-topic samples order the
  pair differently; ties count half.
- ``kendall_tau_mean = 1 - 2 * mean(swap_rate)`` over all pairs.
- ``ci_width``: width of the ``1 - alpha`` interval of the pair's mean difference.
- ``power``: probability that the two-sided paired t-test at level ``alpha``
  rejects when the true difference is ``min_diff``.
- ``significant``: probability that the paired t-test on an ``n``-topic sample
  is significant at ``alpha`` (true difference = the observed ``dbar``); its mean
  over pairs is the *discriminative power*.
- ``erho2 = var_s / (var_s + var_e / n)``, ``phi = var_s / (var_s + (var_t +
  var_e) / n)`` from the ANOVA variance components of the collection.

Methods
-------
``analytic``
    Normal / t closed forms with ``sigma2`` the pair's variance chosen by
    ``variance`` (``pair`` | ``pooled`` = 2 var_e | ``within-system`` = 2 V_E1 |
    ``percentile:q``), ``se = sqrt(sigma2 / n)``:
    ``p = Phi(-|dbar| / se)``, ``reversal = p``, ``swap = 2 p (1 - p)``,
    ``ci_width = 2 t_{1-alpha/2, n-1} se``,
    ``power = P(|T'| > t_{1-alpha/2, n-1})`` with ``T'`` noncentral t (df ``n-1``,
    noncentrality ``min_diff / se``); ``significant`` the same with noncentrality
    ``|dbar| / se``. (``dbar = 0`` gives ``p = 0.5``.) The noncentral t is
    read from a cubic spline through ``scipy.special.nctdtr`` on a grid of
    noncentrality step ``0.0625`` up to the point where the power is 1 within
    ``1e-14`` (absolute error below ``1e-7``; tested against ``scipy.stats.nct``).
``deconvolved`` (default)
    ``predictive`` with the ``"scale"`` prior: a zero-centred scale mixture of each pair's
    standardized true difference ``delta / sigma_d`` on scales 0.1 to 5, fitted with the
    noise of the collection's ``n0`` topics in the model (deconvolution), so its rates and
    counts far beyond ``n0`` do not drift with ``n0`` (docs/research/calibration.md).
``predictive``
    Swap and reversal rates from :func:`planner.simulate.rates.predictive_pair_rates`,
    which accounts for the noise in ``dbar`` (empirical-Bayes posterior
    predictive, normal prior); identical systems are ties (0.5) as in every method; the
    other statistics as ``analytic`` with ``variance="pair"``.
``predictive-shrunk``, ``predictive-pooled``, ``predictive-integrated``, ``predictive-npmle``, ``predictive-mixture``
    The variants :func:`planner.validation.validate` compares, under the same names
    (:attr:`planner.methods.Method.spec`: prior, pair variance, averaged over the variance's
    uncertainty or not); only the swap and reversal rates differ from
    ``predictive``. ``predictive-pair`` is ``predictive``.
``bootstrap``
    ``R`` resamples of ``n`` topics drawn with replacement (uniformly, or within
    strata). For every resample, every pair: the mean difference ``m`` and the
    paired t statistic (sample variance ddof=1 of the drawn differences).
    ``reversal`` = share of resamples with ``sign(m) != sign(dbar)`` (ties half);
    ``swap`` = share of *distinct* pairs of resamples with opposite signs (ties
    half): ``(2 c+ c- + (R(R-1) - (c+ + c-)(c+ + c- - 1)) / 2) / (R(R-1))``;
    ``ci_width`` = percentile interval (``numpy.quantile``, linear) of ``m``;
    ``significant`` = share with ``|t| > t_{1-alpha/2, df}``; ``power`` = the same
    after shifting every resample's mean to ``m - dbar + min_diff`` (the data's
    own shape around a true difference of ``min_diff``).

    How it is computed with one stratum (the statistics above, unchanged):
    the scores are put on an integer grid (:func:`planner.variance.score_grid`: their own
    decimals, e.g. trec_eval's 4, else a binary grid of ``2^-50 n max|x|``),
    so every system's resampled sum ``W @ q.T`` (one sparse product per ``n``,
    ``W`` the ``R x T`` draw counts with ``n`` entries a row) is exact and a
    pair's resampled sum of differences is the difference of two systems' sums:
    signs exact, and a tie (equal sums, e.g. 0.3 + 0.5 against 0.4 + 0.4) is exactly 0
    and counts half. The t-tests need each pair's
    resampled sum of squared differences, in float32 per block of 512 pairs (see
    :func:`~planner.simulate.kernels.fast_block`): one dense product ``kappa d^2 @ W.T``
    while ``T <= 8 n``, else ``SQ_a + SQ_b - 2 sum_i y_a y_b`` from each resample's Gram
    matrix of its drawn topic-centred scores (batched products over bands of systems, a group
    of blocks at a time; work ``R n`` per pair whatever the collection's ``T``; pairs of
    nearly equal systems, whose squares would cancel, use sparse products ``W @ kappa d^2``;
    :class:`~planner.simulate.resampling.GramSums`); from
    :data:`~planner.simulate.resampling.COMPILED_WORK` pairs x resamples on, the tests are
    counted by the compiled loops of :mod:`planner.simulate.compiled` (one pass, with the
    pairs' resampled differences and their signs, or read from the Gram products themselves:
    the same float32 operations, the same numbers). Float32 moves ``t^2`` by a few
    ``1e-6`` relatively (the Gram sums up to about ``1e-5``), which changes a test's
    outcome only for resamples within that distance of the critical value (tested
    against the float64 path: at most 2 of ``R`` per pair; far below the Monte Carlo
    error ``sqrt(p (1 - p) / R)``). The percentiles are read from the means rounded
    to float32 (relative ``6e-8``; exact on a decimal grid). With ``K > 1`` strata,
    the means come from every system's exact resampled sums per stratum (one score
    grid), combined once per ``n`` (:func:`~planner.simulate.kernels.strata_sums`). On a decimal grid the
    strata get integer weights ``T_k L / n_k`` divided by their gcd (``L`` the least
    common multiple of the ``n_k``), so every mean is an exact integer times one
    scale: signs and ties are exact even when strata cancel (``+0.68 / 4`` against
    ``-0.56 / 8`` at weights 7 : 17). For arbitrary floats, strata with the same
    ``T_k / n_k`` share one coefficient applied to their integer total (exact with
    one coefficient, usually the case with proportional allocation) and otherwise
    the float64 combination is used. Percentiles are read from the means rounded to
    float32 (exact below ``2^23``). The t-tests' sums of squares come from per-block
    float64 products (``d^2 @ W_k.T``), or for a stratum of more than ``8 n_k`` topics from its
    Gram sums (float32, work ``R n_k`` a pair, as with one stratum); their thresholds
    ``crit^2 sum_k W_k^2 var_k / n_k`` are assembled in float64 and compared in float32.
    BLAS runs on one thread meanwhile (when ``threadpoolctl`` is installed).
``subsample``
    Voorhees & Buckley: ``R`` times, two disjoint topic sets of size ``n`` drawn
    without replacement (``n <= T / 2``); ``swap`` = share of the ``R`` set pairs
    that order the pair differently; the other statistics over the ``2R`` sets as
    in ``bootstrap``. Counts ``n > T / 2`` are extrapolated (only the swap rate
    and Kendall tau) with Voorhees & Buckley's exponential model
    ``swap(n) = A exp(-B n)`` fitted by least squares on ``log swap`` over the
    computed counts (overall and per |difference| bin; a fit with ``B <= 0``, a swap
    rate that does not fall with ``n``, is not used and leaves its counts undefined,
    with a warning; no swap at the largest computed count extrapolates as 0); see
    :attr:`Curve.extrapolation`. Without-replacement sets of half the
    collection vary less than independent samples, so these intervals are narrow.
``parametric``
    New topics from the fitted two-way model ``x[s,t] = mu + a[s] + b[t] +
    e[s,t]``: system effects fixed at the collection's system means, ``e ~ N(0,
    var_e)`` drawn for all ``S`` systems and ``n`` topics (``b[t]`` cancels in
    paired differences), ``R`` replicates; statistics as in ``bootstrap``. Its
    variance is ``pooled`` (every pair ``2 var_e``).

Strata (``strata=``)
--------------------
``"uniform"``: topics drawn from the whole collection (strata ignored).
``"stratified"`` / ``"proportional"``: ``n_k`` topics drawn within stratum ``k``,
``n_k`` proportional to ``W_k = T_k / T`` (largest remainder, at least 2 each);
``"optimal"``: Neyman, ``n_k ∝ W_k sigma_k / sqrt(c_k)`` with ``sigma_k^2`` the
mean over pairs of the within-stratum ``s2_d`` and ``c_k`` from ``costs``
(default 1). The estimate is the stratified mean ``sum_k W_k mean_k``; its
variance ``sum_k W_k^2 s2_k / n_k``, t degrees of freedom ``n - K``.

Memory
------
With ``P`` pairs, ``N`` topic counts, ``T`` topics, ``S`` systems, ``K`` strata,
``R`` resamples (``R_tot = R``, or ``2R`` for subsample), the peak is at most
``kept + max(pre, work)`` bytes (checked over methods, strata and shapes by
``benchmarks/bench_bootstrap.py``, whose ``memory_bound`` is this formula):

- ``kept``, the results and pair statistics: ``8 * P * N * (k + 1) + 64 * P``
  (``k = 5`` with ``keep_pairs=True``, else 1: the interval widths, needed for the
  medians; the ``+ 1`` is the copy the medians take);
- ``pre``, each pair's mean and variance (:func:`~planner.simulate.pairs.pair_moments`): ``24 * min(P * T,
  max(T, D))`` when ``P * T <= 4e6``, else ``8 * (S^2 + S * T + 5 * P)`` (covariance
  matrix), with ``D = min(2e6, max_memory / 24)`` values of differences per block;
  ``predictive-integrated`` adds ``16 * P + 24 * max(T, D)`` (each pair's
  kurtosis and degrees of freedom, from :func:`planner.variance.pair_moments` in blocks);
- ``work`` by method:

  - analytic and the predictive variants: ``max(max_memory, 512 * per)`` (default
    ``max_memory`` 256 MiB), chunks of ``C`` pairs with ``C * per <= max_memory``,
    ``per = 8 * (12 + 6 K)`` for analytic, ``8 * 34`` for the predictive variants
    (rates per chunk and topic count, the prior fitted once over all pairs), ``8 * 50``
    for ``predictive-integrated`` (plus its ``16 * P``); the npmle and mixture priors
    add their fit, ``8 * 2 * 121 * min(P, 20000)``, and blocks of ``6 * 2e6`` float64
    values; analytic with ``K > 1`` strata and ``variance="pair"`` computes each chunk's
    variances per stratum in blocks of ``B = max(T, max(T, D) / 2)`` differences, beside the
    chunk: ``max(max_memory, 512 * per + 24 * B)``, chunks of ``C * per <= max_memory - 24 * B``;
  - bootstrap / subsample, one stratum (``strata="uniform"``):
    ``40 * R_tot * n + 12 * R_tot * min(T, 8 n) + 12 * S * R_tot + 12 * 512 * R_tot + 32 * S * T
    + 4096 * T + 4 MiB + 64 MiB``: the drawn topics and their sparse counts (float64 and float32), the
    dense counts when ``T <= dense_topics(n, S, P R_tot)`` (at most ``8 n``:
    :func:`~planner.simulate.resampling.dense_topics`), every
    system's resampled sums
    (float64, then float32 when exact; for the compiled Gram counts also the product's
    ``(R, S)`` rows, kept), the float32 t-test sums of one block of
    512 pairs (and their 128-pair pieces) and their squared differences, the score
    grid and the scores, the cache-sized pieces being summarised, and beyond ``dense_topics`` the
    t-test sums of a group of blocks (:data:`~planner.simulate.resampling.GRAM_CACHE`, or one
    block when larger; with the compiled loops, the two int64 counts of a group of up to
    ``GRAM_CACHE / 16`` pairs); independent of ``P``;
  - bootstrap / subsample, ``K > 1`` strata: ``8 * (2 * R_tot * T + (K + 1) * S *
    R_tot + S * T + 512 * R_tot * K + 512 * T) + 8 MiB + K * ((2048 + 4 * S) * R_tot + 17 * P)
    + 16 * S * T + 4 MiB``: the draw counts (built
    transposed from the drawn topics, one stratum at a time), every system's resampled sums per stratum and
    their stratified combination, the score grid, the t-test sums of squares of one
    block of 512 pairs, and the cache-sized pieces being summarised; a stratum of more than
    ``8 n_k`` topics keeps sparse counts instead, and its sums of squares come from its Gram
    sums (:class:`~planner.simulate.resampling.GramSums`, one block at a time): its scores
    (float64, and centred float32 with their table), every system's resampled sum of squares
    and one block's sums (float32), its pairs' mean and variance (made once) and the pairs it
    sums sparsely (a flag each), and the products' tiles;
  - parametric: ``max(max_memory, 8 * 16 * S * (S + n) + 512 * 48 * R)``: chunks of
    ``C`` pairs with ``8 * (6 * R * C + 16 * S * (S + n)) <= max_memory``.

  One topic count is simulated at a time; its arrays are released before the next
  count's are made.

The matrix products run on aligned blocks of exactly 512 pairs (the last
zero-padded) and all sums over pairs run block by block in pair order, so the
results are bit-identical for any ``chunk_pairs`` (tested).

Randomness
----------
One ``rng``; the stream for topic count ``n`` is derived from it and ``n`` only
(``SeedSequence(entropy, spawn_key=(..., n))``), so a count's numbers do not
depend on the other counts requested, on chunking, or on the order. From it the
resampling methods draw topics stratum by stratum: the bootstrap
``integers(0, T_k, (R, n_k))``, the subsample per set pair ``choice(T_k, 2 n_k,
replace=False)`` (set A its first ``n_k``, set B the rest). With
``rng=None`` a random method draws an integer seed and records it in the result.
"""

from __future__ import annotations

from ..variance import pair_index, score_grid
from .checks import MAX_RESAMPLES, MAX_TOPICS
from .curve import DEFAULT_BINS, Curve
from .engine import PAIR_STATS, PairEngine, Setup
from .firstset import FirstSetBins, first_set_bins
from .informative import filter_informative
from .pairs import pair_moments
from .predict import ENGINES, fit_model, predict
from .priors import PRIORS, Prior, fit_prior
from .rates import (
    MIN_DF,
    STATISTICS,
    VARIANCES,
    PairRates,
    VarianceScales,
    pair_variance_model,
    plugin_pair_rates,
    predictive_pair_rates,
    variance_df,
    variance_scales,
)
from .scenarios import ScenarioTable, compare_measures, default_grid, scenarios, topics_needed
from .strata import STRATA_MODES, allocate_counts
from .work import MAX_HELD, MAX_WORK

__all__ = [
    "DEFAULT_BINS", "ENGINES", "MAX_HELD", "MAX_RESAMPLES", "MAX_TOPICS", "MAX_WORK",
    "MIN_DF", "PAIR_STATS", "PRIORS", "STATISTICS", "STRATA_MODES", "VARIANCES",
    "Curve", "FirstSetBins", "PairEngine", "PairRates", "Prior", "ScenarioTable", "Setup", "VarianceScales",
    "allocate_counts", "compare_measures", "default_grid", "filter_informative", "first_set_bins", "fit_model",
    "fit_prior", "pair_index",
    "pair_moments", "pair_variance_model", "plugin_pair_rates", "predict", "predictive_pair_rates",
    "scenarios", "score_grid", "topics_needed", "variance_df", "variance_scales",
]
