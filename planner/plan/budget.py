"""Assessment budgets: cost per topic at each pool depth, the feasible frontier, the cheapest
(topics, depth) pair (:func:`budget`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..results import Interval, ResultMixin
from .checks import N_MAX, check_cost, plain
from .pool import DepthStudy, GrowthCurve, cheapest_depth, depth_feasible

__all__ = ["BudgetResult", "Need", "budget"]


@dataclass(frozen=True, repr=False)
class BudgetResult(ResultMixin):
    """Assessment budget over pool depths (:func:`budget`).

    Attributes
    ----------
    rows : tuple of dict
        One per depth: ``depth``, ``judgments_per_topic`` (observed, or projected to
        ``n_runs``), ``cost_per_topic`` (= topic_cost + judgments x judgment_cost),
        ``max_topics`` (floor(total / cost_per_topic), the feasible frontier; None without a
        total), ``n_topics_plan`` (the count to plan with: the upper end of the count's 95%
        interval on n when it has one, else the count; None when unknown or unbounded),
        ``n_topics_needed`` (the point count), ``n_lower`` / ``n_upper`` (its interval, None
        without one; ``n_interval``: how it was made, an :class:`planner.results.IntervalMethod`
        value), ``total_cost`` (the count to plan with x cost per topic),
        ``kendall_tau_vs_full`` and ``tau_ok`` (from a DepthStudy, else None / True),
        ``feasible`` (the count to plan with known, within the total, and tau_ok).
    cheapest : dict or None
        The feasible row of least total cost (ties: deeper), or None.
    tau_min : float or None
        The least tau of a feasible depth.
    total, topic_cost, judgment_cost : float
        The inputs.
    n_runs : int or None
        Projection target (None = as observed).
    judgments_source : str
        Where the judgments per topic came from.

    Examples
    --------
    >>> b = budget(topic_cost=10, judgment_cost=0.5, total=3000, judgments={10: 40, 20: 80}, topics_needed=50)
    >>> b.cheapest["depth"], b.to_frame()["cost_per_topic"].tolist()
    (10, [30.0, 50.0])
    """

    _repr_fields = ('cheapest', 'total', 'topic_cost', 'judgment_cost')

    rows: tuple
    cheapest: dict | None
    tau_min: float | None
    total: float | None
    topic_cost: float
    judgment_cost: float
    n_runs: int | None
    judgments_source: str

    def to_dict(self) -> dict:
        """Plain fields."""
        return plain(asdict(self))

    def to_frame(self) -> Any:
        """The rows as a DataFrame."""
        import pandas as pd  # (heavy: imported on use)

        return pd.DataFrame(list(self.rows))

    def frontier(self, *, max_points: int = 50) -> Any:
        """Rows ``depth, n_topics, cost`` of the cost of 1..max_topics topics at each depth
        (for :func:`planner.plots.plot_budget`)."""
        import pandas as pd  # (heavy: imported on use)

        out = []
        for r in self.rows:
            top = r["max_topics"] or r["n_topics_plan"] or 0
            for n in np.unique(np.linspace(1, max(top, 1), num=min(max_points, max(top, 1))).astype(int)):
                out.append({"depth": r["depth"], "n_topics": int(n), "cost": int(n) * r["cost_per_topic"]})
        return pd.DataFrame(out)


@dataclass
class _Judgments:
    """Judgments per topic per depth, and what came with them."""

    jmap: dict[int, float]
    label: str
    need_map: dict[int, Need]
    tau_map: dict[int, float]
    tau_min: float | None


@dataclass(frozen=True)
class Need:
    """Topics needed at one depth: the point count and its interval on n (:meth:`Interval.none`:
    none, and the count is planned with as it is)."""

    n_topics: int | None
    interval: Interval = field(default_factory=lambda: Interval.none(""))

    @property
    def plan(self) -> int | None:
        """The count to plan with (:meth:`planner.results.Interval.plan_bound`; None: no finite count)."""
        return self.interval.plan_count(self.n_topics)

    @property
    def low(self) -> float | None:
        """The interval's lower end (None: none)."""
        return self.interval.low

    @property
    def high(self) -> float | None:
        """The interval's upper end (None: unbounded, or none)."""
        return self.interval.plan_n

    @classmethod
    def of(cls, value: Any) -> Need:
        """From an integer (or None), or a result with ``n_topics`` and an ``interval``
        (:class:`planner.plan.TargetResult`)."""
        if value is None or not hasattr(value, "interval"):
            if value is not None and (isinstance(value, bool) or not float(value) >= 1 or float(value) != int(value)):
                raise ParameterError(f"topic counts must be integers >= 1, got {value!r}", parameter="topics_needed")
            return cls(None if value is None else int(value))
        if value.n_topics is None:
            return cls(None)
        return cls(int(value.n_topics), value.interval)


