"""Strata: the stratum modes of :func:`planner.simulate.predict` and the allocation of n.

``"uniform"``: topics drawn from the whole collection (strata ignored).
``"stratified"`` / ``"proportional"``: ``n_k`` topics drawn within stratum ``k``, ``n_k``
proportional to ``W_k = T_k / T`` (largest remainder, at least 2 each); ``"optimal"``:
Neyman, ``n_k ∝ W_k sigma_k / sqrt(c_k)`` with ``sigma_k^2`` the mean over pairs of the
within-stratum ``s2_d`` and ``c_k`` from ``costs`` (default 1).

Examples
--------
>>> from planner.simulate import allocate_counts
>>> allocate_counts(20, [0.5, 0.3, 0.2]).tolist()
[10, 6, 4]
>>> allocate_counts(7, [0.9, 0.1]).tolist()
[5, 2]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import ParameterError
from ..scores import ScoreMatrix
from ..variance import anova_components

__all__ = ["STRATA_MODES", "allocate_counts", "allocation", "strata_plan", "stratum_costs"]

STRATA_MODES = ("uniform", "stratified", "proportional", "optimal")


def allocate_counts(n: int, weights: Sequence[float] | np.ndarray, *, minimum: int = 2,
                    maximum: Sequence[int] | None = None, parameter: str = "topics") -> np.ndarray:
    """Integer ``n_k`` summing to ``n``, proportional to ``weights`` within the bounds
    ``min(minimum, maximum[k]) <= n_k <= maximum[k]``.

    The one rounding rule of planner (``simulate``, ``plan.allocate`` and the study's
    stacked strata all use it). First the real quotas ``q_k = clip(lambda w_k, minimum,
    maximum_k)``, with ``lambda`` solved so that ``sum q_k = n`` (strata below the minimum or
    above their maximum are held there and the rest is shared in proportion to the weights);
    then Hamilton's largest-remainder rounding of ``q``: the floors, and one more topic for
    the strata with the largest fractional parts (ties to the earlier stratum). Every ``n_k``
    is thus ``floor(q_k)`` or ``ceil(q_k)``, and within the bounds.
    """
    w = np.asarray(weights, dtype=float)
    K = w.size
    if K == 0 or not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
        raise ParameterError("stratum weights must be finite, >= 0 and not all 0", parameter=parameter)
    lo = np.full(K, float(minimum))
    hi = np.full(K, np.inf) if maximum is None else np.asarray(maximum, dtype=float)
    lo = np.minimum(lo, hi)             # a stratum that allows fewer than ``minimum`` gives all it can
    if n < lo.sum():
        raise ParameterError(f"{n} topics cannot give each of {K} strata {minimum} topics",
                             parameter=parameter)
    if n > hi.sum():
        raise ParameterError(f"{n} topics exceed what the strata allow ({int(hi.sum())})",
                             parameter=parameter)
    w = w / w.sum()
    pos = w > 0
    room = hi[pos].sum() + lo[~pos].sum()
    if n > room:
        # the weighted strata are full: they take their maximum, the unweighted ones share the rest
        out = np.where(pos, hi, 0).astype(int)
        out[~pos] = allocate_counts(int(n - hi[pos].sum()), np.ones(int((~pos).sum())), minimum=minimum,
                                    maximum=hi[~pos], parameter=parameter)
        return out

    def quotas(lam: float) -> np.ndarray:
        return np.where(pos, np.clip(lam * w, lo, hi), lo)

    # sum(quotas) is continuous, piecewise linear and nondecreasing in lambda: find the
    # piece that reaches n among the breakpoints, then solve that piece exactly
    cap = pos & np.isfinite(hi)
    brk = np.unique(np.concatenate([[0.0], lo[pos] / w[pos], hi[cap] / w[cap]]))
    total = np.array([quotas(b).sum() for b in brk])
    i = int(np.searchsorted(total, n, side="left"))
    if i < brk.size and total[i] == n:
        q = quotas(brk[i])
    else:
        left = brk[i - 1]                            # total[i - 1] < n (total[0] = sum lo <= n)
        mid = left + 1.0 if i == brk.size else (left + brk[i]) / 2
        free = pos & (mid * w > lo) & (mid * w < hi)   # the strata that move on this piece
        fixed = quotas(mid)
        lam = (n - fixed[~free].sum()) / w[free].sum()
        q = np.where(free, lam * w, fixed)
    base = np.minimum(np.floor(q), hi).astype(int)
    left_over = int(n - base.sum())
    frac = np.where(base < hi, q - base, -np.inf)
    base[np.argsort(-frac, kind="stable")[:left_over]] += 1
    return base


def strata_plan(m: ScoreMatrix, mode: str, costs) -> tuple[list[str], list[np.ndarray], np.ndarray]:
    """Groups of topic indices and weights ``W_k`` for a stratum mode (``costs`` checked:
    only with ``"optimal"``, and only for the matrix's strata)."""
    if not isinstance(mode, str) or mode not in STRATA_MODES:
        raise ParameterError(f"unknown strata mode {mode!r}; expected one of " + ", ".join(STRATA_MODES),
                             parameter="strata")
    if costs is not None and mode != "optimal":
        raise ParameterError(f"costs apply only to strata='optimal' (the Neyman allocation), not "
                             f"strata={mode!r}", parameter="costs")
    T = m.n_topics
    if mode == "uniform" or m.strata is None:
        if mode != "uniform":
            raise ParameterError(f"strata={mode!r} needs topics with strata (ScoreMatrix.with_strata "
                                 "or load_scores(strata=...))", parameter="strata")
        return ["all"], [np.arange(T)], np.ones(1)
    labels = m.stratum_labels()
    groups = [np.flatnonzero(np.asarray(m.strata) == k) for k in labels]
    small = [f"{k!r} ({g.size})" for k, g in zip(labels, groups) if g.size < 2]
    if small:
        # one topic has no within-stratum variance: resampling it would add none
        raise ParameterError(f"stratified estimates need at least 2 topics in every stratum; "
                             f"too few in {', '.join(small)} (merge strata, or use strata='uniform')",
                             parameter="strata")
    W = np.array([g.size / T for g in groups])
    if costs is not None:
        stratum_costs(costs, labels)
    return list(labels), groups, W


def stratum_costs(costs, labels) -> np.ndarray:
    """Cost per topic of each stratum in ``labels`` (default 1); an unknown stratum or a
    cost that is not a positive finite number is a :class:`ParameterError` on ``costs``."""
    c = np.ones(len(labels))
    if costs is None:
        return c
    if not isinstance(costs, Mapping):
        raise ParameterError("costs must map stratum -> cost per topic", parameter="costs")
    unknown = [k for k in costs if str(k) not in labels]
    if unknown:
        raise ParameterError(f"unknown stratum {unknown[0]!r} (the strata are "
                             f"{', '.join(map(repr, labels))})", parameter="costs")
    given = {str(k): v for k, v in costs.items()}
    for i, k in enumerate(labels):
        if k in given:
            v = given[k]
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)) \
                    or not 0 < v < math.inf:
                raise ParameterError(f"cost of stratum {k!r} must be a number > 0 and finite, got {v!r}",
                                     parameter="costs")
            c[i] = float(v)
    return c


def allocation(n: int, mode: str, groups, W, x, costs, labels, *, minimum=2, maximum=None) -> np.ndarray:
    """The topics per stratum ``n_k`` of ``n`` under a stratum mode (proportional or Neyman)."""
    if mode == "uniform":
        return np.array([n])
    if mode in ("stratified", "proportional"):
        return allocate_counts(n, W, minimum=minimum, maximum=maximum)
    # optimal (Neyman): n_k ∝ W_k sigma_k / sqrt(c_k)
    c = stratum_costs(costs, labels)
    sig = np.empty(len(groups))
    for i, g in enumerate(groups):   # every stratum has >= 2 topics (strata_plan)
        sig[i] = math.sqrt(2.0 * anova_components(x[:, g])["var_e"]) if x.shape[0] > 1 else 0.0
    score = W * sig / np.sqrt(c)
    if not (score > 0).any():
        score = W.copy()
    return allocate_counts(n, score, minimum=minimum, maximum=maximum)
