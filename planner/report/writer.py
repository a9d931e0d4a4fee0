"""The report folder: checked before the study runs, built under a temporary name, renamed into place.

:func:`write_report` writes, into ``out``:

- ``report.md`` and ``report.html`` (self-contained: every plot embedded as a
  base64 PNG): the answer first (topics, and pool depth when known, and what they
  buy), then the details, provenance, and at the end the honest statement (mean
  score and topic count; interval and reversal rate from paired resampling; the
  judged share of the evaluated runs' top k);
- ``results.json``: every number, deterministic (no timestamps: the same seed and
  inputs give a byte-identical file);
- ``provenance.json``: planner and dependency versions, seed, sha256 of the
  inputs, the resolved config, the command, the wall-clock time;
- ``config.resolved.yaml``: the study with every default filled in;
- ``tables/*.csv`` and ``figures/*.png`` + ``figures/*.svg``.

The folder is built under a temporary name next to ``out`` and renamed into
place only when complete; an existing ``out`` is replaced only with
``force=True`` (else :class:`~planner.errors.InputError`). The temporary folder
is removed on any error, on Ctrl-C and on SIGTERM/SIGHUP (the process then ends
by that signal, as it would have: :mod:`planner.report.cleanup`).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

try:
    import fcntl
except ImportError:       # pragma: no cover - Windows: no advisory lock
    fcntl = None  # type: ignore[assignment]

from .. import __version__
from .._atomic import remove_stale, resolve
from .._json import plain
from ..errors import InputError
from . import figure_set
from .cleanup import Guard, cleanup_on_signals
from .sections import build_document

__all__ = ["MAX_NAME_BYTES", "check_target", "dump_json", "jsonable", "versions", "write_report"]

#: the libraries whose versions a report records
LIBRARIES = ("numpy", "scipy", "pandas", "statsmodels", "matplotlib", "ir-measures", "jsonschema", "pyyaml")

#: longest report folder name (the folder is built as ``.<name>.tmp-<pid>`` first)
MAX_NAME_BYTES = 200


# ------------------------------------------------------------------ JSON and versions
def jsonable(obj: Any) -> Any:
    """Plain-Python, JSON-able copy of ``obj`` (``to_dict()`` results, numpy, paths; NaN -> None).

    Examples
    --------
    >>> import numpy as np
    >>> jsonable({"x": np.float64(0.5), "nan": float("nan"), "t": (1, 2)})
    {'x': 0.5, 'nan': None, 't': [1, 2]}
    """
    return plain(obj)


def dump_json(obj: Any) -> str:
    """Deterministic JSON text (indent 2, NaN as null, trailing newline).

    Examples
    --------
    >>> print(dump_json({"n": 50, "nan": float("nan")}), end="")
    {
      "n": 50,
      "nan": null
    }
    """
    return json.dumps(jsonable(obj), indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def versions() -> dict[str, str | None]:
    """The versions behind every number: planner, Python and the libraries that compute or read.

    Returns
    -------
    dict of str to str or None
        ``planner``, ``python`` and each of :data:`LIBRARIES` (None when not installed).

    Examples
    --------
    >>> import numpy
    >>> from planner.report import versions
    >>> v = versions()
    >>> v["numpy"] == numpy.__version__ and v["planner"] is not None
    True
    """
    out: dict[str, str | None] = {"planner": __version__, "python": sys.version.split()[0]}
    for pkg in LIBRARIES:
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


# ------------------------------------------------------------------ the target folder
def _check_replaceable(out: Path, where: Path, keep: Sequence[str | os.PathLike]) -> None:
    """An existing ``out`` (with ``force``): a folder, holding none of ``keep``, and a report."""
    if not out.is_dir():
        raise InputError("exists and is not a folder", file=out)
    for k in keep:
        kp = Path(k).resolve()
        if kp == where or where in kp.parents:
            raise InputError(f"holds the input {k}, which replacing the folder would delete; "
                             "choose another folder for the report", file=out)
    if not (out / "provenance.json").is_file() and any(out.iterdir()):
        raise InputError("is not a planner report folder (no provenance.json) and not empty; --force "
                         "replaces only report folders: choose another folder", file=out)


def _check_writable(out: Path, where: Path) -> None:
    """Fail before the study runs when the folder cannot be written, but create nothing yet
    (missing parent folders are made when the report is written, so a failed study leaves
    none behind): the nearest existing ancestor must be a writable folder."""
    anc = where.parent
    while not anc.exists() and anc != anc.parent:
        anc = anc.parent
    if not anc.is_dir():
        raise InputError(f"cannot create the report folder: {anc} is not a folder", file=out)
    if not os.access(anc, os.W_OK):
        raise InputError("cannot write the report folder here (permission denied)", file=out)


def check_target(out: str | os.PathLike, *, force: bool = False,
                 keep: Sequence[str | os.PathLike] = ()) -> Path:
    """Check that a report can be written at ``out``, before the study runs.

    Parameters
    ----------
    out : path
        The report folder.
    force : bool, optional
        Replace an existing report folder.
    keep : sequence of paths, optional
        The study's inputs: ``force`` must not delete one of them.

    Returns
    -------
    Path
        ``out`` as a path.

    Raises
    ------
    InputError
        When ``out`` exists and ``force`` is false, when ``out`` is the current folder or
        contains it (replacing it would pull the folder from under the command), when
        ``force`` would delete one of the inputs ``keep`` inside ``out``, when ``out`` is a
        non-empty folder that is not a report (no ``provenance.json``), or when it cannot be
        written.

    Examples
    --------
    >>> check_target(".")
    Traceback (most recent call last):
    ...
    planner.errors.InputError: .: is the current folder or contains it; give the report a folder of its own (-o)
    """
    try:        # through a symlink: the folder it names is written, the link stays
        out = resolve(out) if Path(out).is_symlink() else Path(out)
        where = resolve(out)
    except ValueError as exc:
        raise InputError(f"cannot write the report folder: {exc}", file=out) from None
    cwd = Path.cwd().resolve()
    if where == cwd or where in cwd.parents:
        raise InputError("is the current folder or contains it; give the report a folder of its own (-o)",
                         file=out)
    if len(out.name.encode("utf-8")) > MAX_NAME_BYTES:
        raise InputError(f"folder name longer than {MAX_NAME_BYTES} bytes (the file system allows 255, "
                         "and the report is built under a longer temporary name)", file=out)
    _lock(out)        # first: a rerun after a killed run cleans up, whatever it decides next
    try:
        if out.exists() and not force:
            raise InputError("report folder exists; use --force (force=True) to replace it", file=out)
        if out.exists():
            _check_replaceable(out, where, keep)
        _check_writable(out, where)
    except BaseException:
        _unlock(out)
        raise
    return out


# ------------------------------------------------------------------ lock and stale folders
#: report folders this process holds the lock of (path -> open lock file); released when
#: the report is written, when a check fails, or when the interpreter exits (a study that
#: failed between its check and its report)
_HELD: dict[Path, Any] = {}


@atexit.register
def _unlock_all() -> None:
    for key in list(_HELD):
        _unlock(key)


def _lock_path(out: Path) -> Path:
    return out.resolve().parent / f".{out.name}.lock"


def _lock(out: Path) -> None:
    """Hold ``.<name>.lock`` beside ``out`` (an advisory ``flock``) from the check before the
    study until its report is written, so that a second run into the same folder fails with one
    line instead of silently replacing the first's report; remove the temporary folders of runs
    that died. The lock is released by :func:`_unlock` (and by the process's end)."""
    key = out.resolve()
    if key in _HELD or fcntl is None:
        return
    lp = _lock_path(out)
    if not lp.parent.is_dir():
        return          # the folder is made when the report is written: nothing to race yet
    while True:
        fh = open(lp, "a+")      # noqa: SIM115 - held open past this function: the lock
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            pid = fh.read().strip() or "?"
            fh.close()
            raise InputError(f"another planner run (pid {pid}) is writing this report folder; "
                             "wait for it or choose another folder (-o)", file=out) from None
        if os.path.exists(lp) and os.stat(lp).st_ino == os.fstat(fh.fileno()).st_ino:
            break       # still the file at that path (not one a finishing run just removed)
        fh.close()
    fh.seek(0)
    fh.truncate()
    fh.write(str(os.getpid()))
    fh.flush()
    _HELD[key] = fh
    _remove_stale(out)


def _unlock(out: Path) -> None:
    fh = _HELD.pop(out.resolve(), None)
    if fh is not None:
        with contextlib.suppress(OSError):
            os.unlink(_lock_path(out))
        fh.close()


def _remove_stale(out: Path) -> None:
    """Remove ``.<name>.tmp-PID`` and ``.<name>.old-PID`` folders beside ``out`` whose process
    is gone (a run killed by SIGKILL or a power cut cannot clean up after itself); an old report
    set aside by a run killed before the new one was renamed in is put back
    (:func:`planner._atomic.remove_stale`)."""
    remove_stale(out.resolve().parent / out.name)


# ------------------------------------------------------------------ writing
def _make_temporary(out: Path) -> Path:
    """The empty temporary folder ``.<name>.tmp-<pid>`` next to ``out``."""
    parent = out.resolve().parent
    tmp = parent / f".{out.name}.tmp-{os.getpid()}"
    try:
        parent.mkdir(parents=True, exist_ok=True)
        _lock(out)
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir()
    except OSError as exc:
        raise InputError(f"cannot create the report folder: {exc.strerror}", file=out) from None
    return tmp


def _write_files(tmp: Path, results: Mapping[str, Any], tables: Mapping[str, pd.DataFrame],
                 provenance: dict[str, Any], config: Mapping[str, Any]) -> None:
    """Every file of the report, into ``tmp``."""
    (tmp / "tables").mkdir()
    for name, df in tables.items():
        if df is not None:
            df.to_csv(tmp / "tables" / f"{name}.csv", index=False, float_format="%.10g")
    pngs = figure_set.render_figures(tables, tmp / "figures")
    t0 = provenance.pop("_t0", None)
    if t0 is not None:      # the study's start: time everything up to the finished figures
        provenance["elapsed_seconds"] = round(time.perf_counter() - t0, 2)
        provenance["elapsed_includes"] = "loading, computing and plotting (not interpreter start-up)"
    (tmp / "results.json").write_text(dump_json(results), encoding="utf-8")
    (tmp / "provenance.json").write_text(dump_json(provenance), encoding="utf-8")
    (tmp / "config.resolved.yaml").write_text(
        yaml.safe_dump(jsonable(config), sort_keys=False, allow_unicode=True), encoding="utf-8")
    doc = build_document(results, tables, provenance, pngs)
    (tmp / "report.md").write_text(doc.markdown(), encoding="utf-8")
    (tmp / "report.html").write_text(doc.html(f"planner study: {results.get('study', '')}", pngs),
                                     encoding="utf-8")


def _move_into_place(tmp: Path, out: Path, force: bool, guard: Guard) -> None:
    """Rename ``tmp`` to ``out`` (an existing report aside first); a signal waits for the renames."""
    guard.critical = True
    try:
        if not out.exists():
            os.replace(tmp, out)
            return
        if not force:
            raise InputError("report folder exists; use --force (force=True) to replace it", file=out)
        old = tmp.parent / f".{out.name}.old-{os.getpid()}"
        if old.exists():
            shutil.rmtree(old)
        os.replace(out, old)
        os.replace(tmp, out)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        guard.leave_critical()


def _write(results: Mapping[str, Any], tables: Mapping[str, pd.DataFrame], provenance: dict[str, Any],
           config: Mapping[str, Any], out: Path, force: bool, guard: Guard) -> Path:
    tmp = _make_temporary(out)
    try:
        _write_files(tmp, results, tables, provenance, config)
        # move into place only now that everything is written
        _move_into_place(tmp, out, force, guard)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def _plain(results: Any) -> dict[str, Any]:
    """The results as a dict (a typed result through its ``to_dict()``)."""
    return dict(results) if isinstance(results, Mapping) else dict(results.to_dict())


def write_report(result: Any, out: str | os.PathLike, *, force: bool = False,
                 provenance: Mapping | None = None, config: Mapping | None = None,
                 tables: Mapping[str, pd.DataFrame] | None = None) -> Path:
    """Write a report folder for ``result`` at ``out``.

    Parameters
    ----------
    result : StudyResult or mapping
        A :class:`planner.study.StudyResult`, or a mapping of JSON-able results (keys used:
        ``study``, ``description``, ``answer`` {``text``, ``buys``}, ``honest``
        {``paragraphs``}, ``warnings``, ``scenarios``).
    out : path
        The report folder (see :func:`check_target`).
    force : bool, optional
        Replace an existing report folder.
    provenance, config : mapping, optional
        Given separately from a mapping ``result`` (a StudyResult carries its own).
    tables : mapping of str to DataFrame, optional
        Name -> table; known names: scenarios, targets, curves, components, variants,
        variant_targets, filtered, allocation, paired, pool, budget, honest.

    Returns
    -------
    Path
        The folder written.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from planner.report import write_report
    >>> out = write_report({"study": "demo", "answer": {"text": "Choose **50 topics**."}},
    ...                    pathlib.Path(tempfile.mkdtemp()) / "demo")
    >>> sorted(p.name for p in out.iterdir())
    ['config.resolved.yaml', 'figures', 'provenance.json', 'report.html', 'report.md', 'results.json', 'tables']
    >>> (out / "report.md").read_text().splitlines()[4]
    '> Choose **50 topics**.'
    """
    if hasattr(result, "results") and hasattr(result, "tables"):
        results = _plain(result.results)
        tables = result.tables if tables is None else tables
        provenance = result.provenance if provenance is None else provenance
        config = result.config if config is None else config
    else:
        results = _plain(result)
    tables = dict(tables or {})
    provenance = dict(provenance or {})
    config = dict(config or results.get("config") or {})
    out = check_target(out, force=force)
    with cleanup_on_signals() as guard:
        try:
            return _write(results, tables, provenance, config, out, force, guard)
        finally:       # inside: a signal re-raised on the way out must not skip it
            _unlock(out)
