"""The parametric engine: new topics simulated from the fitted two-way model.

``x[s,t] = mu + a[s] + b[t] + e[s,t]`` with the system effects fixed at the collection's
system means and ``e ~ N(0, var_e)`` drawn for all ``S`` systems and ``n`` topics
(``b[t]`` cancels in paired differences), ``R`` replicates in blocks of
:data:`PARAM_BLOCK`; the statistics as in the bootstrap
(:func:`~planner.simulate.kernels.draw_stats`). Its variance is ``pooled`` (every pair
``2 var_e``). The stream of a topic count restarts for every chunk of pairs, so every
chunk sees the same draws (results independent of the chunk size).

Examples
--------
>>> import numpy as np
>>> from planner.simulate.engine import Setup
>>> from planner.simulate.parametric import ParametricEngine
>>> x = np.array([[0.5, 0.6, 0.7, 0.4], [0.3, 0.5, 0.6, 0.5], [0.1, 0.2, 0.4, 0.3]])
>>> setup = Setup.build(x, "parametric", topics=(5,), resamples=100, variance="pooled",
...                     components={"var_e": 0.004}, base=np.random.SeedSequence(1))
>>> ParametricEngine.prepare(setup).chunk(0, slice(0, 3))["reversal_rate"].tolist()
[0.0, 0.0, 0.0]
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
from scipy import stats

from .engine import PairEngine, Setup, pairs_per_chunk
from .kernels import count_stream, draw_stats
from .work import Shape, Work

__all__ = ["PARAM_BLOCK", "ParametricEngine"]

PARAM_BLOCK = 16  # replicates per block in the parametric method


def _block_bytes(S: int, n: int) -> int:
    """Bytes of one block's normal draws and Gram matrices, ``8 * PARAM_BLOCK * S * (S + n)``."""
    return 8 * PARAM_BLOCK * S * (S + n)


class ParametricEngine(PairEngine):
    """Score matrices simulated from the variance components, per chunk of pairs."""

    def __init__(self, setup: Setup):
        super().__init__(setup)
        self.mu_s = setup.x.mean(axis=1)
        self.sd_e = math.sqrt(setup.components["var_e"])

    @staticmethod
    def memory(setup: Setup) -> tuple[int, int]:
        S = setup.x.shape[0]
        return 8 * 6 * setup.resamples, _block_bytes(S, max(setup.topics))

    @staticmethod
    def work(shape: Shape) -> Work:
        """Per count ``n``: each chunk of pairs draws its ``R S n`` normals again and their Gram
        matrices, ``R (chunks S n (1 + S / 16) + P)`` units (measured,
        docs/research/known-limits.md); held: a block's draws and Gram matrices,
        ``8 * 16 S (S + n)`` bytes."""
        S, P, R = shape.systems, shape.pairs, shape.resamples
        top = max(shape.counts)
        chunks = -(-P // pairs_per_chunk(8 * 6 * R, _block_bytes(S, top), shape.max_memory))
        units = sum(R * (chunks * S * n * (1.0 + S / 16.0) + P) for n in shape.counts)
        return Work(units, _block_bytes(S, top))

    def pieces(self, chunk: int) -> Iterator[tuple[int, slice]]:
        """Topic counts outer, chunks of ``chunk`` pairs inner."""
        P = self.setup.n_pairs
        for j in range(len(self.setup.topics)):
            for lo in range(0, P, chunk):
                yield j, slice(lo, min(P, lo + chunk))

    def replicates(self, j: int, pairs: slice) -> tuple[np.ndarray, np.ndarray]:
        """Per replicate and pair, the mean difference and its variance ``s2 / n``: ``(R, C)`` each."""
        s = self.setup
        n = s.topics[j]
        if s.base is None:
            raise ValueError("the parametric engine needs a seed")
        g_n = count_stream(s.base, n)  # restarted per chunk: same draws for every chunk
        aa, bb = s.a[pairs], s.b[pairs]
        M = np.empty((s.resamples, aa.size))
        V = np.empty((s.resamples, aa.size))
        S = s.x.shape[0]
        for r0 in range(0, s.resamples, PARAM_BLOCK):
            rb = min(PARAM_BLOCK, s.resamples - r0)
            E = g_n.standard_normal((rb, S, n)) * self.sd_e
            eb = E.mean(axis=2)
            G = E @ E.transpose(0, 2, 1)
            diff = eb[:, aa] - eb[:, bb]
            ss = G[:, aa, aa] + G[:, bb, bb] - 2.0 * G[:, aa, bb] - n * diff * diff
            M[r0:r0 + rb] = (self.mu_s[aa] - self.mu_s[bb])[None, :] + diff
            V[r0:r0 + rb] = np.maximum(ss, 0.0) / (n - 1.0) / n
            del E, G  # before the next block's (memory bound)
        return M, V

    def chunk(self, j: int, pairs: slice) -> dict[str, np.ndarray]:
        s = self.setup
        M, V = self.replicates(j, pairs)
        crit = stats.t.ppf(1 - s.alpha / 2, s.topics[j] - 1)
        return draw_stats(np.ascontiguousarray(M.T), np.ascontiguousarray(V.T) * crit * crit,
                          s.dbar[pairs], s.alpha, s.min_diff)
