"""The public entry of the simulator: :func:`predict`.

The checks (:func:`predict_iv`) return clean values; :func:`predict` then builds the
:class:`~planner.simulate.engine.Setup`, picks the engine of the method's
:attr:`planner.methods.Method.engine`, runs it over the chunks of the memory plan and
summarises (see the package docstring for the statistics, the memory bound and the
random streams).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.random import SeedSequence

from .._checks import check_min_diff
from .._random import as_generator, draw_seed, keyed_stream, seed_of
from ..errors import DegenerateDataWarning, IdenticalPairsWarning, ParameterError
from ..methods import DEFAULT_METHOD, Engine, Method
from ..progress import Progress, bar
from ..scores import ScoreMatrix
from ..variance import check_alpha, decimal_grid, exact_dbar, pair_index, parse_selector
from ..variance.pairs import check_pair_memory
from .analytic import AnalyticEngine
from .checks import MAX_RESAMPLES, check_method, complete_matrix, seed_to_use, topic_counts
from .curve import DEFAULT_BINS, Curve
from .engine import PairEngine, Setup, pairs_per_chunk
from .extrapolation import extrapolate
from .kernels import BLOCK
from .pairs import components, pair_moments
from .parametric import ParametricEngine
from .prediction import DEFAULT_RESAMPLES, PredictionBand, band_reason, band_work, check_level, prediction_band
from .predictive import PredictiveEngine
from .priors import Prior
from .resampling import ResamplingEngine
from .strata import allocation, strata_plan
from .summary import PairSums, bin_rows, prediction_columns, rows
from .work import Shape, Work, check_work

__all__ = ["ENGINES", "Options", "fit_model", "predict", "predict_iv", "predict_until"]

#: memory a call's per-chunk work may hold (``max_memory`` of :func:`predict`)
DEFAULT_MAX_MEMORY = 256 * 2 ** 20

#: the engine class of each kind of method (:class:`planner.methods.Engine`)
ENGINES: dict[Engine, type[PairEngine]] = {
    Engine.ANALYTIC: AnalyticEngine,
    Engine.PREDICTIVE: PredictiveEngine,
    Engine.RESAMPLING: ResamplingEngine,
    Engine.PARAMETRIC: ParametricEngine,
}


@dataclass(frozen=True)
class Options:
    """The checked arguments of :func:`predict` (:func:`predict_iv`)."""

    matrix: ScoreMatrix
    topics: tuple[int, ...]
    method: Method
    rng: int | np.random.Generator
    variance: str
    min_diff: float
    alpha: float
    resamples: int
    strata: str
    costs: Mapping[str, float] | None
    edges: np.ndarray
    keep_pairs: bool
    chunk_pairs: int | None
    max_memory: int
    t_tests: bool
    model: Prior | None = None
    prediction: float | None = None
    prediction_resamples: int = DEFAULT_RESAMPLES


def _check_prediction(level, resamples, method: Method, variance: str, strata: str) -> float | None:
    """The prediction level (None: no prediction interval), after the checks."""
    if level is None:
        return None
    level = check_level(level)
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) \
            or not 2 <= resamples <= MAX_RESAMPLES:
        raise ParameterError(f"must be an integer from 2 to {MAX_RESAMPLES:,}, got {resamples!r}",
                             parameter="prediction_resamples")
    why = band_reason(method, variance, strata)
    if why is not None:
        raise ParameterError(f"no prediction interval: {why}", parameter="prediction")
    return level


def _check_numbers(min_diff, alpha, n_resamples) -> int:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not math.isfinite(alpha):
        raise ParameterError(f"expected a number, got {alpha!r}", parameter="alpha")
    check_alpha(alpha)
    check_min_diff(min_diff)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 2:
        raise ParameterError(f"must be an integer >= 2, got {n_resamples!r}", parameter="n_resamples")
    if n_resamples > MAX_RESAMPLES:
        raise ParameterError(f"must be at most {MAX_RESAMPLES:,}, got {n_resamples}", parameter="n_resamples")
    return int(n_resamples)


def _check_work(t_tests, chunk_pairs, bins) -> np.ndarray:
    if not isinstance(t_tests, (bool, np.bool_)):
        raise ParameterError(f"expected True or False, got {t_tests!r}", parameter="t_tests")
    if chunk_pairs is not None and (not isinstance(chunk_pairs, (int, np.integer)) or chunk_pairs < 1):
        raise ParameterError(f"must be a positive integer, got {chunk_pairs!r}", parameter="chunk_pairs")
    edges = np.asarray(bins, dtype=float)
    if edges.ndim != 1 or edges.size < 2 or np.any(np.diff(edges) <= 0):
        raise ParameterError("bin edges must be an increasing list of at least 2 numbers", parameter="bins")
    return edges


def _check_variance(method: Method, variance: str | None) -> str:
    """The variance selector a method uses (its default when ``variance`` is None)."""
    if method.closed_form:
        variance = method.default_variance if variance is None else variance
        parse_selector(variance, parameter="variance")
        if method.engine is Engine.PREDICTIVE and variance != "pair":
            raise ParameterError(f"method {method.name!r} computes its other statistics with each pair's own "
                                 "variance (variance='pair'); its swap and reversal rates use the "
                                 "variance its name says", parameter="variance")
        return variance
    expect = method.default_variance
    if variance not in (None, expect):
        source = "components" if method.engine is Engine.PARAMETRIC else "data"
        raise ParameterError(f"method {method.name!r} takes its variance from the {source} ({expect!r}); "
                             f"got {variance!r}", parameter="variance")
    return expect


def predict_iv(scores, *, topics, method, variance, min_diff, alpha, n_resamples, strata, costs, rng, bins,
               keep_pairs, chunk_pairs, max_memory, t_tests, model=None, prediction=None,
               prediction_resamples=DEFAULT_RESAMPLES) -> Options:
    """Check :func:`predict`'s arguments (in its order of errors) and return them clean.

    ``rng`` None becomes a drawn seed for a random method, or when a prediction interval is
    asked for (recorded in the curve).
    """
    m = complete_matrix(scores)
    ns = topic_counts(topics)
    meth = check_method(method)
    rng = seed_to_use(rng, meth)   # None: a drawn seed, recorded in Curve.seed
    resamples = _check_numbers(min_diff, alpha, n_resamples)
    edges = _check_work(t_tests, chunk_pairs, bins)
    variance = _check_variance(meth, variance)
    if not meth.strata and strata != "uniform":
        raise ParameterError(f"method {meth.name!r} supports only strata='uniform'", parameter="strata")
    if model is not None and (meth.spec is None or not isinstance(model, Prior) or model.kind != meth.spec.prior):
        raise ParameterError(f"expected the fitted prior of method {meth.name!r} (planner.simulate.fit_model), "
                             f"got {type(model).__name__}", parameter="model")
    pairs = m.n_systems * (m.n_systems - 1) // 2
    if model is not None and model.close is not None and model.close.size != pairs:
        raise ParameterError(f"the model was fitted apart on the close pairs of {model.close.size} pairs, but these "
                             f"scores have {pairs}: fit it on the same scores (planner.simulate.fit_model)",
                             parameter="model")
    level = _check_prediction(prediction, prediction_resamples, meth, variance, strata)
    if level is not None and rng is None:
        rng = draw_seed()       # recorded in Curve.seed, so that the interval can be repeated
    o = Options(m, ns, meth, rng, variance, min_diff, alpha, resamples, strata, costs, edges,
                keep_pairs, chunk_pairs, max_memory, t_tests, model, level, int(prediction_resamples))
    _check_cost(o)
    return o


def estimate_work(o: Options, counts: Sequence[int], resamples: int) -> Work:
    """The work and memory :func:`predict` with ``o`` will take at ``counts`` with ``resamples``
    (the method's, or the prediction band's for a closed form), before it starts: the engine's
    (:meth:`PairEngine.work`), the per-pair results kept (``8 P N (k + 1) + 64 P`` bytes, the
    package docstring's "Memory") and the prediction band's (:func:`band_work`)."""
    m = o.matrix
    K = len(m.stratum_labels()) if o.strata != "uniform" and m.strata is not None else 1
    band = o.prediction is not None
    shape = Shape(m.n_systems, m.n_topics, tuple(counts), resamples, K,
                  bool(o.t_tests), int(o.max_memory), o.method.disjoint)
    P = shape.pairs
    kept = Work(0.0, 8 * P * len(counts) * ((5 if o.keep_pairs else 1) + 1) + 64 * P)
    work = ENGINES[o.method.engine].work(shape) + kept
    return work + band_work(shape) if band else work


def _check_cost(o: Options) -> None:
    """Refuse, before anything is drawn, a call over the work limits (:mod:`planner.simulate.work`);
    the pair limit, which the pairs' statistics reach first, is named first."""
    check_pair_memory(o.matrix.n_systems, o.matrix)
    if o.prediction is not None:
        check_work(lambda c, r: estimate_work(o, c, r), o.topics, o.prediction_resamples,
                   what=f"{o.method.name} with its prediction band", parameter="prediction_resamples",
                   also="no prediction band")
        return
    check_work(lambda c, r: estimate_work(o, c, r), o.topics, o.resamples if o.method.random else None,
               what=o.method.name)


def _allocations(o: Options, x: np.ndarray, groups, W, labels) -> list[np.ndarray | None]:
    """Topics per stratum at each count; ``None`` for a subsample count above ``T / 2``."""
    maxima = [g.size // 2 for g in groups] if o.method.disjoint else None
    out: list[np.ndarray | None] = []
    for n in o.topics:
        if maxima is not None and n > sum(maxima):
            out.append(None)
        elif o.strata != "uniform":
            out.append(allocation(n, o.strata, groups, W, x, o.costs, labels, maximum=maxima))
        else:
            out.append(np.array([n]))
    return out


def _warn_degenerate(comps: dict, dbar: np.ndarray, s2: np.ndarray) -> None:
    # stacklevel 4: the caller of predict (through setup)
    if comps["var_s"] == 0:
        warnings.warn("variance component of systems is 0 (truncated): Erho2 and Phi are 0",
                      DegenerateDataWarning, stacklevel=4)
    idents = int(((dbar == 0) & (s2 == 0)).sum())
    if idents:
        warnings.warn(f"{idents} pair(s) of systems identical on every topic: each counts as a tie "
                      "(reversal and swap rate 0.5)", IdenticalPairsWarning, stacklevel=4)


def setup(o: Options) -> Setup:
    """The engines' view of the collection: strata, pairs, components, allocations, streams."""
    m = o.matrix
    x = m.topic_scores()
    S, T = x.shape
    labels, groups, W = strata_plan(m, o.strata, o.costs)
    a, b = pair_index(S)
    # the pair passes (differences in blocks) stay within max_memory as well
    pblock = max(T, min(2_000_000, int(o.max_memory) // 24))
    _, s2 = pair_moments(x, a, b, block=pblock)
    grid = decimal_grid(x, T)
    dbar = exact_dbar(x, a, b, grid=grid)
    if not (o.method.engine is Engine.RESAMPLING and len(groups) == 1 and x.flags.c_contiguous):
        grid = None  # (kept only for the engine that reads it: 8 S T bytes, instead of its copy of x)
    comps = components(m)
    _warn_degenerate(comps, dbar, s2)
    allocs = _allocations(o, x, groups, W, labels)
    # (the stubs type seed_seq as the ISeedSequence protocol; a Generator's is a SeedSequence)
    base = cast(SeedSequence, as_generator(o.rng).bit_generator.seed_seq).spawn(1)[0] if o.method.random else None
    return Setup(o.method, x, a, b, dbar, s2, labels, groups, W, o.topics, allocs, variance=o.variance,
                 alpha=o.alpha, min_diff=o.min_diff, resamples=o.resamples, t_tests=bool(o.t_tests),
                 components=comps, pair_block=pblock, base=base, prior=o.model, grid=grid)


#: :func:`predict_until` cuts the pairs into at least this many chunks (when no ``chunk_pairs`` is
#: given), so that a target far out of reach is seen after a small share of them: 2,219 systems at
#: 2,048 topics (deconvolved), a swap rate of 0.0126 against a target of 0.0001 seen in 0.9 s of
#: CPU instead of 3.9 s, and the whole call no slower (8.3 s in 17 chunks, 8.7 s in 3)
UNTIL_CHUNKS = 16


def chunk_size(engine: PairEngine, s: Setup, chunk_pairs: int | None, max_memory: int) -> int:
    """Pairs per chunk: ``chunk_pairs``, or the most within ``max_memory``; a multiple of
    :data:`~planner.simulate.kernels.BLOCK` either way."""
    if chunk_pairs is not None:
        return -(-int(chunk_pairs) // BLOCK) * BLOCK
    return pairs_per_chunk(*engine.memory(s), max_memory)


def _curve(o: Options, s: Setup, sums: PairSums, engine: PairEngine) -> Curve:
    computed = [nk is not None for nk in s.allocs]
    stratified = o.strata != "uniform"
    allocs = [{lab: int(c) for lab, c in zip(s.labels, nk)} if stratified and nk is not None else None
              for nk in s.allocs]
    row_list = rows(sums, s.topics, computed, s.components, allocs)
    band = _band(o, s, row_list)
    if band is not None:
        prediction_columns(row_list, band)
    bin_list = bin_rows(sums, s.topics, computed)
    extrap = extrapolate(s.topics, computed, row_list, bin_list, sums.n_bins) if o.method.disjoint else None
    return Curve(method=o.method.name, variance=o.variance, seed=seed_of(o.rng), topics=s.topics,
                 rows=tuple(row_list), bins=tuple(bin_list),
                 per_pair={k: v.T for k, v in sums.pairs.items()} if o.keep_pairs else None,
                 pair_a=s.a, pair_b=s.b, dbar=s.dbar, s2_d=s.s2, systems=o.matrix.systems,
                 measure=o.matrix.measure, n_collection_topics=s.x.shape[1], min_diff=float(o.min_diff),
                 alpha=float(o.alpha), resamples=o.resamples if o.method.random else None, strata=o.strata,
                 weights=dict(zip(s.labels, s.weights.tolist())) if stratified else None,
                 extrapolation=extrap, components=s.components, prior=engine.prior_info, prediction=band)


def _band(o: Options, s: Setup, row_list: list[dict]) -> PredictionBand | None:
    """The prediction intervals asked for (``o.prediction``), around the rows' mean rates."""
    if o.prediction is None:
        return None
    point = {k: np.array([r[f"{k}_mean"] for r in row_list]) for k in ("swap_rate", "reversal_rate")}
    return prediction_band(s.x, s.topics, method=o.method, level=o.prediction, resamples=o.prediction_resamples,
                           rng=keyed_stream(o.rng, "prediction"), point=point)


def fit_model(scores, *, method: str = DEFAULT_METHOD) -> Prior | None:
    """The model ``method`` fits on ``scores`` before it predicts: a predictive method's prior.

    Pass it to :func:`predict` (``model=``) to predict other topic counts of the same scores
    without refitting it; the numbers are the same as without it. ``None`` for a method that
    fits nothing.

    Parameters
    ----------
    scores : ScoreMatrix, path, DataFrame or array
        As for :func:`predict`.
    method : str, optional
        A method of :data:`planner.methods.METHODS`.

    Returns
    -------
    Prior or None

    Examples
    --------
    >>> import planner
    >>> from planner.simulate import fit_model, predict
    >>> m = planner.datasets.load("dl19-passage", measure="nDCG@10")
    >>> prior = fit_model(m)
    >>> a = predict(m, topics=[50], model=prior).rows[0]["swap_rate_mean"]
    >>> bool(a == predict(m, topics=[50]).rows[0]["swap_rate_mean"])
    True
    """
    meth = check_method(method)
    if meth.spec is None:
        return None
    o = predict_iv(scores, topics=[2], method=method, variance=None, min_diff=0.05, alpha=0.05,
                   n_resamples=2, strata="uniform", costs=None, rng=None, bins=DEFAULT_BINS, keep_pairs=False,
                   chunk_pairs=None, max_memory=DEFAULT_MAX_MEMORY, t_tests=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)     # predict warns when it runs
        return cast(PredictiveEngine, ENGINES[meth.engine].prepare(setup(o))).prior


def predict(scores, *, topics, method: str = DEFAULT_METHOD, variance: str | None = None,
            min_diff: float = 0.05, alpha: float = 0.05, n_resamples: int = 1000,
            strata: str = "uniform", costs: Mapping[str, float] | None = None, rng=None,
            bins: Sequence[float] = DEFAULT_BINS, keep_pairs: bool = True,
            chunk_pairs: int | None = None, max_memory: int = DEFAULT_MAX_MEMORY,
            t_tests: bool = True, model: Prior | None = None, progress: Progress = False,
            prediction: float | None = None, prediction_resamples: int = DEFAULT_RESAMPLES) -> Curve:
    """Curves of reversal, swap, Kendall tau, interval width, power, Erho2, Phi vs ``n``.

    Parameters
    ----------
    scores : ScoreMatrix, path, DataFrame or array
        As for :func:`planner.fit` (one orientation rule,
        :data:`planner.collection.load.ORIENTATION`); at least 2 systems and 2 topics, no missing cells.
    topics : int or sequence of int
        Topic counts ``n`` (integers >= 2).
    method : str, optional
        A method of :data:`planner.methods.METHODS`: ``"deconvolved"`` (default), ``"predictive"``,
        ``"analytic"``, ``"bootstrap"``, ``"subsample"``, ``"parametric"`` or a predictive
        variant (package docstring).
    variance : str, optional
        For ``analytic``: ``"pair"`` (default), ``"pooled"``, ``"within-system"`` or
        ``"percentile:q"``. The resampling methods use the data (``"empirical"``), the
        parametric one the components (``"pooled"``), and reject any other value.
    min_diff : float, optional
        True difference at which the power is computed.
    alpha : float, optional
        Test level; intervals are ``1 - alpha``.
    n_resamples : int, optional
        ``R`` for the random methods.
    strata : str, optional
        ``"uniform"``, ``"stratified"`` (= ``"proportional"``) or ``"optimal"``.
    costs : mapping, optional
        Stratum -> cost per topic, only with ``strata="optimal"`` (a stratum not named
        costs 1; an unknown stratum is an error).
    rng : int, Generator or None, optional
        With ``None`` a random method draws a fresh integer seed and records it in
        :attr:`Curve.seed`, so ``rng=curve.seed`` repeats the curve; a Generator's stream
        cannot be recorded (``seed`` is then ``None``).
    bins : sequence of float, optional
        Edges of the ``|dbar|`` bins.
    keep_pairs : bool, optional
        Keep per-pair arrays in :attr:`Curve.per_pair`.
    chunk_pairs : int, optional
        Pairs per chunk (default: from ``max_memory``; package docstring, "Memory").
    max_memory : int, optional
        Bytes the working arrays may take.
    t_tests : bool, optional
        ``bootstrap``/``subsample``: run the paired t-test in every resample (power and
        discriminative power); ``False`` skips them (those columns become NaN).
    model : Prior, optional
        A predictive method's prior fitted earlier on the same scores (:func:`fit_model`), so
        that a caller predicting one count at a time fits it once; default: fit it here.
    progress : bool, "auto" or Share, optional
        A bar of the chunks computed (:mod:`planner.progress`); default none. The numbers
        are the same with or without it.
    prediction : float, optional
        A level (e.g. 0.9): add the prediction intervals of the swap rate, reversal rate and
        Kendall tau that new ``n``-topic sets will show (:attr:`Curve.prediction` and the rows'
        ``*_pred_low`` / ``*_pred_high``; :mod:`planner.simulate.prediction`). The closed-form
        methods only (``analytic`` with ``variance="pair"``, the predictive methods), uniform
        strata. It draws random numbers: ``rng`` (a seed is drawn and recorded when None).
    prediction_resamples : int, optional
        The bootstrap resamples behind the prediction intervals.

    Returns
    -------
    Curve
        One row per topic count, summaries by ``|dbar|`` bin and, with ``keep_pairs``,
        every pair's statistics.

    Raises
    ------
    ParameterError
        Bad options, named (e.g. stratified counts need at least 2 topics per stratum).

    Examples
    --------
    >>> import planner
    >>> scores = planner.datasets.load("dl19-passage", measure="nDCG@10")
    >>> curve = planner.predict(scores, topics=[25, 50], method="bootstrap", n_resamples=200, rng=1)
    >>> [r["n_topics"] for r in curve.rows], curve.seed
    ([25, 50], 1)
    >>> bool(curve.row(50)["swap_rate_mean"] < curve.row(25)["swap_rate_mean"])
    True
    """
    o = predict_iv(scores, topics=topics, method=method, variance=variance, min_diff=min_diff, alpha=alpha,
                   n_resamples=n_resamples, strata=strata, costs=costs, rng=rng, bins=bins,
                   keep_pairs=keep_pairs, chunk_pairs=chunk_pairs, max_memory=max_memory, t_tests=t_tests,
                   model=model, prediction=prediction, prediction_resamples=prediction_resamples)
    return cast(Curve, _simulate(o, progress))


def _simulate(o: Options, progress: Progress = False, statistic: str | None = None,
              decided: Callable[[float, float], bool] | None = None) -> Curve | tuple[float, float]:
    """The curve of ``o``, or the range of the first count's ``statistic`` once ``decided`` by it
    (:func:`predict_until`)."""
    s = setup(o)
    engine = ENGINES[o.method.engine].prepare(s)
    chunk = chunk_size(engine, s, o.chunk_pairs, o.max_memory)
    if decided is not None and o.chunk_pairs is None:       # (the sums do not depend on the chunks)
        chunk = min(chunk, chunk_size(engine, s, -(-s.n_pairs // UNTIL_CHUNKS), o.max_memory))
    sums = PairSums(s.dbar, topics=s.topics, edges=o.edges, keep_pairs=o.keep_pairs)
    pieces = list(engine.pieces(chunk))
    done = 0
    with engine.context(), bar(progress, len(pieces), f"predict ({o.method.name})", unit="chunk") as tick:
        for j, pairs in pieces:
            sums.add(pairs, j, engine.chunk(j, pairs))
            tick()
            if statistic is not None and decided is not None and j == 0:
                done += pairs.stop - pairs.start
                span = sums.stat_range(statistic, 0, done)
                if decided(*span):
                    return span
    return _curve(o, s, sums, engine)


def predict_until(scores, *, n: int, statistic: str, decided: Callable[[float, float], bool], method: str,
                  min_diff: float, alpha: float, n_resamples: int, rng, model: Prior | None = None,
                  chunk_pairs: int | None = None) -> Curve | tuple[float, float]:
    """:func:`predict` at one count ``n`` (its other options at their defaults, no per-pair results
    kept), stopped after a chunk of pairs once ``decided(lo, hi)`` holds for the range ``[lo, hi]``
    its ``statistic`` ends in (a mean over pairs or the median width:
    :data:`planner.simulate.summary.PARTIAL_STATS`):
    then that range; else the curve, the same as :func:`predict`'s (``chunk_pairs`` as there; when
    not given, at most a :data:`UNTIL_CHUNKS`-th of the pairs a chunk). A
    search that needs to know only whether a target is out of reach at ``n`` learns it from the
    first chunks when it clearly is.

    Examples
    --------
    >>> import planner
    >>> m = planner.datasets.load("dl19-passage", measure="nDCG@10")
    >>> span = predict_until(m, n=10, statistic="swap_rate_mean", decided=lambda lo, hi: lo > 0.0001,
    ...                      method="analytic", min_diff=0.05, alpha=0.05, n_resamples=1000, rng=1)
    >>> bool(span[0] <= predict(m, topics=[10], method="analytic", rng=1).rows[0]["swap_rate_mean"] <= span[1])
    True
    """
    o = predict_iv(scores, topics=[int(n)], method=method, variance=None, min_diff=min_diff, alpha=alpha,
                   n_resamples=n_resamples, strata="uniform", costs=None, rng=rng, bins=DEFAULT_BINS,
                   keep_pairs=False, chunk_pairs=chunk_pairs, max_memory=DEFAULT_MAX_MEMORY, t_tests=True, model=model)
    return _simulate(o, False, statistic, decided)
