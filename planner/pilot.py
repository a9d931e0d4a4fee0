"""Pilot-aware prediction of swap and reversal rates, and its validation.

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
topic, e.g. identical systems) have swap and reversal rate 0 and do not enter
the prior fit. A pair with ``dbar = 0`` and ``s2_d > 0`` has no observed order;
its reversal rate is 0.5 (a tie counts half).

:func:`validate` checks predictions against held-out topics; see its docstring
and ``docs/validation.md`` for the exact procedure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from .errors import DegenerateDataWarning, ParameterError
from .variance import pair_index, pair_moments  # re-exported here

PRIORS = ("normal", "mixture", "npmle")
#: the rates a pilot predicts (and ``validate`` checks)
STATISTICS = ("swap_rate", "reversal_rate")

# bound on the number of float64 values of one working block (pairs chunk x grid)
_BLOCK = 2_000_000


def _norm_cdf(x):
    return special.ndtr(x)


def _check_pair_inputs(dbar, s2_d, n0, topics):
    dbar = np.asarray(dbar, dtype=np.float64).reshape(-1)
    s2_d = np.asarray(s2_d, dtype=np.float64).reshape(-1)
    if dbar.shape != s2_d.shape:
        raise ParameterError(f"dbar has {dbar.size} values but s2_d has {s2_d.size}", parameter="s2_d")
    if not (np.all(np.isfinite(dbar)) and np.all(np.isfinite(s2_d))):
        raise ParameterError("dbar and s2_d must be finite", parameter="dbar")
    if np.any(s2_d < 0):
        raise ParameterError("s2_d must be >= 0", parameter="s2_d")
    if isinstance(n0, bool) or not isinstance(n0, (int, np.integer)) or n0 < 2:
        raise ParameterError(f"pilot size must be an integer >= 2, got {n0!r}", parameter="n0")
    t = np.atleast_1d(np.asarray(topics))
    if t.ndim != 1 or t.size == 0 or not np.issubdtype(t.dtype, np.integer) or np.any(t < 1):
        raise ParameterError(f"topics must be positive integers, got {topics!r}", parameter="topics")
    return dbar, s2_d, int(n0), t.astype(np.int64)


def plugin_pair_rates(dbar, s2_d, topics) -> dict[str, np.ndarray]:
    """Plug-in normal model (``dbar`` taken as the true difference).

    Returns ``{"swap_rate": 2p(1-p), "reversal_rate": p}``, each of shape
    ``(pairs, len(topics))``, with ``p = Phi(-|dbar| sqrt(n) / s_d)``; pairs with
    ``s2_d = 0`` get 0 for both.
    """
    dbar, s2_d, _, t = _check_pair_inputs(dbar, s2_d, 2, topics)
    sd = np.sqrt(s2_d)
    ok = sd > 0
    z = np.zeros((dbar.size, t.size))
    z[ok] = np.abs(dbar[ok])[:, None] * np.sqrt(t)[None, :] / sd[ok][:, None]
    p = _norm_cdf(-z)
    p[~ok] = 0.0
    return {"swap_rate": 2.0 * p * (1.0 - p), "reversal_rate": p}


@dataclass(frozen=True)
class Prior:
    """Empirical-Bayes prior on pair differences ``delta``.

    Attributes:
        kind: ``"normal"``, ``"mixture"`` or ``"npmle"``.
        grid: support points (npmle), component sds (mixture), or empty (normal).
        weights: probabilities of the grid points / components, or empty (normal).
        tau2: variance of the prior.
        n0: pilot size the prior was fitted for.
        n_pairs: number of pairs used in the fit.
        iterations: EM iterations used (npmle, mixture), 0 for normal.
    """

    kind: str
    grid: np.ndarray
    weights: np.ndarray
    tau2: float
    n0: int
    n_pairs: int
    iterations: int = 0

    def to_dict(self) -> dict:
        return {"kind": self.kind, "grid": [float(x) for x in self.grid],
                "weights": [float(x) for x in self.weights], "tau2": float(self.tau2),
                "n0": int(self.n0), "n_pairs": int(self.n_pairs), "iterations": int(self.iterations)}


def fit_prior(dbar, s2_d, n0, *, prior: str = "normal", grid: int = 121, max_fit_pairs: int = 20_000,
              max_iter: int = 500, tol: float = 1e-7) -> Prior:
    """Fit the symmetric empirical-Bayes prior on ``delta`` (module docstring).

    Memory: ``min(pairs, max_fit_pairs) * 2 * grid`` float64 values for npmle (the
    likelihoods and their rescaling),
    ``min(pairs, max_fit_pairs) * components`` for mixture.
    """
    dbar, s2_d, n0, _ = _check_pair_inputs(dbar, s2_d, n0, [1])
    if prior not in PRIORS:
        raise ParameterError(f"unknown prior {prior!r}; expected one of {', '.join(PRIORS)}", parameter="prior")
    ok = s2_d > 0
    d = dbar[ok]
    se2 = s2_d[ok] / n0
    if d.size == 0:
        return Prior(prior, np.zeros(1), np.ones(1), 0.0, n0, 0)
    if prior == "normal":
        tau2 = max(0.0, float(np.mean(d * d) - np.mean(se2)))
        return Prior("normal", np.empty(0), np.empty(0), tau2, n0, int(d.size))
    if d.size > max_fit_pairs:
        idx = np.linspace(0, d.size - 1, max_fit_pairs).round().astype(np.int64)
        d, se2 = d[idx], se2[idx]
    if prior == "mixture":
        return _fit_mixture(d, se2, n0, max_iter=max_iter, tol=tol)
    if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)) or grid < 3:
        raise ParameterError(f"grid must be an integer >= 3, got {grid!r}", parameter="grid")
    se = np.sqrt(se2)
    top = float(np.max(np.abs(d)))
    if top == 0.0:
        return Prior("npmle", np.zeros(1), np.ones(1), 0.0, n0, int(d.size))
    g = np.linspace(-top, top, int(grid) | 1)  # odd count: 0 is a grid point
    # log-likelihood of each observation at each grid point, rescaled per row
    ll = -0.5 * ((d[:, None] - g[None, :]) / se[:, None]) ** 2
    ll -= ll.max(axis=1, keepdims=True)
    L = np.exp(ll)
    # The fit is on dbar and -dbar. The grid is symmetric, so the likelihood of -dbar at g
    # is that of dbar at -g (L reversed), and with symmetric weights f(-dbar) = f(dbar):
    # the EM step over both halves is w * (v + v reversed) / (2 pairs), v = L.T @ (1 / f),
    # computed from dbar alone, and the objective is twice the sum over dbar.
    w = np.full(g.size, 1.0 / g.size)
    it = 0
    prev = -np.inf
    for it in range(1, max_iter + 1):
        f = L @ w
        obj = 2.0 * float(np.sum(np.log(f)))
        v = L.T @ (1.0 / f)
        w = w * (v + v[::-1]) / (2 * d.size)
        w = 0.5 * (w + w[::-1])  # keep exact symmetry
        w /= w.sum()
        if obj - prev < tol * abs(obj) and it > 10:
            break
        prev = obj
    tau2 = float(np.sum(w * g * g))
    return Prior("npmle", g, w, tau2, n0, int(d.size), it)


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


def _mixture_sds(d: np.ndarray, se2: np.ndarray) -> np.ndarray:
    """Component sds of the scale-mixture prior: 0, then a geometric grid (ratio sqrt 2)
    from ``min(se)/10`` to ``2 max|dbar|``."""
    lo = max(float(np.sqrt(np.min(se2))) / 10.0, 1e-12)
    hi = max(2.0 * float(np.max(np.abs(d))), 2.0 * lo)
    k = int(np.ceil(np.log(hi / lo) / np.log(math.sqrt(2.0)))) + 1
    return np.concatenate([[0.0], lo * math.sqrt(2.0) ** np.arange(k)])


def _mixture_loglik(d, se2, sds):
    tot = sds[None, :] ** 2 + se2[:, None]
    return -0.5 * d[:, None] ** 2 / tot - 0.5 * np.log(tot), tot


def _fit_mixture(d, se2, n0, *, max_iter, tol) -> Prior:
    sds = _mixture_sds(d, se2)
    ll, _ = _mixture_loglik(d, se2, sds)
    ll -= ll.max(axis=1, keepdims=True)
    L = np.exp(ll)
    w = np.full(sds.size, 1.0 / sds.size)
    prev = -np.inf
    it = 0
    for it in range(1, max_iter + 1):
        f = L @ w
        obj = float(np.sum(np.log(f)))
        w = w * (L.T @ (1.0 / f)) / d.size
        w /= w.sum()
        if obj - prev < tol * abs(obj) and it > 10:
            break
        prev = obj
    return Prior("mixture", sds, w, float(np.sum(w * sds ** 2)), n0, int(d.size), it)


def predictive_pair_rates(dbar, s2_d, n0, topics, *, prior: str | Prior = "normal", variance: str = "pair",
                          df=None, quantiles: int = 16, grid: int = 121,
                          max_fit_pairs: int = 20_000, future_scale=None) -> dict[str, np.ndarray]:
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
            Normal prior with ``df=None`` only.

    Returns:
        ``{"swap_rate": ..., "reversal_rate": ...}``, each shape ``(pairs, len(topics))``.

    Cost: ``quantiles`` times that of ``df=None``.
    Memory: normal prior ``O(pairs * len(topics))``; npmle about ``max(chunk *
    grid, min(pairs, max_fit_pairs) * 2 * grid)`` float64 values, with ``chunk
    = 2e6 // grid`` pairs per block, plus the outputs ``2 * pairs * len(topics)``.
    """
    dbar, s2_d, n0, t = _check_pair_inputs(dbar, s2_d, n0, topics)
    s2_d = pair_variance_model(s2_d, variance)
    pr = prior if isinstance(prior, Prior) else fit_prior(dbar, s2_d, n0, prior=prior, grid=grid,
                                                            max_fit_pairs=max_fit_pairs)
    if future_scale is not None:
        future_scale = np.asarray(future_scale, dtype=np.float64)
        if future_scale.shape != dbar.shape:
            raise ParameterError(f"expected one multiplier per pair ({dbar.size} pairs), got shape "
                                 f"{future_scale.shape}", parameter="future_scale")
        if not np.all(np.isfinite(future_scale) & (future_scale > 0)):
            bad = future_scale[~(np.isfinite(future_scale) & (future_scale > 0))]
            raise ParameterError(f"multipliers must be positive and finite, got {bad[0]!r} "
                                 f"({bad.size} such)", parameter="future_scale")
        if pr.kind != "normal" or df is not None:
            raise ParameterError("a future variance scale needs the normal prior without df (integrated "
                                 "variances)", parameter="future_scale")
    if df is None:
        return _rates_given_variance(dbar, s2_d, n0, t, pr, future_scale)
    if isinstance(df, VarianceScales):
        if df.factors.shape[1] not in (1, dbar.size):
            raise ParameterError(f"scales are for {df.factors.shape[1]} pairs, got {dbar.size}", parameter="df")
        factors = df.factors
    else:
        factors = variance_scales(df, quantiles, pairs=dbar.size).factors
    out = {"swap_rate": np.zeros((dbar.size, t.size)), "reversal_rate": np.zeros((dbar.size, t.size))}
    for f in factors:
        r = _rates_given_variance(dbar, s2_d * f, n0, t, pr)
        for key in out:
            out[key] += r[key]
    for key in out:
        out[key] /= factors.shape[0]
    return out


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
    r = _norm_cdf(-h)
    r[d == 0] = 0.5
    return 4.0 * special.owens_t(h, a), r


