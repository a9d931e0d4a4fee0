"""Numerical kernels of the resampling engines: exact resampled sums, order rates, percentiles.

Shared by :mod:`planner.simulate.resampling` (bootstrap, subsample) and
:mod:`planner.simulate.parametric`. Every function works on one block of pairs; the
engines decide which blocks (see the package docstring, "Memory" and "Randomness").
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from .._blas import one_blas_thread
from ..variance import score_grid

__all__ = [
    "BLOCK", "FAST_DTYPE", "SUB_ELEMS", "block_sums", "compiled_loops", "count_stream", "count_true", "decimal_unit",
    "draw_stats", "exact_small", "fast_block", "linear_quantiles", "one_blas_thread", "order_rates",
    "pair_diff", "pair_pass", "shift_terms", "strata_sums", "swap_distinct", "test_counts",
]

BLOCK = 512  # pairs per matrix product (fixed and aligned: results independent of chunking)
FAST_DTYPE = np.float32  # resampled means and t-test sums, one stratum (package docstring)
SUB_ELEMS = 2 ** 18  # pairs x resamples summarised at a time (cache-sized)


def block_sums(WT: list[np.ndarray], Dk: list[np.ndarray], squares: bool = True,
                sums: bool = True, out: list[np.ndarray] | None = None) -> list[tuple]:
    """Per stratum, the resampled sums of ``d`` and ``d^2`` of one block of pairs.

    ``WT[k]``: (T_k, R) draw counts in stratum k (transposed); ``Dk[k]``: (c, T_k)
    differences of at most ``BLOCK`` pairs, zero-padded to exactly ``BLOCK``
    rows so that every product has the same shape (bit-identical results
    whatever the chunking). Returns ``[(s1, s2)]`` with shapes (c, R)
    (``s2`` is ``None`` with ``squares=False``, ``s1`` with ``sums=False``). ``out``:
    one ``(BLOCK, R)`` array per stratum that receives the sums of squares (the same
    product, reusing the memory block after block instead of asking the system for
    fresh pages each time).
    """
    c = Dk[0].shape[0]
    res = []
    for k in range(len(WT)):
        d = Dk[k]
        if c < BLOCK:
            pad = np.zeros((BLOCK, d.shape[1]))
            pad[:c] = d
            d = pad
        sq = None
        if squares:
            sq = ((d * d) @ WT[k] if out is None else np.matmul(d * d, WT[k], out=out[k]))[:c]
        res.append(((d @ WT[k])[:c] if sums else None, sq))
    return res


def swap_distinct(pos: np.ndarray, neg: np.ndarray, R: int) -> np.ndarray:
    """Swap rate over distinct pairs of resamples (independent); ties count half.

    ``pos``/``neg``: per pair, the numbers of resamples with a positive/negative mean.
    """
    cp = pos.astype(float)
    cm = neg.astype(float)
    tot = R * (R - 1.0)
    nz = cp + cm
    with_tie = tot - nz * (nz - 1.0)
    return (2.0 * cp * cm + 0.5 * with_tie) / tot


def order_rates(mean: np.ndarray, dbar: np.ndarray, halves: bool, count, signs=None) -> tuple:
    """Per-pair swap and reversal rates from resampled mean differences ``mean`` (c, R).

    Reversal: share of resamples ordering the pair against ``dbar`` (a tie, or
    ``dbar = 0``, counts half). Swap: with ``halves``, share of the paired
    disjoint sets (column ``j`` and ``j + R/2``) that disagree, else over distinct
    pairs of resamples (:func:`swap_distinct`). ``count(mask)`` counts True per row;
    ``signs``: the per-row counts of positive and negative means, when already made.
    """
    R = mean.shape[1]
    pos, neg = signs if signs is not None else (count(mean > 0), count(mean < 0))
    zero = R - pos - neg
    sg = np.sign(dbar)
    opp = np.where(sg > 0, neg, pos)
    rev = np.where(sg == 0, 0.5, (opp + 0.5 * zero) / R)
    if halves:
        h = R // 2
        prod = np.sign(mean[:, :h]) * np.sign(mean[:, h:])
        swap = (count(prod < 0) + 0.5 * count(prod == 0)) / h
    else:
        swap = swap_distinct(pos, neg, R)
    return swap, rev


def draw_stats(mean: np.ndarray, thr: np.ndarray, dbar: np.ndarray, alpha: float, min_diff: float,
                halves: bool = False, scale: float = 1.0) -> dict:
    """Per-pair statistics from resampled means ``mean`` (c, R) and thresholds ``thr``.

    ``halves``: the first and second half of the columns are paired disjoint
    sets (subsample); their disagreement is the swap rate. The mean differences
    are ``scale * mean`` (``thr`` in the units of ``mean^2``). ``mean`` is
    partially sorted in place (for the percentiles).
    """
    c, R = mean.shape
    swap, rev = order_rates(mean, dbar, halves, lambda m: np.count_nonzero(m, axis=1))
    if thr is None:
        sig = power = np.full(c, np.nan)
    else:
        tmp = mean * mean
        sig = np.count_nonzero(tmp > thr, axis=1) / R
        with np.errstate(over="ignore"):    # a shift that overflows is rejected: power 1
            np.add(mean, ((min_diff - dbar) / scale)[:, None], out=tmp)
            tmp *= tmp
        power = np.count_nonzero(tmp > thr, axis=1) / R
        del tmp
    # percentile interval, numpy's default (linear) quantile definition
    ends = linear_quantiles(mean, (alpha / 2, 1 - alpha / 2))
    return {"swap_rate": swap, "reversal_rate": rev, "ci_width": (ends[1] - ends[0]) * scale,
            "power": power, "significant": sig}


def count_true(mask: np.ndarray) -> np.ndarray:
    """Per row, the number of True values of a 2-d boolean array (row-contiguous).

    Bytes are summed in runs of 255 with 8-bit accumulators (no overflow), then
    the run totals in integers: several times faster than ``count_nonzero``.
    """
    c, R = mask.shape
    m8 = mask.view(np.uint8)
    full = R // 255 * 255
    out = np.zeros(c, dtype=np.intp)
    if full:
        out += m8[:, :full].reshape(c, full // 255, 255).sum(axis=2, dtype=np.uint8).sum(axis=1, dtype=np.intp)
    if full < R:
        out += m8[:, full:].sum(axis=1, dtype=np.intp)
    return out


def linear_quantiles(v: np.ndarray, qs: Sequence[float]) -> list[np.ndarray]:
    """Per row of ``v`` (c, R), ``numpy.quantile(v, q, axis=1)`` (linear), ``qs`` ascending.

    ``v`` is partially sorted in place: for each ``q`` in turn, one partition at
    the single rank ``l = floor(q (R - 1))`` of the part not yet placed (numpy
    selects a single rank much faster than several at once), rank ``l + 1``
    as the minimum of what lies above. Exact order statistics; interpolated in
    float64 as ``a_l + (a_{l+1} - a_l) f``.
    """
    R = v.shape[1]
    vals: dict[int, np.ndarray] = {}
    done = 0  # ranks < done are in place
    res = []
    for q in qs:
        p = q * (R - 1)
        lo = int(math.floor(p))
        if lo not in vals:
            v[:, done:].partition(lo - done, axis=1)
            vals[lo] = v[:, lo].astype(np.float64)
            done = lo + 1
        f = p - lo
        if f == 0 or lo + 1 >= R:
            res.append(vals[lo])
            continue
        if lo + 1 not in vals:
            vals[lo + 1] = v[:, lo + 1:].min(axis=1).astype(np.float64)
        res.append(vals[lo] + (vals[lo + 1] - vals[lo]) * f)
    return res


def pair_diff(M: np.ndarray, aa: np.ndarray, bb: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out[i] = M[aa[i]] - M[bb[i]]``, computed in ``M``'s precision and rounded to ``out``'s.

    Pairs come in runs of equal ``a`` and consecutive ``b`` (row-major order):
    each run is one broadcast subtraction of slices, no gather.
    """
    c = aa.size
    start = 0
    while start < c:
        stop = start + 1
        while stop < c and aa[stop] == aa[start] and bb[stop] == bb[stop - 1] + 1:
            stop += 1
        np.subtract(M[aa[start]][None, :], M[bb[start]:bb[stop - 1] + 1], out=out[start:stop],
                    casting="same_kind")
        start = stop
    return out


