"""Folders of input files: their files, a run's name from its file name, the run files chosen."""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, ParameterError
from .notes import collapse, first_of, plural, warn_collapsed
from .text import is_blank_file

_COMPRESS_EXT = (".gz", ".bz2", ".xz")
_RUN_EXT = (".run", ".txt", ".res", ".trec", ".tsv", ".csv", ".eval", ".out")


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


def _kind(p: Path) -> str | None:
    """What ``p`` is when it is neither a regular file nor a folder (None otherwise)."""
    try:
        mode = p.stat().st_mode
    except OSError as exc:
        if p.is_symlink():
            return "a symlink loop" if exc.errno == errno.ELOOP else "a dangling symlink"
        return f"unreadable ({exc.strerror or exc})"
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return "a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) \
        else "a special file"


def files_in(folder: Path, pattern: str | None = None) -> list[Path]:
    """The folder's files in name order (hidden ones skipped, or those matching ``pattern``);
    a folder that cannot be listed is an InputError naming it.

    Entries that are not regular files nor folders (dangling symlinks, symlink loops, FIFOs,
    devices) are skipped with one :class:`~planner.errors.ReadNoteWarning` giving their count
    and the first names (:func:`~planner.collection.notes.collapse`), so that a system missing
    from every statistic is said."""
    try:
        found = folder.glob(pattern) if pattern else (p for p in folder.iterdir() if not p.name.startswith("."))
        entries = sorted(found)
    except OSError as exc:
        raise InputError(f"cannot list the folder: {exc.strerror or exc}", file=str(folder)) from None
    skipped = [(p.name, k) for p in entries if (k := _kind(p)) is not None]
    warn_collapsed(str(folder), f"skipped {plural(len(skipped), 'entry', 'entries')} that cannot be read as files",
                   [f"{n!r} ({k})" for n, k in skipped], stacklevel=3)
    bad = {n for n, _ in skipped}
    return [p for p in entries if p.name not in bad and p.is_file()]


def match_runs(names: Sequence[str], patterns: str | Iterable[str] | None, *, where: str | None = None) -> list[str]:
    """The run names that match one of the glob ``patterns`` (``fnmatch``, case-sensitive: a plain
    name matches itself, ``'bm25*'`` every name that starts so), in their order; all names when
    ``patterns`` is None. A pattern that matches no name is a ParameterError (``select_runs``)
    naming it and a few of the names, so that a typing slip never leaves a run out quietly.

    Examples
    --------
    >>> match_runs(["bm25", "bm25_rm3", "dense"], ["bm25*"])
    ['bm25', 'bm25_rm3']
    >>> match_runs(["bm25", "dense"], "dense")
    ['dense']
    """
    if patterns is None:
        return list(names)
    pats = [patterns] if isinstance(patterns, str) else list(patterns)
    if not pats or any(not isinstance(p, str) or not p.strip() for p in pats):
        raise ParameterError(f"expected run names or glob patterns, got {pats!r}", parameter="select_runs")
    hit = [p for p in pats if not any(fnmatch.fnmatchcase(n, p) for n in names)]
    if hit:
        raise ParameterError(f"{hit[0]!r} matches none of the {plural(len(names), 'run name')}"
                             f"{f' in {where}' if where else ''} ({first_of([repr(n) for n in names])})",
                             parameter="select_runs")
    return [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in pats)]


@dataclass(frozen=True)
class RunFiles:
    """The run files of a folder, chosen and checked before any is read.

    Attributes
    ----------
    folder : str
        The folder.
    paths : dict of str to Path
        Run name -> file, in file-name order: the selected files that hold a line.
    empty : tuple of str
        The selected files skipped because they hold nothing but white space (file names).
    """

    folder: str
    paths: dict[str, Path]
    empty: tuple[str, ...] = ()


def run_files(folder: str | os.PathLike, *, select_runs: str | Iterable[str] | None = None,
              pattern: str | None = None) -> RunFiles:
    """The run files of ``folder`` (:func:`files_in`; ``pattern`` a glob on file names) whose run
    names match ``select_runs`` (:func:`match_runs`), without the empty ones.

    Empty files (nothing but white space, after decompression) are left out and listed in
    :attr:`RunFiles.empty`, for the reader to say once. No file at all, two files with the same
    run name, or only empty files are an InputError naming the folder.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("not a folder of run files", file=str(folder))
    files = files_in(folder, pattern)
    if not files:
        raise InputError("no run files in folder", file=str(folder))
    names = [run_name(f) for f in files]
    keep = set(match_runs(list(dict.fromkeys(names)), select_runs, where=str(folder)))
    chosen = [(n, f) for n, f in zip(names, files) if n in keep]
    empty = [f.name for _, f in chosen if is_blank_file(f)]
    paths: dict[str, Path] = {}
    for n, f in chosen:
        if f.name in empty:
            continue
        if n in paths:
            raise InputError(f"two files give run name {n!r} ({paths[n]})", file=str(f))
        paths[n] = f
    if not paths:
        raise InputError(collapse(None, f"no run file holds a line ({plural(len(empty), 'empty file')})",
                                  [repr(e) for e in empty]), file=str(folder))
    return RunFiles(str(folder), paths, tuple(empty))
