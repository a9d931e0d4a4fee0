"""Readers: TREC runs, qrels, ``trec_eval -q`` output, score tables, topic metadata.

Every reader takes a path (gzip is detected from the file's magic bytes and read
transparently, whatever the extension) or the text itself (a ``str`` that
contains a newline), and reports bad input as :class:`~planner.errors.InputError`
naming the file and line (``runs/a.run.gz:17: ...``).

Formats (``docs/inputs.md`` has the long version):

- **TREC run**: 6 whitespace-separated columns ``topic Q0 doc rank score tag``.
  The second column may be ``Q0``, ``q0`` or ``0``; the rank column is ignored
  (as trec_eval does). A repeated ``(topic, doc)`` pair is an error, or with
  ``duplicates="first"`` the first occurrence is kept. A run's name is the file
  name without the extensions ``.gz .bz2 .xz`` and ``.run .txt .res .trec .tsv``;
  a tag column that disagrees with that name (or with itself) gives a warning.
- **qrels**: 4 columns ``topic iteration doc grade`` with an integer grade.
- **trec_eval -q**: lines ``measure <spaces> TAB topic TAB value``; rows of
  topic ``all`` are skipped except ``runid`` (the run's name when a single file
  is read; in a folder the file name is used so names stay unique).
- **wide CSV**: one row a topic, one column a system, an optional first column
  ``topic`` (otherwise topics are numbered 1..T); R-style numbers (``5e-04``);
  empty cells and ``NA`` are missing cells.
- **tidy CSV/TSV**: columns ``system, topic, value`` and optionally ``measure``,
  ``variant``, ``stratum``.
- **topic metadata CSV**: ``topic`` and ``stratum`` columns; extra columns kept.

Every reader drops a UTF-8 byte-order mark (Excel and Windows tools write one),
so it never becomes part of a topic id or measure name. Numbers must be plain
ASCII: Python's ``float`` would read ``1_0`` as 10, which no score file means, so
a cell with ``_`` or non-ASCII characters is a non-numeric cell.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
import os
import warnings
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from .errors import InputError, ParameterError, PlannerWarning
from .scores import ScoreMatrix

__all__ = [
    "Qrels",
    "Run",
    "attach_strata",
    "load_scores",
    "read_qrels",
    "read_run",
    "read_runs",
    "read_topics",
    "read_trec_eval",
    "run_name",
    "stack_with_strata",
]

_COMPRESS_EXT = (".gz", ".bz2", ".xz")
_RUN_EXT = (".run", ".txt", ".res", ".trec", ".tsv", ".csv", ".eval", ".out")
_Q0 = {"Q0", "q0", "0"}


# --------------------------------------------------------------------- input
def _is_text(obj) -> bool:
    return isinstance(obj, str) and ("\n" in obj or "\r" in obj)


def _read_bytes(path_or_text, *, what: str) -> tuple[bytes, str | None]:
    """(content bytes, source name) of a path (gzip/bz2/xz detected) or a text."""
    if isinstance(path_or_text, bytes):
        data, source = path_or_text, None
    elif _is_text(path_or_text):
        return path_or_text.encode("utf-8"), None
    elif isinstance(path_or_text, (str, os.PathLike)):
        p = Path(path_or_text)
        source = str(p)
        if not p.exists():
            raise InputError(f"no such {what} file", file=source)
        if p.is_dir():
            raise InputError(f"is a folder, expected a {what} file", file=source)
        try:
            data = p.read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", file=source) from None
    else:
        raise ParameterError(f"expected a path or text, got {type(path_or_text).__name__}",
                             parameter=what)
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"corrupt gzip data ({exc})", file=source) from None
    elif data[:3] == b"BZh":
        import bz2
        try:
            data = bz2.decompress(data)
        except (OSError, ValueError) as exc:
            raise InputError(f"corrupt bzip2 data ({exc})", file=source) from None
    elif data[:6] == b"\xfd7zXZ\x00":
        import lzma
        try:
            data = lzma.decompress(data)
        except lzma.LZMAError as exc:
            raise InputError(f"corrupt xz data ({exc})", file=source) from None
    return data, source


_BOM = b"\xef\xbb\xbf"


def _decode(data: bytes, source: str | None) -> str:
    """UTF-8 text of ``data`` without a leading byte-order mark."""
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        utf16 = data[:2] in (b"\xff\xfe", b"\xfe\xff")     # a UTF-16 byte-order mark (Excel, PowerShell)
        raise InputError("not UTF-8 text" + (" (it starts like UTF-16: save it as UTF-8)" if utf16 else ""),
                         file=source, line=line) from None


def _float(text: str) -> float:
    """``float(text)`` for plain ASCII numbers only.

    Python's ``float`` also reads ``1_0`` (as 10) and non-ASCII digits; in a score
    file those are typos or mis-encodings, so they raise ``ValueError`` here."""
    if "_" in text or not text.isascii():
        raise ValueError(text)
    return float(text)


def _int(text: str) -> int:
    """``int(text)`` for plain ASCII integers only (``int('1_0')`` is 10)."""
    if "_" in text or not text.isascii():
        raise ValueError(text)
    return int(text)


def _few(items, k: int = 5) -> str:
    """``'a', 'b', 'c', ...``: the first ``k`` items, quoted."""
    items = list(items)
    return ", ".join(repr(x) for x in items[:k]) + (", ..." if len(items) > k else "")


_MISSING_HINT = ("choose a missing-cell policy: --missing zero, drop-topic, drop-system or keep; "
                 "missing= in Python, collection.missing in a study")


def run_name(path: str | os.PathLike) -> str:
    """Run name of a file: its name without compression and run extensions."""
    name = Path(path).name
    for ext in _COMPRESS_EXT:
        if name.lower().endswith(ext):
            name = name[: -len(ext)]
            break
    for ext in _RUN_EXT:
        if name.lower().endswith(ext) and len(name) > len(ext):
            name = name[: -len(ext)]
            break
    return name


# ---------------------------------------------------------------------- runs
@dataclass(frozen=True, eq=False)
class Run:
    """One TREC run.

    Attributes:
        name: the run name (file name without extensions, or ``name=``).
        frame: pandas DataFrame with columns ``query_id`` (str), ``doc_id`` (str),
            ``score`` (float64), one row a retrieved document, in file order,
            without duplicates.
        source: the file it was read from, if any.
        tags: the distinct values of the tag column.
    """

    name: str
    frame: object
    source: str | None = None
    tags: tuple[str, ...] = ()

    @cached_property
    def topics(self) -> dict[str, dict[str, float]]:
        """``{topic: {doc: score}}`` (the dict-of-dict form ir_measures accepts)."""
        df = self.frame
        out: dict[str, dict[str, float]] = {}
        q = df["query_id"].to_numpy(dtype=object)
        d = df["doc_id"].to_numpy(dtype=object)
        s = df["score"].to_numpy(dtype=np.float64).tolist()
        if len(q) == 0:
            return out
        # rows of one topic are usually contiguous: cut at changes of topic
        change = np.flatnonzero(q[1:] != q[:-1]) + 1
        bounds = np.concatenate(([0], change, [len(q)]))
        dl = d.tolist()
        for a, b in zip(bounds[:-1], bounds[1:]):
            t = q[a]
            block = dict(zip(dl[a:b], s[a:b]))
            if t in out:
                out[t].update(block)
            else:
                out[t] = block
        return out

    @property
    def n_topics(self) -> int:
        return int(self.frame["query_id"].nunique())

    def __len__(self) -> int:
        return len(self.frame)

    def __repr__(self) -> str:
        return f"Run({self.name!r}: {len(self.frame)} lines, {self.n_topics} topics)"


def _scan_run(text: str, source: str | None) -> None:
    """Slow, exact check of a run's lines; raises at the first bad line."""
    for i, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 6:
            raise InputError(f"expected 6 columns (topic Q0 doc rank score tag), found {len(parts)}",
                             file=source, line=i)
        if parts[1] not in _Q0:
            raise InputError(f"second column must be Q0, q0 or 0, found {parts[1]!r}",
                             file=source, line=i)
        try:
            v = _float(parts[4])
        except ValueError:
            raise InputError(f"non-numeric score {parts[4]!r}", file=source, line=i) from None
        if not math.isfinite(v):
            raise InputError(f"score must be finite, found {parts[4]!r}", file=source, line=i)


