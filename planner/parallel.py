"""Where independent tasks run: in this process, a local process pool, or a Dask cluster.

Study scenarios, validation repeats and coverage draws are independent tasks, each with
its own random stream (:mod:`planner._random`), so they may run anywhere and in any
order: :func:`run_tasks` returns their results in the order of the tasks, and the
numbers are the same (byte for byte) serially, with ``jobs=N`` local processes or on a
``dask.distributed`` cluster named by ``scheduler`` (an address such as
``tcp://10.0.0.5:8786``, or a ``distributed.Client``). Dask is optional:
``pip install 'planner[dask]'``.

Examples
--------
>>> run_tasks(abs, [-1, 2, -3])
[1, 2, 3]
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import ParameterError

__all__ = ["Overshare", "check_jobs", "check_scheduler", "local_workers", "over_share", "run_tasks"]

#: local worker processes of :func:`run_tasks` running at once, as seen inside one of them (1 in
#: any other process): the memory limits that hold for a whole command are split between them
_WORKERS = 1


def local_workers() -> int:
    """How many processes of this machine share a command's memory limits: the size of the
    :func:`run_tasks` pool inside one of its workers, 1 elsewhere (this process, a Dask worker).

    :func:`over_share` gives each worker this share of a command's memory limits
    (:data:`planner.variance.MAX_PAIR_MEMORY`, :data:`planner.plan.MAX_RESAMPLED_PAIR_BYTES`), so
    ``--jobs`` does not multiply a command's memory.
    """
    return _WORKERS


@dataclass(frozen=True)
class Overshare:
    """Why a need passes this process's share of a memory limit (:func:`over_share`).

    Attributes
    ----------
    clause : str
        The end of the error's first part: ``", over the limit of L MB (NAME)"``, or in one of
        ``N`` local workers ``" in each of --jobs N processes, over their share S MB of the
        limit of L MB (NAME)"``.
    share : int
        The bytes this process may take (the limit, or its share ``limit / N``).
    jobs : int or None
        The ``--jobs`` that would hold the need (None: one process alone is over the limit).
    """

    clause: str
    share: int
    jobs: int | None


def over_share(need: int, limit: int, name: str) -> Overshare | None:
    """None when ``need`` bytes fit in this process's share of a command's memory limit ``limit``
    (called ``name``): the whole limit in one process, ``limit / N`` in each of ``N`` local
    workers (:func:`local_workers`); else why not.

    Examples
    --------
    >>> over_share(100 << 20, 128 << 20, "MAX_PAIR_MEMORY") is None
    True
    >>> over_share(200 << 20, 128 << 20, "MAX_PAIR_MEMORY").clause
    ', over the limit of 128 MB (MAX_PAIR_MEMORY)'
    """
    workers = local_workers()
    whole = f"the limit of {limit / 2**20:,.0f} MB ({name})"
    if need > limit:
        return Overshare(f", over {whole}", limit, None)
    if need * workers > limit:
        return Overshare(f" in each of --jobs {workers} processes, over their share "
                         f"{limit / workers / 2**20:,.0f} MB of {whole}", limit // workers, max(1, limit // need))
    return None


def _set_workers(n: int) -> None:
    """Pool initializer: this worker is one of ``n``."""
    global _WORKERS
    _WORKERS = int(n)


def check_jobs(jobs: Any, *, parameter: str = "jobs") -> int:
    """``jobs`` as an integer >= 1 (local processes)."""
    import numpy as np

    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs < 1:
        raise ParameterError(f"expected an integer >= 1, got {jobs!r}", parameter=parameter)
    return int(jobs)


def check_scheduler(scheduler: Any, *, parameter: str = "scheduler") -> Any:
    """``None``, a non-empty address string or a ``distributed.Client``; the address
    must be reachable only when tasks are sent (:func:`run_tasks`)."""
    if scheduler is None or (isinstance(scheduler, str) and scheduler.strip()):
        return scheduler.strip() if isinstance(scheduler, str) else None
    if type(scheduler).__name__ == "Client" and hasattr(scheduler, "submit"):
        return scheduler
    raise ParameterError(f"expected a Dask scheduler address (e.g. tcp://host:8786) or a "
                         f"distributed.Client, got {scheduler!r}", parameter=parameter)


def _client(scheduler: Any, parameter: str):
    """A ``distributed.Client`` for ``scheduler`` and whether this call opened it."""
    try:
        from distributed import Client
    except ImportError:
        raise ParameterError("needs Dask: pip install 'planner[dask]'", parameter=parameter) from None
    if not isinstance(scheduler, str):
        return scheduler, False
    try:
        return Client(scheduler, timeout="10s"), True
    except (OSError, TimeoutError) as exc:
        raise ParameterError(f"cannot reach the Dask scheduler {scheduler}: {exc}", parameter=parameter) from None


def run_tasks(fn: Callable[[Any], Any], tasks: Sequence[Any], *, jobs: int = 1, scheduler: Any = None,
              progress: Callable[[], None] | None = None, parameter: str = "scheduler") -> list:
    """``[fn(t) for t in tasks]``, computed serially, in ``jobs`` local processes, or on Dask.

    Parameters
    ----------
    fn : callable
        A module-level function (it is pickled to the workers); its result must not depend
        on where it runs.
    tasks : sequence
        Its arguments, one a task.
    jobs : int, optional
        Local worker processes (1: this process). Ignored with ``scheduler``.
    scheduler : str or distributed.Client, optional
        A Dask scheduler's address or a client: the tasks run on that cluster's workers.
    progress : callable, optional
        Called once as each task finishes (in completion order).
    parameter : str, optional
        The option named in errors about the scheduler (``--scheduler`` from the CLI).

    Returns
    -------
    list
        The results, in the order of ``tasks``. An exception raised by a task is raised here.
    """
    tasks = list(tasks)
    out: list[Any] = [None] * len(tasks)
    tick = progress or (lambda: None)
    if scheduler is not None:
        client, opened = _client(scheduler, parameter)
        try:
            futs = client.map(fn, tasks, pure=False)
            index = {f.key: i for i, f in enumerate(futs)}
            from distributed import as_completed

            for f in as_completed(futs):
                out[index[f.key]] = f.result()
                tick()
        finally:
            if opened:
                client.close()
        return out
    if jobs == 1 or len(tasks) <= 1:
        for i, t in enumerate(tasks):
            out[i] = fn(t)
            tick()
        return out
    ctx = mp.get_context("spawn") if sys.platform == "win32" else mp.get_context("fork")
    n = min(jobs, len(tasks))
    with cf.ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=_set_workers, initargs=(n,)) as ex:
        pending = {ex.submit(fn, t): i for i, t in enumerate(tasks)}
        for f in cf.as_completed(pending):
            out[pending[f]] = f.result()
            tick()
    return out
