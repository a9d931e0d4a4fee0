"""Pool depth against topics (:func:`pool_depth_study`) and the growth of the judgment pool
with the number of runs (:func:`judgment_growth`)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats

from .. import methods
from .._random import as_generator, seed_of, seed_to_use
from ..collection import Qrels, read_qrels
from ..errors import DegenerateDataWarning, InputError, ParameterError
from ..measures import as_runs, check_depth_work, check_rows_work, rank_frame, score_runs
from ..progress import Progress, bar
from ..results import Interval, IntervalMethod, ResultMixin, joint_need
from ..scores import ScoreMatrix
from ..simulate.work import Work
from ..variance import fit
from .checks import check_cost, check_interval_resamples, plain
from .targets import TargetRequest, fit_pairs, solve_target, target_request

__all__ = ["DepthStudy", "GrowthCurve", "cheapest_depth", "check_depths", "check_growth", "depth_feasible",
           "depth_study_estimate", "depth_study_work", "growth_work", "judgment_growth", "pool_depth_study",
           "ranked_lines"]

#: the level of a depth study's interval on n (``n_lower``, ``n_upper``)
LEVEL = 0.95


def check_depths(depths: Any) -> tuple[int, ...]:
    """Pool depths as a sorted tuple of distinct integers >= 1.

    Examples
    --------
    >>> check_depths([20, 10, 10])
    (10, 20)
    >>> check_depths("10")
    Traceback (most recent call last):
    ...
    planner.errors.ParameterError: depths: expected an integer or a list of integers, got '10'
    """
    if isinstance(depths, (int, np.integer)):
        depths = [depths]
    if isinstance(depths, (str, bytes, bool)):
        # a string would be read one character at a time ("10" -> depths 0 and 1)
        raise ParameterError(f"expected an integer or a list of integers, got {depths!r}", parameter="depths")
    try:
        out = tuple(sorted({int(d) for d in depths}))
    except (TypeError, ValueError):
        raise ParameterError(f"expected integers, got {depths!r}", parameter="depths") from None
    if not out or out[0] < 1:
        raise ParameterError(f"depths must be >= 1, got {list(out)}", parameter="depths")
    return out


def _ranked_runs(run_map: dict, topics: set, ties: str = "trec_eval") -> Any:
    """One frame ``run, query_id, doc_id, rank`` (0-based, trec_eval order) of all runs."""
    import pandas as pd  # (heavy: imported on use, as everywhere in planner)

    parts = []
    for name, run in run_map.items():
        df = rank_frame(run, ties=ties)
        df = df[df["query_id"].isin(topics)]
        parts.append(pd.DataFrame({"run": name, "query_id": df["query_id"].to_numpy(),
                                   "doc_id": df["doc_id"].to_numpy(), "rank": df["rank"].to_numpy()}))
    out = pd.concat(parts, ignore_index=True)
    if out.empty:
        raise InputError("runs and qrels have no topic in common")
    return out


# ----------------------------------------------------------------------------- growth curve

@dataclass(frozen=True, repr=False)
class GrowthCurve(ResultMixin):
    """Distinct documents per topic in the depth-k pool against the number of pooled runs.

    Fitted per depth as a power law ``J_k(r) = a_k * r ** b_k`` by least squares on
    ``log J`` against ``log r`` over random run subsets (``subsets`` per size ``r``).

    Attributes
    ----------
    depths : tuple of int
        The depths k.
    a, b, r2 : dict
        Fitted coefficients per depth, and the coefficient of determination of each log-log fit.
    n_runs, n_topics : int
        Runs and topics the curve was learnt from.
    points : tuple of dict
        Rows (depth, runs, judgments_per_topic) of the subset means the fit used.
    seed : int or None
        Integer seed of the subset draws, when given.

    Examples
    --------
    >>> g = GrowthCurve(depths=(10,), a={10: 8.0}, b={10: 0.5}, r2={10: 1.0}, n_runs=4, n_topics=2,
    ...                 points=(), seed=1)
    >>> g.predict(10, 16)
    32.0
    """

    _repr_fields = ('depths', 'a', 'b', 'r2', 'n_runs')

    depths: tuple[int, ...]
    a: dict
    b: dict
    r2: dict
    n_runs: int
    n_topics: int
    points: tuple
    seed: int | None

    def predict(self, depth: int, n_runs: Any) -> np.ndarray | float:
        """Projected judgments per topic at ``depth`` for ``n_runs`` participating runs."""
        if depth not in self.a:
            raise ParameterError(f"no growth curve for depth {depth}; fitted {list(self.depths)}",
                                 parameter="depth")
        r = np.asarray(n_runs, dtype=float)
        if np.any(r < 1):
            raise ParameterError("the number of runs must be >= 1", parameter="n_runs")
        out = self.a[depth] * r ** self.b[depth]
        return float(out) if out.ndim == 0 else out

    def to_dict(self) -> dict:
        """Plain fields, with the model in words."""
        return plain({"depths": list(self.depths), "a": self.a, "b": self.b, "r2": self.r2,
                      "n_runs": self.n_runs, "n_topics": self.n_topics, "seed": self.seed,
                      "model": "judgments_per_topic = a * runs ** b",
                      "points": [dict(p) for p in self.points]})

    def to_frame(self) -> Any:
        """The points as a DataFrame."""
        import pandas as pd  # (heavy: imported on use)

        return pd.DataFrame(list(self.points))


def _growth_topics(run_map: dict, qrels: Any, topics: Sequence[str] | None) -> list[str]:
    if topics is None and qrels is not None:
        topics = list(read_qrels(qrels))
    if topics is None:
        topics = sorted(set().union(*(set(r.frame["query_id"]) for r in run_map.values())))
    return [str(t) for t in topics]


def _growth_sizes(sizes: Sequence[int] | None, R: int) -> list[int]:
    if sizes is None:
        sizes = sorted({int(round(x)) for x in np.geomspace(1, R, num=min(R, 9))})
    out = [int(s) for s in sizes if 1 <= int(s) <= R]
    if len(out) < 2:
        raise ParameterError("need at least two subset sizes between 1 and the number of runs",
                             parameter="sizes")
    return out


def _fit_depth(M: np.ndarray, k: int, sizes: list[int], streams: list, subsets: int, T: int,
               points: list) -> tuple[float, float, float]:
    """``(a, b, r2)`` of the power law at depth ``k`` from the run x document matrix ``M``."""
    R = M.shape[0]
    xs, ys = [], []
    for s, g in zip(sizes, streams):
        # a fresh generator per (depth, size) from the size's stream: same draws at every depth
        gk = np.random.default_rng(g.bit_generator.seed_seq)
        vals = []
        for _ in range(1 if s == R else subsets):
            pick = gk.choice(R, size=s, replace=False)
            vals.append(M[pick].any(axis=0).sum() / T)
        mean = float(np.mean(vals))
        points.append({"depth": k, "runs": s, "judgments_per_topic": mean})
        xs.append(math.log(s))
        ys.append(math.log(mean))
    x, y = np.array(xs), np.array(ys)
    slope, icept = np.polyfit(x, y, 1)
    pred = icept + slope * x
    ss = ((y - y.mean()) ** 2).sum()
    return float(math.exp(icept)), float(slope), float(1 - ((y - pred) ** 2).sum() / ss) if ss > 0 else 1.0


def growth_work(rows_at: Sequence[int], run_rows: int, runs: int, sizes: Sequence[int], subsets: int,
                distinct: int | None = None) -> Work:
    """The work and memory of :func:`judgment_growth` over depths whose pools hold ``rows_at`` ranked
    documents (each run's, each topic's), ranking ``runs`` runs of ``run_rows`` documents in all,
    with ``subsets`` random subsets of each of ``sizes`` runs, of ``distinct`` (topic, document)
    pairs in all the runs (default: every document within a depth distinct), as
    :mod:`planner.simulate.work` counts: about 2.4 ms a run and 1.3 us a document to rank them, once;
    at each depth 1.9 us a document within it (its key, the distinct documents) and 2 ns a byte of
    the subsets' unions (a subset of ``s`` runs reads ``s`` bytes a distinct document); held: the
    ranked runs (95 bytes a document) and at the deepest the runs x distinct documents matrix of
    booleans, one copy of it, and 100 bytes a key (docs/research/known-limits.md).

    Examples
    --------
    >>> growth_work([100, 1000], run_rows=1000, runs=10, sizes=[1, 10], subsets=10).held
    215000
    >>> growth_work([100, 1000], run_rows=1000, runs=10, sizes=[1, 10], subsets=10, distinct=50).held
    196000
    """
    draws = sum(s * (1 if s == runs else subsets) for s in sizes)
    at = np.asarray(rows_at, dtype=float)
    uniq = at if distinct is None else np.minimum(at, distinct)
    units = 1.5e5 * runs + 85.0 * run_rows + float(np.sum(120.0 * at + 0.125 * draws * uniq))
    return Work(units, int(95 * run_rows + 2 * runs * (uniq.max() if uniq.size else 0)
                           + 100 * (at.max() if at.size else 0)))


def _growth_input(runs: Any, qrels: Any, depths: Any, subsets: Any, sizes: Sequence[int] | None,
                  topics: Sequence[str] | None) -> tuple[tuple[int, ...], Any, list[str], list[int]]:
    """:func:`judgment_growth`'s inputs checked, its work among them (:func:`check_growth`)."""
    depths = check_depths(depths)
    if isinstance(subsets, bool) or not isinstance(subsets, (int, np.integer)) or subsets < 1:
        raise ParameterError(f"expected an integer >= 1, got {subsets!r}", parameter="subsets")
    run_map = as_runs(runs)
    if len(run_map) < 2:
        raise ParameterError("need at least 2 runs to fit a growth curve", parameter="runs")
    tlist = _growth_topics(run_map, qrels, topics)
    sizes = _growth_sizes(sizes, len(run_map))
    lines, distinct = _lines(run_map, tlist, distinct=True)
    run_rows = sum(len(r.frame) for r in run_map.values())
    check_rows_work(lambda at: growth_work(at, run_rows, len(run_map), sizes, int(subsets), distinct),
                    np.array([sum(n * min(c, k) for c, n in lines.items()) for k in depths]), depths,
                    what=f"the growth curve of {len(run_map):,} runs", also=["fewer runs"])
    return depths, run_map, tlist, sizes


