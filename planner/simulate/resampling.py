"""The resampling engine: topics resampled with replacement (bootstrap) or split into
disjoint sets without replacement (subsample, Voorhees & Buckley).

For every topic count the draw counts are made once (from the count's own stream,
:func:`~planner.simulate.kernels.count_stream`), every system's resampled sums follow
from one exact product on the score grid, and the pair statistics of each aligned block
of :data:`~planner.simulate.kernels.BLOCK` pairs are read from them
(:func:`~planner.simulate.kernels.fast_block`); only the t-tests need a product per
block. See the package docstring for the statistics and the memory bound.

Examples
--------
>>> import numpy as np
>>> from planner.simulate.engine import Setup
>>> from planner.simulate.resampling import ResamplingEngine
>>> x = np.array([[0.5, 0.6, 0.7, 0.4], [0.3, 0.5, 0.6, 0.5], [0.1, 0.2, 0.4, 0.3]])
>>> setup = Setup.build(x, "bootstrap", topics=(4,), resamples=200,
...                     base=np.random.SeedSequence(1))
>>> engine = ResamplingEngine.prepare(setup)
>>> [(j, s.start, s.stop) for j, s in engine.pieces(chunk=512)]
[(0, 0, 3)]
>>> engine.chunk(0, slice(0, 3))["reversal_rate"].tolist()
[0.09, 0.0, 0.0]
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
from scipy import stats

from ..variance import score_grid
from .engine import PAIR_STATS, PairEngine, Setup
from .kernels import (
    BLOCK,
    FAST_DTYPE,
    SUB_ELEMS,
    block_sums,
    count_stream,
    fast_block,
    one_blas_thread,
    pair_diff,
    strata_sums,
)

__all__ = ["ResamplingEngine", "draw_counts"]


def draw_counts(g_n: np.random.Generator, groups, nk, resamples: int, disjoint: bool) -> list[np.ndarray]:
    """The draw counts of each stratum, transposed ``(T_k, R_tot)``, built one stratum at a
    time without keeping the untransposed draws.

    With replacement (``disjoint=False``): ``R`` multinomial draws of ``n_k`` topics.
    Disjoint: set A is the first ``n_k`` of a random order, set B the next ``n_k``
    (columns ``j`` and ``R + j``).
    """
    WT = []
    cols = np.arange(resamples)[:, None]
    for g, c in zip(groups, nk):
        if not disjoint:
            cnt = g_n.multinomial(int(c), np.full(g.size, 1.0 / g.size), size=resamples)
            WT.append(np.ascontiguousarray(cnt.T, dtype=np.float64))
            del cnt
        else:
            order = np.argsort(g_n.random((resamples, g.size)), axis=1)
            wt = np.zeros((g.size, 2 * resamples))
            wt[order[:, :c], cols] = 1.0
            wt[order[:, c:2 * c], resamples + cols] = 1.0
            WT.append(wt)
            del order
    return WT


class _OneStratum:
    """One topic count's draws with one stratum: every system's exact resampled sums
    (one small product per n), a product per block only for the t-tests."""

    def __init__(self, s: Setup, WT: list[np.ndarray], n: int, nk: np.ndarray, crit: float, r_tot: int):
        self.s, self.g, self.halves = s, s.groups[0], s.method.disjoint
        qx, unit = score_grid(s.x[:, self.g], int(nk[0]))  # per n: n's numbers depend on n only
        Msys = qx @ WT[0]  # exact integers
        if np.float32 == FAST_DTYPE and float(np.max(np.abs(Msys), initial=0.0)) < 2.0 ** 23:
            # (decimal grids: sums of at most n * 10^k; the float64 copy is dropped)
            Msys = Msys.astype(np.float32)  # still exact: differences subtract exactly in float32
        self.Msys = Msys
        self.WTq = WT[0].astype(FAST_DTYPE) if s.t_tests else None
        self.cprime = crit * crit / (n - 1.0)
        self.scale = unit / n
        self.kappa = self.cprime / (n * (1.0 + self.cprime) * self.scale * self.scale)
        self.sub1 = max(1, SUB_ELEMS // r_tot)

    def block(self, sl: slice) -> dict[str, np.ndarray]:
        s, g = self.s, self.g
        c = sl.stop - sl.start
        Q = None
        if self.WTq is not None:
            d = np.zeros((BLOCK, g.size))  # aligned, zero-padded: same product shape always
            d[:c] = s.x[s.a[sl]][:, g] - s.x[s.b[sl]][:, g]
            d *= d
            d *= self.kappa
            Q = d.astype(FAST_DTYPE) @ self.WTq
        res = {k: np.empty(c) for k in PAIR_STATS}
        for r0 in range(0, c, self.sub1):
            r1 = min(c, r0 + self.sub1)
            part = fast_block(self.Msys, self.scale, s.a[sl][r0:r1], s.b[sl][r0:r1],
                              None if Q is None else Q[r0:r1], s.dbar[sl][r0:r1], s.alpha,
                              s.min_diff, self.cprime, self.halves, FAST_DTYPE)
            for k, v in part.items():
                res[k][r0:r1] = v
        return res


class _Strata:
    """One topic count's draws with ``K > 1`` strata: every system's exact resampled sums per
    stratum (one product per stratum and n), combined once into the stratified means
    (:func:`~planner.simulate.kernels.strata_sums`); per block of pairs only the t-tests'
    sums of squares need a product."""

    def __init__(self, s: Setup, WT: list[np.ndarray], n: int, nk: np.ndarray, crit: float, r_tot: int):
        self.s, self.WT, self.halves = s, WT, s.method.disjoint
        self.Msk, unit, self.Mcomb, self.mscale = strata_sums(s.x, s.groups, nk, WT, n)
        # the t-test rejects when u^2 > Q, mean = mscale * u, Q = crit^2 se^2 / mscale^2:
        # se^2 = sum_k W_k^2 var_k / n_k, var_k = (SS_k - unit^2 D_k^2 / n_k) / (n_k - 1)
        # with D_k the pair's resampled sum of differences on the grid
        W = s.weights
        self.cq = [(crit * W[k] / self.mscale) ** 2 / (nk[k] * (nk[k] - 1.0)) for k in range(len(WT))]
        self.cd = [unit * unit / nk[k] for k in range(len(WT))]
        self.sub1 = max(1, SUB_ELEMS // r_tot)
        self.buf = np.empty((self.sub1, r_tot))
        # the t-tests' work arrays, reused block after block (fresh ones cost page faults)
        self.ss = [np.empty((BLOCK, r_tot)) for _ in WT] if s.t_tests else None
        self.q = np.empty((self.sub1, r_tot)) if s.t_tests else None

    def thresholds(self, SS: list[np.ndarray], a_: np.ndarray, b_: np.ndarray, r0: int) -> np.ndarray:
        """The t-tests' thresholds ``Q`` of a few pairs (rows ``r0:`` of the block's sums)."""
        assert self.q is not None  # built with the t-tests
        Q = self.q[:a_.size]
        Q.fill(0.0)
        tmp = self.buf[:a_.size]
        for k in range(len(self.WT)):
            pair_diff(self.Msk[k], a_, b_, tmp)
            tmp *= tmp
            tmp *= -self.cd[k]
            tmp += SS[k][r0:r0 + a_.size]
            np.maximum(tmp, 0.0, out=tmp)
            tmp *= self.cq[k]
            Q += tmp
        return Q.astype(FAST_DTYPE)

    def block(self, sl: slice) -> dict[str, np.ndarray]:
        s = self.s
        aa, bb = s.a[sl], s.b[sl]
        SS = None
        if s.t_tests:
            Dk = [s.x[aa][:, g] - s.x[bb][:, g] for g in s.groups]
            SS = [s2 for _, s2 in block_sums(self.WT, Dk, sums=False, out=self.ss)]
        c = sl.stop - sl.start
        res = {k: np.empty(c) for k in PAIR_STATS}
        # post-process a few pairs at a time so the (pairs x R) pieces stay in cache
        for r0 in range(0, c, self.sub1):
            r1 = min(c, r0 + self.sub1)
            a_, b_ = aa[r0:r1], bb[r0:r1]
            Q = None if SS is None else self.thresholds(SS, a_, b_, r0)
            part = fast_block(self.Mcomb, self.mscale, a_, b_, Q, s.dbar[sl][r0:r1], s.alpha, s.min_diff,
                              0.0, self.halves, FAST_DTYPE)
            for k, v in part.items():
                res[k][r0:r1] = v
        return res


class ResamplingEngine(PairEngine):
    """Bootstrap (with replacement) or subsample (disjoint halves): one topic count at a
    time, its draws released before the next count's are made."""

    def __init__(self, setup: Setup):
        super().__init__(setup)
        self.r_tot = (2 if setup.method.disjoint else 1) * setup.resamples
        self._state: tuple[int, _OneStratum | _Strata] | None = None

    @staticmethod
    def memory(setup: Setup) -> tuple[int, int]:
        r_tot = (2 if setup.method.disjoint else 1) * setup.resamples
        K, S, T = setup.n_strata, setup.x.shape[0], setup.x.shape[1]
        return 8 * (6 * r_tot + 2 * T), 8 * r_tot * (T + (K * S if K > 1 else 0))

    def context(self) -> contextlib.AbstractContextManager[object]:
        return one_blas_thread()

    def pieces(self, chunk: int) -> Iterator[tuple[int, slice]]:
        """Topic counts outer, aligned blocks of :data:`BLOCK` pairs inner (``chunk`` is a
        multiple of it: the blocks are the same for every chunk size)."""
        P = self.setup.n_pairs
        for j, nk in enumerate(self.setup.allocs):
            if nk is None:
                continue
            for b0 in range(0, P, BLOCK):
                yield j, slice(b0, min(P, b0 + BLOCK))

    def draws(self, j: int) -> _OneStratum | _Strata:
        """Topic count ``j``'s draws and sums (made once; the previous count's go first)."""
        if self._state is not None and self._state[0] == j:
            return self._state[1]
        self._state = None  # the previous count's arrays go before this count's are made (memory bound)
        s = self.setup
        n, nk = s.topics[j], s.allocs[j]
        if s.base is None or nk is None:
            raise ValueError("a resampling engine needs a seed and a simulated topic count")
        WT = draw_counts(count_stream(s.base, n), s.groups, nk, s.resamples, s.method.disjoint)
        crit = stats.t.ppf(1 - s.alpha / 2, n - s.n_strata)
        kind = _OneStratum if s.n_strata == 1 else _Strata
        state = kind(s, WT, n, nk, crit, self.r_tot)
        del WT
        self._state = (j, state)
        return state

    def chunk(self, j: int, pairs: slice) -> dict[str, np.ndarray]:
        draws = self.draws(j)
        out = {k: np.empty(pairs.stop - pairs.start) for k in PAIR_STATS}
        for b0 in range(pairs.start, pairs.stop, BLOCK):
            sl = slice(b0, min(pairs.stop, b0 + BLOCK))
            for k, v in draws.block(sl).items():
                out[k][sl.start - pairs.start:sl.stop - pairs.start] = v
        return out
