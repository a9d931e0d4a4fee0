"""Pilot validation: predictions made from a pilot of topics against what held-out topics do.

Each repeat splits the collection's topics into a pilot and the disjoint remainder; every
method predicts, from the pilot alone, the mean swap and reversal rates at each ``n``, and
the remainder measures them on random pairs of disjoint ``n``-topic sets
(:func:`observed_rates`); each closed-form method's prediction interval is checked against
the realised rate of every held-out set pair (:mod:`planner.simulate.prediction`). This
module sits above :mod:`planner.simulate`: it calls
:func:`planner.simulate.predict` for the random methods and the predictive model of
:mod:`planner.simulate.rates` for the closed-form ones; the simulator never imports it.
See ``docs/validation.md`` for the procedure and what it found.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ._random import child_streams, keyed_stream, seed_of, seed_to_use
from .errors import DegenerateDataWarning, ParameterError
from .methods import DEFAULT_METHOD, METHODS, Engine, Method, method_names
from .parallel import check_jobs, check_scheduler, run_tasks
from .progress import Progress, bar
from .results import ResultMixin
from .scores import ScoreMatrix
from .simulate import predict
from .simulate.predict import ENGINES
from .simulate.prediction import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    band_reason,
    band_work,
    check_level,
    prediction_band,
)
from .simulate.rates import STATISTICS, plugin_pair_rates, predictive_pair_rates, variance_df
from .simulate.work import Knob, Shape, Work, check_limits, fits
from .variance import as_matrix, pair_index, pair_moments
from .variance.pairs import pair_jobs

__all__ = ["MEDIAN_SE_RESAMPLES", "TIE_TOL", "Validation", "median_se", "observed_rates", "tie_sign",
           "validate", "validate_work"]

# bound on the number of float64 values of one working block (permutations x scores)
BLOCK = 2_000_000


#: mean differences with ``|d| <= TIE_TOL`` are ties (floating-point rounding of equal means)
TIE_TOL = 1e-12


def tie_sign(d: np.ndarray) -> np.ndarray:
    """``sign(d)``, with ``|d| <= TIE_TOL`` a tie (0)."""
    return np.where(np.abs(d) <= TIE_TOL, 0.0, np.sign(d))


def _disagree(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """1 when the signs are opposite, 0.5 when exactly one is zero (a tie counts half), else 0.

    Signs are taken with :data:`TIE_TOL`: ``|d| <= 1e-12`` counts as a tie.
    """
    return 0.5 * np.abs(tie_sign(u) - tie_sign(v))


def observed_rates(x: np.ndarray, topics: np.ndarray, ref_sign: np.ndarray, *, subsets: int,
                   rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Mean (over pairs) swap and reversal rates measured on held-out scores ``x`` (S x N).

    ``subsets`` random permutations of the N held-out topics are drawn; for each
    ``n`` the first ``n`` and the next ``n`` topics of a permutation are two
    disjoint topic sets. Swap: the two sets order the pair differently
    (``_disagree`` of their mean differences). Reversal: a set orders the pair
    differently from ``ref_sign`` (the pilot's sign), averaged over both sets.
    Returns arrays of shape ``(len(topics),)`` (means over pairs and subsets), and the
    realised rates of every set pair and set (means over pairs): ``swap_rate_sets``
    ``(subsets, len(topics))`` and ``reversal_rate_sets`` ``(2 subsets, len(topics))``, what a
    prediction interval (:mod:`planner.simulate.prediction`) is checked against.

    Memory: ``chunk * (S * N + 3 * pairs)`` float64 values with
    ``chunk = max(1, 2e6 // max(S * N, pairs))`` permutations per block.
    """
    S, N = x.shape
    a, b = pair_index(S)
    perms = np.argsort(rng.random((subsets, N)), axis=1)
    swap = np.zeros(topics.size)
    rev = np.zeros(topics.size)
    swap_sets = np.empty((subsets, topics.size))
    rev_sets = np.empty((subsets, 2, topics.size))
    chunk = max(1, BLOCK // max(S * N, a.size))
    for lo in range(0, subsets, chunk):
        pm = perms[lo:lo + chunk]
        xs = x[:, pm]  # S x k x N, topics in permutation order
        cs = np.cumsum(xs, axis=2)
        for j, n in enumerate(topics):
            m1 = cs[:, :, n - 1] / n
            m2 = (cs[:, :, 2 * n - 1] - cs[:, :, n - 1]) / n
            d1 = m1[a] - m1[b]
            d2 = m2[a] - m2[b]
            sw = _disagree(d1, d2)
            r1, r2 = _disagree(d1, ref_sign[:, None]), _disagree(d2, ref_sign[:, None])
            swap[j] += sw.sum()
            rev[j] += 0.5 * (r1.sum() + r2.sum())
            swap_sets[lo:lo + chunk, j] = sw.mean(axis=0)
            rev_sets[lo:lo + chunk, 0, j] = r1.mean(axis=0)
            rev_sets[lo:lo + chunk, 1, j] = r2.mean(axis=0)
    denom = float(subsets * a.size)
    return {"swap_rate": swap / denom, "reversal_rate": rev / denom,
            "swap_rate_sets": swap_sets, "reversal_rate_sets": rev_sets.reshape(2 * subsets, topics.size)}


def _predict_means(method: Method, dbar, s2, kurt, n0, topics, *, scores_pilot, rng,
                   prior_options: dict) -> dict[str, np.ndarray]:
    """Predicted mean (over pairs) swap and reversal rate at each n from a pilot."""
    if method.closed_form:
        spec = method.spec
        if spec is None:
            r = plugin_pair_rates(dbar, s2, topics)
        else:
            r = predictive_pair_rates(dbar, s2, n0, topics, prior=spec.prior, variance=spec.variance,
                                      df=variance_df(n0, kurt) if spec.integrate else None, **prior_options)
    else:
        curve = predict(scores_pilot, topics=[int(n) for n in topics], method=method.name, rng=rng)
        rows = sorted(curve.rows, key=lambda r: r["n_topics"])
        return {"swap_rate": np.array([float(r["swap_rate_mean"]) for r in rows]),
                "reversal_rate": np.array([float(r["reversal_rate_mean"]) for r in rows])}
    return {k: v.mean(axis=0) for k, v in r.items()}


#: bootstrap resamples (of the repeats) behind each median error's standard error
MEDIAN_SE_RESAMPLES = 1000


def median_se(x: np.ndarray, resamples: int = MEDIAN_SE_RESAMPLES) -> float:
    """Bootstrap standard error of the median of ``x`` (the relative errors over repeats).

    ``resamples`` resamples of the values with replacement, from a generator with the
    fixed seed 0, so the same errors always give the same standard error (and the
    validation's own random streams are not touched). NaN for fewer than 2 values.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.size < 2:
        return math.nan
    idx = np.random.default_rng(0).integers(0, x.size, size=(resamples, x.size))
    return float(np.std(np.median(x[idx], axis=1), ddof=1))


@dataclass(frozen=True, repr=False)
class Validation(ResultMixin):
    """Predictions from pilots against what held-out topics do (see :func:`validate`).

    Attributes:
        methods: the prediction methods compared.
        pilot: pilot size ``n0``.
        topics: the topic counts ``n``.
        repeats: number of random pilot / remainder splits.
        subsets: random disjoint subset pairs per ``n`` and repeat on the remainder.
        seed: the integer seed, if one was given.
        n_systems, n_topics: size of the collection.
        measure, source: of the scores.
        rows: one dict per (statistic, method, n): ``statistic``, ``method``,
            ``n_topics``, ``predicted_mean`` and ``observed_mean`` (means over
            repeats), ``rel_error_median``, ``rel_error_p90`` and
            ``rel_error_mean`` (of ``|pred - obs| / obs`` over repeats),
            ``rel_error_median_se`` (bootstrap standard error of that median, :func:`median_se`),
            ``rel_error_of_means`` (``|predicted_mean - observed_mean| / observed_mean``),
            and the decomposition of the error into bias and spread: ``ratio_median``
            (median over repeats of ``pred / obs``; minus 1 it is the typical bias) and
            ``log_ratio_sd`` (sd over repeats of ``log(pred / obs)``, ddof=1; with no
            bias the median relative error is about ``0.674 * log_ratio_sd``).
            With prediction intervals, also ``pred_coverage``: the share of held-out set
            pairs (swap) or sets (reversal), over all repeats, whose realised rate fell
            inside the method's prediction interval from the pilot, and
            ``pred_coverage_se``: its standard error over repeats (NaN for a method without
            prediction intervals).
        predicted: ``{statistic: {method: array (repeats, len(topics))}}``.
        observed: ``{statistic: array (repeats, len(topics))}``.
        prediction: the level of the prediction intervals checked (None: not checked).
        prediction_resamples: the bootstrap resamples behind each interval.
        coverage: ``{statistic: {method: array (repeats, len(topics))}}``, each repeat's share
            of held-out sets inside the interval (methods with prediction intervals only).
    """

    _repr_fields = ('methods', 'pilot', 'topics', 'repeats', 'seed', 'measure')

    methods: tuple[str, ...]
    pilot: int
    topics: tuple[int, ...]
    repeats: int
    subsets: int
    seed: int | None
    n_systems: int
    n_topics: int
    measure: str | None
    source: str | None
    rows: tuple[dict, ...]
    predicted: dict = field(repr=False)
    observed: dict = field(repr=False)
    prediction: float | None = None
    prediction_resamples: int = DEFAULT_RESAMPLES
    coverage: dict = field(default_factory=dict, repr=False)

    def rel_error(self, statistic: str = "swap_rate") -> dict[str, np.ndarray]:
        """``{method: |pred - obs| / obs}`` of shape ``(repeats, len(topics))``."""
        obs = self.observed[statistic]
        with np.errstate(divide="ignore", invalid="ignore"):
            return {m: np.abs(p - obs) / obs for m, p in self.predicted[statistic].items()}

    def recommend(self, statistic: str = "swap_rate") -> dict:
        """The method that predicted ``statistic`` best on this collection.

        Rule: the method whose median relative error is the lowest at every ``n``
        (``rule = "lowest at every n"``); when no method is, the one whose largest
        median error over the ``n`` is the lowest (``"lowest largest median
        error"``). ``clear`` is True when, at every ``n``, its median error is below
        every other method's by more than twice their combined bootstrap standard
        error ``sqrt(se1^2 + se2^2)`` (conservative: the methods are compared on the
        same splits); otherwise ``close`` lists the methods within that margin, or
        whose standard errors are unknown (one repeat).
        Every method named here is a :func:`planner.simulate.predict` method.

        Returns: ``{"statistic", "method", "rule", "clear", "close", "median_errors"}``
        (``median_errors``: ``{method: [error at each n]}``); ``method`` is None
        when no median error is finite.
        """
        if statistic not in STATISTICS:
            raise ParameterError(f"unknown statistic {statistic!r}; expected one of {', '.join(STATISTICS)}",
                                 parameter="statistic")
        rows = [r for r in self.rows if r["statistic"] == statistic]
        med = {m: np.array([r["rel_error_median"] for r in rows if r["method"] == m]) for m in self.methods}
        se = {m: np.array([r["rel_error_median_se"] for r in rows if r["method"] == m]) for m in self.methods}
        ok = [m for m in self.methods if np.all(np.isfinite(med[m]))]
        out: dict = {"statistic": statistic, "method": None, "rule": None, "clear": False, "close": [],
               "median_errors": {m: [float(v) for v in med[m]] for m in self.methods}}
        if not ok:
            return out
        every = [m for m in ok if all(np.all(med[m] <= med[o]) for o in ok)]
        if every:
            best, rule = every[0], "lowest at every n"
        else:
            best, rule = min(ok, key=lambda m: (float(np.max(med[m])), self.methods.index(m))), \
                "lowest largest median error"
        # an unknown standard error (fewer than 2 repeats) cannot separate two methods
        close = [o for o in ok if o != best
                 and np.any(~(med[o] - med[best] > 2.0 * np.sqrt(se[o] ** 2 + se[best] ** 2)))]
        out.update(method=best, rule=rule, clear=not close and len(ok) > 1, close=close)
        return out

    def to_dict(self) -> dict:
        return {
            "recommended": {k: self.recommend(k) for k in STATISTICS},
            "methods": list(self.methods), "pilot": int(self.pilot), "topics": [int(n) for n in self.topics],
            "repeats": int(self.repeats), "subsets": int(self.subsets), "seed": self.seed,
            "n_systems": int(self.n_systems), "n_topics": int(self.n_topics), "measure": self.measure,
            "source": self.source, "rows": [dict(r) for r in self.rows],
            "observed": {k: v.tolist() for k, v in self.observed.items()},
            "predicted": {k: {m: v.tolist() for m, v in d.items()} for k, d in self.predicted.items()},
            "prediction": self.prediction, "prediction_resamples": int(self.prediction_resamples),
            "coverage": {k: {m: v.tolist() for m, v in d.items()} for k, d in self.coverage.items()},
        }

    def to_frame(self):
        import pandas as pd  # heavy, and needed only here

        return pd.DataFrame(list(self.rows))


def _as_scores(scores) -> ScoreMatrix:
    """What :func:`planner.fit` and :func:`planner.predict` accept: a ScoreMatrix, a path, a wide
    DataFrame that names its rows or a systems x topics array (:func:`planner.collection.as_matrix`);
    anything else is a ParameterError."""
    if isinstance(scores, bytes):
        scores = scores.decode()
    return as_matrix(scores, "scores")


def _check_topics(topics, R: int) -> np.ndarray:
    """The topic counts: distinct integers >= 2, at most half of the ``R`` held-out topics."""
    t = np.atleast_1d(np.asarray(list(topics) if not np.isscalar(topics) else [topics]))
    if t.dtype == object and t.size and all(isinstance(v, int) and not isinstance(v, bool) and v >= 2
                                             for v in t.tolist()):
        # integers too large for int64: beyond any held-out half, said as such below
        raise ParameterError(f"topic count {max(t.tolist())} exceeds half of the {R} held-out topics "
                             f"({R // 2}): two disjoint sets must fit", parameter="topics")
    if t.size == 0 or not np.issubdtype(t.dtype, np.integer) or np.any(t < 2):
        raise ParameterError(f"topic counts must be integers >= 2 (as in predict), got {topics!r}",
                             parameter="topics")
    if np.unique(t).size != t.size:
        raise ParameterError(f"repeated topic count in {topics!r}", parameter="topics")
    if np.any(t > R // 2):
        raise ParameterError(f"topic count {int(t.max())} exceeds half of the {R} held-out topics "
                             f"({R // 2}): two disjoint sets must fit", parameter="topics")
    return t.astype(np.int64)


def _check_methods(methods) -> tuple[Method, ...]:
    if isinstance(methods, str):
        methods = (methods,)        # one method name, as score_runs takes one measure
    names = tuple(str(m) for m in methods)
    if not names:
        raise ParameterError("no methods given", parameter="methods")
    if len(set(names)) != len(names):
        raise ParameterError(f"repeated method in {names!r}", parameter="methods")
    # the closed forms computed here (predictive ones, then the plug-in), then the random ones
    known = method_names(lambda m: m.engine is Engine.PREDICTIVE) + method_names(lambda m: m.closed_form
                                                                                 and m.spec is None) \
        + method_names(lambda m: m.random)
    for m in names:
        if m not in known:
            raise ParameterError(f"unknown method {m!r}; expected one of {', '.join(known)}", parameter="methods")
    return tuple(METHODS[m] for m in names)


def _validate_iv(scores, pilot, topics, repeats, subsets, methods):
    """The checked arguments of :func:`validate`: ``(matrix, scores x, topics, methods)``."""
    sm = _as_scores(scores)
    if sm.has_missing:
        raise ParameterError("validation needs a complete score matrix (no missing cells)", parameter="scores")
    x = sm.topic_scores()
    T = x.shape[1]
    if isinstance(pilot, bool) or not isinstance(pilot, (int, np.integer)) or pilot < 2:
        raise ParameterError(f"pilot size must be an integer >= 2, got {pilot!r}", parameter="pilot")
    R = T - int(pilot)
    if R < 2:
        raise ParameterError(f"pilot of {pilot} leaves {max(R, 0)} of {T} topics to hold out; "
                             "need at least 2", parameter="pilot")
    t = _check_topics(topics, R)
    for name, v, most in (("repeats", repeats, 100_000), ("subsets", subsets, 100_000)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= most:
            raise ParameterError(f"{name} must be an integer from 1 to {most:,}, got {v!r}", parameter=name)
    return sm, x, t, _check_methods(methods)


#: the default ``repeats`` and ``subsets`` of :func:`validate` (the option furthest above its default
#: is the one a refusal over the work limits names first)
DEFAULT_REPEATS, DEFAULT_SUBSETS = 20, 500


def _held_out_work(S: int, N: int, counts: Sequence[int], subsets: int) -> Work:
    """One repeat's :func:`observed_rates` on ``N`` held-out topics: ``subsets (4 P c + S N / 2)``
    units (c counts; measured, docs/research/known-limits.md); held: the permutations and the
    realised rates, ``16 subsets N + 24 subsets c`` bytes, and a working block of about ten
    arrays of ``min(subsets, chunk) max(S N, P)`` float64 values."""
    P, c = S * (S - 1) // 2, len(counts)
    chunk = min(subsets, max(1, BLOCK // max(S * N, P)))
    return Work(subsets * (4.0 * P * c + S * N / 2.0),
                16 * subsets * N + 24 * subsets * c + 80 * chunk * max(S * N, P))


def validate_work(S: int, T: int, pilot: int, counts: Sequence[int], methods: Sequence[Method], *,
                  repeats: int, subsets: int, banded: int = 0, band_resamples: int = DEFAULT_RESAMPLES,
                  jobs: int = 1) -> Work:
    """The work and memory of :func:`validate` on ``S`` systems x ``T`` topics, estimated before it
    starts (the limits: :mod:`planner.simulate.work`).

    Each repeat: the held-out rates (:func:`_held_out_work`), each method's prediction from the
    pilot (its engine's :meth:`~planner.simulate.engine.PairEngine.work` on ``S x pilot``; a random
    method's :func:`planner.simulate.predict` call with its 1,000 resamples and kept results) and
    the prediction bands of the ``banded`` methods (:func:`planner.simulate.prediction.band_work`);
    ``jobs`` processes each hold one repeat. After the repeats: every repeat's tables (``16
    repeats c`` bytes per statistic and column) and each row's median standard error
    (:func:`median_se`: ``MEDIAN_SE_RESAMPLES x repeats`` draws, 2 units and 24 bytes each).
    """
    P, c = S * (S - 1) // 2, len(counts)
    one = _held_out_work(S, T - pilot, counts, subsets) + Work(float(P * pilot), 0)
    for m in methods:
        shape = Shape(S, pilot, tuple(counts), 1000 if m.random else 0, disjoint=m.disjoint)
        one += ENGINES[m.engine].work(shape) + Work(0, 56 * P * c + 64 * P if m.random else 0)
    band = band_work(Shape(S, pilot, tuple(counts), band_resamples))
    one += Work(banded * band.units, band.held)
    columns = 2 * (2 * len(methods) + banded + 1)
    rows = 2 * len(methods) * c
    return Work(repeats * one.units + 2.0 * rows * MEDIAN_SE_RESAMPLES * repeats,
                jobs * one.held + 16 * repeats * c * columns + 24 * MEDIAN_SE_RESAMPLES * repeats)


def _check_work(S: int, T: int, run: _Run, repeats: int, jobs: int) -> None:
    """Refuse, before any repeat, a validation over the work limits (:func:`validate_work`),
    naming ``repeats`` or ``subsets`` (the one furthest above its default first), ``topics``
    or ``--jobs 1``."""
    def estimate(counts: Sequence[int], v: tuple[int, ...], j: int = jobs) -> Work:
        return validate_work(S, T, run.pilot, counts, run.methods, repeats=v[0], subsets=v[1],
                             banded=len(run.banded()), band_resamples=run.prediction_resamples, jobs=j)

    knobs = [Knob("repeats", repeats, "{:,} repeats", "at most {:,} repeats"),
             Knob("subsets", run.subsets, "{:,} held-out subset pairs", "at most {:,} subset pairs")]
    if run.subsets / DEFAULT_SUBSETS > repeats / DEFAULT_REPEATS:
        knobs.reverse()
    values = (repeats, run.subsets)
    one = jobs > 1 and fits(estimate(run.topics.tolist(), values, 1))
    check_limits(lambda cs, v: estimate(cs, v if knobs[0].parameter == "repeats" else v[::-1]),
                 run.topics.tolist(), knobs, what="validate", also="--jobs 1" if one else None)


@dataclass
class _Run:
    """One validation's fixed inputs and its (repeats, topics) tables, filled repeat by repeat."""

    sm: ScoreMatrix
    x: np.ndarray
    pilot: int
    topics: np.ndarray
    methods: tuple[Method, ...]
    subsets: int
    grid: int
    predicted: dict = field(default_factory=dict)
    observed: dict = field(default_factory=dict)
    prediction: float | None = None
    prediction_resamples: int = DEFAULT_RESAMPLES
    coverage: dict = field(default_factory=dict)

    def banded(self) -> tuple[Method, ...]:
        """The methods whose prediction intervals are checked."""
        if self.prediction is None:
            return ()
        return tuple(m for m in self.methods if band_reason(m, "pair") is None)

    def repeat(self, g: np.random.Generator) -> tuple[dict, dict, dict]:
        """Split at random, measure the held-out rates, predict them from the pilot:
        ``(observed {statistic: (counts,)}, predicted {statistic: {method: (counts,)}},
        coverage {statistic: {method: (counts,)}})``."""
        S, T = self.x.shape
        a, b = pair_index(S)
        order = g.permutation(T)
        pi, hi = np.sort(order[:self.pilot]), np.sort(order[self.pilot:])
        g_obs, g_method = g.spawn(2)
        xp = self.x[:, pi]
        if any(m.spec is not None and m.spec.integrate for m in self.methods):
            dbar, s2, kurt = pair_moments(xp, a, b, kurtosis=True)
        else:
            (dbar, s2), kurt = pair_moments(xp, a, b), None
        o = observed_rates(self.x[:, hi], self.topics, tie_sign(dbar), subsets=self.subsets, rng=g_obs)
        pred: dict = {k: {} for k in STATISTICS}
        pilot_sm = None
        for m in self.methods:
            if m.random and pilot_sm is None:
                pilot_sm = self.sm.collapse_variants().take(topics=pi)
            p = _predict_means(m, dbar, s2, kurt, self.pilot, self.topics, scores_pilot=pilot_sm,
                               rng=keyed_stream(g_method, m.name) if m.random else None,
                               prior_options={"grid": self.grid, "system_var": xp.var(axis=1, ddof=1)})
            for k in STATISTICS:
                pred[k][m.name] = p[k]
        return {k: o[k] for k in STATISTICS}, pred, self._coverage(xp, o, pred, g_method)

    def _coverage(self, xp: np.ndarray, o: dict, pred: dict, g_method: np.random.Generator) -> dict:
        """Per statistic and banded method, the share of held-out sets inside its prediction
        interval from the pilot ``xp`` (a stream keyed on the method's name)."""
        cov: dict = {k: {} for k in STATISTICS}
        for m in self.banded():
            band = prediction_band(xp, self.topics, method=m, level=float(self.prediction or DEFAULT_LEVEL),
                                   resamples=self.prediction_resamples,
                                   rng=keyed_stream(g_method, f"prediction:{m.name}"),
                                   point={k: pred[k][m.name] for k in STATISTICS})
            for k in STATISTICS:
                lo, hi = band.ends(k)
                sets = o[f"{k}_sets"]
                cov[k][m.name] = ((sets >= lo) & (sets <= hi)).mean(axis=0)
        return cov


def _one_repeat(task: tuple[_Run, np.random.Generator]) -> tuple[dict, dict, dict]:
    """One repeat (a task of :func:`planner.parallel.run_tasks`)."""
    run, g = task
    return run.repeat(g)


def _coverage_columns(cov: np.ndarray | None) -> dict:
    """``pred_coverage`` (mean over repeats) and ``pred_coverage_se`` of one row (NaN without)."""
    if cov is None:
        return {"pred_coverage": math.nan, "pred_coverage_se": math.nan}
    se = float(np.std(cov, ddof=1) / math.sqrt(cov.size)) if cov.size > 1 else math.nan
    return {"pred_coverage": float(np.mean(cov)), "pred_coverage_se": se}


def _error_row(k: str, m: str, n: int, p: np.ndarray, o: np.ndarray, rel: np.ndarray, ratio: np.ndarray,
               ok: np.ndarray) -> dict:
    """The row of one statistic, method and count: its columns over repeats (``Validation.rows``)."""
    col = rel[np.isfinite(rel)]
    pm, om = float(p.mean()), float(o.mean())
    return {
        "statistic": k, "method": m, "n_topics": int(n),
        "predicted_mean": pm, "observed_mean": om,
        "rel_error_median": float(np.median(col)) if col.size else math.nan,
        "rel_error_median_se": median_se(col),
        "rel_error_p90": float(np.quantile(col, 0.9)) if col.size else math.nan,
        "rel_error_mean": float(np.mean(col)) if col.size else math.nan,
        "rel_error_of_means": abs(pm - om) / om if om > 0 else math.nan,
        "ratio_median": float(np.median(ratio[np.isfinite(ratio)])) if np.isfinite(ratio).any() else math.nan,
        "log_ratio_sd": float(np.std(np.log(ratio[ok]), ddof=1)) if ok.sum() > 1 else math.nan,
    }


def _rows(run: _Run) -> list[dict]:
    rows = []
    for k in STATISTICS:
        o = run.observed[k]
        zero = o <= 0
        if zero.any():
            warnings.warn(f"observed {k} is 0 in {int(zero.sum())} (repeat, n) cells; "
                          "their relative error is undefined and left out", DegenerateDataWarning, stacklevel=3)
        for m in run.methods:
            p = run.predicted[k][m.name]
            with np.errstate(divide="ignore", invalid="ignore"):
                rel = np.where(zero, np.nan, np.abs(p - o) / np.where(zero, 1.0, o))
                ratio = np.where(zero, np.nan, p / np.where(zero, 1.0, o))
                ok = np.isfinite(ratio) & (ratio > 0)
            cov = run.coverage.get(k, {}).get(m.name)
            for j, n in enumerate(run.topics):
                row = _error_row(k, m.name, n, p[:, j], o[:, j], rel[:, j], ratio[:, j], ok[:, j])
                if run.prediction is not None:
                    row.update(_coverage_columns(None if cov is None else cov[:, j]))
                rows.append(row)
    return rows


def validate(scores, *, pilot: int, topics: Sequence[int], repeats: int = DEFAULT_REPEATS, rng=None,
             methods: str | Sequence[str] = (DEFAULT_METHOD, "predictive", "analytic"),
             subsets: int = DEFAULT_SUBSETS,
             grid: int = 121, jobs: int = 1, scheduler=None, progress: Progress = False,
             prediction: float | None = DEFAULT_LEVEL, prediction_resamples: int = DEFAULT_RESAMPLES) -> Validation:
    """Check pilot-based predictions against disjoint held-out topic sets.

    Each repeat splits the ``T`` topics at random into a pilot of ``pilot``
    topics and the disjoint remainder of ``R = T - pilot`` topics. From the
    pilot alone every method predicts the mean (over all system pairs) swap
    rate and reversal rate at each ``n`` in ``topics``. On the remainder,
    :func:`observed_rates` measures them with ``subsets`` random pairs of
    disjoint ``n``-topic sets (so ``n <= R // 2``); the reversal is counted
    against the order the pilot showed. Relative error = ``|pred - obs| / obs``
    per repeat; rows report its median over repeats.

    Parameters
    ----------
    scores : ScoreMatrix, path, DataFrame or array
        A complete score matrix (what :func:`planner.fit` accepts).
    pilot : int
        Pilot size ``n0`` (at least 2, leaving at least 2 topics held out).
    topics : sequence of int
        Topic counts ``n``, each at most half of the held-out topics.
    repeats : int, optional
        Random pilot / remainder splits.
    rng : int, Generator or None, optional
        Repeat ``r`` uses the ``r``-th child stream for its split, its held-out subsets
        and any resampling method (each method a stream keyed on its name), so results do
        not depend on how many repeats are run together, nor a method's numbers on which
        other methods are listed. ``None`` draws a seed and records it (``seed``).
    methods : str or sequence of str, optional
        The predictive methods of :data:`planner.methods.METHODS` (computed here with
        :func:`planner.simulate.rates.predictive_pair_rates`; ``"predictive-integrated"``
        averages over each pair's variance with ``df = variance_df(pilot, kurtosis of the
        pilot's differences)``), ``"analytic"`` (the plug-in normal model with each pair's
        own variance), or a random method, passed to
        ``planner.simulate.predict(pilot_scores, topics=..., method=name, rng=...)``.
        Default: :data:`planner.methods.DEFAULT_METHOD`, ``"predictive"`` and ``"analytic"``.
    subsets : int, optional
        Random disjoint subset pairs per ``n`` and repeat on the remainder.
    grid : int, optional
        Grid points of the ``npmle`` prior.
    jobs : int, optional
        Repeats run in ``jobs`` local processes; fewer, with a warning, when their pair
        statistics do not fit in :data:`planner.variance.pairs.MAX_PAIR_MEMORY` together
        (:func:`planner.variance.pairs.pair_jobs`).
    scheduler : str or distributed.Client, optional
        Repeats run on this Dask cluster instead (:mod:`planner.parallel`). The results are
        the same however the repeats run.
    progress : bool, "auto" or Share, optional
        A bar of the repeats done (:mod:`planner.progress`); default none.
    prediction : float or None, optional
        Level of the prediction intervals checked (default 0.9; None: none). Every
        closed-form method (``analytic``, the predictive ones) gives, from the pilot, the
        interval of the swap and reversal rate that new ``n``-topic sets will show
        (:mod:`planner.simulate.prediction`); the rows' ``pred_coverage`` is the share of
        held-out set pairs (swap) and sets (reversal) whose realised rate fell inside it. Its
        random stream is keyed on the method's name: the other numbers do not change with it.
    prediction_resamples : int, optional
        The bootstrap resamples behind each interval.

    Returns
    -------
    Validation
        Predicted and observed rates per repeat, and the error rows.

    Notes
    -----
    Memory: about ``2e6`` float64 working values plus ``S * T`` and
    ``subsets * R`` index values; see :func:`observed_rates`.

    Examples
    --------
    >>> import planner
    >>> scores = planner.datasets.load("dl19-passage", measure="nDCG@10")
    >>> v = planner.validate(scores, pilot=20, topics=[5, 10], repeats=2, subsets=50, rng=1)
    >>> v.methods, v.topics
    (('deconvolved', 'predictive', 'analytic'), (5, 10))
    >>> sorted({r["statistic"] for r in v.rows})
    ['reversal_rate', 'swap_rate']
    """
    sm, x, t, meths = _validate_iv(scores, pilot, topics, repeats, subsets, methods)
    level = None if prediction is None else check_level(prediction)
    if isinstance(prediction_resamples, bool) or not isinstance(prediction_resamples, (int, np.integer)) \
            or not 2 <= prediction_resamples <= 100_000:
        raise ParameterError(f"must be an integer from 2 to 100,000, got {prediction_resamples!r}",
                             parameter="prediction_resamples")
    rng = seed_to_use(rng)
    run = _Run(sm, x, int(pilot), t, meths, int(subsets), grid,
               predicted={k: {m.name: np.empty((repeats, t.size)) for m in meths} for k in STATISTICS},
               observed={k: np.empty((repeats, t.size)) for k in STATISTICS}, prediction=level,
               prediction_resamples=int(prediction_resamples))
    run.coverage = {k: {m.name: np.empty((repeats, t.size)) for m in run.banded()} for k in STATISTICS}
    scheduler = check_scheduler(scheduler)
    # local workers share the pair limit: fewer of them when their pairs do not fit together
    jobs = check_jobs(jobs) if scheduler is not None else pair_jobs(x.shape[0], check_jobs(jobs))
    _check_work(x.shape[0], x.shape[1], run, int(repeats), 1 if scheduler is not None else jobs)
    with bar(progress, int(repeats), "validate", unit="repeat") as tick:
        done = run_tasks(_one_repeat, [(run, g) for g in child_streams(rng, int(repeats))], jobs=jobs,
                         scheduler=scheduler, progress=tick)
    for r, (obs, pred, cov) in enumerate(done):
        for k in STATISTICS:
            run.observed[k][r] = obs[k]
            for m in meths:
                run.predicted[k][m.name][r] = pred[k][m.name]
            for name, c in cov[k].items():
                run.coverage[k][name][r] = c
    S, T = x.shape
    return Validation(methods=tuple(m.name for m in meths), pilot=int(pilot), topics=tuple(int(n) for n in t),
                      repeats=int(repeats), subsets=int(subsets), seed=seed_of(rng), n_systems=S, n_topics=T,
                      measure=sm.measure, source=sm.source, rows=tuple(_rows(run)), predicted=run.predicted,
                      observed=run.observed, prediction=level, prediction_resamples=run.prediction_resamples,
                      coverage=run.coverage)
