"""Plain-Python copies of results for ``to_dict()`` and ``--json`` (private helper).

One converter for planner.cli (``print_json``), planner.plan and planner.simulate
(``to_dict``) and planner.report (``jsonable``, results.json): objects with a
``to_dict()`` method (results, not data frames) are converted through it,
mappings become dicts with ``str`` keys, lists/tuples/arrays become lists, numpy
scalars become ``bool``/``int``/``float``/``str``, paths become strings. With
``finite=True`` (the default, JSON output) NaN and +-inf become ``None``;
planner.plan keeps them (``finite=False``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

import numpy as np


def plain(obj, *, finite: bool = True):
    """Plain-Python copy of ``obj`` (see the module docstring)."""
    if hasattr(obj, "to_dict") and not isinstance(obj, dict) and not hasattr(obj, "columns"):
        obj = obj.to_dict()
    if isinstance(obj, Mapping):
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
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    return obj