def _judgments(judgments: Any, growth: GrowthCurve | None, source: str | None,
               tau_min: float | None) -> _Judgments:
    if isinstance(judgments, DepthStudy):
        return _Judgments({r["depth"]: r["judgments_per_topic"] for r in judgments.rows},
                          f"pool depth study ({judgments.n_runs} runs, {judgments.n_topics} topics)",
                          {r["depth"]: Need(r["n_topics_needed"], judgments.row_interval(r))
                           for r in judgments.rows},
                          {r["depth"]: r["kendall_tau_vs_full"] for r in judgments.rows},
                          judgments.tau_min if tau_min is None else tau_min)
    if hasattr(judgments, "topics") and hasattr(judgments, "depths"):  # PoolStats
        df = judgments.topics
        return _Judgments({int(k): float(v) for k, v in df.groupby("depth")["pool_size"].mean().items()},
                          f"pool statistics ({len(judgments.pool_runs)} pooled runs)", {}, {}, tau_min)
    if isinstance(judgments, Mapping):
        return _Judgments({int(k): float(v) for k, v in judgments.items()}, source or "given", {}, {}, tau_min)
    if judgments is None and growth is not None:
        return _Judgments({k: float(growth.predict(k, growth.n_runs)) for k in growth.depths},
                          f"growth curve ({growth.n_runs} runs)", {}, {}, tau_min)
    raise ParameterError("give judgments per topic per depth (mapping, PoolStats or DepthStudy)",
                         parameter="judgments")


def _project(j: _Judgments, n_runs: Any, growth: GrowthCurve | None) -> int | None:
    """Scale the judgments to ``n_runs`` runs with the growth curve (in place)."""
    if n_runs is None:
        return None
    if growth is None:
        raise ParameterError("projecting to another number of runs needs a growth curve "
                             "(judgment_growth)", parameter="n_runs")
    n_runs = int(n_runs)
    if n_runs < 1:
        raise ParameterError(f"must be >= 1, got {n_runs}", parameter="n_runs")
    j.jmap = {k: v * float(growth.predict(k, n_runs)) / float(growth.predict(k, growth.n_runs))
              for k, v in j.jmap.items()}
    j.label += f", projected to {n_runs} runs (power law a*r^b)"
    return n_runs


def _topics_needed(topics_needed: Any, j: _Judgments) -> None:
    """The given topic counts replace a DepthStudy's (in place)."""
    if topics_needed is None:
        return
    if isinstance(topics_needed, Mapping):
        j.need_map = {int(k): Need.of(v) for k, v in topics_needed.items()}
    else:
        one = Need.of(topics_needed)
        j.need_map = {k: one for k in j.jmap}


def _check_total(total: Any, j: _Judgments, tc: float, jc: float) -> float | None:
    if total is None:
        return None
    total = float(total)
    if not (total > 0 and math.isfinite(total)):
        raise ParameterError(f"must be a positive number, got {total}", parameter="total")
    check_cost(total, "total")
    cheapest_topic = min(tc + v * jc for v in j.jmap.values())
    if total < cheapest_topic:
        raise ParameterError(f"a budget of {total:g} is below the cost of one topic at any depth "
                             f"(cheapest {cheapest_topic:.4g})", parameter="total")
    return total


