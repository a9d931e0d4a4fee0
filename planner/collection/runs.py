"""TREC runs: ``topic Q0 doc rank score tag``, one file a run."""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise
from pathlib import Path

import numpy as np
import pandas as pd

from .._checks import check_choice
from ..errors import InputError
from ..policies import DUPLICATE_POLICIES, DUPLICATES_HINT
from ..results import ResultMixin
from .folders import RunFiles, run_files, run_name
from .notes import SHOWN_COUNTS, plural, warn_collapsed
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
    dropped_pairs : int
        Repeated ``(topic, doc)`` lines dropped when read with ``duplicates="first"`` (the first
        line of each pair is kept).
    """

    name: str
    frame: pd.DataFrame
    source: str | None = None
    tags: tuple[str, ...] = ()
    dropped_pairs: int = 0

    @property
    def tag_disagrees(self) -> bool:
        """Whether the tag column disagrees with the run name, or with itself."""
        return bool(self.tags) and (len(self.tags) > 1 or self.tags[0] != self.name)

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
             warn: bool = True) -> Run:
    """Read one TREC run file (or text).

    Parameters
    ----------
    path_or_text : str or os.PathLike or bytes
        A path (gzip, bzip2 or xz detected) or the run's text (a str holding a line break).
    duplicates : {"error", "first"}
        ``"error"`` (default): a repeated ``(topic, doc)`` pair is an InputError naming
        its line; ``"first"``: keep the first occurrence (``Run.dropped_pairs`` counts the
        lines dropped).
    name : str, optional
        The run name; default the file name without extensions, or the tag of the first
        line for a text.
    warn : bool
        Warn (:class:`~planner.errors.ReadNoteWarning`) when the tag column disagrees with the
        run name or itself, and when repeated pairs were dropped.

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
    check_choice(duplicates, DUPLICATE_POLICIES, "duplicates", quote=True)
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
    frame = df[["query_id", "doc_id", "score"]].reset_index(drop=True)
    run = Run(name=name, frame=frame, source=source, tags=tags, dropped_pairs=int(dup.sum()))
    if warn:
        RunsRead.of([run], source=source).warn(stacklevel=2)
    return run


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
    raise InputError(f"document {r['doc_id']!r} repeated for topic {r['query_id']!r} ({DUPLICATES_HINT})",
                     file=source, line=line)


def read_runs(folder, *, duplicates: str = "error", pattern: str | None = None,
              select_runs: str | Iterable[str] | None = None, warn: bool = True) -> dict[str, Run]:
    """Read the run files of a folder (hidden files skipped; ``pattern`` a glob on file names).

    Returns ``{name: Run}`` in file-name order. ``select_runs`` (run names or glob patterns such
    as ``"bm25*"``; :func:`~planner.collection.folders.match_runs`) keeps the runs whose name
    matches one of them. Empty files are skipped; two files with the same run name are an error.
    ``duplicates`` as for :func:`read_run`. With ``warn``, what reading skipped or changed is said
    once per kind, with a count and the first names (:meth:`RunsRead.warn`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "bm25.run").write_text("1 Q0 d1 1 2.0 bm25\\n1 Q0 d2 2 1.0 bm25\\n")
    >>> _ = (d / "dense.run").write_text("1 Q0 d2 1 0.9 dense\\n")
    >>> sorted(read_runs(d))
    ['bm25', 'dense']
    >>> sorted(read_runs(d, select_runs="bm*"))
    ['bm25']
    """
    reader = RunReader(run_files(folder, select_runs=select_runs, pattern=pattern), duplicates=duplicates)
    out = {n: reader(n) for n in reader.names}
    if warn:
        reader.record().warn(stacklevel=2)
    return out


