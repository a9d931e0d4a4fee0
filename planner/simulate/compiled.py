"""Compiled loops of the resampling engines' pair statistics (numba; compiled once, cached on disk).

The paired t-tests of every resample are counts of comparisons between two float32
arrays of one block of pairs: numpy needs about eight passes over the ``(pairs, R)``
values for them (and, with the Gram sums of
:class:`~planner.simulate.resampling.GramSums`, a transposition into that layout first);
these loops make one. :func:`diff_tests` also makes the pairs' resampled differences (for
the percentiles) and counts their signs (for the order rates) in that pass, reading the
systems' sums instead of a ``(pairs, R)`` array of differences written first
(:func:`diff_signs`: the same without the t-tests). They perform the same float32
operations in the same order as the numpy path
(:func:`~planner.simulate.kernels.pair_diff`, :func:`~planner.simulate.kernels.test_counts`;
numba adds no fused multiply-adds without ``fastmath``), so the numbers are the same, bit
for bit (tested).

Importing this module imports numba (about 0.25 s CPU) and its first call in a process
loads the cached machine code (about 0.45 s more; the very first calls on a machine compile
it, 0.4-1.1 s a kernel and type, about 3.3 s for the five the engine uses, and write the cache
next to this file or in numba's user cache): the resampling engine uses it only for work of at least
:data:`~planner.simulate.resampling.COMPILED_WORK` pair-resamples a topic count
(:func:`~planner.simulate.kernels.compiled_loops` says whether it can run at all).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["diff_signs", "diff_tests", "gram_counts"]


@numba.njit(cache=True, nogil=True)
def diff_signs(M, aa, bb, u, pos, neg):  # pragma: no cover (compiled)
    """Per pair ``i``, ``u[i] = M[aa[i]] - M[bb[i]]`` (in ``M``'s precision, rounded to float32,
    stored in ``u``'s dtype: int32 for the integer sums below ``2^23``) and that float32
    difference's values above 0 into ``pos[i]``, below 0 into ``neg[i]``."""
    for i in range(aa.size):
        ma, mb, ui = M[aa[i]], M[bb[i]], u[i]
        p = 0
        m = 0
        for r in range(ui.size):
            uu = np.float32(ma[r] - mb[r])
            ui[r] = uu
            p += uu > 0
            m += uu < 0
        pos[i] = p
        neg[i] = m


@numba.njit(cache=True, nogil=True)
def diff_tests(M, aa, bb, Q, dp, g, u, pos, neg, sig, pw):  # pragma: no cover (compiled)
    """:func:`diff_signs`, and per pair the resamples with ``u^2 > Q`` into ``sig[i]`` and
    those with ``(u + dp[i])^2 + g[i] > Q`` into ``pw[i]`` (``u``, ``Q`` float32)."""
    for i in range(aa.size):
        ma, mb, ui, qi = M[aa[i]], M[bb[i]], u[i], Q[i]
        p = 0
        m = 0
        s = 0
        w = 0
        d = dp[i]
        gi = g[i]
        for r in range(ui.size):
            uu = np.float32(ma[r] - mb[r])
            ui[r] = uu
            p += uu > 0
            m += uu < 0
            q = qi[r]
            s += uu * uu > q
            v = uu + d
            v = v * v
            v = v + gi
            w += v > q
        pos[i] = p
        neg[i] = m
        sig[i] = s
        pw[i] = w


@numba.njit(cache=True, nogil=True)
def gram_counts(G, sq, M, a0, runs, dp, g, sig, pw):  # pragma: no cover (compiled)
    """The t-test counts of a tile of resamples from its Gram products.

    ``G`` (tile, na, W): ``kappa SQ_a - 2 kappa sum_i y_a y_b`` of the systems ``a0 + i``
    and ``a0 + j``; ``sq`` and ``M`` (tile, S): every system's ``kappa SQ`` and resampled
    sum (all C-contiguous); ``runs`` (k, 4): rows ``i0``, system ``a``, systems ``b0:b1``
    (pairs ``i0 + b - b0``, positions in ``dp``, ``g``, ``sig``, ``pw``). Adds to ``sig`` the
    resamples where ``u^2 > Q`` and to ``pw`` those where ``(u + dp)^2 + g > Q``, ``Q =
    max(G + sq_b, 0)`` (numpy's ``maximum``: the same comparisons, 0 and -0 alike), ``u = M_a -
    M_b``. A run's counts are kept over the tile in two arrays made once a call, and the
    arrays are read at unsigned offsets (no slices, no wraparound: the loop over ``b``
    vectorises, with little work per run and resample).
    """
    zero = np.float32(0.0)
    tile, na, W = G.shape
    S = sq.shape[1]
    Gf, sqf, Mf = G.reshape(-1), sq.reshape(-1), M.reshape(-1)
    s = np.empty(W, dtype=np.int32)
    p = np.empty(W, dtype=np.int32)
    for k in range(runs.shape[0]):
        i0, a, b0, b1 = runs[k, 0], runs[k, 1], runs[k, 2], runs[k, 3]
        m = np.uint64(b1 - b0)
        pb = np.uint64(i0)
        for j in range(m):
            s[j] = 0
            p[j] = 0
        for t in range(tile):
            ma = M[t, a]
            gb = np.uint64((t * na + a - a0) * W + b0 - a0)
            sb = np.uint64(t * S + b0)
            for j in range(m):
                q = Gf[gb + j] + sqf[sb + j]
                if q < zero:
                    q = zero
                uu = np.float32(ma - Mf[sb + j])
                s[j] += np.int32(uu * uu > q)
                v = uu + dp[pb + j]
                v = v * v
                v = v + g[pb + j]
                p[j] += np.int32(v > q)
        for j in range(m):
            sig[pb + j] += s[j]
            pw[pb + j] += p[j]
