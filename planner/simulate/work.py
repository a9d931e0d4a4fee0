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

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import ParameterError
from ..parallel import local_workers, over_share

__all__ = ["MAX_HELD", "MAX_WORK", "UNIT_NS", "Knob", "Shape", "Work", "check_fits", "check_limits", "check_work",
           "fits", "largest_fitting", "max_work"]

#: most work units one simulation call may take: 2e10, about 5 minutes of CPU at
#: :data:`UNIT_NS` (a bootstrap with 1,000 resamples of 2,219 systems, the pair limit, at
#: 8 topic counts of 50; the default method at about 25 counts there); the environment variable
#: ``PLANNER_MAX_WORK`` (units) sets another, for runs meant to be long (``benchmarks/bench_validate.py``)
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


def max_work() -> float:
    """:data:`MAX_WORK`, or ``PLANNER_MAX_WORK`` units when that is set."""
    env = os.environ.get("PLANNER_MAX_WORK", "").strip()
    try:
        return float(env) if env else MAX_WORK
    except ValueError:
        raise ParameterError(f"expected a number of work units, got {env!r}", parameter="PLANNER_MAX_WORK") from None


def fits(w: Work) -> bool:
    """True when ``w`` is within :func:`max_work` and this process's share of :data:`MAX_HELD` (the
    whole of it, or ``MAX_HELD / N`` in each of ``N`` local ``--jobs`` workers:
    :func:`planner.parallel.over_share`)."""
    return w.units <= max_work() and over_share(w.held, MAX_HELD, "MAX_HELD") is None


def largest_fitting(cost: Callable[[int], Work], hi: int, lo: int = 2) -> int | None:
    """The largest ``v`` in ``[lo, hi]`` whose ``cost(v)`` :func:`fits` (``cost`` grows with ``v``),
    or None: how far a search may go within the limits (``planner size --target``)."""
    return _largest(lambda v: fits(cost(v)), hi, lo)


@dataclass(frozen=True)
class Knob:
    """An option a computation's work grows with: its ``parameter`` (named in the error), its
    ``value``, how it reads in the error (``shown``, formatted with the value) and the remedy
    (``fix``, formatted with the largest value that fits)."""

    parameter: str
    value: int
    shown: str = "{:,} resamples"
    fix: str = "at most {:,} resamples"


def _over(w: Work) -> list[str]:
    """Why ``w`` does not :func:`fits`, in words."""
    over = []
    limit = max_work()
    if w.units > limit:
        over.append(f"about {w.units:.1e} units of work ({w.units * UNIT_NS / 6e10:,.0f} min of CPU), over "
                    f"MAX_WORK {limit:.0e} (PLANNER_MAX_WORK sets it)")
    share = over_share(w.held, MAX_HELD, "MAX_HELD")
    if share is not None and share.jobs is None:
        over.append(f"{w.held / 2**20:,.0f} MB of draws and results, over MAX_HELD {MAX_HELD >> 20} MB")
    elif share is not None:
        over.append(f"{w.held / 2**20:,.0f} MB of draws and results in each of --jobs "
                    f"{local_workers()} processes, over their share {share.share / 2**20:,.0f} MB of "
                    f"MAX_HELD {MAX_HELD >> 20} MB")
    return over


def check_limits(estimate: Callable[[Sequence[int], tuple[int, ...]], Work], counts: Sequence[int],
                 knobs: Sequence[Knob] = (), *, what: str, also: str | None = None,
                 parameter: str = "topics", n_fix: str = "topic counts up to {:,}") -> None:
    """Refuse a computation whose ``estimate(counts, knob values)`` does not :func:`fits`: a
    ParameterError naming the first of ``knobs`` whose smaller values would fit (else ``parameter``),
    giving for each knob and for the topic counts (``n_fix``) the largest value that fits (and ``also``, one
    more remedy; in a ``--jobs`` worker over its share of MAX_HELD, the ``--jobs`` that fits).
    Each knob's value is lowered alone, the others kept."""
    values = tuple(k.value for k in knobs)
    w = estimate(counts, values)
    if fits(w):
        return
    top = max(counts)
    n_fit = _largest(lambda n: fits(estimate([c for c in counts if c <= n] or [n], values)), top - 1)
    fixes, named = [], None
    def fits_with(i: int) -> Callable[[int], bool]:
        return lambda v: fits(estimate(counts, values[:i] + (v,) + values[i + 1:]))

    for i, k in enumerate(knobs):
        got = _largest(fits_with(i), k.value - 1)
        if got:
            fixes.append(k.fix.format(got))
            named = named or k.parameter
    share = over_share(w.held, MAX_HELD, "MAX_HELD")
    fixes += ([n_fix.format(n_fit)] if n_fit else []) + ([also] if also else []) + \
        ([f"--jobs {share.jobs}"] if share is not None and share.jobs else []) + ["fewer topic counts or systems"]
    runs = " and ".join(k.shown.format(k.value) for k in knobs if k.value)
    several = f" ({len(counts):,} topic counts)" if len(counts) > 1 else ""
    raise ParameterError(f"{what} at up to {top:,} topics{' with ' + runs if runs else ''}{several} needs "
                         + " and ".join(_over(w)) + ": use " + ", or ".join(fixes),
                         parameter=named or parameter)


def check_work(estimate: Callable[[Sequence[int], int], Work], counts: Sequence[int], resamples: int | None,
               *, what: str, parameter: str = "n_resamples", also: str | None = None) -> None:
    """Refuse a computation whose ``estimate(counts, resamples)`` is over :data:`MAX_WORK` or
    :data:`MAX_HELD`: a ParameterError naming ``parameter`` (the resamples) when fewer would fit
    (``resamples`` None: the work does not depend on them), else ``topics``, giving what fits
    (and ``also``, one more remedy): :func:`check_limits` with one knob.

    Examples
    --------
    >>> check_work(lambda c, r: Work(r * max(c) * 40.0, 52 * r * max(c)), [10**6], 1000,
    ...            what="bootstrap")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    planner.errors.ParameterError: n_resamples: bootstrap at up to 1,000,000 topics with 1,000 resamples ...
    """
    knobs = () if resamples is None else (Knob(parameter, resamples),)
    check_limits(lambda c, v: estimate(c, v[0] if v else 0), counts, knobs, what=what, also=also)


def check_fits(w: Work, *, what: str, parameter: str, fixes: Sequence[str]) -> None:
    """Refuse ``w`` when it does not :func:`fits`: a ParameterError naming ``parameter``, saying how far
    ``what`` is over the limits and offering ``fixes`` (for work whose remedy is not one smaller number
    of resamples or topics: another engine, fewer pool depths).

    Examples
    --------
    >>> check_fits(Work(1e12, 0), what="REML with statsmodels", parameter="reml_engine",
    ...            fixes=["reml_engine='direct'"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    planner.errors.ParameterError: reml_engine: REML with statsmodels needs about 1.0e+12 units of work ...
    """
    if fits(w):
        return
    raise ParameterError(f"{what} needs " + " and ".join(_over(w)) + ": use " + ", or ".join(fixes),
                         parameter=parameter)
