"""The analytic engine: the normal / t closed forms with the observed differences plugged in.

With ``sigma2`` a pair's variance under the ``variance=`` selector and ``se^2 = sum_k
W_k^2 sigma2_k / n_k`` (``se^2 = sigma2 / n`` with one stratum): ``p = Phi(-|dbar| /
se)``, ``reversal = p``, ``swap = 2 p (1 - p)``, ``ci_width = 2 t_{1-alpha/2, df} se``,
``power = P(|T'| > t_{1-alpha/2, df})`` with ``T'`` noncentral t (noncentrality
``min_diff / se``), ``significant`` the same at ``|dbar| / se``; ``df = n - K``.
The noncentral-t power is read from a cubic spline through ``scipy.special.nctdtr`` on a
grid of noncentrality step :data:`NCT_STEP`, one per ``(df, crit)`` (built in a few
milliseconds, cached): absolute error below ``1e-7`` against ``scipy.stats.nct`` (tested
over df 1-10,000), the same way for any number of values.

Examples
--------
>>> import numpy as np
>>> from planner.simulate.analytic import t_power
>>> t_power(np.array([0.0, 3.0]), 19, 2.093).round(3).tolist()
[0.05, 0.812]
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import interpolate, special, stats

from .engine import PairEngine, Setup
from .pairs import pair_moments, select_variance
from .work import Shape, Work

__all__ = ["NCT_STEP", "AnalyticEngine", "analytic_stats", "t_power"]

NCT_STEP = 0.0625  # the spline error scales as step^4: 2e-8 at most here (df 1-10,000)


def _nct_cdf(df: float, nc: np.ndarray, x: float) -> np.ndarray:
    # scipy's nctdtr returns NaN far in the tails (values below ~1e-16); those are 0
    v = special.nctdtr(df, nc, x)
    return np.where(np.isnan(v), 0.0, v)


@lru_cache(maxsize=256)
def _power_spline(df: float, crit: float) -> tuple[float, interpolate.CubicSpline]:
    """``(cap, spline)``: two-sided power on the noncentrality grid ``0, step, ...`` up to
    ``cap``, beyond which the power is 1 within ``1e-14``. The power is even in the
    noncentrality: its slope at 0 is 0 (the spline's left end condition)."""
    cap = crit + 2.0 ** 12
    for step in 2.0 ** np.arange(0, 13):
        c = np.array([crit + step])
        if (_nct_cdf(df, c, -crit) + 1.0 - _nct_cdf(df, c, crit))[0] >= 1 - 1e-14:
            cap = float(c[0])
            break
    grid = np.arange(0.0, cap + NCT_STEP, NCT_STEP)
    val = _nct_cdf(df, grid, -crit) + 1.0 - _nct_cdf(df, grid, crit)
    return cap, interpolate.CubicSpline(grid, val, bc_type=((1, 0.0), "not-a-knot"))


def t_power(nc: np.ndarray, df: float, crit: float) -> np.ndarray:
    """Two-sided rejection probability ``P(|T'| > crit)``, ``T'`` noncentral t(df, nc)."""
    nc = np.abs(np.asarray(nc, dtype=float))
    cap, spline = _power_spline(float(df), float(crit))
    out = spline(np.minimum(nc, cap))  # also maps inf to cap (power 1)
    out[nc >= cap] = 1.0
    return np.clip(out, 0.0, 1.0)


def analytic_stats(dbar: np.ndarray, sig2_k: np.ndarray, W: np.ndarray, nk: np.ndarray, df: float,
                   alpha: float, min_diff: float) -> dict[str, np.ndarray]:
    """Analytic statistics for a chunk of pairs at one n. ``sig2_k``: (C, K) per-stratum variances."""
    se2 = (sig2_k * (W ** 2 / nk)[None, :]).sum(axis=1)
    se = np.sqrt(se2)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.abs(dbar) / se
    z = np.where(se > 0, z, np.where(dbar != 0, np.inf, 0.0))
    p = special.ndtr(-z)
    p = np.where(dbar == 0, 0.5, p)
    crit = stats.t.ppf(1 - alpha / 2, df)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):   # an overflow is power 1
        nc_pow = np.where(se > 0, min_diff / se, np.inf)
    return {
        "swap_rate": 2 * p * (1 - p),
        "reversal_rate": p,
        "ci_width": 2 * crit * se,
        "power": t_power(nc_pow, df, crit),
        "significant": np.where(dbar == 0, np.where(se > 0, alpha, 0.0), t_power(z, df, crit)),
    }


