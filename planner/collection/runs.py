"""TREC runs: ``topic Q0 doc rank score tag``, one file a run."""

from __future__ import annotations

import csv
import io
import math
import warnings
from dataclasses import dataclass
from functools import cached_property
from itertools import pairwise
from pathlib import Path

import numpy as np
import pandas as pd

from .._checks import check_choice
from ..errors import InputError, PlannerWarning
from .folders import files_in, run_name
from .text import decode, parse_float, read_bytes

_Q0 = {"Q0", "q0", "0"}


@dataclass(frozen=True, eq=False)
class Run:
    """One TREC run.

    Attributes
    ----------
    name : str
        The run name (file name without extensions, or ``name=``).
    frame : pandas.DataFrame
        Columns ``query_id`` (str), ``doc_id`` (str), ``score`` (float64), one row a
        retrieved document, in file order, without duplicates.
    source : str or None
        The file it was read from, if any.
    tags : tuple of str
        The distinct values of the tag column.
    """

    name: str
    frame: pd.DataFrame
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
        for a, b in pairwise(bounds.tolist()):
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
            v = parse_float(parts[4])
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


def _parse_run_frame(data: bytes, sep: str) -> tuple[pd.DataFrame | None, np.ndarray | None, bool]:
    """(frame, tag array, bad) from the fast pandas parser; ``bad`` means a line
    needs the slow exact scan to be located."""
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

    Parameters
    ----------
    path_or_text : str or os.PathLike or bytes
        A path (gzip, bzip2 or xz detected) or the run's text (a str holding a line break).
    duplicates : {"error", "first"}
        ``"error"`` (default): a repeated ``(topic, doc)`` pair is an InputError naming
        its line; ``"first"``: keep the first occurrence.
    name : str, optional
        The run name; default the file name without extensions, or the tag of the first
        line for a text.
    warn_tag : bool
        Warn when the tag column disagrees with the run name or itself.

    Returns
    -------
    Run

    Examples
    --------
    >>> run = read_run("101 Q0 d1 1 2.5 bm25\\n101 Q0 d2 2 1.0 bm25\\n102 Q0 d1 1 0.3 bm25\\n")
    >>> run
    Run('bm25': 3 lines, 2 topics)
    >>> run.topics["101"]
    {'d1': 2.5, 'd2': 1.0}
    """
    check_choice(duplicates, ("error", "first"), "duplicates", quote=True)
    data, source = read_bytes(path_or_text, what="run")
    if not data.strip():
        raise InputError("empty run file", file=source)
    df, tag = _parse_run(data, source)
    tags: tuple[str, ...] = ()
    if len(df):
        t0 = tag[0]
        tags = (str(t0),) if (tag == t0).all() else tuple(str(t) for t in pd.unique(tag))
    if name is None:
        name = run_name(source) if source else (tags[0] if tags else "run")
    dup = df.duplicated(subset=["query_id", "doc_id"], keep="first").to_numpy()
    if dup.any():
        if duplicates == "error":
            _duplicate_error(df, tag, tags, int(np.flatnonzero(dup)[0]), data, source)
        df = df[~dup]
    if warn_tag and tags and (len(tags) > 1 or tags[0] != name):
        shown = ", ".join(repr(t) for t in tags[:3]) + (", ..." if len(tags) > 3 else "")
        warnings.warn(f"{source or name}: tag column ({shown}) disagrees with run name {name!r}",
                      PlannerWarning, stacklevel=2)
    frame = df[["query_id", "doc_id", "score"]].reset_index(drop=True)
    return Run(name=name, frame=frame, source=source, tags=tags)


def _parse_run(data: bytes, source: str | None) -> tuple[pd.DataFrame, np.ndarray]:
    """(frame, tag column) of a run's bytes; the first bad line is an InputError."""
    first_nl = data.find(b"\n")
    first = data[: first_nl if first_nl >= 0 else len(data)]
    seps = ["\t", r"\s+"] if b"\t" in first and b" " not in first.strip() else [r"\s+"]
    for sep in seps:  # tab-separated files parse faster with sep="\t"
        df, tag, bad = _parse_run_frame(data, sep)
        if not bad and df is not None and tag is not None:
            return df, tag
    _scan_run(decode(data, source), source)
    raise InputError("malformed run file", file=source)  # pragma: no cover - scan finds it


def _duplicate_error(df: pd.DataFrame, tag: np.ndarray, tags: tuple[str, ...], row: int, data: bytes,
                     source: str | None) -> None:
    """Raise the error for the repeated ``(topic, doc)`` pair on row ``row``: the run's file
    holds several runs when the two rows carry different tags."""
    r = df.iloc[row]
    line = _line_of_row(decode(data, source), row)
    if len(tags) > 1:
        hit = (df["query_id"] == r["query_id"]) & (df["doc_id"] == r["doc_id"])
        first = int(np.flatnonzero(hit.to_numpy())[0])
        if str(tag[first]) != str(tag[row]):
            raise InputError(f"document {r['doc_id']!r} repeated for topic {r['query_id']!r} under "
                             f"another tag ({str(tag[row])!r}; {str(tag[first])!r} on line "
                             f"{_line_of_row(decode(data, source), first)}): the file holds "
                             f"{len(tags)} runs ({', '.join(repr(t) for t in tags[:3])}"
                             f"{', ...' if len(tags) > 3 else ''}); give each run its own file",
                             file=source, line=line)
    raise InputError(f"document {r['doc_id']!r} repeated for topic {r['query_id']!r} "
                     "(use --duplicates first, or duplicates='first' in Python, to keep the "
                     "first occurrence)",
                     file=source, line=line)


def read_runs(folder, *, duplicates: str = "error", pattern: str | None = None,
              warn_tag: bool = True) -> dict[str, Run]:
    """Read every run file in a folder (hidden files skipped; ``pattern`` a glob
    to select files).

    Returns ``{name: Run}`` in file-name order; two files with the same run name
    are an error. ``duplicates`` and ``warn_tag`` as for :func:`read_run`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "bm25.run").write_text("1 Q0 d1 1 2.0 bm25\\n1 Q0 d2 2 1.0 bm25\\n")
    >>> _ = (d / "dense.run").write_text("1 Q0 d2 1 0.9 dense\\n")
    >>> sorted(read_runs(d))
    ['bm25', 'dense']
    """
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