def check_growth(runs: Any, qrels: Any = None, *, depths: Any = (10, 20, 50, 100), subsets: int = 10,
                 sizes: Sequence[int] | None = None, topics: Sequence[str] | None = None) -> None:
    """Refuse, before any work, a :func:`judgment_growth` of these arguments over the work limits
    (:func:`growth_work`, :func:`planner.simulate.work.check_fits`): a ParameterError naming
    ``depths`` with the most of the shallowest depths that fit (what ``judgment_growth`` checks
    first; a command that does more work before it checks here first)."""
    _growth_input(runs, qrels, depths, subsets, sizes, topics)


def judgment_growth(runs: Any, qrels: Any = None, *, depths: Any = (10, 20, 50, 100), subsets: int = 10,
                    sizes: Sequence[int] | None = None, rng: Any = None,
                    topics: Sequence[str] | None = None) -> GrowthCurve:
    """Fit the growth of the depth-k pool with the number of runs.

    Parameters
    ----------
    runs : folder or mapping of runs
        As :func:`planner.measures.score_runs` takes them.
    qrels : optional
        Only to restrict the topics to the judged ones.
    depths : int or list of int, optional
        Pool depths.
    subsets : int, optional
        Random run subsets per size.
    sizes : list of int, optional
        Subset sizes r (default a geometric grid from 1 to all runs).
    rng : int, Generator or None, optional
        One child stream per size.
    topics : list of str, optional
        The topics to count (default the judged or the ranked ones).

    Returns
    -------
    GrowthCurve

    Notes
    -----
    Memory: a boolean matrix of ``R x D`` (runs x distinct (topic, document) pairs in the
    deepest pool). Its work and memory are estimated before the runs are ranked
    (:func:`check_growth`) and refused over the limits of :mod:`planner.simulate.work`.

    Examples
    --------
    >>> runs = {n: "".join(f"1 Q0 d{(i * k) % 7} {i} {9 - i} {n}\\n" for i in range(4))
    ...         for n, k in (("a", 1), ("b", 2), ("c", 3))}
    >>> g = judgment_growth(runs, depths=2, rng=1)
    >>> g.n_runs, g.depths
    (3, (2,))
    """
    depths, run_map, tlist, sizes = _growth_input(runs, qrels, depths, subsets, sizes, topics)
    names = list(run_map)
    R = len(names)
    allr = _ranked_runs(run_map, set(tlist))
    T = len(set(allr["query_id"]))
    rng = seed_to_use(rng)      # a drawn seed when None, recorded so that the fit can be repeated
    streams = as_generator(rng).spawn(len(sizes))
    run_idx = allr["run"].map({n: i for i, n in enumerate(names)}).to_numpy()
    a, b, r2 = {}, {}, {}
    points: list[dict] = []
    for k in depths:
        sel = allr["rank"].to_numpy() < k
        keys = allr.loc[sel, "query_id"].astype(str) + "\x00" + allr.loc[sel, "doc_id"].astype(str)
        uniq, doc_id = np.unique(keys.to_numpy(), return_inverse=True)
        M = np.zeros((R, len(uniq)), dtype=bool)
        M[run_idx[sel], doc_id] = True
        a[k], b[k], r2[k] = _fit_depth(M, k, sizes, streams, subsets, T, points)
    return GrowthCurve(depths=depths, a=a, b=b, r2=r2, n_runs=R, n_topics=T, points=tuple(points),
                       seed=seed_of(rng))