class AnalyticEngine(PairEngine):
    """Closed forms per chunk of pairs; the per-stratum variances of a chunk serve every n."""

    def __init__(self, setup: Setup):
        super().__init__(setup)
        s, K = setup, setup.n_strata
        # per-stratum variances of each pair under the selector
        self._all = select_variance(s.variance, s.s2, s.x) if K == 1 else None
        # a selector other than "pair" gives one variance per stratum, from all its pairs
        self._groups = [None if s.variance == "pair" else
                        select_variance(s.variance, pair_moments(s.x[:, g], s.a, s.b, block=s.pair_block)[1],
                                        s.x[:, g])[0]
                        for g in s.groups] if K > 1 else None
        self._cached: tuple[tuple[int, int], object] | None = None

    @staticmethod
    def memory(setup: Setup) -> tuple[int, int]:
        # about 12 + 6 K float64 values per pair (measured by benchmarks/bench_bootstrap.py); with
        # strata, beside the chunk, the pair pass of each stratum's variances (:meth:`stratum_variances`)
        return 8 * (12 + 6 * max(1, setup.n_strata)), 24 * AnalyticEngine.stratum_block(setup)

    @staticmethod
    def stratum_block(setup: Setup) -> int:
        """Differences per block of the per-chunk pair pass of the strata's variances (0: none):
        half the setup's pair block, so that the pass and the chunk's pairs share ``max_memory``."""
        if setup.n_strata == 1 or setup.variance != "pair":
            return 0
        return max(setup.x.shape[1], setup.pair_block // 2)

    @staticmethod
    def work(shape: Shape) -> Work:
        # about 32 units a pair and topic count (the noncentral t's spline; measured,
        # docs/research/known-limits.md); nothing drawn
        return Work(32.0 * shape.pairs * len(shape.counts) * shape.strata, 0)

    def per_chunk(self, pairs: slice):
        """Work done once per chunk and reused at every n (here the variances ``(C, K)``)."""
        return self.stratum_variances(pairs)

    def _chunk_state(self, pairs: slice):
        key = (pairs.start, pairs.stop)
        if self._cached is None or self._cached[0] != key:
            self._cached = None
            self._cached = (key, self.per_chunk(pairs))
        return self._cached[1]

    def stratum_variances(self, pairs: slice) -> np.ndarray:
        """Each pair's variance per stratum under the selector, shape ``(pairs, K)``."""
        s = self.setup
        if self._all is not None:
            return self._all[pairs][:, None]
        cols = []
        for g, sg in zip(s.groups, self._groups or ()):
            if sg is not None:
                cols.append(np.full(pairs.stop - pairs.start, sg))
            else:
                cols.append(pair_moments(s.x[:, g], s.a[pairs], s.b[pairs], block=self.stratum_block(s))[1])
        return np.stack(cols, axis=1)

    def analytic(self, j: int, pairs: slice, sig2_k: np.ndarray) -> dict[str, np.ndarray]:
        """The closed forms of ``pairs`` at topic count index ``j``."""
        s, K = self.setup, self.setup.n_strata
        nk = s.allocs[j]
        assert nk is not None  # every count is computed in closed form
        Wk = s.weights if K > 1 else np.ones(1)
        return analytic_stats(s.dbar[pairs], sig2_k, Wk, nk.astype(float), s.topics[j] - K, s.alpha, s.min_diff)

    def chunk(self, j: int, pairs: slice) -> dict[str, np.ndarray]:
        return self.analytic(j, pairs, self._chunk_state(pairs))
