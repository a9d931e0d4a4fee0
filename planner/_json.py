"""Plain-Python copies of results for ``to_dict()`` and ``--json`` (private helper).

One converter for planner.cli (``print_json``), planner.plan and planner.simulate
(``to_dict``): mappings become dicts with ``str`` keys, lists/tuples/arrays become
lists, numpy scalars become ``bool``/``int``/``float``/``str``. With ``finite=True``
(the default, JSON output) NaN and +-inf become ``None``; planner.plan keeps them
(``finite=False``). planner.report has its own ``jsonable`` (it also converts
``to_dict()`` objects and paths).
"""

from __future__ import annotations

import math

import numpy as np


def plain(obj, *, finite: bool = True):
    """Plain-Python copy of ``obj`` (see the module docstring)."""
    if isinstance(obj, dict):
        return {str(k): plain(v, finite=finite) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v, finite=finite) for v in obj]
    if isinstance(obj, np.ndarray):
        return plain(obj.tolist(), finite=finite)
    if isinstance(obj, np.generic):
        obj = obj.item()
        if isinstance(obj, np.floating):  # longdouble: item() keeps the numpy type
            obj = float(obj)
    if finite and isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj
