"""Pilot-aware (predictive) swap and reversal rates of every pair.

A pilot of ``n0`` topics gives, for every pair of systems ``(a, b)``, the mean
per-topic difference ``dbar`` and its variance ``s2_d`` (ddof=1). The plain
*plug-in* normal model treats ``dbar`` as the true difference ``delta``:

    p    = Phi(-|dbar| sqrt(n) / s_d)
    swap = 2 p (1 - p)                      (two independent n-topic sets disagree)
    rev  = p                                (an n-topic set disagrees with the pilot)

Because ``|dbar|`` overstates ``|delta|`` for close pairs (regression to the
mean), the plug-in model understates future reversals (by 30-50% on TREC 2006
Terabyte from 25-topic pilots) and, on average, swaps. The *predictive* method
(:func:`predictive_pair_rates`) treats ``delta`` as unknown:

0. **Variance.** Each pair's ``sigma_d^2`` is, by ``variance=``:
   ``"pair"`` (default) ``s2_d``; ``"shrunk"`` ``(s2_d + pooled) / 2``; ``"pooled"``
   the mean of ``s2_d`` over all pairs (``= 2 var_e`` of the pilot).
   A 25-topic ``s2_d`` is noisy (24 df, heavy-tailed differences), and the
   noise of a pair's own variance moves its predicted rates a lot; pooling
   removes that noise but ignores that close pairs tend to have smaller
   variances. Halfway (``"shrunk"``) did best on the held-out check on TREC
   2006 Terabyte, but on the TREC Web 2010/2011 and TREC-5/6/7 ad hoc matrices
   (20-topic pilots) it over-predicted swaps by 3-19% and each pair's own
   variance did better on all seven, for swaps and reversals alike; ``"pair"``
   is the default because it was not tuned on the collection it is judged on
   and it is the variance the other analytic statistics use
   (docs/validation.md). Validate on your own collection.

   Each of these plugs ``sigma_d^2`` in as known. With ``df=`` (method
   ``"predictive-integrated"`` of :func:`validate`) the rates are instead
   averaged over the variance's own uncertainty: ``sigma_d^2 = s2_d nu / X``,
   ``X ~ chi2(nu)``, with ``nu`` from :func:`variance_df` (fewer degrees of
   freedom for heavy-tailed differences). It predicts more swaps than ``"pair"``
   (+4 to +7% on the held-out checks): closer on TREC 2006 Terabyte, where
   ``"pair"`` under-predicts, and further off on the TREC Web and ad hoc
   matrices, where ``"pair"`` already over-predicts (docs/validation.md). It is
   an option, not the default.

1. **Empirical-Bayes prior.** ``delta`` of a pair is drawn from a prior ``G``
   fitted to all pairs of the pilot, each pair's ``dbar`` being
   ``N(delta, se2)`` with ``se2 = sigma_d^2 / n0``. ``G`` is symmetric about 0
   (pair orientation is arbitrary).

   - ``prior="normal"`` (default): ``G = N(0, tau2)``, ``tau2 = max(0,
     mean(dbar^2) - mean(se2))`` over pairs with ``sigma_d^2 > 0`` (method of
     moments).
   - ``prior="mixture"``: a scale mixture of normals ``sum_k w_k N(0,
     s_k^2)`` (unimodal at 0, as in adaptive shrinkage), ``s_k`` = 0 and a
     geometric grid (ratio sqrt 2) from ``min(se)/10`` to ``2 max|dbar|``,
     weights by EM; posterior and predictive are the ``w``-weighted normal
     formulas below. Option only (over-predicted swaps on real data).
   - ``prior="npmle"``: the nonparametric maximum-likelihood prior
     (Kiefer-Wolfowitz), a discrete distribution on a grid of ``grid`` points
     spanning ``[-max|dbar|, max|dbar|]``, fitted by EM on at most
     ``max_fit_pairs`` pairs (evenly spaced in pair order when there are
     more), with both ``dbar`` and ``-dbar`` entering the fit. It is exact for
     the normal model but over-predicted swaps by 10-30% on real data, so it is
     only an option.
   - ``prior="scale"``: the deconvolved prior of :func:`planner.simulate.priors.fit_scale_weights`,
     a zero-centred scale mixture of the standardized difference ``theta = delta / sigma_d``
     on a fixed grid of scales from 0.1 to 5 pair standard deviations. In standardized units
     every pair's ``dbar / sigma_d`` is ``N(theta, 1 / n0)``, so the posterior and predictive are
     the mixture's formulas with ``dbar / sigma_d`` for ``dbar`` and 1 for ``sigma_d^2``. Its
     rates far beyond ``n0`` do not drift with ``n0`` (docs/research/calibration.md).

2. **Posterior** of ``delta`` given the pilot's ``dbar``: the conjugate
   normal ``N(m, v)`` with ``m = dbar tau2/(tau2+se2)``, ``v = tau2
   se2/(tau2+se2)`` (or Bayes' rule on the grid).

3. **Posterior predictive** of the means ``A`` and ``B`` of two independent
   n-topic sets: given ``delta`` they are independent ``N(delta, sigma_d^2/n)``, so

       swap(n) = E_post[ 2 p (1 - p) ],   p = Phi(-|delta| sqrt(n) / sigma_d)
       rev(n)  = E_post[ Phi(-sign(dbar) delta sqrt(n) / sigma_d) ]

   For the normal prior this is closed form: ``A`` and ``B`` are jointly normal
   with mean ``m``, variance ``v + sigma_d^2/n`` and correlation
   ``rho = v / (v + sigma_d^2/n)``, so ``swap = 2 (P(A>0) - P(A>0, B>0))
   = 4 T(h, sqrt((1-rho)/(1+rho)))`` with Owen's T
   (``scipy.special.owens_t``) and ``h = |m| / sqrt(v + sigma_d^2/n)``;
   ``rev = Phi(-h)``.

Pairs with ``s2_d = 0`` (systems differing by the same amount on every pilot
topic) have swap and reversal rate 0 and do not enter the prior fit, except
pairs identical on every topic (``dbar = 0`` too): they are ties, and a tie counts
half (:data:`TIE_RATE`), in every function here and so in every method. A pair with
``dbar = 0`` and ``s2_d > 0`` has no observed order; its reversal rate is 0.5.

:func:`planner.validation.validate` checks predictions against held-out topics; see its
docstring and ``docs/validation.md`` for the exact procedure.

Examples
--------
>>> from planner.simulate.rates import predictive_pair_rates
>>> r = predictive_pair_rates([0.05, 0.01], [0.02, 0.01], 25, [25, 100])
>>> r["swap_rate"].round(3).tolist()
[[0.304, 0.165], [0.36, 0.231]]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from ..errors import ParameterError
from ..methods import PAIR_RATES
from .priors import (
    SCALE_EDGES,
    SCALE_GRID,
    Prior,
    check_pair_inputs,
    fit_prior,
    group_weights,
    mixture_loglik,
    scale_histogram,
    standardized,
)

__all__ = [
    "MIN_DF", "STATISTICS", "TIE_RATE", "VARIANCES", "PairRates", "VarianceScales", "pair_variance_model",
    "plugin_pair_rates", "predictive_pair_rates", "scale_batch_rates", "variance_df", "variance_scales",
]

#: the rates a pilot predicts (and ``validate`` checks)
STATISTICS = PAIR_RATES

# bound on the number of float64 values of one working block (pairs chunk x grid)
_BLOCK = 2_000_000

#: posterior weight of a mixture component below which its rates are not evaluated: its share of any
#: pair's rate is under this, far below the tolerance of any count or curve
NEGLIGIBLE_POSTERIOR = 1e-15


#: the swap and reversal rate of a pair identical on every topic (``dbar = 0`` and ``s2_d = 0``): a
#: tie counts half (DESIGN.md, "Reversal rate")
TIE_RATE = 0.5


def _with_ties(rates: dict[str, np.ndarray], dbar: np.ndarray, s2_d: np.ndarray) -> dict[str, np.ndarray]:
    """``rates`` (per pair, first axis) with every pair identical on every topic set to :data:`TIE_RATE`."""
    tie = (dbar == 0) & (s2_d == 0)
    if tie.any():
        for v in rates.values():
            v[tie] = TIE_RATE
    return rates


def norm_cdf(x):
    """The standard normal distribution function."""
    return special.ndtr(x)


def plugin_pair_rates(dbar, s2_d, topics) -> dict[str, np.ndarray]:
    """Plug-in normal model (``dbar`` taken as the true difference).

    Returns ``{"swap_rate": 2p(1-p), "reversal_rate": p}``, each of shape
    ``(pairs, len(topics))``, with ``p = Phi(-|dbar| sqrt(n) / s_d)``; pairs with
    ``s2_d = 0`` get 0 for both, ties :data:`TIE_RATE`.
    """
    dbar, s2_d, _, t = check_pair_inputs(dbar, s2_d, 2, topics)
    sd = np.sqrt(s2_d)
    ok = sd > 0
    z = np.zeros((dbar.size, t.size))
    z[ok] = np.abs(dbar[ok])[:, None] * np.sqrt(t)[None, :] / sd[ok][:, None]
    p = norm_cdf(-z)
    p[~ok] = 0.0
    return _with_ties({"swap_rate": 2.0 * p * (1.0 - p), "reversal_rate": p}, dbar, s2_d)



VARIANCES = ("shrunk", "pooled", "pair")

#: smallest degrees of freedom :func:`variance_df` returns (keeps the mean of ``sigma_d^2`` finite)
MIN_DF = 2.5


def variance_df(n0, kurtosis=None) -> np.ndarray:
    """Degrees of freedom of each pair's variance ``s2_d`` from ``n0`` pilot topics.

    ``nu = 2 (n0 - 1) / (2 + (n0 - 1) max(kappa, 0) / n0)``, at least :data:`MIN_DF`
    (or ``n0 - 1`` when that is smaller).
    It matches the sampling variance of ``s2_d``, ``sigma^4 (2 / (n0 - 1) + kappa /
    n0)`` with ``kappa`` the excess kurtosis of the pair's per-topic differences,
    to that of ``sigma^2 chi2(nu) / nu`` (Satterthwaite): heavy-tailed differences
    make a pair's variance less certain than ``n0 - 1`` degrees of freedom say.

    ``kurtosis`` is each pair's sample excess kurtosis ``g2 = m4 / m2^2 - 3``
    (central moments with divisor ``n0``, as from
    ``planner.variance.pair_moments(..., kurtosis=True)``); ``kappa`` is its
    small-sample corrected form ``G2 = ((n0 + 1) g2 + 6) (n0 - 1) / ((n0 - 2)
    (n0 - 3))`` (``scipy.stats.kurtosis(bias=False)``) when ``n0 >= 4``, else
    ``g2``. ``None`` means ``kappa = 0``: the normal-theory ``n0 - 1``.
    """
    if isinstance(n0, bool) or not isinstance(n0, (int, np.integer)) or n0 < 2:
        raise ParameterError(f"pilot size must be an integer >= 2, got {n0!r}", parameter="n0")
    g2 = np.zeros(1) if kurtosis is None else np.asarray(kurtosis, dtype=np.float64)
    if not np.all(np.isfinite(g2)):
        raise ParameterError("kurtosis must be finite", parameter="kurtosis")
    kappa = g2 if n0 < 4 or kurtosis is None else ((n0 + 1) * g2 + 6.0) * (n0 - 1) / ((n0 - 2) * (n0 - 3))
    nu = 2.0 * (n0 - 1) / (2.0 + (n0 - 1) * np.maximum(kappa, 0.0) / n0)
    return np.maximum(nu, min(MIN_DF, n0 - 1.0))


def pair_variance_model(s2_d, variance: str = "pair") -> np.ndarray:
    """The per-pair variance ``sigma_d^2`` the predictive model uses.

    ``"pooled"``: the mean of ``s2_d`` over all pairs (``= 2 var_e`` of the pilot)
    for every pair; ``"pair"``: each pair's own
    ``s2_d``; ``"shrunk"``: ``(s2_d + pooled) / 2``. Pairs with ``s2_d = 0`` keep 0.
    """
    s2_d = np.asarray(s2_d, dtype=np.float64)
    if variance not in VARIANCES:
        raise ParameterError(f"unknown variance {variance!r}; expected one of {', '.join(VARIANCES)}",
                             parameter="variance")
    if variance == "pair" or s2_d.size == 0:
        return s2_d
    pooled = float(np.mean(s2_d))
    out = np.full_like(s2_d, pooled) if variance == "pooled" else 0.5 * (s2_d + pooled)
    out[s2_d == 0] = 0.0
    return out



def predictive_pair_rates(dbar, s2_d, n0, topics, *, prior: str | Prior = "normal", variance: str = "pair",
                          df=None, quantiles: int = 16, grid: int = 121,
                          max_fit_pairs: int = 20_000, future_scale=None, system_var=None,
                          close=None) -> dict[str, np.ndarray]:
    """Posterior-predictive swap and reversal rates of every pair (module docstring).

    Args:
        dbar: per-pair mean difference on the pilot, shape ``(pairs,)``.
        s2_d: per-pair variance (ddof=1) of the per-topic differences on the pilot.
        n0: number of pilot topics.
        topics: topic counts ``n`` to predict for.
        prior: ``"normal"`` (default), ``"mixture"``, ``"npmle"``, or a fitted :class:`Prior`.
        variance: ``"pair"`` (default), ``"shrunk"`` or ``"pooled"``: the
            ``sigma_d^2`` of every pair (:func:`pair_variance_model`), used both
            for the pilot's sampling variance ``sigma_d^2 / n0`` and for the
            future sets' ``sigma_d^2 / n``.
        df: ``None`` (default) plugs that ``sigma_d^2`` in as known. Otherwise the
            degrees of freedom of each pair's variance (scalar or shape
            ``(pairs,)``, e.g. from :func:`variance_df`; or their
            :func:`variance_scales`, for repeated calls): the rates are averaged
            over ``sigma_d^2 = v nu / X``, ``X ~ chi2(nu)`` (the posterior of a
            variance estimated as ``v`` with ``nu`` df under the scale-invariant
            prior), at the ``quantiles`` midpoint quantiles ``u = (i + 1/2) /
            quantiles`` of ``X``; the prior on ``delta`` is fitted once, with
            ``v``. The midpoint rule's error in the mean rates was below 0.2%
            (relative) at 16 quantiles on Terabyte pilots.
        quantiles: number of quadrature points when ``df`` is given.
        future_scale: ``None`` (default), or one positive multiplier per pair of the
            future sets' variance: they see ``future_scale * sigma_d^2 / n`` while the
            pilot's ``dbar`` keeps ``sigma_d^2 / n0`` (future topics measured with another
            number of query variants than the pilot's, :func:`planner.plan.topics_for_variants`).
            Normal and scale priors with ``df=None`` only.
        system_var: each system's variance over the pilot's topics, when ``dbar`` holds every pair of
            them (:func:`planner.variance.pair_index` order): a ``"scale"`` prior fitted here is then
            fitted apart on the close pairs where the data say so (:func:`planner.simulate.priors.split_close`).
        close: for a given scale :class:`Prior` fitted apart on the close pairs, each pair's flag
            (default: the prior's own, when ``dbar`` holds the pairs it was fitted on).

    Returns:
        ``{"swap_rate": ..., "reversal_rate": ...}``, each shape ``(pairs, len(topics))``; ties
        (pairs identical on every topic) :data:`TIE_RATE`.

    Cost: ``quantiles`` times that of ``df=None``.
    Memory: normal prior ``O(pairs * len(topics))``; npmle about ``max(chunk *
    grid, min(pairs, max_fit_pairs) * 2 * grid)`` float64 values, with ``chunk
    = 2e6 // grid`` pairs per block, plus the outputs ``2 * pairs * len(topics)``.
    """
    dbar, s2_d, n0, t = check_pair_inputs(dbar, s2_d, n0, topics)
    s2_d = pair_variance_model(s2_d, variance)
    pr = prior if isinstance(prior, Prior) else fit_prior(dbar, s2_d, n0, prior=prior, grid=grid,
                                                            max_fit_pairs=max_fit_pairs, system_var=system_var)
    future_scale = _check_future_scale(future_scale, dbar, pr, df)
    close = _check_close(close, dbar, pr)
    if df is None:
        return _with_ties(_rates_given_variance(dbar, s2_d, n0, t, pr, future_scale, close), dbar, s2_d)
    if isinstance(df, VarianceScales):
        if df.factors.shape[1] not in (1, dbar.size):
            raise ParameterError(f"scales are for {df.factors.shape[1]} pairs, got {dbar.size}", parameter="df")
        factors = df.factors
    else:
        factors = variance_scales(df, quantiles, pairs=dbar.size).factors
    out = {"swap_rate": np.zeros((dbar.size, t.size)), "reversal_rate": np.zeros((dbar.size, t.size))}
    for f in factors:
        r = _rates_given_variance(dbar, s2_d * f, n0, t, pr, close=close)
        for key in out:
            out[key] += r[key]
    for key in out:
        out[key] /= factors.shape[0]
    return _with_ties(out, dbar, s2_d)


def _check_close(close, dbar: np.ndarray, pr: Prior) -> np.ndarray | None:
    """Each pair's close flag for a scale prior fitted apart on the close pairs (``close``, or the
    prior's own), checked against the pairs; ``None`` for any other prior."""
    if pr.close_weights is None:
        return None
    close = pr.close if close is None else np.asarray(close, dtype=bool).reshape(-1)
    if close is None or close.shape != dbar.shape:
        raise ParameterError(f"the prior is fitted apart on the close pairs: give one close flag per pair "
                             f"({dbar.size})", parameter="close")
    return close


def _check_future_scale(future_scale, dbar: np.ndarray, pr: Prior, df) -> np.ndarray | None:
    """``future_scale`` of :func:`predictive_pair_rates` as float64, checked (``None`` stays)."""
    if future_scale is None:
        return None
    future_scale = np.asarray(future_scale, dtype=np.float64)
    if future_scale.shape != dbar.shape:
        raise ParameterError(f"expected one multiplier per pair ({dbar.size} pairs), got shape "
                             f"{future_scale.shape}", parameter="future_scale")
    if not np.all(np.isfinite(future_scale) & (future_scale > 0)):
        bad = future_scale[~(np.isfinite(future_scale) & (future_scale > 0))]
        raise ParameterError(f"multipliers must be positive and finite, got {bad[0]!r} "
                             f"({bad.size} such)", parameter="future_scale")
    if pr.kind not in ("normal", "scale") or df is not None:
        raise ParameterError("a future variance scale needs the normal or scale prior without df "
                             "(integrated variances)", parameter="future_scale")
    return future_scale


@dataclass(frozen=True)
class VarianceScales:
    """Quadrature of :func:`predictive_pair_rates` over each pair's variance (see
    :func:`variance_scales`): ``factors[i, p] = nu_p / X_i`` with ``X_i`` the
    ``(1 - u_i)``-quantile of ``chi2(nu_p)``, ``u_i = (i + 1/2) / quantiles``."""

    factors: np.ndarray  # (quantiles, pairs)


def variance_scales(df, quantiles: int = 16, *, pairs: int | None = None) -> VarianceScales:
    """The multipliers of ``s2_d`` at which :func:`predictive_pair_rates` evaluates the rates
    when averaging over ``sigma_d^2 = s2_d nu / X``, ``X ~ chi2(nu)``.

    ``df``: a number or one value per pair (``pairs`` of them when given). Passing the
    result as ``df=`` to :func:`predictive_pair_rates` gives the same numbers as passing
    the degrees of freedom, without recomputing the chi-square quantiles (the costly
    part) in repeated calls on the same pairs.
    """
    nu = np.asarray(df, dtype=np.float64)
    if nu.ndim > 1 or (nu.ndim == 1 and pairs is not None and nu.size != pairs):
        raise ParameterError(f"df must be a number or one value per pair ({pairs}), got shape {nu.shape}",
                             parameter="df")
    if pairs is not None:
        nu = np.broadcast_to(nu, (pairs,))
    if not np.all(np.isfinite(nu) & (nu > 0)):
        raise ParameterError("df must be positive and finite", parameter="df")
    if isinstance(quantiles, bool) or not isinstance(quantiles, (int, np.integer)) or quantiles < 1:
        raise ParameterError(f"quantiles must be a positive integer, got {quantiles!r}", parameter="quantiles")
    u = (np.arange(quantiles) + 0.5) / quantiles
    # X = the (1-u)-quantile of chi2(nu), so s2_d nu / X is the u-quantile of sigma_d^2
    nu = np.atleast_1d(nu)[None, :]
    return VarianceScales(nu / special.chdtri(nu, u[:, None]))


def _normal_rates(m, v, s2, n, d):
    """Swap and reversal rates at ``n`` from the normal posterior ``N(m, v)`` of each pair."""
    tot = v + s2 / n
    h = np.abs(m) / np.sqrt(tot)
    rho = v / tot
    a = np.sqrt((1.0 - rho) / (1.0 + rho))
    r = norm_cdf(-h)
    r[d == 0] = 0.5
    return 4.0 * special.owens_t(h, a), r


def _mixture_posterior(d, se2, sds, logw):
    """Per pair and component: posterior weight, mean and variance ``(post, m, v)``. ``logw``: the log
    weights, ``(J,)`` or one row per pair ``(pairs, J)``; or ``(B, 1, J)``, each of ``B`` priors, for
    ``post`` of shape ``(B, pairs, J)``."""
    ll, tot = mixture_loglik(d, se2, sds)
    lp = ll + logw
    lp -= lp.max(axis=-1, keepdims=True)
    post = np.exp(lp)
    post /= post.sum(axis=-1, keepdims=True)
    s2k = sds[None, :] ** 2
    return post, d[:, None] * s2k / tot, s2k * se2[:, None] / tot


def _mixture_rates(post, m, v, s2, n, d, want=STATISTICS):
    """Swap and reversal rates at ``n`` (None where not in ``want``) from :func:`_mixture_posterior`.

    Components whose posterior weight is under :data:`NEGLIGIBLE_POSTERIOR` are not evaluated (their
    share of a rate is below it); a fitted scale mixture leaves most of them so for each pair.
    """
    keep = post >= NEGLIGIBLE_POSTERIOR
    rows = np.broadcast_to(np.arange(post.shape[0])[:, None], post.shape)[keep]
    future = np.broadcast_to(s2[:, None] / n, post.shape)[keep]
    swap, rev = _component_rates(m[keep], v[keep], future, np.broadcast_to(d[:, None], post.shape)[keep], want)
    w = post[keep]
    return tuple(None if r is None else np.bincount(rows, w * r, minlength=post.shape[0]) for r in (swap, rev))


def _component_rates(m, v, future, d, want):
    """Per pair (or bin) and component, the rates of :func:`_mixture_rates` before the posterior
    sum: future set means ``N(m, v + future)`` (``future = sigma_d^2 / n``); ``d == 0``: reversal 0.5."""
    var = v + future
    h = np.abs(m) / np.sqrt(var)
    swap = rev = None
    if "swap_rate" in want:
        rho = v / var
        swap = 4.0 * special.owens_t(h, np.sqrt((1.0 - rho) / (1.0 + rho)))
    if "reversal_rate" in want:
        rev = np.where(d == 0, 0.5, norm_cdf(-h))
    return swap, rev


def _grid_posterior(d, sd, n0, g, logw):
    """Per pair, the posterior weights of the grid points ``g``."""
    se = sd / math.sqrt(n0)
    lp = -0.5 * ((d[:, None] - g[None, :]) / se[:, None]) ** 2 + logw[None, :]
    lp -= lp.max(axis=1, keepdims=True)
    post = np.exp(lp)
    post /= post.sum(axis=1, keepdims=True)
    return post


def _grid_rates(post, g, sd, sn, sgn, want=STATISTICS):
    """Swap and reversal rates at ``sqrt(n) = sn`` (None where not in ``want``) from the grid posterior."""
    z = g[None, :] * (sn / sd)[:, None]  # delta sqrt(n) / s_d
    swap = rev = None
    if "swap_rate" in want:
        p = norm_cdf(-np.abs(z))
        swap = np.sum(post * (2.0 * p * (1.0 - p)), axis=1)
    if "reversal_rate" in want:
        rev = np.sum(post * norm_cdf(-sgn[:, None] * z), axis=1)
        rev[sgn == 0] = 0.5
    return swap, rev


def _normal_prior_rates(dbar, s2_d, n0, t, idx, pr: Prior, future_scale, swap, rev) -> None:
    d = dbar[idx]
    se2 = s2_d[idx] / n0
    tau2 = pr.tau2
    m = d * tau2 / (tau2 + se2)
    v = tau2 * se2 / (tau2 + se2)
    # a future set of n topics with variance scale f is one of n / f topics at scale 1
    nn = t[None, :] if future_scale is None else t[None, :] / future_scale[idx][:, None]
    swap[idx], rev[idx] = _normal_rates(m[:, None], v[:, None], s2_d[idx][:, None], nn, d)


def _mixture_prior_rates(dbar, s2_d, n0, t, idx, pr: Prior, swap, rev, future=None, close=None) -> None:
    """Rates of every pair in ``idx`` under a mixture prior; the future sets' variance is
    ``future / n`` (default ``s2_d / n``); ``close``: each pair's flag of a scale prior fitted apart
    on the close pairs (:meth:`Prior.pair_log_weights`)."""
    future = s2_d if future is None else future
    sds, logw = _kept_components(pr, close)
    chunk = max(1, _BLOCK // max(1, sds.size * 4))
    for lo in range(0, idx.size, chunk):
        ii = idx[lo:lo + chunk]
        post, m, v = _mixture_posterior(dbar[ii], s2_d[ii] / n0, sds, logw if logw.ndim == 1 else logw[ii])
        for j, n in enumerate(t):
            swap[ii, j], rev[ii, j] = _mixture_rates(post, m, v, future[ii], n, dbar[ii])


def _kept_components(pr: Prior, close) -> tuple[np.ndarray, np.ndarray]:
    """The grid points of a mixture or scale prior with weight, and their log weights: ``(J,)``, or
    ``(pairs, J)`` for a scale prior fitted apart on the close pairs (``close``: one flag per pair)."""
    keep = pr.weights > 0
    if pr.close_weights is not None:
        keep |= pr.close_weights > 0
    return pr.grid[keep], pr.pair_log_weights(close)[..., keep]


def _grid_prior_rates(dbar, s2_d, n0, t, idx, pr: Prior, swap, rev) -> None:
    sqrt_n = np.sqrt(t.astype(np.float64))
    keep = pr.weights > 0
    g, logw = pr.grid[keep], np.log(pr.weights[keep])
    chunk = max(1, _BLOCK // max(1, g.size))
    for lo in range(0, idx.size, chunk):
        ii = idx[lo:lo + chunk]
        sd = np.sqrt(s2_d[ii])
        post = _grid_posterior(dbar[ii], sd, n0, g, logw)
        sgn = np.sign(dbar[ii])
        for j, sn in enumerate(sqrt_n):
            swap[ii, j], rev[ii, j] = _grid_rates(post, g, sd, sn, sgn)


def _standardize(dbar, s2_d, idx) -> tuple[np.ndarray, np.ndarray]:
    """``dbar / sigma_d`` on the pairs ``idx`` (0 elsewhere), and unit variances: the ``"scale"``
    prior's pairs in the units its mixture is fitted in."""
    d = np.zeros_like(dbar)
    d[idx] = dbar[idx] / np.sqrt(s2_d[idx])
    return d, np.where(s2_d > 0, 1.0, 0.0)


def _rates_given_variance(dbar, s2_d, n0, t, pr: Prior, future_scale=None, close=None) -> dict[str, np.ndarray]:
    """Predictive rates of :func:`predictive_pair_rates` for given variances and prior
    (``future_scale``: normal and scale priors, checked by the caller; ``close``: the pairs' flags of
    a scale prior fitted apart on the close pairs); pairs with ``s2_d = 0`` get 0."""
    swap = np.zeros((dbar.size, t.size))
    rev = np.zeros((dbar.size, t.size))
    idx = np.flatnonzero(s2_d > 0)
    if pr.kind == "normal":
        _normal_prior_rates(dbar, s2_d, n0, t, idx, pr, future_scale, swap, rev)
    elif pr.kind == "scale":
        d, one = _standardize(dbar, s2_d, idx)
        _mixture_prior_rates(d, one, n0, t, idx, pr, swap, rev, future=one if future_scale is None else future_scale,
                             close=close)
    elif pr.kind == "mixture":
        _mixture_prior_rates(dbar, s2_d, n0, t, idx, pr, swap, rev)
    else:
        _grid_prior_rates(dbar, s2_d, n0, t, idx, pr, swap, rev)
    return {"swap_rate": swap, "reversal_rate": rev}


class PairRates:
    """One statistic of :func:`predictive_pair_rates` for fixed pairs and a fixed prior, at any ``n``.

    For repeated evaluations at different topic counts (a search for ``n``): with a
    grid (``npmle``) or ``mixture`` prior each pair's posterior is computed once here
    instead of at every call; the values are those of :func:`predictive_pair_rates`
    (same operations). Normal priors and ``df`` (integrated variances) call it directly.

    ``future_scale``, ``close``: as in :func:`predictive_pair_rates` (normal and scale priors).

    Memory: ``pairs * grid`` float64 values (npmle), ``3 * pairs * components`` (mixture).
    """

    def __init__(self, dbar, s2_d, n0, prior: Prior, statistic: str = "swap_rate", *, df=None,
                 future_scale=None, close=None):
        if statistic not in STATISTICS:
            raise ParameterError(f"unknown statistic {statistic!r}; expected one of {', '.join(STATISTICS)}",
                                 parameter="statistic")
        self.dbar, self.s2_d, self.n0, self.prior, self.statistic, self.df = dbar, s2_d, n0, prior, statistic, df
        self.future_scale = _check_future_scale(future_scale, np.asarray(dbar), prior, df)
        self.close = _check_close(close, np.asarray(dbar), prior)
        self._cache: tuple[np.ndarray, tuple[Any, ...]] | None = None
        self._tie = (np.asarray(dbar) == 0) & (np.asarray(s2_d) == 0)
        self._future = s2_d
        if df is None and prior.kind == "scale":
            # standardized pairs: the scale prior is the mixture's formulas in pair SDs
            self.dbar, self.s2_d = _standardize(dbar, s2_d, np.flatnonzero(s2_d > 0))
            self._future = self.s2_d if self.future_scale is None else self.future_scale
        if df is None and prior.kind in ("mixture", "npmle", "scale"):
            idx = np.flatnonzero(s2_d > 0)
            grid, logw = _kept_components(prior, self.close)
            d = self.dbar[idx]
            if prior.kind != "npmle":
                logw = logw if logw.ndim == 1 else logw[idx]
                self._cache = (idx, _mixture_posterior(d, self.s2_d[idx] / n0, grid, logw))
            else:
                sd = np.sqrt(s2_d[idx])
                self._cache = (idx, (_grid_posterior(d, sd, n0, grid, logw), grid, sd, np.sign(d)))

    def __call__(self, n: int) -> np.ndarray:
        """Per-pair rate at ``n`` topics, shape ``(pairs,)``."""
        if self._cache is None:
            return predictive_pair_rates(self.dbar, self.s2_d, self.n0, [int(n)], prior=self.prior,
                                         df=self.df, future_scale=self.future_scale,
                                         close=self.close)[self.statistic][:, 0]
        idx, post = self._cache
        out = np.zeros(self.dbar.size)
        want = (self.statistic,)
        if self.prior.kind != "npmle":
            weights, mean, var = post
            swap, rev = _mixture_rates(weights, mean, var, self._future[idx], int(n), self.dbar[idx], want)
        else:
            p, grid, sd, sgn = post
            swap, rev = _grid_rates(p, grid, sd, math.sqrt(int(n)), sgn, want)
        out[idx] = swap if self.statistic == "swap_rate" else rev
        out[self._tie] = TIE_RATE
        return out


#: where the rates of a bin of the scale prior's histogram of ``|z|`` are evaluated: its midpoint
#: (the open last bin at its lower edge, where every rate near ``n0`` and beyond is 0)
_BIN_Z = np.concatenate([(SCALE_EDGES[:-2] + SCALE_EDGES[1:-1]) / 2, [SCALE_EDGES[-2]]])


def scale_batch_rates(D: np.ndarray, V: np.ndarray, n0: int, *, close: np.ndarray | None = None,
                      unseen: tuple[float, float] | None = None) -> Callable[[np.ndarray, str], np.ndarray]:
    """``rate(n, statistic)``: the mean ``statistic`` (swap or reversal rate) over all pairs of each of
    ``B`` collections of ``n0`` topics (rows of pair means ``D`` and variances ``V``) under each row's
    own ``"scale"`` prior (:func:`planner.simulate.priors.fit_scale_weights`), at ``n[b]`` topics
    (``n`` of shape ``(B,)``: result ``(B,)``) or at each ``n[b, k]`` (shape ``(B, k)``: ``(B, k)``).

    ``close``: ``(B, P)`` flags of each row's close pairs (:func:`planner.simulate.priors.close_pairs`)
    when the prior is fitted apart on them and on the others (:func:`planner.simulate.priors.split_close`).
    ``unseen``: ``(systems, level)`` for the weights of :func:`planner.simulate.priors.unseen_mass_weights`
    instead of the maximum-likelihood ones; with ``close``, in the close pairs alone (counted as
    ``systems`` times their share), as :func:`planner.simulate.priors.unseen_mass_prior` does.

    Each pair enters through the bin of its ``|z|`` in the histogram the prior is fitted on (at the
    bin's midpoint, :data:`_BIN_Z`): the posterior of a bin does not depend on the row's weights
    but through them, so a rate at ``n`` is computed once per bin and component, whatever ``B``
    and the number of pairs (the topic resamples of an interval on n or of a prediction band).
    Pairs identical on every topic count :data:`TIE_RATE`.
    """
    z, tie = standardized(D, V, n0)
    d = _BIN_Z / math.sqrt(n0)
    se2 = np.full(d.size, 1.0 / n0)
    groups = [np.ones(z.shape, dtype=bool)] if close is None else [close, ~close]
    # (each group's histogram leaves the other group's pairs out, as it does ties)
    counts_of = [scale_histogram(z, tie | ~on) for on in groups]
    weights = group_weights(counts_of, n0, [on.mean(axis=1) for on in groups], unseen)
    weighted = 0.0
    for counts, w in zip(counts_of, weights):
        with np.errstate(divide="ignore"):
            post, m, v = _mixture_posterior(d, se2, SCALE_GRID, np.log(w)[:, None, :])   # (B, M, J), (M, J) twice
        weighted = weighted + post * (counts / D.shape[1])[:, :, None]
    ties = TIE_RATE * tie.mean(axis=1)
    at: dict[tuple[str, int], np.ndarray] = {}

    def rate(n: np.ndarray, statistic: str) -> np.ndarray:
        ns = np.asarray(n, dtype=np.int64)
        for k in np.unique(ns).tolist():
            if (statistic, k) not in at:   # (M, J): the rate of each bin under each component at k topics
                swap, rev = _component_rates(m, v, 1.0 / k, d[:, None], (statistic,))
                at[statistic, k] = swap if statistic == "swap_rate" else rev
        terms = np.stack([at[statistic, k] for k in ns.ravel().tolist()]).reshape(*ns.shape, *m.shape)
        if ns.ndim == 1:
            return np.einsum("bmj,bmj->b", weighted, terms) + ties
        return np.einsum("bmj,bkmj->bk", weighted, terms) + ties[:, None]
    return rate
