"""The resampling engine: topics resampled with replacement (bootstrap) or split into
disjoint sets without replacement (subsample, Voorhees & Buckley).

For every topic count the drawn topics are made once (from the count's own stream,
:func:`~planner.simulate.kernels.count_stream`; :func:`draw_topics`), every system's
resampled sums follow from one exact sparse product on the score grid, and the pair
statistics of each aligned block of :data:`~planner.simulate.kernels.BLOCK` pairs are read
from them (:func:`~planner.simulate.kernels.fast_block`); only the t-tests need a product
per block: with the dense draw counts while ``T <= dense_topics(n, S, P R)``, else from each
resample's Gram matrix of its drawn scores (:class:`GramSums`, a group of blocks at a time).
From :data:`COMPILED_WORK` pairs x resamples on, the t-tests are counted by the compiled
loops of :mod:`~planner.simulate.compiled` (the same numbers; with the Gram sums, read from
each tile's products without the ``(pairs, R)`` sums). The work per resample is
proportional to ``n``, not to ``T``. See the package docstring for the statistics and the
memory bound.

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
[0.1375, 0.0, 0.0]
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from scipy import sparse, stats

from ..variance import score_grid
from .engine import PAIR_STATS, PairEngine, Setup
from .kernels import (
    BLOCK,
    FAST_DTYPE,
    SUB_ELEMS,
    block_sums,
    compiled_loops,
    count_stream,
    fast_block,
    one_blas_thread,
    pair_diff,
    pair_pass,
    shift_terms,
    strata_sums,
)
from .pairs import pair_moments
from .work import Shape, Work

__all__ = ["COMPILED_WORK", "DENSE_GRAM", "DENSE_TOPICS", "GRAM_BAND", "GRAM_CACHE", "GRAM_RATIO", "GRAM_WORK",
           "PAIR_COLUMNS", "GramSums", "ResamplingEngine", "StratumPairs",
           "dense_topics", "draw_matrix", "draw_topics", "sparse_sums", "topic_counts"]

#: pairs per sparse product of the t-tests (their squared differences stay in cache)
PAIR_COLUMNS = 128
#: up to ``DENSE_TOPICS * n`` topics the t-tests' sums are one dense float32 product with the
#: draw counts per block (BLAS: faster there than the Gram sums, whose work is ``R n``), and
#: fewer with the compiled loops (:func:`dense_topics`)
DENSE_TOPICS = 8
#: from ``GRAM_WORK`` pairs x resamples on (the work of the compiled loops, :data:`COMPILED_WORK`),
#: the dense product is used up to ``DENSE_GRAM n (S + GRAM_BAND) / S`` topics (at most
#: ``DENSE_TOPICS n``): :func:`dense_topics`
DENSE_GRAM = 1.5
GRAM_WORK = 2 ** 24
#: a pair whose squared differences sum to less than ``1 / GRAM_RATIO`` of its systems'
#: centred squares has its t-test sums from sparse products (:class:`GramSums`)
GRAM_RATIO = 64.0
#: gathered scores and Gram entries per tile of resamples in :class:`GramSums` (float32 values)
GRAM_TILE = 2 ** 18
#: bytes of float32 t-test sums :class:`GramSums` computes at once (a group of aligned blocks)
GRAM_CACHE = 2 ** 26
#: :class:`GramSums`' t-test counts are made in at least this many groups of pairs, each when its
#: first block is asked for (the counts do not depend on the groups), so that
#: :func:`~planner.simulate.predict.predict_until` stopped after its first chunks computes no more;
#: but a group holds the pairs of :data:`GRAM_BAND` systems at least (:meth:`GramSums.count_group`)
GRAM_GROUPS = 16
#: systems ``a`` per batched product of :class:`GramSums`
GRAM_BAND = 48
#: pairs x resamples (``P R_tot``) from which the t-tests are counted by the compiled loops of
#: :mod:`planner.simulate.compiled` (the same counts; below it numba's import and the load of
#: its cached code, about 0.7 s CPU once per process, would cost more than they save)
COMPILED_WORK = 2 ** 24


def draw_topics(g_n: np.random.Generator, groups, nk, resamples: int, disjoint: bool) -> list[np.ndarray]:
    """The drawn topics of each stratum (positions within it), shape ``(R_tot, n_k)``.

    With replacement (``disjoint=False``): ``g_n.integers(0, T_k, (R, n_k))``, one row a
    resample. Disjoint: per resample ``g_n.choice(T_k, 2 n_k, replace=False)``; set A is its
    first ``n_k`` topics (row ``j``), set B the next ``n_k`` (row ``R + j``). Work and memory
    are proportional to ``R n``, not to the stratum's size ``T_k``.
    """
    out = []
    for g, c in zip(groups, nk):
        c = int(c)
        if not disjoint:
            out.append(g_n.integers(0, g.size, size=(resamples, c)).astype(np.int32))
            continue
        d = np.empty((2 * resamples, c), dtype=np.int32)
        for r in range(resamples):
            pick = g_n.choice(g.size, 2 * c, replace=False)
            d[r], d[resamples + r] = pick[:c], pick[c:]
        out.append(d)
    return out


def topic_counts(idx: np.ndarray, size: int, dtype=np.float64) -> np.ndarray:
    """How often each of ``size`` topics is drawn in each row of ``idx``, transposed: ``(size, R_tot)``."""
    R = idx.shape[0]
    flat = idx.astype(np.int64) * R + np.arange(R)[:, None]
    return np.bincount(flat.ravel(), minlength=size * R).reshape(size, R).astype(dtype)


def draw_matrix(idx: np.ndarray, size: int, dtype=np.float64) -> sparse.csr_matrix:
    """The draws as a sparse ``(R_tot, size)`` matrix of counts (``R n`` entries at most):
    a product with it sums each resample's drawn rows, in work proportional to ``n``.

    Canonical CSR (each row's topics sorted, one entry per drawn topic with its count), made
    from the sorted rows directly: the same arrays as scipy's conversion from coordinates with
    ``sum_duplicates``, 4-6x faster (no general sort of the ``R n`` entries)."""
    R, n = idx.shape
    s = np.sort(idx, axis=1)
    new = np.empty((R, n), dtype=bool)  # where a row's next distinct topic starts
    new[:, :1] = True
    np.not_equal(s[:, 1:], s[:, :-1], out=new[:, 1:])
    starts = np.flatnonzero(new.ravel())
    itype = np.int32 if max(R, size, R * n) < 2 ** 31 else np.int64
    indptr = np.zeros(R + 1, dtype=itype)
    np.cumsum(new.sum(axis=1), out=indptr[1:])
    counts = np.diff(starts, append=R * n).astype(dtype)
    m = sparse.csr_matrix((counts, s.ravel()[starts].astype(itype), indptr), shape=(R, size))
    m.has_canonical_format = True  # (sorted indices, no duplicates: as built)
    return m


def sparse_sums(draws: sparse.csr_matrix, xg: np.ndarray, aa: np.ndarray, bb: np.ndarray,
                kappa: float) -> np.ndarray:
    """Each pair's resampled sums of ``kappa d^2`` (c, R) from float32 sparse products with
    the draws (``R n`` work per pair; no cancellation: used for the pairs whose Gram sums
    would lose precision)."""
    d = xg[aa] - xg[bb]
    d *= d
    d *= kappa
    R = draws.shape[0]
    Q = np.empty((aa.size, R), dtype=FAST_DTYPE)
    for c0 in range(0, aa.size, PAIR_COLUMNS):
        part = draws @ np.ascontiguousarray(d[c0:c0 + PAIR_COLUMNS].T, dtype=FAST_DTYPE)
        for r0 in range(0, R, 256):  # transposed in tiles (cache-friendly)
            Q[c0:c0 + PAIR_COLUMNS, r0:r0 + 256] = part[r0:r0 + 256].T
    return Q


def dense_topics(n: int, systems: int, work: int, *, counted: bool = True) -> float:
    """The most topics for which the t-tests' sums of ``n`` drawn topics come from the dense product
    with the draw counts, for ``work`` pairs x resamples; beyond it they come from the Gram sums
    (:class:`GramSums`). ``counted=False``: the Gram sums are always written out (a stratum's, whose
    thresholds subtract its squared mean), the rule below :data:`GRAM_WORK`.

    The dense product's work per resample grows with the collection (``P T``), the Gram sums' with
    the draw (``n S (S + GRAM_BAND) / 2``: each band's diagonal square is computed whole), so the
    Gram sums win past a multiple of ``n``. From :data:`GRAM_WORK` on, where the compiled loops
    count the tests, that multiple, measured on 2 cores (docs/research/speed.md), is about 2.5 at
    100 systems and 1.5 at 300: ``DENSE_GRAM (S + GRAM_BAND) / S``. Below it the Gram sums are
    written out as ``(P, R)`` arrays first, and the dense product wins up to 4-8 ``n``:
    :data:`DENSE_TOPICS`. The rule reads the inputs only (not whether numba is installed), so the
    numbers do not depend on the machine.

    Examples
    --------
    >>> dense_topics(50, 100, work=4950 * 10_000), dense_topics(50, 100, work=4950 * 1000)
    (111.0, 400)
    >>> dense_topics(50, 5, work=2 ** 30)        # (at most DENSE_TOPICS n)
    400
    """
    if work < GRAM_WORK or not counted:
        return DENSE_TOPICS * n
    return min(DENSE_TOPICS * n, DENSE_GRAM * (systems + GRAM_BAND) * n / systems)


@dataclass(frozen=True)
class StratumPairs:
    """The pairs ``a``, ``b`` and their mean ``dbar`` and variance ``s2`` of differences over one
    stratum's topics: what :class:`GramSums` reads of a :class:`~planner.simulate.engine.Setup`."""

    a: np.ndarray
    b: np.ndarray
    dbar: np.ndarray
    s2: np.ndarray

    @classmethod
    def of(cls, x: np.ndarray, a: np.ndarray, b: np.ndarray, block: int) -> StratumPairs:
        """From the stratum's scores ``x`` (S, T_k), differences in blocks of ``block`` (the setup's)."""
        dbar, s2 = pair_moments(x, a, b, block=block)
        return cls(a, b, dbar, s2)


class GramSums:
    """The t-tests' sums ``Q = kappa sum_i d(t_i)^2`` of a block of pairs from each resample's
    Gram matrix of its drawn scores, when ``T > dense_topics(n, S, P R)``.

    ``sum_i (y_a - y_b)^2 = SQ_a + SQ_b - 2 sum_i y_a y_b`` over a resample's drawn topics,
    ``y`` the scores centred on each topic's mean over the systems (the same differences,
    smaller squares). The pairs are summed in groups of aligned blocks (:meth:`group_pairs`,
    about ``cache`` bytes of sums, :data:`GRAM_CACHE` by default, fixed by ``R``: the same groups
    for any chunking; the strata's sums take one block a group),
    each group once when its first block is asked for. Per tile of resamples the drawn rows of
    ``[-2 kappa y, y]`` of the group's systems and every later one are gathered once (``n`` rows a
    resample, from a table made once a group: no pass scales the left factors per tile); the
    group's systems ``a`` are taken in bands of :data:`GRAM_BAND`, and one batched float32
    product a band gives ``Q`` of its pairs (``[-2 kappa y_a, kappa SQ_a] . [y_b, 1]``, then
    ``kappa SQ_b`` added): BLAS work ``R n`` per pair, whatever ``T``, in products large enough
    to run near BLAS speed. The difference of squares cancels for pairs of nearly equal
    systems: a pair whose squared differences sum to less than ``1 / GRAM_RATIO`` of its two
    systems' centred squares (identical systems included) takes the sparse products of
    :func:`sparse_sums` instead.
    Negative sums (rounding) are 0.

    With ``tests`` (every system's resampled sums ``Msys`` (S, R), the pairs' power terms of
    :func:`~planner.simulate.kernels.shift_terms` and the same sums as made, (R, S): a tile's
    rows), :meth:`counts` gives the t-tests' two
    counts instead (:func:`planner.simulate.compiled.gram_counts`, read from each tile's
    products in one compiled pass: no ``(pairs, R)`` sums; groups of up to
    ``GRAM_CACHE / 16`` pairs): the counts ``fast_block`` would make from :meth:`block`.
    """

    def __init__(self, s: Setup | StratumPairs, xg: np.ndarray, idx: np.ndarray, draws: sparse.csr_matrix,
                 kappa: float, tests: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None,
                 cache: int | None = None):
        xc = xg - xg.mean(axis=0)
        energy = np.einsum("st,st->s", xc, xc)
        self.xcT = np.ascontiguousarray(xc.T, dtype=np.float32)  # (T, S): a drawn topic is one row
        del xc
        self.a, self.b, self.idx, self.draws, self.xg, self.kappa = s.a, s.b, idx, draws, xg, kappa
        # kappa SQ of every system and resample (R, S): one sparse product
        self.sq = np.asarray(draws @ np.square(self.xcT), dtype=np.float32)
        self.sq *= np.float32(kappa)
        T = xg.shape[1]
        dd = s.s2 * (T - 1.0) + T * s.dbar * s.dbar  # each pair's sum of d^2 over the collection
        self.exact = dd * GRAM_RATIO <= energy[s.a] + energy[s.b]
        self.tests = tests
        self.group = self.group_pairs(idx.shape[0], cache) if tests is None else self.count_group(s.a.size, xg.shape[0])
        # the drawn topics and topic T (a row of ones in every band's gathered scores)
        self.idx1 = np.hstack([idx, np.full((idx.shape[0], 1), xg.shape[1], dtype=idx.dtype)])
        self._cached: tuple[int, tuple[np.ndarray, ...]] | None = None

    @staticmethod
    def group_pairs(resamples: int, cache: int | None = None) -> int:
        """Pairs per group: the most whole blocks whose float32 sums fit ``cache`` bytes (default
        :data:`GRAM_CACHE`; one block at least)."""
        return max(1, (GRAM_CACHE if cache is None else cache) // (4 * BLOCK * resamples)) * BLOCK

    @staticmethod
    def count_group(pairs: int, systems: int) -> int:
        """Pairs per group of the counts: a :data:`GRAM_GROUPS`-th of the pairs (so a first block
        asks for no more), but at least the pairs of :data:`GRAM_BAND` systems (a tile's gather of
        the later systems' rows serves a band's products at least: smaller groups gather the
        same rows again, group after group) and at most ``GRAM_CACHE / 16`` bytes' worth."""
        least = max(-(-pairs // (GRAM_GROUPS * BLOCK)), -(-GRAM_BAND * systems // BLOCK))
        return min(max(1, GRAM_CACHE // (16 * BLOCK)), least) * BLOCK

    def block(self, sl: slice) -> np.ndarray:
        """``Q`` (c, R) of the pairs ``sl`` (an aligned block, in row-major order)."""
        return self._of_group(sl)[0]

    def counts(self, sl: slice) -> tuple[np.ndarray, np.ndarray]:
        """The resamples whose t-test rejects, and whose shifted test (power) rejects, of the pairs ``sl``."""
        sig, pw = self._of_group(sl)
        return sig, pw

    def _of_group(self, sl: slice) -> tuple[np.ndarray, ...]:
        """``(Q,)`` or, with ``tests``, the two counts of the pairs ``sl`` (made a group at a time)."""
        g0 = sl.start // self.group * self.group
        if sl.stop > g0 + self.group:  # (not an aligned block: piece by piece)
            parts = [self._of_group(slice(p, min(sl.stop, p - p % self.group + self.group)))
                     for p in range(sl.start, sl.stop) if p == sl.start or p % self.group == 0]
            return tuple(np.concatenate([part[k] for part in parts]) for k in range(len(parts[0])))
        if self._cached is None or self._cached[0] != g0:
            self._cached = None  # (memory: the previous group's sums go first)
            gsl = slice(g0, min(self.a.size, g0 + self.group))
            self._cached = (g0, (self._group(gsl),) if self.tests is None else self._group_counts(gsl))
        return tuple(v[sl.start - g0:sl.stop - g0] for v in self._cached[1])

    @staticmethod
    def _runs(aa: np.ndarray, bb: np.ndarray) -> list[tuple[int, int, int, int, int]]:
        """Runs of equal ``a``: rows ``i0:i1`` are the pairs ``(a, b0:b1)``."""
        starts = np.flatnonzero(np.r_[True, aa[1:] != aa[:-1]])
        return [(int(i0), int(i1), int(aa[i0]), int(bb[i0]), int(bb[i1 - 1]) + 1)
                for i0, i1 in zip(starts, np.r_[starts[1:], aa.size])]

    def _group(self, sl: slice) -> np.ndarray:
        aa, bb = self.a[sl], self.b[sl]
        Q = np.empty((aa.size, self.idx.shape[0]), dtype=FAST_DTYPE)
        runs = self._runs(aa, bb)
        a0 = runs[0][2]
        W = self.xcT.shape[1] - a0
        at = (aa - a0) * W + (bb - a0)      # each pair's entry in a resample's (na, W) products
        for r0, r1, G in self._products(runs):
            for lo, hi in self._bands(runs):
                Gb = G[:, lo:hi, lo:]
                Gb += self.sq[r0:r1, None, a0 + lo:]
                np.maximum(Gb, 0.0, out=Gb)
            # one gather a tile (a copy per run and tile cost 40,000 small copies at n = 200)
            Q[:, r0:r1] = G.reshape(r1 - r0, -1)[:, at].T
        ex = np.flatnonzero(self.exact[sl])
        if ex.size:
            Q[ex] = sparse_sums(self.draws, self.xg, aa[ex], bb[ex], self.kappa)
        return Q

    def _group_counts(self, sl: slice) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`counts` of one group: the compiled pass over every tile's products."""
        from .compiled import gram_counts

        assert self.tests is not None
        Msys, dp, g, rows_ = self.tests[0], self.tests[1][sl], self.tests[2][sl], self.tests[3]
        aa, bb = self.a[sl], self.b[sl]
        sig, pw = np.zeros(aa.size, dtype=np.int64), np.zeros(aa.size, dtype=np.int64)
        runs = self._runs(aa, bb)
        rows = np.array([(i0, a, b0, b1) for i0, _, a, b0, b1 in runs], dtype=np.int64)
        for r0, r1, G in self._products(runs):
            gram_counts(G, self.sq[r0:r1], rows_[r0:r1], runs[0][2], rows, dp, g, sig, pw)
        ex = np.flatnonzero(self.exact[sl])
        for e0 in range(0, ex.size, BLOCK):
            e = ex[e0:e0 + BLOCK]
            Q = sparse_sums(self.draws, self.xg, aa[e], bb[e], self.kappa)
            made = pair_pass(Msys, aa[e], bb[e], np.empty(Q.shape, dtype=FAST_DTYPE), (Q, dp[e], g[e]))[1]
            assert made is not None
            sig[e], pw[e] = made
        return sig, pw

    @staticmethod
    def _bands(runs: list[tuple[int, int, int, int, int]]) -> list[tuple[int, int]]:
        """The bands of :data:`GRAM_BAND` runs: their systems ``a``, ``a0 + lo:a0 + hi`` (``a0`` the first run's)."""
        a0 = runs[0][2]
        return [(runs[k][2] - a0, runs[min(len(runs), k + GRAM_BAND) - 1][2] - a0 + 1)
                for k in range(0, len(runs), GRAM_BAND)]

    def _products(self, runs: list[tuple[int, int, int, int, int]]) -> Iterator[tuple[int, int, np.ndarray]]:
        """Per tile of resamples ``r0:r1``, the Gram products ``G`` (tile, na, ns) of the runs'
        systems ``a0 + i`` (``a0`` the first run's, consecutive) and every later system
        ``a0 + j``: ``kappa SQ_a - 2 kappa sum_i y_a y_b`` (``kappa SQ_b`` not yet added), computed
        band by band (:meth:`_bands`: ``j >= i`` of the band's first system; the rest of ``G`` is
        not written). The drawn rows of ``[-2 kappa y, y]`` (the left and right factors) are
        gathered once a tile for every band."""
        R, n = self.idx.shape
        S = self.xcT.shape[1]
        a0, na = runs[0][2], runs[-1][2] - runs[0][2] + 1
        W = S - a0
        # the right factor's table: per topic y of the systems a0.., and topic T: 1 (the left
        # factor, -2 kappa y, is made from the gathered rows: half the table, half the gather)
        tab = np.empty((self.xcT.shape[0] + 1, W), dtype=np.float32)
        tab[:-1] = self.xcT[:, a0:]
        tab[-1] = 1.0
        c = np.float32(-2.0 * self.kappa)
        tile = max(1, GRAM_TILE // ((n + 1) * 2 * W + na * W))
        FL, FR = np.empty((2, tile, n + 1, W), dtype=np.float32)
        G = np.zeros((tile, na, W), dtype=np.float32)
        bands = self._bands(runs)
        for r0 in range(0, R, tile):
            r1 = min(R, r0 + tile)
            fl, fr, g = FL[:r1 - r0], FR[:r1 - r0], G[:r1 - r0]
            np.take(tab, self.idx1[r0:r1], axis=0, out=fr, mode="clip")  # (valid indices; "clip": no buffer)
            np.multiply(fr[:, :n], c, out=fl[:, :n])
            fl[:, n] = self.sq[r0:r1, a0:]  # the left factor's row T: kappa SQ_a
            for lo, hi in bands:  # (tile, hi - lo, W - lo): rows a0 + lo:a0 + hi, columns a0 + lo:
                np.matmul(fl[:, :, lo:hi].transpose(0, 2, 1), fr[:, :, lo:], out=g[:, lo:hi, lo:])
            yield r0, r1, g


class _OneStratum:
    """One topic count's draws with one stratum: every system's exact resampled sums
    (from the drawn topics), and per block only the t-tests' sums of squares."""

    def __init__(self, s: Setup, idx: list[np.ndarray], n: int, nk: np.ndarray, crit: float, r_tot: int):
        self.s, self.g, self.halves = s, s.groups[0], s.method.disjoint
        whole = self.g.size == s.x.shape[1]  # (one stratum of every topic: groups[0] is arange(T))
        xg = s.x if whole and s.x.flags.c_contiguous else s.x[:, self.g]  # (the copy's layout)
        # per n: n's numbers depend on n only (the setup's decimal grid, kept for this engine when
        # it reads x in place (:func:`planner.simulate.predict.setup`), is n's grid for n <= T)
        qx, unit = s.grid if s.grid is not None and nk[0] <= xg.shape[1] else score_grid(xg, int(nk[0]))
        draws = draw_matrix(idx[0], self.g.size)
        draws32 = draws.astype(np.float32)
        if np.float32 == FAST_DTYPE and float(np.max(np.abs(qx), initial=0.0)) * idx[0].shape[1] < 2.0 ** 23:
            # every partial sum an integer below 2^23: the float32 product is exact (and 2-3x faster)
            rows = draws32 @ qx.T.astype(np.float32)
        else:
            rows = draws @ qx.T  # exact integers
            if np.float32 == FAST_DTYPE and float(np.max(np.abs(rows), initial=0.0)) < 2.0 ** 23:
                rows = rows.astype(np.float32)  # still exact: differences subtract exactly in float32
        Msys = np.ascontiguousarray(rows.T)  # (S, R): a system's sums one row
        self.Msys = Msys
        dense = self.g.size <= dense_topics(n, s.x.shape[0], s.n_pairs * r_tot)
        self.compiled = s.n_pairs * r_tot >= COMPILED_WORK and compiled_loops()
        made = rows if s.t_tests and not dense and self.compiled else None  # (the Gram counts' tiles)
        del rows
        self.WTq = topic_counts(idx[0], self.g.size, FAST_DTYPE) if s.t_tests and dense else None
        self.qbuf: np.ndarray | None = None
        self.draws = draws32 if s.t_tests and not dense else None
        self.xg = xg if s.t_tests else None
        self.cprime = crit * crit / (n - 1.0)
        self.scale = unit / n
        self.kappa = self.cprime / (n * (1.0 + self.cprime) * self.scale * self.scale)
        self.sub1 = max(1, SUB_ELEMS // r_tot)
        del qx  # (memory: the grid goes before the Gram sums' centred scores come)
        self.gram = None
        if s.t_tests and not dense:
            assert self.draws is not None and self.xg is not None
            tests = (Msys, *shift_terms(s.dbar, s.min_diff, self.cprime, self.scale, FAST_DTYPE), made) \
                if made is not None else None
            self.gram = GramSums(s, self.xg, idx[0], self.draws, self.kappa, tests)

    def thresholds(self, sl: slice) -> np.ndarray:
        """The t-tests' ``Q`` (c, R): each resample's sum of ``kappa d^2`` over its drawn
        topics: a dense product with the counts while ``T <= dense_topics(n, S, P R)``, else from
        each resample's Gram matrix of the drawn scores (:class:`GramSums`; work ``R n`` per
        pair, whatever ``T``)."""
        s = self.s
        assert self.xg is not None  # built with the t-tests
        c = sl.stop - sl.start
        if self.WTq is not None:
            dd = np.zeros((BLOCK, self.g.size))  # aligned, zero-padded: same product shape always
            dd[:c] = self.xg[s.a[sl]] - self.xg[s.b[sl]]
            dd *= dd
            dd *= self.kappa
            if self.qbuf is None:  # one (BLOCK, R) result for every block: no fresh pages each time
                self.qbuf = np.empty((BLOCK, self.WTq.shape[1]), dtype=FAST_DTYPE)
            return np.matmul(dd.astype(FAST_DTYPE), self.WTq, out=self.qbuf)[:c]
        assert self.gram is not None
        return self.gram.block(sl)

    def block(self, sl: slice) -> dict[str, np.ndarray]:
        s = self.s
        c = sl.stop - sl.start
        counts = self.gram.counts(sl) if self.gram is not None and self.gram.tests is not None else None
        Q = self.thresholds(sl) if s.t_tests and counts is None else None
        res = {k: np.empty(c) for k in PAIR_STATS}
        for r0 in range(0, c, self.sub1):
            r1 = min(c, r0 + self.sub1)
            part = fast_block(self.Msys, self.scale, s.a[sl][r0:r1], s.b[sl][r0:r1],
                              None if Q is None else Q[r0:r1], s.dbar[sl][r0:r1], s.alpha,
                              s.min_diff, self.cprime, self.halves, FAST_DTYPE, self.compiled,
                              None if counts is None else (counts[0][r0:r1], counts[1][r0:r1]))
            for k, v in part.items():
                res[k][r0:r1] = v
        return res


class _Strata:
    """One topic count's draws with ``K > 1`` strata: every system's exact resampled sums per
    stratum (one product per stratum and n), combined once into the stratified means
    (:func:`~planner.simulate.kernels.strata_sums`); per block of pairs only the t-tests'
    sums of squares need a product."""

    def __init__(self, s: Setup, idx: list[np.ndarray], n: int, nk: np.ndarray, crit: float, r_tot: int,
                 pairs_of: Callable[[int], StratumPairs]):
        self.s, self.halves = s, s.method.disjoint
        # a stratum of many more topics than it draws: sparse counts, and its t-tests' sums of
        # squares from the Gram sums (work R n_k a pair), else the dense counts (work R T_k)
        S = s.x.shape[0]
        big = [g.size > dense_topics(int(c), S, s.n_pairs * r_tot, counted=False) for g, c in zip(s.groups, nk)]
        WT = [draw_matrix(i, g.size).T if b else topic_counts(i, g.size) for i, g, b in zip(idx, s.groups, big)]
        self.WT = WT
        self.Msk, unit, self.Mcomb, self.mscale = strata_sums(s.x, s.groups, nk, WT, n)
        # (one block a group: every stratum's Gram sums are held at once)
        self.gram = [GramSums(pairs_of(k), s.x[:, g], i, w.T.tocsr().astype(np.float32), 1.0, cache=0)
                     if b and s.t_tests else None for k, (i, g, w, b) in enumerate(zip(idx, s.groups, WT, big))]
        # the t-test rejects when u^2 > Q, mean = mscale * u, Q = crit^2 se^2 / mscale^2:
        # se^2 = sum_k W_k^2 var_k / n_k, var_k = (SS_k - unit^2 D_k^2 / n_k) / (n_k - 1)
        # with D_k the pair's resampled sum of differences on the grid
        W = s.weights
        self.cq = [(crit * W[k] / self.mscale) ** 2 / (nk[k] * (nk[k] - 1.0)) for k in range(len(WT))]
        self.cd = [unit * unit / nk[k] for k in range(len(WT))]
        self.sub1 = max(1, SUB_ELEMS // r_tot)
        self.compiled = s.n_pairs * r_tot >= COMPILED_WORK and compiled_loops()
        self.buf = np.empty((self.sub1, r_tot))
        # the t-tests' work arrays, reused block after block (fresh ones cost page faults)
        self.ss = [np.empty((BLOCK, r_tot)) for _ in WT] if s.t_tests else None
        self.q = np.empty((self.sub1, r_tot)) if s.t_tests else None

    def squares(self, sl: slice) -> list[np.ndarray]:
        """Per stratum, the pairs ``sl``'s resampled sums of squared differences (c, R): a dense
        product with the draw counts, or the stratum's Gram sums (float32)."""
        s = self.s
        assert self.ss is not None  # built with the t-tests
        c = sl.stop - sl.start
        dense = [k for k, gram in enumerate(self.gram) if gram is None]
        if dense:       # (block_sums writes the sums into the buffers ``ss``)
            xa, xb = s.x[s.a[sl]], s.x[s.b[sl]]
            block_sums([self.WT[k] for k in dense], [xa[:, s.groups[k]] - xb[:, s.groups[k]] for k in dense],
                       sums=False, out=[self.ss[k] for k in dense])
        for k, gram in enumerate(self.gram):
            if gram is not None:
                self.ss[k][:c] = gram.block(sl)
        return [ss[:c] for ss in self.ss]

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
            SS = self.squares(sl)
        c = sl.stop - sl.start
        res = {k: np.empty(c) for k in PAIR_STATS}
        # post-process a few pairs at a time so the (pairs x R) pieces stay in cache
        for r0 in range(0, c, self.sub1):
            r1 = min(c, r0 + self.sub1)
            a_, b_ = aa[r0:r1], bb[r0:r1]
            Q = None if SS is None else self.thresholds(SS, a_, b_, r0)
            part = fast_block(self.Mcomb, self.mscale, a_, b_, Q, s.dbar[sl][r0:r1], s.alpha, s.min_diff,
                              0.0, self.halves, FAST_DTYPE, self.compiled)
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
        self._pairs: dict[int, StratumPairs] = {}

    def _stratum_pairs(self, k: int) -> StratumPairs:
        """Stratum ``k``'s pair moments (made once: the same for every topic count)."""
        if k not in self._pairs:
            s = self.setup
            self._pairs[k] = StratumPairs.of(s.x[:, s.groups[k]], s.a, s.b, s.pair_block)
        return self._pairs[k]

    @staticmethod
    def memory(setup: Setup) -> tuple[int, int]:
        r_tot = (2 if setup.method.disjoint else 1) * setup.resamples
        K, S, T = setup.n_strata, setup.x.shape[0], setup.x.shape[1]
        return 8 * (6 * r_tot + 2 * T), 8 * r_tot * (T + (K * S if K > 1 else 0))

    @staticmethod
    def work(shape: Shape) -> Work:
        """Per simulated count ``n`` (subsample: ``n <= T / 2``), ``R_tot (n (S + 4) + P (1 + min(T, n) /
        64))`` units (the draws and every system's sums; each pair's statistics and its t-tests;
        measured, docs/research/known-limits.md); held: one count's drawn topics and sparse and
        dense counts, ``R_tot (40 n + 12 min(T, 8 n) + 12 S)`` bytes (the package docstring)."""
        r_tot = (2 if shape.disjoint else 1) * shape.resamples
        S, T, P = shape.systems, shape.n_topics, shape.pairs
        ns = [n for n in shape.counts if not shape.disjoint or 2 * n <= T]
        tt = 1.0 / 64 if shape.t_tests else 0.0
        units = sum(r_tot * (n * (S + 4.0) + P * (1.0 + tt * min(T, n))) for n in ns)
        held = max((r_tot * (40 * n + 12 * min(T, 8 * n) + 12 * S) for n in ns), default=0)
        return Work(units, held)

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
        idx = draw_topics(count_stream(s.base, n), s.groups, nk, s.resamples, s.method.disjoint)
        crit = stats.t.ppf(1 - s.alpha / 2, n - s.n_strata)
        if s.n_strata == 1:
            state: _OneStratum | _Strata = _OneStratum(s, idx, n, nk, crit, self.r_tot)
        else:
            state = _Strata(s, idx, n, nk, crit, self.r_tot, self._stratum_pairs)
        del idx
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
