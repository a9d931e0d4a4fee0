"""Score tables: wide CSV (one column a system) and tidy CSV/TSV (``system, topic, value``)."""

from __future__ import annotations

import csv
import io
import warnings
from collections import defaultdict

import numpy as np
import pandas as pd

from ..errors import InputError, ParameterError, PlannerWarning
from ..methods import suggest
from ..scores import ScoreMatrix
from .text import MISSING_HINT, cell_number, csv_rows, decode, delimiter, head_text, parse_float, read_bytes


def sniff(text: str) -> str:
    """'trec_eval', 'tidy' or 'wide' from the first non-blank line."""
    for line in text.splitlines():
        if line.strip():
            first = line
            break
    else:
        return "empty"
    delim = "\t" if "\t" in first and "," not in first else ","
    header = [h.strip().strip('"').lower() for h in first.split(delim)]
    if {"system", "topic", "value"} <= set(header):
        return "tidy"
    parts = first.split()
    if "," not in first and len(parts) == 3:
        try:
            float(parts[2])
            return "trec_eval"
        except ValueError:
            if parts[0] == "runid" and parts[1] == "all":     # trec_eval's "runid  all  NAME" line
                return "trec_eval"
    return "wide"


#: from this many columns on, pandas parses a wide table in one piece (``low_memory=False``)
#: rather than in chunks of about ``2^20 / columns`` rows joined column by column afterwards:
#: 19% less CPU at 10,000 columns x 1,000 rows, even at 6,000, 1.6x more at 1,000 x 10,000
#: (docs/research/speed.md)
ONE_PIECE_COLUMNS = 6000

#: first-column headings of a wide table that name the topic column (case-insensitive)
TOPIC_HEADERS = ("topic", "topics", "topic_id", "topicid", "topic-id", "query", "query_id", "queryid",
                 "query-id", "qid", "id", "")


def _all_numbers(cells) -> bool:
    try:
        for c in cells:
            parse_float(c.strip())
    except ValueError:
        return False
    return True


def read_wide(text: str | bytes, source: str | None, *, measure: str | None, missing: str) -> ScoreMatrix:
    """A wide table: one row a topic, one column a system, optional first column ``topic``.

    Given the bytes of the file, the table is parsed by ``pandas.read_csv``; when that parse
    is not a complete table of finite numbers under a header on line 1 (a missing or
    non-numeric cell, a short or long row, a blank or repeated topic id, a decoding error),
    the file is read again row by row, so that the error (or the missing-cell policy) is
    the same, naming the line, as for the text."""
    if isinstance(text, bytes):
        m = _read_wide_fast(text, source, measure=measure, missing=missing)
        if m is not None:
            return m
        text = decode(text, source).lstrip("\ufeff")
    rows = csv_rows(text, delimiter(text), source)
    try:
        hline, header = next(rows)
    except StopIteration:
        raise InputError("empty score table", file=source) from None
    header = [h.strip() for h in header]
    has_topic = header[0].lower() in TOPIC_HEADERS if header else False
    systems = header[1:] if has_topic else header
    _check_wide_header(header, systems, has_topic, source, hline)
    hint = _tidy_hint(header, has_topic)
    topics: list[str] = []
    cols: list[list[float]] = []
    tseen: dict[str, int] = {}
    for line, row in rows:
        if len(row) != len(header):
            raise InputError(f"expected {len(header)} fields like the header, found {len(row)}",
                             file=source, line=line)
        if has_topic:
            t = _topic_cell(row[0], tseen, source, line)
            cells = row[1:]
        else:
            t = str(len(topics) + 1)
            cells = row
        topics.append(t)
        try:
            cols.append([cell_number(c, source, line, f"for system {s!r}") for c, s in zip(cells, systems)])
        except InputError as e:
            if not hint:
                raise
            raise InputError(e.message + hint, file=source, line=line) from None
    if not topics:
        raise InputError("score table has a header but no rows", file=source)
    vals = np.array(cols, dtype=np.float64).T
    if missing == "error":
        _wide_missing(vals, systems, topics, text, source)
    return ScoreMatrix.build(vals, systems, topics, measure=measure, missing=missing, source=source)


