"""Outputs written whole or not at all: a temporary file beside the target, then a rename.

Every file the package writes for a user (``planner scores -o FILE``, any ``-o``) goes
through :func:`output_path` before any work (a symlink is followed to the file it names; a
loop, a missing folder or a folder that cannot be written is refused naming the option) and
:func:`write_atomic` after it (the old file stays when the write fails: a full disk leaves
neither a half file nor a stray temporary one). Report folders are written the same way by
:mod:`planner.report.writer`. :func:`remove_stale` cleans up after runs that died, for
files and report folders alike (a temporary file of a killed ``-o`` write goes with the next
write to that file).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import stat
from pathlib import Path

from .errors import ParameterError

__all__ = ["output_path", "pid_alive", "remove_stale", "resolve", "write_atomic"]


def resolve(path: str | os.PathLike) -> Path:
    """``path`` with every symlink followed (the path need not exist); a symlink loop is a
    ValueError (Python raises RuntimeError or OSError, depending on the version)."""
    try:
        return Path(path).resolve()
    except (RuntimeError, OSError) as exc:
        raise ValueError(f"a symlink loop ({getattr(exc, 'strerror', None) or exc})") from None


def output_path(path: str | os.PathLike, *, option: str) -> Path:
    """The file an output option names, checked before any work.

    Returns the path with symlinks followed (the link stays; the file it names is written).
    A symlink loop, a folder, a missing or unwritable folder is a ParameterError naming
    ``option``."""
    try:
        target = resolve(path)
    except ValueError as exc:
        raise ParameterError(f"cannot write {path}: {exc}", parameter=option) from None
    if target.is_dir():
        raise ParameterError(f"cannot write {path}: is a folder", parameter=option)
    if not target.parent.is_dir():
        raise ParameterError(f"cannot write {path}: no folder {target.parent}", parameter=option)
    if not os.access(target.parent, os.W_OK):
        raise ParameterError(f"cannot write {path}: permission denied in {target.parent}", parameter=option)
    if target.exists() and not os.access(target, os.W_OK):
        raise ParameterError(f"cannot write {path}: permission denied", parameter=option)
    return target


def write_atomic(path: str | os.PathLike, text: str | bytes) -> None:
    """Write ``text`` (UTF-8; or bytes as they are) to ``path`` through ``.NAME.tmp-PID`` beside
    it and a rename.

    The old file (and its permissions) stays when anything fails; the temporary file is
    removed. A special file (``/dev/stdout``, a FIFO) is written in place. An OSError (a
    full disk) propagates: the command's error layer makes it one line and exit 1."""
    target = resolve(path)
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    data = text.encode("utf-8") if isinstance(text, str) else text
    if mode is not None and not stat.S_ISREG(mode):
        with open(target, "wb") as fh:
            fh.write(data)
        return
    remove_stale(target, ("tmp",))
    tmp = target.parent / f".{target.name}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, stat.S_IMODE(mode))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def remove_stale(target: Path, kinds: tuple[str, ...] = ("old", "tmp")) -> None:
    """Clean up after runs that died (SIGKILL, a power cut) beside ``target``: each
    ``.NAME.KIND-PID`` whose process is gone is removed, except that a report a run set aside
    (``.NAME.old-PID``) and did not replace (``target`` missing: killed between the two
    renames) is put back, so that a rerun finds the old report whole."""
    for kind in kinds:
        for p in sorted(target.parent.glob(f".{glob.escape(target.name)}.{kind}-*")):
            pid = p.name.rsplit("-", 1)[-1]
            if not pid.isdigit() or int(pid) == os.getpid() or pid_alive(int(pid)):
                continue
            with contextlib.suppress(OSError):
                if kind == "old" and not os.path.lexists(target):
                    os.replace(p, target)
                elif p.is_dir() and not p.is_symlink():
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    p.unlink()


def pid_alive(pid: int) -> bool:
    """Whether a process with this id runs (on this machine)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:     # it exists, under another user
        return True
    return True
