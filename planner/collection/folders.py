"""Folders of input files, and a run's name from its file name."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError

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



def files_in(folder: Path, pattern: str | None = None) -> list[Path]:
    """The folder's files in name order (hidden ones skipped, or those matching ``pattern``);
    a folder that cannot be listed is an InputError naming it."""
    try:
        found = folder.glob(pattern) if pattern else (p for p in folder.iterdir() if not p.name.startswith("."))
        return sorted(p for p in found if p.is_file())
    except OSError as exc:
        raise InputError(f"cannot list the folder: {exc.strerror or exc}", file=str(folder)) from None

