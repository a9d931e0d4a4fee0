"""A topic count corrected for the size of the collection it is learnt from, with its interval.

A count learnt from ``n0`` topics runs low when it lies beyond them: the pairs of systems
that drive a swap-rate count are the close ones, and ``n0`` topics make each pair's observed
difference ``|dbar|`` larger than its true one (noise adds to it). The smaller ``n0``, the more
so, so the count grows with ``n0`` (docs/research/calibration.md).

The correction is a bootstrap bias correction on the scale ``u = n ** -0.5`` (one step of
simulation-extrapolation): resampling the ``n0`` topics with replacement adds the same amount
of noise again, so the resampled counts ``n_b`` run low of the collection's ``n`` by about as
much as ``n`` runs low of the count the full population would give. On ``u``, where a swap
count's drift is close to linear in the noise variance, with ``s = u - median(u_b)``:

    u_c = u + s,      n_c = u_c ** -2

and the interval is the resamples' percentile interval on ``u`` moved by ``2 s`` (from the
resamples' median to ``u_c``), ``[q_lo(u_b) + 2 s, q_hi(u_b) + 2 s]``, mapped back to n.
When its small-``u`` end is at or below 0, or the resamples' own upper end is unbounded, the
data do not bound the count from above: ``high`` is ``None`` (the data cannot support a
finite upper end), never a short number. An :class:`planner.results.Interval` of such a count has
``how = IntervalMethod.CALIBRATED`` and :data:`CALIBRATION_NOTE` (plus ``Calibrated.note``) as
its note. (The reflected, "basic", interval on ``u`` covered
about as often and was 1.1-2.4 times wider again: docs/research/calibration.md.)

Examples
--------
>>> import numpy as np
>>> c = calibrated_count(100, np.array([64.0] * 50 + [81.0] * 50), 0.9)
>>> c.n_topics, c.low, c.high
(127, 94, 127)
>>> calibrated_count(100, np.array([64.0] * 50 + [400.0] * 40 + [np.inf] * 10), 0.9).high is None
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import methods
from ..errors import ParameterError
from .search import interval_quantiles

__all__ = ["CALIBRATION_NOTE", "Calibrated", "calibrated_count", "check_calibrate"]

#: what a reader of a calibrated count must know (written once, read by results and docs)
CALIBRATION_NOTE = ("corrected for the collection's size: bootstrap bias correction on n^-1/2, percentile "
                    "interval moved with it (docs/research/calibration.md)")


@dataclass(frozen=True)
class Calibrated:
    """A calibrated count and its interval.

    Attributes
    ----------
    n_topics : int or None
        The corrected count (``None`` when the correction leaves no finite count).
    low : int
        Lower end (at least 2).
    high : int or None
        Upper end; ``None`` when the resamples cannot bound it (see ``note``).
    note : str
        Empty, or why ``high`` (or the count) is unbounded.
    """

    n_topics: int | None
    low: int | None
    high: int | None
    note: str = ""


def _to_n(u: float, *, up: bool) -> int | None:
    """The count of ``u = n ** -0.5`` (``None`` when ``u <= 0``: beyond any n), at least 2."""
    if not math.isfinite(u) or u <= 0:
        return None
    n = u ** -2.0
    return max(2, math.ceil(n - 1e-9) if up else math.floor(n + 1e-9))


def calibrated_count(n_hat: int, resampled_n: np.ndarray, level: float) -> Calibrated:
    """The count ``n_hat`` corrected with its topic resamples' counts, and its ``level`` interval.

    Parameters
    ----------
    n_hat : int
        The count solved on the collection (>= 1).
    resampled_n : array of float
        The count of each topic resample of the collection (``inf`` where none was found),
        re-solved with the same method.
    level : float
        The interval's level, in (0, 1).

    Returns
    -------
    Calibrated
    """
    ns = np.asarray(resampled_n, dtype=float)
    if ns.ndim != 1 or ns.size < 2 or np.isnan(ns).any() or (ns < 1).any():
        raise ParameterError("resampled_n must hold at least 2 counts >= 1 (inf where none was found)",
                             parameter="resampled_n")
    if not (isinstance(n_hat, (int, np.integer)) and n_hat >= 1):
        raise ParameterError(f"n_hat must be a whole count >= 1, got {n_hat!r}", parameter="n_hat")
    if not 0 < level < 1:
        raise ParameterError(f"level must be in (0, 1), got {level!r}", parameter="level")
    u_hat = float(n_hat) ** -0.5
    ub = np.where(np.isfinite(ns), ns, np.inf) ** -0.5          # inf -> 0
    lo_n, hi_n = interval_quantiles(ns, level)                    # ends of the resampled counts
    shift = u_hat - float(np.quantile(ub, 0.5, method="inverted_cdf"))
    point = _to_n(u_hat + shift, up=True)
    low = _to_n(lo_n ** -0.5 + 2 * shift, up=False)
    high = _to_n(hi_n ** -0.5 + 2 * shift, up=True) if math.isfinite(hi_n) else None
    note = ""
    if high is None:
        note = ("no finite upper end: the topic resamples reach counts so small that the corrected "
                "count is not bounded above by these data")
    if point is None:
        note = "no finite count: the topic resamples' counts are too far below the collection's"
    return Calibrated(point, low, high, note)


def check_calibrate(calibrate: object, method: methods.Method, target: methods.Target, resamples: int) -> None:
    """A ParameterError naming ``calibrate`` when the question has no topic resamples to correct with."""
    if not isinstance(calibrate, (bool, np.bool_)):
        raise ParameterError(f"calibrate must be True or False, got {calibrate!r}", parameter="calibrate")
    if not calibrate:
        return
    if target.reliability:
        raise ParameterError(f"calibrate: the {target.name} target's interval is the D-study's (Feldt / AJF), "
                             "not from topic resamples; use calibrate=False", parameter="calibrate")
    if not method.interval_on_n:
        raise ParameterError(f"calibrate needs an interval on n from topic resamples, which method "
                             f"{method.name!r} does not give; use 'analytic' or a predictive method",
                             parameter="calibrate")
    if resamples < 1:
        raise ParameterError("calibrate needs topic resamples (n_resamples > 0)", parameter="calibrate")
