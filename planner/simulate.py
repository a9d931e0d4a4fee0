"""Simulator core: what n topics buy, as curves against topic count.

:func:`predict` takes a :class:`~planner.scores.ScoreMatrix` (``S`` systems x
``T`` topics; or what :func:`planner.fit` reads: a path, a wide DataFrame, an array) and a list of topic counts ``n`` and returns a :class:`Curve`:
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
    ``|dbar| / se``. (``dbar = 0`` gives ``p = 0.5``.) When more than
    ``20,000`` noncentral-t values are needed, they are read by linear
    interpolation from ``scipy.special.nctdtr`` evaluated on a grid of
    noncentrality step ``0.01`` up to the point where the power is 1 within
    ``1e-14`` (absolute error below ``1e-5``; tested against the exact values).
``predictive`` (default)
    Swap and reversal rates from :func:`planner.pilot.predictive_pair_rates`,
    which accounts for the noise in ``dbar`` (empirical-Bayes posterior
    predictive); identical systems are ties (0.5) as in every method; the
    other statistics as ``analytic`` with ``variance="pair"``.
``predictive-shrunk``, ``predictive-pooled``, ``predictive-integrated``, ``predictive-npmle``, ``predictive-mixture``
    The variants :func:`planner.pilot.validate` compares, under the same names
    (:data:`PREDICTIVE`: prior, pair variance, averaged over the variance's
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
    the scores are put on an integer grid (:func:`score_grid`: their own
    decimals, e.g. trec_eval's 4, else a binary grid of ``2^-50 n max|x|``),
    so every system's resampled sum ``W @ q.T`` (one product per ``n``) is
    exact and a pair's resampled sum of differences is the difference of two
    systems' sums: signs exact, and a tie (equal sums, e.g. 0.3 + 0.5 against
    0.4 + 0.4) is exactly 0 and counts half. The t-tests need each pair's
    resampled sum of squared differences: one float32 product per block of 512
    pairs (``kappa d^2 @ W.T``, see :func:`_fast_block`); float32 moves ``t^2``
    by a few ``1e-6`` relatively at most, which changes a test's outcome only for
    resamples within that distance of the critical value (tested against the
    float64 path: none in 3,000 x 15 pairs; far below the Monte Carlo error
    ``sqrt(p (1 - p) / R)``). The percentiles are read from the means rounded
    to float32 (relative ``6e-8``; exact on a decimal grid). With ``K > 1`` strata,
    the means come from every system's exact resampled sums per stratum (one score
    grid), combined once per ``n`` (:func:`_strata_sums`). On a decimal grid the
    strata get integer weights ``T_k L / n_k`` divided by their gcd (``L`` the least
    common multiple of the ``n_k``), so every mean is an exact integer times one
    scale: signs and ties are exact even when strata cancel (``+0.68 / 4`` against
    ``-0.56 / 8`` at weights 7 : 17). For arbitrary floats, strata with the same
    ``T_k / n_k`` share one coefficient applied to their integer total (exact with
    one coefficient, usually the case with proportional allocation) and otherwise
    the float64 combination is used. Percentiles are read from the means rounded to
    float32 (exact below ``2^23``). The t-tests' sums of squares come from per-block
    float64 products (``d^2 @ W_k.T``), their thresholds ``crit^2 sum_k W_k^2 var_k
    / n_k`` are assembled in float64 and compared in float32.
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
- ``pre``, each pair's mean and variance (:func:`pair_moments`): ``24 * min(P * T,
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
    values;
  - bootstrap / subsample, one stratum (``strata="uniform"``):
    ``20 * R_tot * T + 12 * S * R_tot + 4 * 512 * R_tot + 16 * S * T + 4 MiB``: the
    draw counts (float64, transposed, float32), every system's resampled sums
    (float64, then float32 when exact), the float32 t-test sums of one block of
    512 pairs, the score grid, and the cache-sized pieces being summarised;
    independent of ``P``;
  - bootstrap / subsample, ``K > 1`` strata: ``8 * (2 * R_tot * T + (K + 1) * S *
    R_tot + S * T + 512 * R_tot * K + 512 * T) + 8 MiB``: the draw counts (built
    transposed, one stratum at a time), every system's resampled sums per stratum and
    their stratified combination, the score grid, the t-test sums of squares of one
    block of 512 pairs, and the cache-sized pieces being summarised;
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
depend on the other counts requested, on chunking, or on the order. With
``rng=None`` a random method draws an integer seed and records it in the result.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

import numpy as np
from scipy import special, stats

from ._json import plain as _plain
from ._random import as_generator, draw_seed, keyed_stream, seed_of
from .errors import DegenerateDataWarning, ParameterError, PlannerError
from .pilot import INTERNAL_METHODS as _PILOT_METHODS
from .scores import ScoreMatrix
from .variance import (
    anova_components,
    as_matrix,
    check_alpha,
    exact_dbar,
    pair_index,
    parse_selector,
    score_grid,
    within_system,
)
from .variance import pair_moments as _direct_pair_moments

#: the pilot-aware methods (the names ``planner validate`` uses): name -> (prior,
#: variance, integrate) of :func:`planner.pilot.predictive_pair_rates`
PREDICTIVE = {k: v for k, v in _PILOT_METHODS.items() if v is not None}
METHODS = ("predictive", "analytic", "bootstrap", "subsample", "parametric") \
    + tuple(k for k in PREDICTIVE if k != "predictive")
#: methods computed in closed form (no resampling, no seed)
CLOSED_FORM = ("analytic",) + tuple(PREDICTIVE)
STRATA_MODES = ("uniform", "stratified", "proportional", "optimal")
DEFAULT_BINS = (0.0, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, math.inf)
PAIR_STATS = ("swap_rate", "reversal_rate", "ci_width", "power", "significant")

_BLOCK = 512  # pairs per matrix product (fixed and aligned: results independent of chunking)
_PARAM_BLOCK = 16  # replicates per block in the parametric method
_NCT_EXACT_MAX = 20_000
_NCT_STEP = 0.01
_FAST_DTYPE = np.float32  # resampled means and t-test sums, one stratum (module docstring)
_SUB_ELEMS = 2 ** 18  # pairs x resamples summarised at a time (cache-sized)


# ---------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Curve:
    """What ``n`` topics buy: :func:`predict`'s result.

    Attributes:
        method: the method used (``"analytic"``, ``"bootstrap"``, ...).
        variance: which variance drove the numbers (``"pair"``, ``"pooled"``,
            ``"within-system"``, ``"percentile:95"``, ``"empirical"`` for the
            resampling methods).
        seed: the integer seed given, or the one drawn when ``rng=None`` and the method
            is random (``rng=seed`` repeats the curve); ``None`` for a Generator, or a
            closed-form method given no seed.
        topics: the topic counts, in the order given.
        rows: one dict per topic count: ``n_topics``, ``n_pairs``,
            ``swap_rate_mean``, ``reversal_rate_mean``, ``kendall_tau_mean``,
            ``ci_width_median``, ``ci_width_p90``, ``power_mean``,
            ``discriminative_power``, ``erho2``, ``phi``, ``extrapolated``
            (bool), and ``allocation`` (stratum -> n_k) for stratified modes.
        bins: the same summaries by bins of observed ``|dbar|``: one dict per
            (topic count, bin) with ``n_topics``, ``bin_lo``, ``bin_hi``,
            ``n_pairs`` and the means / median.
        per_pair: statistic -> array ``(pairs, len(topics))`` (``swap_rate``,
            ``reversal_rate``, ``ci_width``, ``power``, ``significant``), or
            ``None`` with ``keep_pairs=False``.
        pair_a, pair_b: system indices of the pairs (``a < b``).
        dbar, s2_d: per-pair mean difference and variance (ddof=1) on the collection.
        systems: system names.
        measure: the measure of the scores.
        n_collection_topics: ``T``.
        min_diff, alpha, resamples: the options used.
        strata: the stratum mode; ``weights``: stratum -> ``W_k`` (or ``None``).
        extrapolation: for ``subsample``: ``{"A", "B", "fit_topics", "extrapolates", "by_bin"}``
            of ``swap = A exp(-B n)``; else ``None``.
        prior: for the pilot-aware methods, the empirical-Bayes prior fitted over
            all pairs (:meth:`planner.pilot.Prior.to_dict`: ``kind``, ``tau2``, ...)
            with ``variance`` (each pair's ``sigma_d^2`` model), ``integrated`` and,
            for the normal prior, ``shrinkage_median``: the median over pairs of
            ``tau2 / (tau2 + sigma_d^2 / T)``, the factor by which a pair's observed
            difference is pulled towards 0 (1 = plug-in); else ``None``.
    """

    method: str
    variance: str
    seed: int | None
    topics: tuple[int, ...]
    rows: tuple[dict, ...]
    bins: tuple[dict, ...]
    per_pair: dict | None
    pair_a: np.ndarray
    pair_b: np.ndarray
    dbar: np.ndarray
    s2_d: np.ndarray
    systems: tuple[str, ...]
    measure: str | None
    n_collection_topics: int
    min_diff: float
    alpha: float
    resamples: int | None
    strata: str
    weights: dict | None = None
    extrapolation: dict | None = None
    components: dict = field(default_factory=dict)
    prior: dict | None = None

    def to_dict(self, *, pairs: bool = False) -> dict:
        """JSON-able dict: ``method``, ``variance``, ``seed``, ``rows`` (and more).

        ``pairs=True`` adds ``pairs``: one dict per pair with the system names,
        ``dbar``, ``s2_d`` and each kept statistic as a list over topic counts.
        """
        out = {
            "method": self.method,
            "variance": self.variance,
            "seed": self.seed,
            "measure": self.measure,
            "topics": [int(n) for n in self.topics],
            "n_systems": len(self.systems),
            "n_collection_topics": int(self.n_collection_topics),
            "n_pairs": int(self.pair_a.size),
            "min_diff": float(self.min_diff),
            "alpha": float(self.alpha),
            "resamples": None if self.resamples is None else int(self.resamples),
            "strata": self.strata,
            "weights": None if self.weights is None else {k: float(v) for k, v in self.weights.items()},
            "components": {k: float(v) for k, v in self.components.items()},
            "rows": [_plain(r) for r in self.rows],
            "bins": [_plain(r) for r in self.bins],
            "extrapolation": _plain(self.extrapolation),
            "prior": _plain(self.prior),
        }
        if pairs:
            items = []
            for i in range(self.pair_a.size):
                item = {"a": self.systems[self.pair_a[i]], "b": self.systems[self.pair_b[i]],
                        "dbar": float(self.dbar[i]), "s2_d": float(self.s2_d[i])}
                if self.per_pair is not None:
                    for k, v in self.per_pair.items():
                        item[k] = [float(x) for x in v[i]]
                items.append(item)
            out["pairs"] = items
        return out

    def to_frame(self):
        """The rows as a pandas DataFrame (one row a topic count)."""
        import pandas as pd

        return pd.DataFrame([dict(r) for r in self.rows])

    def bins_frame(self):
        """The by-|difference| summaries as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame([dict(r) for r in self.bins])

    def pairs_frame(self):
        """Per-pair results in long form: ``a, b, dbar, s2_d, n_topics`` + statistics."""
        import pandas as pd

        if self.per_pair is None:
            raise ParameterError("per-pair results were not kept (keep_pairs=False)",
                                 parameter="keep_pairs")
        P, N = self.pair_a.size, len(self.topics)
        cols = {
            "a": np.repeat(np.array(self.systems, dtype=object)[self.pair_a], N),
            "b": np.repeat(np.array(self.systems, dtype=object)[self.pair_b], N),
            "dbar": np.repeat(self.dbar, N), "s2_d": np.repeat(self.s2_d, N),
            "n_topics": np.tile(np.asarray(self.topics), P),
        }
        for k, v in self.per_pair.items():
            cols[k] = v.reshape(-1)
        return pd.DataFrame(cols)

    def pair(self, a: str, b: str) -> dict:
        """One named pair: ``a``, ``b``, ``dbar``, ``s2_d`` (oriented as asked) and each kept
        statistic as a list over :attr:`topics` (interval width, reversal, swap, ...)."""
        pos = {s: i for i, s in enumerate(self.systems)}
        for name in (a, b):
            if name not in pos:
                raise ParameterError(f"unknown system {name!r}", parameter="pair")
        i, j = pos[a], pos[b]
        if i == j:
            raise ParameterError("a pair needs two different systems", parameter="pair")
        lo, hi = min(i, j), max(i, j)
        S = len(self.systems)
        k = lo * S - lo * (lo + 1) // 2 + (hi - lo - 1)  # row-major index among a < b
        sign = 1.0 if i < j else -1.0
        out = {"a": a, "b": b, "dbar": sign * float(self.dbar[k]), "s2_d": float(self.s2_d[k]),
               "topics": [int(n) for n in self.topics]}
        if self.per_pair is not None:
            for name, v in self.per_pair.items():
                out[name] = [float(x) for x in v[k]]
        return out

    def row(self, n: int) -> dict:
        """The row of topic count ``n``."""
        for r in self.rows:
            if r["n_topics"] == n:
                return r
        raise ParameterError(f"no row for {n} topics", parameter="n")


# ------------------------------------------------------------------ input helpers
def _matrix(scores, parameter: str = "scores") -> ScoreMatrix:
    """A complete ScoreMatrix of at least 2 systems and 2 topics (variants averaged).

    Accepts what :func:`planner.fit` accepts (``variance.as_matrix``): a ScoreMatrix,
    a path (:func:`planner.load_scores`), a wide DataFrame (rows topics) or a 2-D
    array (systems x topics); anything else is a :class:`ParameterError` on ``parameter``.
    """
    m = as_matrix(scores, parameter)
    if m.has_variants:
        m = m.collapse_variants()
    where = f" ({m.source})" if m.source else ""
    for n, what in ((m.n_systems, "systems"), (m.n_topics, "topics")):
        if n < 2:
            raise ParameterError(f"need at least 2 {what} to simulate, got {n}{where}", parameter=parameter)
    if m.has_missing:
        raise ParameterError("the simulator needs a complete matrix (missing cells found; "
                             "load with missing='zero', 'drop-topic' or 'drop-system')",
                             parameter=parameter)
    return m


def _check_method(method) -> None:
    if not isinstance(method, str) or method not in METHODS:
        raise ParameterError(f"unknown method {method!r}; expected one of " + ", ".join(METHODS),
                             parameter="method")


def _seed_to_use(rng, method: str):
    """``rng`` itself, or a drawn integer seed when ``rng`` is None and ``method`` draws
    random numbers, so that the seed can be recorded and the result repeated."""
    if rng is None and method not in CLOSED_FORM:
        return draw_seed()
    as_generator(rng)       # a bad rng is an error before any work
    return rng


#: largest topic count a curve is computed for (the planner's searches stop there too)
MAX_TOPICS = 10_000_000
#: most resamples (replicates) one simulation draws; far beyond any Monte Carlo need
MAX_RESAMPLES = 1_000_000


def _topics_list(topics) -> tuple[int, ...]:
    if isinstance(topics, (str, bytes)):
        raise ParameterError(f"expected integer topic counts (a list, or one int), got the string {topics!r}",
                             parameter="topics")
    if isinstance(topics, (int, np.integer)):
        topics = [topics]
    try:
        out = tuple(int(n) for n in topics)
    except (TypeError, ValueError):
        raise ParameterError("expected a list of integer topic counts", parameter="topics") from None
    if not out:
        raise ParameterError("no topic counts given", parameter="topics")
    for n, raw in zip(out, topics):
        if n != raw or n < 2:
            raise ParameterError(f"topic counts must be integers >= 2, got {raw!r}", parameter="topics")
        if n > MAX_TOPICS:
            raise ParameterError(f"topic counts must be at most {MAX_TOPICS:,}, got {n}", parameter="topics")
    if len(set(out)) != len(out):
        raise ParameterError("repeated topic count", parameter="topics")
    return out


def pair_moments(x: np.ndarray, a: np.ndarray, b: np.ndarray, *,
                 block: int = 2_000_000) -> tuple[np.ndarray, np.ndarray]:
    """``dbar`` and ``s2_d`` (ddof=1) of ``d[t] = x[a,t] - x[b,t]`` for the given pairs.

    Large problems use the covariance matrix (``s2_d = C_aa + C_bb - 2 C_ab``,
    one matrix product); pairs whose variance is within rounding of 0 are then
    recomputed from their differences, so identical systems give exactly 0.
    Memory: ``8 * (S^2 + S * T + 5 * P)`` bytes for the covariance way, ``24 *
    min(P * T, max(T, block))`` for the direct way (differences in blocks of ``block``
    values; the numbers do not depend on ``block``).
    """
    S, T = x.shape
    P = a.size
    if P * T <= 4_000_000:
        return _direct_pair_moments(x, a, b, block=block)
    mean = x.mean(axis=1)
    xc = x - mean[:, None]
    C = (xc @ xc.T) / (T - 1)
    diag = np.diag(C)
    s2 = diag[a] + diag[b] - 2.0 * C[a, b]
    dbar = mean[a] - mean[b]
    small = np.flatnonzero(s2 <= 1e-9 * (diag[a] + diag[b]) + 1e-300)
    if small.size:
        dbar[small], s2[small] = _direct_pair_moments(x, a[small], b[small], block=block)
    return dbar, np.maximum(s2, 0.0)


def _components(m: ScoreMatrix) -> dict:
    """Variance components from :func:`planner.variance.fit` (ANOVA); the plain ANOVA
    mean squares of the scores when ``fit`` refuses the matrix (constant scores)."""
    from .variance import fit

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            vc = fit(m, method="anova")
        return {"var_s": float(vc.var_s), "var_t": float(vc.var_t), "var_e": float(vc.var_e),
                "ms_s": float(vc.ms_s), "ms_t": float(vc.ms_t), "ms_e": float(vc.ms_e)}
    except PlannerError:  # e.g. a constant matrix: the ANOVA of the scores (all zero)
        return anova_components(m.topic_scores())


def _select_variance(selector: str, s2: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Per-pair variance of the per-topic differences under a selector (paired design)."""
    kind, q = parse_selector(selector, parameter="variance")
    if kind == "pair":
        return s2
    if kind == "pooled":
        return np.full_like(s2, 2.0 * anova_components(x)["var_e"])
    if kind == "within-system":
        return np.full_like(s2, 2.0 * within_system(x))
    return np.full_like(s2, np.percentile(s2, q))


def filter_informative(scores, *, lo: float = 0.0, hi: float = 1.0,
                       min_spread: float = 0.0) -> tuple[ScoreMatrix, tuple[str, ...]]:
    """Drop uninformative topics; returns ``(filtered matrix, removed topic ids)``.

    A topic is removed when every system scores ``<= lo``, or every system
    scores ``>= hi``, or its across-system range ``max - min`` is below
    ``min_spread``. The filtered mean is not comparable with the unfiltered one.
    Raises :class:`ParameterError` when fewer than 2 topics remain.
    """
    m = _matrix(scores)     # what predict accepts (a ScoreMatrix, path, DataFrame or array)
    for name, v in (("lo", lo), ("hi", hi), ("min_spread", min_spread)):
        if not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ParameterError(f"expected a finite number, got {v!r}", parameter=name)
    if min_spread < 0:
        raise ParameterError(f"must be >= 0, got {min_spread}", parameter="min_spread")
    if not lo < hi:
        raise ParameterError(f"the low bound must be below the high bound, got lo {lo:g} and hi {hi:g}",
                             parameter="lo")
    x = m.topic_scores()
    drop = (x <= lo).all(axis=0) | (x >= hi).all(axis=0) | ((x.max(axis=0) - x.min(axis=0)) < min_spread)
    removed = tuple(t for t, d in zip(m.topics, drop) if d)
    if (~drop).sum() < 2:
        raise ParameterError(f"filtering leaves {(~drop).sum()} topic(s); relax lo/hi/min_spread",
                             parameter="min_spread")
    return m.take(topics=~drop), removed


# ------------------------------------------------------------------ strata
def allocate_counts(n: int, weights: Sequence[float], *, minimum: int = 2,
                    maximum: Sequence[int] | None = None, parameter: str = "topics") -> np.ndarray:
    """Integer ``n_k`` summing to ``n``, proportional to ``weights`` within the bounds
    ``min(minimum, maximum[k]) <= n_k <= maximum[k]``.

    The one rounding rule of planner (``simulate``, ``plan.allocate`` and the study's
    stacked strata all use it). First the real quotas ``q_k = clip(lambda w_k, minimum,
    maximum_k)``, with ``lambda`` solved so that ``sum q_k = n`` (strata below the minimum or
    above their maximum are held there and the rest is shared in proportion to the weights);
    then Hamilton's largest-remainder rounding of ``q``: the floors, and one more topic for
    the strata with the largest fractional parts (ties to the earlier stratum). Every ``n_k``
    is thus ``floor(q_k)`` or ``ceil(q_k)``, and within the bounds.
    """
    w = np.asarray(weights, dtype=float)
    K = w.size
    if K == 0 or not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
        raise ParameterError("stratum weights must be finite, >= 0 and not all 0", parameter=parameter)
    lo = np.full(K, float(minimum))
    hi = np.full(K, np.inf) if maximum is None else np.asarray(maximum, dtype=float)
    lo = np.minimum(lo, hi)             # a stratum that allows fewer than ``minimum`` gives all it can
    if n < lo.sum():
        raise ParameterError(f"{n} topics cannot give each of {K} strata {minimum} topics",
                             parameter=parameter)
    if n > hi.sum():
        raise ParameterError(f"{n} topics exceed what the strata allow ({int(hi.sum())})",
                             parameter=parameter)
    w = w / w.sum()
    pos = w > 0
    room = hi[pos].sum() + lo[~pos].sum()
    if n > room:
        # the weighted strata are full: they take their maximum, the unweighted ones share the rest
        out = np.where(pos, hi, 0).astype(int)
        out[~pos] = allocate_counts(int(n - hi[pos].sum()), np.ones(int((~pos).sum())), minimum=minimum,
                                    maximum=hi[~pos], parameter=parameter)
        return out

    def quotas(lam: float) -> np.ndarray:
        return np.where(pos, np.clip(lam * w, lo, hi), lo)

    # sum(quotas) is continuous, piecewise linear and nondecreasing in lambda: find the
    # piece that reaches n among the breakpoints, then solve that piece exactly
    cap = pos & np.isfinite(hi)
    brk = np.unique(np.concatenate([[0.0], lo[pos] / w[pos], hi[cap] / w[cap]]))
    total = np.array([quotas(b).sum() for b in brk])
    i = int(np.searchsorted(total, n, side="left"))
    if i < brk.size and total[i] == n:
        q = quotas(brk[i])
    else:
        left = brk[i - 1]                            # total[i - 1] < n (total[0] = sum lo <= n)
        mid = left + 1.0 if i == brk.size else (left + brk[i]) / 2
        free = pos & (mid * w > lo) & (mid * w < hi)   # the strata that move on this piece
        fixed = quotas(mid)
        lam = (n - fixed[~free].sum()) / w[free].sum()
        q = np.where(free, lam * w, fixed)
    base = np.minimum(np.floor(q), hi).astype(int)
    left_over = int(n - base.sum())
    frac = np.where(base < hi, q - base, -np.inf)
    base[np.argsort(-frac, kind="stable")[:left_over]] += 1
    return base


def _strata_plan(m: ScoreMatrix, mode: str, costs, dbar_unused=None):
    """Groups of topic indices and weights ``W_k`` for a stratum mode (``costs`` checked:
    only with ``"optimal"``, and only for the matrix's strata)."""
    if not isinstance(mode, str) or mode not in STRATA_MODES:
        raise ParameterError(f"unknown strata mode {mode!r}; expected one of " + ", ".join(STRATA_MODES),
                             parameter="strata")
    if costs is not None and mode != "optimal":
        raise ParameterError(f"costs apply only to strata='optimal' (the Neyman allocation), not "
                             f"strata={mode!r}", parameter="costs")
    T = m.n_topics
    if mode == "uniform" or m.strata is None:
        if mode != "uniform":
            raise ParameterError(f"strata={mode!r} needs topics with strata (ScoreMatrix.with_strata "
                                 "or load_scores(strata=...))", parameter="strata")
        return ["all"], [np.arange(T)], np.ones(1)
    labels = m.stratum_labels()
    groups = [np.flatnonzero(np.asarray(m.strata) == k) for k in labels]
    small = [f"{k!r} ({g.size})" for k, g in zip(labels, groups) if g.size < 2]
    if small:
        # one topic has no within-stratum variance: resampling it would add none
        raise ParameterError(f"stratified estimates need at least 2 topics in every stratum; "
                             f"too few in {', '.join(small)} (merge strata, or use strata='uniform')",
                             parameter="strata")
    W = np.array([g.size / T for g in groups])
    if costs is not None:
        _stratum_costs(costs, labels)
    return list(labels), groups, W


def _stratum_costs(costs, labels) -> np.ndarray:
    """Cost per topic of each stratum in ``labels`` (default 1); an unknown stratum or a
    cost that is not a positive finite number is a :class:`ParameterError` on ``costs``."""
    c = np.ones(len(labels))
    if costs is None:
        return c
    if not isinstance(costs, Mapping):
        raise ParameterError("costs must map stratum -> cost per topic", parameter="costs")
    unknown = [k for k in costs if str(k) not in labels]
    if unknown:
        raise ParameterError(f"unknown stratum {unknown[0]!r} (the strata are "
                             f"{', '.join(map(repr, labels))})", parameter="costs")
    given = {str(k): v for k, v in costs.items()}
    for i, k in enumerate(labels):
        if k in given:
            v = given[k]
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)) \
                    or not 0 < v < math.inf:
                raise ParameterError(f"cost of stratum {k!r} must be a number > 0 and finite, got {v!r}",
                                     parameter="costs")
            c[i] = float(v)
    return c


def _allocation(n: int, mode: str, groups, W, x, a, b, costs, labels, *, minimum=2, maximum=None):
    if mode == "uniform":
        return np.array([n])
    if mode in ("stratified", "proportional"):
        return allocate_counts(n, W, minimum=minimum, maximum=maximum)
    # optimal (Neyman): n_k ∝ W_k sigma_k / sqrt(c_k)
    c = _stratum_costs(costs, labels)
    sig = np.empty(len(groups))
    for i, g in enumerate(groups):   # every stratum has >= 2 topics (_strata_plan)
        sig[i] = math.sqrt(2.0 * anova_components(x[:, g])["var_e"]) if x.shape[0] > 1 else 0.0
    score = W * sig / np.sqrt(c)
    if not (score > 0).any():
        score = W.copy()
    return allocate_counts(n, score, minimum=minimum, maximum=maximum)


# ------------------------------------------------------------------ noncentral t
def _nct_cdf(df: float, nc: np.ndarray, x: float) -> np.ndarray:
    # scipy's nctdtr returns NaN far in the tails (values below ~1e-16); those are 0
    v = special.nctdtr(df, nc, x)
    return np.where(np.isnan(v), 0.0, v)


@lru_cache(maxsize=64)
def _power_grid(df: float, crit: float) -> tuple[float, np.ndarray]:
    """``(cap, values)``: two-sided power on the noncentrality grid ``0, step, ...``
    up to ``cap``, beyond which the power is 1 within ``1e-14``."""
    cap = crit + 2.0 ** 11
    for step in 2.0 ** np.arange(0, 12):
        c = np.array([crit + step])
        if (_nct_cdf(df, c, -crit) + 1.0 - _nct_cdf(df, c, crit))[0] >= 1 - 1e-14:
            cap = float(c[0])
            break
    grid = np.arange(0.0, cap + 2 * _NCT_STEP, _NCT_STEP)
    val = _nct_cdf(df, grid, -crit) + 1.0 - _nct_cdf(df, grid, crit)
    val.setflags(write=False)
    return cap, val


def _t_power(nc: np.ndarray, df: float, crit: float) -> np.ndarray:
    """Two-sided rejection probability ``P(|T'| > crit)``, ``T'`` noncentral t(df, nc)."""
    nc = np.abs(np.asarray(nc, dtype=float))
    if nc.size <= _NCT_EXACT_MAX:
        out = np.ones_like(nc)
        fin = np.isfinite(nc)
        v = nc[fin]
        out[fin] = _nct_cdf(df, v, -crit) + 1.0 - _nct_cdf(df, v, crit)
        return out
    cap, val = _power_grid(float(df), float(crit))
    v = np.minimum(nc, cap)  # also maps inf to cap (power 1)
    pos = v / _NCT_STEP
    i = np.minimum(pos.astype(np.int64), val.size - 2)
    f = pos - i
    out = val[i] * (1.0 - f) + val[i + 1] * f
    out[nc >= cap] = 1.0
    return out


# ------------------------------------------------------------------ analytic
def _analytic_chunk(dbar, sig2_k, W, nk, df, n, alpha, min_diff):
    """Analytic statistics for a chunk of pairs at one n. ``sig2_k``: (C, K) per-stratum variances."""
    se2 = (sig2_k * (W ** 2 / nk)[None, :]).sum(axis=1)
    se = np.sqrt(se2)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.abs(dbar) / se
    z = np.where(se > 0, z, np.where(dbar != 0, np.inf, 0.0))
    p = special.ndtr(-z)
    p = np.where(dbar == 0, 0.5, p)
    crit = stats.t.ppf(1 - alpha / 2, df)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):   # an overflow is power 1
        nc_pow = np.where(se > 0, min_diff / se, np.inf)
    return {
        "swap_rate": 2 * p * (1 - p),
        "reversal_rate": p,
        "ci_width": 2 * crit * se,
        "power": _t_power(nc_pow, df, crit),
        "significant": np.where(dbar == 0, np.where(se > 0, alpha, 0.0), _t_power(z, df, crit)),
    }