def strata_sums(x: np.ndarray, groups, nk, WT, n: int):
    """Every system's resampled sums per stratum and its stratified mean: ``(Msk, unit, M, scale)``.

    ``Msk[k]`` (S, R): sums on stratum k's draws, on one score grid (:func:`score_grid`,
    exact integers). The stratified mean ``sum_k W_k unit Msk[k] / n_k`` (``W_k = T_k / T``)
    equals ``scale * M``:

    - with integer weights ``c_k = T_k L / (n_k G)`` (``L`` the least common multiple of
      the ``n_k``, ``G`` the greatest common divisor of the ``T_k L / n_k``),
      ``M = sum_k c_k Msk[k]`` is an exact integer and ``scale = unit G / (T L)``,
      whenever the scores sit on a decimal grid fine enough for sums of ``sum_k c_k n_k``
      scores (trec_eval's 4 decimals: up to about ``10^11``). A pair's mean difference
      then has an exact sign, and a tie (including one whose strata cancel, e.g.
      ``+0.68 / 4`` in one stratum against ``-0.56 / 8`` in another at weights 7 : 17)
      is exactly 0;
    - otherwise (arbitrary floats) the grid is the one of ``n`` draws, strata with the
      same ``T_k / n_k`` are summed as integers before their common coefficient is
      applied, and ``M`` is the float64 combination (``scale = 1``), or that integer
      total when all strata share one coefficient.

    ``M`` is float32 when it is an integer below ``2^23`` (still exact).
    """
    T = sum(g.size for g in groups)
    counts = [int(c) for c in nk]
    L = math.lcm(*counts)
    c_int = [int(g.size) * (L // c) for g, c in zip(groups, counts)]
    G = math.gcd(*c_int)  # smallest integer weights: 1 each when all T_k / n_k are equal
    c_int = [ck // G for ck in c_int]
    qx, unit = score_grid(x, sum(ck * c for ck, c in zip(c_int, counts)))
    integer_weights = decimal_unit(unit)
    if not integer_weights:
        qx, unit = score_grid(x, int(n))
    Msk = [qx[:, g] @ w for g, w in zip(groups, WT)]
    if integer_weights:
        M = np.zeros_like(Msk[0])
        for ck, Mk in zip(c_int, Msk):
            M += float(ck) * Mk
        return Msk, unit, exact_small(M), unit * G / (T * L)
    by_ratio: dict = {}
    for k, g in enumerate(groups):
        by_ratio.setdefault(Fraction(int(g.size), counts[k]), []).append(k)
    totals = [(float(ratio / T) * unit, Msk[ks[0]] if len(ks) == 1 else np.sum([Msk[k] for k in ks], axis=0))
              for ratio, ks in by_ratio.items()]
    if len(totals) == 1:
        coef, M = totals[0]
        return Msk, unit, exact_small(M), coef
    M = np.zeros_like(Msk[0])
    for coef, tot in totals:
        M += tot * coef
    return Msk, unit, M, 1.0


def decimal_unit(unit: float) -> bool:
    """Whether :func:`score_grid` chose a decimal grid (``10^-k``): the scores are exact on it."""
    return any(unit == 10.0 ** -k for k in range(10))


def exact_small(M: np.ndarray) -> np.ndarray:
    """Integer-valued ``M`` as float32 when that is exact (below ``2^23``), else unchanged."""
    if np.float32 == FAST_DTYPE and float(np.max(np.abs(M), initial=0.0)) < 2.0 ** 23:
        return M.astype(np.float32)
    return M


def shift_terms(dbar, min_diff, cprime, scale, dtype) -> tuple[np.ndarray, np.ndarray]:
    """The power test's per-pair terms ``(delta', c' delta'^2)`` in ``dtype`` (see :func:`fast_block`)."""
    with np.errstate(over="ignore"):    # a shift that overflows is rejected: power 1
        dprime = (min_diff - dbar) / ((1.0 + cprime) * scale)
        return dprime.astype(dtype), (cprime * dprime * dprime).astype(dtype)


@functools.cache
def compiled_loops() -> bool:
    """Whether the compiled loops of :mod:`planner.simulate.compiled` can run here (numba
    imports and can cache its code); without them the numpy path gives the same numbers."""
    try:
        from . import compiled  # noqa: F401
    except (ImportError, RuntimeError):  # numba absent, or no writable cache location
        return False
    return True


def pair_pass(M: np.ndarray, aa: np.ndarray, bb: np.ndarray, out: np.ndarray,
              tests: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> tuple[tuple, tuple | None]:
    """One compiled pass (:mod:`planner.simulate.compiled`) over the pairs' resamples: ``out`` gets
    :func:`pair_diff` rounded to float32 (stored as ``out``'s dtype: int32 keeps the integer
    sums' differences exactly), and the result is that float32 difference's per-row counts of
    positive and negative values and, with ``tests = (Q, dp, g)``, :func:`test_counts`' two counts:
    ``((pos, neg), (sig, pw) or None)``, the numpy path's counts, bit for bit."""
    from . import compiled

    c = aa.size
    pos, neg = np.empty(c, dtype=np.intp), np.empty(c, dtype=np.intp)
    if tests is None:
        compiled.diff_signs(M, aa, bb, out, pos, neg)
        return (pos, neg), None
    sig, pw = np.empty(c, dtype=np.intp), np.empty(c, dtype=np.intp)
    compiled.diff_tests(M, aa, bb, *tests, out, pos, neg, sig, pw)
    return (pos, neg), (sig, pw)


def test_counts(u: np.ndarray, Q: np.ndarray, dp: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the resamples with ``u^2 > Q`` (significant) and with ``(u + dp)^2 + g > Q``
    (power), every operation in ``u``'s precision (the compiled loops of :func:`pair_pass`
    make the same counts)."""
    v = u * u
    sig = count_true(v > Q)
    with np.errstate(over="ignore"):
        np.add(u, dp[:, None], out=v)
        v *= v
        v += g[:, None]
    return sig, count_true(v > Q)


def fast_block(Msys, scale, aa, bb, Q, dbar, alpha, min_diff, cprime, halves, dtype, compiled=False, counts=None):
    """Per-pair statistics of one stratum for a few pairs, from the systems' sums.

    ``Msys`` (S, R): every system's resampled sum of its scores on the integer
    grid of :func:`score_grid` (exact; float32 only when below ``2^23``,
    :func:`exact_small`). A resample's mean difference is
    ``m = scale * u`` with ``u = Msys[a] - Msys[b]`` (exact in float64, then
    rounded to ``dtype``: its sign and zeros are kept exactly; a tie, the same
    sum for both systems, is exactly 0).
    ``Q`` (c, R): the resampled sums of ``kappa d^2`` with ``kappa = c' / (n (1 +
    c') scale^2)``, ``c' = crit^2 / (n - 1)`` (None: no t-tests). The paired t-test
    rejects when ``m^2 > crit^2 var / n`` (``var`` the ddof=1 variance of the
    drawn differences), i.e. ``u^2 > Q``; with every difference shifted by
    ``delta = min_diff - dbar`` (power) when ``(u + delta')^2 + g > Q``,
    ``delta' = delta / ((1 + c') scale)``, ``g = c' (delta' )^2`` (the same
    inequality, rearranged; :func:`test_counts`). ``compiled``: the differences, their signs
    and the t-test counts from one compiled pass (:func:`pair_pass`; the same numbers).
    ``counts``: the two counts already made (:class:`~planner.simulate.resampling.GramSums`),
    instead of ``Q``.
    """
    c = aa.size
    R = Msys.shape[1]
    terms = shift_terms(dbar, min_diff, cprime, scale, dtype) if counts is None and Q is not None else None
    # float32 sums are integers below 2^23 (exact_small): their differences' order statistics
    # are selected among int32 values (numpy partitions int32 2-3x faster than float32)
    exact = Msys.dtype == np.float32
    if compiled:  # one pass: differences (int32 when exact), signs and t-test counts
        u = np.empty((c, R), dtype=np.int32 if exact else dtype)
        signs, made = pair_pass(Msys, aa, bb, u, None if terms is None else (Q, *terms))
        counts = made if made is not None else counts
        swap, rev = order_rates(u, dbar, halves, count_true, signs)
    else:
        u = pair_diff(Msys, aa, bb, np.empty((c, R), dtype=dtype))
        swap, rev = order_rates(u, dbar, halves, count_true)
        if terms is not None:
            counts = test_counts(u, Q, *terms)
        if exact:
            u = u.astype(np.int32)
    if counts is None:
        sig = power = np.full(c, np.nan)
    else:
        sig, power = counts[0] / R, counts[1] / R
    lo, hi = linear_quantiles(u, (alpha / 2, 1 - alpha / 2))
    return {"swap_rate": swap, "reversal_rate": rev, "ci_width": (hi - lo) * scale,
            "power": power, "significant": sig}


def count_stream(base: np.random.SeedSequence, n: int) -> np.random.Generator:
    ss = np.random.SeedSequence(base.entropy, spawn_key=tuple(base.spawn_key) + (int(n),))
    return np.random.Generator(np.random.PCG64(ss))
