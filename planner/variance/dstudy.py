"""D-study: Erho2 and Phi at ``n`` topics, their intervals (Feldt; Arteaga, Jeyaratnam and
Franklin) and the topics needed for a target (the formulas are in :mod:`planner.variance`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import stats

from ..results import Interval, IntervalMethod, ResultMixin
from .common import ceil_or_inf

#: the closed-form interval behind each coefficient's count
INTERVAL_NAMES = {"erho2": "Feldt", "phi": "Arteaga-Jeyaratnam-Franklin"}


@dataclass(frozen=True, repr=False)
class DStudy(ResultMixin):
    """Erho2 and Phi at several topic counts, with intervals.

    Attributes
    ----------
    n_topics : tuple of float
        The topic counts.
    alpha : float
        Two-sided level; intervals cover ``1 - alpha`` (each tail ``alpha / 2``).
    erho2, erho2_lower, erho2_upper : tuple of float
        Generalizability coefficient and its Feldt interval.
    phi, phi_lower, phi_upper : tuple of float
        Dependability index and its Arteaga-Jeyaratnam-Franklin interval.
    """

    n_topics: tuple[float, ...]
    alpha: float
    erho2: tuple[float, ...]
    erho2_lower: tuple[float, ...]
    erho2_upper: tuple[float, ...]
    phi: tuple[float, ...]
    phi_lower: tuple[float, ...]
    phi_upper: tuple[float, ...]

    _repr_fields = ("n_topics", "alpha")

    @property
    def rows(self) -> list[dict]:
        """One dict a topic count (an integral count as an ``int``)."""
        keys = ("n_topics", "erho2", "erho2_lower", "erho2_upper", "phi", "phi_lower", "phi_upper")
        cols = [getattr(self, k) for k in keys]
        out = []
        for vals in zip(*cols):
            row: dict[str, float | int] = dict(zip(keys, (float(v) for v in vals)))
            if float(row["n_topics"]).is_integer():
                row["n_topics"] = int(row["n_topics"])
            out.append(row)
        return out

    def to_dict(self) -> dict:
        """``alpha``, the intervals' names and :attr:`rows`."""
        return {"alpha": float(self.alpha), "interval": "Feldt (Erho2), Arteaga-Jeyaratnam-Franklin (Phi)",
                "rows": self.rows}

    def to_frame(self) -> pd.DataFrame:
        """One row a topic count."""
        return pd.DataFrame(self.rows)


@dataclass(frozen=True, repr=False)
class TopicsNeeded(ResultMixin):
    """Topics needed for a target Erho2 or Phi.

    Attributes
    ----------
    coefficient : str
        ``"erho2"`` or ``"phi"``.
    target : float
        The target value.
    alpha : float
        Two-sided level of the interval.
    n_topics : float
        Point estimate (``inf`` when the system variance is 0).
    interval : Interval
        The ``1 - alpha`` interval of the topic count (Feldt for Erho2, Arteaga-Jeyaratnam-Franklin
        for Phi; ``how`` is ``ANALYTIC``; ``high`` may be ``inf``). ``to_dict()`` gives its ends as
        ``lower`` and ``upper``, integers, and ``None`` for ``inf``.

    Examples
    --------
    >>> from planner import datasets, fit
    >>> need = fit(datasets.load("dl19-passage", measure="nDCG@10")).topics_for(erho2=0.95)
    >>> need.interval.how.value, need.interval.low <= need.n_topics <= need.interval.high
    ('analytic', True)
    """

    coefficient: str
    target: float
    alpha: float
    n_topics: float
    interval: Interval

    _repr_fields = ("coefficient", "target", "n_topics", "interval")

    def to_dict(self) -> dict:
        """Plain fields; the interval's ends as ``lower`` and ``upper`` (``None`` for ``inf``)."""
        def conv(v):       # JSON-safe: an infinite count (or bound) is None, as elsewhere
            return int(v) if np.isfinite(v) else None

        return {"coefficient": self.coefficient, "target": float(self.target), "alpha": float(self.alpha),
                "n_topics": conv(self.n_topics), "lower": conv(self.interval.low),
                "upper": conv(self.interval.high)}


class MeanSquares(NamedTuple):
    """The mean squares and sizes the intervals need."""

    ms_s: float
    ms_t: float
    ms_e: float
    df_s: int
    df_t: int
    df_e: int
    n_systems: int
    n_topics: int

    def clean(self) -> tuple[float, float, float]:
        """``MS_s, MS_t, MS_e`` with rounding noise of an exactly-zero mean square (below
        ``1e-13`` of their sum, e.g. identical systems) set to 0."""
        scale = abs(self.ms_s) + abs(self.ms_t) + abs(self.ms_e)

        def c(v: float) -> float:
            return 0.0 if abs(v) <= 1e-13 * scale else float(v)

        return c(self.ms_s), c(self.ms_t), c(self.ms_e)