# ------------------------------------------------------------------ resampling engine
def _block_sums(WT: list[np.ndarray], Dk: list[np.ndarray], squares: bool = True,
                sums: bool = True) -> list[tuple]:
    """Per stratum, the resampled sums of ``d`` and ``d^2`` of one block of pairs.

    ``WT[k]``: (T_k, R) draw counts in stratum k (transposed); ``Dk[k]``: (c, T_k)
    differences of at most ``_BLOCK`` pairs, zero-padded to exactly ``_BLOCK``
    rows so that every product has the same shape (bit-identical results
    whatever the chunking). Returns ``[(s1, s2)]`` with shapes (c, R)
    (``s2`` is ``None`` with ``squares=False``, ``s1`` with ``sums=False``).
    """
    c = Dk[0].shape[0]
    out = []
    for k in range(len(WT)):
        d = Dk[k]
        if c < _BLOCK:
            pad = np.zeros((_BLOCK, d.shape[1]))
            pad[:c] = d
            d = pad
        out.append(((d @ WT[k])[:c] if sums else None, ((d * d) @ WT[k])[:c] if squares else None))
    return out


def _swap_distinct(pos: np.ndarray, neg: np.ndarray, R: int) -> np.ndarray:
    """Swap rate over distinct pairs of resamples (independent); ties count half.

    ``pos``/``neg``: per pair, the numbers of resamples with a positive/negative mean.
    """
    cp = pos.astype(float)
    cm = neg.astype(float)
    tot = R * (R - 1.0)
    nz = cp + cm
    with_tie = tot - nz * (nz - 1.0)
    return (2.0 * cp * cm + 0.5 * with_tie) / tot


