"""Power and expected interval width of the classical designs (vectorised over n and delta).

The formulas are in :mod:`planner.plan` (module docstring) and ``docs/planning.md``: exact
noncentral t and F, and Sakai's normal approximations of them (his Excel tools).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import optimize, special, stats

from ..errors import ParameterError

__all__ = ["design_power", "expected_width", "sakai_initial_n", "t_power_exact"]

ArrayLike = Any


def _crit_t(alpha: float, df: ArrayLike) -> np.ndarray:
    return stats.t.isf(alpha / 2.0, df)


def t_power_exact(df: ArrayLike, nc: ArrayLike, alpha: float) -> np.ndarray:
    """Two-sided t-test power for noncentral t(df, nc).

    Examples
    --------
    >>> round(float(t_power_exact(19, 2.5, 0.05)), 4)
    0.6599
    """
    tc = _crit_t(alpha, df)
    nc = np.asarray(nc, dtype=float)
    with np.errstate(invalid="ignore"):
        up = stats.nct.sf(tc, df, nc)
        lo = stats.nct.cdf(-tc, df, nc)
    # scipy's nct returns NaN for some tiny tail probabilities: the tail opposite to nc
    # (from |nc| > 5, e.g. df 1, nc 11.3; it is below P(Z < -|nc|) < 2e-7 there) is then 0,
    # and far out (|nc| - tc > ~37) the power itself is 1
    pos = nc >= 0
    up = np.where(np.isnan(up) & ~pos, 0.0, up)
    lo = np.where(np.isnan(lo) & pos, 0.0, lo)
    p = up + lo
    return np.where(np.isnan(p) & (np.abs(nc) > tc), 1.0, p)


def _t_power_sakai(df: ArrayLike, nc: ArrayLike, alpha: float) -> np.ndarray:
    """Sakai's (Nagata's) normal approximation of the noncentral t power."""
    df = np.asarray(df, dtype=float)
    tc = _crit_t(alpha, df)
    denom = np.sqrt(1.0 + tc ** 2 / (2.0 * df))
    a = tc * (1.0 - 1.0 / (4.0 * df))
    return stats.norm.sf((a - nc) / denom) + stats.norm.cdf((-a - nc) / denom)


def _f_power_exact(df1: ArrayLike, df2: ArrayLike, lam: ArrayLike, alpha: float) -> np.ndarray:
    fc = stats.f.isf(alpha, df1, df2)
    lam = np.asarray(lam, dtype=float)
    with np.errstate(invalid="ignore"):
        p = stats.ncf.sf(fc, df1, df2, np.where(np.isinf(lam), 1.0, lam))
    return np.where(np.isinf(lam), 1.0, p)     # an infinite noncentrality: power 1


def _f_power_sakai(df1: ArrayLike, df2: ArrayLike, lam: ArrayLike, alpha: float) -> np.ndarray:
    df1 = np.asarray(df1, dtype=float)
    df2 = np.asarray(df2, dtype=float)
    lam = np.asarray(lam, dtype=float)
    big = np.isinf(lam)
    lam = np.where(big, 1.0, lam)
    fc = stats.f.isf(alpha, df1, df2)
    c = (df1 + 2 * lam) / (df1 + lam)
    g = df1 * fc / df2
    w = (np.sqrt(g * (2 * df2 - 1)) - np.sqrt(np.maximum(2 * (df1 + lam) - c, 0.0))) / np.sqrt(g + c)
    return np.where(big, 1.0, stats.norm.sf(w))


def _t_power(approx: str) -> Callable[..., np.ndarray]:
    return t_power_exact if approx == "exact" else _t_power_sakai


def _f_power(approx: str) -> Callable[..., np.ndarray]:
    return _f_power_exact if approx == "exact" else _f_power_sakai


def _c_factor(n: ArrayLike) -> np.ndarray:
    """``E[s] / sigma`` for a sample of size n from a normal population."""
    n = np.asarray(n, dtype=float)
    return np.sqrt(2.0 / (n - 1)) * np.exp(special.gammaln(n / 2) - special.gammaln((n - 1) / 2))


def expected_width(n: ArrayLike, sigma2: ArrayLike, alpha: float) -> np.ndarray:
    """Expected width of the ``1 - alpha`` t interval of a mean difference at ``n`` topics.

    ``E[W] = 2 t_{1-alpha/2}(n-1) c(n) sigma / sqrt(n)`` with ``E[s] = c(n) sigma``.

    Examples
    --------
    >>> round(float(expected_width(50, 0.02, 0.05)), 4)
    0.08
    """
    n = np.asarray(n, dtype=float)
    return 2.0 * _crit_t(alpha, n - 1) * _c_factor(n) * np.sqrt(sigma2 / n)


def design_power(design: str, n: ArrayLike, delta: ArrayLike, sigma2: ArrayLike, *, alpha: float = 0.05,
                 systems: int = 2, approx: str = "exact") -> np.ndarray:
    """Power of a classical design at ``n`` topics for a true difference (or range) ``delta``.

    Parameters
    ----------
    design : {"paired-t", "two-sample", "anova"}
        The test (not defined for ``"ci"``, which has no power).
    n, delta : float or array
        Topics (per system for two-sample) and the true difference (anova: the range, best
        minus worst system); vectorised.
    sigma2 : float or array
        Variance of per-topic differences (paired-t) or within-system variance.
    alpha : float, optional
        Per-comparison level (apply any multiple-comparison correction before).
    systems : int, optional
        Number of systems of the anova design.
    approx : {"exact", "sakai"}, optional
        Exact noncentral t / F, or Sakai's normal approximations.

    Returns
    -------
    numpy.ndarray
        The power, shaped as ``n`` and ``delta`` broadcast.

    Examples
    --------
    >>> round(float(design_power("paired-t", 50, 0.05, 0.02)), 4)
    0.6882
    >>> round(float(design_power("anova", 5, 6 ** 0.5, 3.0, systems=4)), 7)   # R power.anova.test
    0.3535594
    """
    with np.errstate(over="ignore"):    # a noncentrality that overflows is inf: power 1
        n = np.asarray(n, dtype=float)
        delta = np.abs(np.asarray(delta, dtype=float))
        sigma2 = np.asarray(sigma2, dtype=float)
        if design == "paired-t":
            return _t_power(approx)(n - 1, np.sqrt(n) * delta / np.sqrt(sigma2), alpha)
        if design == "two-sample":
            return _t_power(approx)(2 * (n - 1), np.sqrt(n / 2) * delta / np.sqrt(sigma2), alpha)
        if design == "anova":
            lam = n * delta ** 2 / (2 * sigma2)
            return _f_power(approx)(systems - 1, systems * (n - 1), lam, alpha)
    raise ParameterError(f"no power function for design {design!r}", parameter="design")


def sakai_initial_n(design: str, delta: float, sigma2: ArrayLike, *, alpha: float = 0.05, power: float = 0.8,
                    systems: int = 2) -> np.ndarray:
    """Sakai's normal-theory starting value n' of a design (his tools step up from ``ceil(n')``).

    Parameters
    ----------
    design : {"paired-t", "two-sample", "anova", "ci"}
        The design.
    delta : float
        The minimum detectable difference (anova: range; ci: the width cap).
    sigma2 : float or array
        The design's variance; vectorised.
    alpha, power : float, optional
        Level and target power.
    systems : int, optional
        Number of systems (anova).

    Returns
    -------
    numpy.ndarray
        With ``z_a = z_{alpha/2}``, ``z_b = z_{1-power}`` (upper points), ``D = delta / sigma``:
        paired-t ``((z_a + z_b)/D)^2 + z_a^2/2``; two-sample ``2 ((z_a + z_b)/D)^2 + z_a^2/4``;
        anova ``lambda / (delta^2 / (2 sigma2))`` with ``lambda`` the noncentrality at which
        the noncentral chi-square test with ``m-1`` degrees of freedom has the target power;
        ci ``4 z_a^2 sigma2 / delta^2``.

    Examples
    --------
    >>> round(float(sakai_initial_n("paired-t", 0.05, 0.02)), 3)
    64.712
    """
    sigma2 = np.asarray(sigma2, dtype=float)
    delta = np.float64(delta)      # (a Python float raises OverflowError on delta ** 2)
    za = stats.norm.isf(alpha / 2)
    with np.errstate(over="ignore"):    # an effect that overflows needs the fewest topics
        if design == "ci":
            return 4 * za ** 2 * sigma2 / delta ** 2
        zb = stats.norm.isf(1 - power)
        d = delta / np.sqrt(sigma2)
        if design == "paired-t":
            return ((za + zb) / d) ** 2 + za ** 2 / 2
        if design == "two-sample":
            return 2 * ((za + zb) / d) ** 2 + za ** 2 / 4
        if design == "anova":
            return _ncx2_lambda(systems - 1, alpha, power) / (delta ** 2 / (2 * sigma2))
    raise ParameterError(f"unknown design {design!r}", parameter="design")


def _ncx2_lambda(df: int, alpha: float, power: float) -> float:
    """Noncentrality at which P(chi'^2(df, lambda) >= chi^2_{1-alpha}(df)) = power."""
    c = stats.chi2.isf(alpha, df)

    def short(lam: float) -> float:
        return float(stats.ncx2.sf(c, df, lam)) - power

    hi = 1.0
    while short(hi) < 0:
        hi *= 2
    return float(optimize.brentq(short, 1e-12, hi, xtol=1e-12, rtol=1e-12))