# ----------------------------------------------------------------------------- depth study

@dataclass(frozen=True, repr=False)
class DepthStudy(ResultMixin):
    """Pool depth against topics (:func:`pool_depth_study`).

    Attributes
    ----------
    measure, target, value, variance
        What was measured and the (first) target solved per depth; ``targets`` all of them as
        ``(target, value)``, ``method`` how they were solved.
    targets : tuple
        See above.
    method : str
        See above.
    rows : tuple of dict
        One per depth: ``depth``, ``judgments_per_topic`` (mean distinct documents in the depth-k
        pool), ``pool_judged_share`` (share of the depth-k pool's documents, over all topics, that
        the existing qrels judge; below 1 the re-scored pool is shallower than a real depth-k
        judgment, since unjudged documents count as non-relevant), ``kendall_tau_vs_full``
        (tau-b of the system means against full judgments), ``var_s``, ``var_t``, ``var_e`` and
        ``var_e_ratio`` (to full judgments), ``mean_score`` / ``mean_score_full``,
        ``n_topics_needed`` (the largest over the targets, None when one is not reached; with
        ``n_lower``, ``n_upper`` the 95% interval of the target that binds the plan, and
        ``n_interval``, how that was made: an :class:`planner.results.IntervalMethod` value;
        :func:`planner.results.joint_need`), ``n_topics_plan`` (the count to plan with: that
        interval's upper end, else the count; :meth:`planner.results.Interval.plan_count`),
        ``n_by_target``, ``cost_per_topic``, ``total_cost`` (``n_topics_plan`` x
        ``cost_per_topic``), ``tau_ok``.
    full : dict
        The same statistics with the full qrels (``depth`` None).
    recommendation : dict
        The chosen row (:func:`cheapest_depth`; the deepest when none qualifies) and ``reason``
        text.
    n_runs, n_topics, pool_runs, topic_cost, judgment_cost, tau_min
        The inputs and the collection's size.
    n_resamples, seed : int
        The topic resamples behind ``n_lower``/``n_upper`` (0: no interval) and the seed they
        were drawn with (drawn when ``rng`` is None; None for a Generator).

    Examples
    --------
    >>> d = DepthStudy(measure="nDCG@10", target="swap_rate", value=0.05, variance="pair", targets=(),
    ...                method="predictive", rows=({"depth": 10},), full={}, recommendation={}, n_runs=2,
    ...                n_topics=2, pool_runs=(), topic_cost=0.0, judgment_cost=1.0, tau_min=0.9)
    >>> d.to_frame()["depth"].tolist()
    [10]
    """

    _repr_fields = ('measure', 'target', 'value', 'method', 'recommendation')

    measure: str
    target: str
    value: float
    variance: str
    targets: tuple
    method: str
    rows: tuple
    full: dict
    recommendation: dict
    n_runs: int
    n_topics: int
    pool_runs: tuple
    topic_cost: float
    judgment_cost: float
    tau_min: float
    n_resamples: int = 0
    seed: int | None = None

    def to_dict(self) -> dict:
        """Plain fields."""
        return plain(asdict(self))

    def to_frame(self) -> Any:
        """The rows as a DataFrame."""
        import pandas as pd  # (heavy: imported on use)

        return pd.DataFrame(list(self.rows))

    def row_interval(self, row: dict) -> Interval:
        """The interval on n of a row's ``n_topics_needed`` (that target's ``n_lower``, ``n_upper``,
        made as ``n_interval`` says)."""
        how = IntervalMethod(row["n_interval"])
        if how is IntervalMethod.NONE:
            return Interval.none("none for this depth")
        resamples = self.n_resamples if how is IntervalMethod.TOPIC_RESAMPLING else 0
        return Interval(row["n_lower"], row["n_upper"], LEVEL, how, resamples)