def _order_rates(mean: np.ndarray, dbar: np.ndarray, halves: bool, count) -> tuple:
    """Per-pair swap and reversal rates from resampled mean differences ``mean`` (c, R).

    Reversal: share of resamples ordering the pair against ``dbar`` (a tie, or
    ``dbar = 0``, counts half). Swap: with ``halves``, share of the paired
    disjoint sets (column ``j`` and ``j + R/2``) that disagree, else over distinct
    pairs of resamples (:func:`_swap_distinct`). ``count(mask)`` counts True per row.
    """
    R = mean.shape[1]
    pos = count(mean > 0)
    neg = count(mean < 0)
    zero = R - pos - neg
    sg = np.sign(dbar)
    opp = np.where(sg > 0, neg, pos)
    rev = np.where(sg == 0, 0.5, (opp + 0.5 * zero) / R)
    if halves:
        h = R // 2
        prod = np.sign(mean[:, :h]) * np.sign(mean[:, h:])
        swap = (count(prod < 0) + 0.5 * count(prod == 0)) / h
    else:
        swap = _swap_distinct(pos, neg, R)
    return swap, rev


def _draw_stats(mean: np.ndarray, thr: np.ndarray, dbar: np.ndarray, alpha: float, min_diff: float,
                halves: bool = False, scale: float = 1.0) -> dict:
    """Per-pair statistics from resampled means ``mean`` (c, R) and thresholds ``thr``.

    ``halves``: the first and second half of the columns are paired disjoint
    sets (subsample); their disagreement is the swap rate. The mean differences
    are ``scale * mean`` (``thr`` in the units of ``mean^2``). ``mean`` is
    partially sorted in place (for the percentiles).
    """
    c, R = mean.shape
    swap, rev = _order_rates(mean, dbar, halves, lambda m: np.count_nonzero(m, axis=1))
    if thr is None:
        sig = power = np.full(c, np.nan)
    else:
        tmp = mean * mean
        sig = np.count_nonzero(tmp > thr, axis=1) / R
        with np.errstate(over="ignore"):    # a shift that overflows is rejected: power 1
            np.add(mean, ((min_diff - dbar) / scale)[:, None], out=tmp)
            tmp *= tmp
        power = np.count_nonzero(tmp > thr, axis=1) / R
        del tmp
    # percentile interval, numpy's default (linear) quantile definition
    ends = _linear_quantiles(mean, (alpha / 2, 1 - alpha / 2))
    return {"swap_rate": swap, "reversal_rate": rev, "ci_width": (ends[1] - ends[0]) * scale,
            "power": power, "significant": sig}


