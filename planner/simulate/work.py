"""The work and memory of a simulation, estimated before it starts, and their limits (issue 23).

A 700-byte score file and one option could start hours of work or tens of gigabytes
(``predict --topics 1000000 --method bootstrap`` draws ``R n`` = a billion topics, 40 GB).
Every engine estimates what one call will cost (:meth:`planner.simulate.engine.PairEngine.work`),
:func:`planner.simulate.predict` adds what it keeps (the per-pair results) and the
prediction band's resamples, and :func:`check_work` refuses, before anything is drawn, a call
over :data:`MAX_WORK` or :data:`MAX_HELD`, naming the option and the most resamples or the
largest topic count that fit.

The work is counted in *units* of about the CPU time of one bootstrap statistic of one pair
in one resample (16 ns on the machine of ``docs/research/known-limits.md``); the coefficients
of each engine were measured there (``benchmarks/bench_limits.py --case work``). An estimate,
within a factor of about 2, that stops hours of work, not seconds.

Examples
--------
>>> Work(units=1e6, held=1 << 20) + Work(units=2e6, held=1 << 20)
Work(units=3000000.0, held=2097152)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import ParameterError

__all__ = ["MAX_HELD", "MAX_WORK", "UNIT_NS", "Shape", "Work", "check_work"]

#: most work units one simulation call may take: 2e10, about 5 minutes of CPU at
#: :data:`UNIT_NS` (a bootstrap with 1,000 resamples of 2,219 systems, the pair limit, at
#: 8 topic counts of 50; the default method at about 25 counts there)
MAX_WORK = 2e10
#: nanoseconds of CPU a work unit takes on the reference machine (docs/research/known-limits.md)
UNIT_NS = 16
#: most bytes a simulation call may hold beside its chunks of pairs (``max_memory``): the
#: per-pair results it keeps and one topic count's draws (the bootstrap: about 52 bytes a drawn
#: topic, so ``R n`` up to about 7.7 million). 384 MB: with the chunks (256 MB), the pair
#: statistics (at most 128 MB, ``MAX_PAIR_MEMORY``) and the interpreter, a command stays under 1 GB
MAX_HELD = 384 << 20


@dataclass(frozen=True)
class Work:
    """Estimated cost of a computation: ``units`` of work (:data:`UNIT_NS` each) and ``held``
    bytes (beside its chunks)."""

    units: float
    held: int

    def __add__(self, other: Work) -> Work:
        return Work(self.units + other.units, self.held + other.held)


@dataclass(frozen=True)
class Shape:
    """What the work of a simulation depends on: ``S`` systems, ``T`` topics, the topic counts
    ``n``, ``R`` resamples, ``K`` strata, whether the t-tests run, the chunks' memory, and
    whether the method draws disjoint pairs of sets (subsample: ``2 R`` sets)."""

    systems: int
    n_topics: int
    counts: tuple[int, ...]
    resamples: int
    strata: int = 1
    t_tests: bool = True
    max_memory: int = 256 << 20
    disjoint: bool = False

    @property
    def pairs(self) -> int:
        """``P = S (S - 1) / 2``."""
        return self.systems * (self.systems - 1) // 2


def _largest(fits: Callable[[int], bool], hi: int, lo: int = 2) -> int | None:
    """The largest ``v`` in ``[lo, hi]`` with ``fits(v)`` (``fits`` falls with ``v``), or None."""
    if hi < lo or not fits(lo):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
    return lo


def check_work(estimate: Callable[[Sequence[int], int], Work], counts: Sequence[int], resamples: int | None,
               *, what: str, parameter: str = "n_resamples", also: str | None = None) -> None:
    """Refuse a computation whose ``estimate(counts, resamples)`` is over :data:`MAX_WORK` or
    :data:`MAX_HELD`: a ParameterError naming ``parameter`` (the resamples) when fewer would fit
    (``resamples`` None: the work does not depend on them), else ``topics``, giving what fits
    (and ``also``, one more remedy).

    Examples
    --------
    >>> check_work(lambda c, r: Work(r * max(c) * 40.0, 52 * r * max(c)), [10**6], 1000,
    ...            what="bootstrap")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    planner.errors.ParameterError: n_resamples: bootstrap at up to 1,000,000 topics with 1,000 resamples ...
    """
    w = estimate(counts, resamples or 0)

    def ok(v: Work) -> bool:
        return v.units <= MAX_WORK and v.held <= MAX_HELD

    if ok(w):
        return
    over = []
    if w.units > MAX_WORK:
        over.append(f"about {w.units:.1e} units of work ({w.units * UNIT_NS / 6e10:,.0f} min of CPU), over "
                     f"MAX_WORK {MAX_WORK:.0e}")
    if w.held > MAX_HELD:
        over.append(f"{w.held / 2**20:,.0f} MB of draws and results, over MAX_HELD {MAX_HELD >> 20} MB")
    top = max(counts)
    n_fit = _largest(lambda n: ok(estimate([c for c in counts if c <= n] or [n], resamples or 0)), top - 1)
    r_fit = None if resamples is None else _largest(lambda r: ok(estimate(counts, r)), resamples - 1)
    fixes = ([f"at most {r_fit:,} resamples"] if r_fit else []) + \
        ([f"topic counts up to {n_fit:,}"] if n_fit else []) + ([also] if also else []) + \
        ["fewer topic counts or systems"]
    runs = f" with {resamples:,} resamples" if resamples else ""
    several = f" ({len(counts):,} topic counts)" if len(counts) > 1 else ""
    raise ParameterError(f"{what} at up to {top:,} topics{runs}{several} needs "
                         + " and ".join(over) + ": use " + ", or ".join(fixes),
                         parameter=parameter if r_fit else "topics")