def _line_of_row(text: str, row: int) -> int:
    """1-based line number of the ``row``-th (0-based) non-blank line."""
    k = -1
    for i, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            k += 1
            if k == row:
                return i
    return k + 1


def _parse_run_frame(data: bytes, sep: str):
    """(frame, tag array, bad) from the fast pandas parser; ``bad`` means a line
    needs the slow exact scan to be located."""
    import pandas as pd

    cols = ["query_id", "q0", "doc_id", "rank", "score", "tag"]
    try:
        df = pd.read_csv(io.BytesIO(data), sep=sep, header=None, names=cols,
                         dtype={"query_id": object, "q0": object, "doc_id": object, "rank": object,
                                "score": np.float64, "tag": object},
                         engine="c", quoting=csv.QUOTE_NONE, na_filter=False,
                         skip_blank_lines=True, index_col=False)
    except (ValueError, TypeError, pd.errors.ParserError):
        return None, None, True
    tag = df["tag"].to_numpy(dtype=object)
    bad = (not np.isfinite(df["score"].to_numpy()).all()
           or (tag == "").any() or (df["doc_id"].to_numpy(dtype=object) == "").any())
    if not bad and len(df):
        bad = not set(pd.unique(df["q0"].to_numpy(dtype=object)).tolist()) <= _Q0
    return df, tag, bad