def _count(mask: np.ndarray) -> np.ndarray:
    """Per row, the number of True values of a 2-d boolean array (row-contiguous).

    Bytes are summed in runs of 255 with 8-bit accumulators (no overflow), then
    the run totals in integers: several times faster than ``count_nonzero``.
    """
    c, R = mask.shape
    m8 = mask.view(np.uint8)
    full = R // 255 * 255
    out = np.zeros(c, dtype=np.intp)
    if full:
        out += m8[:, :full].reshape(c, full // 255, 255).sum(axis=2, dtype=np.uint8).sum(axis=1, dtype=np.intp)
    if full < R:
        out += m8[:, full:].sum(axis=1, dtype=np.intp)
    return out


def _linear_quantiles(v: np.ndarray, qs: Sequence[float]) -> list[np.ndarray]:
    """Per row of ``v`` (c, R), ``numpy.quantile(v, q, axis=1)`` (linear), ``qs`` ascending.

    ``v`` is partially sorted in place: for each ``q`` in turn, one partition at
    the single rank ``l = floor(q (R - 1))`` of the part not yet placed (numpy
    selects a single rank much faster than several at once), rank ``l + 1``
    as the minimum of what lies above. Exact order statistics; interpolated in
    float64 as ``a_l + (a_{l+1} - a_l) f``.
    """
    c, R = v.shape
    vals: dict[int, np.ndarray] = {}
    done = 0  # ranks < done are in place
    res = []
    for q in qs:
        p = q * (R - 1)
        l = int(math.floor(p))
        if l not in vals:
            v[:, done:].partition(l - done, axis=1)
            vals[l] = v[:, l].astype(np.float64)
            done = l + 1
        f = p - l
        if f == 0 or l + 1 >= R:
            res.append(vals[l])
            continue
        if l + 1 not in vals:
            vals[l + 1] = v[:, l + 1:].min(axis=1).astype(np.float64)
        res.append(vals[l] + (vals[l + 1] - vals[l]) * f)
    return res


def _pair_diff(M: np.ndarray, aa: np.ndarray, bb: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out[i] = M[aa[i]] - M[bb[i]]``, computed in ``M``'s precision and rounded to ``out``'s.

    Pairs come in runs of equal ``a`` and consecutive ``b`` (row-major order):
    each run is one broadcast subtraction of slices, no gather.
    """
    c = aa.size
    start = 0
    while start < c:
        stop = start + 1
        while stop < c and aa[stop] == aa[start] and bb[stop] == bb[stop - 1] + 1:
            stop += 1
        np.subtract(M[aa[start]][None, :], M[bb[start]:bb[stop - 1] + 1], out=out[start:stop],
                    casting="same_kind")
        start = stop
    return out


def _strata_sums(x: np.ndarray, groups, nk, WT, n: int):
    """Every system's resampled sums per stratum and its stratified mean: ``(Msk, unit, M, scale)``.

    ``Msk[k]`` (S, R): sums on stratum k's draws, on one score grid (:func:`score_grid`,
    exact integers). The stratified mean ``sum_k W_k unit Msk[k] / n_k`` (``W_k = T_k / T``)
    equals ``scale * M``:

    - with integer weights ``c_k = T_k L / (n_k G)`` (``L`` the least common multiple of
      the ``n_k``, ``G`` the greatest common divisor of the ``T_k L / n_k``),
      ``M = sum_k c_k Msk[k]`` is an exact integer and ``scale = unit G / (T L)``,
      whenever the scores sit on a decimal grid fine enough for sums of ``sum_k c_k n_k``
      scores (trec_eval's 4 decimals: up to about ``10^11``). A pair's mean difference
      then has an exact sign, and a tie (including one whose strata cancel, e.g.
      ``+0.68 / 4`` in one stratum against ``-0.56 / 8`` in another at weights 7 : 17)
      is exactly 0;
    - otherwise (arbitrary floats) the grid is the one of ``n`` draws, strata with the
      same ``T_k / n_k`` are summed as integers before their common coefficient is
      applied, and ``M`` is the float64 combination (``scale = 1``), or that integer
      total when all strata share one coefficient.

    ``M`` is float32 when it is an integer below ``2^23`` (still exact).
    """
    T = sum(g.size for g in groups)
    counts = [int(c) for c in nk]
    L = math.lcm(*counts)
    c_int = [int(g.size) * (L // c) for g, c in zip(groups, counts)]
    G = math.gcd(*c_int)  # smallest integer weights: 1 each when all T_k / n_k are equal
    c_int = [ck // G for ck in c_int]
    qx, unit = score_grid(x, sum(ck * c for ck, c in zip(c_int, counts)))
    integer_weights = _decimal_unit(unit)
    if not integer_weights:
        qx, unit = score_grid(x, int(n))
    Msk = [qx[:, g] @ w for g, w in zip(groups, WT)]
    if integer_weights:
        M = np.zeros_like(Msk[0])
        for ck, Mk in zip(c_int, Msk):
            M += float(ck) * Mk
        return Msk, unit, _exact_small(M), unit * G / (T * L)
    by_ratio: dict = {}
    for k, g in enumerate(groups):
        by_ratio.setdefault(Fraction(int(g.size), counts[k]), []).append(k)
    totals = [(float(ratio / T) * unit, Msk[ks[0]] if len(ks) == 1 else np.sum([Msk[k] for k in ks], axis=0))
              for ratio, ks in by_ratio.items()]
    if len(totals) == 1:
        coef, M = totals[0]
        return Msk, unit, _exact_small(M), coef
    M = np.zeros_like(Msk[0])
    for coef, tot in totals:
        M += tot * coef
    return Msk, unit, M, 1.0


def _decimal_unit(unit: float) -> bool:
    """Whether :func:`score_grid` chose a decimal grid (``10^-k``): the scores are exact on it."""
    return any(unit == 10.0 ** -k for k in range(10))


def _exact_small(M: np.ndarray) -> np.ndarray:
    """Integer-valued ``M`` as float32 when that is exact (below ``2^23``), else unchanged."""
    if np.float32 == _FAST_DTYPE and float(np.max(np.abs(M), initial=0.0)) < 2.0 ** 23:
        return M.astype(np.float32)
    return M


def _fast_block(Msys, scale, aa, bb, Q, dbar, alpha, min_diff, cprime, halves, dtype):
    """Per-pair statistics of one stratum for a few pairs, from the systems' sums.

    ``Msys`` (S, R): every system's resampled sum of its scores on the integer
    grid of :func:`score_grid` (exact). A resample's mean difference is
    ``m = scale * u`` with ``u = Msys[a] - Msys[b]`` (exact in float64, then
    rounded to ``dtype``: its sign and zeros are kept exactly; a tie, the same
    sum for both systems, is exactly 0).
    ``Q`` (c, R): the resampled sums of ``kappa d^2`` with ``kappa = c' / (n (1 +
    c') scale^2)``, ``c' = crit^2 / (n - 1)`` (None: no t-tests). The paired t-test
    rejects when ``m^2 > crit^2 var / n`` (``var`` the ddof=1 variance of the
    drawn differences), i.e. ``u^2 > Q``; with every difference shifted by
    ``delta = min_diff - dbar`` (power) when ``(u + delta')^2 + g > Q``,
    ``delta' = delta / ((1 + c') scale)``, ``g = c' (delta' )^2`` (the same
    inequality, rearranged).
    """
    c = aa.size
    R = Msys.shape[1]
    u = _pair_diff(Msys, aa, bb, np.empty((c, R), dtype=dtype))
    swap, rev = _order_rates(u, dbar, halves, _count)
    if Q is None:
        sig = power = np.full(c, np.nan)
    else:
        v = u * u
        sig = _count(v > Q) / R
        with np.errstate(over="ignore"):    # a shift that overflows is rejected: power 1
            dprime = (min_diff - dbar) / ((1.0 + cprime) * scale)
            np.add(u, dprime.astype(dtype)[:, None], out=v)
            v *= v
            v += (cprime * dprime * dprime).astype(dtype)[:, None]
        power = _count(v > Q) / R
        del v
    lo, hi = _linear_quantiles(u, (alpha / 2, 1 - alpha / 2))
    return {"swap_rate": swap, "reversal_rate": rev, "ci_width": (hi - lo) * scale,
            "power": power, "significant": sig}


def _one_blas_thread():
    """Context limiting BLAS to one thread (``threadpoolctl``, when installed).

    The resampling products are thin (inner dimension ``T``) and interleaved
    with single-threaded numpy work; between calls OpenBLAS's idle worker
    threads busy-wait, which on the benchmark doubled the CPU time for a small
    gain in wall time. Without ``threadpoolctl`` nothing is changed.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _stream(base: np.random.SeedSequence, n: int) -> np.random.Generator:
    ss = np.random.SeedSequence(base.entropy, spawn_key=tuple(base.spawn_key) + (int(n),))
    return np.random.Generator(np.random.PCG64(ss))