def _row(k: int, j: _Judgments, tc: float, jc: float, total: float | None) -> dict:
    cost = tc + j.jmap[k] * jc
    max_n = None if total is None else (min(int(math.floor(min(total / cost, N_MAX))), N_MAX)
                                        if cost > 0 else None)
    need = j.need_map.get(k, Need(None))
    tot = None if need.plan is None else need.plan * cost
    tau = j.tau_map.get(k)
    row = {"depth": k, "judgments_per_topic": j.jmap[k], "cost_per_topic": cost,
           "max_topics": max_n, "n_topics_plan": need.plan, "n_topics_needed": need.n_topics,
           "n_lower": need.low, "n_upper": need.high, "n_interval": need.interval.how.value, "total_cost": tot,
           "kendall_tau_vs_full": tau, "tau_ok": bool(tau is None or j.tau_min is None or tau >= j.tau_min)}
    return {**row, "feasible": depth_feasible(row, total)}


def budget(*, topic_cost: float = 0.0, judgment_cost: float = 1.0, total: float | None = None,
           judgments: Any = None, topics_needed: Any = None, n_runs: int | None = None,
           growth: GrowthCurve | None = None, tau_min: float | None = None,
           source: str | None = None) -> BudgetResult:
    """Cost per topic at each pool depth, the feasible (topics, depth) frontier and the cheapest pair.

    No model is fitted here: the topics needed come from ``topics_needed`` or a
    :class:`DepthStudy` (solved there with its method, by default
    :data:`planner.methods.DEFAULT_METHOD`).

    Parameters
    ----------
    topic_cost, judgment_cost : float, optional
        Cost of creating a topic and of one judgment (at most ``MAX_COST``, 1e15).
    total : float, optional
        The total budget; ``max_topics = floor(total / cost_per_topic)``, at most ``N_MAX``
        (10,000,000).
    judgments : mapping, PoolStats or DepthStudy
        Judgments per topic at each depth: a mapping ``depth -> number``, a
        :class:`planner.measures.PoolStats` (mean pool size per depth), or a :class:`DepthStudy`
        (which also supplies the topics needed per depth).
    topics_needed : int, TargetResult or mapping, optional
        The same at every depth, or ``depth -> n``; overrides a DepthStudy's. A
        :class:`planner.plan.TargetResult` (or a DepthStudy with ``n_resamples``) brings its
        interval on n, whose upper end is the count planned with and costed.
    n_runs : int, optional
        Project the judgments to this many participating runs with ``growth``: judgments are
        scaled by ``growth.predict(k, n_runs) / growth.predict(k, growth.n_runs)``.
    growth : GrowthCurve, optional
        See :func:`judgment_growth`.
    tau_min : float, optional
        With a DepthStudy (default: its ``tau_min``), a depth is feasible only when its Kendall
        tau against full judgments reaches ``tau_min`` (shallow pools bias scores).
    source : str, optional
        A label for where mapping judgments came from (recorded in the result).

    Returns
    -------
    BudgetResult

    Raises
    ------
    ParameterError
        Negative costs, a total that buys not even one topic at any depth, or a projection
        without a growth curve.

    Examples
    --------
    >>> b = budget(topic_cost=10, judgment_cost=0.5, total=3000, judgments={10: 40, 20: 80})
    >>> [r["max_topics"] for r in b.rows]
    [100, 60]
    """
    tc, jc = check_cost(topic_cost, "topic_cost"), check_cost(judgment_cost, "judgment_cost")
    if tc == 0 and jc == 0:
        raise ParameterError("topic and judgment costs are both 0; nothing to budget",
                             parameter="judgment_cost")
    j = _judgments(judgments, growth, source, tau_min)
    if not j.jmap:
        raise ParameterError("no depths", parameter="judgments")
    if any(not (v >= 0) for v in j.jmap.values()):
        raise ParameterError("judgments per topic must be >= 0", parameter="judgments")
    n_runs = _project(j, n_runs, growth)
    _topics_needed(topics_needed, j)
    total = _check_total(total, j, tc, jc)
    rows = [_row(k, j, tc, jc, total) for k in sorted(j.jmap)]
    cheapest = cheapest_depth(rows, total)
    return BudgetResult(rows=tuple(rows), cheapest=cheapest, tau_min=j.tau_min, total=total, topic_cost=tc,
                        judgment_cost=jc, n_runs=n_runs, judgments_source=j.label)

