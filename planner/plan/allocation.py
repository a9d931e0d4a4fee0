"""Allocation of n topics across strata: proportional or Neyman optimal with per-stratum costs
(:func:`allocate`), and the integer rounding that keeps an optimal allocation within its cost."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats

from ..errors import ParameterError
from ..results import ResultMixin
from ..simulate import MAX_TOPICS, allocate_counts
from ..variance import check_alpha, pair_index
from .checks import complete_values, plain

__all__ = ["ALLOCATIONS", "Allocation", "allocate", "exact_allocation", "round_allocation"]

#: the allocations :func:`allocate` computes
ALLOCATIONS = ("proportional", "optimal")


@dataclass(frozen=True, repr=False)
class Allocation(ResultMixin):
    """Allocation of ``n`` topics across strata (:func:`allocate`).

    Attributes
    ----------
    method : str
        The allocation asked for (``proportional`` or ``optimal``).
    n_topics : int
        Its total.
    strata : tuple of dict
        One per stratum: ``stratum``, ``weight`` W_k, ``sigma2`` (variance of per-topic pair
        differences within the stratum, mean over pairs), ``cost`` c_k, ``topics_observed``,
        ``n_proportional``, ``n_optimal`` (integers), ``n`` (of the chosen method).
    compare : tuple of dict
        One per design (``proportional``, ``optimal``, ``unstratified``): ``n_topics``, ``cost``
        (sum n_k c_k; unstratified: n x mean cost under proportional weights), ``variance`` of
        the (stratified) mean pair difference, ``width`` = 2 z_{1-alpha/2} sqrt(variance).
    alpha : float
        Level of the widths.
    variance_note : str
        Which variance was used.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> from planner.scores import ScoreMatrix
    >>> m = ScoreMatrix.build(rng.random((3, 12)), ["a", "b", "c"], [str(t) for t in range(12)])
    >>> al = allocate(m.with_strata(["x"] * 6 + ["y"] * 6), n=20)
    >>> [s["n"] for s in al.strata], al.to_frame().shape[0]
    ([10, 10], 2)
    """

    _repr_fields = ('method', 'n_topics', 'strata')

    method: str
    n_topics: int
    strata: tuple
    compare: tuple
    alpha: float
    variance_note: str

    def to_dict(self) -> dict:
        """Plain fields."""
        return plain(asdict(self))

    def to_frame(self) -> Any:
        """The strata as a DataFrame."""
        import pandas as pd  # (heavy: imported on use)

        return pd.DataFrame(list(self.strata))


# ----------------------------------------------------------------------------- integer rounding

class _Costed:
    """Cost ``sum n_k c_k`` and variance ``sum a_k / n_k`` of integer allocations within a budget."""

    def __init__(self, a: np.ndarray, c: np.ndarray, budget: float, minimum: int):
        self.a, self.c, self.budget, self.minimum = a, c, budget, minimum
        self.tol = 1e-9 * max(1.0, budget)

    def cost(self, n: np.ndarray) -> float:
        return float((n * self.c).sum())

    def var(self, n: np.ndarray) -> float:
        return float((self.a / n).sum())

    def within(self, n: np.ndarray) -> bool:
        return self.cost(n) <= self.budget + self.tol

    def _trim(self, n: np.ndarray) -> None:
        a, c = self.a, self.c
        while self.cost(n) > self.budget + self.tol and np.any(n > self.minimum):
            # over the budget (the minimum or a ceiling): drop the topic whose removal raises
            # the variance least per unit cost saved
            gain = np.where(n > self.minimum, a * (1.0 / (n - 1) - 1.0 / n) / c, np.inf)
            n[int(np.argmin(gain))] -= 1

    def fill(self, n: np.ndarray) -> np.ndarray:
        """``n`` brought within the budget, then filled up by variance drop per unit cost."""
        n = n.copy()
        self._trim(n)
        a, c, K = self.a, self.c, self.a.size
        while True:
            fits = self.cost(n) + c <= self.budget + self.tol
            if not fits.any():
                return n
            gain = np.where(fits, a * (1.0 / n - 1.0 / (n + 1)) / c, -np.inf)
            k = int(np.argmax(gain))
            # the one-at-a-time greedy keeps adding to k while its gain a/(m (m+1) c) stays
            # above the runner-up's and the budget allows: add that many at once (with very
            # unequal costs this is millions of single steps)
            runner = np.max(np.delete(gain, k)) if K > 1 else -np.inf
            step = int((self.budget + self.tol - self.cost(n)) // c[k])
            if runner > 0:
                m = int((math.sqrt(1.0 + 4.0 * a[k] / (c[k] * runner)) - 1.0) / 2.0)
                step = min(step, m - int(n[k]) + 1)
            n[k] += max(1, step)

    def exchange(self, best: np.ndarray) -> np.ndarray:
        """Improve ``best`` by exchanges until none helps: r topics out of stratum k (r up to
        what buys one topic of the dearest stratum), as many as the freed budget buys into
        stratum j, then fill up."""
        c, K = self.c, self.a.size
        r_max = int(min(50, math.ceil(float(c.max() / c.min())) + 1))
        improved = True
        while improved:
            improved = False
            for k in range(K):
                for r in range(1, r_max + 1):
                    if best[k] - r < self.minimum:
                        break
                    for j in range(K):
                        n = self._moved(best, k, r, j)
                        if self.within(n) and self.var(n) < self.var(best) * (1 - 1e-12):
                            best, improved = n, True
        return best

    def _moved(self, best: np.ndarray, k: int, r: int, j: int) -> np.ndarray:
        n = best.copy()
        n[k] -= r
        if j != k:
            n[j] += int((self.budget + self.tol - self.cost(n)) // self.c[j])
        return self.fill(n)


def round_allocation(target: np.ndarray, c: np.ndarray, budget: float, a: np.ndarray,
                     minimum: int = 2) -> np.ndarray:
    """The integer allocation (each >= minimum) with the smallest variance ``sum a_k / n_k``
    whose cost ``sum n_k c_k`` stays within ``budget`` (when the minimum allows it).

    Largest-remainder rounding of the topic count could overspend when costs differ, and
    filling up from the floors one topic at a time (by variance drop per unit cost) can
    miss the best allocation (TREC-5 AP, costs 1 and 3: [31, 40] against [28, 41]). So:
    every floor/ceiling combination of the real allocation (up to 2^10 of them; beyond,
    the floors only) is filled up greedily, the best kept, and then improved by exchanges
    until none helps; with up to 6 strata a branch and bound (:func:`exact_allocation`)
    then makes it exact (unless it needs over 200,000 branches). Tested against exhaustive
    search.

    Examples
    --------
    >>> round_allocation(np.array([10.4, 19.6]), np.array([1.0, 1.0]), 30.0, np.array([1.0, 4.0]))
    array([10, 20])
    """
    tgt = np.asarray(target, float)
    K = tgt.size
    cc = _Costed(np.asarray(a, float), np.asarray(c, float), budget, minimum)
    lo = np.maximum(np.floor(tgt + 1e-9).astype(int), minimum)
    hi = np.maximum(np.ceil(tgt - 1e-9).astype(int), minimum)
    starts = [lo]
    if K <= 10:
        starts = [np.where(np.array(bits, bool), hi, lo) for bits in itertools.product((0, 1), repeat=K)]
    best = min((cc.fill(s) for s in starts), key=lambda n: (not cc.within(n), cc.var(n)))
    if not cc.within(best):
        return best                      # the minimum alone is over the budget
    best = cc.exchange(best)
    if K <= 6:
        best = exact_allocation(cc.a, cc.c, budget + cc.tol, minimum, best)
    return best


class _BranchAndBound:
    """Depth-first search over ``n_1, n_2, ...`` with the continuous bound of the rest."""

    def __init__(self, a: np.ndarray, c: np.ndarray, budget: float, minimum: int, incumbent: np.ndarray,
                 max_nodes: int):
        self.a, self.c, self.budget, self.minimum, self.max_nodes = a, c, budget, minimum, max_nodes
        K = a.size
        self.root = np.concatenate([np.cumsum(np.sqrt(a * c)[::-1])[::-1], [0.0]])   # suffix sums
        self.min_rest = np.concatenate([np.cumsum((minimum * c)[::-1])[::-1], [0.0]])
        self.best = incumbent.copy()
        self.best_v = float((a / self.best).sum())
        self.n = np.zeros(K, int)
        self.nodes = 0

    def _last(self, k: int, left: float, v: float) -> None:
        m = int(left // self.c[k])
        if m >= self.minimum and v + self.a[k] / m < self.best_v * (1 - 1e-12):
            self.n[k] = m
            self.best[:] = self.n
            self.best_v = v + self.a[k] / m

    def _bound(self, k: int, left: float, v: float, m: int) -> float:
        rem = left - self.c[k] * m
        return v + self.a[k] / m + (self.root[k + 1] ** 2 / rem if rem > 0 else math.inf)

    def _edge(self, k: int, left: float, v: float, inside: int, outside: int, thr: float) -> int:
        """Last m from ``inside`` towards ``outside`` whose bound is below ``thr``."""
        if self._bound(k, left, v, outside) < thr:
            return outside
        while abs(outside - inside) > 1:
            mid = (inside + outside) // 2
            inside, outside = (mid, outside) if self._bound(k, left, v, mid) < thr else (inside, mid)
        return inside

    def search(self, k: int, spent: float, v: float) -> None:
        self.nodes += 1
        if self.nodes > self.max_nodes:
            return
        a, c = self.a, self.c
        left = self.budget - spent
        if k == a.size - 1:
            self._last(k, left, v)
            return
        hi = int((left - self.min_rest[k + 1]) // c[k])
        if hi < self.minimum:
            return
        # the bound is convex in m: the m worth trying form an interval around its minimiser
        ms = math.sqrt(a[k]) * left / (math.sqrt(a[k]) * c[k] + math.sqrt(c[k]) * self.root[k + 1])
        m0 = int(min(max(round(ms), self.minimum), hi))
        thr = self.best_v * (1 - 1e-12)
        if self._bound(k, left, v, m0) >= thr:
            return
        lo_m, hi_m = self._edge(k, left, v, m0, self.minimum, thr), self._edge(k, left, v, m0, hi, thr)
        for mm in sorted(range(lo_m, hi_m + 1), key=lambda m: abs(m - ms)):
            if self._bound(k, left, v, mm) >= self.best_v * (1 - 1e-12):
                continue
            self.n[k] = mm
            self.search(k + 1, spent + c[k] * mm, v + a[k] / mm)


def exact_allocation(a: np.ndarray, c: np.ndarray, budget: float, minimum: int, incumbent: np.ndarray,
                     max_nodes: int = 200_000) -> np.ndarray:
    """Branch and bound for ``min sum a_k / n_k`` s.t. ``sum c_k n_k <= budget``, ``n_k >= minimum``.

    From a feasible ``incumbent``. A branch (``n_1..n_k`` fixed, budget ``R`` left) is cut when
    its variance plus the continuous bound of the rest, ``(sum_j sqrt(a_j c_j))^2 / R`` (the
    relaxation without the minimum), cannot beat the best; the last stratum takes all the
    budget left. Exact when the search ends within ``max_nodes`` branches (milliseconds for a
    few strata and hundreds of topics); beyond that the best allocation found so far, never
    worse than the incumbent, is returned.

    Examples
    --------
    >>> exact_allocation(np.array([1.0, 4.0]), np.array([1.0, 1.0]), 30.0, 2, np.array([15, 15]))
    array([10, 20])
    """
    bb = _BranchAndBound(a, c, budget, minimum, incumbent, max_nodes)
    bb.search(0, 0.0, 0.0)
    return bb.best


# ----------------------------------------------------------------------------- allocate

def _allocate_iv(scores: Any, n: Any, method: str, alpha: float) -> tuple[int, float]:
    if method not in ALLOCATIONS:
        raise ParameterError(f"unknown method {method!r}; expected proportional or optimal",
                             parameter="method")
    alpha = check_alpha(alpha)
    try:
        n = int(n)
    except (TypeError, ValueError):
        raise ParameterError(f"expected an integer, got {n!r}", parameter="n") from None
    if getattr(scores, "strata", None) is None:
        raise ParameterError("the score matrix has no strata (attach them with with_strata or "
                             "load_scores(strata=...))", parameter="scores")
    return n, alpha


def _strata_variances(vals: np.ndarray, strata: np.ndarray, labels: list) -> tuple[np.ndarray, list[int]]:
    """Within-stratum variance of per-topic pair differences (mean over pairs), and topic counts."""
    a, b = pair_index(vals.shape[0])
    sig2, counts = [], []
    for lab in labels:
        cols = strata == lab
        if cols.sum() < 2:
            raise ParameterError(f"stratum {lab!r} has {int(cols.sum())} topic; need 2 to estimate "
                                 "its variance", parameter="scores")
        d = vals[a][:, cols] - vals[b][:, cols]
        sig2.append(float(d.var(axis=1, ddof=1).mean()))
        counts.append(int(cols.sum()))
    return np.array(sig2), counts


def _weights(weights: Mapping[str, float] | None, labels: list, counts: list[int]) -> np.ndarray:
    if weights is None:
        W = np.array(counts, dtype=float)
        return W / W.sum()
    missing = [lab for lab in labels if lab not in weights]
    if missing:
        raise ParameterError(f"no weight for stratum {missing[0]!r}", parameter="weights")
    W = np.array([float(weights[lab]) for lab in labels])
    if np.any(W < 0) or W.sum() <= 0:
        raise ParameterError("weights must be >= 0 and not all 0", parameter="weights")
    return W / W.sum()


def _costs(costs: Mapping[str, float] | None, labels: list) -> np.ndarray:
    if costs is None:
        return np.ones(len(labels))
    unknown = [str(k) for k in costs if k not in labels]
    if unknown:
        raise ParameterError(f"unknown stratum {unknown[0]!r} (the strata are {', '.join(map(repr, labels))})",
                             parameter="costs")
    missing = [lab for lab in labels if lab not in costs]
    if missing:
        raise ParameterError(f"no cost for stratum {missing[0]!r}", parameter="costs")
    c = np.array([float(costs[lab]) for lab in labels])
    if np.any(~(c > 0)) or not np.all(np.isfinite(c)):
        raise ParameterError("stratum costs must be positive and finite", parameter="costs")
    return c


def _optimal(n: int, W: np.ndarray, c: np.ndarray, sig2: np.ndarray) -> np.ndarray:
    """Neyman's allocation ``n_k ∝ W_k sigma_k / sqrt(c_k)`` at the proportional allocation's cost."""
    budget_c = float((n * W * c).sum())
    shape = W * np.sqrt(sig2) / np.sqrt(c)
    if shape.sum() <= 0:
        shape = W.copy()
    opt_real = shape * budget_c / float((shape * c).sum())

    def too_many(total: float) -> ParameterError:
        return ParameterError(f"with these stratum costs (largest / smallest = {c.max() / c.min():.3g}) the "
                              f"budget of {n} proportionally allocated topics buys {total:.3g} topics in the "
                              f"optimal allocation, more than {MAX_TOPICS:,}", parameter="costs")

    if not opt_real.sum() <= MAX_TOPICS:
        raise too_many(opt_real.sum())
    if np.all(c == c[0]):
        n_opt_total = int(round(opt_real.sum()))
        return allocate_counts(max(n_opt_total, 2 * W.size), opt_real, parameter="n")
    n_opt = round_allocation(opt_real, c, budget_c, W ** 2 * sig2)
    if n_opt.sum() > MAX_TOPICS:     # the rounding spent what it freed on very cheap topics
        raise too_many(float(n_opt.sum()))
    return n_opt


def allocate(scores: Any, *, n: int, costs: Mapping[str, float] | None = None, method: str = "proportional",
             weights: Mapping[str, float] | None = None, alpha: float = 0.05) -> Allocation:
    """Split ``n`` topics across the strata of ``scores``: proportional or Neyman optimal.

    ``W_k``: ``weights`` (normalised) or the strata's shares of the collection's topics.
    ``sigma_k^2``: the within-stratum variance of per-topic pair differences, averaged over
    pairs. Proportional: ``n_k = n W_k``. Optimal (Neyman with cost ``c_k``, default 1):
    ``n_k ∝ W_k sigma_k / sqrt(c_k)``, scaled to the proportional allocation's total cost (so
    both cost the same; with unequal costs the rounding keeps the optimal one within that
    cost, adding topics where they lower the variance most per unit cost). Each stratum gets
    at least 2 topics (largest-remainder rounding). The variance of the stratified mean
    difference is ``sum_k W_k^2 sigma_k^2 / n_k`` and the width ``2 z_{1-alpha/2} sqrt(.)``;
    ``unstratified`` is simple random sampling of ``n`` topics with the collection's overall
    pair-difference variance (including between-strata spread).

    Parameters
    ----------
    scores : ScoreMatrix
        A complete collection with strata.
    n : int
        Topics to allocate.
    costs : mapping, optional
        Cost per topic of each stratum (default 1).
    method : {"proportional", "optimal"}, optional
        The allocation reported as ``n``.
    weights : mapping, optional
        Stratum weights (default the strata's shares of the topics).
    alpha : float, optional
        Level of the widths.

    Returns
    -------
    Allocation

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> from planner.scores import ScoreMatrix
    >>> x = rng.random((3, 12)) * np.r_[[0.2] * 6, [1.0] * 6]
    >>> m = ScoreMatrix.build(x, ["a", "b", "c"], [str(t) for t in range(12)]).with_strata(["x"] * 6 + ["y"] * 6)
    >>> al = allocate(m, n=20, method="optimal")
    >>> [s["n"] for s in al.strata]
    [4, 16]
    """
    n, alpha = _allocate_iv(scores, n, method, alpha)
    vals = complete_values(scores)
    labels = list(scores.stratum_labels())
    sig2, counts = _strata_variances(vals, np.asarray(scores.strata), labels)
    W = _weights(weights, labels, counts)
    c = _costs(costs, labels)
    n_prop = allocate_counts(n, W, parameter="n")
    n_opt = _optimal(n, W, c, sig2)
    z = stats.norm.isf(alpha / 2)

    def summary(name: str, nk: np.ndarray) -> dict:
        v = float((W ** 2 * sig2 / nk).sum())
        return {"design": name, "n_topics": int(nk.sum()), "cost": float((nk * c).sum()),
                "variance": v, "width": float(2 * z * math.sqrt(v))}

    a, b = pair_index(vals.shape[0])
    v_srs = float((vals[a] - vals[b]).var(axis=1, ddof=1).mean()) / n
    compare = (summary("proportional", n_prop), summary("optimal", n_opt),
               {"design": "unstratified", "n_topics": n, "cost": float(n * (W * c).sum()),
                "variance": v_srs, "width": float(2 * z * math.sqrt(v_srs))})
    chosen = n_prop if method == "proportional" else n_opt
    rows = tuple({"stratum": lab, "weight": float(W[i]), "sigma2": float(sig2[i]), "cost": float(c[i]),
                  "topics_observed": counts[i], "n_proportional": int(n_prop[i]),
                  "n_optimal": int(n_opt[i]), "n": int(chosen[i])} for i, lab in enumerate(labels))
    return Allocation(method=method, n_topics=int(chosen.sum()), strata=rows, compare=compare, alpha=alpha,
                      variance_note="within-stratum variance of per-topic pair differences, mean over "
                                    "all system pairs; normal-theory widths")
