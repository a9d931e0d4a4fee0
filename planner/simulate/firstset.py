"""Swap rates binned as Voorhees & Buckley bin them: by the first topic set's difference.

:func:`planner.simulate.predict` bins pairs by the difference the whole collection gives them
(``|dbar|``), so a bin's swap rate is that of pairs whose *true* difference is about that large.
Voorhees & Buckley (SIGIR 2002, "The effect of topic set size on retrieval experiment error")
draw two disjoint topic sets of n topics, bin each pair and draw by the difference on the
*first* set, and report the share of those draws in which the second set orders the pair the
other way. The two answer different questions (the second: "I saw a difference of d on my
topics; how likely does another set reverse it?"), and their tables can only be compared bin
for bin with the same binning; :func:`first_set_bins` gives theirs.

Memory: ``8 * S * R`` for the systems' sums per set and ``~24 * PAIR_BLOCK`` for a chunk of
pairs x draws; the draws are made per topic count before the pairs are chunked, so the
numbers do not depend on the chunk size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd

from .._checks import check_int, check_rng
from ..collection import as_matrix
from ..errors import InputError, ParameterError
from ..variance import pair_index, score_grid
from .curve import DEFAULT_BINS
from .summary import bin_index
from .work import Work, check_work

__all__ = ["FirstSetBins", "first_set_bins"]

#: pairs x draws per chunk (floats)
_BLOCK = 2_000_000


@dataclass(frozen=True)
class FirstSetBins:
    """Swap rates by bins of the first set's ``|difference|`` (Voorhees & Buckley's binning).

    Attributes
    ----------
    topics : tuple of int
        The topic counts n (each set has n topics; ``2 n`` at most the collection's).
    edges : tuple of float
        Bin edges of ``|d1|``, the first set's mean difference of a pair.
    draws : numpy.ndarray
        ``(N, B)``: pair-draws whose ``|d1|`` fell in each bin.
    swaps : numpy.ndarray
        ``(N, B)``: of those, the draws the second set orders the other way (a tie on one of
        the two sets counts half).
    n_resamples : int
        Pairs of disjoint sets drawn per topic count.
    seed : int or None
        The seed given.
    """

    topics: tuple[int, ...]
    edges: tuple[float, ...]
    draws: np.ndarray
    swaps: np.ndarray
    n_resamples: int
    seed: int | None

    @property
    def swap_rate(self) -> np.ndarray:
        """``swaps / draws`` per topic count and bin (NaN for an empty bin)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.draws > 0, self.swaps / np.maximum(self.draws, 1), np.nan)

    def to_frame(self) -> pd.DataFrame:
        """One row per topic count and bin: n_topics, bin_lo, bin_hi, draws, swaps, swap_rate."""
        rate = self.swap_rate
        rows = [{"n_topics": n, "bin_lo": self.edges[k], "bin_hi": self.edges[k + 1],
                 "draws": int(self.draws[j, k]), "swaps": float(self.swaps[j, k]),
                 "swap_rate": float(rate[j, k])}
                for j, n in enumerate(self.topics) for k in range(len(self.edges) - 1)]
        return pd.DataFrame(rows)

    def to_dict(self) -> dict:
        """Plain-Python form (``rows`` as in :meth:`to_frame`; NaN as None)."""
        rows = [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()}
                for r in self.to_frame().to_dict("records")]
        return {"binning": "first-set (Voorhees & Buckley)", "n_resamples": self.n_resamples,
                "seed": self.seed, "rows": rows}


def _check(x: np.ndarray, topics: Sequence[int], bins: Sequence[float]) -> tuple[list[int], np.ndarray]:
    if np.isnan(x).any():
        raise InputError("first-set binning needs complete scores (no missing cells)")
    ns = [check_int(n, "topics", minimum=1) for n in topics]
    T = x.shape[1]
    if any(2 * n > T for n in ns):
        raise ParameterError(f"two disjoint sets of n topics need 2 n <= {T} (the collection's topics), "
                             f"got n = {max(ns)}", parameter="topics")
    edges = np.asarray(bins, dtype=float)
    if edges.ndim != 1 or edges.size < 2 or np.any(np.diff(edges) <= 0) or edges[0] < 0:
        raise ParameterError("bin edges must be an increasing list of at least 2 numbers >= 0",
                             parameter="bins")
    return ns, edges