def _mixture_posterior(d, se2, sds, logw):
    """Per pair and component: posterior weight, mean and variance ``(post, m, v)``."""
    ll, tot = _mixture_loglik(d, se2, sds)
    lp = ll + logw[None, :]
    lp -= lp.max(axis=1, keepdims=True)
    post = np.exp(lp)
    post /= post.sum(axis=1, keepdims=True)
    s2k = sds[None, :] ** 2
    return post, d[:, None] * s2k / tot, s2k * se2[:, None] / tot


def _mixture_rates(post, m, v, s2, n, d, want=STATISTICS):
    """Swap and reversal rates at ``n`` (None where not in ``want``) from :func:`_mixture_posterior`."""
    var = v + s2[:, None] / n
    h = np.abs(m) / np.sqrt(var)
    swap = rev = None
    if "swap_rate" in want:
        rho = v / var
        a = np.sqrt((1.0 - rho) / (1.0 + rho))
        swap = np.sum(post * 4.0 * special.owens_t(h, a), axis=1)
    if "reversal_rate" in want:
        rev = np.sum(post * _norm_cdf(-h), axis=1)
        rev[d == 0] = 0.5
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
        p = _norm_cdf(-np.abs(z))
        swap = np.sum(post * (2.0 * p * (1.0 - p)), axis=1)
    if "reversal_rate" in want:
        rev = np.sum(post * _norm_cdf(-sgn[:, None] * z), axis=1)
        rev[sgn == 0] = 0.5
    return swap, rev


