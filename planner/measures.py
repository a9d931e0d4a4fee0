"""Per-topic scores of runs against qrels, and pool statistics.

Scoring (:func:`score_runs`) goes through ir_measures for any measure string it
parses (``nDCG@10``, ``AP(rel=2)``, ``RR(rel=2)``, ``P(rel=2)@10``,
``Judged@10``, ...). Its pytrec_eval backend orders a topic's documents the way
trec_eval does: score descending, then document id descending (byte order), and
ignores the rank column.

RBP (``RBP(rel=R,p=P)``, optionally ``@k``) is computed by planner itself, because
ir_measures' only backends for it (cwl_eval, trectools) are optional extras:
``RBP = (1 - p) * sum_i p^(i-1) * [grade_i >= R]`` over the ranking
(unjudged = non-relevant; ``rel`` default 1, ``p`` default 0.8). The ranking is
cut at 1000 documents, as cwl_eval does, or at ``k`` with ``@k``. Ties are ordered by
``ties``:

- ``"trec_eval"`` (default): score descending, then document id descending,
  the order of every other measure here;
- ``"file"``: score descending, ties in file order (what ir_measures' cwl_eval
  backend does with a run read in file order).

With ``"trec_eval"`` the RBP(rel=2,p=0.8) matrices equal the reference matrices
of ``shared/data`` (ir_measures 0.4.3) on every cell of TREC DL 2019 and on all
but two cells of DL 2020 (``docs/inputs.md`` explains both: one adjacent swap
of tied documents whose ids are prefixes of each other).

Missing topics: a topic in the qrels that a run lacks scores 0 by default
(trec_eval ``-c``; ``missing_topic="zero"``); topics a run has but the qrels lack
are dropped. Both are counted per run in ``ScoreMatrix.meta["report"]``.

Pools (:func:`pool_stats`): for depth k and a set of pool runs, per topic the
number of distinct documents in the union of their top k (trec_eval order), how
many of them the qrels judge; per run and topic the judged share of the run's
own top k (judged / min(k, documents the run returned for the topic)).
:func:`restrict_qrels` keeps only judgments of documents in the depth-k pool,
for re-scoring as if the pool had been k deep (unjudged = non-relevant).

Memory: a folder of runs is read one run at a time. :func:`score_runs` holds
one run (about 3 x 150 bytes per line: the frame, its sorted copy and the
dict-of-dict handed to ir_measures) plus the matrices (8 x S x T bytes per
measure); :func:`pool_stats` keeps each run's top ``max(depths)`` only, about
150 x S x T x max(depths) bytes. Measured on TREC DL 2020 (59 runs, 3.1 million
lines): peak resident memory about 115 MB for five measures (benchmarks/bench_load.py).
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from . import methods
from ._checks import check_choice
from .collection import Qrels, Run, RunReader, RunsRead, match_runs, read_qrels, read_run, read_runs, run_files
from .collection.interop import native_runs, not_accepted
from .collection.notes import collapse, plural
from .collection.runs import is_run_folder
from .errors import InputError, ParameterError, PlannerWarning
from .policies import DUPLICATE_POLICIES, MISSING_POLICIES
from .progress import Progress, bar
from .results import ResultMixin
from .scores import ScoreMatrix
from .simulate.work import Work, check_fits, fits, largest_fitting

__all__ = [
    "PoolStats",
    "parse_measures",
    "pool_stats",
    "rank_frame",
    "restrict_qrels",
    "score_runs",
]

# ------------------------------------------------------------------ inputs
def as_runs(runs, *, duplicates: str = "error", select_runs=None, warn: bool = True) -> dict[str, Run]:
    """``{name: Run}`` of what the scorers take (:func:`score_runs`), every run read now: paths,
    planner Runs, and the forms of :data:`~planner.collection.interop.RUN_FORMS`.

    ``duplicates`` is the policy of :func:`~planner.collection.read_run` for runs read from files;
    ``select_runs`` (run names or glob patterns) keeps the runs whose name matches one of them
    (:func:`~planner.collection.match_runs`). With ``warn``, what reading files skipped or
    changed is warned once per kind (:meth:`~planner.collection.RunsRead.warn`).
    """
    check_choice(duplicates, DUPLICATE_POLICIES, "duplicates", quote=True)
    original = runs
    # another tool's runs (ranx, ir_measures, ir_datasets, pandas, trectools, pytrec_eval) become
    # planner Runs first (planner.collection.interop); paths and Runs pass through
    runs = native_runs(runs, duplicates=duplicates)
    if is_run_folder(runs):
        return read_runs(runs, duplicates=duplicates, select_runs=select_runs, warn=warn)
    if isinstance(runs, (str, os.PathLike)):
        r = read_run(runs, duplicates=duplicates, warn=warn)
        match_runs([r.name], select_runs)
        return {r.name: r}
    if isinstance(runs, Run):
        match_runs([runs.name], select_runs)
        return {runs.name: runs}
    if isinstance(runs, Mapping):
        keep = match_runs([str(n) for n in runs], select_runs)
        out = {str(n): _run_of(n, r, duplicates) for n, r in runs.items() if str(n) in keep}
        given = [str(n) for n, r in runs.items() if isinstance(r, Run)]
    elif isinstance(runs, Iterable):
        out, given = {}, []
        for r in runs:
            if isinstance(r, Run):
                given.append(r.name)
            else:
                r = read_run(r, duplicates=duplicates, warn=False)
            if r.name in out:
                raise ParameterError(f"two runs named {r.name!r}", parameter="runs")
            out[r.name] = r
        out = {n: out[n] for n in match_runs(list(out), select_runs)}
    else:
        raise not_accepted(original, "runs", "runs")
    if not out:
        raise ParameterError("no runs given", parameter="runs")
    if warn:    # the runs read here: a Run given was read (and warned about) by the caller
        RunsRead.of([r for n, r in out.items() if n not in given]).warn(stacklevel=2)
    return out


def _run_of(name, r, duplicates: str) -> Run:
    """The Run of a mapping's entry after :func:`~planner.collection.interop.native_runs` (which
    converted every other form): a Run, or a path (read, its notes left to the caller)."""
    return r if isinstance(r, Run) else read_run(r, duplicates=duplicates, name=str(name), warn=False)


def lazy_runs(runs, *, duplicates: str = "error", select_runs=None, warn: bool = True):
    """(names, get, record) where ``get(name)`` returns the Run and ``record()`` what reading
    skipped or changed (:class:`~planner.collection.RunsRead`, for the caller to warn; None when
    the runs were read, and warned about with ``warn``, by :func:`as_runs`); a folder's files
    are read one at a time when asked for, so that only one run is in memory at once."""
    if is_run_folder(runs):
        reader = RunReader(run_files(runs, select_runs=select_runs), duplicates=duplicates)
        return reader.names, reader, reader.record
    run_map = as_runs(runs, duplicates=duplicates, select_runs=select_runs, warn=warn)
    return list(run_map), run_map.__getitem__, lambda: None


def suggest_measure(name: str) -> str:
    """``" (did you mean 'nDCG@10'?)"`` for ``ndcg@10``: the ir_measures measure whose name is
    closest to the name part of ``name``, with its parameters as given; ``""`` when none is.

    Examples
    --------
    >>> suggest_measure("ndcg@10"), suggest_measure("ap(rel=2)"), suggest_measure("zzz")
    (" (did you mean 'nDCG@10'?)", " (did you mean 'AP(rel=2)'?)", '')
    """
    import ir_measures

    head = re.split(r"[@(]", name, maxsplit=1)[0]
    names = sorted({m.NAME for m in ir_measures.measures.registry.values()})
    near = methods.closest(head, names)
    return "" if near is None or near == head else f" (did you mean {near + name[len(head):]!r}?)"


def parse_measures(measures) -> dict[str, object]:
    """``{measure string as given: ir_measures measure}``; an unparsable string is a
    ParameterError naming it."""
    import ir_measures

    if isinstance(measures, str):
        measures = [measures]
    out = {}
    for m in measures:
        if not isinstance(m, str):
            out[str(m)] = m
            continue
        try:
            out[m] = ir_measures.parse_measure(m)
        except (NameError, ValueError, SyntaxError, TypeError) as exc:
            # a trec_eval name (ndcg_cut_10, map, P_10, recip_rank), as trec_eval users write it
            try:
                trec = list(ir_measures.parse_trec_measure(m))
            except Exception:  # any failure: the ir_measures error below is the one to show
                trec = []
            if len(trec) != 1:
                raise ParameterError(f"unknown measure {m!r} ({exc}){suggest_measure(m)}",
                                     parameter="measures") from None
            out[m] = trec[0]
        _check_params(m, getattr(out[m], "params", None) or {})
    if not out:
        raise ParameterError("no measures given", parameter="measures")
    return out


def _check_params(name: str, params: Mapping) -> None:
    """Cut-offs are integers >= 1 and integer parameters (``rel``) fit in 32 bits, as
    trec_eval needs: pytrec_eval aborts the interpreter on ``@0`` and raises on a larger ``rel``."""
    for key, v in params.items():
        if key == "cutoff" and v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise ParameterError(f"measure {name!r}: the cut-off must be an integer >= 1, got {v!r}",
                                 parameter="measures")
        if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2 ** 31 - 1:
            raise ParameterError(f"measure {name!r}: {key}={v} is out of range (at most {2 ** 31 - 1} "
                                 "in absolute value)", parameter="measures")


def _order(q: np.ndarray, d: np.ndarray, score: np.ndarray, ties: str) -> np.ndarray:
    """Permutation sorting rows by topic, score descending, ties by document id
    descending (code-point order of the id, as trec_eval's strcmp) or file order."""
    qc, _ = pd.factorize(q)
    order = np.lexsort((-score, qc))  # stable: equal keys keep file order
    if ties == "file" or len(order) < 2:
        return order
    qs, ss = qc[order], score[order]
    tie = (qs[1:] == qs[:-1]) & (ss[1:] == ss[:-1])
    if not tie.any():
        return order
    gid = np.cumsum(np.r_[True, ~tie]) - 1
    in_tie = np.zeros(len(order), dtype=bool)
    in_tie[1:] |= tie
    in_tie[:-1] |= tie
    idx = np.flatnonzero(in_tie)
    docs = np.asarray(d[order[idx]], dtype=str)  # numpy unicode compares by code point
    _, inv = np.unique(docs, return_inverse=True)
    sub = np.lexsort((-inv.reshape(-1), gid[idx]))
    order[idx] = order[idx][sub]
    return order


def rank_frame(run: Run, *, ties: str = "trec_eval"):
    """The run's frame sorted by topic, then score descending, ties by document id
    descending (``"trec_eval"``) or file order (``"file"``), with a 0-based ``rank``
    column within each topic."""
    check_choice(ties, ("trec_eval", "file"), "ties", quote=True)
    df = run.frame
    q = df["query_id"].to_numpy(dtype=object)
    order = _order(q, df["doc_id"].to_numpy(dtype=object), df["score"].to_numpy(dtype=np.float64), ties)
    out = df.iloc[order].reset_index(drop=True)
    qs = q[order]
    n = len(qs)
    if n:
        start = np.r_[True, qs[1:] != qs[:-1]]
        first = np.flatnonzero(start)
        seg = np.cumsum(start) - 1
        out["rank"] = np.arange(n) - first[seg]
    else:
        out["rank"] = np.zeros(0, dtype=np.int64)
    return out


def _grades(q: np.ndarray, d: np.ndarray, qrels: Qrels) -> np.ndarray:
    """Grade of each (topic, doc) row from the qrels; -1 when unjudged."""
    qf = qrels.cached_frame()
    nq = len(q)
    qc, _ = pd.factorize(np.concatenate([q, qf["query_id"].to_numpy(dtype=object)]))
    dc, duni = pd.factorize(np.concatenate([d, qf["doc_id"].to_numpy(dtype=object)]))
    key = qc.astype(np.int64) * (len(duni) + 1) + dc
    pos = pd.Index(key[nq:]).get_indexer(key[:nq])
    g = qf["relevance"].to_numpy(dtype=np.int64)
    return np.where(pos >= 0, g[np.maximum(pos, 0)], -1)


# ------------------------------------------------------------------- RBP
#: ranks RBP is summed over without a cut-off (as cwl_eval)
RBP_DEPTH = 1000


def _rbp(run: Run, qrels: Qrels, *, rel: int, p: float, ties: str, depth: int = RBP_DEPTH) -> dict[str, float]:
    df = rank_frame(run, ties=ties)
    df = df[df["rank"].to_numpy() < depth]
    q = df["query_id"].to_numpy(dtype=object)
    hit = _grades(q, df["doc_id"].to_numpy(dtype=object), qrels) >= rel
    w = (1.0 - p) * np.power(p, df["rank"].to_numpy(dtype=np.float64))
    sums = pd.Series(np.where(hit, w, 0.0)).groupby(q, sort=False).sum()
    return {str(t): float(v) for t, v in sums.items() if t in qrels}


def _rbp_params(m) -> tuple[int, float, int]:
    """``(rel, p, depth)``: depth is the cut-off (``RBP(...)@k``), at most 1000."""
    rel = m.params.get("rel")
    p = m.params.get("p")
    rel = 1 if rel is None else rel
    p = 0.8 if p is None else p
    if not isinstance(rel, (int, np.integer)) or not isinstance(p, (int, float)) or not 0 < p < 1:
        raise ParameterError(f"RBP needs an integer rel and 0 < p < 1, got {m}", parameter="measures")
    cutoff = m.params.get("cutoff")
    return int(rel), float(p), RBP_DEPTH if cutoff is None else min(int(cutoff), RBP_DEPTH)


def _is_rbp(m) -> bool:
    return getattr(m, "NAME", None) == "RBP"


# ----------------------------------------------------------------- scoring
def score_runs(runs, qrels, measures, *, missing_topic: str = "zero", duplicates: str = "error",
               select_runs=None, ties: str = "trec_eval", warn: bool = True,
               progress: Progress = False) -> dict[str, ScoreMatrix]:
    """Score runs against qrels: ``{measure: ScoreMatrix}`` (systems x qrels topics).

    Parameters
    ----------
    runs : str or os.PathLike or Mapping or iterable of Run or object
        A folder of run files, one run file, a mapping ``name -> Run | path |
        {topic: {doc: score}}``, or an iterable of :class:`Run`; or another tool's
        runs: a ranx ``Run``, a trectools ``TrecRun``, a pandas frame (``query_id,
        doc_id, score`` [, ``run``]), ir_measures/ir_datasets records, a pytrec_eval
        ``{topic: {doc: score}}`` (:mod:`planner.collection.interop`).
    qrels : str or os.PathLike or Qrels or Mapping or object
        A qrels path or text, a :class:`Qrels` / ``{topic: {doc: grade}}``, or
        anything :func:`planner.read_qrels` accepts (ranx, trectools, pandas,
        ir_measures/ir_datasets records, ``"irds:<id>"``).
    measures : str or list of str
        ir_measures measure strings; the result is keyed by the strings as given.
    missing_topic : str
        What a qrels topic a run lacks scores: ``"zero"`` (default, trec_eval ``-c``),
        or a ScoreMatrix missing-cell policy (``"error"``, ``"drop-topic"``,
        ``"drop-system"``, ``"keep"``).
    duplicates : {"error", "first"}
        For reading run files: a repeated ``(topic, doc)`` pair is an error, or its first line
        is kept (the lines dropped are counted per run).
    select_runs : str or list of str, optional
        Run names or glob patterns (``"bm25*"``): only the runs whose name matches one are
        read and scored (:func:`~planner.collection.match_runs`); default all.
    ties : {"trec_eval", "file"}
        Tie order for RBP (module docstring); the ir_measures measures always use
        trec_eval's order.
    warn : bool
        Warn about cells filled with 0 and degenerate matrices.
    progress : bool or "auto", optional
        A bar over the runs read and scored (:mod:`planner.progress`); default none.

    Returns
    -------
    dict of str to ScoreMatrix
        Topics are the qrels topics (sorted as strings), systems in the order given
        (folders: file-name order). ``ScoreMatrix.meta["report"]`` holds, per run,
        ``filled`` (qrels topics the run lacks), ``dropped`` (run topics the qrels lack) and
        ``duplicates`` (repeated lines dropped); ``meta["read"]`` is the
        :class:`~planner.collection.RunsRead` of a folder (empty files skipped, pairs dropped,
        tags that disagree), said once per kind as a warning.

    Raises
    ------
    InputError
        When no run shares a topic with the qrels.

    Examples
    --------
    >>> runs = {"a": {"101": {"d1": 2.0, "d2": 1.0}, "102": {"d3": 1.0}},
    ...         "b": {"101": {"d2": 2.0, "d1": 1.0}, "102": {"d3": 1.0}}}
    >>> qrels = {"101": {"d1": 1, "d2": 0}, "102": {"d3": 1}}
    >>> m = score_runs(runs, qrels, "RR")["RR"]
    >>> m.values.tolist()
    [[1.0, 1.0], [0.5, 1.0]]
    """
    check_choice(missing_topic, MISSING_POLICIES, "missing_topic", noun="policy")
    parsed = parse_measures(measures)
    qrels = read_qrels(qrels)
    names, get_run, record = lazy_runs(runs, duplicates=duplicates, select_runs=select_runs, warn=warn)
    topics = sorted(qrels)
    native = {k: m for k, m in parsed.items() if _is_rbp(m)}
    scorer = _Scorer(qrels, topics, {k: m for k, m in parsed.items() if k not in native}, native, ties)
    vals = {k: np.full((len(names), len(topics)), np.nan) for k in parsed}
    report: dict[str, dict] = {}
    with bar(progress, len(names), "runs scored") as tick:
        for i, name in enumerate(names):
            run = get_run(name)
            report[name] = {**scorer.score(run, vals, i), "duplicates": run.dropped_pairs}
            tick()
    read = record()
    if read is not None and warn:
        read.warn(stacklevel=2)
    if not any(r["common"] for r in report.values()):
        src = getattr(qrels, "source", None)
        raise InputError("runs and qrels have no topic in common (qrels topics: "
                         + ", ".join(topics[:5]) + ("..." if len(topics) > 5 else "") + ")", file=src)
    for r in report.values():
        del r["common"]
    scorer.zero_unscored(vals, names, report)
    n_filled = sum(len(r["filled"]) for r in report.values())
    if warn and n_filled and missing_topic == "zero":
        worst = [n for n in names if report[n]["filled"]]
        warnings.warn(collapse(None, f"{n_filled} (run, topic) cells scored 0 because the run lacks a judged "
                                     f"topic, in {plural(len(worst), 'run')}", worst),
                      PlannerWarning, stacklevel=2)
    meta = {"report": report, "n_filled": n_filled, "n_dropped": sum(len(r["dropped"]) for r in report.values()),
            "qrels": getattr(qrels, "source", None), "read": read}
    source = str(runs) if isinstance(runs, (str, os.PathLike)) else None
    out = {}
    for k in parsed:
        m = ScoreMatrix.build(vals[k], names, topics, measure=k, missing=missing_topic,
                              source=source, warn=warn)
        out[k] = replace(m, meta=meta)
    return out


class _Scorer:
    """Scores one run at a time into the rows of per-measure arrays: the ir_measures
    measures through one evaluator, RBP (``native``) here."""

    def __init__(self, qrels: Qrels, topics: list[str], irm: dict[str, Any], native: dict[str, Any],
                 ties: str) -> None:
        self.qrels, self.topics, self.irm, self.native, self.ties = qrels, topics, irm, native, ties
        self.tpos = {t: j for j, t in enumerate(topics)}
        self.evaluator = _evaluator(irm, qrels) if irm else None
        self.keys_of: dict[Any, list[str]] = {}
        for k, m in irm.items():
            self.keys_of.setdefault(m, []).append(k)

    def score(self, run: Run, vals: dict[str, np.ndarray], i: int) -> dict:
        """Fill row ``i`` of ``vals`` with ``run``'s scores; its report (``filled``,
        ``dropped``, and ``common``: whether it shares a topic with the qrels)."""
        run_topics = set(run.frame["query_id"].unique().tolist())
        common = run_topics & set(self.topics)
        report = {"filled": sorted(set(self.topics) - run_topics),
                  "dropped": sorted(run_topics - set(self.topics)), "common": bool(common)}
        if not common:
            return report
        if self.evaluator is not None:
            topic_docs = run.topics
            for metric in self.evaluator.iter_calc({t: topic_docs[t] for t in common}):
                qid = str(metric.query_id)
                if qid not in common:  # ir_measures yields 0 for qrels topics the run lacks
                    continue
                for k in self.keys_of.get(metric.measure, ()):
                    vals[k][i, self.tpos[qid]] = metric.value
        for k, m in self.native.items():
            rel, p, depth = _rbp_params(m)
            for t, v in _rbp(run, self.qrels, rel=rel, p=p, ties=self.ties, depth=depth).items():
                vals[k][i, self.tpos[t]] = v
            # a run that retrieves nothing relevant for a topic it has scores 0
            for t in common:
                if np.isnan(vals[k][i, self.tpos[t]]):
                    vals[k][i, self.tpos[t]] = 0.0
        return report

    def zero_unscored(self, vals: dict[str, np.ndarray], names: list[str], report: dict) -> None:
        """ir_measures measures: a topic the run has but with no output (no relevant docs
        etc.) is 0."""
        for k in self.irm:
            for i, name in enumerate(names):
                missing_cols = set(report[name]["filled"])
                for j, t in enumerate(self.topics):
                    if np.isnan(vals[k][i, j]) and t not in missing_cols:
                        vals[k][i, j] = 0.0


def _evaluator(irm: dict[str, Any], qrels: Qrels):
    """One ir_measures evaluator for the measures ``irm`` (ParameterError when it refuses them)."""
    import ir_measures  # heavy (pytrec_eval): imported when runs are scored

    try:
        return ir_measures.evaluator(list(dict.fromkeys(irm.values())), dict(qrels))
    except ValueError as exc:
        raise ParameterError(f"cannot compute {', '.join(irm)}: {str(exc).splitlines()[0]}",
                             parameter="measures") from None


# ------------------------------------------------------------------ pools
@dataclass(frozen=True, repr=False, eq=False)
class PoolStats(ResultMixin):
    """Pool statistics at several depths.

    Attributes:
        depths: the depths k.
        pool_runs: names of the runs whose top k form the pool.
        topics: pandas DataFrame, one row per (depth, topic): ``depth``, ``topic``,
            ``pool_size`` (distinct documents in the union of the pool runs' top k),
            ``judged`` (how many of them the qrels judge), ``relevant`` (judged with
            grade >= 1), ``unjudged`` (pool_size - judged).
        runs: pandas DataFrame, one row per (depth, run): ``depth``, ``run``,
            ``in_pool`` (bool), ``judged_share`` (mean over the run's judged topics
            of judged / min(k, retrieved)), ``judged_share_min`` (worst topic),
            ``n_topics``.
        per_run_topic: pandas DataFrame (depth, run, topic, retrieved, judged,
            judged_share) behind ``runs``.
        qrels_judgments: number of judgments in the qrels (all depths).
        read: what reading a folder of runs skipped or changed
            (:class:`~planner.collection.RunsRead`; None for runs given already read).
    """

    _repr_fields = ('depths', 'pool_runs', 'topics', 'runs')

    depths: tuple[int, ...]
    pool_runs: tuple[str, ...]
    topics: pd.DataFrame
    runs: pd.DataFrame
    per_run_topic: pd.DataFrame | None = field(repr=False, default=None)
    qrels_judgments: int = 0
    read: RunsRead | None = None

    def summary(self):
        """One row per depth: mean and total pool size and judged counts over topics, the
        share of the pool that is judged (``pool_judged_share = judged_total / pool_size_total``,
        the quantity pool-depth studies report), and the mean over ALL runs (pool runs or not)
        of each run's judged share of its own top k (``run_judged_share_mean``; named
        ``judged_share_mean`` before 2026-11-30)."""
        g = self.topics.groupby("depth")
        df = g.agg(pool_size_mean=("pool_size", "mean"), pool_size_total=("pool_size", "sum"),
                   judged_mean=("judged", "mean"), judged_total=("judged", "sum")).reset_index()
        tot = df["pool_size_total"].to_numpy(dtype=float)
        df["pool_judged_share"] = np.divide(df["judged_total"].to_numpy(dtype=float), tot,
                                            out=np.full(tot.shape, np.nan), where=tot > 0)
        share = self.runs.groupby("depth")["judged_share"].mean().rename("run_judged_share_mean")
        return df.merge(share.reset_index(), on="depth")

    def to_frame(self, kind: str = "topics"):
        """``kind``: ``"topics"`` (default), ``"runs"``, ``"run_topics"`` or ``"summary"``."""
        frames = {"topics": self.topics, "runs": self.runs, "run_topics": self.per_run_topic,
                  "summary": None}
        check_choice(kind, tuple(frames), "kind")
        frame = self.summary() if kind == "summary" else frames[kind]
        return pd.DataFrame() if frame is None else frame.copy()

    def to_dict(self) -> dict:
        def recs(df):
            return [{k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()}
                    for r in df.to_dict(orient="records")]

        return {"depths": list(self.depths), "pool_runs": list(self.pool_runs),
                "qrels_judgments": int(self.qrels_judgments),
                "summary": recs(self.summary()), "topics": recs(self.topics), "runs": recs(self.runs),
                "read": None if self.read is None else self.read.to_dict()}


def _ranked_all(names: Sequence[str], get_run, topics: set[str], max_depth: int, progress: Progress = False):
    """Top ``max_depth`` of every run on the given topics (trec_eval order), one
    frame (run, query_id, doc_id, rank); runs are read one at a time."""
    parts = []
    with bar(progress, len(names), "runs read") as tick:
        for name in names:
            df = rank_frame(get_run(name))
            keep = (df["rank"].to_numpy() < max_depth) & df["query_id"].isin(topics).to_numpy()
            df = df[keep].assign(run=name)
            parts.append(df[["run", "query_id", "doc_id", "rank"]])
            tick()
    return pd.concat(parts, ignore_index=True)


def _check_depths(depths) -> tuple[int, ...]:
    if isinstance(depths, (int, np.integer)):
        depths = [depths]
    try:
        out = tuple(int(d) for d in depths)
    except (TypeError, ValueError):
        raise ParameterError(f"expected integers, got {depths!r}", parameter="depths") from None
    if not out or any(d < 1 for d in out):
        raise ParameterError(f"depths must be >= 1, got {list(out)}", parameter="depths")
    return tuple(sorted(set(out)))


def pool_names(run_map, pool_runs) -> list[str]:
    """The runs that form the pool: ``pool_runs`` (checked against ``run_map``) or every run."""
    if pool_runs is None:
        return list(run_map)
    names = [str(n) for n in pool_runs]
    unknown = [n for n in names if n not in run_map]
    if unknown:
        raise ParameterError(f"unknown run {unknown[0]!r}", parameter="pool_runs")
    if not names:
        raise ParameterError("empty list of pool runs", parameter="pool_runs")
    return names


def pool_stats(runs, qrels, *, depths=(10, 20, 50, 100), pool_runs: Sequence[str] | None = None,
               duplicates: str = "error", select_runs=None, progress: Progress = False) -> PoolStats:
    """Pool statistics (module docstring) at each depth in ``depths``.

    Parameters
    ----------
    runs
        As for :func:`score_runs`.
    qrels
        As for :func:`score_runs`; only qrels topics are counted.
    depths : int or iterable of int
        Pool depths ``k >= 1``.
    pool_runs : sequence of str, optional
        Names of the runs that form the pool (default all).
    duplicates, select_runs, progress
        As for :func:`score_runs` (the bar counts the runs read).

    Returns
    -------
    PoolStats

    Examples
    --------
    >>> runs = {"a": {"101": {"d1": 2.0, "d2": 1.0}}, "b": {"101": {"d3": 2.0, "d1": 1.0}}}
    >>> ps = pool_stats(runs, {"101": {"d1": 1, "d3": 0}}, depths=[1, 2])
    >>> ps.summary()[["depth", "pool_size_total", "judged_total"]].values.tolist()
    [[1, 2, 2], [2, 3, 2]]
    """
    depths = _check_depths(depths)
    qrels = read_qrels(qrels)
    all_names, get_run, record = lazy_runs(runs, duplicates=duplicates, select_runs=select_runs)
    names = pool_names(all_names, pool_runs)
    topics = set(qrels)
    allr = _ranked_all(all_names, get_run, topics, max(depths), progress)
    read = record()
    if read is not None:
        read.warn(stacklevel=2)
    if allr.empty:
        raise InputError("runs and qrels have no topic in common", file=getattr(qrels, "source", None))
    g = _grades(allr["query_id"].to_numpy(dtype=object), allr["doc_id"].to_numpy(dtype=object), qrels)
    allr["judged"] = g >= 0
    allr["relevant"] = g >= 1
    check_depth_work(lambda rows_at: pool_work(rows_at, len(allr), len(all_names), len(topics)),
                     allr["rank"].to_numpy(), depths, what=f"pool statistics of {len(all_names):,} runs")
    in_pool = allr["run"].isin(names).to_numpy()
    topic_rows: list[dict] = []
    run_rows: list[dict] = []
    rt_rows = []
    for k in depths:
        at_k = allr["rank"].to_numpy() < k
        topic_rows += _pool_topics(allr[at_k & in_pool], sorted(topics), k)
        rt = _run_topic_shares(allr[at_k], k)
        rt_rows.append(rt.rename(columns={"query_id": "topic"}))
        run_rows += _run_shares(rt, all_names, names, k)
    return PoolStats(depths=depths, pool_runs=tuple(names), topics=pd.DataFrame(topic_rows),
                     runs=pd.DataFrame(run_rows), per_run_topic=pd.concat(rt_rows, ignore_index=True),
                     qrels_judgments=qrels.n_judgments, read=read)


def pool_work(rows_at: Sequence[int], rows: int, runs: int, topics: int) -> Work:
    """The work and memory of :func:`pool_stats` over depths whose pools hold ``rows_at`` ranked
    documents (each run's, each topic's), of ``rows`` ranked to the deepest, for ``runs`` runs and
    ``topics`` topics (:mod:`planner.simulate.work`): about 0.7 us of CPU a document within a depth,
    0.1 ms a run and a topic, 25 ms a depth; kept: ``200 runs topics + 700 (runs + topics)`` bytes a
    depth (measured in docs/research/known-limits.md).

    Examples
    --------
    >>> pool_work([100, 1000], 1000, runs=10, topics=10).held
    68000
    """
    D = len(rows_at)
    units = D * (1.6e6 + 6.3e3 * (runs + topics) + 0.25 * rows) + 45.0 * float(np.sum(rows_at))
    return Work(units, D * (200 * runs * topics + 700 * (runs + topics)))


def check_depth_work(cost, ranks: np.ndarray, depths: Sequence[int], *, what: str) -> None:
    """Refuse, before the first depth, pool ``depths`` (sorted) whose ``cost(rows_at)`` is over the
    work limits (:func:`planner.simulate.work.check_fits`), ``rows_at`` being the ranked documents
    (0-based ``ranks``) within each depth: a ParameterError naming ``depths``, with the most of the
    shallowest depths that fit."""
    check_rows_work(cost, np.searchsorted(np.sort(ranks), np.asarray(depths), side="left"), depths, what=what)


def check_rows_work(cost, rows_at: np.ndarray, depths: Sequence[int], *, what: str, also: Sequence[str] = ()) -> None:
    """:func:`check_depth_work` with the ranked documents within each depth, ``rows_at``, given
    (counted without ranking the runs: :func:`planner.plan.pool.ranked_lines`); ``also``: more
    remedies."""
    whole = cost(rows_at)
    if fits(whole):
        return
    m = largest_fitting(lambda i: cost(rows_at[:i]), len(depths) - 1, lo=1)
    fixes = [f"the first {m:,} of these depths (up to {depths[m - 1]:,})"] if m else []
    check_fits(whole, what=f"{what} at {len(depths):,} depths (up to {depths[-1]:,})", parameter="depths",
               fixes=[*fixes, "fewer depths", *also])


def _pool_topics(pooled: pd.DataFrame, topics: list[str], k: int) -> list[dict]:
    """One row a topic at depth ``k``: pool size, judged, relevant, unjudged."""
    pool = pooled.drop_duplicates(["query_id", "doc_id"])
    g = pool.groupby("query_id").agg(pool_size=("doc_id", "size"), judged=("judged", "sum"),
                                     relevant=("relevant", "sum"))
    g = g.reindex(topics, fill_value=0)
    return [{"depth": k, "topic": t, "pool_size": int(r["pool_size"]), "judged": int(r["judged"]),
             "relevant": int(r["relevant"]), "unjudged": int(r["pool_size"] - r["judged"])}
            for t, r in g.iterrows()]


def _run_topic_shares(top: pd.DataFrame, k: int) -> pd.DataFrame:
    """One row a (run, topic) at depth ``k``: retrieved, judged, judged share."""
    rt = top.groupby(["run", "query_id"], sort=False).agg(retrieved=("doc_id", "size"),
                                                          judged=("judged", "sum")).reset_index()
    rt["judged_share"] = rt["judged"] / rt["retrieved"]
    rt.insert(0, "depth", k)
    return rt


def _run_shares(rt: pd.DataFrame, all_names: list[str], pool_names: list[str], k: int) -> list[dict]:
    """One row a run at depth ``k``: mean and worst judged share over its topics."""
    agg = rt.groupby("run", sort=False)["judged_share"].agg(["mean", "min", "size"])
    rows = []
    for name in all_names:
        if name in agg.index:
            a = agg.loc[name]
            rows.append({"depth": k, "run": name, "in_pool": name in pool_names,
                         "judged_share": float(a["mean"]), "judged_share_min": float(a["min"]),
                         "n_topics": int(a["size"])})
        else:
            rows.append({"depth": k, "run": name, "in_pool": name in pool_names,
                         "judged_share": float("nan"), "judged_share_min": float("nan"), "n_topics": 0})
    return rows


def restrict_qrels(qrels, runs, *, depth: int, pool_runs: Sequence[str] | None = None,
                   duplicates: str = "error", select_runs=None) -> Qrels:
    """Judgments restricted to the depth-``depth`` pool of ``pool_runs`` (default all
    runs): a judgment is kept when its document is in the union of the pool runs'
    top ``depth`` for its topic (trec_eval order). Re-scoring with the result treats
    every other document as non-relevant, as a shallower pool would have. ``duplicates`` and
    ``select_runs`` as for :func:`score_runs`.

    Examples
    --------
    >>> from planner.collection import Qrels
    >>> qrels = Qrels({"1": {"d1": 1, "d2": 1, "d3": 0}})
    >>> runs = {"a": {"1": {"d1": 2.0, "d3": 1.0}}, "b": {"1": {"d2": 0.5}}}
    >>> dict(restrict_qrels(qrels, runs, depth=1))
    {'1': {'d1': 1, 'd2': 1}}
    """
    (depth,) = _check_depths([depth]) if not isinstance(depth, (list, tuple)) else (None,)
    if depth is None:
        raise ParameterError("one depth expected", parameter="depth")
    qrels = read_qrels(qrels)
    all_names, get_run, record = lazy_runs(runs, duplicates=duplicates, select_runs=select_runs)
    names = pool_names(all_names, pool_runs)
    allr = _ranked_all(names, get_run, set(qrels), depth)
    read = record()
    if read is not None:
        read.warn(stacklevel=2)
    top = allr[allr["rank"] < depth]
    pooled: dict[str, set[str]] = {}
    for t, d in zip(top["query_id"].tolist(), top["doc_id"].tolist()):
        pooled.setdefault(t, set()).add(d)
    out = {t: {d: g for d, g in docs.items() if d in pooled.get(t, ())} for t, docs in qrels.items()}
    q = Qrels(out, source=getattr(qrels, "source", None))
    return q
