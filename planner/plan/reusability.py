"""Pool reusability: leave one team's runs out of the pool and re-score them.

A collection is reusable when a run that did not contribute to its judgment pool is scored
as fairly as one that did. The test the TREC Deep Learning track (and Voorhees before it)
applies to its own collections: for each team (a group of runs, :mod:`planner.plan.groups`)

1. find the documents only that team contributed to the pool: the ``(topic, document)``
   pairs in the top ``depth`` (trec_eval order) of the team's pooled runs and in the top
   ``depth`` of no other team's pooled run;
2. remove their judgments from the qrels (they become unjudged, scored as non-relevant);
3. re-score the team's runs against those qrels, every other run keeping its score.

Per run: ``full`` (score with all judgments), ``left_out`` (score with its team's unique
documents removed), ``change = left_out - full`` (negative: the run loses), ``rank_full``,
``rank_left_out`` (its rank when its team's runs carry their left-out scores and every
other run its full score; 1 = best) and ``rank_change = rank_left_out - rank_full``
(positive: the run falls). For the whole ranking: Kendall's tau-b between the full
ranking and the ranking in which every run carries its left-out score; the largest drop
in score and in rank.

Pool depth. TREC DL 2019 and 2020 (passage) judged the depth-10 pool of the pooled runs
and added documents chosen by active learning (HiCAL); only the depth-10 pool can be
attributed to teams, so ``depth=10`` is the default and the right value for these
collections (the shipped pool statistics show it: at depth 10, 2494 of the 2495 pooled
DL 2019 documents are judged, at depth 20 only 3126 of 4926). Documents judged through
active learning stay judged for every team: the test therefore understates the bias a
non-participant meets when those documents were found through the left-out team's runs.
In DL 2020 six runs have less than 70% of their top 10 judged (``DoRA_*``,
``small_1k``, ``med_1k``): they were not pooled; pass ``pool_runs`` without them.

Sampling error beside the bias: ``ci_half_width`` is, per run, the half-width of the
95% t-interval of its mean over the collection's topics; ``drop_vs_sampling`` divides
the largest drop by the median of these, so a reader sees which is larger.

Memory and time: runs are read one at a time (a folder) and each run is read three times
(pool, full score, left-out score); the pool keeps each run's top ``depth`` only.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._checks import check_int
from ..collection import Qrels, read_qrels, read_run
from ..errors import InputError, ParameterError
from ..measures import lazy_runs, pool_names, rank_frame, score_runs
from ..results import ResultMixin, short_repr
from .groups import group_members, resolve_groups

__all__ = ["Reusability", "leave_group_out", "unique_documents"]

#: the depth the TREC DL passage pools were judged to (module docstring)
DL_POOL_DEPTH = 10


@dataclasses.dataclass(frozen=True, repr=False)
class Reusability(ResultMixin):
    """Leave-one-team-out scores (module docstring for every definition).

    Attributes
    ----------
    measure : str
        The measure re-scored.
    depth : int
        The pool depth at which documents are attributed to teams.
    n_topics, n_runs, n_groups : int
        Topics (the qrels topics), runs and groups (teams).
    kendall_tau : float
        Tau-b between the full ranking and the all-left-out ranking.
    largest_drop : float
        The largest score loss over runs (``-min(change)``, 0 when no run loses).
    largest_drop_run : str
        The run that loses it.
    largest_rank_drop : int
        The largest ``rank_change``.
    drop_vs_sampling : float
        ``largest_drop`` divided by the median over runs of ``ci_half_width``.
    runs : pandas.DataFrame
        One row a run: ``run, group, in_pool, full, left_out, change, rank_full,
        rank_left_out, rank_change, ci_half_width``.
    groups : pandas.DataFrame
        One row a group: ``group, n_runs, unique_docs, unique_judged, unique_relevant``
        (documents at ``depth`` only it contributed; of them judged; of them grade >= 1).
    """

    measure: str
    depth: int
    n_topics: int
    n_runs: int
    n_groups: int
    kendall_tau: float
    largest_drop: float
    largest_drop_run: str
    largest_rank_drop: int
    drop_vs_sampling: float
    runs: pd.DataFrame
    groups: pd.DataFrame

    def __repr__(self) -> str:
        return short_repr(self, ("measure", "depth", "n_runs", "n_groups", "kendall_tau", "largest_drop",
                                 "largest_drop_run", "largest_rank_drop"))

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("runs", "groups")}
        out = {k: (v.item() if hasattr(v, "item") else v) for k, v in out.items()}
        out["runs"] = _records(self.runs)
        out["groups"] = _records(self.groups)
        return out

    def to_frame(self) -> pd.DataFrame:
        """The per-run table."""
        return self.runs.copy()


def _records(df: pd.DataFrame) -> list[dict]:
    return [{k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()} for r in df.to_dict("records")]


def _run_source(runs: Any, duplicates: str, select_runs: Any = None
                ) -> tuple[list[str], Callable[[str], Any], Callable[[list[str]], dict], Callable[[], Any]]:
    """(names, get(name) -> Run, subset(names) -> mapping for score_runs, record() -> what reading
    skipped or changed, or None); a folder is read lazily (:func:`planner.measures.lazy_runs`)."""
    names, get, record = lazy_runs(runs, duplicates=duplicates, select_runs=select_runs)
    return names, get, lambda some: {n: get(n) for n in some}, record


def _top(run: Any, topics: set[str], depth: int) -> pd.DataFrame:
    df = rank_frame(run)
    keep = (df["rank"].to_numpy() < depth) & df["query_id"].isin(topics).to_numpy()
    return df.loc[keep, ["query_id", "doc_id"]]


def unique_documents(runs: Any, qrels: Any, *, groups: Any = "prefix", depth: int = DL_POOL_DEPTH,
                     pool_runs: Sequence[str] | None = None, duplicates: str = "error",
                     select_runs: Any = None) -> pd.DataFrame:
    """The ``(group, topic, doc_id)`` rows of documents in the top ``depth`` of exactly one
    group's pooled runs (qrels topics only), with their ``grade`` (-1: not judged).

    Examples
    --------
    >>> runs = {"a_1": {"1": {"d1": 2.0, "d2": 1.0}}, "b_1": {"1": {"d1": 2.0, "d3": 1.0}}}
    >>> unique_documents(runs, {"1": {"d1": 1, "d2": 1}}, depth=2).values.tolist()
    [['a', '1', 'd2', 1], ['b', '1', 'd3', -1]]
    """
    depth = check_int(depth, "depth", minimum=1)
    qrels = read_qrels(qrels)
    names, get, _, record = _run_source(runs, duplicates, select_runs)
    team = resolve_groups(names, groups)
    pooled = pool_names(names, pool_runs)
    out = _unique(pooled, get, team, qrels, depth)
    _warn_read(record)
    return out


def _warn_read(record: Callable[[], Any]) -> None:
    """Say once what reading a folder of runs skipped or changed."""
    read = record()
    if read is not None:
        read.warn(stacklevel=3)


def _unique(pooled: list[str], get: Callable[[str], Any], team: dict[str, str], qrels: Qrels,
            depth: int) -> pd.DataFrame:
    topics = set(qrels)
    parts = [_top(get(n), topics, depth).assign(group=team[n]) for n in pooled]
    pool = pd.concat(parts, ignore_index=True).drop_duplicates(["group", "query_id", "doc_id"])
    if pool.empty:
        raise InputError("runs and qrels have no topic in common", file=getattr(qrels, "source", None))
    n_groups = pool.groupby(["query_id", "doc_id"])["group"].transform("size")
    uniq = pool[n_groups.to_numpy() == 1].rename(columns={"query_id": "topic"})
    grade = [qrels.get(t, {}).get(d, -1) for t, d in zip(uniq["topic"], uniq["doc_id"])]
    out = uniq[["group", "topic", "doc_id"]].assign(grade=grade)
    return out.sort_values(["group", "topic", "doc_id"]).reset_index(drop=True)


def _without(qrels: Qrels, docs: pd.DataFrame) -> Qrels:
    drop: dict[str, set[str]] = {}
    for t, d in zip(docs["topic"], docs["doc_id"]):
        drop.setdefault(t, set()).add(d)
    return Qrels({t: {d: g for d, g in js.items() if d not in drop.get(t, ())} for t, js in qrels.items()},
                 source=getattr(qrels, "source", None))


def _ranks(values: np.ndarray) -> np.ndarray:
    """1 = best; ties share the best rank."""
    return stats.rankdata(-values, method="min").astype(int)


def leave_group_out(runs: Any, qrels: Any, *, measure: str = "nDCG@10", groups: Any = "prefix",
                    depth: int = DL_POOL_DEPTH, pool_runs: Sequence[str] | None = None,
                    duplicates: str = "error", select_runs: Any = None) -> Reusability:
    """Leave each group's runs out of the pool, remove its unique documents, re-score its runs.

    Parameters
    ----------
    runs : str or os.PathLike or Mapping
        A folder of run files, or a mapping ``name -> Run | path | {topic: {doc: score}}``.
    qrels : str or os.PathLike or Mapping
        The full judgments.
    measure : str
        One ir_measures measure string (``nDCG@10``, ``AP(rel=2)``, ...).
    groups : str or Mapping or callable
        Teams (:func:`planner.plan.groups.resolve_groups`): ``"prefix"`` (default),
        ``"regex:PATTERN"``, a mapping, or a CSV ``FILE[:COLUMN]``.
    depth : int
        Pool depth at which documents are attributed (10 for TREC DL; module docstring).
    pool_runs : sequence of str, optional
        The runs that formed the pool (default all). Runs outside it keep their scores.
    duplicates, select_runs
        For reading run files (:func:`planner.measures.score_runs`).

    Returns
    -------
    Reusability

    Examples
    --------
    >>> runs = {"a_1": {"1": {"d1": 2.0, "d2": 1.0}, "2": {"d4": 1.0}},
    ...         "b_1": {"1": {"d3": 2.0, "d1": 1.0}, "2": {"d4": 1.0}}}
    >>> qrels = {"1": {"d1": 1, "d2": 1, "d3": 0}, "2": {"d4": 1}}
    >>> r = leave_group_out(runs, qrels, measure="P@2", depth=2)
    >>> r.runs[["run", "full", "left_out"]].values.tolist()
    [['a_1', 0.75, 0.5], ['b_1', 0.5, 0.5]]
    """
    depth = check_int(depth, "depth", minimum=1)
    if not isinstance(measure, str):
        raise ParameterError("expected one measure string", parameter="measure")
    qrels = read_qrels(qrels)
    names, get, subset, record = _run_source(runs, duplicates, select_runs)
    team = resolve_groups(names, groups)
    pooled = pool_names(names, pool_runs)
    uniq = _unique(pooled, get, team, qrels, depth)
    full_m = score_runs(subset(names), qrels, measure, duplicates=duplicates, warn=False)[measure]
    full = dict(zip(full_m.systems, full_m.system_means().tolist()))
    left = dict(full)
    members = group_members(team)
    for g, runs_g in members.items():
        docs = uniq[uniq["group"] == g]
        mine = [n for n in runs_g if n in pooled]
        if docs.empty or not mine:
            continue
        left.update(_means(subset(mine), _without(qrels, docs), measure, duplicates))
    table = _run_table(names, team, set(pooled), full, left, full_m.topic_scores())
    _warn_read(record)
    return _summarise(table, uniq, members, measure=measure, depth=depth, n_topics=full_m.n_topics)


def _means(runs: dict, qrels: Qrels, measure: str, duplicates: str) -> dict[str, float]:
    """Mean scores of ``runs`` (a score matrix needs two systems: a lone run is scored twice)."""
    if len(runs) == 1:
        ((name, r),) = runs.items()
        r = read_run(r, duplicates=duplicates, name=name) if isinstance(r, (str, os.PathLike)) else r
        runs = {name: r, name + " (twice)": r}
    m = score_runs(runs, qrels, measure, duplicates=duplicates, warn=False)[measure]
    return {s: float(v) for s, v in zip(m.systems, m.system_means()) if s in runs and not s.endswith(" (twice)")}


def _run_table(names: list[str], team: dict[str, str], pooled: set[str], full: dict, left: dict,
               per_topic: np.ndarray) -> pd.DataFrame:
    f = np.array([full[n] for n in names])
    lo = np.array([left[n] for n in names])
    rank_full = _ranks(f)
    rank_left = np.empty(len(names), dtype=int)
    groups = np.array([team[n] for n in names])
    for g in set(groups):
        mix = np.where(groups == g, lo, f)          # its team left out, every other run at full
        rank_left[groups == g] = _ranks(mix)[groups == g]
    n = per_topic.shape[1]
    half = stats.t.ppf(0.975, n - 1) * per_topic.std(axis=1, ddof=1) / np.sqrt(n) if n > 1 else np.nan
    return pd.DataFrame({"run": names, "group": groups, "in_pool": [x in pooled for x in names],
                         "full": f, "left_out": lo, "change": lo - f, "rank_full": rank_full,
                         "rank_left_out": rank_left, "rank_change": rank_left - rank_full,
                         "ci_half_width": half})


def _summarise(table: pd.DataFrame, uniq: pd.DataFrame, members: dict[str, list[str]], *, measure: str,
               depth: int, n_topics: int) -> Reusability:
    g = uniq.assign(judged=uniq["grade"] >= 0, relevant=uniq["grade"] >= 1).groupby("group")
    counts = g.agg(unique_docs=("doc_id", "size"), unique_judged=("judged", "sum"),
                   unique_relevant=("relevant", "sum"))
    gt = pd.DataFrame({"group": list(members), "n_runs": [len(v) for v in members.values()]})
    gt = gt.merge(counts, left_on="group", right_index=True, how="left").fillna(0)
    for c in ("unique_docs", "unique_judged", "unique_relevant"):
        gt[c] = gt[c].astype(int)
    tau = stats.kendalltau(table["full"], table["left_out"]).statistic if len(table) > 1 else float("nan")
    worst = int(np.argmin(table["change"].to_numpy()))
    drop = max(0.0, -float(table["change"].iloc[worst]))
    half = float(np.nanmedian(table["ci_half_width"])) if table["ci_half_width"].notna().any() else float("nan")
    return Reusability(measure=measure, depth=depth, n_topics=n_topics, n_runs=len(table), n_groups=len(members),
                       kendall_tau=float(tau), largest_drop=drop,
                       largest_drop_run=str(table["run"].iloc[worst]) if drop > 0 else "",
                       largest_rank_drop=int(max(0, table["rank_change"].max())),
                       drop_vs_sampling=drop / half if half > 0 else float("nan"), runs=table, groups=gt)
