"""Prediction intervals of the pair rates: what the next ``n``-topic sets will show.

A curve's ``swap_rate_mean`` is an expected rate: the mean over pairs of each pair's
probability that two independent ``n``-topic sets order it differently. The swap rate a
user will *see* is the realised one, ``S(A, B)``: the share of pairs that two particular
``n``-topic sets ``A`` and ``B`` order differently (ties half). It differs from the expected
rate because the sets are random (the pairs share their topics, so the pairs' swaps are far
from independent) and because the expected rate is itself estimated from the collection.

The prediction interval of level ``L`` covers ``S(A, B)`` of new sets with probability about
``L``. It is a bootstrap of the prediction error (the collection's topics stand for the
population of topics): ``B`` times,

1. draw a resample ``C*`` of the collection's ``T`` topics (with replacement) and compute the
   method's expected rate ``f(C*)`` at each ``n`` from it, as from a collection;
2. draw two new sets ``A*`` and ``B*`` of ``n`` topics from the collection (with replacement,
   independent of ``C*``) and measure their realised rates: the swap ``S(A*, B*)`` and the
   reversal of ``A*`` against the order ``C*`` shows;
3. keep the ratio ``S(A*, B*) / f(C*)``.

The interval is the method's rate on the collection times the ``(1 -+ L) / 2`` quantiles of
the ratios. Steps 1 and 3 carry the uncertainty and the bias of the method's estimate (as in
the real world, ``C*`` is a collection and ``A*``, ``B*`` new sets from the population that
made it); step 2 the variation of the realised rate between topic sets. Kendall's tau between
the two sets' rankings is ``1 - 2 S(A, B)`` (no ties), so its interval is the swap interval's,
mapped. Only the closed-form methods (``analytic`` with ``variance="pair"``, the predictive
methods) have one: the method's rate is recomputed on every resample. Measured coverage on
held-out topics: ``docs/validation.md``.

Random streams: resample ``i`` uses the ``i``-th child of the generator for ``C*``, then
for ``A*`` and ``B*`` at each ``n`` in order, so a band depends only on the seed, the
resamples and the topic counts.

Examples
--------
>>> import planner
>>> from planner.simulate.prediction import prediction_band
>>> m = planner.datasets.load("dl19-passage", measure="nDCG@10")
>>> band = prediction_band(m.topic_scores(), (10, 40), method="predictive", level=0.9, resamples=50, rng=1)
>>> bool(band.swap_rate_low[1] < band.swap_rate_high[1]), band.level
(True, 0.9)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from .._random import as_generator
from ..errors import ParameterError
from ..methods import PAIR_RATES, Method
from ..methods import method as _registered
from ..results import ResultMixin
from ..variance import pair_index, pair_moments, score_grid
from .kernels import decimal_unit
from .priors import close_pairs, split_close
from .rates import plugin_pair_rates, predictive_pair_rates, scale_batch_rates, variance_df
from .work import Shape, Work

__all__ = [
    "DEFAULT_LEVEL",
    "DEFAULT_RESAMPLES",
    "PREDICTED",
    "MomentContext",
    "PredictionBand",
    "band_reason",
    "band_work",
    "moment_context",
    "prediction_band",
    "resampled_moments",
]

#: the default level of a prediction interval
DEFAULT_LEVEL = 0.9
#: the default number of bootstrap resamples behind it
DEFAULT_RESAMPLES = 200
#: the statistics with a prediction interval (rows' ``<stat>_pred_low`` / ``_pred_high``)
PREDICTED = ("swap_rate", "reversal_rate", "kendall_tau")
#: float64 values of one block of pair differences in :func:`resampled_moments`
_MOMENT_BLOCK = 2_000_000
#: pair means (and as many variances) of the resamples :func:`prediction_band` holds at once:
#: blocks of resamples, so its memory does not grow with resamples x pairs (200 resamples of
#: 3,950 systems took 24 GB at once)
_BAND_BLOCK = 4_000_000


@dataclass(frozen=True, repr=False)
class PredictionBand(ResultMixin):
    """Prediction intervals of the realised swap, reversal and Kendall tau at each topic count.

    Attributes:
        level: the intervals' level (e.g. 0.9).
        resamples: the bootstrap resamples behind them.
        topics: the topic counts.
        swap_rate_low, swap_rate_high: ends of the interval of the swap rate two new
            ``n``-topic sets will show, one value per topic count.
        reversal_rate_low, reversal_rate_high: the same for the share of pairs one new
            ``n``-topic set orders opposite to the collection.
        kendall_tau_low, kendall_tau_high: the same for Kendall's tau between the rankings
            of two new sets (``1 - 2`` times the swap interval's ends).
        swap_ratio, reversal_ratio: the bootstrap ratios (realised / expected),
            ``(resamples, len(topics))``; not in :meth:`to_dict`.
    """

    _repr_fields = ("level", "resamples", "topics")

    level: float
    resamples: int
    topics: tuple[int, ...]
    swap_rate_low: np.ndarray
    swap_rate_high: np.ndarray
    reversal_rate_low: np.ndarray
    reversal_rate_high: np.ndarray
    kendall_tau_low: np.ndarray
    kendall_tau_high: np.ndarray
    swap_ratio: np.ndarray = field(repr=False, compare=False, metadata={"raw": True})
    reversal_ratio: np.ndarray = field(repr=False, compare=False, metadata={"raw": True})

    def ends(self, statistic: str) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` of one of :data:`PREDICTED`."""
        if statistic not in PREDICTED:
            raise ParameterError(f"no prediction interval for {statistic!r}; expected one of "
                                 f"{', '.join(PREDICTED)}", parameter="statistic")
        return getattr(self, f"{statistic}_low"), getattr(self, f"{statistic}_high")

    def to_dict(self) -> dict:
        out: dict = {"level": float(self.level), "resamples": int(self.resamples),
                     "topics": [int(n) for n in self.topics]}
        for k in PREDICTED:
            lo, hi = self.ends(k)
            out[k] = {"low": [float(v) for v in lo], "high": [float(v) for v in hi]}
        return out


def band_reason(method: Method, variance: str, strata: str = "uniform") -> str | None:
    """Why ``method`` (with ``variance`` and ``strata``) has no prediction interval, or None when
    it has one."""
    if not method.closed_form:
        return (f"method {method.name!r} simulates its rates; a prediction interval would re-run the "
                "simulation on every resample (use a closed-form method: analytic or predictive)")
    if method.spec is None and variance != "pair":
        return f"the analytic prediction interval uses each pair's own variance (variance='pair'), not {variance!r}"
    if strata != "uniform":
        return "the prediction interval draws topics uniformly, not within strata"
    return None


def check_level(level: object, parameter: str = "prediction") -> float:
    """A prediction level strictly between 0 and 1."""
    if isinstance(level, bool) or not isinstance(level, (int, float, np.floating)) or not 0 < float(level) < 1:
        raise ParameterError(f"a prediction level must be a number between 0 and 1 (exclusive), got {level!r}",
                             parameter=parameter)
    return float(level)


class MomentContext(NamedTuple):
    """What :func:`resampled_moments` needs of a matrix whatever the resamples (:func:`moment_context`)."""

    a: np.ndarray                   #: first system of each pair
    b: np.ndarray                   #: second system of each pair
    y: np.ndarray                   #: the values, on the exact decimal grid where it holds
    centre: np.ndarray              #: pair means the differences are centred on (0 on the grid)
    s2_all: np.ndarray | None       #: pair variances over all topics (None on the grid)
    scale: float                    #: the grid's scale (1 off the grid)


def moment_context(vals: np.ndarray) -> MomentContext:
    """What :func:`resampled_moments` needs of ``vals`` whatever the resamples, computed once for
    many blocks of resamples."""
    S, T = vals.shape
    a, b = pair_index(S)
    q, unit = score_grid(vals, T)
    exact = decimal_unit(unit) and (2.0 * float(np.max(np.abs(q), initial=0.0)) * T) ** 2 < 2.0 ** 53
    scale = float(round(1.0 / unit)) if exact else 1.0
    y = q if exact else vals
    centre, s2_all = (np.zeros(a.size), None) if exact else pair_moments(vals, a, b)
    return MomentContext(a, b, y, centre, s2_all, scale)


def resampled_moments(vals: np.ndarray, draws: Sequence[Any],
                      context: MomentContext | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Pair means and variances (ddof=1) of every topic resample in ``draws``, ``(B, K)`` each.

    ``draws[i]`` holds the topic indices of resample ``i`` (each ``T`` of them, as many as
    ``vals`` has). One product of the pairs' differences with the resamples' topic counts,
    instead of the differences of each resample. On a decimal score grid
    (:func:`planner.variance.score_grid`) whose squared sums stay below ``2^53`` the sums are
    exact integers, so a resample's mean is exactly 0 where the two totals are equal (a tie, as
    :func:`planner.variance.exact_dbar` and :func:`planner.simulate.predict` count it) and its
    variance exactly 0 where the differences are constant; otherwise the differences are
    centred on their means over all topics first. Memory: ``2e6`` values of differences and
    ``B x T`` counts, besides the outputs.
    """
    ctx = context if context is not None else moment_context(vals)
    a, b, y, centre, s2_all, scale = ctx
    T = vals.shape[1]
    W = np.stack([np.bincount(np.asarray(t), minlength=T) for t in draws]).astype(np.float64)  # (B, T)
    n_draw = W.sum(axis=1, keepdims=True)
    D = np.empty((W.shape[0], a.size))
    V = np.empty((W.shape[0], a.size))
    step = max(1, _MOMENT_BLOCK // T)
    for lo in range(0, a.size, step):
        sl = slice(lo, lo + step)
        d = y[a[sl]] - y[b[sl]]
        d -= centre[sl, None]
        s1 = W @ d.T                 # (B, pairs): exact integers on the grid
        s2 = W @ (d * d).T
        D[:, sl] = s1 / (n_draw * scale) + centre[sl]
        V[:, sl] = np.maximum(n_draw * s2 - s1 * s1, 0.0) / (n_draw * (n_draw - 1) * scale * scale)
    if s2_all is not None:          # constant differences stay constant in every resample
        V[:, s2_all == 0] = 0.0
    return D, V


def method_rates(method: Method, dbar: np.ndarray, s2: np.ndarray, n0: int, topics: np.ndarray,
                 kurt: np.ndarray | None = None, system_var: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Mean (over pairs) expected swap and reversal rate of a closed-form ``method`` at ``topics``,
    from a collection of ``n0`` topics with pair means ``dbar`` and variances ``s2`` (of every pair of
    the systems whose variances are ``system_var``: the scale prior's close pairs,
    :func:`planner.simulate.priors.split_close`); pairs identical on every topic are ties
    (:data:`planner.simulate.rates.TIE_RATE`), as in every method."""
    spec = method.spec
    if spec is None:
        r = plugin_pair_rates(dbar, s2, topics)
    else:
        df = variance_df(n0, kurt) if spec.integrate else None
        r = predictive_pair_rates(dbar, s2, n0, topics, prior=spec.prior, variance=spec.variance, df=df,
                                  system_var=system_var)
    return {k: v.mean(axis=0) for k, v in r.items()}


def band_work(shape: Shape) -> Work:
    """The work of :func:`prediction_band` with ``shape.resamples`` resamples: each resample's
    pair moments and method rates, ``P (T / 4 + 16 N)`` units, and its two new sets at each
    count, ``5 n`` units a count (measured, docs/research/known-limits.md); held: the two sets'
    drawn topics and their indices, ``48 n`` bytes at the largest count (the pairs' values are
    held in blocks of :data:`_BAND_BLOCK`: nothing grows with the resamples)."""
    P, T, N = shape.pairs, shape.n_topics, len(shape.counts)
    return Work(shape.resamples * (P * (T / 4.0 + 16.0 * N) + 5.0 * sum(shape.counts)), 48 * max(shape.counts))


def _disagree(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """1 for opposite signs, 0.5 when exactly one is 0 (a tie counts half), else 0."""
    return 0.5 * np.abs(np.sign(u) - np.sign(v))


def _totals(q: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Each system's total over each row of topic indices ``draws`` ``(B, n)``: ``(B, S)``
    (exact integers on the score grid)."""
    B, T = draws.shape[0], q.shape[1]
    W = np.zeros((B, T))
    np.add.at(W, (np.repeat(np.arange(B), draws.shape[1]), draws.ravel()), 1.0)
    return W @ q.T


def prediction_band(x: np.ndarray, topics: Sequence[int] | np.ndarray, *, method: str | Method,
                    level: float = DEFAULT_LEVEL, resamples: int = DEFAULT_RESAMPLES, rng=None,
                    point: dict[str, np.ndarray] | None = None) -> PredictionBand:
    """The prediction intervals of a closed-form ``method`` on the scores ``x`` (systems x topics).

    ``point``: the method's mean swap and reversal rates on ``x`` at ``topics``
    (``{"swap_rate": ..., "reversal_rate": ...}``), when already computed (a curve's rows);
    computed here otherwise. See the module docstring for the procedure.
    """
    meth = method if isinstance(method, Method) else _registered(method)
    level = check_level(level)
    x = np.asarray(x, dtype=np.float64)
    T = x.shape[1]
    t = np.asarray(topics, dtype=np.int64)
    ctx = moment_context(x)
    a, b = ctx.a, ctx.b
    gens = as_generator(rng).spawn(int(resamples))
    pilots = [g.integers(0, T, T) for g in gens]
    q, _ = score_grid(x, int(max(t.max(), T)))
    point, split = _point_and_split(meth, x, (a, b), t, point)
    ratios = {k: np.empty((len(gens), t.size)) for k in ("swap_rate", "reversal_rate")}
    step = max(1, _BAND_BLOCK // max(a.size, 1))
    for lo in range(0, len(gens), step):
        D, V = resampled_moments(x, pilots[lo:lo + step], ctx)
        F = _block_rates(meth, x, (a, b, D, V), pilots[lo:lo + step], t, split)
        for k in range(D.shape[0]):
            _ratios(ratios, lo + k, x, q, (a, b, D[k]), {s: F[s][k] for s in F}, gens[lo + k], t)
    return _band(level, t, point, ratios)


def _point_and_split(meth: Method, x: np.ndarray, pairs: tuple[np.ndarray, np.ndarray], t: np.ndarray,
                     point: dict[str, np.ndarray] | None) -> tuple[dict[str, np.ndarray], bool]:
    """The method's mean rates on ``x`` at ``t`` (``point``, unless given) and whether the resamples'
    scale priors are fitted apart on their close pairs (where the collection's is): the collection's
    pair moments are computed only when either needs them."""
    apart = meth.spec is not None and meth.spec.close_apart
    if point is not None and not apart:
        return point, False
    dbar, s2, kurt = pair_moments(x, *pairs, kurtosis=True)
    system_var = x.var(axis=1, ddof=1)
    if point is None:
        point = method_rates(meth, dbar, s2, x.shape[1], t, kurt, system_var)
    return point, apart and split_close(dbar, s2, x.shape[1], system_var) is not None


def _block_rates(meth: Method, x: np.ndarray, pairs: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
                 pilots: Sequence[Any], t: np.ndarray, split: bool) -> dict[str, np.ndarray]:
    """``(B, len(t))`` expected swap and reversal rates of a block of ``B`` resamples (``pairs``: the pair
    index ``a, b`` and the resamples' pair means and variances ``(B, K)``): the scale prior's all
    at once on its histogram (``split``: fitted apart on each resample's close pairs), the other
    methods' resample by resample."""
    T = x.shape[1]
    a, b, D, V = pairs
    if meth.spec is not None and meth.spec.histogram_rates:
        close = close_pairs(V, np.stack([x[:, p].var(axis=1, ddof=1) for p in pilots])) if split else None
        rate = scale_batch_rates(D, V, T, close=close)
        return {k: rate(np.broadcast_to(t, (D.shape[0], t.size)), k) for k in PAIR_RATES}
    rows = []
    for k, pilot in enumerate(pilots):
        kurt = pair_moments(x[:, pilot], a, b, kurtosis=True)[2] if meth.spec and meth.spec.integrate else None
        rows.append(method_rates(meth, D[k], V[k], T, t, kurt))
    return {k: np.stack([r[k] for r in rows]) for k in PAIR_RATES}


def _ratios(ratios: dict[str, np.ndarray], i: int, x: np.ndarray, q: np.ndarray,
            pairs: tuple[np.ndarray, np.ndarray, np.ndarray], f: dict[str, np.ndarray],
            g: np.random.Generator, t: np.ndarray) -> None:
    """Row ``i`` of ``ratios``: realised over expected swap and reversal rates ``f`` of resample ``i``
    (``pairs``: the pair index ``a, b`` and the resample's pair means)."""
    T = x.shape[1]
    a, b, d_i = pairs
    ref = np.sign(d_i)
    for j, n in enumerate(t):
        tot = _totals(q, g.integers(0, T, (2, int(n))))
        dA, dB = tot[0, a] - tot[0, b], tot[1, a] - tot[1, b]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios["swap_rate"][i, j] = _disagree(dA, dB).mean() / f["swap_rate"][j]
            ratios["reversal_rate"][i, j] = _disagree(dA, ref).mean() / f["reversal_rate"][j]


def _band(level: float, t: np.ndarray, point: dict[str, np.ndarray], ratios: dict[str, np.ndarray]) -> PredictionBand:
    """The intervals from the point rates and the bootstrap ratios."""
    tail = (1.0 - level) / 2.0
    ends = {}
    for k, r in ratios.items():
        r = np.where(np.isfinite(r), r, np.nan)
        lo, hi = np.nanquantile(r, [tail, 1.0 - tail], axis=0)
        ends[k] = (np.asarray(point[k]) * lo, np.minimum(np.asarray(point[k]) * hi, 1.0))
    sw_lo, sw_hi = ends["swap_rate"]
    rv_lo, rv_hi = ends["reversal_rate"]
    return PredictionBand(level=level, resamples=ratios["swap_rate"].shape[0], topics=tuple(int(n) for n in t),
                          swap_rate_low=sw_lo, swap_rate_high=sw_hi, reversal_rate_low=rv_lo,
                          reversal_rate_high=rv_hi, kendall_tau_low=1.0 - 2.0 * sw_hi,
                          kendall_tau_high=1.0 - 2.0 * sw_lo, swap_ratio=ratios["swap_rate"],
                          reversal_ratio=ratios["reversal_rate"])
