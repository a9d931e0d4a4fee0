"""The one interface every engine of :func:`planner.simulate.predict` implements.

An engine is built once per call from a :class:`Setup` (:meth:`PairEngine.prepare`: the
prior of a predictive method, the draws' parent stream of a random one) and then computes
the pair statistics (:data:`PAIR_STATS`) of one block of pairs at one topic count
(:meth:`PairEngine.chunk`). :meth:`PairEngine.pieces` says in which order the blocks are
computed (pairs outer for the closed forms, which reuse per-chunk work over the topic
counts; topic counts outer for the random engines, whose draws are per count); the
results do not depend on that order, nor on the block size (every sum over pairs runs
over aligned blocks of :data:`~planner.simulate.kernels.BLOCK` pairs).

Examples
--------
>>> import numpy as np
>>> from planner.simulate.engine import PAIR_STATS, Setup
>>> from planner.simulate.analytic import AnalyticEngine
>>> x = np.array([[0.5, 0.6, 0.7, 0.4], [0.3, 0.5, 0.6, 0.5], [0.1, 0.2, 0.4, 0.3]])
>>> setup = Setup.build(x, "analytic", topics=(10, 20))
>>> engine = AnalyticEngine.prepare(setup)
>>> [(j, s.start, s.stop) for j, s in engine.pieces(chunk=512)]
[(0, 0, 3), (1, 0, 3)]
>>> stats = engine.chunk(0, slice(0, 3))
>>> sorted(stats) == sorted(PAIR_STATS)
True
>>> stats["reversal_rate"].round(4).tolist()
[0.0, 0.0, 0.0001]
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..methods import Method
from ..methods import method as _registered
from ..variance import pair_index, pair_moments
from .kernels import BLOCK
from .work import Shape, Work

__all__ = ["PAIR_STATS", "PairEngine", "Setup", "pairs_per_chunk"]

#: the per-pair statistics every engine computes, in this order
PAIR_STATS = ("swap_rate", "reversal_rate", "ci_width", "power", "significant")


@dataclass(frozen=True)
class Setup:
    """What an engine reads: the collection's pairs and the checked options of one call.

    Attributes
    ----------
    method : Method
        The registered method (:mod:`planner.methods`).
    x : ndarray, shape (S, T)
        The scores, systems x topics.
    a, b : ndarray
        The pairs ``a < b`` in row-major order.
    dbar, s2 : ndarray
        Each pair's mean difference (exact) and variance (ddof=1).
    labels, groups, weights : list, list of ndarray, ndarray
        The strata: names, topic indices and weights ``W_k = T_k / T`` (one stratum
        ``"all"`` when uniform).
    topics : tuple of int
        The topic counts.
    allocs : list
        Per topic count the topics per stratum ``n_k``, or ``None`` when the count is
        not simulated (subsample above ``T / 2``: extrapolated).
    variance : str
        The variance selector (closed forms) or ``"empirical"`` / ``"pooled"``.
    alpha, min_diff : float
        Test level and the true difference of the power.
    resamples : int
        ``R`` of the random engines.
    t_tests : bool
        Whether the resampling engines run the paired t-test in every resample.
    components : dict
        The ANOVA variance components (``var_s``, ``var_t``, ``var_e``, mean squares).
    pair_block : int
        Values of differences per block in the pair passes (bounded by the memory).
    base : SeedSequence or None
        Parent of the per-count streams of a random engine.
    prior : Prior or None
        A predictive engine's prior, fitted earlier on the same scores (None: fit it).
    grid : tuple or None
        The scores' decimal grid ``(q, unit)`` (:func:`planner.variance.decimal_grid` of ``x``
        with ``n_max = T``: :func:`planner.variance.score_grid` for every count up to ``T``) for
        the resampling engine with one stratum (C-ordered scores), or None (a binary grid, or
        another engine).
    """

    method: Method
    x: np.ndarray
    a: np.ndarray
    b: np.ndarray
    dbar: np.ndarray
    s2: np.ndarray
    labels: list[str]
    groups: list[np.ndarray]
    weights: np.ndarray
    topics: tuple[int, ...]
    allocs: list[np.ndarray | None]
    variance: str = "pair"
    alpha: float = 0.05
    min_diff: float = 0.05
    resamples: int = 1000
    t_tests: bool = True
    components: dict = field(default_factory=dict)
    pair_block: int = 2_000_000
    base: np.random.SeedSequence | None = None
    prior: Any = None
    grid: tuple[np.ndarray, float] | None = None

    @property
    def n_pairs(self) -> int:
        """``P``, the number of pairs."""
        return int(self.a.size)

    @property
    def n_strata(self) -> int:
        """``K``, the number of strata (1 when uniform)."""
        return len(self.groups)

    @classmethod
    def build(cls, x: np.ndarray, method: str, *, topics: Sequence[int], **options) -> Setup:
        """A uniform (one-stratum) setup of every pair of ``x``, for trying an engine.

        :func:`planner.simulate.predict` builds its own (with the checks, strata and
        memory plan); this is the short way for a test or an example.
        """
        x = np.asarray(x, dtype=float)
        a, b = pair_index(x.shape[0])
        dbar, s2 = pair_moments(x, a, b)
        ns = tuple(int(n) for n in topics)
        return cls(_registered(method), x, a, b, dbar, s2, ["all"], [np.arange(x.shape[1])], np.ones(1),
                   ns, [np.array([n]) for n in ns], **options)


def pairs_per_chunk(per: int, fixed: int, max_memory: int) -> int:
    """Pairs per chunk: the most within ``max_memory`` at ``per`` bytes a pair beside ``fixed``, a
    multiple of :data:`~planner.simulate.kernels.BLOCK` (at least one block)."""
    return max(BLOCK, (max_memory - fixed) // per // BLOCK * BLOCK)


class PairEngine(ABC):
    """How one family of methods computes the pair statistics (:data:`PAIR_STATS`).

    Subclasses implement :meth:`chunk` and :meth:`memory` (the chunk plan); they may
    override :meth:`prepare` (work done once per call), :meth:`pieces` (the order of the
    blocks) and :meth:`context`.
    """

    #: the fitted prior of a predictive engine (:attr:`planner.simulate.Curve.prior`)
    prior_info: dict | None = None

    def __init__(self, setup: Setup):
        self.setup = setup

    @classmethod
    def prepare(cls, setup: Setup) -> PairEngine:
        """The engine for one call of :func:`planner.simulate.predict`."""
        return cls(setup)

    @staticmethod
    @abstractmethod
    def memory(setup: Setup) -> tuple[int, int]:
        """``(per, fixed)``: bytes per pair of a chunk and bytes independent of the chunk
        (:func:`planner.simulate.predict.chunk_size` fits the chunks in ``max_memory``)."""

    @staticmethod
    @abstractmethod
    def work(shape: Shape) -> Work:
        """The work of one call on ``shape`` and the bytes it holds beside its chunks (its draws),
        estimated before it starts (:mod:`planner.simulate.work`)."""

    def context(self) -> contextlib.AbstractContextManager[object]:
        """A context the whole computation runs in (none by default)."""
        return contextlib.nullcontext()

    def pieces(self, chunk: int) -> Iterator[tuple[int, slice]]:
        """``(topic count index, pairs)`` in computing order: chunks of ``chunk`` pairs
        outer, the simulated topic counts inner."""
        P = self.setup.n_pairs
        for lo in range(0, P, chunk):
            sl = slice(lo, min(P, lo + chunk))
            for j, nk in enumerate(self.setup.allocs):
                if nk is not None:
                    yield j, sl

    @abstractmethod
    def chunk(self, j: int, pairs: slice) -> dict[str, np.ndarray]:
        """The statistics of ``pairs`` at topic count ``setup.topics[j]``: name -> (pairs,)."""