def feldt_ratio(ms: MeanSquares, p: float) -> float:
    """Bound on var_s / var_e from the F quantile at probability ``p`` (NaN when both
    mean squares are 0: Erho2 is then 0/0)."""
    ms_s, _, ms_e = ms.clean()
    if ms_e <= 0:
        return math.inf if ms_s > 0 else math.nan
    f = stats.f.ppf(p, ms.df_s, ms.df_e)
    return (ms_s / (ms_e * f) - 1.0) / ms.n_topics


def ajf_phi1(ms: MeanSquares, p: float) -> float:
    """Arteaga-Jeyaratnam-Franklin bound on Phi at one topic, quantiles at ``p``."""
    S, T = ms.n_systems, ms.n_topics
    f1 = stats.chi2.ppf(p, ms.df_s) / ms.df_s
    f2 = stats.f.ppf(p, ms.df_s, ms.df_e)
    f3 = stats.f.ppf(p, ms.df_s, ms.df_t)
    ms_s, ms_t, ms_e = ms.clean()
    num = ms_s ** 2 - f1 * ms_s * ms_e + (f1 - f2) * f2 * ms_e ** 2
    den = (S - 1) * f1 * ms_s * ms_e + f3 * ms_s * ms_t
    if den <= 0:
        # MS_s = 0: no evidence of system variance; MS_t = MS_e = 0 < MS_s: systems
        # differ by the same amount on every topic, Phi is 1 at any n
        return 1.0 if ms_s > 0 and ms_t == 0 and ms_e == 0 else 0.0
    L = num / den
    if L <= 0:
        return 0.0
    return S * L / (S * L + T)


def bounds(ms: MeanSquares, tail: float) -> tuple[float, float, float, float]:
    """``(r_lo, r_hi, p_lo, p_hi)``: Feldt bounds on var_s / var_e and AJF bounds on Phi at
    one topic, each tail ``tail``."""
    return feldt_ratio(ms, 1 - tail), feldt_ratio(ms, tail), ajf_phi1(ms, 1 - tail), ajf_phi1(ms, tail)


def _erho2_bound(r: float, nn: np.ndarray) -> np.ndarray:
    if not np.isfinite(r):   # inf: no residual variance (Erho2 is 1); NaN: 0/0
        return np.ones_like(nn) if r > 0 else np.full_like(nn, np.nan)
    if r <= 0:
        return np.zeros_like(nn)
    return nn * r / (1 + nn * r)


def _phi_bound(p: float, nn: np.ndarray) -> np.ndarray:
    if not np.isfinite(p):
        return np.full_like(nn, np.nan)
    p = min(max(p, 0.0), 1.0)
    return nn * p / (1 + (nn - 1) * p)


def d_study(ms: MeanSquares, nn: np.ndarray, alpha: float, erho2: np.ndarray, phi: np.ndarray) -> DStudy:
    """The :class:`DStudy` at topic counts ``nn`` with point values ``erho2`` and ``phi``."""
    r_lo, r_hi, p_lo, p_hi = bounds(ms, alpha / 2)

    def floats(v: np.ndarray) -> tuple[float, ...]:
        return tuple(float(x) for x in v)

    return DStudy(n_topics=floats(nn), alpha=alpha, erho2=floats(erho2),
                  erho2_lower=floats(_erho2_bound(r_lo, nn)), erho2_upper=floats(_erho2_bound(r_hi, nn)),
                  phi=floats(phi), phi_lower=floats(_phi_bound(p_lo, nn)), phi_upper=floats(_phi_bound(p_hi, nn)))


def topics_needed(ms: MeanSquares, coef: str, g: float, alpha: float, *, var_s: float, var_t: float,
                  var_e: float) -> TopicsNeeded:
    """Topics needed for Erho2 (``coef="erho2"``) or Phi equal to ``g``, with the interval."""
    r_lo, r_hi, p_lo, p_hi = bounds(ms, alpha / 2)
    k = g / (1 - g)
    if coef == "erho2":
        point = ceil_or_inf(k * var_e / var_s) if var_s > 0 else math.inf
        lower = ceil_or_inf(k / r_hi) if r_hi > 0 else math.inf
        upper = ceil_or_inf(k / r_lo) if r_lo > 0 else math.inf
    else:
        point = ceil_or_inf(k * (var_t + var_e) / var_s) if var_s > 0 else math.inf
        lower = ceil_or_inf(k * (1 - p_hi) / p_hi) if p_hi > 0 else math.inf
        upper = ceil_or_inf(k * (1 - p_lo) / p_lo) if p_lo > 0 else math.inf
    ivl = Interval(lower, upper, 1 - alpha, IntervalMethod.ANALYTIC, 0, f"D-study interval ({INTERVAL_NAMES[coef]})")
    return TopicsNeeded(coefficient=coef, target=g, alpha=alpha, n_topics=point, interval=ivl)