def _read_wide_fast(data: bytes, source: str | None, *, measure: str | None,
                    missing: str) -> ScoreMatrix | None:
    """The matrix of a complete wide table parsed by pandas, or None to read it row by row."""
    head = head_text(data, source)
    line = head.rstrip("\r\n")
    if not line.strip() or "\n" in line or "\r" in line or line.count('"') % 2 or line == head:
        return None      # blank lines first, a quoted line break in the header, or no rows
    delim = delimiter(head)
    _, header = next(csv_rows(head, delim, source))
    header = [h.strip() for h in header]
    has_topic = header[0].lower() in TOPIC_HEADERS
    systems = header[1:] if has_topic else header
    if len(set(systems)) != len(systems) or not all(systems):
        return None
    stream = io.BytesIO(data)       # shares the bytes, no copy
    stream.seek(3 if data.startswith(b"\xef\xbb\xbf") else 0)     # after a byte-order mark
    dtypes: defaultdict[int, type] = defaultdict(lambda: np.float64, {0: str} if has_topic else {})
    try:
        # (the topic column as the index: no slicing of a frame of one block a column)
        # (header=0 with names: the header line is parsed and replaced; skiprows=1 instead
        # costs 0.2-0.3 s more CPU on 10 million cells, docs/research/speed.md)
        frame = pd.read_csv(stream, sep=delim, header=0, names=range(len(header)),
                            index_col=0 if has_topic else None, dtype=dtypes, na_filter=False,
                            encoding="utf-8", low_memory=len(header) < ONE_PIECE_COLUMNS)
    except ValueError:          # a non-numeric cell, a long row, bad UTF-8, no rows: say which
        return None
    if frame.shape[1] != len(systems) or not (has_topic or isinstance(frame.index, pd.RangeIndex)):
        return None     # every row longer than the header: pandas made their first fields an index
    # (topics, systems) in Fortran order: its transpose is one row a system, C-contiguous
    values = frame.to_numpy(dtype=np.float64).T
    if not values.size or not np.isfinite(values).all():        # a short row, an infinite value
        return None
    if has_topic:
        ids = frame.index.tolist()
        topics = [t.strip() for t in ids]
        if not all(topics) or len(set(topics)) != len(topics) or max(map(len, ids)) > csv.field_size_limit():
            return None
    else:
        topics = [str(i + 1) for i in range(len(frame))]
    del frame
    _check_wide_header(header, systems, has_topic, source, 1, stacklevel=5)
    return ScoreMatrix.build(values, systems, topics, measure=measure, missing=missing, source=source)


def _check_wide_header(header: list[str], systems: list[str], has_topic: bool, source: str | None,
                       hline: int, stacklevel: int = 4) -> None:
    if not systems:
        raise InputError("no system columns in header", file=source, line=hline)
    if not has_topic and _all_numbers(header):
        warnings.warn(f"{source or 'score table'}:{hline}: the header holds only numbers "
                      f"({', '.join(systems[:3])}{', ...' if len(systems) > 3 else ''}); they are read as "
                      "system names. A table without a header row loses its first topic this way: add "
                      "one (topic,system1,system2,...)", PlannerWarning, stacklevel=stacklevel)
    for j, s in enumerate(systems):
        if not s:
            raise InputError(f"empty system name in column {j + 1 + has_topic}", file=source, line=hline)
    seen = set()
    for s in systems:
        if s in seen:
            raise InputError(f"system {s!r} appears twice in the header", file=source, line=hline)
        seen.add(s)


def _tidy_hint(header: list[str], has_topic: bool) -> str:
    """What to add to a cell error when the header looks like a tidy table's."""
    # a tidy table whose columns are not named system, topic, value reads as a wide one: say so
    low = [h.lower() for h in header]
    # (a run column alone, after a topic column, is a wide table with a system named 'run')
    tidy_like = ({"system", "value", "score", "measure"} & set(low)
                 or any(h in TOPIC_HEADERS[:-1] for h in low[1:])
                 or (not has_topic and {"run", "runid"} & set(low)))
    if not tidy_like:
        return ""
    return (f" (the header {', '.join(header[:4])}{', ...' if len(header) > 4 else ''} is read as a wide "
            "table, one column a system; a tidy table needs the columns system, topic and value)")


