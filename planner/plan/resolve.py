"""The interval on n of a target: topic resamples, each re-solved.

The collection's topics are resampled with replacement (one child stream of the generator
per resample); each resample's pair differences, variances and components are recomputed
and the smallest n re-solved, all resamples together. The ends of the interval are the
``(1 -+ confidence_level) / 2`` quantiles of the re-solved counts (:func:`interval_quantiles`). For the
swap, reversal and Kendall tau targets of a pilot-aware (predictive) method each resample is
re-solved with that method's own model (its prior refitted on every resample); otherwise with
the analytic formulas; the deconvolved method's upper end is at least :func:`unseen_mass_count`,
which no resample can see. For Erho2 and Phi the interval is the D-study's (Feldt / AJF).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from .. import methods
from ..errors import DegenerateDataWarning
from ..results import Interval
from ..simulate import PairRates, fit_prior, pair_variance_model, variance_df, variance_scales
from ..simulate.prediction import resampled_moments
from ..simulate.priors import close_pairs
from ..simulate.rates import scale_batch_rates
from ..variance import VarianceComponents, pair_index, pair_moments
from .pairs import PairModel, batch_stat, check_resampled_pairs
from .search import smallest_n_vec

__all__ = ["ResampledModels", "dstudy_interval", "predictive_batch", "resample_models", "resolve_analytic",
           "resolve_predictive", "unseen_mass_count"]

#: float64 values of one block of resamples in the pilot-aware interval (16 quadrature
#: scales and a pair mean per pair and resample)
_PRED_BLOCK = 4_000_000


@dataclass
class ResampledModels:
    """Pair means ``D``, variances ``V`` (``(B, K)``), components ``comp`` (``(B,)`` each) and,
    for an integrated predictive method, kurtoses ``kurt`` of ``B`` topic resamples; with ``close``,
    each resample's close pairs (:func:`planner.simulate.priors.close_pairs`, ``(B, K)``)."""

    D: np.ndarray
    V: np.ndarray
    comp: dict[str, np.ndarray]
    kurt: np.ndarray | None
    close: np.ndarray | None = None


def resample_models(vals: np.ndarray, variance: str, gen: np.random.Generator, resamples: int, *,
                    kurtosis: bool, close: bool = False, tick: Callable[..., None] | None = None) -> ResampledModels:
    """The pair model of each of ``resamples`` topic resamples of ``vals`` (one child stream each), with
    its close pairs when ``close``; ``tick()`` is called after each (:mod:`planner.progress`).

    The pair moments of all resamples come from one product (:func:`planner.simulate.prediction.resampled_moments`); the
    components (and kurtoses) are computed resample by resample."""
    S, T = vals.shape
    K = S * (S - 1) // 2
    check_resampled_pairs(S, resamples)
    draws = [g.integers(0, T, T) for g in gen.spawn(resamples)]
    D, V = resampled_moments(vals, draws)
    out = ResampledModels(D, np.empty((resamples, K)), {k: np.empty(resamples) for k in ("var_s", "var_t", "var_e")},
                          np.empty((resamples, K)) if kurtosis else None,
                          np.empty((resamples, K), dtype=bool) if close else None)
    a_, b_ = pair_index(S)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        for i, t in enumerate(draws):
            vb = vals[:, t]
            mb = PairModel(vb, variance, moments=(D[i], V[i]))
            out.V[i] = mb.var
            for k in out.comp:
                out.comp[k][i] = mb.comp[k]
            if out.kurt is not None:
                out.kurt[i] = pair_moments(vb, a_, b_, kurtosis=True)[2]
            if out.close is not None:
                out.close[i] = close_pairs(mb.var, vb.var(axis=1, ddof=1))
            if tick is not None:
                tick()
    return out


def predictive_batch(target: str, D: np.ndarray, V: np.ndarray, kurt: np.ndarray | None, n0: int,
                     spec: methods.PredictiveSpec,
                     close: np.ndarray | None = None) -> Callable[[np.ndarray], np.ndarray]:
    """``stat(n)`` -> the target at ``n[i]`` under the pilot-aware model of resample ``i``.

    ``D``, ``V``: ``(B, P)`` pair means and own variances of ``B`` topic resamples of
    ``n0`` topics; ``kurt``: their kurtoses (``spec.integrate``) or ``None``; ``close``: their close
    pairs, where the scale prior is fitted apart on them (as the collection's is), or ``None``. As in
    :func:`planner.simulate.predict`, pairs identical on every topic are ties (``TIE_RATE``).
    Each resample's prior is fitted once, and a grid or mixture prior's posterior computed once
    (``PairRates``); every call costs ``B`` predictive evaluations at one n each.
    """
    B = D.shape[0]
    key = _rate_key(target)
    if spec.histogram_rates:
        batch = scale_batch_rates(D, V, n0, close=close)     # every resample at once, on the prior's histogram
        return _of_rate(target, lambda n: batch(n, key))
    rates = []
    seen: list[dict[int, float]] = [{} for _ in range(B)]   # a resample's rate at each n asked
    for i in range(B):
        s2m = pair_variance_model(V[i], spec.variance)
        df = (variance_scales(variance_df(n0, kurt[i]), pairs=D.shape[1])
              if spec.integrate and kurt is not None else None)
        ci = None if close is None else close[i]
        prior = fit_prior(D[i], s2m, n0, prior=spec.prior, close=ci)
        rates.append(PairRates(D[i], s2m, n0, prior, key, df=df, close=ci))

    def stat(n: np.ndarray) -> np.ndarray:
        out = np.empty(B)
        for i in range(B):
            k = int(n[i])
            if k not in seen[i]:      # a search asks again at the n it already holds
                seen[i][k] = float(rates[i](k).mean())
            out[i] = seen[i][k]
        return out
    return _of_rate(target, stat)


