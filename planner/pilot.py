"""Pilot-aware prediction of swap and reversal rates, and its validation.

A pilot of ``n0`` topics gives, for every pair of systems ``(a, b)``, the mean
per-topic difference ``dbar`` and its variance ``s2_d`` (ddof=1). The plain
*plug-in* normal model treats ``dbar`` as the true difference ``delta``:

    p    = Phi(-|dbar| sqrt(n) / s_d)
    swap = 2 p (1 - p)                      (two independent n-topic sets disagree)
    rev  = p                                (an n-topic set disagrees with the pilot)

Because ``|dbar|`` overstates ``|delta|`` for close pairs (regression to the
mean), the plug-in model understates future swaps. The *predictive* method
treats ``delta`` as unknown:

1. **Empirical-Bayes prior.** ``delta`` of a pair is drawn from a prior ``G``
   that is fitted to all pairs of the pilot, each pair's ``dbar`` being
   ``N(delta, se2)`` with ``se2 = s2_d / n0``. ``G`` is symmetric about 0 (pair
   orientation is arbitrary: both ``dbar`` and ``-dbar`` enter the fit).

   - ``prior="npmle"`` (default): the nonparametric maximum-likelihood prior
     (Kiefer-Wolfowitz), a discrete distribution on a fixed grid of ``grid``
     points spanning ``[-max|dbar|, max|dbar|]``, fitted by EM on at most
     ``max_fit_pairs`` pairs (evenly spaced in pair order when there are more).
   - ``prior="normal"``: ``G = N(0, tau2)``, ``tau2 = max(0, mean(dbar^2) -
     mean(se2))`` (method of moments).

2. **Posterior** of ``delta`` given the pilot's ``dbar`` (Bayes' rule on the
   grid, or the conjugate normal ``N(m, v)`` with ``m = dbar tau2/(tau2+se2)``,
   ``v = tau2 se2/(tau2+se2)``).

3. **Posterior predictive** of the means ``A`` and ``B`` of two independent
   n-topic sets: given ``delta`` they are independent ``N(delta, s2_d/n)``, so

       swap(n) = E_post[ 2 p (1 - p) ],   p = Phi(-|delta| sqrt(n) / s_d)
       rev(n)  = E_post[ Phi(-sign(dbar) delta sqrt(n) / s_d) ]

   For the normal prior this is closed form: ``A`` and ``B`` are jointly normal
   with mean ``m``, variance ``v + s2_d/n`` and correlation
   ``rho = v / (v + s2_d/n)``, so ``swap = 2 (P(A>0) - P(A>0, B>0))
   = 4 T(h, sqrt((1-rho)/(1+rho)))`` with Owen's T and ``h = |m| / sqrt(v +
   s2_d/n)``; ``rev = Phi(-h)``.

``s_d`` is the pilot's per-pair standard deviation in all cases (``variance =
"pair"``). Pairs with ``s2_d = 0`` (systems differing by the same amount on every
pilot topic, e.g. identical systems) have swap and reversal rate 0 and do not
enter the prior fit. A pair with ``dbar = 0`` and ``s2_d > 0`` has no observed
order; its reversal rate is 0.5 (a tie counts half).

:func:`validate` checks predictions against held-out topics; see its docstring
and ``docs/validation.md`` for the exact procedure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from scipy import special

from .errors import DegenerateDataWarning, ParameterError

PRIORS = ("npmle", "normal")

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
        kind: ``"npmle"`` or ``"normal"``.
        grid: support points (npmle), or empty.
        weights: probabilities of the grid points (npmle), or empty.
        tau2: variance of the prior (for npmle: of the fitted discrete prior).
        n0: pilot size the prior was fitted for.
        n_pairs: number of pairs used in the fit.
        iterations: EM iterations used (npmle), 0 for normal.
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


def fit_prior(dbar, s2_d, n0, *, prior: str = "npmle", grid: int = 121, max_fit_pairs: int = 20_000,
              max_iter: int = 500, tol: float = 1e-7) -> Prior:
    """Fit the symmetric empirical-Bayes prior on ``delta`` (module docstring).

    Memory: ``min(pairs, max_fit_pairs) * 2 * grid`` float64 values for npmle.
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
    if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)) or grid < 3:
        raise ParameterError(f"grid must be an integer >= 3, got {grid!r}", parameter="grid")
    if d.size > max_fit_pairs:
        idx = np.linspace(0, d.size - 1, max_fit_pairs).round().astype(np.int64)
        d, se2 = d[idx], se2[idx]
    x = np.concatenate([d, -d])
    se = np.sqrt(np.concatenate([se2, se2]))
    top = float(np.max(np.abs(x)))
    if top == 0.0:
        return Prior("npmle", np.zeros(1), np.ones(1), 0.0, n0, int(d.size))
    g = np.linspace(-top, top, int(grid) | 1)  # odd count: 0 is a grid point
    # log-likelihood of each observation at each grid point, rescaled per row
    ll = -0.5 * ((x[:, None] - g[None, :]) / se[:, None]) ** 2
    ll -= ll.max(axis=1, keepdims=True)
    L = np.exp(ll)
    w = np.full(g.size, 1.0 / g.size)
    it = 0
    prev = -np.inf
    for it in range(1, max_iter + 1):
        f = L @ w
        obj = float(np.sum(np.log(f)))
        w = w * (L.T @ (1.0 / f)) / x.size
        w = 0.5 * (w + w[::-1])  # keep exact symmetry
        w /= w.sum()
        if obj - prev < tol * abs(obj) and it > 10:
            break
        prev = obj
    tau2 = float(np.sum(w * g * g))
    return Prior("npmle", g, w, tau2, n0, int(d.size), it)