def read_run(path_or_text, *, duplicates: str = "error", name: str | None = None,
             warn_tag: bool = True) -> Run:
    """Read one TREC run file (or text).

    Args:
        path_or_text: a path (gzip detected) or the run's text.
        duplicates: ``"error"`` (default): a repeated ``(topic, doc)`` pair is an
            InputError naming its line; ``"first"``: keep the first occurrence.
        name: the run name; default the file name without extensions, or the tag
            of the first line for a text.
        warn_tag: warn when the tag column disagrees with the run name or itself.
    """
    import pandas as pd

    if duplicates not in ("error", "first"):
        raise ParameterError(f"expected 'error' or 'first', got {duplicates!r}", parameter="duplicates")
    data, source = _read_bytes(path_or_text, what="run")
    if not data.strip():
        raise InputError("empty run file", file=source)
    first_nl = data.find(b"\n")
    first = data[: first_nl if first_nl >= 0 else len(data)]
    seps = ["\t", r"\s+"] if b"\t" in first and b" " not in first.strip() else [r"\s+"]
    for sep in seps:  # tab-separated files parse faster with sep="\t"
        df, tag, bad = _parse_run_frame(data, sep)
        if not bad:
            break
    if bad:
        _scan_run(_decode(data, source), source)
        raise InputError("malformed run file", file=source)  # pragma: no cover - scan finds it
    tags: tuple[str, ...] = ()
    if len(df):
        t0 = tag[0]
        tags = (str(t0),) if (tag == t0).all() else tuple(str(t) for t in pd.unique(tag))
    if name is None:
        name = run_name(source) if source else (tags[0] if tags else "run")
    dup = df.duplicated(subset=["query_id", "doc_id"], keep="first")
    if dup.any():
        if duplicates == "error":
            row = int(np.flatnonzero(dup.to_numpy())[0])
            r = df.iloc[row]
            line = _line_of_row(_decode(data, source), row)
            if len(tags) > 1:
                hit = (df["query_id"] == r["query_id"]) & (df["doc_id"] == r["doc_id"])
                first = int(np.flatnonzero(hit.to_numpy())[0])
                if str(tag[first]) != str(tag[row]):
                    raise InputError(f"document {r['doc_id']!r} repeated for topic {r['query_id']!r} under "
                                     f"another tag ({str(tag[row])!r}; {str(tag[first])!r} on line "
                                     f"{_line_of_row(_decode(data, source), first)}): the file holds "
                                     f"{len(tags)} runs ({', '.join(repr(t) for t in tags[:3])}"
                                     f"{', ...' if len(tags) > 3 else ''}); give each run its own file",
                                     file=source, line=line)
            raise InputError(f"document {r['doc_id']!r} repeated for topic {r['query_id']!r} "
                             "(use --duplicates first, or duplicates='first' in Python, to keep the "
                             "first occurrence)",
                             file=source, line=line)
        df = df[~dup.to_numpy()]
    if warn_tag and tags and (len(tags) > 1 or tags[0] != name):
        shown = ", ".join(repr(t) for t in tags[:3]) + (", ..." if len(tags) > 3 else "")
        warnings.warn(f"{source or name}: tag column ({shown}) disagrees with run name {name!r}",
                      PlannerWarning, stacklevel=2)
    frame = df[["query_id", "doc_id", "score"]].reset_index(drop=True)
    return Run(name=name, frame=frame, source=source, tags=tags)


#: largest |grade| a qrels line may carry: trec_eval (pytrec_eval) allocates per grade level,
#: and a grade of 2^31 - 1 took 79 s and 16.8 GB for two topics (10^6: 1 s, +8 MB)
_MAX_GRADE = 1_000_000


def files_in(folder: Path, pattern: str | None = None) -> list[Path]:
    """The folder's files in name order (hidden ones skipped, or those matching ``pattern``);
    a folder that cannot be listed is an InputError naming it."""
    try:
        found = folder.glob(pattern) if pattern else (p for p in folder.iterdir() if not p.name.startswith("."))
        return sorted(p for p in found if p.is_file())
    except OSError as exc:
        raise InputError(f"cannot list the folder: {exc.strerror or exc}", file=str(folder)) from None