def first_set_work(S: int, T: int, counts: Sequence[int], R: int) -> Work:
    """The work of :func:`first_set_bins` (:mod:`planner.simulate.work`): per count, ``R`` random
    permutations of the ``T`` topics and the sums of two sets, ``R (T (S / 4 + 8) + 2 P)`` units;
    held: the permutations and the draw weights, ``32 R T`` bytes."""
    P = S * (S - 1) // 2
    return Work(sum(R * (T * (S / 4.0 + 8.0) + 2.0 * P) for _ in counts), 32 * R * T)


def _seed_sequence(rng) -> np.random.SeedSequence:
    """The SeedSequence behind ``rng`` (a Generator's own, else one made from the seed)."""
    if isinstance(rng, np.random.Generator):
        return cast(np.random.SeedSequence, rng.bit_generator.seed_seq)
    if isinstance(rng, np.random.SeedSequence):
        return rng
    return np.random.SeedSequence(None if rng is None else int(rng))


def first_set_bins(scores, *, topics: Sequence[int], bins: Sequence[float] = DEFAULT_BINS,
                   n_resamples: int = 1000, rng=None) -> FirstSetBins:
    """Swap rates by bins of the first topic set's ``|difference|`` (Voorhees & Buckley).

    For each topic count n, ``n_resamples`` times: two disjoint sets of n topics drawn without
    replacement; every pair's mean difference on each (``d1``, ``d2``, exact sums on the
    scores' integer grid, so a tie is exactly 0); the draw counted in the bin of ``|d1|``,
    and as a swap when ``d2`` has the other sign (half when one of the two is a tie).

    Parameters
    ----------
    scores : ScoreMatrix or path or array_like
        Complete scores, systems x topics.
    topics : sequence of int
        Topic counts n, each with ``2 n`` at most the collection's topic count.
    bins : sequence of float
        Bin edges of ``|d1|`` (default :data:`DEFAULT_BINS`, the bins of ``predict``).
    n_resamples : int
        Pairs of sets drawn per n.
    rng : int, Generator or None
        Seed; the draws of each n come from their own child stream.

    Returns
    -------
    FirstSetBins

    Examples
    --------
    >>> x = [[0.1, 0.2, 0.3, 0.4], [0.2, 0.2, 0.2, 0.2], [0.4, 0.3, 0.2, 0.1]]
    >>> r = first_set_bins(x, topics=[2], bins=[0, 0.1, 1], n_resamples=50, rng=1)
    >>> int(r.draws.sum())      # 3 pairs x 50 draws
    150
    """
    check_rng(rng)
    m = as_matrix(scores)
    x = m.topic_scores()
    ns, edges = _check(x, topics, bins)
    R = check_int(n_resamples, "n_resamples", minimum=1)
    S, T = x.shape
    check_work(lambda c, r: first_set_work(S, T, c, r), ns, R, what="first-set binning")
    a, b = pair_index(S)
    base = _seed_sequence(rng)
    B = edges.size - 1
    draws, swaps = np.zeros((len(ns), B)), np.zeros((len(ns), B))
    for j, n in enumerate(ns):     # each n its own stream, keyed on n (as the engines' count_stream)
        g = np.random.Generator(np.random.PCG64(
            np.random.SeedSequence(base.entropy, spawn_key=tuple(base.spawn_key) + (int(n),))))
        order = np.argsort(g.random((R, T)), axis=1)     # R random permutations of the topics
        q, unit = score_grid(x, n)
        sums = []
        for k in (0, 1):                                   # (S, R) exact integer sums, per set
            w = np.zeros((T, R))
            w[order[:, k * n:(k + 1) * n].T, np.arange(R)] = 1.0
            sums.append(q @ w)
        # |d1| as exact_dbar gives a mean difference: one rounding from the exact sum
        div, mul = (n * float(round(1.0 / unit)), 1.0) if unit <= 1.0 else (float(n), unit)
        chunk = max(1, _BLOCK // R)
        for lo in range(0, a.size, chunk):
            aa, bb = a[lo:lo + chunk], b[lo:lo + chunk]
            u1 = sums[0][aa] - sums[0][bb]
            u2 = sums[1][aa] - sums[1][bb]
            code = bin_index((np.abs(u1) * mul / div).ravel(), edges)
            sw = (np.abs(np.sign(u1) - np.sign(u2)) / 2.0).ravel()
            ok = code >= 0
            draws[j] += np.bincount(code[ok], minlength=B)[:B]
            swaps[j] += np.bincount(code[ok], weights=sw[ok], minlength=B)[:B]
    return FirstSetBins(topics=tuple(ns), edges=tuple(float(e) for e in edges), draws=draws, swaps=swaps,
                        n_resamples=R, seed=rng if isinstance(rng, int) else None)