def predictive_pair_rates(dbar, s2_d, n0, topics, *, prior: str | Prior = "npmle", grid: int = 121,
                          max_fit_pairs: int = 20_000) -> dict[str, np.ndarray]:
    """Posterior-predictive swap and reversal rates of every pair (module docstring).

    Args:
        dbar: per-pair mean difference on the pilot, shape ``(pairs,)``.
        s2_d: per-pair variance (ddof=1) of the per-topic differences on the pilot.
        n0: number of pilot topics.
        topics: topic counts ``n`` to predict for.
        prior: ``"npmle"`` (default), ``"normal"``, or a fitted :class:`Prior`.

    Returns:
        ``{"swap_rate": ..., "reversal_rate": ...}``, each shape ``(pairs, len(topics))``.

    Memory: about ``max(chunk * grid, min(pairs, max_fit_pairs) * 2 * grid)``
    float64 values, with ``chunk = 2e6 // grid`` pairs per block, plus the
    outputs ``2 * pairs * len(topics)``.
    """
    dbar, s2_d, n0, t = _check_pair_inputs(dbar, s2_d, n0, topics)
    pr = prior if isinstance(prior, Prior) else fit_prior(dbar, s2_d, n0, prior=prior, grid=grid,
                                                            max_fit_pairs=max_fit_pairs)
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
        var_n = s2_d[idx][:, None] / t[None, :]
        tot = v[:, None] + var_n
        h = np.abs(m)[:, None] / np.sqrt(tot)
        rho = v[:, None] / tot
        a = np.sqrt((1.0 - rho) / (1.0 + rho))
        swap[idx] = 4.0 * special.owens_t(h, a)
        r = _norm_cdf(-h)
        r[d == 0] = 0.5
        rev[idx] = r
        return {"swap_rate": swap, "reversal_rate": rev}
    g, w = pr.grid, pr.weights
    keep = w > 0
    g, logw = g[keep], np.log(w[keep])
    chunk = max(1, _BLOCK // max(1, g.size))
    for lo in range(0, idx.size, chunk):
        ii = idx[lo:lo + chunk]
        d = dbar[ii]
        sd = np.sqrt(s2_d[ii])
        se = sd / math.sqrt(n0)
        lp = -0.5 * ((d[:, None] - g[None, :]) / se[:, None]) ** 2 + logw[None, :]
        lp -= lp.max(axis=1, keepdims=True)
        post = np.exp(lp)
        post /= post.sum(axis=1, keepdims=True)
        sgn = np.sign(d)
        for j, sn in enumerate(sqrt_n):
            z = g[None, :] * (sn / sd)[:, None]  # delta sqrt(n) / s_d
            p = _norm_cdf(-np.abs(z))
            swap[ii, j] = np.sum(post * (2.0 * p * (1.0 - p)), axis=1)
            r = np.sum(post * _norm_cdf(-sgn[:, None] * z), axis=1)
            r[sgn == 0] = 0.5
            rev[ii, j] = r
    return {"swap_rate": swap, "reversal_rate": rev}