def _components(m: ScoreMatrix) -> dict[str, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        f = fit(m)
    return {"var_s": float(f.var_s), "var_t": float(f.var_t), "var_e": float(f.var_e)}


@dataclass(frozen=True)
class _Plan:
    """The checked question of a depth study: its targets and how they are solved."""

    requests: list[tuple[str, TargetRequest | None]]
    variance: str
    rng: Any


def _needs(m: ScoreMatrix, p: _Plan) -> tuple[dict[str, int | None], int | None, Interval]:
    """Topics each target needs on ``m`` (fitted once), and what they need together
    (:func:`planner.results.joint_need`)."""
    by: dict[str, int | None] = {t: None for t, _ in p.requests}
    solved = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        try:
            data = fit_pairs(m, p.variance) if any(r is not None for _, r in p.requests) else None
        except ParameterError:
            data = None
        for t, req in p.requests:
            if req is None or data is None:
                continue
            try:
                tr = solve_target(data, req, p.rng)
            except ParameterError:
                continue
            by[t] = tr.n_topics
            solved.append(tr)
    if len(solved) < len(by):       # a target failed to solve: none is needed together
        solved = []
    return (by, *joint_need(solved))


def _stats_of(m: ScoreMatrix, cost: float | None, p: _Plan) -> dict:
    by, need, iv = _needs(m, p)
    lo, hi = (None if v is None else int(v) for v in (iv.low, iv.high))
    plan = None if need is None else iv.plan_count(need)
    return {**_components(m), "mean_score": float(m.topic_scores().mean()), "n_topics_needed": need,
            "n_by_target": by, "n_lower": lo, "n_upper": hi, "n_interval": iv.how.value, "n_topics_plan": plan,
            "total_cost": None if plan is None or cost is None else plan * cost}


def depth_feasible(row: Mapping[str, Any], total: float | None = None) -> bool:
    """Whether a plan can take a depth row (of :class:`DepthStudy` or :class:`planner.plan.BudgetResult`):
    its Kendall tau against the full judgments reaches ``tau_min`` (``tau_ok``), its count to plan
    with is finite (``total_cost`` known) and, with a ``total``, that cost is within it."""
    return bool(row["tau_ok"]) and row["total_cost"] is not None and (total is None or row["total_cost"] <= total)


def cheapest_depth(rows: Sequence[Mapping[str, Any]], total: float | None = None) -> Any:
    """The depth row a plan takes: the least ``total_cost`` (the count to plan with x the cost per
    topic) among the :func:`depth_feasible` ones, the deeper on a tie; None when none is."""
    ok = [r for r in rows if depth_feasible(r, total)]
    return min(ok, key=lambda r: (r["total_cost"], -r["depth"])) if ok else None


def _align(m_k: ScoreMatrix, full: ScoreMatrix) -> ScoreMatrix:
    """m_k on full's systems and topics (topics the restricted qrels lost score 0)."""
    if m_k.topics == full.topics and m_k.systems == full.systems:
        return m_k
    pos = {t: i for i, t in enumerate(m_k.topics)}
    spos = {s: i for i, s in enumerate(m_k.systems)}
    vals = np.zeros(full.values.shape[:2])
    src = m_k.topic_scores()
    for j, t in enumerate(full.topics):
        if t in pos:
            vals[:, j] = src[[spos[s] for s in full.systems], pos[t]]
    return ScoreMatrix(vals, full.systems, full.topics, measure=m_k.measure, source=m_k.source)


def _kendall_tau(full_means: np.ndarray, k_means: np.ndarray) -> tuple[float, bool]:
    """Tau-b of two orders, and whether it is undefined."""
    tau = float(stats.kendalltau(full_means, k_means).statistic)
    if math.isnan(tau):
        if np.ptp(full_means) == 0 and np.ptp(k_means) == 0:
            return 1.0, False           # every system tied under both: the same (empty) order
        return tau, True
    return tau, False


@dataclass(frozen=True)
class _Study:
    """What every depth of a study reads: the runs, qrels, full scores and costs."""

    run_map: dict
    qrels: Qrels
    measure: str
    full: ScoreMatrix
    allr: Any
    topic_cost: float
    judgment_cost: float
    tau_min: float


def depth_study_work(rows_at: Sequence[int], run_rows: int, systems: int, topics: int, targets: int,
                     resamples: int) -> Work:
    """The work and memory of :func:`pool_depth_study` over depths whose pools hold ``rows_at`` ranked
    documents, re-scoring runs of ``run_rows`` ranked documents in all, ``systems`` x ``topics``, and
    solving ``targets`` targets with ``resamples`` topic resamples each (:mod:`planner.simulate.work`):
    about 0.7 us of CPU a pooled document, 0.8 us a run document re-scored and 0.08 us a resample,
    pair and topic, at each depth; kept: 2 KB a depth (docs/research/known-limits.md).

    Examples
    --------
    >>> depth_study_work([10, 20], run_rows=100, systems=3, topics=4, targets=1, resamples=0).held
    4096
    """
    D = len(rows_at)
    pairs = systems * (systems - 1) // 2
    per = 2e6 + 50.0 * run_rows + 5.0 * targets * (resamples + 1) * pairs * topics
    return Work(D * per + 45.0 * float(np.sum(rows_at)), D * 2048)


def ranked_lines(run_map: Any, topics: Sequence[str]) -> dict[int, int]:
    """How many (run, topic) of ``run_map`` (a mapping of :class:`~planner.collection.Run`) on
    ``topics`` rank each number of documents: ``{documents: (run, topic) pairs}``, what
    :func:`depth_study_estimate` and :func:`growth_work` need of the runs (counted without ranking
    them)."""
    return _lines(run_map, topics, distinct=False)[0]


def _lines(run_map: Any, topics: Sequence[str], *, distinct: bool) -> tuple[dict[int, int], int]:
    """:func:`ranked_lines`, and the distinct (topic, document) pairs of the runs (the deepest
    pool's size; with ``distinct``, else 0), in one pass over all the runs."""
    import pandas as pd  # (heavy: imported on use, as everywhere in planner)

    frames = [r.frame for r in run_map.values()]
    if not frames:
        return {}, 0
    q = pd.concat([f["query_id"] for f in frames], ignore_index=True)
    keep = q.isin(set(topics)).to_numpy()
    run = np.repeat(np.arange(len(frames)), [len(f) for f in frames])[keep]
    codes, uniq = pd.factorize(q[keep])
    counts = np.bincount(run * max(len(uniq), 1) + codes)
    sizes, many = np.unique(counts[counts > 0], return_counts=True)
    pairs = 0
    if distinct:
        doc = pd.concat([f["doc_id"] for f in frames], ignore_index=True)[keep]
        pairs = len(pd.DataFrame({"q": codes, "d": doc.to_numpy()}).drop_duplicates())
    return {int(c): int(n) for c, n in zip(sizes, many)}, int(pairs)


def depth_study_estimate(lines: dict[int, int], run_rows: int, systems: int, topics: int,
                         depths: Sequence[int], targets: int, resamples: int = 0) -> Work:
    """The work of a whole :func:`pool_depth_study` before its runs are ranked: each depth's
    (:func:`depth_study_work`, ``rows_at`` from ``lines``, :func:`ranked_lines`: a (run, topic) of
    ``c`` documents holds ``min(c, k)`` within depth ``k``) and the scoring with the full judgments,
    whose targets are solved too (one more depth, of no pooled documents). Every run is taken as
    pooled (an upper bound when ``pool_runs`` names fewer).

    Examples
    --------
    >>> depth_study_estimate({100: 2}, 200, systems=2, topics=1, depths=[10, 20], targets=1).units
    6032715.0
    """
    rows_at = [sum(n * min(c, int(k)) for c, n in lines.items()) for k in depths]
    return depth_study_work([*rows_at, 0], run_rows, systems, topics, targets, resamples)


def _depth_row(s: _Study, k: int, full_row: dict, p: _Plan) -> tuple[dict, bool]:
    """The row of depth ``k``, and whether its tau is undefined."""
    topics = list(s.full.topics)
    top = s.allr[s.allr["rank"].to_numpy() < k].drop_duplicates(["query_id", "doc_id"])
    pooled: dict[str, set] = {}
    for t, d in zip(top["query_id"].tolist(), top["doc_id"].tolist()):
        pooled.setdefault(t, set()).add(d)
    sizes = np.array([len(pooled.get(t, ())) for t in topics], dtype=float)
    rq = Qrels({t: {d: g for d, g in docs.items() if d in pooled.get(t, ())} for t, docs in s.qrels.items()
                if t in set(topics)}, source=s.qrels.source)
    judged = sum(len(v) for v in rq.values())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m_k = score_runs(s.run_map, rq, [s.measure], warn=False)[s.measure]
    m_k = _align(m_k, s.full)
    tau, undefined = _kendall_tau(s.full.topic_scores().mean(axis=1), m_k.topic_scores().mean(axis=1))
    jpt = float(sizes.mean())
    cost = s.topic_cost + jpt * s.judgment_cost
    st = _stats_of(m_k, cost, p)
    return {"depth": k, "judgments_per_topic": jpt,
            "pool_judged_share": judged / sizes.sum() if sizes.sum() else float("nan"),
            "kendall_tau_vs_full": tau, **st,
            "var_e_ratio": st["var_e"] / full_row["var_e"] if full_row["var_e"] > 0 else float("nan"),
            "mean_score_full": full_row["mean_score"], "cost_per_topic": cost,
            "tau_ok": bool(tau >= s.tau_min)}, undefined


def _warn_depths(rows: list[dict], undefined: list[int]) -> None:
    if undefined:
        warnings.warn("Kendall tau against full judgments is undefined at depth(s) "
                      + ", ".join(map(str, undefined)) + ": every system has the same mean score under "
                      "full judgments or at that depth (no ranking to agree with)", DegenerateDataWarning,
                      stacklevel=3)
    thin = [r for r in rows if r["pool_judged_share"] < 0.9]
    if thin:
        warnings.warn("the qrels judge only part of the pooled documents ("
                      + ", ".join(f"{r['pool_judged_share']:.0%} at depth {r['depth']}" for r in thin)
                      + "): those depths are re-scored with the existing judgments "
                      "(unjudged = non-relevant), so their tau and scores show the judgments already made, "
                      "not what a real pool to that depth would find; their cost is a real pool's",
                      DegenerateDataWarning, stacklevel=3)


def _recommend(rows: list[dict], tau_min: float) -> dict:
    best = cheapest_depth(rows)
    if best is not None:
        reason = (f"cheapest total cost ({best['n_topics_plan']} topics to plan with x {best['cost_per_topic']:.4g}) "
                  f"among depths whose Kendall tau against full judgments is >= {tau_min}")
    else:
        cand = [r for r in rows if r["total_cost"] is not None] or rows
        best = max(cand, key=lambda r: r["depth"])
        reason = (f"no depth reaches Kendall tau >= {tau_min} with a reachable target; the deepest "
                  "pool is the least biased")
    return {"depth": best["depth"], "n_topics": best["n_topics_needed"], "n_topics_plan": best["n_topics_plan"],
            "total_cost": best["total_cost"],
            "kendall_tau_vs_full": best["kendall_tau_vs_full"], "reason": reason}


def _request_or_none(t: str, v: float, **kw: Any) -> TargetRequest | None:
    """The checked target, or None for one that cannot be solved (its depth then needs "none")."""
    try:
        return target_request(target=t, value=v, **kw)
    except ParameterError:
        return None


def _depth_iv(depths: Any, resamples: Any, rng: Any, method: str, topic_cost: float, judgment_cost: float,
              tau_min: float) -> tuple[tuple[int, ...], int, Any]:
    depths = check_depths(depths)
    resamples = check_interval_resamples(resamples)
    if resamples > 0:
        # every depth and target resamples with this seed (common random numbers); recorded
        rng = seed_to_use(rng)
    closed = methods.method_names(lambda m: m.closed_form)
    if method not in closed:
        # a random method would re-run its simulation at every depth and target, and subsample
        # cannot reach beyond half the topics: the budget and study paths refuse them too
        raise ParameterError(f"expected one of {', '.join(closed)} (a closed form, solved at every depth), "
                             f"got {method!r}", parameter="method")
    check_cost(topic_cost, "topic_cost")
    check_cost(judgment_cost, "judgment_cost")
    if not -1 <= float(tau_min) <= 1:
        raise ParameterError(f"must be in [-1, 1], got {tau_min}", parameter="tau_min")
    return depths, resamples, rng


def pool_depth_study(runs: Any, qrels: Any, *, depths: Any = (10, 20, 50, 100), measure: str = "nDCG@10",
                     pool_runs: Sequence[str] | None = None,
                     target: str = methods.DEFAULT_BUDGET_TARGET[0], value: float = methods.DEFAULT_BUDGET_TARGET[1],
                     variance: str = "pair", min_diff: float = 0.05,
                     alpha: float = 0.05, topic_cost: float = 0.0, judgment_cost: float = 1.0,
                     tau_min: float = 0.9, n_resamples: int = 0, rng: Any = None, targets: Any = None,
                     method: str = methods.DEFAULT_METHOD, progress: Progress = False) -> DepthStudy:
    """Re-score runs with judgments restricted to the depth-k pool and weigh depth against topics.

    For each depth k: the qrels keep only documents in the union of the top k of ``pool_runs``
    (default all runs; trec_eval order), unjudged = non-relevant; every run is re-scored with
    ``measure``; reported are the judgments a new campaign needs at depth k (distinct pooled
    documents per topic, judged or not), Kendall's tau-b of the system means against the full
    judgments, the variance components, and the topics needed for ``target``. The
    recommendation is the cheapest total (topics needed x cost per topic) among depths whose
    tau reaches ``tau_min``: shallow pools buy topics but bias scores, and tau measures that bias.

    Parameters
    ----------
    runs, qrels
        A folder or mapping of runs, and the qrels (path, text or Qrels).
    depths : int or list of int, optional
        Pool depths.
    measure : str, optional
        An ir_measures measure.
    pool_runs : list of str, optional
        The runs that form the pool (default all).
    target, value : optional
        The target solved at each depth (:func:`size_for_target` with ``method`` and
        ``variance``, and ``n_resamples`` topic resamples for an interval).
    targets : list of (target, value), optional
        Replaces ``target``/``value``: a depth then needs the largest count over them
        (``n_by_target`` keeps each; the interval is the binding target's).
    variance, min_diff, alpha : optional
        As in :func:`size_for_target` (each pair's own variance by default).
    topic_cost, judgment_cost : float, optional
        ``cost_per_topic = topic_cost + judgments_per_topic * judgment_cost``.
    tau_min : float, optional
        The least Kendall tau against full judgments a recommended depth has.
    n_resamples, rng : optional
        Topic resamples of the interval on n, and their seed.
    method : str, optional
        A closed-form method (solved at every depth); default
        :data:`planner.methods.DEFAULT_METHOD` (``"predictive"``).
    progress : bool, "auto" or Share, optional
        A bar of the scorings (the full judgments, then each depth: :mod:`planner.progress`);
        default none.

    Returns
    -------
    DepthStudy

    Examples
    --------
    >>> runs = {n: "".join(f"{q} Q0 d{(i * k + q) % 9} {i} {9 - i} {n}\\n" for q in (1, 2, 3) for i in range(6))
    ...         for n, k in (("a", 1), ("b", 2), ("c", 4))}
    >>> qrels = "".join(f"{q} 0 d{d} {int(d % 2 == 0)}\\n" for q in (1, 2, 3) for d in range(9))
    >>> ds = pool_depth_study(runs, qrels, depths=[2, 4], measure="P@5", target="ci_width", value=0.5,
    ...                       method="analytic")
    >>> [r["depth"] for r in ds.rows], ds.method
    ([2, 4], 'analytic')
    """
    depths, resamples, rng = _depth_iv(depths, n_resamples, rng, method, topic_cost, judgment_cost, tau_min)
    tlist = [(str(t), float(v)) for t, v in (targets if targets else [(target, value)])]
    p = _Plan([(t, _request_or_none(t, v, method=method, variance=variance, min_diff=min_diff, alpha=alpha,
                                    quantile=50.0, confidence_level=LEVEL, n_resamples=resamples,
                                    n_max=100_000, method_resamples=1000)) for t, v in tlist], variance, rng)
    q = read_qrels(qrels)
    run_map = as_runs(runs)
    pool_names = list(run_map) if pool_runs is None else [str(r) for r in pool_runs]
    unknown = [r for r in pool_names if r not in run_map]
    if unknown:
        raise ParameterError(f"unknown run {unknown[0]!r}", parameter="pool_runs")
    with bar(progress, len(depths) + 1, "pool depths", unit="scoring") as tick:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            full = score_runs(run_map, q, [measure], warn=False)[measure]
        tick()
        s = _Study(run_map, q, measure, full, _ranked_runs({n: run_map[n] for n in pool_names}, set(full.topics)),
                   float(topic_cost), float(judgment_cost), float(tau_min))
        run_rows = sum(len(r.frame) for r in run_map.values())
        check_depth_work(lambda rows_at: depth_study_work(rows_at, run_rows, len(full.systems), len(full.topics),
                                                          len(tlist), resamples),
                         s.allr["rank"].to_numpy(), depths, what=f"the pool depth study of {len(run_map):,} runs")
        full_row = {"depth": None, "judgments_per_topic": float(q.n_judgments) / max(len(q), 1),
                    **_stats_of(full, None, p)}
        rows, undefined = [], []
        for k in depths:
            row, undef = _depth_row(s, k, full_row, p)
            rows.append(row)
            if undef:
                undefined.append(k)
            tick()
    _warn_depths(rows, undefined)
    return DepthStudy(measure=measure, target=tlist[0][0], value=tlist[0][1], variance=variance,
                      targets=tuple(tlist), method=method, rows=tuple(rows), full=full_row,
                      recommendation=_recommend(rows, tau_min), n_runs=len(run_map),
                      n_topics=len(full.topics), pool_runs=tuple(pool_names), topic_cost=float(topic_cost),
                      judgment_cost=float(judgment_cost), tau_min=float(tau_min), n_resamples=resamples,
                      seed=seed_of(rng) if resamples > 0 else None)