@dataclass(frozen=True, repr=False, eq=False)
class RunsRead(ResultMixin):
    """What reading a set of runs skipped or changed; :meth:`warn` says each kind once.

    Attributes
    ----------
    source : str or None
        The folder (or file) read.
    runs : tuple of str
        The runs read, in order.
    empty : tuple of str
        Files skipped because they hold no line (file names).
    duplicates : dict of str to int
        Run -> repeated ``(topic, doc)`` lines dropped under ``duplicates="first"`` (the first
        line of each pair kept); runs that lost none are left out.
    tags : dict of str to tuple of str
        Run -> the values of its tag column, for runs whose tag column disagrees with the run
        name (taken from the file name) or with itself.
    """

    _repr_fields = ("source", "runs", "empty", "duplicates")

    source: str | None = None
    runs: tuple[str, ...] = ()
    empty: tuple[str, ...] = ()
    duplicates: dict[str, int] = field(default_factory=dict)
    tags: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, runs: Iterable[Run], *, source: str | None = None, empty: Iterable[str] = ()) -> RunsRead:
        """The record of these runs (their dropped pairs and tags) and the ``empty`` files."""
        runs = list(runs)
        return cls(source=source, runs=tuple(r.name for r in runs), empty=tuple(empty),
                   duplicates={r.name: r.dropped_pairs for r in runs if r.dropped_pairs},
                   tags={r.name: r.tags for r in runs if r.tag_disagrees})

    @property
    def dropped_pairs(self) -> int:
        """Repeated ``(topic, doc)`` lines dropped in all."""
        return sum(self.duplicates.values())

    def to_frame(self) -> pd.DataFrame:
        """One row a run read (``name``, ``dropped_pairs``, ``tags``: its tag values when they
        disagree with the name, else empty) and one an empty file skipped (``skipped`` True)."""
        rows = [{"name": n, "skipped": False, "dropped_pairs": self.duplicates.get(n, 0),
                 "tags": ", ".join(self.tags.get(n, ()))} for n in self.runs]
        rows += [{"name": f, "skipped": True, "dropped_pairs": 0, "tags": ""} for f in self.empty]
        return pd.DataFrame(rows, columns=["name", "skipped", "dropped_pairs", "tags"])

    def warn(self, stacklevel: int = 2) -> None:
        """One :class:`~planner.errors.ReadNoteWarning` per kind of note (empty files, dropped
        pairs, disagreeing tags), each with its count and the first names
        (:func:`~planner.collection.notes.collapse`)."""
        where, k = self.source, stacklevel + 1
        warn_collapsed(where, f"skipped {plural(len(self.empty), 'empty run file')}",
                       [repr(e) for e in self.empty], stacklevel=k)
        worst = sorted(self.duplicates.items(), key=lambda kv: -kv[1])
        warn_collapsed(where, f"kept the first line of each repeated (topic, document) pair, dropping "
                              f"{plural(self.dropped_pairs, 'line')} in {plural(len(worst), 'run')}",
                       [f"{n!r} {c:,}" for n, c in worst], shown=SHOWN_COUNTS, stacklevel=k)
        warn_collapsed(where, f"the tag column disagrees with the run name (its file name) in "
                              f"{plural(len(self.tags), 'run')}",
                       [f"{n!r} (tag {', '.join(repr(t) for t in t_[:2])}{', ...' if len(t_) > 2 else ''})"
                        for n, t_ in self.tags.items()], stacklevel=k)


class RunReader:
    """The runs of a folder read one at a time, when asked for, so that one run is in memory at
    once; what reading skipped or changed is kept for one :class:`RunsRead` (:meth:`record`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.run").write_text("1 Q0 d1 1 2.0 a\\n1 Q0 d1 2 1.0 a\\n")
    >>> _ = (d / "b.run").write_text("")
    >>> reader = RunReader(run_files(d), duplicates="first")
    >>> reader.names, len(reader("a"))
    (['a'], 1)
    >>> rec = reader.record()
    >>> rec.empty, rec.duplicates
    (('b.run',), {'a': 1})
    """

    def __init__(self, files: RunFiles, *, duplicates: str = "error") -> None:
        self.files = files
        self.duplicates = check_choice(duplicates, DUPLICATE_POLICIES, "duplicates", quote=True)
        self._dropped: dict[str, int] = {}
        self._tags: dict[str, tuple[str, ...]] = {}

    @property
    def names(self) -> list[str]:
        """The run names, in file-name order."""
        return list(self.files.paths)

    def __call__(self, name: str) -> Run:
        """The run ``name``, read now (its notes kept, not warned)."""
        run = read_run(self.files.paths[name], duplicates=self.duplicates, name=name, warn=False)
        if run.dropped_pairs:
            self._dropped[name] = run.dropped_pairs
        if run.tag_disagrees:
            self._tags[name] = run.tags
        return run

    def record(self) -> RunsRead:
        """What reading has skipped or changed so far."""
        return RunsRead(source=self.files.folder, runs=tuple(self.names), empty=self.files.empty,
                        duplicates=dict(self._dropped), tags=dict(self._tags))


def is_run_folder(runs: object) -> bool:
    """Whether ``runs`` is a path to a folder (of run files)."""
    return isinstance(runs, (str, os.PathLike)) and Path(runs).is_dir()
