"""Folders of input files, and a run's name from its file name."""

from __future__ import annotations

import errno
import os
import stat
import warnings
from pathlib import Path

from ..errors import InputError, PlannerWarning

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



#: how many skipped names the warning of :func:`files_in` shows
SHOWN_SKIPPED = 3


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
    devices) are skipped with one :class:`~planner.errors.PlannerWarning` giving their count
    and the first :data:`SHOWN_SKIPPED` names, so that a system missing from every statistic
    is said."""
    try:
        found = folder.glob(pattern) if pattern else (p for p in folder.iterdir() if not p.name.startswith("."))
        entries = sorted(found)
    except OSError as exc:
        raise InputError(f"cannot list the folder: {exc.strerror or exc}", file=str(folder)) from None
    skipped = [(p.name, k) for p in entries if (k := _kind(p)) is not None]
    if skipped:
        shown = ", ".join(f"{n!r} ({k})" for n, k in skipped[:SHOWN_SKIPPED])
        more = ", ..." if len(skipped) > SHOWN_SKIPPED else ""
        warnings.warn(f"{folder}: skipped {len(skipped)} entr{'y' if len(skipped) == 1 else 'ies'} that "
                      f"cannot be read as files: {shown}{more}", PlannerWarning, stacklevel=3)
    bad = {n for n, _ in skipped}
    return [p for p in entries if p.name not in bad and p.is_file()]