def _rate_key(target: str) -> str:
    """The pair rate a pair-rate target is made of (Kendall tau: of the swap rate)."""
    return "reversal_rate" if target == "reversal_rate" else "swap_rate"


def _of_rate(target: str, rate: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """``target`` at ``n`` from the mean pair rate ``rate(n)`` (:func:`_rate_key`)."""
    return (lambda n: 1.0 - 2.0 * rate(n)) if target == "kendall_tau" else rate


def unseen_mass_count(t: methods.Target, value: float, dbar: np.ndarray, var: np.ndarray, n0: int, systems: int,
                      level: float, n_max: int, start: int | None = None,
                      close: np.ndarray | None = None) -> int | None:
    """The count of a pair-rate target under the deconvolved prior with the most mass near zero that
    the collection's own pairs do not reject (:func:`planner.simulate.priors.unseen_mass_weights`; the
    share's bound follows the interval's ``level``: :func:`planner.simulate.priors.raise_drop`);
    ``None`` when it reaches no count up to ``n_max``.

    A topic resample refits the prior by maximum likelihood and, like the collection it is drawn
    from, cannot see that mass: every resample's count shares the pilot's blind spot, and the upper
    end of their interval fell short of the whole collection's count in 30% of 20-topic draws of
    TREC-6 P@10 (docs/research/calibration.md, seventh session). This count is the upper end the data
    themselves still allow. ``close``: the collection's close pairs where its prior is fitted apart on
    them (:func:`planner.simulate.priors.split_close`): the mass near zero is then raised in them alone."""
    batch = scale_batch_rates(dbar[None, :], var[None, :], n0, close=None if close is None else close[None, :],
                              unseen=(systems, level))
    stat = _of_rate(t.name, lambda n: batch(n, _rate_key(t.name)))
    sign = 1.0 if t.direction == "<=" else -1.0
    n = smallest_n_vec(lambda k: sign * stat(k) <= sign * value, 1, 2, n_max, start=start)[0]
    return int(n) if np.isfinite(n) else None


def resolve_predictive(t: methods.Target, value: float, rs: ResampledModels, n0: int,
                       spec: methods.PredictiveSpec, n_max: int, start: int | None = None,
                       tick: Callable[..., None] | None = None) -> np.ndarray:
    """The smallest n of each resample under the predictive model ``spec`` (``start``: the
    collection's own count, where the search of every resample begins: :func:`smallest_n_vec`;
    ``tick(k)`` after each block of ``k`` resamples: :mod:`planner.progress`).

    Blocks of resamples, each solved on its own (the problems are independent), so what each
    resample's model keeps is held for one block only: the chi-square quadrature of an
    integrated variance (17 quadrature factors per pair), or the cached posteriors of a grid or
    mixture prior (121 grid points, or 3 x about 30 components).
    """
    resamples, K = rs.D.shape
    sign = 1.0 if t.direction == "<=" else -1.0
    per_pair = {"npmle": 122, "mixture": 100, "scale": 1}.get(spec.prior, 17)
    step = max(1, min(resamples, _PRED_BLOCK // (per_pair * K)))
    parts = []
    for lo_ in range(0, resamples, step):
        blk = slice(lo_, min(resamples, lo_ + step))
        stat = predictive_batch(t.name, rs.D[blk], rs.V[blk], None if rs.kurt is None else rs.kurt[blk], n0,
                                spec, None if rs.close is None else rs.close[blk])
        parts.append(smallest_n_vec(lambda n, f=stat: sign * f(n) <= sign * value,  # type: ignore[misc]
                                    blk.stop - blk.start, 2, n_max, start=start))
        if tick is not None:
            tick(blk.stop - blk.start)
    return np.concatenate(parts)


def resolve_analytic(t: methods.Target, value: float, rs: ResampledModels, n_max: int, *, min_diff: float,
                     alpha: float, quantile: float, tick: Callable[..., None] | None = None) -> np.ndarray:
    """The smallest n of each resample under the analytic formulas (all resamples together, so
    ``tick(k)`` reports half of the resamples left after each step of the search, and the rest
    at the end: :mod:`planner.progress`)."""
    sign = 1.0 if t.direction == "<=" else -1.0
    B = rs.D.shape[0]
    left = [B]

    def ok(n: np.ndarray) -> np.ndarray:
        met = sign * batch_stat(t.name, n, rs.D, rs.V, rs.comp, min_diff=min_diff, alpha=alpha,
                                quantile=quantile) <= sign * value
        if tick is not None and left[0] > 1:
            tick(left[0] // 2)
            left[0] -= left[0] // 2
        return met

    ns = smallest_n_vec(ok, B, 2, n_max)
    if tick is not None:
        tick(left[0])
    return ns


def dstudy_interval(components: VarianceComponents, target: str, value: float,
                    confidence_level: float) -> Interval:
    """The D-study interval on n of an Erho2 or Phi target (Feldt / Arteaga-Jeyaratnam-Franklin)."""
    need = components.topics_for(**{target: value}, alpha=1 - confidence_level)
    # the D-study counts from 1 topic, the answer from 2 (the least a pair's variance needs):
    # the interval uses the answer's floor, so it always contains the answer

    def conv(v: float | None) -> int | None:
        return None if v is None or not math.isfinite(v) else max(2, int(v))

    return replace(need.interval, low=conv(need.interval.low), high=conv(need.interval.high))