def read_runs(folder, *, duplicates: str = "error", pattern: str | None = None,
              warn_tag: bool = True) -> dict[str, Run]:
    """Read every run file in a folder (hidden files skipped; ``pattern`` a glob
    to select files). Returns ``{name: Run}`` in file-name order; two files with
    the same run name are an error."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("not a folder of run files", file=str(folder))
    files = files_in(folder, pattern)
    if not files:
        raise InputError("no run files in folder", file=str(folder))
    out: dict[str, Run] = {}
    for f in files:
        r = read_run(f, duplicates=duplicates, warn_tag=warn_tag)
        if r.name in out:
            raise InputError(f"two files give run name {r.name!r} ({out[r.name].source})", file=str(f))
        out[r.name] = r
    return out


# --------------------------------------------------------------------- qrels
class Qrels(dict):
    """Relevance judgments: ``{topic: {doc: grade}}`` (a dict), with ``source``."""

    source: str | None = None

    def __init__(self, data: Mapping | None = None, *, source: str | None = None):
        super().__init__({str(t): {str(d): int(g) for d, g in docs.items()}
                          for t, docs in (data or {}).items()})
        self.source = source

    @property
    def n_judgments(self) -> int:
        return sum(len(d) for d in self.values())

    def to_frame(self):
        import pandas as pd

        rows = [(t, d, g) for t, docs in self.items() for d, g in docs.items()]
        return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])

    def __repr__(self) -> str:
        return f"Qrels({len(self)} topics, {self.n_judgments} judgments)"


def read_qrels(path_or_text) -> Qrels:
    """Read TREC qrels: 4 columns ``topic iteration doc grade`` (integer grade).

    A repeated ``(topic, doc)`` pair with a different grade is an error; an exact
    repeat is ignored.
    """
    if isinstance(path_or_text, Qrels):
        return path_or_text
    if isinstance(path_or_text, Mapping):
        return Qrels(path_or_text)
    data, source = _read_bytes(path_or_text, what="qrels")
    text = _decode(data, source)
    out: dict[str, dict[str, int]] = {}
    n = 0
    for i, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 4:
            raise InputError(f"expected 4 columns (topic iteration doc grade), found {len(parts)}",
                             file=source, line=i)
        t, _, d, g = parts
        try:
            grade = _int(g)
        except ValueError:
            raise InputError(f"grade must be an integer, found {g!r}", file=source, line=i) from None
        if not -_MAX_GRADE <= grade <= _MAX_GRADE:
            raise InputError(f"grade {g} is out of range (at most {_MAX_GRADE} in absolute value)",
                             file=source, line=i)
        docs = out.setdefault(t, {})
        if d in docs and docs[d] != grade:
            raise InputError(f"document {d!r} judged twice for topic {t!r} with different grades "
                             f"({docs[d]} and {grade})", file=source, line=i)
        docs[d] = grade
        n += 1
    if n == 0:
        raise InputError("empty qrels file", file=source)
    q = Qrels.__new__(Qrels)
    dict.__init__(q, out)
    q.source = source
    return q


# ------------------------------------------------------------- trec_eval -q
def _parse_trec_eval(text: str, source: str | None
                     ) -> tuple[str | None, dict[str, dict[str, float]], dict[tuple[str, str], int]]:
    """(runid, ``{measure: {topic: value}}``, ``{(measure, topic): line}`` of NaN values)."""
    runid = None
    res: dict[str, dict[str, float]] = {}
    nan_lines: dict[tuple[str, str], int] = {}
    n = n_all = 0
    for i, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 3:
            raise InputError(f"expected 3 fields (measure, topic, value), found {len(parts)}",
                             file=source, line=i)
        m, t, v = parts
        if m == "runid":
            runid = v
            continue
        if t == "all":
            n_all += 1
            continue
        try:
            val = _float(v)
        except ValueError:
            raise InputError(f"non-numeric value {v!r} for measure {m!r}", file=source, line=i) from None
        if math.isinf(val):
            raise InputError(f"infinite value {v!r} for measure {m!r}, topic {t!r}", file=source, line=i)
        res.setdefault(m, {})
        if t in res[m]:
            raise InputError(f"measure {m!r} repeated for topic {t!r}", file=source, line=i)
        res[m][t] = val
        if math.isnan(val):
            nan_lines[(m, t)] = i
        n += 1
    if n == 0 and runid is None and n_all == 0:
        raise InputError("empty trec_eval file", file=source)
    if n == 0:
        raise InputError("no per-topic rows, only summaries (was trec_eval run with -q?)", file=source)
    return runid, res, nan_lines


def _trec_eval_missing(m: str, topics: list[str], per_run: dict, sources: dict, nan_lines: dict) -> None:
    """Raise the missing-cell error of measure ``m``, naming the run's file (and the
    line of a ``nan`` value), when a run lacks a topic or has ``nan`` for it."""
    n_miss, first = 0, None
    for s, res in per_run.items():
        got = res.get(m, {})
        for t in topics:
            v = got.get(t)
            if v is None or math.isnan(v):
                n_miss += 1
                if first is None or (first[2] is None and v is not None):
                    first = (s, t, None if v is None else nan_lines[s][(m, t)])
    if not n_miss:
        return
    s, t, line = first
    where = f"{n_miss} missing cell(s) in all; {_MISSING_HINT}"
    if line is not None:
        raise InputError(f"missing value for measure {m!r}, topic {t!r} ({where})",
                         file=sources[s], line=line)
    if m not in per_run[s]:
        alike = [k for k in per_run[s] if k.lower() == m.lower()]
        spelt = f"; it writes {alike[0]!r}: the measure names differ in case" if alike else ""
        raise InputError(f"no {m!r} rows, other runs have them{spelt} ({where})", file=sources[s])
    raise InputError(f"no {m!r} row for topic {t!r}, other runs have one ({where})", file=sources[s])


def read_trec_eval(path_or_folder, *, missing: str = "error", names: str = "file",
                   measures: str | Iterable[str] | None = None) -> dict[str, ScoreMatrix]:
    """Read ``trec_eval -q`` output: a folder of files (one a run) or one file.

    Returns ``{trec_eval measure name: ScoreMatrix}`` with systems in file-name
    order and topics in order of first appearance. ``names="file"`` (default)
    names systems by file name without extensions, ``names="runid"`` by their
    ``runid`` row. ``missing`` is the missing-cell policy (a topic a run lacks).
    A single file gives one-system matrices, which ScoreMatrix refuses (need 2
    systems), so it returns the raw mapping under ``ScoreMatrix``-less use:
    call :func:`read_trec_eval_file` for that. ``measures`` (default: all) may be one
    trec_eval name or a list of them.
    """
    if not isinstance(names, str) or names not in ("file", "runid"):
        raise ParameterError(f"expected 'file' or 'runid', got {names!r}", parameter="names")
    p = Path(path_or_folder) if not _is_text(path_or_folder) else None
    files = files_in(p) if p is not None and p.is_dir() else [path_or_folder]
    if not files:
        raise InputError("no trec_eval files in folder", file=str(p))
    per_run: dict[str, dict[str, dict[str, float]]] = {}
    nans: dict[str, dict[tuple[str, str], int]] = {}
    sources = {}
    for f in files:
        data, source = _read_bytes(f, what="trec_eval")
        if not data.strip():
            raise InputError("empty trec_eval file", file=source)
        runid, res, nan_lines = _parse_trec_eval(_decode(data, source), source)
        name = runid if (names == "runid" and runid) else (run_name(f) if source else (runid or "run"))
        if name in per_run:
            raise InputError(f"two files give system name {name!r} ({sources[name]})", file=source)
        per_run[name] = res
        nans[name] = nan_lines
        sources[name] = source
    if len(per_run) < 2:
        raise InputError("one trec_eval file holds one system and a score matrix needs at least 2: "
                         "give the folder of all runs' trec_eval -q files", file=next(iter(sources.values())))
    all_measures = list(dict.fromkeys(m for res in per_run.values() for m in res))
    if measures is not None:
        want = [measures] if isinstance(measures, str) else list(measures)   # one name, as in score_runs
        unknown = [m for m in want if m not in all_measures]
        if unknown:
            raise ParameterError(f"measure {unknown[0]!r} not in the trec_eval output; found: "
                                 + ", ".join(all_measures[:30]), parameter="measure")
        all_measures = want
    src = str(path_or_folder) if p is not None else None
    out = {}
    skipped: list[tuple[str, InputError]] = []
    systems = list(per_run)
    for m in all_measures:
        topics = list(dict.fromkeys(t for res in per_run.values() for t in res.get(m, {})))
        vals = np.full((len(systems), len(topics)), np.nan)
        tpos = {t: j for j, t in enumerate(topics)}
        for i, s in enumerate(systems):
            for t, v in per_run[s].get(m, {}).items():
                vals[i, tpos[t]] = v
        try:
            if missing == "error":
                _trec_eval_missing(m, topics, per_run, sources, nans)
            out[m] = ScoreMatrix.build(vals, systems, topics, measure=m, missing=missing, source=src,
                                       warn=False)
        except InputError as exc:
            if measures is not None:
                raise
            detail = exc.message if exc.file in (None, src) else str(exc)
            warnings.warn(f"{src or 'trec_eval'}: measure {m!r} skipped: {detail}",
                          PlannerWarning, stacklevel=2)
            skipped.append((m, exc))
    if not out:
        if skipped:       # say why the measures were skipped, not only that none is left
            m, exc = skipped[0]
            raise InputError(f"no measure could be read: all {len(skipped)} were skipped (first, {m!r}: "
                             f"{exc if exc.file not in (None, src) else exc.message})", file=src)
        raise InputError("no measure with at least 2 systems and 2 topics", file=src)
    return out


# ------------------------------------------------------------ score tables
_NA = {"", "NA", "NaN", "nan", "na", "N/A"}


def _sniff(text: str) -> str:
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


def _rows(text: str, delim: str, source):
    """(line number, row) pairs of a CSV text, blank lines skipped.

    Line ends may be ``\n``, ``\r\n`` or a lone ``\r`` (universal newlines); a
    malformed record (a field over the csv module's size limit, a stray quote)
    is an InputError naming its line."""
    reader = csv.reader(io.StringIO(text, newline=None), delimiter=delim)
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InputError(f"malformed CSV record ({exc})", file=source, line=reader.line_num) from None
        if not row or all(not c.strip() for c in row):
            continue
        yield reader.line_num, row


def _num(cell: str, source, line, what: str) -> float:
    c = cell.strip()
    if c in _NA:
        return math.nan
    try:
        v = _float(c)
    except ValueError:
        raise InputError(f"non-numeric value {cell!r} {what}", file=source, line=line) from None
    if math.isinf(v):
        raise InputError(f"infinite value {cell!r} {what}", file=source, line=line)
    return v


def _delimiter(text: str) -> str:
    first = next((line for line in text.splitlines() if line.strip()), "")
    return "\t" if "\t" in first and "," not in first else ","


#: first-column headings of a wide table that name the topic column (case-insensitive)
TOPIC_HEADERS = ("topic", "topics", "topic_id", "topicid", "topic-id", "query", "query_id", "queryid",
                 "query-id", "qid", "id", "")


def _all_numbers(cells) -> bool:
    try:
        for c in cells:
            _float(c.strip())
    except ValueError:
        return False
    return True


def _read_wide(text: str, source, *, measure, missing) -> ScoreMatrix:
    rows = _rows(text, _delimiter(text), source)
    try:
        hline, header = next(rows)
    except StopIteration:
        raise InputError("empty score table", file=source) from None
    header = [h.strip() for h in header]
    has_topic = header[0].lower() in TOPIC_HEADERS if header else False
    systems = header[1:] if has_topic else header
    if not systems:
        raise InputError("no system columns in header", file=source, line=hline)
    if not has_topic and _all_numbers(header):
        warnings.warn(f"{source or 'score table'}:{hline}: the header holds only numbers "
                      f"({', '.join(systems[:3])}{', ...' if len(systems) > 3 else ''}); they are read as "
                      "system names. A table without a header row loses its first topic this way: add "
                      "one (topic,system1,system2,...)", PlannerWarning, stacklevel=3)
    for j, s in enumerate(systems):
        if not s:
            raise InputError(f"empty system name in column {j + 1 + has_topic}", file=source, line=hline)
    seen = set()
    for s in systems:
        if s in seen:
            raise InputError(f"system {s!r} appears twice in the header", file=source, line=hline)
        seen.add(s)
    # a tidy table whose columns are not named system, topic, value reads as a wide one: say so
    low = [h.lower() for h in header]
    # (a run column alone, after a topic column, is a wide table with a system named 'run')
    tidy_like = ({"system", "value", "score", "measure"} & set(low)
                 or any(h in TOPIC_HEADERS[:-1] for h in low[1:])
                 or (not has_topic and {"run", "runid"} & set(low)))
    tidy_hint = ("" if not tidy_like else
                 f" (the header {', '.join(header[:4])}{', ...' if len(header) > 4 else ''} is read as a wide "
                 "table, one column a system; a tidy table needs the columns system, topic and value)")
    ncol = len(header)
    topics, cols = [], []
    tseen: dict[str, int] = {}
    n_miss, first_miss = 0, None
    for line, row in rows:
        if len(row) != ncol:
            raise InputError(f"expected {ncol} fields like the header, found {len(row)}",
                             file=source, line=line)
        if has_topic:
            t = row[0].strip()
            if not t:
                raise InputError("empty topic id", file=source, line=line)
            if t in tseen:
                raise InputError(f"topic {t!r} repeated (first on line {tseen[t]})", file=source, line=line)
            tseen[t] = line
            cells = row[1:]
        else:
            t = str(len(topics) + 1)
            cells = row
        topics.append(t)
        try:
            vals = [_num(c, source, line, f"for system {s!r}") for c, s in zip(cells, systems)]
        except InputError as e:
            if not tidy_hint:
                raise
            raise InputError(e.message + tidy_hint, file=source, line=line) from None
        for c, s, v in zip(cells, systems, vals):
            if math.isnan(v):
                n_miss += 1
                if first_miss is None:
                    first_miss = (line, s, t, c.strip())
        cols.append(vals)
    if not topics:
        raise InputError("score table has a header but no rows", file=source)
    if n_miss and missing == "error":
        line, s, t, c = first_miss
        raise InputError(f"missing cell ({repr(c) if c else 'empty'}) for system {s!r}, topic {t!r} "
                         f"({n_miss} missing cell(s) in all; {_MISSING_HINT})", file=source, line=line)
    vals = np.array(cols, dtype=np.float64).T
    return ScoreMatrix.build(vals, systems, topics, measure=measure, missing=missing, source=source)


def _read_tidy(text: str, source, *, measure, missing) -> ScoreMatrix:
    import pandas as pd

    first = next(line for line in text.splitlines() if line.strip())
    delim = "\t" if "\t" in first and "," not in first else ","
    rows = _rows(text, delim, source)
    hline, header = next(rows)
    header = [h.strip().lower() for h in header]
    idx: dict[str, int] = {}
    for j, h in enumerate(header):
        if h in idx and h:
            raise InputError(f"column {h!r} appears twice in the header", file=source, line=hline)
        idx[h] = j
    labels = [k for k in ("system", "topic", "measure", "variant", "stratum") if k in idx]
    recs, lines = [], []
    for line, row in rows:
        if len(row) != len(header):
            raise InputError(f"expected {len(header)} fields like the header, found {len(row)}",
                             file=source, line=line)
        rec = {h: row[j].strip() for h, j in idx.items()}
        for k in labels:
            if not rec[k]:
                raise InputError(f"empty {k} cell", file=source, line=line)
        rec["value"] = _num(row[idx["value"]], source, line, "in column 'value'")
        recs.append(rec)
        lines.append(line)
    if not recs:
        raise InputError("score table has a header but no rows", file=source)
    df = pd.DataFrame(recs)
    df["_line"] = lines
    if "measure" in df.columns:
        ms = list(dict.fromkeys(df["measure"]))
        if measure is None:
            if len(ms) > 1:
                raise ParameterError(f"{source or 'table'} holds several measures ({', '.join(ms[:8])}); "
                                     "choose one", parameter="measure")
            measure = ms[0]
        elif measure not in ms:
            raise ParameterError(f"measure {measure!r} not in {source or 'table'}; found: "
                                 + ", ".join(ms[:20]), parameter="measure")
        df = df[df["measure"] == measure]
    keys = ["system", "topic"] + (["variant"] if "variant" in df.columns else [])
    dup = df.duplicated(subset=keys)
    if dup.any():
        r = df[dup].iloc[0]
        raise InputError("repeated cell: " + ", ".join(f"{k} {r[k]!r}" for k in keys),
                         file=source, line=int(r["_line"]))
    if "stratum" in df.columns:
        first_st = df.drop_duplicates("topic").set_index("topic")["stratum"]
        other = df["stratum"].to_numpy() != df["topic"].map(first_st).to_numpy()
        if other.any():
            r = df[other].iloc[0]
            raise InputError(f"topic {r['topic']!r} has several strata ({first_st[r['topic']]!r} "
                             f"and {r['stratum']!r})", file=source, line=int(r["_line"]))
    if missing == "error":
        _tidy_missing(df, source)
    df = df.drop(columns=["_line"] + (["measure"] if "measure" in df.columns else []))
    return ScoreMatrix.from_frame(df, measure=measure, missing=missing, source=source)


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
    where = f"{n_miss} missing cell(s) in all; {_MISSING_HINT}"
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


def load_scores(path, *, measure: str | None = None, missing: str = "error",
                strata=None, names: str = "file") -> ScoreMatrix:
    """Load a score matrix from what an IR researcher has on disk.

    ``path`` is one of (detected from content, not extension):

    - a folder of ``trec_eval -q`` files (one a run): ``measure`` selects the
      trec_eval measure (``map``, ``P_10``, ...); required when the files hold several;
    - a single ``trec_eval -q`` file (one system: gives an error, a matrix needs 2);
    - a tidy CSV/TSV (``system,topic,value`` [+ ``measure``, ``variant``, ``stratum``]):
      ``measure`` selects rows when there is a ``measure`` column;
    - a wide CSV (one row a topic, one column a system, optional first column ``topic``):
      ``measure`` only labels the matrix.

    ``missing`` is the missing-cell policy of :meth:`ScoreMatrix.build`; under
    ``"error"`` a missing cell is an :class:`InputError` naming the file and,
    where the cell is written out (``NA``, empty, ``nan``), its line.
    ``strata`` a topic metadata CSV path (see :func:`read_topics`) or a mapping
    topic -> stratum, attached by :func:`attach_strata`: every topic of the
    scores needs one; topics the strata name that the scores lack are ignored
    with a warning and never make a stratum of their own.
    ``names`` (trec_eval folders): ``"file"`` or ``"runid"``; any other value is a
    :class:`ParameterError`, whatever ``path`` is.
    """
    if not isinstance(names, str) or names not in ("file", "runid"):
        raise ParameterError(f"expected 'file' or 'runid', got {names!r}", parameter="names")
    if isinstance(path, ScoreMatrix):
        m = path
    else:
        p = Path(path) if not _is_text(path) else None
        if p is not None and p.is_dir():
            mats = read_trec_eval(p, missing=missing, names=names,
                                  measures=None if measure is None else [measure])
            if measure is None:
                if len(mats) > 1:
                    raise ParameterError(f"{p} holds {len(mats)} measures ("
                                         + ", ".join(list(mats)[:12])
                                         + ("..." if len(mats) > 12 else "") + "); choose one",
                                         parameter="measure")
                measure = next(iter(mats))
            m = mats[measure]
            m._warn_degenerate()
        else:
            data, source = _read_bytes(path, what="scores")
            text = _decode(data, source).lstrip("\ufeff")
            kind = _sniff(text)
            if kind == "empty":
                raise InputError("empty score file", file=source)
            if kind == "trec_eval":
                raise InputError("a single trec_eval -q file holds one system; give the folder of "
                                 "all runs' trec_eval files", file=source)
            if kind == "tidy":
                m = _read_tidy(text, source, measure=measure, missing=missing)
            else:
                m = _read_wide(text, source, measure=measure, missing=missing)
    if strata is not None:
        m = attach_strata(m, strata)
    return m


def attach_strata(m: ScoreMatrix, strata) -> ScoreMatrix:
    """``m`` with per-topic strata from a topic metadata file (:func:`read_topics`,
    path or text) or a mapping topic -> stratum.

    - Every topic of ``m`` needs a stratum: otherwise an :class:`InputError`
      naming the file (a :class:`ParameterError` on ``strata`` for a mapping)
      with the count and the first few topic ids (and, when the file's own ids
      differ, a few of those: ``1`` vs ``001`` is the usual cause).
    - Topics the file or mapping names that ``m`` does not hold (e.g. metadata
      for a whole track when the scores cover part of it) are ignored with a
      :class:`~planner.errors.PlannerWarning` giving their count and the first
      few ids. Strata are only made from topics of ``m``: a label whose topics
      are all unknown creates no (empty) stratum; the warning names it.
    - An empty stratum label is an error.
    """
    if isinstance(strata, Mapping):
        mapping: dict[str, str] = {}
        for k, v in strata.items():
            if v is None or not str(v).strip():
                raise ParameterError(f"topic {str(k)!r} has an empty stratum", parameter="strata")
            mapping[str(k).strip()] = str(v).strip()
        src, where = None, "the strata mapping"
    else:
        tdf = read_topics(strata)
        src = None if _is_text(strata) or isinstance(strata, bytes) else str(strata)
        if "stratum" not in tdf.columns:
            raise InputError("topic metadata has no 'stratum' column", file=src)
        mapping = dict(zip(tdf["topic"], tdf["stratum"]))
        where = src or "the strata text"
    held = set(m.topics)
    unknown = [t for t in mapping if t not in held]
    lacking = [t for t in m.topics if t not in mapping]
    if lacking:
        msg = (f"{len(lacking)} of the scores' {m.n_topics} topics have no stratum: {_few(lacking)}"
               + (f" (topics it names that the scores lack: {_few(unknown)})" if unknown else ""))
        if src is None and isinstance(strata, Mapping):
            raise ParameterError(msg, parameter="strata")
        raise InputError(msg, file=src)
    if unknown:
        used = {mapping[t] for t in m.topics}
        empty = [s for s in dict.fromkeys(mapping[t] for t in unknown) if s not in used]
        warnings.warn(f"{where}: {len(unknown)} topic(s) not in the scores ignored: {_few(unknown)}"
                      + (f"; no stratum made for {_few(empty)} (none of its topics are in the scores)"
                         if empty else ""),
                      PlannerWarning, stacklevel=3)
    return m.with_strata({t: mapping[t] for t in m.topics}, source=src)


def stack_with_strata(m: ScoreMatrix, divisor: int, strata=None) -> ScoreMatrix:
    """:func:`planner.variance.stack_variants` (query ids ``topic * divisor + variant``), then
    the strata of :func:`attach_strata`, named by topic (``101``) or, as before stacking, by
    query id (``101001``; all variants of a topic must share one stratum, otherwise an error
    naming the strata file, the topic and two of its query ids). When neither fits, the error
    is the one for topic ids."""
    from .variance import stack_variants

    m3 = stack_variants(m, divisor=divisor)
    if strata is None:
        return m3
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = attach_strata(m3, strata)
        except (InputError, ParameterError) as by_topic:
            try:
                with warnings.catch_warnings(record=True) as caught_q:
                    warnings.simplefilter("always")
                    by_query = attach_strata(m, strata)
            except (InputError, ParameterError):
                raise by_topic from None
            caught = caught_q
            try:    # m itself stacked above: the only error left is variants of a topic in two strata
                out = stack_variants(by_query, divisor=divisor)
            except InputError as e:
                if isinstance(strata, Mapping):
                    raise ParameterError(e.message, parameter="strata") from None
                src = None if _is_text(strata) or isinstance(strata, bytes) else str(strata)
                raise InputError(e.message, file=src) from None
    for w in caught:
        warnings.warn(w.message, w.category, stacklevel=2)
    return out


def read_topics(path_or_text):
    """Topic metadata CSV/TSV: a ``topic`` column, usually ``stratum``, extra columns
    kept. Returns a pandas DataFrame (``topic`` and ``stratum`` as strings); a
    repeated topic is an error naming its line."""
    import pandas as pd

    data, source = _read_bytes(path_or_text, what="topics")
    text = _decode(data, source).lstrip("\ufeff")
    try:
        first = next(line for line in text.splitlines() if line.strip())
    except StopIteration:
        raise InputError("empty topic metadata file", file=source) from None
    delim = "\t" if "\t" in first and "," not in first else ","
    rows = _rows(text, delim, source)
    hline, header = next(rows)
    header = [h.strip() for h in header]
    low = [h.lower() for h in header]
    if "topic" not in low:
        raise InputError("topic metadata needs a 'topic' column", file=source, line=hline)
    # topic and stratum are matched in any case, other columns as written: a repeat is ambiguous
    keys = [h if h.lower() not in ("topic", "stratum") else h.lower() for h in header]
    for j, k in enumerate(keys):
        if k and k in keys[:j]:
            raise InputError(f"column {header[j]!r} appears twice in the header (also column "
                             f"{keys.index(k) + 1}{': topic and stratum ignore case' if k != header[j] else ''})",
                             file=source, line=hline)
    ti = low.index("topic")
    recs, seen = [], {}
    for line, row in rows:
        if len(row) != len(header):
            raise InputError(f"expected {len(header)} fields like the header, found {len(row)}",
                             file=source, line=line)
        t = row[ti].strip()
        if not t:
            raise InputError("empty topic id", file=source, line=line)
        if t in seen:
            raise InputError(f"topic {t!r} repeated (first on line {seen[t]})", file=source, line=line)
        seen[t] = line
        recs.append([c.strip() for c in row])
    cols = [("stratum" if h.lower() == "stratum" else ("topic" if h.lower() == "topic" else h))
            for h in header]
    df = pd.DataFrame(recs, columns=cols)
    if "stratum" in df.columns and (df["stratum"] == "").any():
        i = int(np.flatnonzero((df["stratum"] == "").to_numpy())[0])
        raise InputError(f"topic {df['topic'].iloc[i]!r} has an empty stratum", file=source,
                         line=seen[df["topic"].iloc[i]])
    return df