# ------------------------------------------------------------------ public entry
def predict(scores, *, topics, method: str = "predictive", variance: str | None = None,
            min_diff: float = 0.05, alpha: float = 0.05, resamples: int = 1000,
            strata: str = "uniform", costs: Mapping[str, float] | None = None, rng=None,
            bins: Sequence[float] = DEFAULT_BINS, keep_pairs: bool = True,
            chunk_pairs: int | None = None, max_memory: int = 256 * 2 ** 20,
            t_tests: bool = True) -> Curve:
    """Curves of reversal, swap, Kendall tau, interval width, power, Erho2, Phi vs ``n``.

    Args:
        scores: a :class:`ScoreMatrix`, a path (:func:`planner.load_scores`), a wide
            DataFrame (rows topics, columns systems) or a 2-D array (systems x topics),
            as for :func:`planner.fit`; at least 2 systems and 2 topics, no missing cells.
        topics: topic counts ``n`` (integers >= 2).
        method: ``"predictive"`` (default), ``"analytic"``, ``"bootstrap"``,
            ``"subsample"``, ``"parametric"``, or a predictive variant of
            :data:`PREDICTIVE` (module docstring).
        variance: for ``analytic``: ``"pair"`` (default), ``"pooled"``,
            ``"within-system"`` or ``"percentile:q"``. The resampling methods use
            the data (``"empirical"``) or the components (``parametric``:
            ``"pooled"``) and reject any other value.
        min_diff: true difference at which the power is computed.
        alpha: test level; intervals are ``1 - alpha``.
        resamples: ``R`` for the random methods.
        strata: ``"uniform"``, ``"stratified"`` (= ``"proportional"``) or ``"optimal"``.
        costs: stratum -> cost per topic, only with ``strata="optimal"`` (a stratum
            not named costs 1; an unknown stratum is an error).
        rng: an integer seed, a Generator or ``None``. With ``None`` a random method
            draws a fresh integer seed and records it in :attr:`Curve.seed`, so
            ``rng=curve.seed`` repeats the curve; a Generator's stream cannot be
            recorded (``seed`` is then ``None``).
        bins: edges of the ``|dbar|`` bins.
        keep_pairs: keep per-pair arrays in :attr:`Curve.per_pair`.
        chunk_pairs: pairs per chunk (default: from ``max_memory``; module docstring).
        t_tests: ``bootstrap``/``subsample``: run the paired t-test in every
            resample (power and discriminative power); ``False`` skips them
            (those columns become NaN) and skips the per-block matrix products
            of the squared differences.

    Raises:
        ParameterError: bad options (named), e.g. ``n > T/2`` is fine for subsample
            (extrapolated) but stratified counts need at least 2 topics per stratum.
    """
    m = _matrix(scores)
    ns = _topics_list(topics)
    _check_method(method)
    rng = _seed_to_use(rng, method)   # None: a drawn seed, recorded in Curve.seed
    for name, v in (("min_diff", min_diff), ("alpha", alpha)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ParameterError(f"expected a number, got {v!r}", parameter=name)
    check_alpha(alpha)
    if min_diff < 0:
        raise ParameterError(f"must be >= 0, got {min_diff}", parameter="min_diff")
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 2:
        raise ParameterError(f"must be an integer >= 2, got {resamples!r}", parameter="resamples")
    if resamples > MAX_RESAMPLES:
        raise ParameterError(f"must be at most {MAX_RESAMPLES:,}, got {resamples}", parameter="resamples")
    resamples = int(resamples)
    if not isinstance(t_tests, (bool, np.bool_)):
        raise ParameterError(f"expected True or False, got {t_tests!r}", parameter="t_tests")
    if chunk_pairs is not None and (not isinstance(chunk_pairs, (int, np.integer)) or chunk_pairs < 1):
        raise ParameterError(f"must be a positive integer, got {chunk_pairs!r}", parameter="chunk_pairs")
    edges = np.asarray(bins, dtype=float)
    if edges.ndim != 1 or edges.size < 2 or np.any(np.diff(edges) <= 0):
        raise ParameterError("bin edges must be an increasing list of at least 2 numbers", parameter="bins")
    if method in CLOSED_FORM:
        variance = "pair" if variance is None else variance
        parse_selector(variance, parameter="variance")
        if method in PREDICTIVE and variance != "pair":
            raise ParameterError(f"method {method!r} computes its other statistics with each pair's own "
                                 "variance (variance='pair'); its swap and reversal rates use the "
                                 "variance its name says", parameter="variance")
    else:
        expect = "pooled" if method == "parametric" else "empirical"
        if variance not in (None, expect):
            raise ParameterError(f"method {method!r} takes its variance from the "
                                 f"{'components' if method == 'parametric' else 'data'} "
                                 f"({expect!r}); got {variance!r}", parameter="variance")
        variance = expect
    if (method in PREDICTIVE or method == "parametric") and strata != "uniform":
        raise ParameterError(f"method {method!r} supports only strata='uniform'", parameter="strata")

    x = m.topic_scores()
    S, T = x.shape
    labels, groups, W = _strata_plan(m, strata, costs)
    K = len(groups)
    a, b = pair_index(S)
    P = a.size
    # the pair passes (differences in blocks) stay within max_memory as well
    pblock = max(T, min(2_000_000, int(max_memory) // 24))
    dbar, s2 = pair_moments(x, a, b, block=pblock)
    dbar = exact_dbar(x, a, b)
    comps = _components(m)
    if comps["var_s"] == 0:
        warnings.warn("variance component of systems is 0 (truncated): Erho2 and Phi are 0",
                      DegenerateDataWarning, stacklevel=2)
    idents = int(((dbar == 0) & (s2 == 0)).sum())
    if idents:
        warnings.warn(f"{idents} pair(s) of systems identical on every topic: each counts as a tie "
                      "(reversal and swap rate 0.5)", DegenerateDataWarning, stacklevel=2)

    # allocation per n
    maxima = None
    if method == "subsample":
        maxima = [g.size // 2 for g in groups]
    allocs = []
    computed = []  # True when n is simulated (False: extrapolated)
    for n in ns:
        if method == "subsample" and n > sum(maxima):
            allocs.append(None)
            computed.append(False)
            continue
        if strata != "uniform":
            nk = _allocation(n, strata, groups, W, x, a, b, costs, labels, maximum=maxima)
        else:
            nk = np.array([n])
        allocs.append(nk)
        computed.append(True)

    gen = as_generator(rng)
    base = gen.bit_generator.seed_seq.spawn(1)[0] if method not in CLOSED_FORM else None

    N = len(ns)
    # per-pair results stored (N, P): one contiguous row per topic count
    pp = {k: np.full((N, P), np.nan) for k in (PAIR_STATS if keep_pairs else ("ci_width",))}
    NB = -(-P // _BLOCK)
    blk_sums = {k: np.zeros((NB, N)) for k in PAIR_STATS}
    bin_idx = np.clip(np.searchsorted(edges, np.abs(dbar), side="right") - 1, -1, edges.size - 2)
    bin_idx = np.where(np.abs(dbar) >= edges[-1], -1 if math.isfinite(edges[-1]) else edges.size - 2, bin_idx)
    B = edges.size - 1
    in_bin = bin_idx >= 0
    bin_counts = np.bincount(bin_idx[in_bin], minlength=B)
    blk_bins = {k: np.zeros((NB, B, N)) for k in PAIR_STATS}
    ci_t = pp["ci_width"]

    # chunk size from the memory budget
    R_tot = 2 * resamples if method == "subsample" else resamples
    if chunk_pairs is None:
        if method in CLOSED_FORM:
            # analytic: about 12 + 6 K float64 values per pair (measured by
            # benchmarks/bench_bootstrap.py); predictive: 16 more for its rates (one n at a
            # time), 32 more with the variance integrated (its 16 quadrature scales)
            per = 8 * (12 + 6 * max(1, K) + (0 if method == "analytic" else 32 if PREDICTIVE[method][2] else 16))
            fixed = 0
        elif method == "parametric":
            per = 8 * 6 * R_tot
            fixed = 8 * _PARAM_BLOCK * S * (S + max(ns))
        else:
            per = 8 * (6 * R_tot + 2 * T)
            fixed = 8 * R_tot * (T + (K * S if K > 1 else 0))
        chunk = max(_BLOCK, (max_memory - fixed) // per // _BLOCK * _BLOCK)
    else:
        chunk = -(-int(chunk_pairs) // _BLOCK) * _BLOCK

    def accumulate(sl, j, res):
        # sums are kept per aligned block of _BLOCK pairs (each block summed on its
        # own, then the block sums are added at the end), so the floating-point
        # summation order does not depend on the chunk size
        for k, v in res.items():
            if k in pp:
                pp[k][j, sl] = v
        b0 = sl.start // _BLOCK
        c = sl.stop - sl.start
        nb = -(-c // _BLOCK)
        ib = np.full(nb * _BLOCK, B, dtype=np.intp)
        ib[:c] = np.where(bin_idx[sl] >= 0, bin_idx[sl], B)
        code = (np.arange(nb)[:, None] * (B + 1) + ib.reshape(nb, _BLOCK)).ravel()
        vp = np.zeros(nb * _BLOCK)
        for k, v in res.items():
            vp[:c] = v
            blk_sums[k][b0:b0 + nb, j] = vp.reshape(nb, _BLOCK).sum(axis=1)
            blk_bins[k][b0:b0 + nb, :, j] = np.bincount(code, weights=vp, minlength=nb * (B + 1)) \
                .reshape(nb, B + 1)[:, :B]

    prior = prior_info = None
    if method in PREDICTIVE:
        from .pilot import fit_prior, pair_variance_model, predictive_pair_rates, variance_df, variance_scales

        prior_kind, pvar, integrate = PREDICTIVE[method]
        s2_pred = pair_variance_model(s2, pvar)
        # the prior once, over all pairs; the rates are then per chunk and n
        prior = fit_prior(dbar, s2_pred, T, prior=prior_kind)
        prior_info = {**prior.to_dict(), "variance": pvar, "integrated": bool(integrate)}
        if prior_kind == "normal":
            pos = s2_pred[s2_pred > 0]
            prior_info["shrinkage_median"] = float(np.median(prior.tau2 / (prior.tau2 + pos / T))) \
                if pos.size and prior.tau2 > 0 else (0.0 if pos.size else None)
        nu = variance_df(T, _direct_pair_moments(x, a, b, kurtosis=True, block=pblock)[2]) if integrate else None

    if method in CLOSED_FORM:
        # per-stratum variances of each pair under the selector
        sig_all = _select_variance(variance, s2, x) if K == 1 else None
        # a selector other than "pair" gives one variance per stratum, from all its pairs
        sig_groups = [None if variance == "pair" else
                      _select_variance(variance, pair_moments(x[:, g], a, b, block=pblock)[1], x[:, g])[0]
                      for g in groups] if K > 1 else None
        for lo in range(0, P, chunk):
            sl = slice(lo, min(P, lo + chunk))
            if K == 1:
                sig2_k = sig_all[sl][:, None]
            else:
                cols = []
                for g, sg in zip(groups, sig_groups):
                    if sg is not None:
                        cols.append(np.full(sl.stop - sl.start, sg))
                    else:
                        cols.append(pair_moments(x[:, g], a[sl], b[sl], block=pblock)[1])
                sig2_k = np.stack(cols, axis=1)
            # the quadrature over each pair's variance: once per chunk, for every n
            scales = variance_scales(nu[sl], pairs=sl.stop - sl.start) if prior is not None and nu is not None \
                else None
            for j, n in enumerate(ns):
                nk = allocs[j]
                Wk = W if K > 1 else np.ones(1)
                res = _analytic_chunk(dbar[sl], sig2_k, Wk, nk.astype(float), n - K, n, alpha, min_diff)
                if prior is not None:
                    pr = predictive_pair_rates(dbar[sl], s2_pred[sl], T, [n], prior=prior,
                                               df=scales)
                    # identical systems (dbar = 0, s2_d = 0) are ties here too (0.5)
                    tie = (dbar[sl] == 0) & (s2[sl] == 0)
                    res["swap_rate"] = np.where(tie, 0.5, pr["swap_rate"][:, 0])
                    res["reversal_rate"] = np.where(tie, 0.5, pr["reversal_rate"][:, 0])
                accumulate(sl, j, res)
    elif method in ("bootstrap", "subsample"):
        with _one_blas_thread():
            for j, n in enumerate(ns):
                if not computed[j]:
                    continue
                nk = allocs[j]
                g_n = _stream(base, n)
                # the previous count's arrays go before this count's are made (memory bound)
                WT = WTq = Msys = Msk = Mcomb = SS = Q = d = None
                # the draw counts of stratum k, transposed (T_k, R_tot), built one stratum at
                # a time without keeping the untransposed draws
                WT = []
                cols = np.arange(resamples)[:, None]
                for g, c in zip(groups, nk):
                    if method == "bootstrap":
                        cnt = g_n.multinomial(int(c), np.full(g.size, 1.0 / g.size), size=resamples)
                        WT.append(np.ascontiguousarray(cnt.T, dtype=np.float64))
                        del cnt
                    else:  # set A: the first c of a random order, set B: the next c
                        order = np.argsort(g_n.random((resamples, g.size)), axis=1)
                        wt = np.zeros((g.size, 2 * resamples))
                        wt[order[:, :c], cols] = 1.0
                        wt[order[:, c:2 * c], resamples + cols] = 1.0
                        WT.append(wt)
                        del order
                crit = stats.t.ppf(1 - alpha / 2, n - K)
                if K == 1:
                    # one stratum: means from every system's exact resampled sums
                    # (one small product per n), a product per block only for the t-tests
                    g = groups[0]
                    qx, unit = score_grid(x[:, g], int(nk[0]))  # per n: n's numbers depend on n only
                    Msys = qx @ WT[0]  # exact integers
                    if np.float32 == _FAST_DTYPE and float(np.max(np.abs(Msys), initial=0.0)) < 2.0 ** 23:
                        # (decimal grids: sums of at most n * 10^k; the float64 copy is dropped)
                        Msys = Msys.astype(np.float32)  # still exact: differences subtract exactly in float32
                    WTq = WT[0].astype(_FAST_DTYPE) if t_tests else None
                    cprime = crit * crit / (n - 1.0)
                    scale = unit / n
                    kappa = cprime / (n * (1.0 + cprime) * scale * scale)
                    sub1 = max(1, _SUB_ELEMS // R_tot)
                    for lo in range(0, P, chunk):
                        hi_ = min(P, lo + chunk)
                        for b0 in range(lo, hi_, _BLOCK):
                            sl = slice(b0, min(hi_, b0 + _BLOCK))
                            c = sl.stop - sl.start
                            Q = None
                            if t_tests:
                                d = np.zeros((_BLOCK, g.size))  # aligned, zero-padded: same product shape always
                                d[:c] = x[a[sl]][:, g] - x[b[sl]][:, g]
                                d *= d
                                d *= kappa
                                Q = d.astype(_FAST_DTYPE) @ WTq
                            res = {k: np.empty(c) for k in PAIR_STATS}
                            for r0 in range(0, c, sub1):
                                r1 = min(c, r0 + sub1)
                                part = _fast_block(Msys, scale, a[sl][r0:r1], b[sl][r0:r1],
                                                   None if Q is None else Q[r0:r1], dbar[sl][r0:r1], alpha,
                                                   min_diff, cprime, method == "subsample", _FAST_DTYPE)
                                for k, v in part.items():
                                    res[k][r0:r1] = v
                            accumulate(sl, j, res)
                    continue
                # several strata: every system's exact resampled sums per stratum (one
                # product per stratum and n), combined once into the stratified means
                # (:func:`_strata_sums`); per block of pairs only the t-tests' sums of
                # squares need a product
                Msk, unit, Mcomb, mscale = _strata_sums(x, groups, nk, WT, n)
                # the t-test rejects when u^2 > Q, mean = mscale * u, Q = crit^2 se^2 / mscale^2:
                # se^2 = sum_k W_k^2 var_k / n_k, var_k = (SS_k - unit^2 D_k^2 / n_k) / (n_k - 1)
                # with D_k the pair's resampled sum of differences on the grid
                cq = [(crit * W[k] / mscale) ** 2 / (nk[k] * (nk[k] - 1.0)) for k in range(K)]
                cd = [unit * unit / nk[k] for k in range(K)]
                sub1 = max(1, _SUB_ELEMS // R_tot)
                buf = np.empty((sub1, R_tot))
                for lo in range(0, P, chunk):
                    hi_ = min(P, lo + chunk)
                    for b0 in range(lo, hi_, _BLOCK):
                        sl = slice(b0, min(hi_, b0 + _BLOCK))
                        aa, bb = a[sl], b[sl]
                        SS = None
                        if t_tests:
                            Dk = [x[aa][:, g] - x[bb][:, g] for g in groups]
                            SS = [s2 for _, s2 in _block_sums(WT, Dk, sums=False)]
                        c = sl.stop - sl.start
                        res = {k: np.empty(c) for k in PAIR_STATS}
                        # post-process a few pairs at a time so the (pairs x R) pieces stay in cache
                        for r0 in range(0, c, sub1):
                            r1 = min(c, r0 + sub1)
                            a_, b_ = aa[r0:r1], bb[r0:r1]
                            Q = None
                            if t_tests:
                                Q = np.zeros((r1 - r0, R_tot))
                                tmp = buf[:r1 - r0]
                                for k in range(K):
                                    _pair_diff(Msk[k], a_, b_, tmp)
                                    tmp *= tmp
                                    tmp *= -cd[k]
                                    tmp += SS[k][r0:r1]
                                    np.maximum(tmp, 0.0, out=tmp)
                                    tmp *= cq[k]
                                    Q += tmp
                                Q = Q.astype(_FAST_DTYPE)
                            part = _fast_block(Mcomb, mscale, a_, b_, Q, dbar[sl][r0:r1], alpha, min_diff, 0.0,
                                               method == "subsample", _FAST_DTYPE)
                            for k, v in part.items():
                                res[k][r0:r1] = v
                        accumulate(sl, j, res)
    else:  # parametric
        mu_s = x.mean(axis=1)
        sd_e = math.sqrt(comps["var_e"])
        for j, n in enumerate(ns):
            for lo in range(0, P, chunk):
                sl = slice(lo, min(P, lo + chunk))
                g_n = _stream(base, n)  # restarted per chunk: same draws for every chunk
                aa, bb = a[sl], b[sl]
                M = np.empty((resamples, aa.size))
                V = np.empty((resamples, aa.size))
                for r0 in range(0, resamples, _PARAM_BLOCK):
                    rb = min(_PARAM_BLOCK, resamples - r0)
                    E = g_n.standard_normal((rb, S, n)) * sd_e
                    eb = E.mean(axis=2)
                    G = E @ E.transpose(0, 2, 1)
                    diff = eb[:, aa] - eb[:, bb]
                    ss = G[:, aa, aa] + G[:, bb, bb] - 2.0 * G[:, aa, bb] - n * diff * diff
                    M[r0:r0 + rb] = (mu_s[aa] - mu_s[bb])[None, :] + diff
                    V[r0:r0 + rb] = np.maximum(ss, 0.0) / (n - 1.0) / n
                    del E, G  # before the next block's (memory bound)
                crit = stats.t.ppf(1 - alpha / 2, n - 1)
                res = _draw_stats(np.ascontiguousarray(M.T), np.ascontiguousarray(V.T) * crit * crit,
                                  dbar[sl], alpha, min_diff)
                accumulate(sl, j, res)

    # ------------------------------------------------------------- summaries
    rows = []
    bin_rows = []
    extrap = None
    sums = {k: v.sum(axis=0) for k, v in blk_sums.items()}
    bin_sums = {k: v.sum(axis=0) for k, v in blk_bins.items()}  # (B, N)
    ci_med, ci_p90 = np.quantile(ci_t, [0.5, 0.9], axis=1)
    bin_med = np.full((B, N), np.nan)
    for k in range(B):
        if bin_counts[k]:
            bin_med[k] = np.median(ci_t[:, bin_idx == k], axis=1)
    for j, n in enumerate(ns):
        er = comps["var_s"] / (comps["var_s"] + comps["var_e"] / n) if comps["var_s"] > 0 else 0.0
        ph = (comps["var_s"] / (comps["var_s"] + (comps["var_t"] + comps["var_e"]) / n)
              if comps["var_s"] > 0 else 0.0)
        row = {"n_topics": int(n), "n_pairs": int(P)}
        if computed[j]:
            sw = sums["swap_rate"][j] / P
            row.update({
                "swap_rate_mean": sw,
                "reversal_rate_mean": sums["reversal_rate"][j] / P,
                "kendall_tau_mean": 1.0 - 2.0 * sw,
                "ci_width_median": float(ci_med[j]),
                "ci_width_p90": float(ci_p90[j]),
                "power_mean": sums["power"][j] / P,
                "discriminative_power": sums["significant"][j] / P,
            })
        else:
            row.update({k: math.nan for k in ("swap_rate_mean", "reversal_rate_mean", "kendall_tau_mean",
                                              "ci_width_median", "ci_width_p90", "power_mean",
                                              "discriminative_power")})
        row.update({"erho2": er, "phi": ph, "extrapolated": not computed[j]})
        if strata != "uniform" and allocs[j] is not None:
            row["allocation"] = {lab: int(c) for lab, c in zip(labels, allocs[j])}
        rows.append(row)
        for k in range(B):
            cnt = int(bin_counts[k])
            br = {"n_topics": int(n), "bin_lo": float(edges[k]), "bin_hi": float(edges[k + 1]),
                  "n_pairs": cnt}
            if computed[j] and cnt:
                br.update({
                    "swap_rate_mean": bin_sums["swap_rate"][k, j] / cnt,
                    "reversal_rate_mean": bin_sums["reversal_rate"][k, j] / cnt,
                    "ci_width_median": float(bin_med[k, j]),
                    "power_mean": bin_sums["power"][k, j] / cnt,
                    "discriminative_power": bin_sums["significant"][k, j] / cnt,
                })
            else:
                br.update({k2: math.nan for k2 in ("swap_rate_mean", "reversal_rate_mean",
                                                   "ci_width_median", "power_mean", "discriminative_power")})
            br["extrapolated"] = not computed[j]
            bin_rows.append(br)

    if method == "subsample":
        extrap = _extrapolate(ns, computed, rows, bin_rows, B)

    return Curve(method=method, variance=variance, seed=seed_of(rng), topics=ns, rows=tuple(rows),
                 bins=tuple(bin_rows), per_pair={k: v.T for k, v in pp.items()} if keep_pairs else None,
                 pair_a=a, pair_b=b,
                 dbar=dbar, s2_d=s2, systems=m.systems, measure=m.measure, n_collection_topics=T,
                 min_diff=float(min_diff), alpha=float(alpha),
                 resamples=None if method in CLOSED_FORM else resamples,
                 strata=strata, weights=None if strata == "uniform" else dict(zip(labels, W.tolist())),
                 extrapolation=extrap, components=comps, prior=prior_info)


def _fit_exp(ns: np.ndarray, sw: np.ndarray):
    """Least-squares line through ``(n, log swap)`` over the positive rates, in increasing
    ``n`` (so the fit, to the last bit, does not depend on the order the counts were given)."""
    ok = np.isfinite(sw) & (sw > 0)
    if ok.sum() < 2:
        return None
    order = np.argsort(ns[ok], kind="stable")
    x, y = ns[ok][order].astype(float), np.log(sw[ok][order])
    slope, icpt = np.polyfit(x, y, 1)
    return {"A": float(math.exp(icpt)), "B": float(-slope), "fit_topics": [int(v) for v in x],
            "extrapolates": bool(-slope > 0)}


def _zero_fit(ns: np.ndarray, sw: np.ndarray):
    """No swap at the largest simulated count (and fewer than 2 positive rates to fit): the
    expected swap rate only falls with n, so the counts above T/2 are extrapolated as 0."""
    fin = np.isfinite(sw)
    if not fin.any() or sw[fin][np.argmax(ns[fin])] != 0:
        return None
    return {"A": 0.0, "B": None, "fit_topics": sorted(int(v) for v in ns[fin]), "extrapolates": True,
            "zero": True}


def _exp_value(fit: dict, n: int) -> float:
    return 0.0 if fit.get("zero") else fit["A"] * math.exp(-fit["B"] * n)


def _extrapolate(ns, computed, rows, bin_rows, B):
    """Voorhees-Buckley exponential extrapolation of the swap rate to ``n > T/2``.

    A fit whose swap rate does not fall with ``n`` (``B <= 0``) is kept in the output
    with ``"extrapolates": False`` and its counts above ``T/2`` stay undefined (NaN):
    growing it would leave [0, 1]. It happens in the bin of near-ties, where two
    disjoint halves of a finite collection tend to order a pair oppositely. A bin (or the
    whole curve) with no swap at its largest simulated count and fewer than two positive
    rates is extrapolated as 0 (``"zero": True``); one with a single positive rate at its
    largest count cannot be fitted and stays NaN, with a warning naming it.
    """
    comp = np.array([n for n, c in zip(ns, computed) if c])
    sw = np.array([r["swap_rate_mean"] for r, c in zip(rows, computed) if c])
    fit = _fit_exp(comp, sw) or _zero_fit(comp, sw)
    by_bin = []
    rising = []
    unfit = []
    for k in range(B):
        brs = [br for br in bin_rows if br["bin_lo"] == bin_rows[k]["bin_lo"]]
        bsw = np.array([br["swap_rate_mean"] for br, c in zip(brs, computed) if c])
        f = (_fit_exp(comp, bsw) or _zero_fit(comp, bsw)) if bsw.size else None
        by_bin.append({"bin_lo": bin_rows[k]["bin_lo"], "bin_hi": bin_rows[k]["bin_hi"], "fit": f})
        label = f"[{bin_rows[k]['bin_lo']:g}, {bin_rows[k]['bin_hi']:g})"
        if f is not None and not f["extrapolates"] and not all(computed):
            rising.append(label)
        if f is None and bsw.size and np.isfinite(bsw).any() and not all(computed):
            unfit.append(label)
        if f is not None and f["extrapolates"]:
            for br, c in zip(brs, computed):
                if not c:
                    br["swap_rate_mean"] = _exp_value(f, br["n_topics"])
    undefined = []
    if B and not all(computed):
        # the all-pairs rate above T/2 is the pair-weighted mean of the bins' extrapolations (the
        # pairs of a bin decay at a similar rate; one exponential fitted to the mean of pairs that
        # decay at different rates falls too fast: on TREC-5 AP at n = 100 it gave 0.022, below
        # the 0.035 the bins give even with the near-ties never swapping)
        for r, c in zip(rows, computed):
            if c:
                continue
            brs = [br for br in bin_rows if br["n_topics"] == r["n_topics"] and br["n_pairs"]]
            vals = np.array([br["swap_rate_mean"] for br in brs], dtype=float)
            w = np.array([br["n_pairs"] for br in brs], dtype=float)
            # every pair must be in a bin that extrapolates (bins need not cover all pairs)
            covered = brs and int(w.sum()) == int(r.get("n_pairs", w.sum()))
            s = float(np.sum(vals * w) / np.sum(w)) if covered and np.isfinite(vals).all() else math.nan
            if not math.isfinite(s):
                undefined.append(int(r["n_topics"]))
            r["swap_rate_mean"] = s
            r["kendall_tau_mean"] = 1.0 - 2.0 * s
    elif fit is not None and fit["extrapolates"]:
        for r, c in zip(rows, computed):
            if not c:
                s = _exp_value(fit, r["n_topics"])
                r["swap_rate_mean"] = s
                r["kendall_tau_mean"] = 1.0 - 2.0 * s
    if fit is not None:
        if not fit["extrapolates"] and not all(computed) and B == 0:
            rising.insert(0, "all pairs")
    else:
        fit = {"A": None, "B": None, "fit_topics": [int(v) for v in comp], "extrapolates": False}
        if not all(computed):
            warnings.warn("subsample: fewer than 2 simulated topic counts (<= T/2) with a positive "
                          "swap rate; counts above T/2 cannot be extrapolated", DegenerateDataWarning,
                          stacklevel=3)
    if unfit and fit.get("A") is not None:     # (without an overall fit its own warning says it)
        warnings.warn("subsample: fewer than 2 simulated topic counts with a positive swap rate in "
                      + ", ".join(unfit) + "; counts above T/2 are not extrapolated there",
                      DegenerateDataWarning, stacklevel=3)
    if rising:
        warnings.warn("subsample: the swap rate does not fall with n (fitted B <= 0) for "
                      + ", ".join(rising) + "; counts above T/2 are not extrapolated there (disjoint "
                      "halves of a finite collection order near-tied pairs oppositely)"
                      + (", nor over all pairs, whose rate is the pair-weighted mean of the bins"
                         if undefined else ""), DegenerateDataWarning, stacklevel=3)
    elif undefined and fit.get("A") is not None and not unfit:
        warnings.warn("subsample: the swap rate over all pairs above T/2 (the pair-weighted mean of "
                      "the bins) is not extrapolated at n = " + ", ".join(map(str, undefined)),
                      DegenerateDataWarning, stacklevel=3)
    fit["by_bin"] = by_bin
    fit["all_pairs"] = "pair-weighted mean of the bins" if B else "the fit above"
    return fit


# ------------------------------------------------------------------ scenario axes
#: target name -> (row key, direction): the target is met when row[key] <= value ("<=") or >= value
TARGETS = {
    "swap_rate": ("swap_rate_mean", "<="),
    "reversal_rate": ("reversal_rate_mean", "<="),
    "kendall_tau": ("kendall_tau_mean", ">="),
    "ci_width": ("ci_width_median", "<="),
    "ci_width_p90": ("ci_width_p90", "<="),
    "power": ("power_mean", ">="),
    "discriminative_power": ("discriminative_power", ">="),
    "erho2": ("erho2", ">="),
    "phi": ("phi", ">="),
}


def _check_target(target: str, value) -> tuple[str, str]:
    if target not in TARGETS:
        raise ParameterError(f"unknown target {target!r}; expected one of " + ", ".join(TARGETS),
                             parameter="target")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ParameterError(f"expected a number, got {value!r}", parameter="value")
    return TARGETS[target]


def topics_needed(curve: Curve, *, target: str = "swap_rate", value: float = 0.05) -> int | None:
    """Smallest topic count of ``curve`` whose row meets the target (``None`` if none does).

    Only the counts in the curve are candidates (no interpolation); extrapolated
    rows (subsample) count only for ``swap_rate`` and ``kendall_tau``.
    """
    key, op = _check_target(target, value)
    best = None
    for r in curve.rows:
        v = r.get(key)
        if v is None or not math.isfinite(v):
            continue
        if r.get("extrapolated") and target not in ("swap_rate", "kendall_tau"):
            continue
        ok = v <= value if op == "<=" else v >= value
        if ok and (best is None or r["n_topics"] < best):
            best = r["n_topics"]
    return best


def default_grid(n_collection_topics: int, method: str) -> tuple[int, ...]:
    """Topic counts used when a scenario call gets none: for the analytic methods
    5, 10, ..., 100, then steps of 20 to 300 and of 50 to 1000; for the random
    methods 12 evenly spaced counts from 5 to ``2 T``."""
    if method in CLOSED_FORM:
        return tuple(list(range(5, 101, 5)) + list(range(120, 301, 20)) + list(range(350, 1001, 50)))
    hi = max(6, 2 * n_collection_topics)
    if method == "subsample":
        hi = max(6, n_collection_topics // 2)
    return tuple(int(v) for v in np.unique(np.linspace(5, hi, 12).astype(int)))


@dataclass(frozen=True)
class ScenarioTable:
    """Topics each scenario needs for one target (see :func:`compare_measures`, :func:`scenarios`).

    Attributes:
        target, value: the target (``TARGETS`` key) and its threshold.
        method: the prediction method.
        rows: one dict per scenario: ``scenario``, ``measure``, ``strata``,
            ``filter`` (thresholds or ``None``), ``removed_topics``,
            ``n_collection_topics``, ``topics_needed`` (``None`` when no count of
            the grid meets the target), ``value_at_needed`` and ``note``.
        curves: scenario name -> :class:`Curve` (each drew from a stream of the seed keyed
            on its name, so its own ``seed`` is ``None``).
        seed: the integer seed given, or drawn when ``rng=None`` and the method is
            random (``rng=seed`` repeats the table); ``None`` for a Generator or a
            closed-form method given no seed.
    """

    target: str
    value: float
    method: str
    rows: tuple[dict, ...]
    curves: dict
    seed: int | None = None

    def to_dict(self) -> dict:
        return {"target": self.target, "value": float(self.value), "method": self.method,
                "seed": self.seed, "rows": [_plain(r) for r in self.rows],
                "curves": {k: c.to_dict() for k, c in self.curves.items()}}

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame([dict(r) for r in self.rows])


def _scenario_row(name, curve, *, target, value, measure, strata, filt, removed, T):
    need = topics_needed(curve, target=target, value=value)
    key = TARGETS[target][0]
    at = None if need is None else curve.row(need)[key]
    note = ""
    if filt is not None:
        note = "filtered mean: not comparable with the unfiltered one"
    if need is None:
        note = (note + "; " if note else "") + f"no count up to {max(curve.topics)} meets the target"
    return {"scenario": name, "measure": measure, "strata": strata, "filter": filt,
            "removed_topics": list(removed), "n_removed": len(removed), "n_collection_topics": T,
            "topics_needed": need, "value_at_needed": at, "note": note}


def _predict_options(options: Mapping, caller: str, own: Sequence[str]) -> None:
    """The ``**options`` a scenario function passes on must be :func:`predict`'s, and not
    one the function sets itself (``own``)."""
    import inspect

    known = [p for p in inspect.signature(predict).parameters if p != "scores"]
    for k in options:
        if k in own:
            raise ParameterError(f"{caller}() sets {k!r} itself for every scenario", parameter=k)
        if k not in known:
            passed = ", ".join(p for p in known if p not in own)
            raise ParameterError(f"unknown option of {caller}() (it passes these on to predict(): "
                                 f"{passed})", parameter=k)


def compare_measures(scores_by_measure: Mapping[str, ScoreMatrix], *, target: str = "swap_rate",
                     value: float = 0.05, topics: Sequence[int] | None = None,
                     method: str = "analytic", rng=None, **options) -> ScenarioTable:
    """The topics each measure needs for the same target (same systems, several measures).

    ``scores_by_measure`` maps a measure name to its scores (anything :func:`predict`
    accepts); every matrix must hold the same systems. ``topics`` defaults to
    :func:`default_grid`; ``options`` go to :func:`predict` (an option it does not take
    is a :class:`ParameterError` naming it). Each measure gets its own random stream,
    keyed on its name, so its numbers do not depend on the other measures listed or their
    order; the table records the seed
    (:attr:`ScenarioTable.seed`, drawn when ``rng=None`` and the method is random).
    """
    _check_target(target, value)
    _predict_options(options, "compare_measures", ("topics", "method", "rng", "keep_pairs"))
    if not isinstance(scores_by_measure, Mapping) or len(scores_by_measure) < 1:
        raise ParameterError("expected a mapping measure -> ScoreMatrix", parameter="scores_by_measure")
    mats = {str(k): _matrix(v, "scores_by_measure") for k, v in scores_by_measure.items()}
    first = next(iter(mats.values()))
    for k, v in mats.items():
        if set(v.systems) != set(first.systems):
            raise ParameterError(f"measure {k!r} holds other systems than the first measure",
                                 parameter="scores_by_measure")
    _check_method(method)
    rng = _seed_to_use(rng, method)
    base = as_generator(rng).spawn(1)[0]
    rows, curves = [], {}
    for name, mat in mats.items():
        g = keyed_stream(base, name)       # a measure's numbers do not depend on the others listed
        grid = _topics_list(topics) if topics is not None else default_grid(mat.n_topics, method)
        c = predict(mat, topics=grid, method=method, rng=g, keep_pairs=False, **options)
        curves[name] = c
        rows.append(_scenario_row(name, c, target=target, value=value, measure=name, strata=c.strata,
                                  filt=None, removed=(), T=mat.n_topics))
    return ScenarioTable(target=target, value=float(value), method=method, rows=tuple(rows), curves=curves,
                         seed=seed_of(rng))


def scenarios(scores, *, target: str = "swap_rate", value: float = 0.05,
              topics: Sequence[int] | None = None, method: str = "bootstrap",
              strata: Sequence[str] = ("uniform", "proportional", "optimal"),
              filters: Sequence[Mapping | None] = (None,), costs: Mapping[str, float] | None = None,
              rng=None, **options) -> ScenarioTable:
    """One call over the scenario axes: stratum modes x informative-topic filters.

    ``strata``: modes of :func:`predict` (the stratified ones need strata on the
    topics; ``"uniform"`` is always possible). ``filters``: ``None`` (no filter)
    or dicts of :func:`filter_informative` thresholds (``lo``, ``hi``,
    ``min_spread``); each row lists the removed topics. ``costs`` go to the
    ``"optimal"`` scenarios only (and are an error when there is none). ``options``
    go to :func:`predict`, as in :func:`compare_measures`. Each scenario draws from a
    stream keyed on its name (:func:`planner._random.keyed_stream`), so its numbers do not
    depend on the other scenarios listed; the table records the seed, as in
    :func:`compare_measures`.
    """
    _check_target(target, value)
    _predict_options(options, "scenarios", ("topics", "method", "rng", "keep_pairs", "strata", "costs"))
    _check_method(method)
    m = _matrix(scores)
    strata = (strata,) if isinstance(strata, str) else tuple(strata)
    if costs is not None and "optimal" not in strata:
        raise ParameterError("costs apply only to strata='optimal', which is not among the scenarios' "
                             f"strata {strata!r}", parameter="costs")
    filters = tuple(filters)
    for f in filters:
        if f is not None and not isinstance(f, Mapping):
            raise ParameterError("each filter is None or a dict of lo/hi/min_spread", parameter="filters")
        if f is not None and set(f) - {"lo", "hi", "min_spread"}:
            raise ParameterError(f"unknown filter key(s) {sorted(set(f) - {'lo', 'hi', 'min_spread'})}",
                                 parameter="filters")
    rng = _seed_to_use(rng, method)
    base = as_generator(rng).spawn(1)[0]
    rows, curves = [], {}
    for f in filters:
        if f is None:
            mat, removed = m, ()
        else:
            mat, removed = filter_informative(m, **f)
        for mode in strata:
            fname = "off" if f is None else ",".join(f"{k}={f[k]:g}" for k in sorted(f))
            name = f"strata={mode}; filter={fname}"
            grid = _topics_list(topics) if topics is not None else default_grid(mat.n_topics, method)
            # a stream keyed on the scenario's name: its numbers do not depend on the others listed
            c = predict(mat, topics=grid, method=method, strata=mode, costs=costs if mode == "optimal" else None,
                        rng=keyed_stream(base, name), keep_pairs=False, **options)
            curves[name] = c
            rows.append(_scenario_row(name, c, target=target, value=value, measure=mat.measure,
                                      strata=mode, filt=None if f is None else dict(f), removed=removed,
                                      T=mat.n_topics))
    return ScenarioTable(target=target, value=float(value), method=method, rows=tuple(rows), curves=curves,
                         seed=seed_of(rng))


def validate(scores, **options):
    """Pilot validation: :func:`planner.pilot.validate` (re-exported as ``planner.validate``)."""
    from .pilot import validate as _validate

    return _validate(scores, **options)