def _topic_cell(cell: str, seen: dict[str, int], source: str | None, line: int) -> str:
    """The topic id of a wide table's row, recorded in ``seen``; empty or repeated is an error."""
    t = cell.strip()
    if not t:
        raise InputError("empty topic id", file=source, line=line)
    if t in seen:
        raise InputError(f"topic {t!r} repeated (first on line {seen[t]})", file=source, line=line)
    seen[t] = line
    return t


def _wide_missing(vals: np.ndarray, systems: list[str], topics: list[str], text: str,
                  source: str | None) -> None:
    """Raise the missing-cell error of a wide table: the first missing cell in file order,
    with its line and how it is written."""
    miss = np.isnan(vals)
    if not miss.any():
        return
    t_idx, s_idx = np.argwhere(miss.T)[0]
    rows = csv_rows(text, delimiter(text), source)
    next(rows)
    line, row = next(r for k, r in enumerate(rows) if k == t_idx)
    cell = row[len(row) - len(systems) + int(s_idx)].strip()
    raise InputError(f"missing cell ({repr(cell) if cell else 'empty'}) for system {systems[s_idx]!r}, "
                     f"topic {topics[t_idx]!r} ({int(miss.sum())} missing cell(s) in all; {MISSING_HINT})",
                     file=source, line=line)


def read_tidy(text: str, source: str | None, *, measure: str | None, missing: str) -> ScoreMatrix:
    """A tidy table: columns ``system, topic, value`` and optionally ``measure``, ``variant``,
    ``stratum``; ``measure`` selects rows when there is a ``measure`` column."""
    df = _tidy_frame(text, source)
    if "measure" in df.columns:
        measure = _tidy_measure(df, measure, source)
        df = df[df["measure"] == measure]
    keys = ["system", "topic"] + (["variant"] if "variant" in df.columns else [])
    dup = df.duplicated(subset=keys)
    if dup.any():
        r = df[dup].iloc[0]
        raise InputError("repeated cell: " + ", ".join(f"{k} {r[k]!r}" for k in keys),
                         file=source, line=int(r["_line"]))
    if "stratum" in df.columns:
        _check_one_stratum(df, source)
    if missing == "error":
        _tidy_missing(df, source)
    df = df.drop(columns=["_line"] + (["measure"] if "measure" in df.columns else []))
    return ScoreMatrix.from_frame(df, measure=measure, missing=missing, source=source)


def _tidy_frame(text: str, source: str | None) -> pd.DataFrame:
    """The rows of a tidy table as a frame, with each row's line in ``_line``."""
    first = next(line for line in text.splitlines() if line.strip())
    delim = "\t" if "\t" in first and "," not in first else ","
    rows = csv_rows(text, delim, source)
    hline, header = next(rows)
    header = [h.strip().lower() for h in header]
    idx: dict[str, int] = {}
    for j, h in enumerate(header):
        if h in idx and h:
            raise InputError(f"column {h!r} appears twice in the header", file=source, line=hline)
        idx[h] = j
    labels = [k for k in ("system", "topic", "measure", "variant", "stratum", "seed") if k in idx]
    recs, lines = [], []
    for line, row in rows:
        if len(row) != len(header):
            raise InputError(f"expected {len(header)} fields like the header, found {len(row)}",
                             file=source, line=line)
        rec: dict[str, object] = {h: row[j].strip() for h, j in idx.items()}
        for k in labels:
            if not rec[k]:
                raise InputError(f"empty {k} cell", file=source, line=line)
        rec["value"] = cell_number(row[idx["value"]], source, line, "in column 'value'")
        recs.append(rec)
        lines.append(line)
    if not recs:
        raise InputError("score table has a header but no rows", file=source)
    df = pd.DataFrame(recs)
    df["_line"] = lines
    return df


def _tidy_measure(df: pd.DataFrame, measure: str | None, source: str | None) -> str:
    """The measure to select from a tidy table's ``measure`` column."""
    ms = list(dict.fromkeys(df["measure"]))
    if measure is None:
        if len(ms) > 1:
            raise ParameterError(f"{source or 'table'} holds several measures ({', '.join(ms[:8])}); "
                                 "choose one", parameter="measure")
        return ms[0]
    if measure not in ms:
        raise ParameterError(f"measure {measure!r} not in {source or 'table'}{suggest(measure, ms)}; found: "
                             + ", ".join(ms[:20]), parameter="measure")
    return measure


