"""What the variance modules share: the checks of a matrix to fit and small numeric helpers."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

from ..errors import DegenerateDataWarning, InputError
from ..scores import ScoreMatrix

#: floats of work space per chunk (32 MB)
CHUNK_VALUES = 4_000_000


def label(m: ScoreMatrix) -> str:
    """How messages name the scores: their source, else their measure, else ``scores``."""
    return m.source or m.measure or "scores"


def check_size(x: np.ndarray, m: ScoreMatrix) -> None:
    """At least 2 systems and 2 topics, else an InputError naming the source."""
    if x.shape[0] < 2:
        raise InputError(f"need at least 2 systems to fit variance components, got {x.shape[0]}",
                         file=m.source)
    if x.shape[1] < 2:
        raise InputError(f"need at least 2 topics to fit variance components, got {x.shape[1]}",
                         file=m.source)


def check_degenerate(x: np.ndarray, m: ScoreMatrix, topics: Sequence[str]) -> None:
    """Error for a constant matrix; warning for topics on which every system scores the same."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo = np.nanmin(x, axis=0)  # (NaN for a topic without scores)
        hi = np.nanmax(x, axis=0)
    seen = ~np.isnan(lo)
    if not seen.any():
        raise InputError("no observed scores", file=m.source)
    if np.min(lo[seen]) == np.max(hi[seen]):  # every score the same (two passes fewer than comparing them)
        raise InputError(f"every score is {x[~np.isnan(x)][0]:.6g}: a constant matrix has no variance to "
                         "decompose", file=m.source)
    flat = np.flatnonzero(lo == hi)
    if flat.size:
        zero = [topics[int(j)] for j in flat if lo[j] == 0]
        listed = ", ".join(repr(topics[int(j)]) for j in flat[:5]) + (", ..." if flat.size > 5 else "")
        extra = f" ({len(zero)} of them all-zero)" if zero else ""
        warnings.warn(f"{label(m)}: {flat.size} topic(s) on which every system scores the same"
                      f"{extra}: {listed}; they add to the topic variance but cannot separate "
                      "systems (consider informative-topic filtering)",
                      DegenerateDataWarning, stacklevel=4)


def ratio(num, den) -> np.ndarray:
    """num / den as float64 arrays, without warnings for 0/0 (nan) or x/0 (inf)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(num, dtype=np.float64) / np.asarray(den, dtype=np.float64)


def scalar_or_array(arr: np.ndarray, like):
    """``arr`` as a float when ``like`` is a scalar, else the array."""
    return float(arr) if np.ndim(like) == 0 else arr


def ceil_or_inf(v: float) -> float:
    """``ceil(v)`` (at least 1) as a float, with rounding noise (12.000000000000002) ignored;
    ``inf`` for a negative or non-finite ``v``."""
    if not np.isfinite(v) or v < 0:
        return math.inf
    r = round(v)
    if abs(v - r) < 1e-9 * max(1.0, abs(v)):
        return float(max(r, 1))
    return float(max(math.ceil(v), 1))
