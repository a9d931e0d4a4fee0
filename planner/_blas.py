"""BLAS threads, limited where a step runs many small matrix products.

OpenBLAS starts one thread per core for every product and its idle threads busy-wait
between calls. For the thin or small products of the REML iterations, the resampling
engines and the pair statistics of a study, that waiting costs more CPU than the
threads save (REML on 200 x 150 with 5% cells missing: 2.1-3.3 s CPU with the threads
as found, 0.34-0.40 s on one; docs/research/speed.md), and on a shared machine it takes
the cores other processes need. :func:`one_blas_thread` is the one place that limits them.
"""

from __future__ import annotations

import contextlib
import sys

__all__ = ["one_blas_thread"]

#: the threadpoolctl controller and the number of imported modules when it was made: a
#: controller scans the process's loaded libraries (about 3 ms CPU), so one is kept and
#: made again only after an import (the only way a new BLAS library can be loaded)
_CONTROLLER: list[object] = []


def _controller(threadpoolctl) -> object:
    loaded = len(sys.modules)
    if not _CONTROLLER or _CONTROLLER[1] != loaded:
        _CONTROLLER[:] = [threadpoolctl.ThreadpoolController(), loaded]
    return _CONTROLLER[0]


def one_blas_thread() -> contextlib.AbstractContextManager[object]:
    """Context limiting BLAS to one thread (``threadpoolctl``; unchanged without it).

    Examples
    --------
    >>> with one_blas_thread():
    ...     pass
    """
    try:
        import threadpoolctl
    except ImportError:  # a dependency, but the numbers do not depend on it
        return contextlib.nullcontext()
    return _controller(threadpoolctl).limit(limits=1, user_api="blas")  # type: ignore[attr-defined]