def _rates_given_variance(dbar, s2_d, n0, t, pr: Prior, future_scale=None) -> dict[str, np.ndarray]:
    """Predictive rates of :func:`predictive_pair_rates` for given variances and prior
    (``future_scale``: normal prior only, checked by the caller)."""
    P = dbar.size
    swap = np.zeros((P, t.size))
    rev = np.zeros((P, t.size))
    ok = s2_d > 0
    idx = np.flatnonzero(ok)
    sqrt_n = np.sqrt(t.astype(np.float64))
    if pr.kind == "normal":
        d = dbar[idx]
        se2 = s2_d[idx] / n0
        tau2 = pr.tau2
        m = d * tau2 / (tau2 + se2)
        v = tau2 * se2 / (tau2 + se2)
        # a future set of n topics with variance scale f is one of n / f topics at scale 1
        nn = t[None, :] if future_scale is None else t[None, :] / future_scale[idx][:, None]
        swap[idx], rev[idx] = _normal_rates(m[:, None], v[:, None], s2_d[idx][:, None], nn, d)
        return {"swap_rate": swap, "reversal_rate": rev}
    if pr.kind == "mixture":
        sds = pr.grid[pr.weights > 0]
        logw = np.log(pr.weights[pr.weights > 0])
        chunk = max(1, _BLOCK // max(1, sds.size * 4))
        for lo in range(0, idx.size, chunk):
            ii = idx[lo:lo + chunk]
            post, m, v = _mixture_posterior(dbar[ii], s2_d[ii] / n0, sds, logw)
            for j, n in enumerate(t):
                swap[ii, j], rev[ii, j] = _mixture_rates(post, m, v, s2_d[ii], n, dbar[ii])
        return {"swap_rate": swap, "reversal_rate": rev}
    g, w = pr.grid, pr.weights
    keep = w > 0
    g, logw = g[keep], np.log(w[keep])
    chunk = max(1, _BLOCK // max(1, g.size))
    for lo in range(0, idx.size, chunk):
        ii = idx[lo:lo + chunk]
        sd = np.sqrt(s2_d[ii])
        post = _grid_posterior(dbar[ii], sd, n0, g, logw)
        sgn = np.sign(dbar[ii])
        for j, sn in enumerate(sqrt_n):
            swap[ii, j], rev[ii, j] = _grid_rates(post, g, sd, sn, sgn)
    return {"swap_rate": swap, "reversal_rate": rev}


class PairRates:
    """One statistic of :func:`predictive_pair_rates` for fixed pairs and a fixed prior, at any ``n``.

    For repeated evaluations at different topic counts (a search for ``n``): with a
    grid (``npmle``) or ``mixture`` prior each pair's posterior is computed once here
    instead of at every call; the values are those of :func:`predictive_pair_rates`
    (same operations). Normal priors and ``df`` (integrated variances) call it directly.

    Memory: ``pairs * grid`` float64 values (npmle), ``3 * pairs * components`` (mixture).
    """

    def __init__(self, dbar, s2_d, n0, prior: Prior, statistic: str = "swap_rate", *, df=None):
        if statistic not in STATISTICS:
            raise ParameterError(f"unknown statistic {statistic!r}; expected one of {', '.join(STATISTICS)}",
                                 parameter="statistic")
        self.dbar, self.s2_d, self.n0, self.prior, self.statistic, self.df = dbar, s2_d, n0, prior, statistic, df
        self._cache = None
        if df is None and prior.kind in ("mixture", "npmle"):
            idx = np.flatnonzero(s2_d > 0)
            keep = prior.weights > 0
            grid, logw = prior.grid[keep], np.log(prior.weights[keep])
            d = dbar[idx]
            if prior.kind == "mixture":
                self._cache = (idx, _mixture_posterior(d, s2_d[idx] / n0, grid, logw))
            else:
                sd = np.sqrt(s2_d[idx])
                self._cache = (idx, (_grid_posterior(d, sd, n0, grid, logw), grid, sd, np.sign(d)))

    def __call__(self, n: int) -> np.ndarray:
        """Per-pair rate at ``n`` topics, shape ``(pairs,)``."""
        if self._cache is None:
            return predictive_pair_rates(self.dbar, self.s2_d, self.n0, [int(n)], prior=self.prior,
                                         df=self.df)[self.statistic][:, 0]
        idx, post = self._cache
        out = np.zeros(self.dbar.size)
        want = (self.statistic,)
        if self.prior.kind == "mixture":
            swap, rev = _mixture_rates(*post, self.s2_d[idx], int(n), self.dbar[idx], want)
        else:
            p, grid, sd, sgn = post
            swap, rev = _grid_rates(p, grid, sd, math.sqrt(int(n)), sgn, want)
        out[idx] = swap if self.statistic == "swap_rate" else rev
        return out


# ---------------------------------------------------------------------------
# validation against held-out topics
# ---------------------------------------------------------------------------

#: methods computed inside this module -> (prior, variance, integrate) of
#: :func:`predictive_pair_rates` (integrate: average over each pair's variance with the
#: kurtosis-adjusted :func:`variance_df`), or None for the plug-in model; any other
#: name goes to ``planner.simulate.predict``
INTERNAL_METHODS = {
    "predictive": ("normal", "pair", False),
    "predictive-integrated": ("normal", "pair", True),
    "predictive-shrunk": ("normal", "shrunk", False),
    "predictive-pooled": ("normal", "pooled", False),
    "predictive-pair": ("normal", "pair", False),
    "predictive-npmle": ("npmle", "pair", False),
    "predictive-mixture": ("mixture", "pair", False),
    "analytic": None,
}


#: mean differences with ``|d| <= TIE_TOL`` are ties (floating-point rounding of equal means)
TIE_TOL = 1e-12


def _sign(d: np.ndarray) -> np.ndarray:
    return np.where(np.abs(d) <= TIE_TOL, 0.0, np.sign(d))


def _disagree(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """1 when the signs are opposite, 0.5 when exactly one is zero (a tie counts half), else 0.

    Signs are taken with :data:`TIE_TOL`: ``|d| <= 1e-12`` counts as a tie.
    """
    return 0.5 * np.abs(_sign(u) - _sign(v))


def observed_rates(x: np.ndarray, topics: np.ndarray, ref_sign: np.ndarray, *, subsets: int,
                   rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Mean (over pairs) swap and reversal rates measured on held-out scores ``x`` (S x N).

    ``subsets`` random permutations of the N held-out topics are drawn; for each
    ``n`` the first ``n`` and the next ``n`` topics of a permutation are two
    disjoint topic sets. Swap: the two sets order the pair differently
    (``_disagree`` of their mean differences). Reversal: a set orders the pair
    differently from ``ref_sign`` (the pilot's sign), averaged over both sets.
    Returns arrays of shape ``(len(topics),)`` (means over pairs and subsets).

    Memory: ``chunk * (S * N + 3 * pairs)`` float64 values with
    ``chunk = max(1, 2e6 // max(S * N, pairs))`` permutations per block.
    """
    S, N = x.shape
    a, b = pair_index(S)
    perms = np.argsort(rng.random((subsets, N)), axis=1)
    swap = np.zeros(topics.size)
    rev = np.zeros(topics.size)
    chunk = max(1, _BLOCK // max(S * N, a.size))
    for lo in range(0, subsets, chunk):
        pm = perms[lo:lo + chunk]
        xs = x[:, pm]  # S x k x N, topics in permutation order
        cs = np.cumsum(xs, axis=2)
        for j, n in enumerate(topics):
            m1 = cs[:, :, n - 1] / n
            m2 = (cs[:, :, 2 * n - 1] - cs[:, :, n - 1]) / n
            d1 = m1[a] - m1[b]
            d2 = m2[a] - m2[b]
            swap[j] += _disagree(d1, d2).sum()
            rev[j] += 0.5 * (_disagree(d1, ref_sign[:, None]).sum() + _disagree(d2, ref_sign[:, None]).sum())
    denom = float(subsets * a.size)
    return {"swap_rate": swap / denom, "reversal_rate": rev / denom}


def _predict_means(method: str, dbar, s2, kurt, n0, topics, *, scores_pilot, rng,
                   prior_options: dict) -> dict[str, np.ndarray]:
    """Predicted mean (over pairs) swap and reversal rate at each n from a pilot."""
    if method in INTERNAL_METHODS:
        spec = INTERNAL_METHODS[method]
        if spec is None:
            r = plugin_pair_rates(dbar, s2, topics)
        else:
            prior, variance, integrate = spec
            r = predictive_pair_rates(dbar, s2, n0, topics, prior=prior, variance=variance,
                                      df=variance_df(n0, kurt) if integrate else None, **prior_options)
    else:
        from . import simulate  # another module's methods (bootstrap, subsample, parametric)

        curve = simulate.predict(scores_pilot, topics=[int(n) for n in topics], method=method, rng=rng)
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
_EXTERNAL_METHODS = ("bootstrap", "subsample", "parametric")


@dataclass(frozen=True)
class Validation:
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
        predicted: ``{statistic: {method: array (repeats, len(topics))}}``.
        observed: ``{statistic: array (repeats, len(topics))}``.
    """

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
        out = {"statistic": statistic, "method": None, "rule": None, "clear": False, "close": [],
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
        }

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame(list(self.rows))


def _as_scores(scores):
    """What :func:`planner.fit` and :func:`planner.predict` accept: a ScoreMatrix, a path, a wide
    DataFrame (rows topics) or a systems x topics array; anything else is a ParameterError."""
    from .variance import as_matrix

    if isinstance(scores, bytes):
        scores = scores.decode()
    return as_matrix(scores, "scores")


def validate(scores, *, pilot: int, topics: Sequence[int], repeats: int = 20, rng=None,
             methods: str | Sequence[str] = ("predictive", "analytic"), subsets: int = 500,
             grid: int = 121) -> Validation:
    """Check pilot-based predictions against disjoint held-out topic sets.

    Each repeat splits the ``T`` topics at random into a pilot of ``pilot``
    topics and the disjoint remainder of ``R = T - pilot`` topics. From the
    pilot alone every method predicts the mean (over all system pairs) swap
    rate and reversal rate at each ``n`` in ``topics``. On the remainder,
    :func:`observed_rates` measures them with ``subsets`` random pairs of
    disjoint ``n``-topic sets (so ``n <= R // 2``); the reversal is counted
    against the order the pilot showed. Relative error = ``|pred - obs| / obs``
    per repeat; rows report its median over repeats.

    Methods (one name or a list): ``"predictive"`` (default of :func:`predictive_pair_rates`:
    normal empirical-Bayes prior, each pair's own variance; ``"predictive-pair"``
    is the same), ``"predictive-integrated"`` (the same, averaged over each pair's
    variance with ``df = variance_df(pilot, kurtosis of the pilot's differences)``),
    ``"predictive-shrunk"``, ``"predictive-pooled"`` (normal prior
    with the halfway-shrunk / pooled variance), ``"predictive-npmle"`` / ``"predictive-mixture"`` (NPMLE /
    scale-mixture prior, pair variance),
    ``"analytic"`` (plug-in normal model with each pair's own variance); the
    names ``"bootstrap"``, ``"subsample"``, ``"parametric"`` are passed to
    ``planner.simulate.predict(pilot_scores, topics=..., method=name, rng=...)``.

    Randomness: repeat ``r`` uses the ``r``-th child stream of ``rng`` for its
    split, its held-out subsets and any resampling method (each method a stream keyed on
    its name), so results do not depend on how many repeats are run together, nor a
    method's numbers on which other methods are listed. ``rng=None`` draws a seed and
    records it (``seed``), so the run can be repeated.

    Memory: about ``2e6`` float64 working values plus ``S * T`` and
    ``subsets * R`` index values; see :func:`observed_rates`.
    """
    from ._random import child_streams, keyed_stream, seed_of, seed_to_use

    sm = _as_scores(scores)
    if sm.has_missing:
        raise ParameterError("validation needs a complete score matrix (no missing cells)", parameter="scores")
    x = sm.topic_scores()
    S, T = x.shape
    if isinstance(pilot, bool) or not isinstance(pilot, (int, np.integer)) or pilot < 2:
        raise ParameterError(f"pilot size must be an integer >= 2, got {pilot!r}", parameter="pilot")
    R = T - int(pilot)
    if R < 2:
        raise ParameterError(f"pilot of {pilot} leaves {max(R, 0)} of {T} topics to hold out; "
                             "need at least 2", parameter="pilot")
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
    t = t.astype(np.int64)
    for name, v, most in (("repeats", repeats, 100_000), ("subsets", subsets, 100_000)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= most:
            raise ParameterError(f"{name} must be an integer from 1 to {most:,}, got {v!r}", parameter=name)
    if isinstance(methods, str):
        methods = (methods,)        # one method name, as score_runs takes one measure
    methods = tuple(str(m) for m in methods)
    if not methods:
        raise ParameterError("no methods given", parameter="methods")
    if len(set(methods)) != len(methods):
        raise ParameterError(f"repeated method in {methods!r}", parameter="methods")
    known = tuple(INTERNAL_METHODS) + _EXTERNAL_METHODS
    for m in methods:
        if m not in known:
            raise ParameterError(f"unknown method {m!r}; expected one of {', '.join(known)}", parameter="methods")

    rng = seed_to_use(rng)
    a, b = pair_index(S)
    need_kurtosis = any(INTERNAL_METHODS.get(m) and INTERNAL_METHODS[m][2] for m in methods)
    pred = {k: {m: np.empty((repeats, t.size)) for m in methods} for k in STATISTICS}
    obs = {k: np.empty((repeats, t.size)) for k in STATISTICS}
    for r, g in enumerate(child_streams(rng, int(repeats))):
        order = g.permutation(T)
        pi, hi = np.sort(order[:pilot]), np.sort(order[pilot:])
        g_obs, g_method = g.spawn(2)
        xp = x[:, pi]
        if need_kurtosis:
            dbar, s2, kurt = pair_moments(xp, a, b, kurtosis=True)
        else:
            (dbar, s2), kurt = pair_moments(xp, a, b), None
        o = observed_rates(x[:, hi], t, _sign(dbar), subsets=int(subsets), rng=g_obs)
        for k in STATISTICS:
            obs[k][r] = o[k]
        pilot_sm = None
        for m in methods:
            if m not in INTERNAL_METHODS and pilot_sm is None:
                pilot_sm = sm.collapse_variants().take(topics=pi)
            p = _predict_means(m, dbar, s2, kurt, int(pilot), t, scores_pilot=pilot_sm,
                               rng=None if m in INTERNAL_METHODS else keyed_stream(g_method, m),
                               prior_options={"grid": grid})
            for k in STATISTICS:
                pred[k][m][r] = p[k]

    rows = []
    for k in STATISTICS:
        o = obs[k]
        zero = o <= 0
        if zero.any():
            import warnings

            warnings.warn(f"observed {k} is 0 in {int(zero.sum())} (repeat, n) cells; "
                          "their relative error is undefined and left out", DegenerateDataWarning, stacklevel=2)
        for m in methods:
            p = pred[k][m]
            with np.errstate(divide="ignore", invalid="ignore"):
                rel = np.where(zero, np.nan, np.abs(p - o) / np.where(zero, 1.0, o))
                ratio = np.where(zero, np.nan, p / np.where(zero, 1.0, o))
                ok = np.isfinite(ratio) & (ratio > 0)
            for j, n in enumerate(t):
                col = rel[:, j]
                col = col[np.isfinite(col)]
                pm, om = float(p[:, j].mean()), float(o[:, j].mean())
                rows.append({
                    "statistic": k, "method": m, "n_topics": int(n),
                    "predicted_mean": pm, "observed_mean": om,
                    "rel_error_median": float(np.median(col)) if col.size else math.nan,
                    "rel_error_median_se": median_se(col),
                    "rel_error_p90": float(np.quantile(col, 0.9)) if col.size else math.nan,
                    "rel_error_mean": float(np.mean(col)) if col.size else math.nan,
                    "rel_error_of_means": abs(pm - om) / om if om > 0 else math.nan,
                    "ratio_median": float(np.median(ratio[:, j][np.isfinite(ratio[:, j])]))
                    if np.isfinite(ratio[:, j]).any() else math.nan,
                    "log_ratio_sd": float(np.std(np.log(ratio[:, j][ok[:, j]]), ddof=1))
                    if ok[:, j].sum() > 1 else math.nan,
                })
    return Validation(methods=methods, pilot=int(pilot), topics=tuple(int(n) for n in t), repeats=int(repeats),
                      subsets=int(subsets), seed=seed_of(rng), n_systems=S, n_topics=T, measure=sm.measure,
                      source=sm.source, rows=tuple(rows), predicted=pred, observed=obs)