def _check_one_stratum(df: pd.DataFrame, source: str | None) -> None:
    """Every row of a topic names the same stratum."""
    first_st = df.drop_duplicates("topic").set_index("topic")["stratum"]
    other = df["stratum"].to_numpy() != df["topic"].map(first_st).to_numpy()
    if other.any():
        r = df[other].iloc[0]
        raise InputError(f"topic {r['topic']!r} has several strata ({first_st[r['topic']]!r} "
                         f"and {r['stratum']!r})", file=source, line=int(r["_line"]))


def _tidy_missing(df, source) -> None:
    """Raise the missing-cell error of a tidy table: an ``NA`` value (naming its
    line) or a system x topic (x variant) combination without a row."""
    has_var = "variant" in df.columns
    systems = list(dict.fromkeys(df["system"]))
    topics = list(dict.fromkeys(df["topic"]))
    variants = list(dict.fromkeys(df["variant"])) if has_var else [None]
    ok = df[df["value"].notna()]
    complete = ok.groupby(["system", "topic"]).size()
    n_miss = len(systems) * len(topics) - int((complete == len(variants)).sum())
    if not n_miss:
        return
    where = f"{n_miss} missing cell(s) in all; {MISSING_HINT}"
    nan = df[df["value"].isna()]
    if len(nan):
        r = nan.iloc[0]
        var = f", variant {r['variant']!r}" if has_var else ""
        raise InputError(f"missing value for system {r['system']!r}, topic {r['topic']!r}{var} ({where})",
                         file=source, line=int(r["_line"]))
    have = set(zip(df["system"], df["topic"], df["variant"] if has_var else [None] * len(df)))
    for s in systems:
        for t in topics:
            for v in variants:
                if (s, t, v) not in have:
                    var = f", variant {v!r}" if has_var else ""
                    raise InputError(f"no row for system {s!r}, topic {t!r}{var} ({where})", file=source)



def read_seed_table(path, *, measure: str | None = None) -> pd.DataFrame:
    """A tidy score table with a training-seed axis: ``system, seed, topic, value`` rows
    (optionally ``measure``, which selects rows), as a frame of those four columns.

    Seeds are labels within a system (seed 1 of one recipe has nothing to do with seed 1 of
    another: :mod:`planner.plan.seeds`). A repeated ``(system, seed, topic)``, a missing value
    or a missing ``seed`` column is an :class:`InputError` naming the file (and line); whether
    the table is balanced is checked where it is fitted (:func:`planner.plan.seeds.fit_seeds`).

    Examples
    --------
    >>> df = read_seed_table("system,seed,topic,value\\na,1,t1,0.5\\na,2,t1,0.25\\n")
    >>> df.columns.tolist(), df["value"].tolist()
    (['system', 'seed', 'topic', 'value'], [0.5, 0.25])
    """
    data, source = read_bytes(path, what="scores")
    text = decode(data, source).lstrip("\ufeff")
    if not text.strip():
        raise InputError("empty score file", file=source)
    df = _tidy_frame(text, source)
    need = [c for c in ("system", "seed", "topic", "value") if c not in df.columns]
    if need:
        raise InputError(f"a score table with seeds needs the columns system, seed, topic and value; "
                         f"no {need[0]!r} column", file=source)
    if "measure" in df.columns:
        df = df[df["measure"] == _tidy_measure(df, measure, source)]
    keys = ["system", "seed", "topic"]
    dup = df.duplicated(subset=keys)
    if dup.any():
        r = df[dup].iloc[0]
        raise InputError("repeated cell: " + ", ".join(f"{k} {r[k]!r}" for k in keys), file=source,
                         line=int(r["_line"]))
    nan = df[df["value"].isna()]
    if len(nan):
        r = nan.iloc[0]
        raise InputError(f"missing value for system {r['system']!r}, seed {r['seed']!r}, topic {r['topic']!r}",
                         file=source, line=int(r["_line"]))
    return df[["system", "seed", "topic", "value"]].reset_index(drop=True)
