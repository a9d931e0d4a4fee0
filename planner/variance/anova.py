"""Two-way ANOVA (method of moments) of a systems x topics array, and moment estimates
where cells are missing (the REML start)."""

from __future__ import annotations

import warnings

import numpy as np
from scipy import sparse
from scipy.sparse.linalg import lsqr

from .common import CHUNK_VALUES


def anova2(x: np.ndarray) -> dict:
    """Mean squares and components of a complete (S, T) matrix (the residual summed in
    chunks of ``CHUNK_VALUES`` floats)."""
    S, T = x.shape
    m_s = x.mean(axis=1)
    m_t = x.mean(axis=0)
    m = float(m_s.mean())
    ss_s = T * float(np.sum((m_s - m) ** 2))
    ss_t = S * float(np.sum((m_t - m) ** 2))
    ss_e = 0.0
    step = max(1, CHUNK_VALUES // max(T, 1))
    base = m_t - m
    for i in range(0, S, step):
        r = x[i:i + step] - m_s[i:i + step, None]
        r -= base[None, :]  # (in place: one temporary of the chunk, the same values)
        ss_e += float(np.einsum("ij,ij->", r, r))
    df_s, df_t = S - 1, T - 1
    df_e = df_s * df_t
    ms_s, ms_t, ms_e = ss_s / df_s, ss_t / df_t, ss_e / df_e
    return {"ms_s": ms_s, "ms_t": ms_t, "ms_e": ms_e, "df_s": df_s, "df_t": df_t, "df_e": df_e,
            "var_s": (ms_s - ms_e) / T, "var_t": (ms_t - ms_e) / S, "var_e": ms_e,
            "grand_mean": m, "n_systems": S, "n_topics": T, "n_cells": S * T, "converged": True}


def anova_components(x: np.ndarray) -> dict:
    """Two-way ANOVA (method of moments) components of a complete ``(S, T)`` array, unchunked.

    ``var_s = (MS_s - MS_e)/T``, ``var_t = (MS_t - MS_e)/S``, ``var_e = MS_e``; ``var_s``
    and ``var_t`` truncated to 0 (also when undefined, S or T < 2). Returns those and the mean
    squares as floats, with no validation or warnings: the array-level helper planner.plan and
    planner.simulate use (bootstrap resamples, strata). :func:`planner.variance.fit` uses
    :func:`anova2` (same definitions, residual summed in memory-bounded chunks), which agrees
    to rounding (about 1e-14 relative on the TREC matrices), not bit for bit.

    Examples
    --------
    >>> import numpy as np
    >>> est = anova_components(np.array([[0.2, 0.4, 0.6], [0.3, 0.6, 0.6]]))
    >>> round(est["var_e"], 4), round(est["ms_s"], 4)
    (0.005, 0.015)
    """
    S, T = x.shape
    mu = x.mean()
    ms = x.mean(axis=1)
    mt = x.mean(axis=0)
    ss_s = T * ((ms - mu) ** 2).sum()
    ss_t = S * ((mt - mu) ** 2).sum()
    resid = x - ms[:, None] - mt[None, :] + mu
    ss_e = (resid ** 2).sum()
    ms_s, ms_t, ms_e = ss_s / (S - 1), ss_t / (T - 1), ss_e / ((S - 1) * (T - 1))
    return {"var_s": float(max(0.0, (ms_s - ms_e) / T)), "var_t": float(max(0.0, (ms_t - ms_e) / S)),
            "var_e": float(ms_e), "ms_s": float(ms_s), "ms_t": float(ms_t), "ms_e": float(ms_e)}


def moment_start(x: np.ndarray) -> tuple[float, float, float, float]:
    """(var_s, var_t, var_e, mean) to start REML from: the ANOVA estimates on a complete
    matrix, rough moment estimates from the observed cells otherwise; floored at 1% of var_e."""
    if not np.isnan(x).any():
        est = anova2(x)
        var_e = est["var_e"] if est["var_e"] > 0 else 1e-6
        floor = 0.01 * var_e
        return max(est["var_s"], floor), max(est["var_t"], floor), var_e, est["grand_mean"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        m = float(np.nanmean(x))
        m_s = np.nanmean(x, axis=1)
        m_t = np.nanmean(x, axis=0)
        r = x - m_s[:, None] - m_t[None, :] + m
        var_e = float(np.nanvar(r))
        n_s = np.sum(~np.isnan(x), axis=1)
        n_t = np.sum(~np.isnan(x), axis=0)
        var_s = float(np.nanvar(m_s) - var_e * np.nanmean(1.0 / np.maximum(n_s, 1)))
        var_t = float(np.nanvar(m_t) - var_e * np.nanmean(1.0 / np.maximum(n_t, 1)))
    var_e = var_e if var_e > 0 else 1e-6
    floor = 0.01 * var_e
    return max(var_s, floor), max(var_t, floor), var_e, m


def no_residual(x: np.ndarray) -> bool:
    """Whether the additive model ``mu + a[s] + b[t]`` fits every observed cell (to rounding):
    least squares on the observed cells (scipy's ``lsqr`` on the sparse design)."""
    S, T = x.shape
    if not np.isnan(x).any():   # complete: the two-way ANOVA residual
        est = anova2(x)
        return est["ms_e"] <= 1e-13 * (est["ms_s"] + est["ms_t"] + est["ms_e"])
    r, c = np.nonzero(~np.isnan(x))
    y = x[r, c]
    total = float(np.sum((y - y.mean()) ** 2))
    if total == 0.0:
        return True
    k = y.size
    design = sparse.csr_matrix((np.ones(2 * k), (np.repeat(np.arange(k), 2),
                                                 np.column_stack([r, S + c]).ravel())), shape=(k, S + T))
    sol = lsqr(design, y - y.mean(), atol=1e-15, btol=1e-15, iter_lim=20 * (S + T))[0]
    resid = (y - y.mean()) - design @ sol
    return float(resid @ resid) <= 1e-20 * total
