"""Runs and qrels from the tools IR users already have.

This module is the one place that turns another tool's objects into planner's
inputs; :func:`planner.score_runs`, :func:`planner.pool_stats`,
:func:`planner.read_qrels` and every function that takes runs or qrels call it
first. Accepted (:data:`RUN_FORMS`, :data:`QRELS_FORMS`):

- ranx ``Run`` and ``Qrels`` (their ``to_dict()``; a Run's ``name`` names it);
- ir_measures and ir_datasets records: an iterable of namedtuples with
  ``query_id, doc_id, score`` is a run (``ir_measures.read_trec_run``,
  ``dataset.scoreddocs_iter()``), one with ``query_id, doc_id, relevance`` qrels
  (``ir_measures.read_trec_qrels``, ``dataset.qrels_iter()``);
- an ir_datasets data set, or its id as ``"irds:<id>"``: its qrels, when
  ir_datasets is installed (``pip install 'planner[irds]'``) and the qrels are on
  disk; planner never downloads, and says how to when they are not;
- pandas frames: a query column (:data:`QUERY_COLUMNS`), a document column
  (:data:`DOC_COLUMNS`) and ``score`` for a run or a relevance column
  (:data:`RELEVANCE_COLUMNS`) for qrels; a run frame with a run column
  (:data:`RUN_COLUMNS`) holds one run per value;
- trectools ``TrecRun`` and ``TrecQrel`` (their ``run_data``/``qrels_data`` frames);
- pytrec_eval dicts: ``{query: {doc: score}}`` is one run (named ``run``),
  ``{query: {doc: grade}}`` qrels.

Ids become strings; scores must be finite numbers and grades integers. A
repeated (query, document) pair in a run is an error unless
``duplicates="first"``, as in a run file.

Examples
--------
>>> import pandas as pd
>>> frame = pd.DataFrame({"qid": ["1", "1"], "docno": ["d1", "d2"], "score": [2.0, 1.0]})
>>> native_runs(frame)
{'run': Run('run': 2 lines, 1 topics)}
>>> native_runs({"1": {"d1": 2.0}})          # a pytrec_eval run
{'run': Run('run': 1 lines, 1 topics)}
>>> qrels_mapping(pd.DataFrame({"query_id": [1], "doc_id": ["d1"], "rel": [2]}))
({'1': {'d1': 2}}, None)
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd

from .._checks import CONTROL, check_choice, check_printable
from ..errors import InputError, ParameterError
from .runs import Run

__all__ = [
    "DOC_COLUMNS",
    "IRDS_PREFIX",
    "QRELS_FORMS",
    "QUERY_COLUMNS",
    "RELEVANCE_COLUMNS",
    "RUN_COLUMNS",
    "RUN_FORMS",
    "native_runs",
    "not_accepted",
    "qrels_mapping",
    "run_from",
]

#: column names of the query id, first match wins (ir_measures, PyTerrier, ranx, trectools)
QUERY_COLUMNS = ("query_id", "qid", "q_id", "query", "topic")
#: column names of the document id
DOC_COLUMNS = ("doc_id", "docno", "docid", "doc")
#: column names of a grade
RELEVANCE_COLUMNS = ("relevance", "rel", "label", "grade")
#: column names that name the run of each row of a run frame (trectools: ``system``)
RUN_COLUMNS = ("run", "system", "run_id", "runid")
#: prefix of an ir_datasets id given as qrels
IRDS_PREFIX = "irds:"

RUN_FORMS = (
    "a folder of run files or a run file",
    "a planner Run",
    "a ranx Run",
    "a trectools TrecRun",
    "a pandas DataFrame with columns query_id, doc_id, score (and run for several runs)",
    "an iterable of (query_id, doc_id, score) records (ir_measures, ir_datasets scoreddocs)",
    "a pytrec_eval dict {query: {doc: score}}",
    "a mapping {run name: any of these} or a list of them",
)
QRELS_FORMS = (
    "a qrels file or its text",
    "a planner Qrels or a dict {query: {doc: grade}} (pytrec_eval)",
    "a ranx Qrels",
    "a trectools TrecQrel",
    "a pandas DataFrame with columns query_id, doc_id, relevance",
    "an iterable of (query_id, doc_id, relevance) records (ir_measures, ir_datasets qrels_iter())",
    f"an ir_datasets data set or '{IRDS_PREFIX}<id>'",
)


def describe(obj: object) -> str:
    """The type of ``obj`` as a user knows it: ``dict``, ``ranx.Run``, ``pandas.DataFrame``."""
    t = type(obj)
    top = t.__module__.split(".")[0]
    return t.__qualname__ if top == "builtins" else f"{top}.{t.__qualname__}"


def not_accepted(obj: object, kind: str, parameter: str, *, what: str = "") -> ParameterError:
    """The error for an object that is none of the accepted forms of ``kind`` (runs or qrels)."""
    forms = RUN_FORMS if kind == "runs" else QRELS_FORMS
    return ParameterError(f"{what}got {describe(obj)}; {kind} may be " + "; ".join(forms),
                          parameter=parameter)


def _from(obj: object, package: str, name: str) -> bool:
    """True when ``obj`` is the class ``name`` of ``package`` (without importing the package)."""
    t = type(obj)
    return t.__module__.split(".")[0] == package and t.__name__ == name


def _is_record(item: object, field: str) -> bool:
    return hasattr(item, "query_id") and hasattr(item, "doc_id") and hasattr(item, field)


def _is_nested(obj: object) -> bool:
    """True for a non-empty ``{query: {doc: number}}`` (pytrec_eval's form)."""
    if not isinstance(obj, Mapping) or not obj:
        return False
    return all(isinstance(v, Mapping) and all(isinstance(x, (Real, np.number)) for x in v.values())
               for v in obj.values())


def _column(df: pd.DataFrame, names: tuple[str, ...]) -> Any:
    """The first column of ``df`` named one of ``names`` (any case), or None."""
    by_lower = {str(c).lower(): c for c in df.columns}
    return next((by_lower[n] for n in names if n in by_lower), None)


# -------------------------------------------------------------------- runs
def _ids(values: Any, what: str, parameter: str) -> np.ndarray:
    """Ids as an object array of str; a missing or control-character id is an error."""
    s = pd.Series(values, dtype=object)
    if s.isna().any():
        raise ParameterError(f"{what} missing in row {int(np.flatnonzero(s.isna().to_numpy())[0]) + 1}",
                             parameter=parameter)
    s = s.astype(str)
    bad = s.str.contains(CONTROL.pattern, regex=True)
    if bad.any():
        check_printable(s[bad].iloc[0], parameter, what=what)
    return s.to_numpy(dtype=object)


def _run(name: str, q: Any, d: Any, s: Any, duplicates: str, parameter: str = "runs") -> Run:
    """A Run from three columns, checked as a run file is: ids printable, scores finite
    numbers, a repeated (query, document) pair an error unless ``duplicates="first"``."""
    where = f"run {name!r}: "
    frame = pd.DataFrame({"query_id": _ids(q, where + "query id", parameter),
                          "doc_id": _ids(d, where + "document id", parameter)})
    score = pd.to_numeric(pd.Series(s), errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(score)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ParameterError(f"{where}score of document {frame['doc_id'].iat[i]!r} for query "
                             f"{frame['query_id'].iat[i]!r} must be a finite number, got {list(s)[i]!r}",
                             parameter=parameter)
    frame["score"] = score
    dup = frame.duplicated(subset=["query_id", "doc_id"], keep="first").to_numpy()
    if dup.any():
        if duplicates == "error":
            r = frame.iloc[int(np.flatnonzero(dup)[0])]
            raise ParameterError(f"{where}document {r['doc_id']!r} repeated for query {r['query_id']!r} "
                                 "(duplicates='first' keeps the first occurrence)", parameter=parameter)
        frame = frame[~dup].reset_index(drop=True)
    return Run(name=name, frame=frame)


def _nested_run(name: str, runs: Mapping, duplicates: str) -> Run:
    """A Run from ``{query: {doc: score}}``."""
    odd = next((t for t, docs in runs.items() if not isinstance(docs, Mapping)), None)
    if odd is not None:
        raise ParameterError(f"run {name!r}: expected {{query: {{doc: score}}}}, found query {odd!r} "
                             f"mapped to {describe(runs[odd])}", parameter="runs")
    rows = [(t, d, s) for t, docs in runs.items() for d, s in docs.items()]
    q, d, s = zip(*rows) if rows else ((), (), ())
    return _run(name, q, d, s, duplicates)


def frame_runs(df: pd.DataFrame, *, duplicates: str = "error") -> dict[str, Run]:
    """``{name: Run}`` from a run frame: one run per value of its run column
    (:data:`RUN_COLUMNS`), else one run named ``run``."""
    cols = [_column(df, QUERY_COLUMNS), _column(df, DOC_COLUMNS), _column(df, ("score",))]
    if any(c is None for c in cols):
        raise ParameterError(f"a run frame needs columns query_id (or {', '.join(QUERY_COLUMNS[1:])}), "
                             f"doc_id (or {', '.join(DOC_COLUMNS[1:])}) and score; found "
                             + ", ".join(map(str, df.columns)), parameter="runs")
    qc, dc, sc = cols
    by = _column(df, RUN_COLUMNS)
    if by is None:
        return {"run": _run("run", df[qc], df[dc], df[sc], duplicates)}
    return {str(k): _run(str(k), g[qc], g[dc], g[sc], duplicates)
            for k, g in df.groupby(by, sort=False)}


def _records_run(name: str, records: Iterable, duplicates: str) -> Run:
    q, d, s = [], [], []
    for r in records:
        if not _is_record(r, "score"):
            raise ParameterError(f"run {name!r}: a record without query_id, doc_id, score: {r!r}",
                                 parameter="runs")
        q.append(r.query_id)
        d.append(r.doc_id)
        s.append(r.score)
    return _run(name, q, d, s, duplicates)


def _single(frame_map: dict[str, Run], name: str) -> Run:
    if len(frame_map) != 1:
        raise ParameterError(f"run {name!r}: the frame holds {len(frame_map)} runs; give it as runs "
                             "itself, not as one run of a mapping", parameter="runs")
    run = next(iter(frame_map.values()))
    return run if run.name == name else Run(name=name, frame=run.frame)


def run_from(obj: object, name: str | None = None, *, duplicates: str = "error",
             fallback: str = "run") -> Run | None:
    """One run from another tool's object (ranx Run, trectools TrecRun, a one-run frame,
    records, ``{query: {doc: score}}``), named ``name`` or its own name or ``fallback``;
    ``None`` when ``obj`` is none of them (a path, a planner Run, ...)."""
    if _from(obj, "ranx", "Run"):
        own = getattr(obj, "name", None)
        return _nested_run(name or own or fallback, obj.to_dict(), duplicates)  # type: ignore[attr-defined]
    if _from(obj, "trectools", "TrecRun"):
        obj = obj.run_data  # type: ignore[attr-defined]
    if isinstance(obj, pd.DataFrame):
        runs = frame_runs(obj, duplicates=duplicates)
        own = next(iter(runs))
        return _single(runs, name or (fallback if own == "run" else own))
    if _is_nested(obj):
        return _nested_run(name or fallback, obj, duplicates)  # type: ignore[arg-type]
    if isinstance(obj, (list, tuple)) and obj and _is_record(obj[0], "score"):
        return _records_run(name or fallback, obj, duplicates)
    return None


def native_runs(runs: Any, *, duplicates: str = "error") -> Any:
    """``runs`` in planner's own forms: another tool's run becomes a :class:`Run`, a frame
    or pytrec_eval dict ``{name: Run}``, and the values of a mapping or items of a list
    are converted the same way; paths and planner Runs are returned as they are."""
    check_choice(duplicates, ("error", "first"), "duplicates", quote=True)
    if isinstance(runs, (str, bytes, os.PathLike, Run)):
        return runs
    if isinstance(runs, pd.DataFrame) or _from(runs, "trectools", "TrecRun"):
        return frame_runs(getattr(runs, "run_data", runs), duplicates=duplicates)
    if _is_nested(runs):
        return {"run": _nested_run("run", runs, duplicates)}
    if isinstance(runs, Mapping):
        return {str(k): _item(v, str(k), duplicates, what=f"run {k!r}: ") for k, v in runs.items()}
    if isinstance(runs, Iterator):  # a generator is read once
        runs = list(runs)
    single = run_from(runs, duplicates=duplicates)
    if single is not None:
        return single
    if isinstance(runs, Iterable):
        items = list(runs)
        return [_item(r, None, duplicates, what=f"item {i + 1}: ", fallback=f"run{i + 1}")
                for i, r in enumerate(items)]
    return runs


def _item(obj: object, name: str | None, duplicates: str, *, what: str, fallback: str = "run") -> Any:
    """One run of a mapping or list: a path or Run as it is, another tool's run converted."""
    if isinstance(obj, (str, os.PathLike, Run)):
        return obj
    if isinstance(obj, Mapping):
        return _nested_run(name or fallback, obj, duplicates)
    if isinstance(obj, Iterator):  # a generator is read once
        obj = list(obj)
    run = run_from(obj, name, duplicates=duplicates, fallback=fallback)
    if run is None:
        raise not_accepted(obj, "runs", "runs", what=what)
    return run


# ------------------------------------------------------------------- qrels
def _grades(q: Any, d: Any, g: Any, source: str | None) -> dict[str, dict[str, int]]:
    """``{query: {doc: grade}}`` from three columns; a grade that is not an integer, or a
    document graded twice differently, is an error."""
    qs = _ids(q, "qrels: query id", "qrels")
    ds = _ids(d, "qrels: document id", "qrels")
    raw = list(g)
    num = pd.to_numeric(pd.Series(raw, dtype=object), errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(num) | (num != np.round(num))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise _qrels_error(f"grade of document {ds[i]!r} for query {qs[i]!r} must be an integer, "
                           f"got {raw[i]!r}", source)
    out: dict[str, dict[str, int]] = {}
    for t, doc, v in zip(qs.tolist(), ds.tolist(), num.astype(np.int64).tolist()):
        docs = out.setdefault(t, {})
        if docs.get(doc, v) != v:
            raise _qrels_error(f"document {doc!r} judged twice for query {t!r} with different grades "
                               f"({docs[doc]} and {v})", source)
        docs[doc] = v
    return out


def _qrels_error(message: str, source: str | None) -> InputError | ParameterError:
    return InputError(message, file=source) if source else ParameterError(message, parameter="qrels")


def _frame_qrels(df: pd.DataFrame, source: str | None) -> dict[str, dict[str, int]]:
    cols = [_column(df, QUERY_COLUMNS), _column(df, DOC_COLUMNS), _column(df, RELEVANCE_COLUMNS)]
    if any(c is None for c in cols):
        raise ParameterError(f"a qrels frame needs columns query_id (or {', '.join(QUERY_COLUMNS[1:])}), "
                             f"doc_id (or {', '.join(DOC_COLUMNS[1:])}) and relevance (or "
                             f"{', '.join(RELEVANCE_COLUMNS[1:])}); found " + ", ".join(map(str, df.columns)),
                             parameter="qrels")
    q, d, g = cols
    return _grades(df[q], df[d], df[g], source)


def _records_qrels(records: Iterable, source: str | None) -> dict[str, dict[str, int]]:
    q, d, g = [], [], []
    for r in records:
        if not _is_record(r, "relevance"):
            raise _qrels_error(f"a record without query_id, doc_id, relevance: {r!r}", source)
        q.append(r.query_id)
        d.append(r.doc_id)
        g.append(r.relevance)
    return _grades(q, d, g, source)


def qrels_mapping(obj: Any) -> tuple[dict[str, dict[str, int]], str | None] | None:
    """``({query: {doc: grade}}, source)`` from qrels in another tool's form or a dict;
    ``None`` for a path or a text (the qrels file reader's business).

    Raises
    ------
    ParameterError
        For an object that is no qrels form (naming what was given and what is accepted),
        a grade that is not an integer, a frame without the columns.
    InputError
        For an ir_datasets data set whose qrels are not on disk.
    """
    if isinstance(obj, str) and obj.startswith(IRDS_PREFIX) and "\n" not in obj:
        return _irds_qrels(obj[len(IRDS_PREFIX):])
    if isinstance(obj, (str, bytes, os.PathLike)):
        return None
    if _from(obj, "ranx", "Qrels"):
        obj = obj.to_dict()
    elif _from(obj, "trectools", "TrecQrel"):
        obj = obj.qrels_data
    if isinstance(obj, Mapping):
        rows = [(t, d, g) for t, docs in obj.items()
                for d, g in (docs.items() if isinstance(docs, Mapping) else [(None, docs)])]
        if any(d is None for _, d, _ in rows):
            raise ParameterError("expected {query: {doc: grade}}, found a query mapped to "
                                 + describe(next(g for _, d, g in rows if d is None)), parameter="qrels")
        q, d, g = zip(*rows) if rows else ((), (), ())
        return _grades(q, d, g, None), None
    if isinstance(obj, pd.DataFrame):
        return _frame_qrels(obj, None), None
    if _from(obj, "ir_datasets", "Dataset"):
        return _dataset_qrels(obj, obj.dataset_id())
    if isinstance(obj, Iterable):
        return _records_qrels(obj, None), None
    raise not_accepted(obj, "qrels", "qrels")


# --------------------------------------------------------------- ir_datasets
def _irds_qrels(dataset_id: str) -> tuple[dict[str, dict[str, int]], str]:
    try:
        import ir_datasets
    except ImportError:
        raise ParameterError(f"qrels {IRDS_PREFIX}{dataset_id} need the ir_datasets package: "
                             "pip install 'planner[irds]'", parameter="qrels") from None
    try:
        ds = ir_datasets.load(dataset_id)
    except KeyError:
        raise ParameterError(f"ir_datasets knows no data set {dataset_id!r}", parameter="qrels") from None
    return _dataset_qrels(ds, dataset_id)


def _dataset_qrels(ds: Any, dataset_id: str | None) -> tuple[dict[str, dict[str, int]], str]:
    """The qrels of an ir_datasets data set, read only when its files are all on disk."""
    source = f"{IRDS_PREFIX}{dataset_id or '?'}"
    if not ds.has_qrels():
        raise InputError("the data set has no qrels", file=source)
    if not on_disk(ds.qrels_handler()):
        raise InputError("the qrels are not on disk and planner does not download; fetch them once "
                         f"with: ir_datasets export {dataset_id or '<id>'} qrels > /dev/null", file=source)
    return _records_qrels(ds.qrels_iter(), source), source


def _files(obj: object, depth: int = 0) -> list[object]:
    """The ir_datasets ``Download`` and ``Cache`` objects behind a handler."""
    from ir_datasets.util import Cache, Download

    if isinstance(obj, (Download, Cache)):
        return [obj]
    if depth > 5:
        return []
    if isinstance(obj, (list, tuple)):
        values: Iterable = obj
    elif isinstance(obj, dict):
        values = obj.values()
    elif type(obj).__module__.startswith("ir_datasets") and hasattr(obj, "__dict__"):
        values = vars(obj).values()
    else:
        return []
    return [f for v in values for f in _files(v, depth + 1)]


def on_disk(handler: object) -> bool:
    """True when every file behind an ir_datasets handler is already on disk (checked
    without downloading: ``Download.path(force=False)`` only names the cache file)."""
    from ir_datasets.util import Download

    files = _files(handler)
    for f in files:
        if isinstance(f, Download):
            path = f._path or f._cache_path  # ir_datasets has no public "is cached"
        else:
            path = f._path  # type: ignore[attr-defined]
        if path is None or not os.path.exists(path):
            return False
    return bool(files)
